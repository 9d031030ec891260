//! A [`StudyRunner`] on real threads: the study's runs through
//! `rtlab-rt`'s executor, pinned to one CPU. EDF is SCHED_DEADLINE (runtime
//! C plus the executor's margin, deadline D, period T), FPS is SCHED_FIFO
//! at deadline-monotonic priorities. Linux has no hybrid. Overload phases,
//! transient or permanent, are the executor's phases, read as the
//! simulator reads them (`rtlab_model::phase::PhasePlan`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rtlab_host::interrupt::pause;
use rtlab_model::policy::RunPolicy;
use rtlab_model::{Nanos, TaskSet};
use rtlab_rt::executor::{self, JobRecord, JobSink, KernelTrace, RunConfig};
use serde::Serialize;

use crate::runner::{RunCounts, RunSpec, StudyRunner, StudyScheduler, TaskCounts};
use crate::utilization::RunRefusal;

/// Runs sets on real threads through the executor: EDF as SCHED_DEADLINE
/// (runtime C plus the executor's margin, deadline D, period T), FPS as
/// SCHED_FIFO at deadline-monotonic priorities; pinned to one CPU; a late
/// job runs on (continue). No hybrid; phases as the executor runs them.
pub struct RealRunner {
    cpu: usize,
    no_rt_throttling: bool,
    cooldown: Nanos,
    flag: &'static AtomicBool,
    progress: fn(&str),
    first: bool,
    kernel_trace: Option<KernelTrace>,
    traced: Vec<KernelTraceOfRun>,
}

impl RealRunner {
    /// Runs pinned to `cpu`, lifting RT throttling and SCHED_DEADLINE
    /// admission for each run when `no_rt_throttling`, resting `cooldown`
    /// between runs, stopping when `flag` is raised (the interrupt flag);
    /// `progress` is told each run's outcome in one line.
    pub fn new(
        cpu: usize,
        no_rt_throttling: bool,
        cooldown: Nanos,
        flag: &'static AtomicBool,
        progress: fn(&str),
    ) -> RealRunner {
        RealRunner {
            cpu,
            no_rt_throttling,
            cooldown,
            flag,
            progress,
            first: true,
            kernel_trace: None,
            traced: Vec::new(),
        }
    }

    /// Records the kernel's schedule of each run (`--kernel-trace`).
    pub fn with_kernel_trace(self, request: Option<KernelTrace>) -> RealRunner {
        RealRunner {
            kernel_trace: request,
            ..self
        }
    }

    /// The traced runs so far, in run order (empty without a trace).
    pub fn take_traced(&mut self) -> Vec<KernelTraceOfRun> {
        std::mem::take(&mut self.traced)
    }
}

/// One traced real run of a study (`--real --kernel-trace`): which set,
/// under what, and the kernel's account of it (events, losses, misses by
/// cause: [`rtlab_ktrace::TraceSummary`] as JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelTraceOfRun {
    /// The set's name.
    pub set: String,
    /// Its total utilization.
    pub utilization: f64,
    /// The scheduler or method it ran under.
    pub scheduler: String,
    /// Its deadline misses on real threads.
    pub misses: u64,
    /// The summary.
    pub kernel_trace: serde_json::Value,
}

/// Why a real run was not made.
#[derive(Debug)]
pub enum RealError {
    /// SCHED_DEADLINE admission refused the set (its bandwidth is above
    /// what the kernel admits: 0.90 of a CPU on Linux 6.12+).
    Refused(String),
    /// Ctrl-C.
    Interrupted,
    /// Anything else: fatal.
    Failed(String),
}

impl std::fmt::Display for RealError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RealError::Refused(why) => write!(f, "refused: {why}"),
            RealError::Interrupted => f.write_str("interrupted"),
            RealError::Failed(why) => f.write_str(why),
        }
    }
}

impl RunRefusal for RealError {
    fn refusal(&self) -> Option<String> {
        match self {
            RealError::Refused(_) | RealError::Interrupted => Some(self.to_string()),
            RealError::Failed(_) => None,
        }
    }
}

/// Counts, per task, the jobs that completed by their deadline, and keeps
/// the deadlines of the missed ones (the executor's writer thread calls
/// it, off the real-time path).
struct OnTime {
    on_time: Arc<Mutex<Vec<u64>>>,
    missed: Arc<Mutex<Vec<Nanos>>>,
}

impl JobSink for OnTime {
    fn job(&mut self, job: &JobRecord, ended: Nanos) -> std::io::Result<()> {
        if job.finish.is_some_and(|f| f <= job.deadline) {
            let mut counts = self.on_time.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(c) = counts.get_mut(job.task) {
                *c += 1;
            }
        } else if RunCounts::is_miss(job, ended) {
            self.missed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(job.deadline);
        }
        Ok(())
    }
}

impl StudyRunner for RealRunner {
    type Error = RealError;

    /// No hybrid; phases of any kind.
    fn supports(&self, scheduler: StudyScheduler, _spec: &RunSpec) -> bool {
        scheduler != StudyScheduler::Hybrid
    }

    fn run(
        &mut self,
        set: &TaskSet,
        scheduler: StudyScheduler,
        spec: &RunSpec,
    ) -> Result<RunCounts, RealError> {
        if !self.supports(scheduler, spec) {
            return Err(RealError::Failed(format!(
                "real threads cannot run {}: Linux has no hybrid",
                scheduler.name()
            )));
        }
        if !std::mem::take(&mut self.first) {
            pause(self.cooldown, self.flag);
        }
        if self.flag.load(Ordering::Relaxed) {
            return Err(RealError::Interrupted);
        }
        let policy = match scheduler {
            StudyScheduler::Edf => RunPolicy::Edf,
            _ => RunPolicy::DeadlineMonotonic,
        };
        let mut cfg = RunConfig::new(spec.duration, policy);
        cfg.cpu = Some(self.cpu);
        cfg.no_rt_throttling = self.no_rt_throttling;
        cfg.phases = spec.phases.clone();
        cfg.kernel_trace = self.kernel_trace.clone();
        let on_time = Arc::new(Mutex::new(vec![0u64; set.tasks.len()]));
        let missed = Arc::new(Mutex::new(Vec::new()));
        let sinks: Vec<Box<dyn JobSink>> = vec![Box::new(OnTime {
            on_time: Arc::clone(&on_time),
            missed: Arc::clone(&missed),
        })];
        let report = match executor::run_recording(set, &cfg, self.flag, sinks) {
            Ok((report, _)) => report,
            Err(e) if e.is_admission_refusal() => {
                (self.progress)(&format!(
                    "{} at U {:.1}% under {}: refused by SCHED_DEADLINE admission",
                    set.name,
                    set.utilization() * 100.0,
                    scheduler.name()
                ));
                return Err(RealError::Refused(e.to_string()));
            }
            Err(e) => return Err(RealError::Failed(e.to_string())),
        };
        if report.interrupted {
            return Err(RealError::Interrupted);
        }
        if !report.lost_tasks.is_empty() {
            return Err(RealError::Failed(format!(
                "the threads of {} did not report back in time",
                report.lost_tasks.join(", ")
            )));
        }
        if report.jobs_dropped > 0 {
            return Err(RealError::Failed(format!(
                "{} job records were dropped, so the regular completions cannot be counted",
                report.jobs_dropped
            )));
        }
        let traced = report.kernel_trace.as_ref().map(|k| KernelTraceOfRun {
            set: set.name.clone(),
            utilization: set.utilization(),
            scheduler: scheduler.name().to_string(),
            misses: report.deadline_misses,
            kernel_trace: k.clone(),
        });
        (self.progress)(&format!(
            "{} at U {:.1}% under {}: {} misses of {} jobs",
            set.name,
            set.utilization() * 100.0,
            scheduler.name(),
            report.deadline_misses,
            report.released
        ));
        self.traced.extend(traced);
        let on_time = on_time.lock().unwrap_or_else(PoisonError::into_inner);
        let tasks = report
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| TaskCounts {
                name: t.metrics.name.clone(),
                released: t.metrics.released,
                regular_completions: on_time.get(i).copied().unwrap_or(0),
                deadline_misses: t.metrics.misses,
                preemptions: t.metrics.preemptions,
            })
            .collect();
        let mut missed =
            std::mem::take(&mut *missed.lock().unwrap_or_else(PoisonError::into_inner));
        missed.sort();
        Ok(RunCounts {
            tasks,
            missed_deadlines: Some(missed),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    static NEVER: AtomicBool = AtomicBool::new(false);

    /// Transient and permanent overloads are both phases the executor runs;
    /// only the hybrid has no Linux counterpart.
    #[test]
    fn real_threads_run_every_profile_but_not_the_hybrid() {
        let runner = RealRunner::new(1, true, Nanos::ZERO, &NEVER, |_| {});
        let ms = Nanos::from_ms;
        for profile in crate::overload::Profile::ALL {
            let spec = RunSpec {
                duration: ms(300),
                phases: crate::overload::profile::phases(
                    profile,
                    1_200_000,
                    (ms(100), ms(200)),
                    ms(300),
                ),
            };
            assert!(runner.supports(StudyScheduler::Edf, &spec));
            assert!(runner.supports(StudyScheduler::Fps, &spec));
            assert!(!runner.supports(StudyScheduler::Hybrid, &spec));
        }
    }
}
