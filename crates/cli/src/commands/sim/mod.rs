//! `rtlab sim`: simulate a task set under a scheduler (crate `rtlab-sim`).

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_model::overheads::Overheads;
use rtlab_model::policy::{LOCKING_PROTOCOLS, MISS_RULES};
use rtlab_model::results::{EachJob, JobRecord, JobSink};
use rtlab_model::{file, printable, Nanos};
use rtlab_report::sources::GanttRows;
use rtlab_report::view::RunView;
use rtlab_sim::{
    ExecModel, JitterModel, LockingProtocol, MissRule, SchedulerSpec, SimConfig, SimError,
    SimReport, Trace, TraceWindow, MAX_KEPT_RECORDS,
};

use crate::flags::parse_nanos;
use crate::usage::usage;

mod flags;
use flags::{flag_error, phases_error, window};

/// The `after_help` of `rtlab sim`: examples, then the schedulers from the
/// simulator's registry (`rtlab_sim::SCHEDULERS`), then the JSON schema.
pub fn examples() -> String {
    format!(
        "Examples:\n  \
    rtlab sim builtin:lf-scenario-4 --scheduler fp:dm --duration 100ms\n  \
    rtlab sim builtin:lf-scenario-4 --scheduler edf --duration 100ms --gantt s4.svg\n  \
    rtlab sim builtin:lf-scenario-4 --scheduler fp:dm --duration 100ms --plot s4-dm.svg\n  \
    rtlab sim builtin:hartstone-ph --scheduler rr:2ms --duration 10s --json\n  \
    rtlab sim builtin:avionics -s fp:rm -d 2s --tick 1ms --overheads builtin:rtmach\n  \
    rtlab sim my-set.toml --scheduler fp:rm --protocol ipcp --trace trace.json\n  \
    rtlab sim builtin:hartstone-ph -s multiburst -d 120s --overload hartstone-extended --on-miss skip\n  \
    rtlab sim builtin:avionics -s gedf --cpus 2 -d 1s --gantt avionics-gedf.svg\n  \
    rtlab sim builtin:hartstone-ph -s multiburst -d 10s --overheads my.toml --dispatcher\n\n\
    Schedulers:\n{}\n\
    The --json schema is in the guide (\"rtlab sim --json\").",
        rtlab_sim::scheduler::scheduler_help()
    )
}

/// `rtlab sim`
#[derive(Debug, Args)]
#[command(after_help = examples())]
pub struct SimArgs {
    /// A task-set file (.toml or .json) or `builtin:NAME`.
    pub taskset: String,
    /// The scheduler (the list is below): fp:rm, edf, rr:2ms, ..., or on m processors gedf,
    /// gfp:rm, edzl, linux-dl, pedf, pfp:rm, cedf (`run`'s and `analyze`'s spellings are
    /// accepted too: `--policy rm` is `--scheduler fp:rm`).
    #[arg(long, short = 's', alias = "policy", short_alias = 'P')]
    pub scheduler: String,
    /// Processors (1 to 1024; default: the task file's `processors`, else 1). More than one
    /// needs a multiprocessor scheduler.
    #[arg(long)]
    pub cpus: Option<u32>,
    /// For pedf and pfp:*: place the tasks with this heuristic (ff, bf, wf, nf, with
    /// -decreasing-util or -decreasing-density), each processor admitted by edf:edf-demand
    /// (pedf) or rm|dm|given:rta (pfp), instead of the file's `cpu` fields.
    #[arg(long, value_name = "HEURISTIC")]
    pub partition: Option<String>,
    /// Simulated time (default: one hyperperiod, if at most 100 s).
    #[arg(long, short = 'd', value_parser = parse_nanos)]
    pub duration: Option<Nanos>,
    /// Arakawa et al. 1993's timer-driven model: releases and quanta are noticed only at ticks of this
    /// period. Overrides the overheads file's `releases`/`tick` (default: the file's model,
    /// tickless when it states none).
    #[arg(long, value_parser = parse_nanos)]
    pub tick: Option<Nanos>,
    /// Overheads profile (TOML file or builtin:rtmach, builtin:zero); its costs occupy the CPU.
    #[arg(long)]
    pub overheads: Option<String>,
    /// Model rtlab's user-space dispatcher (`run --dispatcher`): every switch to another job also
    /// costs the overheads file's [dispatcher] decision and latency, and an instant with releases
    /// its wake (`characterize --dispatcher`).
    #[arg(long, requires = "overheads")]
    pub dispatcher: bool,
    /// Locking protocol for critical sections: none, npp, pip, ipcp (fixed priority), srp, dfp
    /// (EDF), on one processor or per processor of pedf/pfp:*; resources shared across processors:
    /// mpcp, dpcp, fmlp+, mrsp, msrp (pfp:*) or omlp (gedf, cedf). Each job's remote and local
    /// blocking is recorded.
    #[arg(long, alias = "locking", default_value = "none")]
    pub protocol: String,
    /// Extra CPU time per lock or unlock operation.
    #[arg(long, default_value = "0", value_parser = parse_nanos)]
    pub lock_cost: Nanos,
    /// What happens on a deadline miss: continue, abort, skip (Hartstone).
    #[arg(long, default_value = "continue")]
    pub on_miss: String,
    /// Execution time per job: wcet, or uniform in [bcet, wcet] drawn from the seed.
    #[arg(long, default_value = "wcet")]
    pub exec: String,
    /// Seed of the execution-time and jitter streams (same seed, same output).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Release jitter J of the task file: none (ignored), max (every job released J after
    /// its arrival) or uniform (a delay in [0, J] drawn from the seed).
    #[arg(long, default_value = "none")]
    pub jitter: String,
    /// Overload phase START..END:xFACTOR or START..END:UTIL% (repeatable), e.g. 30s..45s:120%.
    #[arg(long = "phase")]
    pub phases: Vec<String>,
    /// A named overload profile: hartstone-extended (48% for 30 s, 120% for 15 s, 48% to 120 s).
    #[arg(long)]
    pub overload: Option<String>,
    /// Print the JSON report instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Draw the Gantt chart of the --window (its first 400 jobs) as SVG with rtlab-report's plot (job windows, preemption counts).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    /// Write a Chrome trace-event JSON of the window (open in ui.perfetto.dev).
    #[arg(long)]
    pub trace: Option<String>,
    /// Write an SVG Gantt chart of the window.
    #[arg(long)]
    pub gantt: Option<String>,
    /// Window for --trace/--gantt as FROM..TO (default: the first 200 ms, at most the run).
    #[arg(long)]
    pub window: Option<String>,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
}

/// Builds the configuration from the flags. Every error is a usage error
/// naming the flag; what is accepted but changed (a window or a profile cut
/// at the end of the run) is said on standard error.
fn config(args: &SimArgs, set: &rtlab_model::TaskSet) -> anyhow::Result<SimConfig> {
    let duration = crate::flags::duration_or_hyperperiod(args.duration, set)?;
    let mut c = SimConfig::new(duration);
    c.tick = args.tick;
    c.overheads = args
        .overheads
        .as_deref()
        .map(|o| Overheads::load(o).map_err(|e| anyhow::anyhow!("--overheads: {e}")))
        .transpose()?;
    if args.dispatcher {
        let o = c.overheads.take().unwrap_or_else(Overheads::zero);
        if o.dispatcher.is_none() {
            return Err(usage(format!(
                "--dispatcher: --overheads {} has no [dispatcher] table (rtlab characterize --dispatcher --out FILE writes one)",
                printable(args.overheads.as_deref().unwrap_or(""))
            )));
        }
        c.overheads = Some(o.with_dispatcher());
    }
    c.protocol = args.protocol.parse::<LockingProtocol>().map_err(|_| {
        flag_error(SimError::Choice {
            setting: "protocol",
            value: args.protocol.clone(),
            accepted: LOCKING_PROTOCOLS,
        })
    })?;
    c.lock_cost = args.lock_cost;
    c.on_miss = args.on_miss.parse::<MissRule>().map_err(|_| {
        flag_error(SimError::Choice {
            setting: "on-miss",
            value: args.on_miss.clone(),
            accepted: MISS_RULES,
        })
    })?;
    c.exec = args.exec.parse::<ExecModel>().map_err(flag_error)?;
    c.jitter = args.jitter.parse::<JitterModel>().map_err(flag_error)?;
    c.seed = args.seed;
    c.phases = crate::flags::phase_flags(&args.phases, args.overload.as_deref(), duration)?;
    if args.trace.is_some() || args.gantt.is_some() || args.plot.is_some() {
        c.trace = Some(match &args.window {
            Some(w) => window(w, duration)?,
            None => {
                let to = duration.min(Nanos::from_ms(200));
                if to < duration {
                    eprintln!(
                        "note: --trace/--gantt/--plot show the first {to} of the {duration} run (the default --window); --window 0ms..{duration} shows it all"
                    );
                }
                TraceWindow {
                    from: Nanos::ZERO,
                    to,
                }
            }
        });
    }
    Ok(c)
}

/// Runs `rtlab sim`.
pub fn run(args: &SimArgs) -> anyhow::Result<ExitCode> {
    let mut loaded = file::load(&args.taskset)?;
    loaded.set = crate::flags::on_cpus(loaded.set, args.cpus)?;
    let spec: SchedulerSpec = args.scheduler.parse().map_err(flag_error)?;
    if let Some(heuristic) = &args.partition {
        loaded.set = crate::placement::for_scheduler(
            &loaded.set,
            &spec,
            heuristic,
            "nothing was simulated",
        )?;
    }
    let mut config = config(args, &loaded.set)?;
    crate::locking::check_sim(&loaded, &spec, config.protocol)?;
    crate::flags::add_modes(
        &mut config.phases,
        &loaded.modes,
        loaded.set.tasks.len(),
        config.duration,
    )?;
    let mut saver = args
        .save
        .begin(rtlab_store::RunKind::Sim, Some(&args.taskset))?;
    // --plot draws its jobs from the job records, in the window; the trace
    // is recorded only for --trace and --gantt.
    let plot_window = config.trace;
    if args.trace.is_none() && args.gantt.is_none() {
        config.trace = None;
    }
    // Job rows for --plot (the first jobs of the window, per task) and
    // --save (every job, up to a bound), from the records the summary is
    // folded from.
    let gantt = GanttRows::new();
    let sink = (args.plot.is_some() || saver.is_some()).then(|| {
        let kept = gantt.clone();
        let mut save_tap = saver.as_ref().map(|s| s.sim_job_tap(&loaded.set));
        let plot = args.plot.is_some();
        Box::new(EachJob(move |job: &JobRecord| {
            if plot && plot_window.is_some_and(|w| (w.from..w.to).contains(&job.release)) {
                kept.push(job);
            }
            if let Some(tap) = &mut save_tap {
                tap(job);
            }
        })) as Box<dyn JobSink>
    });
    let modes_of = (args.phases.is_empty() && args.overload.is_none() && !loaded.modes.is_empty())
        .then_some(loaded.origin.as_str());
    let outcome = simulate(args, &loaded.set, &spec, &config, sink, modes_of)?;
    let report = &outcome.report;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(report)?);
    } else {
        out!(
            "{}",
            rtlab_report::sim_text::describe(report, &loaded.origin)
        );
    }
    if let Some(mut saver) = saver.take() {
        saver.jobs_left_out(report.released.saturating_sub(saver.jobs_saved()));
        saver.finish(&serde_json::to_value(report)?, false)?;
    }
    if let Some(path) = &args.trace {
        outcome
            .trace_written
            .with_context(|| format!("--trace: cannot write {path}"))?;
        crate::wrote::wrote(path, "Chrome trace, open in Perfetto or chrome://tracing");
    }
    if let (Some(svg), Some(path)) = (outcome.gantt, &args.gantt) {
        rtlab_model::file::write_output(path, svg?)
            .with_context(|| format!("--gantt: cannot write {path}"))?;
        let what = match plot_window {
            Some(w) => format!("Gantt chart of {}..{}, SVG", w.from, w.to),
            None => "Gantt chart, SVG".to_string(),
        };
        crate::wrote::wrote(path, &what);
    }
    if let Some(path) = &args.plot {
        let mut run = RunView::unsaved("sim", serde_json::to_value(report)?);
        run.jobs = gantt.rows(&loaded.set);
        crate::plot_file::write(path, &run)?;
    }
    if let Some(stop) = outcome.stopped {
        anyhow::bail!("{stop}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What a run leaves for the output.
struct Outcome {
    report: SimReport,
    /// The --gantt chart, or why it cannot be drawn (with --gantt only).
    gantt: Option<anyhow::Result<String>>,
    /// The --trace document's write result.
    trace_written: std::io::Result<()>,
    stopped: Option<rtlab_sim::BacklogStop>,
}

/// The run through the simulator's one entry ([`rtlab_sim::run_with`]):
/// the Chrome trace written by its one writer (streamed as the run goes on
/// one processor), the trace's records kept for --gantt only.
fn simulate(
    args: &SimArgs,
    set: &rtlab_model::TaskSet,
    spec: &SchedulerSpec,
    config: &SimConfig,
    sink: Option<Box<dyn JobSink>>,
    modes_of: Option<&str>,
) -> anyhow::Result<Outcome> {
    let (chrome, placement) = crate::trace_output::open(args.trace.clone());
    let outputs = rtlab_sim::Outputs {
        jobs: sink,
        chrome,
        keep_trace: args.gantt.is_some(),
    };
    let mut out = rtlab_sim::run_with(set, spec, config, outputs).map_err(|e| match e {
        rtlab_sim::RunError::Sim(e) => phases_error(e, modes_of),
        rtlab_sim::RunError::Output(e) => anyhow::Error::new(e).context(format!(
            "--trace: cannot write {}",
            args.trace.as_deref().unwrap_or_default()
        )),
    })?;
    out.trace_written = placement.commit(out.trace_written);
    Ok(Outcome {
        gantt: args.gantt.as_ref().and(out.trace.as_ref()).map(gantt_svg),
        report: out.report,
        trace_written: out.trace_written,
        stopped: out.stopped,
    })
}

/// The SVG Gantt chart of a trace's window (the simulator's spans, drawn
/// by the report), refused when the window held more records than a trace
/// keeps.
fn gantt_svg(trace: &Trace) -> anyhow::Result<String> {
    let window = rtlab_sim::schedule_spans::gantt_window(trace).with_context(|| {
        format!(
            "--gantt: the window {}..{} holds more than {MAX_KEPT_RECORDS} records (bars, releases, \
             completions, misses), too many for one chart; narrow --window (--trace writes them all)",
            trace.window.from, trace.window.to
        )
    })?;
    let chart = rtlab_report::series::window_chart(&window);
    Ok(rtlab_report::plot::schedule(&chart)?)
}
