//! A task set on real threads with every job streamed to its sinks: the
//! part `rtlab run` and `rtlab compare` share (crate `rtlab-rt`, module
//! `executor`); their flags and the executor's configuration from them are
//! [`flags`].

mod dispatched;
mod flags;

use std::fs::File;
use std::io::BufWriter;

use anyhow::Context;
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::file::OutputFile;
use rtlab_model::policy::LockingProtocol;
use rtlab_model::{file, printable, Nanos, TaskSet};
use rtlab_rt::executor::{self, JobSink, RunConfig, RunReport};
use rtlab_rt::RtError;

use crate::kernel_trace;
use crate::save::Saver;
use crate::setup::{restore_left_state_first, say};
use crate::usage::{naming_the_flag, usage};

pub use dispatched::{partial, watchdog_ended};
pub use flags::{RealSeriesFlags, RunFlags};

/// Which job file: the format, and the flag that asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobFileKind {
    /// `--jobs`: one CSV row per job (with a kernel trace, written after
    /// the run with the kernel's columns).
    Jobs,
    /// `--trace`: the Chrome trace of every job (with a kernel trace, the
    /// kernel's schedule is added after the run).
    Trace,
}

impl JobFileKind {
    /// The flag's name, without dashes.
    pub fn flag(self) -> &'static str {
        match self {
            JobFileKind::Jobs => "jobs",
            JobFileKind::Trace => "trace",
        }
    }

    /// What the file holds, for the line that says it was written.
    fn what(self) -> &'static str {
        match self {
            JobFileKind::Jobs => "one record per job",
            JobFileKind::Trace => "Chrome trace of every job, open in Perfetto or chrome://tracing",
        }
    }

    /// Opens the format on a created file (writes its opening).
    fn open(self, out: BufWriter<File>, set: &TaskSet) -> std::io::Result<Box<dyn JobSink + Send>> {
        Ok(match self {
            JobFileKind::Jobs => Box::new(executor::JobsCsv::new(out, set)?),
            JobFileKind::Trace => Box::new(executor::ChromeTrace::new(out, set)?),
        })
    }
}

/// A job file to stream the run into.
pub struct JobFile<'a> {
    /// Which one.
    pub kind: JobFileKind,
    /// Where.
    pub path: &'a str,
}

/// Loads the set, warns about RT throttling, creates the job files, runs
/// the set (streaming every job into the files), and says so on stderr
/// when a stop signal cut the run short or job records were dropped (a
/// lost thread is [`lost_threads`]' error, for after the output). Every job also goes to `saver` when one is given, and to
/// `more_sinks`. Returns the report and, per job file (then for the
/// saver), how writing it went.
/// The figures of one run that `--repeat` gives the median and spread of:
/// per task its misses, largest and mean response, largest lag; the
/// run's misses and context switches.
pub fn repeat_figures(r: &RunReport) -> Vec<(String, Option<f64>)> {
    let ns = |v: Option<u64>| v.map(|v| v as f64);
    let mut out = vec![
        (
            "deadline misses".to_string(),
            Some(r.deadline_misses as f64),
        ),
        (
            "context switches".to_string(),
            Some(r.context_switches as f64),
        ),
    ];
    for t in &r.tasks {
        let name = printable(&t.name);
        out.push((format!("{name} misses"), Some(t.misses as f64)));
        out.push((format!("{name} R max"), ns(t.max_response_ns)));
        out.push((format!("{name} R mean"), ns(t.mean_response_ns)));
        out.push((format!("{name} lag max"), ns(t.max_lag_ns)));
    }
    out
}

/// Whether a `--repeat` figure is a time (ns).
pub fn repeat_figure_is_time(name: &str) -> bool {
    name.ends_with(" R max") || name.ends_with(" R mean") || name.ends_with(" lag max")
}

/// What [`execute`] leaves for the command's output.
pub struct Executed {
    /// The set as run (placed).
    pub set: TaskSet,
    /// Where it came from (file or built-in).
    pub origin: String,
    /// The report.
    pub report: RunReport,
    /// Per job file (then for the saver), how writing it went.
    pub written: Vec<anyhow::Result<()>>,
    /// With `--kernel-trace`: the drawn window of the kernel's schedule and
    /// the simulator's (also saved with the run); empty otherwise.
    pub schedule: Vec<rtlab_model::results::ScheduleSpan>,
}

pub fn execute(
    flags: &RunFlags,
    files: &[JobFile<'_>],
    more_sinks: Vec<Box<dyn JobSink + Send>>,
    saver: Option<&Saver>,
) -> anyhow::Result<Executed> {
    let cfg = flags.config()?;
    let loaded = file::load(&flags.taskset)?;
    execute_loaded(flags, cfg, loaded, files, more_sinks, saver)
}

/// [`execute`] of a set already loaded under the configuration `cfg`
/// (`flags.config()`, not yet placed), for a command that needs the set
/// before the run (`compare` loads it once).
pub fn execute_loaded(
    flags: &RunFlags,
    mut cfg: RunConfig,
    mut loaded: file::LoadedTaskSet,
    files: &[JobFile<'_>],
    more_sinks: Vec<Box<dyn JobSink + Send>>,
    saver: Option<&Saver>,
) -> anyhow::Result<Executed> {
    flags.repeats()?;
    let dispatch = flags.dispatch()?;
    crate::flags::add_modes(
        &mut cfg.phases,
        &loaded.modes,
        loaded.set.tasks.len(),
        cfg.duration,
    )?;
    loaded.set = flags.place(loaded.set, &mut cfg)?;
    if let (LockingProtocol::Multiprocessor(p), Some(cpus)) =
        (cfg.protocol, loaded.set.assignment())
    {
        crate::locking::check_protocol(&loaded, &loaded.set, p, &cpus)?;
    }
    for warning in warnings(&loaded.set, &cfg) {
        eprintln!("warning: {warning}");
    }
    let refused = |e: RtError| {
        let e = match e {
            // The dispatcher's refusals of its flags (-s, --tick,
            // --protocol) are usage errors.
            RtError::Setting { .. } if dispatch.is_some() => usage(naming_the_flag(&e)),
            RtError::Setting { .. } => anyhow::anyhow!(naming_the_flag(&e)),
            other => other.into(),
        };
        e.context(match &dispatch {
            Some(d) => format!("rtlab run --dispatcher -s {}", d.scheduler),
            None => format!("rtlab run --policy {}", cfg.scheduler()),
        })
    };
    // What would be refused is refused before waiting for the CPU.
    match &dispatch {
        Some(d) => rtlab_rt::dispatcher::check(&loaded.set, &cfg, d),
        None => executor::check(&loaded.set, &cfg),
    }
    .map_err(refused)?;
    flags.kernel.check()?;
    let flag = interrupt::install_interrupt_flag();
    // A multiprocessor run measures on every CPU it uses: it takes the
    // lock of each.
    let run_cpus = match &cfg.placement {
        Some(p) => Some(p.cpus.clone()),
        None => cfg.cpu.map(|c| vec![c]),
    };
    let measured = run_cpus
        .clone()
        .unwrap_or_else(|| rtlab_host::policy::allowed_cpus().unwrap_or_default());
    flags.isolate.check(&measured)?;
    let lock_wait = std::time::Instant::now();
    let _measuring = flags.cpu_lock.hold(run_cpus.as_deref())?;
    let lock_wait = lock_wait.elapsed();
    if let Some(saver) = saver {
        // The machine as the measurement finds it, not as it was before
        // the wait for the lock.
        saver.measurement_starts();
    }
    let traced = cfg.kernel_trace.is_some();
    // With a kernel trace the executor keeps every job for the attribution,
    // and the job rows, which gain its columns, are written after the run.
    // Each file is written beside its path and put there once complete
    // (`OutputFile`): `pending` is in the order of `files`.
    let mut sinks = Vec::with_capacity(files.len());
    let mut pending = Vec::with_capacity(files.len());
    for f in files {
        if traced && f.kind == JobFileKind::Jobs {
            pending.push(None);
            continue;
        }
        let created = OutputFile::create(f.path)
            .and_then(|out| {
                let (out, place) = out.into_parts();
                pending.push(Some(place));
                f.kind.open(BufWriter::new(out), &loaded.set)
            })
            .with_context(|| format!("--{}: cannot create {}", f.kind.flag(), f.path))?;
        sinks.push(created);
    }
    if let Some(saver) = saver {
        sinks.push(saver.job_sink(&loaded.set));
    }
    // In-memory sinks (the --plot Gantt rows) cannot fail: their results
    // are not reported.
    sinks.extend(more_sinks);
    restore_left_state_first();
    let shield = flags.isolate.raise(&measured)?;
    // On a terminal, a progress line fed by one more sink (its result is
    // not reported: counting cannot fail).
    let progress = crate::progress::RunProgress::start(cfg.duration).map(|(line, sink)| {
        sinks.push(Box::new(sink));
        line.follow(cfg.duration)
    });
    let ran = match &dispatch {
        Some(d) => rtlab_rt::dispatcher::run_traced(&loaded.set, &cfg, d, flag, sinks),
        None => executor::run_traced(&loaded.set, &cfg, flag, sinks),
    };
    if let Some(line) = progress {
        line.finish();
    }
    drop(shield);
    let (mut report, written, account) = match ran {
        Ok(done) => done,
        Err(e) => {
            // Refused before the first release: no file is made (dropping
            // `pending` removes the partial ones; a device is untouched).
            drop(pending);
            return Err(refused(e));
        }
    };
    if let Some(d) = report.disturbance.as_mut() {
        d.lock_wait_ns = Some(u64::try_from(lock_wait.as_nanos()).unwrap_or(u64::MAX));
    }
    // The sinks' results in the order of `files` (the jobs file, written
    // below when traced, takes its place).
    let mut results = written.into_iter();
    let mut written: Vec<anyhow::Result<()>> = Vec::with_capacity(files.len() + 1);
    for (f, place) in files.iter().zip(pending) {
        let Some(place) = place else {
            written.push(Ok(()));
            continue;
        };
        let result = results.next().unwrap_or(Ok(()));
        // A file whose writer failed stays out (its partial removed).
        let result = result.and_then(|()| place.commit());
        written
            .push(result.with_context(|| format!("--{}: cannot write {}", f.kind.flag(), f.path)));
    }
    written.extend(results.map(|r| r.context("--save: cannot spool the jobs")));
    let mut schedule = Vec::new();
    if let Some(account) = account {
        // A trace that cannot be read does not lose the run: its results
        // and job rows are kept without the kernel's columns.
        let analysis = match &account.traced {
            Ok(t) => {
                kernel_trace::said(t, &flags.kernel);
                Some(&t.analysis)
            }
            Err(e) => {
                say(&format!(
                    "warning: the kernel trace could not be analysed: {e:#}"
                ));
                None
            }
        };
        if let Some(a) = analysis {
            let on_miss = cfg.on_miss;
            schedule = kernel_trace::schedule_spans(
                a,
                &loaded.set,
                &account.jobs,
                &report,
                on_miss,
                &cfg.phases,
            );
            if let Some(saver) = saver {
                saver.schedule(schedule.clone());
            }
        }
        for (i, f) in files.iter().enumerate() {
            match (f.kind, analysis) {
                (JobFileKind::Jobs, _) => {
                    written[i] = kernel_trace::write_jobs_csv(
                        f.path,
                        &loaded.set,
                        &account.jobs,
                        analysis,
                        &report,
                    );
                }
                (JobFileKind::Trace, Some(a)) => {
                    if let Err(e) = kernel_trace::write_schedule(f.path, a, &report) {
                        if written[i].is_ok() {
                            written[i] = Err(e);
                        }
                    }
                }
                (JobFileKind::Trace, None) => {}
            }
        }
    }
    for (f, result) in files.iter().zip(&written) {
        if traced && f.kind == JobFileKind::Jobs {
            continue;
        }
        if result.is_ok() {
            crate::wrote::wrote(f.path, f.kind.what());
        }
    }
    let reported = files.len() + usize::from(saver.is_some());
    written.truncate(reported);
    written.resize_with(reported, || Ok(()));
    if report.jobs_dropped > 0 {
        say(&format!(
            "warning: {} job records were dropped from the job files because the writer fell behind (the summary still counts every job)",
            report.jobs_dropped
        ));
    }
    if report.interrupted {
        say(&format!(
            "interrupted{} after {}: what was recorded until then follows",
            interrupt::signal_name().map_or(String::new(), |s| format!(" by {s}")),
            Nanos::from_ns(report.ended_ns)
        ));
    }
    Ok(Executed {
        set: loaded.set,
        origin: loaded.origin,
        report,
        written,
        schedule,
    })
}

/// A run whose threads did not all report back is a failed run (exit 1),
/// said after what was measured is printed and saved.
pub fn lost_threads(report: &RunReport) -> anyhow::Result<()> {
    if report.lost_tasks.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "the threads of {} did not report back in time (stopped, or starved past the end of the run); \
         their jobs are missing from the summary",
        report.lost_tasks.iter().map(|t| printable(t).into_owned()).collect::<Vec<_>>().join(", ")
    )
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
                printable(&t.name), t.period, t.deadline
            ));
        }
    }
    out
}
