//! `rtlab run`: a task set on real threads under a Linux policy, every job
//! recorded (crate `rtlab-rt`, module `executor`).

use std::process::ExitCode;

use clap::Args;
use rtlab_report::sources::GanttRows;
use rtlab_report::view::RunView;
use rtlab_rt::executor::JobSink;

use crate::real_run::{execute, lost_threads, Executed, JobFile, JobFileKind, RunFlags};
use crate::save::SaveFlags;
use crate::usage::all_of;

const EXAMPLES: &str = "Examples:\n  \
    rtlab run builtin:lf-scenario-4 --policy dm --duration 1s\n  \
    rtlab run builtin:lf-scenario-4 --policy dm --duration 1s --plot s4-dm.svg\n  \
    rtlab run builtin:lf-scenario-4 --policy edf --duration 1s --no-rt-throttling --jobs s4-edf.csv\n  \
    rtlab run builtin:hartstone-ph --policy rm --duration 10s --json\n  \
    rtlab run my-set.toml --policy fifo-order --no-pin --on-miss skip --trace jobs.json\n  \
    rtlab run builtin:dhall-linux --cpus 0,1 --policy linux-dl --duration 1s\n  \
    rtlab run builtin:dhall-linux --cpus 0,1 --policy pedf --partition wf-decreasing --duration 1s\n  \
    rtlab run builtin:hartstone-ph --policy edf -d 10s --kernel-trace --jobs j.csv\n  \
    rtlab run builtin:hartstone-ph --dispatcher -s multiburst -d 10s\n  \
    rtlab run builtin:hartstone-ph --dispatcher -s ipi --tick 4ms -d 10s --json\n  \
    rtlab run builtin:dhall-linux --dispatcher -s gedf --cpus 0,1 -d 5s\n\n\
    Policies: other (SCHED_OTHER), fifo-order (SCHED_FIFO, one priority), rm, dm, given\n\
    (SCHED_FIFO, distinct priorities), rr (SCHED_RR, one priority), edf (SCHED_DEADLINE).\n\
    Threads are pinned to --cpu (default 1); edf on one CPU uses an exclusive cpuset.\n\
    On several CPUs (--cpus LIST): linux-dl (SCHED_DEADLINE over every CPU), pedf and cedf (one\n\
    exclusive cpuset, a root domain, per CPU or cluster), gfp[:ORDER] (SCHED_FIFO floating),\n\
    pfp[:ORDER] (SCHED_FIFO pinned per the file's cpu fields or --partition HEURISTIC).\n\
    With --dispatcher, -s names any scheduler of `rtlab sim` (I+PI, Multiburst, the hybrid, rr:Q...):\n\
    rtlab's dispatcher runs it on the real threads (on --cpus: one dispatcher per CPU for pedf,\n\
    pfp:ORDER or a uniprocessor scheduler, one for all of them for gedf, gfp:ORDER and edzl;\n\
    guide: explanation/dispatcher.md).\n\
    The run always ends at --duration; Ctrl-C (or SIGTERM, SIGHUP, SIGQUIT) ends it early and\n\
    prints what was recorded. Kernel settings it changes are recorded in /run/rtlab first and\n\
    restored, even after a SIGKILL (by the next run, or `rtlab doctor --restore`).\n\
    The --json schema and the --jobs CSV columns are in the guide (\"rtlab run\"); --kernel-trace\n\
    (root) adds each job's kernel account and misses by cause (the guide: \"Kernel trace\").";

/// `rtlab run`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct RunArgs {
    #[command(flatten)]
    pub flags: RunFlags,
    /// Write every job as CSV (one row per released job).
    #[arg(long)]
    pub jobs: Option<String>,
    /// Write the jobs as Chrome trace-event JSON (open in the Perfetto UI).
    #[arg(long)]
    pub trace: Option<String>,
    /// Print the JSON report instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Draw the Gantt chart of the first 400 jobs (job windows, start..finish, preemption counts) as SVG;
    /// with --kernel-trace, the kernel's schedule of one window above the simulated one.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub save: SaveFlags,
}

/// Runs `rtlab run`.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if args.flags.repeats()? > 1 {
        return run_repeated(args);
    }
    let mut files = Vec::new();
    if let Some(path) = &args.jobs {
        files.push(JobFile {
            kind: JobFileKind::Jobs,
            path,
        });
    }
    if let Some(path) = &args.trace {
        files.push(JobFile {
            kind: JobFileKind::Trace,
            path,
        });
    }
    let gantt = GanttRows::new();
    let more_sinks: Vec<Box<dyn JobSink + Send>> = match args.plot {
        Some(_) => vec![Box::new(gantt.clone())],
        None => Vec::new(),
    };
    let saver = args
        .save
        .begin(rtlab_store::RunKind::Run, Some(&args.flags.taskset))?;
    let Executed {
        set,
        origin,
        report,
        written,
        schedule,
    } = execute(&args.flags, &files, more_sinks, saver.as_ref())?;
    // The store first: a stdout that fails (a closed pipe, a full disk)
    // does not lose the run. A store that fails does not lose the output.
    let saved = saver.map_or(Ok(()), |s| {
        s.finish(
            &serde_json::to_value(&report)?,
            crate::real_run::partial(&report),
        )
    });
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        out!("{}", rtlab_report::run_text::describe(&report, &origin));
        out!(
            "{}",
            rtlab_report::dispatcher_text::describe(report.dispatcher.as_ref())
        );
        out!(
            "{}",
            rtlab_report::kernel_trace::describe(report.kernel_trace.as_ref())
        );
    }
    let plotted = match &args.plot {
        Some(path) => {
            let mut run = RunView::unsaved("run", serde_json::to_value(&report)?);
            run.jobs = gantt.rows(&set);
            // With --kernel-trace: the real schedule above the simulated one.
            run.schedule = schedule;
            crate::plot_file::write(path, &run)
        }
        None => Ok(()),
    };
    // Every failure, each said once: the files, the store, a lost thread.
    all_of(written.into_iter().chain([
        saved,
        plotted,
        lost_threads(&report),
        crate::real_run::watchdog_ended(&report),
    ]))?;
    Ok(ExitCode::SUCCESS)
}

/// `--repeat N`: N runs one after the other (each waits for the CPU lock
/// and carries its own account), then the median and spread of each figure.
/// Job files, plots and the store take one run and are refused with it.
fn run_repeated(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if args.jobs.is_some()
        || args.trace.is_some()
        || args.plot.is_some()
        || args.save.save
        || args.save.store.is_some()
    {
        return Err(crate::usage::usage(
            "--repeat N writes no --jobs, --trace, --plot or --save (they take one run): run once for those",
        ));
    }
    let mut repeated = rtlab_report::repeat::Repeated::default();
    let mut reports = Vec::new();
    for i in 0..args.flags.repeat {
        let Executed { report, .. } = execute(&args.flags, &[], Vec::new(), None)?;
        let verdict = report
            .disturbance
            .as_ref()
            .map_or_else(|| "no account".to_string(), |d| d.verdict.summary.clone());
        crate::setup::say(&format!(
            "run {} of {}: {} deadline misses; {verdict}",
            i + 1,
            args.flags.repeat,
            report.deadline_misses
        ));
        repeated.add_run(&crate::real_run::repeat_figures(&report), &verdict);
        lost_threads(&report)?;
        let stop = report.interrupted;
        reports.push(report);
        if stop {
            break;
        }
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "runs": reports,
                "repeat": repeated,
            }))?
        );
    } else {
        out!("{}", repeated.text(crate::real_run::repeat_figure_is_time));
    }
    Ok(ExitCode::SUCCESS)
}
