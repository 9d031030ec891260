//! The one path every traced command takes: start a recording on the
//! run's CPUs (the reader on the others), and at the end decode it,
//! attribute the run's jobs and summarise (`run`, `compare`, `hartstone`,
//! `breakdown`, the studies' real runs through the executor; `latency`
//! without jobs).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rtlab_model::results::JobRecord;
use rtlab_model::Nanos;

use crate::causes::{SetThreads, ThreadClass};
use crate::{analyse, Analysis, Recording, TraceError, TraceSummary};

/// A kernel trace asked for (`--kernel-trace[=FILE]`).
#[derive(Debug, Clone, Default)]
pub struct KernelTrace {
    /// Where to keep the raw trace (`None`: a temporary file).
    pub keep: Option<PathBuf>,
    /// For a command that records several runs: the runs so far, shared by
    /// the clones of this request; the kept files are `FILE.1`, `FILE.2`,
    /// ... in the order the runs started.
    runs: Option<Arc<AtomicUsize>>,
}

impl KernelTrace {
    /// One run's trace, kept in `keep` when given.
    pub fn new(keep: Option<PathBuf>) -> KernelTrace {
        KernelTrace { keep, runs: None }
    }

    /// The same request for a command that records several runs: each
    /// run's kept file gets its number appended (`FILE.1`, `FILE.2`, ...).
    pub fn numbered(self) -> KernelTrace {
        KernelTrace {
            runs: Some(Arc::new(AtomicUsize::new(0))),
            ..self
        }
    }

    /// The file the next run keeps its trace in.
    fn next_file(&self) -> Option<PathBuf> {
        let keep = self.keep.as_ref()?;
        let Some(runs) = &self.runs else {
            return Some(keep.clone());
        };
        let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
        let mut name = keep.clone().into_os_string();
        name.push(format!(".{n}"));
        Some(PathBuf::from(name))
    }

    /// Starts recording `cpus` (`None`: every CPU this process may use),
    /// the reader on the allowed CPUs not traced.
    pub fn start(&self, cpus: Option<&[usize]>) -> Result<Recording, TraceError> {
        let allowed = rtlab_host::policy::allowed_cpus().unwrap_or_default();
        let traced: Vec<usize> = cpus.map_or_else(|| allowed.clone(), <[usize]>::to_vec);
        let reader: Vec<usize> = allowed
            .into_iter()
            .filter(|c| !traced.contains(c))
            .collect();
        Recording::start(&traced, &reader, self.next_file().as_deref())
    }

    /// Ends `recording` and explains `jobs` (times relative to the run's
    /// start at absolute monotonic `start_ns`; a job that did not finish
    /// ends at `ended`) of the threads `tasks` (name, thread id) of
    /// `class`, each job's own CPU time per task `own_cpu` (see
    /// [`SetThreads::own_cpu`]).
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        &self,
        recording: Recording,
        tasks: Vec<(String, Option<i32>)>,
        class: ThreadClass,
        own_cpu: Vec<Option<u64>>,
        start_ns: u64,
        ended: Nanos,
        jobs: &[JobRecord],
    ) -> Result<Traced, TraceError> {
        let (recorded, _temporary) = recording.finish();
        let kept = self
            .keep
            .is_some()
            .then(|| recorded.file.display().to_string());
        let windows = crate::jobs::windows(jobs, start_ns, ended);
        let set = SetThreads {
            tasks,
            class,
            own_cpu,
            irq_in_task_time: !rtlab_host::disturbance::irq_time_accounted(),
        };
        let analysis = analyse(recorded, set, &windows)?;
        let summary = analysis.summary(kept.as_deref());
        Ok(Traced { analysis, summary })
    }

    /// Ends a recording that has no jobs to explain (`latency`): what was
    /// recorded and lost.
    pub fn finish_without_jobs(&self, recording: Recording) -> Result<Traced, TraceError> {
        self.finish(
            recording,
            Vec::new(),
            ThreadClass::Other,
            Vec::new(),
            0,
            Nanos::ZERO,
            &[],
        )
    }
}

/// A finished, decoded trace.
#[derive(Debug, Clone)]
pub struct Traced {
    /// Every job's causes and the rebuilt schedule.
    pub analysis: Analysis,
    /// The JSON summary (`kernel_trace`).
    pub summary: TraceSummary,
}

impl Traced {
    /// One line saying what the trace lost, when it lost anything (the
    /// run's own results are complete either way).
    pub fn incomplete(&self) -> Option<String> {
        let s = &self.summary;
        let lost = s.lost_overrun + s.lost_dropped;
        if lost == 0 && s.pages_after_loss == 0 && s.pages_unwritten == 0 && !s.truncated {
            return None;
        }
        Some(format!(
            "warning: the kernel trace is incomplete: {lost} events lost in the kernel (overrun {}, dropped {}), {} pages after a loss, {} pages not written{}{}; causes in those spans are unknown, the run's own results are complete",
            s.lost_overrun,
            s.lost_dropped,
            s.pages_after_loss,
            s.pages_unwritten,
            self.analysis.recorded.write_error.as_deref().map_or(String::new(), |e| format!(" ({e})")),
            if s.truncated { ", decoding stopped at the event limit" } else { "" },
        ))
    }
}
