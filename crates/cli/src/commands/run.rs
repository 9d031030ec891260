//! `rtlab run`: a task set on real threads under a Linux policy, every job
//! recorded (crate `rtlab-rt`, module `executor`).

use std::io::BufWriter;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_model::{file, Nanos, TaskSet};
use rtlab_rt::executor::{self, write_jobs_csv, Overrun, RunConfig, RunPolicy, RunReport};
use rtlab_rt::{interrupt, RtThrottling};
use serde_json::{json, Value};

use crate::table;

const EXAMPLES: &str = "Examples:\n  \
    rtlab run builtin:lf-scenario-4 --policy dm --duration 1s\n  \
    rtlab run builtin:lf-scenario-4 --policy edf --duration 1s --jobs s4-edf.csv\n  \
    rtlab run builtin:hartstone-ph --policy rm --duration 10s --json\n  \
    rtlab run my-set.toml --policy fifo-order --no-pin --on-miss skip --trace jobs.json\n\n\
    Policies: other (SCHED_OTHER), fifo-order (SCHED_FIFO, one priority), rm, dm, given\n\
    (SCHED_FIFO, distinct priorities), rr (SCHED_RR, one priority), edf (SCHED_DEADLINE).\n\
    Threads are pinned to --cpu (default 1); edf on one CPU uses an exclusive cpuset.\n\
    The run always ends at --duration; Ctrl-C ends it early and prints what was recorded.\n\
    The --json schema and the --jobs CSV columns are in README (\"rtlab run\").";

/// Flags shared by `rtlab run` and `rtlab compare`.
#[derive(Debug, Clone, Args)]
pub struct RunFlags {
    /// A task-set file (.toml or .json) or `builtin:NAME`.
    pub taskset: String,
    /// other, fifo-order, rm, dm, given, rr or edf.
    #[arg(long, short = 'P')]
    pub policy: String,
    /// How long to run (releases at or after it are not made).
    #[arg(long, short = 'd', default_value = "10s")]
    pub duration: String,
    /// The CPU every task thread is pinned to (default: 1, or the first allowed CPU).
    #[arg(long, conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Let the threads run on any CPU (global scheduling; for edf, global EDF).
    #[arg(long)]
    pub no_pin: bool,
    /// A late job delays the next (continue) or releases during it are skipped (skip).
    #[arg(long, default_value = "continue")]
    pub on_miss: String,
    /// Wait for releases with the robust lag controller (README: "The lag controllers").
    #[arg(long)]
    pub lag_controller: bool,
    /// SCHED_DEADLINE budget over C (default: max(5% of C, 100us)).
    #[arg(long)]
    pub edf_margin: Option<String>,
    /// Do not lock memory (mlockall) for the run.
    #[arg(long)]
    pub no_mlock: bool,
    /// Switch RT throttling and SCHED_DEADLINE admission control off for the run
    /// (sched_rt_runtime_us = -1, restored afterwards); needed for EDF sets above ~0.90.
    #[arg(long)]
    pub no_rt_throttling: bool,
}

impl RunFlags {
    /// The executor configuration; errors name the flag.
    pub fn config(&self) -> anyhow::Result<RunConfig> {
        let policy: RunPolicy = self.policy.parse().map_err(anyhow::Error::msg)?;
        let duration = duration_flag("duration", &self.duration)?;
        let mut cfg = RunConfig::new(duration, policy);
        cfg.cpu = if self.no_pin {
            None
        } else {
            Some(self.cpu.unwrap_or_else(executor::default_cpu))
        };
        cfg.on_miss = self
            .on_miss
            .parse::<Overrun>()
            .map_err(anyhow::Error::msg)?;
        cfg.lag_controller = self.lag_controller;
        cfg.edf_margin = self
            .edf_margin
            .as_deref()
            .map(|m| duration_flag("edf-margin", m))
            .transpose()?;
        cfg.mlock = !self.no_mlock;
        cfg.no_rt_throttling = self.no_rt_throttling;
        Ok(cfg)
    }
}

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
}

fn duration_flag(flag: &str, text: &str) -> anyhow::Result<Nanos> {
    text.parse::<Nanos>()
        .map_err(|e| anyhow::anyhow!("--{flag} `{text}`: {e}"))
}

/// Loads the set, warns about RT throttling, runs it, and says so on
/// stderr when Ctrl-C or a lost thread cut the run short.
pub fn execute(flags: &RunFlags) -> anyhow::Result<(TaskSet, String, RunReport)> {
    let loaded = file::load(&flags.taskset)?;
    let cfg = flags.config()?;
    for warning in warnings(&loaded.set, &cfg) {
        eprintln!("warning: {warning}");
    }
    let flag = interrupt::install_interrupt_flag();
    let report = executor::run(&loaded.set, &cfg, flag)
        .with_context(|| format!("rtlab run --policy {}", cfg.policy))?;
    if report.interrupted {
        eprintln!(
            "interrupted after {}: what was recorded until then follows",
            Nanos::from_ns(report.ended_ns)
        );
    }
    if !report.lost_tasks.is_empty() {
        eprintln!(
            "warning: the threads of {} did not report back in time (their jobs are missing)",
            report.lost_tasks.join(", ")
        );
    }
    Ok((loaded.set, loaded.origin, report))
}

/// What the user should know before the numbers: RT throttling that the
/// set's load can hit, and SCHED_DEADLINE deadlines clamped to the period.
fn warnings(set: &TaskSet, cfg: &RunConfig) -> Vec<String> {
    let mut out = Vec::new();
    let u = set.utilization();
    if cfg.policy.is_fifo_or_rr() && cfg.cpu.is_some() && !cfg.no_rt_throttling {
        if let Ok(t) = RtThrottling::read() {
            if t.can_throttle(u) {
                out.push(format!(
                    "the set needs {:.1}% of CPU {} but RT throttling lets SCHED_FIFO/RR threads use {}; \
                     the kernel will stop them for the rest of each throttling period (raise \
                     /proc/sys/kernel/sched_rt_runtime_us, or write -1 there, to change it)",
                    u * 100.0,
                    cfg.cpu.unwrap_or(0),
                    t.describe_limit()
                ));
            }
        }
    }
    if cfg.policy.is_deadline() {
        for t in set.tasks.iter().filter(|t| t.deadline > t.period) {
            out.push(format!(
                "task `{}`: SCHED_DEADLINE needs deadline <= period, so it runs with deadline {} (its D {} is still what misses are judged by)",
                t.name, t.period, t.deadline
            ));
        }
    }
    out
}

/// Runs `rtlab run`.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let (set, origin, report) = execute(&args.flags)?;
    let ended = Nanos::from_ns(report.ended_ns);
    if let Some(path) = &args.jobs {
        let file =
            std::fs::File::create(path).with_context(|| format!("--jobs: cannot create {path}"))?;
        write_jobs_csv(BufWriter::new(file), &set, &report.jobs, ended)
            .with_context(|| format!("--jobs: cannot write {path}"))?;
    }
    if let Some(path) = &args.trace {
        let text = serde_json::to_string(&chrome_trace(&set, &report))?;
        std::fs::write(path, text).with_context(|| format!("--trace: cannot write {path}"))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", describe(&report, &origin));
    }
    Ok(ExitCode::SUCCESS)
}

/// The human summary: a headline, a table per task, and the totals.
pub fn describe(r: &RunReport, origin: &str) -> String {
    let placement = r
        .cpu
        .map_or("not pinned".to_string(), |c| format!("pinned to CPU {c}"));
    let mut out = format!(
        "{} ({origin}) on real threads under {} ({placement}) for {}: on-miss {}, lag controller {}, RT throttling {}\n\n",
        r.taskset,
        r.policy,
        Nanos::from_ns(r.ended_ns),
        r.on_miss,
        if r.lag_controller { "on" } else { "off" },
        r.rt_throttling,
    );
    let header = [
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
    let mut t = table::new(&header, &header[2..]);
    for m in &r.tasks {
        t.add_row(vec![
            m.name.clone(),
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
        ]);
    }
    out.push_str(&table::render(&t));
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
    out
}

/// One complete event per job from start to finish (a job's window on its
/// thread: preemptions inside it are counted, not located), and an instant
/// event at each release; times in microseconds as the format wants.
fn chrome_trace(set: &TaskSet, r: &RunReport) -> Value {
    let us = |n: Nanos| n.as_ns() as f64 / 1000.0;
    let mut events = Vec::with_capacity(r.jobs.len() * 2);
    for (i, t) in set.tasks.iter().enumerate() {
        events.push(json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": i,
                           "args": {"name": t.name}}));
    }
    for j in &r.jobs {
        let name = &set.tasks[j.task].name;
        events.push(
            json!({"ph": "i", "s": "t", "name": format!("release {name}#{}", j.job),
                           "pid": 1, "tid": j.task, "ts": us(j.release)}),
        );
        if let (Some(start), Some(finish)) = (j.start, j.finish) {
            events.push(json!({
                "ph": "X", "name": format!("{name}#{}", j.job), "pid": 1, "tid": j.task,
                "ts": us(start), "dur": us(finish.saturating_sub(start)),
                "args": {"release_ns": j.release.as_ns(), "deadline_ns": j.deadline.as_ns(),
                         "missed": j.missed(Nanos::from_ns(r.ended_ns)),
                         "preemptions": j.involuntary_switches}
            }));
        }
    }
    json!({"traceEvents": events, "displayTimeUnit": "ms"})
}
