//! `rtlab run`: a task set on real threads under a Linux policy, every job
//! recorded (crate `rtlab-rt`, module `executor`).

use std::process::ExitCode;

use clap::Args;
use rtlab_model::{printable, Nanos};
use rtlab_report::sources::GanttRows;
use rtlab_report::view::RunView;
use rtlab_rt::executor::{JobSink, RunReport};

use crate::real_run::{execute, lost_threads, Executed, JobFile, JobFileKind, RunFlags};
use crate::save::SaveFlags;
use crate::usage::all_of;
use rtlab_report::table;

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
    rtlab run builtin:hartstone-ph --dispatcher -s ipi --tick 4ms -d 10s --json\n\n\
    Policies: other (SCHED_OTHER), fifo-order (SCHED_FIFO, one priority), rm, dm, given\n\
    (SCHED_FIFO, distinct priorities), rr (SCHED_RR, one priority), edf (SCHED_DEADLINE).\n\
    Threads are pinned to --cpu (default 1); edf on one CPU uses an exclusive cpuset.\n\
    On several CPUs (--cpus LIST): linux-dl (SCHED_DEADLINE over every CPU), pedf and cedf (one\n\
    exclusive cpuset, a root domain, per CPU or cluster), gfp[:ORDER] (SCHED_FIFO floating),\n\
    pfp[:ORDER] (SCHED_FIFO pinned per the file's cpu fields or --partition HEURISTIC).\n\
    With --dispatcher, -s names any scheduler of `rtlab sim` (I+PI, Multiburst, the hybrid, rr:Q...):\n\
    rtlab's dispatcher runs it on the real threads (guide: explanation/dispatcher.md).\n\
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
    rtlab_report::table::fit_to_terminal(!args.flags.wide);
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
        out!("{}", describe(&report, &origin));
        if let Some(d) = &report.disturbance {
            out!("\n{}", rtlab_report::disturbance_text::account_text(d));
        }
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

/// The human summary: a headline, a table per task, and the totals.
pub fn describe(r: &RunReport, origin: &str) -> String {
    let origin = printable(origin);
    let placement = match (&r.cpus, r.cpu) {
        (Some(cpus), _) => format!("on CPUs {}", rtlab_rt::executor::placement::list(cpus)),
        (None, Some(c)) => format!("pinned to CPU {c}"),
        (None, None) => "not pinned".to_string(),
    };
    let under = match &r.dispatcher {
        Some(d) => format!("rtlab's dispatcher running {}", d.scheduler),
        None => r.policy.to_string(),
    };
    let mut out = format!(
        "{} ({origin}) on real threads under {} ({placement}) for {}: on-miss {}, lag controller {}, RT throttling {}\n\n",
        printable(&r.taskset),
        under,
        Nanos::from_ns(r.ended_ns),
        r.on_miss,
        r.lag_controller_kind.as_deref().unwrap_or("off"),
        r.rt_throttling,
    );
    let locks = r.tasks.iter().any(|m| m.max_blocked_ns.is_some());
    let mut header = vec![
        "task",
        "thread",
        "released",
        "completed",
        "misses",
        "start misses",
        "skipped",
        "preempted",
        "R mean",
        "R max",
        "lag mean",
        "lag max",
        "first miss",
    ];
    if locks {
        header.push("lock wait max");
    }
    let multi = r.cpus.is_some();
    if multi {
        header.extend(["cpus", "migrated jobs", "kernel migrations"]);
    }
    let mut t = table::new(&header, &header[2..]);
    for m in &r.tasks {
        let mut row = vec![
            printable(&m.name).into_owned(),
            m.thread_policy.clone(),
            m.released.to_string(),
            m.completed.to_string(),
            m.misses.to_string(),
            m.start_deadline_misses.to_string(),
            m.skipped.to_string(),
            m.preemptions.to_string(),
            table::opt_ns(m.mean_response_ns),
            table::opt_ns(m.max_response_ns),
            table::opt_ns(m.mean_lag_ns),
            table::opt_ns(m.max_lag_ns),
            table::opt_ns(m.first_miss_ns),
        ];
        if locks {
            row.push(table::opt_ns(m.max_blocked_ns));
        }
        if multi {
            row.push(
                m.cpus
                    .as_deref()
                    .map_or("-".into(), rtlab_rt::executor::placement::list),
            );
            row.push(m.migrations.to_string());
            row.push(m.kernel_migrations.map_or("-".into(), |k| k.to_string()));
        }
        t.add_row(row);
    }
    out.push_str(&table::render(&t));
    if locks {
        out.push_str(&format!(
            "\n\ncritical sections under --protocol {}: lock wait = time a job spent inside pthread_mutex_lock",
            r.protocol
        ));
    }
    if multi {
        out.push_str(
            "\n\nmigrated jobs: jobs that finished on another CPU than they started on (sched_getcpu); \
             kernel migrations: every move of the thread over the run, between jobs too (se.nr_migrations)",
        );
    }
    out.push_str(&format!(
        "\n\ntotal: {} released, {} completed, {} deadline misses{}, {} start-deadline misses, {} preemptions, {} context switches ({:.1}/s)\n",
        r.released,
        r.completed,
        r.deadline_misses,
        r.first_miss_ns
            .map_or(String::new(), |f| format!(" (first at {})", Nanos::from_ns(f))),
        r.start_deadline_misses,
        r.preemptions,
        r.context_switches,
        r.context_switches_per_s,
    ));
    if !r.phases.is_empty() {
        out.push_str(&format!(
            "phases (new set from each boundary): {}\n",
            r.phases.join(", ")
        ));
    }
    if let Some(b) = r.budget_changes {
        out.push_str(&format!(
            "SCHED_DEADLINE budgets changed at phase boundaries: {} sched_setattr calls, {} refused, longest {}\n",
            b.changes,
            b.refused,
            Nanos::from_ns(b.max_ns)
        ));
    }
    out
}
