//! `rtlab compare`: the same task set on real threads and in the simulator
//! under the matching scheduler, side by side.
//!
//! The simulator runs the model with WCET execution, no overheads and the
//! same duration and overrun rule, so every difference is something the
//! model leaves out: wake-up latency, kernel and timer overheads, the cost
//! of the measurement itself, interference from the rest of the machine.

mod dispatched;
mod rtapp;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use rtlab_model::results::{self, compare_tasks};
use rtlab_model::{printable, Nanos};
use rtlab_rt::executor::{rr_timeslice, RunReport};
use rtlab_sim::{SchedulerSpec, SimConfig, SimReport};

use crate::real_run::{execute_loaded, RunFlags};
use crate::usage::usage;
use rtlab_report::table;

const EXAMPLES: &str = "Examples:\n  \
    rtlab compare builtin:hartstone-ph --policy rm --duration 10s\n  \
    rtlab compare builtin:lf-scenario-4 --policy dm --duration 1s\n  \
    rtlab compare builtin:lf-scenario-4 --policy edf --duration 1s --no-rt-throttling --json\n  \
    rtlab compare builtin:hartstone-ph --with rt-app --policy rm -d 10s\n  \
    rtlab compare builtin:priority-inversion --policy dm --duration 1s --protocol pip\n  \
    rtlab compare builtin:dhall-linux --cpus 0,1 --policy linux-dl --duration 1s\n  \
    rtlab compare builtin:lf-scenario-4 --policy dm --duration 1s --kernel-trace\n  \
    rtlab compare builtin:hartstone-ph --dispatcher -s multiburst -d 10s\n\n\
    Policy -> simulator: fifo-order -> fifo, rm -> fp:rm, dm -> fp:dm, given -> fp:given,\n\
    rr -> rr:<kernel RR timeslice>:linux, edf -> edf (other has no simulator model).\n\
    On --cpus: linux-dl -> linux-dl, pedf -> pedf (same assignment), cedf -> cedf, gfp:X -> gfp:X,\n\
    pfp:X -> pfp:X; the table adds migrations.\n\
    --dispatcher -s SCHEDULER: the simulator runs the same scheduler with the run's measured\n\
    costs, job for job (releases, misses, responses within the dispatch latency's p99.9).\n\
    A `!` marks a difference: misses that differ, or a response time off by more than\n\
    --tolerance (default 10%) and 100us.";

/// `rtlab compare`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct CompareArgs {
    #[command(flatten)]
    pub flags: RunFlags,
    /// Relative difference in response time that counts as a difference (percent).
    #[arg(long, default_value_t = 10.0)]
    pub tolerance: f64,
    /// Print the JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Compare with another tool instead of the simulator: `rt-app` runs the set under rt-app
    /// with the same policy and pinning (the guide "rtlab compare --with rt-app").
    #[arg(long, value_name = "TOOL", conflicts_with_all = ["save", "store"])]
    pub with: Option<String>,
    /// With `--with rt-app`: rt-app's calibration, `CPUn` (measure on CPU n; default: the
    /// pinned CPU) or a fixed number of ns per loop.
    #[arg(long, value_name = "CPUn|NS", requires = "with")]
    pub rtapp_calibration: Option<String>,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
}

/// `rtlab compare --json`.
pub type Comparison = results::Comparison<RunReport, SimReport>;

/// Runs `rtlab compare`.
pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    rtlab_report::table::fit_to_terminal(!args.flags.wide);
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        return Err(usage(format!(
            "--tolerance `{}`: give a percentage >= 0",
            args.tolerance
        )));
    }
    if args.with.is_some() && args.flags.scheduler()?.scope.is_multi() {
        return Err(usage(
            "--with rt-app compares one-CPU runs; on --cpus compare with the simulator (without --with)",
        ));
    }
    if let Some(tool) = &args.with {
        return match tool.as_str() {
            "rt-app" => rtapp::run(&args.flags, args.rtapp_calibration.as_deref(), args.json),
            other => Err(usage(format!(
                "--with `{}`: the tool to compare with is rt-app (without --with: the simulator)",
                printable(other)
            ))),
        };
    }
    if let Some(d) = args.flags.dispatch()? {
        if args.with.is_some() {
            return Err(usage(
                "--with rt-app compares Linux policies; --dispatcher compares with the simulator",
            ));
        }
        return dispatched::run(args, &d);
    }
    // The set is loaded once: placed here for the simulator's refusals,
    // run as loaded (the run places it the same way).
    let unplaced = args.flags.config()?;
    let loaded = rtlab_model::file::load(&args.flags.taskset)?;
    let mut cfg = unplaced.clone();
    let placed = args.flags.place(loaded.set.clone(), &mut cfg)?;
    // linux-dl -> linux-dl, pedf -> pedf (the same assignment), gfp:X -> gfp:X, rm -> fp:rm, ...
    let scheduler = cfg.scheduler();
    let spec = match scheduler.model_scheduler(rr_timeslice()) {
        Some(model) => SchedulerSpec::from(model),
        None if cfg.placement.is_none() => {
            return Err(usage(
                "--policy other: the simulator has no model of CFS/EEVDF; compare fifo-order, rm, dm, given, rr or edf",
            ))
        }
        None => {
            return Err(usage(format!(
                "--policy {scheduler}: the simulator has no model of it"
            )))
        }
    };
    let protocol = cfg.protocol;
    // The simulator's refusals (a protocol its scheduler cannot take) come
    // before the real run, not after it.
    let probe = SimConfig {
        protocol,
        ..SimConfig::new(Nanos::from_ns(1))
    };
    rtlab_sim::simulate(&placed, &spec, &probe).map_err(|e| {
        usage(format!(
            "--protocol {protocol} with --policy {}: {e}",
            cfg.policy
        ))
    })?;
    if args.flags.repeats()? > 1 {
        return compare_repeated(args, &unplaced, &loaded, &cfg, &spec, protocol);
    }
    let saver = args
        .save
        .begin(rtlab_store::RunKind::Compare, Some(&args.flags.taskset))?;
    let (comparison, origin) = one_comparison(
        args,
        &unplaced,
        &loaded,
        &cfg,
        &spec,
        protocol,
        saver.as_ref(),
    )?;
    // The store first: a stdout that fails does not lose the run.
    let saved = saver.map_or(Ok(()), |s| {
        s.finish(
            &serde_json::to_value(&comparison)?,
            comparison.real.interrupted,
        )
    });
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        out!("{}", describe(&comparison, &origin, args.tolerance, color));
        if let Some(d) = &comparison.real.disturbance {
            let differing: Vec<String> = comparison
                .tasks
                .iter()
                .filter(|t| t.misses.0 != t.misses.1)
                .map(|t| printable(&t.name).into_owned())
                .collect();
            out!(
                "{}",
                rtlab_report::disturbance_text::compare_note(d, &differing)
            );
        }
        out!(
            "{}",
            rtlab_report::kernel_trace::describe(comparison.real.kernel_trace.as_ref())
        );
    }
    crate::usage::all_of([saved, crate::real_run::lost_threads(&comparison.real)])?;
    Ok(ExitCode::SUCCESS)
}

/// One real run of the set and its simulation over the same time,
/// compared; the run's origin for the headline.
fn one_comparison(
    args: &CompareArgs,
    unplaced: &rtlab_rt::executor::RunConfig,
    loaded: &rtlab_model::file::LoadedTaskSet,
    cfg: &rtlab_rt::executor::RunConfig,
    spec: &SchedulerSpec,
    protocol: rtlab_model::policy::LockingProtocol,
    saver: Option<&crate::save::Saver>,
) -> anyhow::Result<(Comparison, String)> {
    let crate::real_run::Executed {
        set,
        origin,
        report: real,
        ..
    } = execute_loaded(
        &args.flags,
        unplaced.clone(),
        loaded.clone(),
        &[],
        Vec::new(),
        saver,
    )?;
    let mut sim_cfg = SimConfig::new(Nanos::from_ns(real.ended_ns));
    sim_cfg.protocol = protocol;
    // The same phases and modes, those that started before the real run
    // ended.
    let mut phases = cfg.phases.clone();
    crate::flags::add_modes(&mut phases, &loaded.modes, set.tasks.len(), cfg.duration)?;
    sim_cfg.phases = phases
        .into_iter()
        .filter(|p| p.start.as_ns() < real.ended_ns)
        .collect();
    sim_cfg.on_miss = cfg.on_miss;
    let sim = rtlab_sim::simulate(&set, spec, &sim_cfg)?;
    if sim.duration_ns < real.ended_ns {
        // The simulator stops an overloaded run at its backlog limit.
        eprintln!(
            "warning: the simulation stopped at {} with more than {} jobs waiting (an overloaded \
             set under --on-miss continue); its columns cover only that time",
            Nanos::from_ns(sim.duration_ns),
            rtlab_sim::MAX_PENDING_JOBS
        );
    }
    let tolerance = args.tolerance / 100.0;
    let tasks = compare_tasks(real.tasks.iter().map(|t| &t.metrics), &sim.tasks, tolerance);
    let comparison = Comparison::new(
        set.name.clone(),
        real.policy.to_string(),
        spec.to_string(),
        tasks,
        real,
        sim,
    );
    Ok((comparison, origin))
}

/// `--repeat N`: N comparisons one after the other, then the median and
/// spread of the real and simulated misses and the real figures.
fn compare_repeated(
    args: &CompareArgs,
    unplaced: &rtlab_rt::executor::RunConfig,
    loaded: &rtlab_model::file::LoadedTaskSet,
    cfg: &rtlab_rt::executor::RunConfig,
    spec: &SchedulerSpec,
    protocol: rtlab_model::policy::LockingProtocol,
) -> anyhow::Result<ExitCode> {
    if args.save.save || args.save.store.is_some() {
        return Err(usage(
            "--repeat N saves nothing (--save takes one run): run once to save",
        ));
    }
    let mut repeated = rtlab_report::repeat::Repeated::default();
    let mut runs = Vec::new();
    for i in 0..args.flags.repeat {
        let (c, _) = one_comparison(args, unplaced, loaded, cfg, spec, protocol, None)?;
        let verdict = c
            .real
            .disturbance
            .as_ref()
            .map_or_else(|| "no account".to_string(), |d| d.verdict.summary.clone());
        crate::setup::say(&format!(
            "run {} of {}: misses real {} vs simulated {}; {verdict}",
            i + 1,
            args.flags.repeat,
            c.real.deadline_misses,
            c.sim.deadline_misses
        ));
        let mut figures = vec![
            (
                "simulated misses".to_string(),
                Some(c.sim.deadline_misses as f64),
            ),
            (
                "misses agree".to_string(),
                Some(f64::from(u8::from(c.misses_agree))),
            ),
        ];
        figures.extend(crate::real_run::repeat_figures(&c.real));
        repeated.add_run(&figures, &verdict);
        crate::real_run::lost_threads(&c.real)?;
        let stop = c.real.interrupted;
        runs.push(c);
        if stop {
            break;
        }
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "runs": runs, "repeat": repeated }))?
        );
    } else {
        out!("{}", repeated.text(crate::real_run::repeat_figure_is_time));
    }
    Ok(ExitCode::SUCCESS)
}

fn signed_ns(v: Option<i64>) -> String {
    match v {
        None => "-".into(),
        Some(d) if d < 0 => format!("-{}", Nanos::from_ns(d.unsigned_abs())),
        Some(d) => format!("+{}", Nanos::from_ns(d as u64)),
    }
}

/// The side-by-side table; differing cells carry a `!` (bold red on a
/// terminal).
pub fn describe(c: &Comparison, origin: &str, tolerance_pct: f64, color: bool) -> String {
    let origin = printable(origin);
    let mark = |text: String, differs: bool| match (differs, color) {
        (false, _) => text,
        (true, false) => format!("{text} !"),
        (true, true) => format!("\x1b[1;31m{text} !\x1b[0m"),
    };
    let mut out = format!(
        "{} ({origin}): real threads under {} vs the simulator's {} for {}\n\n",
        printable(&c.taskset),
        c.policy,
        c.scheduler,
        Nanos::from_ns(c.real.ended_ns)
    );
    let locks = c.tasks.iter().any(|t| t.locks());
    let mut header = vec![
        "task",
        "misses real",
        "misses sim",
        "R max real",
        "R max sim",
        "delta",
        "R mean real",
        "R mean sim",
        "preempted real",
        "preempted sim",
    ];
    if locks {
        header.extend(["lock wait max real", "lock wait max sim"]);
    }
    let multi = c.real.cpus.is_some();
    if multi {
        header.extend([
            "migrated jobs real",
            "migrations sim",
            "kernel migrations real",
        ]);
    }
    let mut t = table::new(&header, &header[1..]);
    for task in &c.tasks {
        let differs = |f: &str| task.differences.iter().any(|d| d == f);
        let mut row = vec![
            printable(&task.name).into_owned(),
            mark(task.misses.0.to_string(), differs("misses")),
            task.misses.1.to_string(),
            mark(
                table::opt_ns(task.max_response_ns.0),
                differs("max_response"),
            ),
            table::opt_ns(task.max_response_ns.1),
            signed_ns(task.max_response_delta_ns),
            mark(
                table::opt_ns(task.mean_response_ns.0),
                differs("mean_response"),
            ),
            table::opt_ns(task.mean_response_ns.1),
            task.preemptions.0.to_string(),
            task.preemptions.1.to_string(),
        ];
        if locks {
            row.push(table::opt_ns(task.max_blocked_ns.0));
            row.push(table::opt_ns(task.max_blocked_ns.1));
        }
        if multi {
            row.push(task.migrations.0.to_string());
            row.push(task.migrations.1.to_string());
            let kernel = c
                .real
                .tasks
                .iter()
                .find(|t| t.name == task.name)
                .and_then(|t| t.kernel_migrations);
            row.push(kernel.map_or("-".into(), |k| k.to_string()));
        }
        t.add_row(row);
    }
    out.push_str(&table::render(&t));
    let differing: Vec<std::borrow::Cow<str>> = c
        .tasks
        .iter()
        .filter(|t| !t.differences.is_empty())
        .map(|t| printable(&t.name))
        .collect();
    out.push_str(&format!(
        "\n\nmisses: real {} vs simulated {} ({}); response times within {tolerance_pct}%: {}\n",
        c.real.deadline_misses,
        c.sim.deadline_misses,
        if c.misses_agree { "agree" } else { "DIFFER" },
        if differing.is_empty() {
            "every task".to_string()
        } else {
            format!("not for {}", differing.join(", "))
        },
    ));
    out.push_str(
        "real R includes wake-up latency and kernel overheads the model leaves out; \
         real preemptions are involuntary context switches during jobs (interrupts and kernel threads count too)\n",
    );
    if multi {
        out.push_str(
            "migrations: real = jobs that finished on another CPU than they started on (sched_getcpu; a job \
             moved and moved back counts 0), sim = every resumption on another processor; kernel = every move \
             of the thread, between jobs too\n",
        );
    }
    if locks {
        out.push_str(&format!(
            "critical sections under --protocol {}: lock wait = time a job spent waiting to take a lock \
             (real: inside pthread_mutex_lock; simulated: blocked on the resource; 0 when a ceiling \
             keeps the job from asking)\n",
            c.real.protocol
        ));
    }
    out
}
