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
use rtlab_model::results::compare_tasks;
use rtlab_model::{printable, Nanos};
use rtlab_rt::executor::rr_timeslice;
use rtlab_sim::{SchedulerSpec, SimConfig};

use crate::real_run::{execute_loaded, RunFlags};
use crate::usage::usage;

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
    /// With --dispatcher: write every job of both sides as CSV, paired by task and number (real
    /// and simulated start, finish, response, verdict, and their difference)
    #[arg(long, value_name = "FILE.csv", conflicts_with = "with")]
    pub jobs: Option<std::path::PathBuf>,
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

pub use rtlab_report::compare_text::Comparison;

/// Runs `rtlab compare`.
pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
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
    if args.jobs.is_some() {
        return Err(usage(
            "--jobs pairs the jobs of a --dispatcher run with the simulator's; give --dispatcher -s SCHEDULER (`rtlab run --jobs` writes a Linux policy run's jobs)",
        ));
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
        out!(
            "{}",
            rtlab_report::compare_text::describe(&comparison, &origin, args.tolerance, color)
        );
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
