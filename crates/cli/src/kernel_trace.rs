//! `--kernel-trace[=FILE]`: the flag every real-run command shares, and
//! the wiring from a run to `rtlab-ktrace` (record, decode, attribute).

use std::io::BufWriter;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rtlab_ktrace::gantt::{real_spans, MissMark};
use rtlab_ktrace::{jobs, Analysis, KernelTrace, Recording, Traced};
use rtlab_model::file::OutputFile;
use rtlab_model::results::schedule::schedule_window;
use rtlab_model::results::ScheduleSpan;
use rtlab_model::{Nanos, TaskSet};
use rtlab_rt::executor::{JobRecord, JobsCsv, RunReport};
use rtlab_sim::schedule_spans::simulated_spans;
use rtlab_sim::{MissRule, SchedulerSpec, SimConfig};

use crate::setup::say;

/// The kernel-trace flag (flattened into each real-run command).
#[derive(Debug, Clone, Default, Args)]
pub struct KernelTraceFlags {
    /// Record the kernel's scheduling events of the run's CPUs (a private tracefs instance;
    /// root) and explain every job's waits and misses by cause; `=FILE` keeps the raw trace.
    /// The guide: "Kernel trace".
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub kernel_trace: Option<String>,
}

impl KernelTraceFlags {
    /// Whether a trace was asked for.
    pub fn wanted(&self) -> bool {
        self.kernel_trace.is_some()
    }

    /// Where to keep the raw trace, when asked.
    pub fn keep(&self) -> Option<PathBuf> {
        self.kernel_trace
            .as_deref()
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    }

    /// Refuses, before any real-time work, a trace this machine cannot
    /// record (one line: what is missing and how to get it).
    pub fn check(&self) -> anyhow::Result<()> {
        if self.wanted() {
            rtlab_ktrace::check_available()?;
        }
        Ok(())
    }

    /// The request the executor (and `latency`) take; `None` without the flag.
    pub fn request(&self) -> Option<KernelTrace> {
        self.wanted().then(|| KernelTrace::new(self.keep()))
    }

    /// The request of a command that records several runs (`=FILE` keeps
    /// `FILE.1`, `FILE.2`, ... in run order).
    pub fn request_per_run(&self) -> Option<KernelTrace> {
        self.request().map(KernelTrace::numbered)
    }

    /// Starts recording `cpus` (`None`: every CPU this process may use)
    /// with `extra` events besides the scheduling ones, the reader on the
    /// other CPUs ([`Recording::start_with`]): for `characterize`, which
    /// reads the trace itself rather than through the executor.
    pub fn start_with(
        &self,
        cpus: Option<&[usize]>,
        extra: &[&str],
    ) -> anyhow::Result<Option<Recording>> {
        if !self.wanted() {
            return Ok(None);
        }
        let allowed = rtlab_host::policy::allowed_cpus().unwrap_or_default();
        let traced: Vec<usize> = cpus.map_or_else(|| allowed.clone(), <[usize]>::to_vec);
        let reader: Vec<usize> = allowed
            .into_iter()
            .filter(|c| !traced.contains(c))
            .collect();
        Ok(Some(Recording::start_with(
            &traced,
            &reader,
            self.keep().as_deref(),
            extra,
        )?))
    }

    /// Refuses the flag on a command line that makes no real run (a usage
    /// error: `what` names the flag the real runs need).
    pub fn needs(&self, real: bool, what: &str) -> anyhow::Result<()> {
        if self.wanted() && !real {
            return Err(crate::usage::usage(format!(
                "--kernel-trace traces real runs: add {what}"
            )));
        }
        self.check()
    }
}

/// Says on stderr what a finished trace lost, and where its raw file is
/// when kept.
pub fn said(traced: &Traced, flags: &KernelTraceFlags) {
    if let Some(warning) = traced.incomplete() {
        say(&warning);
    }
    if let Some(k) = flags.keep() {
        crate::wrote::wrote(&k, "raw kernel trace: rtlab-ktrace pages");
    }
}

/// Writes `--jobs FILE.csv` with the kernel's columns appended.
pub fn write_jobs_csv(
    path: &str,
    set: &TaskSet,
    jobs_seen: &[JobRecord],
    analysis: Option<&Analysis>,
    report: &RunReport,
) -> anyhow::Result<()> {
    let ended = Nanos::from_ns(report.ended_ns);
    let (out, place) = OutputFile::create(path)
        .with_context(|| format!("--jobs: cannot create {path}"))?
        .into_parts();
    let columns: &[&str] = if analysis.is_some() {
        &jobs::JOB_COLUMNS
    } else {
        &[]
    };
    let mut csv = JobsCsv::with_columns(BufWriter::new(out), set, columns)
        .with_context(|| format!("--jobs: cannot write {path}"))?;
    for (i, j) in jobs_seen.iter().enumerate() {
        let cells = analysis
            .and_then(|a| a.jobs.get(i))
            .map_or_else(Vec::new, |k| jobs::cells(k, report.start_monotonic_ns));
        csv.job_with(j, ended, &cells)
            .with_context(|| format!("--jobs: cannot write {path}"))?;
    }
    rtlab_model::results::JobSink::finish(&mut csv)
        .and_then(|()| {
            drop(csv);
            place.commit()
        })
        .with_context(|| format!("--jobs: cannot write {path}"))?;
    crate::wrote::wrote(path, "one record per job, with the kernel's account of it");
    Ok(())
}

/// Writes the kernel's schedule as Chrome trace rows next to `--trace
/// FILE` (as `FILE` with `.kernel.json` in place of its extension).
pub fn write_schedule(
    trace_path: &str,
    analysis: &Analysis,
    report: &RunReport,
) -> anyhow::Result<()> {
    let path = PathBuf::from(trace_path).with_extension("kernel.json");
    let (out, place) = OutputFile::create(&path)
        .with_context(|| format!("--trace: cannot create {}", path.display()))?
        .into_parts();
    rtlab_ktrace::perfetto::write(BufWriter::new(out), analysis, report.start_monotonic_ns)
        .and_then(|_| place.commit())
        .with_context(|| format!("--trace: cannot write {}", path.display()))?;
    crate::wrote::wrote(
        &path,
        "the kernel's schedule of the run's CPUs, open in Perfetto",
    );
    Ok(())
}

/// The run's schedule window for the report and `--plot`: the kernel's
/// spans of [`schedule_window`] (the first 100 ms, or 100 ms ending after
/// the first miss) with each missed job marked by its main cause, then
/// the simulator's spans of the same set under the run's model scheduler
/// (`report.scheduler`; none for `--policy other`) for the same window.
/// A simulation the model refuses leaves the real side alone (said on
/// stderr).
pub fn schedule_spans(
    analysis: &Analysis,
    set: &TaskSet,
    jobs_seen: &[JobRecord],
    report: &RunReport,
    on_miss: MissRule,
    phases: &[rtlab_model::phase::Phase],
) -> Vec<ScheduleSpan> {
    let window = schedule_window(report.ended_ns, report.first_miss_ns);
    let origin = report.start_monotonic_ns;
    let explained = jobs::windows(jobs_seen, origin, Nanos::from_ns(report.ended_ns));
    let misses: Vec<MissMark> = explained
        .iter()
        .zip(&analysis.jobs)
        .filter(|(j, _)| j.missed)
        .map(|(j, k)| MissMark {
            task: j.window.task,
            deadline: j.window.deadline,
            cause: k.main_cause(),
        })
        .collect();
    let mut spans = real_spans(
        &analysis.schedule,
        &analysis.set,
        &analysis.irq_names,
        &misses,
        origin,
        window,
    );
    // The model of the Linux policy, or the scheduler the dispatcher ran
    // (with its tick).
    let dispatched = report.dispatcher.as_ref().and_then(|d| {
        Some((
            d.scheduler.parse::<SchedulerSpec>().ok()?,
            report.tick_ns.map(Nanos::from_ns),
        ))
    });
    let (spec, tick) = match (dispatched, report.scheduler) {
        (Some(d), _) => d,
        (None, Some(model)) => (SchedulerSpec::from(model), None),
        (None, None) => return spans,
    };
    let cpus = report
        .cpus
        .clone()
        .unwrap_or_else(|| report.cpu.into_iter().collect());
    let mut config = SimConfig::new(Nanos::from_ns(window.1.max(1)));
    config.on_miss = on_miss;
    config.tick = tick;
    config.phases = phases
        .iter()
        .filter(|p| p.start.as_ns() < window.1)
        .cloned()
        .collect();
    match simulated_spans(set, &spec, &config, window, &cpus) {
        Ok(sim) => spans.extend(sim),
        Err(e) => say(&format!(
            "note: the saved schedule has no simulated side: the simulator refuses {spec}: {e}"
        )),
    }
    spans
}
