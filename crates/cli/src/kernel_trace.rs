//! `--kernel-trace[=FILE]`: the flag every real-run command shares, and
//! the wiring from a run to `rtlab-ktrace` (record, decode, attribute).

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rtlab_ktrace::gantt::{real_spans, MissMark};
use rtlab_ktrace::{analyse, jobs, Analysis, Recording, SetThreads, ThreadClass};
use rtlab_model::results::schedule::schedule_window;
use rtlab_model::results::ScheduleSpan;
use rtlab_model::{Nanos, TaskSet};
use rtlab_rt::executor::{JobRecord, JobsCsv, RunPolicy, RunReport};
use rtlab_sim::schedule_spans::simulated_spans;
use rtlab_sim::{OnMiss, SchedulerSpec, SimConfig};

use crate::setup::say;

/// The kernel-trace flag (flattened into each real-run command).
#[derive(Debug, Clone, Default, Args)]
pub struct KernelTraceFlags {
    /// Record the kernel's scheduling events of the run's CPUs (a private tracefs instance;
    /// root) and explain every job's waits and misses by cause; `=FILE` keeps the raw trace.
    /// README: "Kernel trace".
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

    /// Starts recording `cpus` (`None`: every CPU this process may use),
    /// the reader on the other CPUs.
    pub fn start(&self, cpus: Option<&[usize]>) -> anyhow::Result<Option<Recording>> {
        self.start_with(cpus, &[])
    }

    /// [`Self::start`] with `extra` events besides the scheduling ones
    /// ([`Recording::start_with`]).
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
}

/// The class of the run's threads.
pub fn class_of(policy: RunPolicy) -> ThreadClass {
    if policy.is_deadline() {
        ThreadClass::Deadline
    } else if policy == RunPolicy::Other {
        ThreadClass::Other
    } else {
        ThreadClass::RealTime
    }
}

/// Ends the recording, attributes every job of `report`, puts the summary
/// in `report.kernel_trace`, and says on stderr what the trace lost.
pub fn finish(
    recording: Recording,
    flags: &KernelTraceFlags,
    set: &TaskSet,
    policy: RunPolicy,
    report: &mut RunReport,
    jobs_seen: &[JobRecord],
) -> anyhow::Result<Analysis> {
    let (recorded, _temporary) = recording.finish();
    let threads = SetThreads {
        tasks: set
            .tasks
            .iter()
            .zip(report.thread_ids.iter().chain(std::iter::repeat(&None)))
            .map(|(t, id)| (t.name.clone(), *id))
            .collect(),
        class: class_of(policy),
    };
    let ended = Nanos::from_ns(report.ended_ns);
    let windows = jobs::windows(jobs_seen, report.start_monotonic_ns, ended);
    let analysis = analyse(recorded, threads, &windows)?;
    let kept = flags.keep().map(|p| p.display().to_string());
    let summary = analysis.summary(kept.as_deref());
    let lost = summary.lost_overrun + summary.lost_dropped;
    if lost > 0 || summary.pages_after_loss > 0 || summary.pages_unwritten > 0 || summary.truncated
    {
        say(&format!(
            "warning: the kernel trace is incomplete: {lost} events lost in the kernel (overrun {}, dropped {}), {} pages after a loss, {} pages not written{}{}; causes in those spans are unknown, the run's own results are complete",
            summary.lost_overrun,
            summary.lost_dropped,
            summary.pages_after_loss,
            summary.pages_unwritten,
            analysis.recorded.write_error.as_deref().map_or(String::new(), |e| format!(" ({e})")),
            if summary.truncated { ", decoding stopped at the event limit" } else { "" },
        ));
    }
    if let Some(k) = &kept {
        crate::wrote::wrote(k, "raw kernel trace: rtlab-ktrace pages");
    }
    report.kernel_trace = Some(serde_json::to_value(&summary)?);
    Ok(analysis)
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
    let out = File::create(path).with_context(|| format!("--jobs: cannot create {path}"))?;
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
    let out = File::create(&path)
        .with_context(|| format!("--trace: cannot create {}", path.display()))?;
    rtlab_ktrace::perfetto::write(BufWriter::new(out), analysis, report.start_monotonic_ns)
        .with_context(|| format!("--trace: cannot write {}", path.display()))?;
    crate::wrote::wrote(
        &path,
        "the kernel's schedule of the run's CPUs, open in Perfetto",
    );
    Ok(())
}

/// The "misses by cause" lines of a run's text output (nothing without a
/// trace).
pub fn describe(report: &RunReport) -> String {
    let Some(k) = &report.kernel_trace else {
        return String::new();
    };
    let mut out = format!(
        "\nkernel trace: {} events, {} lost, {} preemptions and {} switches of the set's threads within jobs, host steal {}\n",
        k["events"],
        k["lost_overrun"].as_u64().unwrap_or(0) + k["lost_dropped"].as_u64().unwrap_or(0),
        k["kernel_preemptions"],
        k["kernel_switches"],
        Nanos::from_ns(k["steal_ns"].as_u64().unwrap_or(0)),
    );
    let lines = k["misses_by_cause"].as_array().cloned().unwrap_or_default();
    if lines.is_empty() {
        return out;
    }
    out.push_str(
        "misses by cause (lateness charged; misses = jobs where it is the largest share):\n",
    );
    for l in lines {
        out.push_str(&format!(
            "  {:<32} {:>6} misses  {:>12}\n",
            l["cause"].as_str().unwrap_or("?"),
            l["misses"],
            Nanos::from_ns(l["lateness_ns"].as_u64().unwrap_or(0)).to_string(),
        ));
    }
    out
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
    on_miss: OnMiss,
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
    let Some(spec) = report.scheduler.as_deref() else {
        return spans;
    };
    let cpus = report
        .cpus
        .clone()
        .unwrap_or_else(|| report.cpu.into_iter().collect());
    let mut config = SimConfig::new(Nanos::from_ns(window.1.max(1)));
    config.on_miss = on_miss;
    config.phases = phases
        .iter()
        .filter(|p| p.start.as_ns() < window.1)
        .cloned()
        .collect();
    let simulated = spec
        .parse::<SchedulerSpec>()
        .map_err(|e| e.to_string())
        .and_then(|spec| {
            simulated_spans(set, &spec, &config, window, &cpus).map_err(|e| e.to_string())
        });
    match simulated {
        Ok(sim) => spans.extend(sim),
        Err(e) => say(&format!(
            "note: the saved schedule has no simulated side: the simulator refuses {spec}: {e}"
        )),
    }
    spans
}
