//! Real threads as a [`Runner`]: what every experiment (the Hartstone
//! series, the EDF-versus-FPS study, the measured breakdown search) runs
//! its real sets through, with the executor.
//!
//! A run maps the spec's scheduler to its Linux policy: EDF is
//! SCHED_DEADLINE (runtime C plus the executor's margin, deadline D,
//! period T), fixed priorities SCHED_FIFO at the assignment's priorities,
//! FIFO one SCHED_FIFO level, round robin SCHED_RR. Linux has no hybrid.
//! Overload phases are the executor's, read as the simulator reads them
//! (`rtlab_model::phase::PhasePlan`). Context switches are the executor's:
//! voluntary plus involuntary switches of the task threads over the run
//! (`getrusage(RUSAGE_THREAD)`), and preemptions the involuntary ones
//! during jobs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rtlab_host::interrupt::pause;
use rtlab_host::HostError;
use rtlab_model::policy::{ModelScheduler, PriorityAssignment};
use rtlab_model::results::{JobRecord, JobSink};
use rtlab_model::runner::{earliest_miss, RunCounts, RunSpec, Runner};
use rtlab_model::{Nanos, TaskSet};

use crate::error::RtError;
use crate::executor::{self, RunConfig};
use rtlab_model::policy::RunPolicy;

/// Why a real run gave no result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RealRunError {
    /// The executor refused or failed.
    #[error(transparent)]
    Rt(#[from] RtError),
    /// Task threads did not report back: their jobs are missing.
    #[error("the threads of {0} did not report back in time")]
    LostThreads(String),
    /// The job records were not all written, so the regular completions
    /// cannot be counted (only with [`RealRunner::job_counts`]).
    #[error("{0} job records were dropped, so the regular completions cannot be counted")]
    DroppedRecords(u64),
    /// The scheduler has no Linux policy (the hybrid).
    #[error("real threads cannot run {0}: Linux has no counterpart")]
    Unsupported(ModelScheduler),
}

/// What [`RealRunner`] tells its observer after each run it made: the set,
/// the spec and the outcome.
pub type RunObserver<'a> =
    Box<dyn FnMut(&TaskSet, &RunSpec, &Result<RunCounts, RealRunError>) + 'a>;

/// Runs sets on real threads through the executor.
pub struct RealRunner<'a> {
    /// CPU, overrun rule, RT throttling, SCHED_DEADLINE reclaiming, kernel
    /// trace request, ...; each run sets its duration, phases and policy.
    pub config: RunConfig,
    /// A Linux policy that replaces the spec's scheduler's counterpart:
    /// for experiments that compare Linux policies, SCHED_OTHER included,
    /// which has no simulated counterpart.
    pub policy: Option<RunPolicy>,
    /// Rest between two runs (none before the first).
    pub cooldown: Nanos,
    /// Set by a stop signal: ends the current run, and the experiment.
    pub interrupt: &'a AtomicBool,
    /// Count regular completions and keep the missed deadlines from the
    /// job records (the study reads them), refusing a run whose records
    /// were not all written. Off (Hartstone, the breakdown search): no job
    /// sink at all, as those experiments ran before; the counts then have
    /// no regular completions and no missed deadlines.
    pub job_counts: bool,
    /// Told of every run made (progress lines, kernel traces).
    pub observer: Option<RunObserver<'a>>,
    ran: bool,
}

impl<'a> RealRunner<'a> {
    /// Runs with `config` (duration, phases and policy are set per run),
    /// no cooldown, the spec's scheduler, stopping when `interrupt` is
    /// raised.
    pub fn new(config: RunConfig, interrupt: &'a AtomicBool) -> RealRunner<'a> {
        RealRunner {
            config,
            policy: None,
            cooldown: Nanos::ZERO,
            interrupt,
            job_counts: false,
            observer: None,
            ran: false,
        }
    }

    /// The Linux policy a run of `spec` uses, if Linux has one.
    pub fn policy_for(&self, spec: &RunSpec) -> Option<RunPolicy> {
        self.policy.or_else(|| linux_policy(spec.scheduler))
    }

    fn run_once(&mut self, set: &TaskSet, spec: &RunSpec) -> Result<RunCounts, RealRunError> {
        let policy = self
            .policy_for(spec)
            .ok_or(RealRunError::Unsupported(spec.scheduler))?;
        if std::mem::replace(&mut self.ran, true) {
            pause(self.cooldown, self.interrupt);
        }
        if self.interrupt.load(Ordering::Relaxed) {
            return Ok(RunCounts::interrupted());
        }
        let mut config = self.config.clone();
        config.duration = spec.duration;
        config.phases = spec.phases.clone();
        config.policy = policy;
        let on_time = Arc::new(Mutex::new(vec![0u64; set.tasks.len()]));
        let missed = Arc::new(Mutex::new(Vec::new()));
        let sinks: Vec<Box<dyn JobSink + Send>> = if self.job_counts {
            vec![Box::new(OnTime {
                on_time: Arc::clone(&on_time),
                missed: Arc::clone(&missed),
            })]
        } else {
            Vec::new()
        };
        let (report, _) = executor::run_recording(set, &config, self.interrupt, sinks)?;
        if !report.interrupted && !report.lost_tasks.is_empty() {
            return Err(RealRunError::LostThreads(report.lost_tasks.join(", ")));
        }
        if !report.interrupted && self.job_counts && report.jobs_dropped > 0 {
            return Err(RealRunError::DroppedRecords(report.jobs_dropped));
        }
        let on_time = on_time.lock().unwrap_or_else(PoisonError::into_inner);
        let mut missed =
            std::mem::take(&mut *missed.lock().unwrap_or_else(PoisonError::into_inner));
        missed.sort();
        Ok(RunCounts {
            tasks: RunCounts::tasks_of(report.tasks.iter().map(|t| &t.metrics), &on_time),
            missed_deadlines: self.job_counts.then_some(missed),
            first_miss: earliest_miss(report.tasks.iter().map(|t| &t.metrics)),
            context_switches: report.context_switches,
            context_switches_per_s: report.context_switches_per_s,
            duration_ns: report.ended_ns,
            interrupted: report.interrupted,
            kernel_trace: report.kernel_trace,
            disturbance: report.disturbance,
        })
    }
}

/// The Linux policy of a simulated scheduler: EDF is SCHED_DEADLINE, fixed
/// priorities SCHED_FIFO at rate- or deadline-monotonic or given
/// priorities, FIFO one SCHED_FIFO level, round robin SCHED_RR (the kernel's
/// timeslice). `None` for the rest (the hybrid, Audsley's assignment).
pub fn linux_policy(scheduler: ModelScheduler) -> Option<RunPolicy> {
    match scheduler {
        ModelScheduler::Edf => Some(RunPolicy::Edf),
        ModelScheduler::FixedPriority(PriorityAssignment::RateMonotonic) => {
            Some(RunPolicy::RateMonotonic)
        }
        ModelScheduler::FixedPriority(PriorityAssignment::DeadlineMonotonic) => {
            Some(RunPolicy::DeadlineMonotonic)
        }
        ModelScheduler::FixedPriority(PriorityAssignment::Given) => Some(RunPolicy::Given),
        ModelScheduler::Fifo => Some(RunPolicy::FifoOrder),
        ModelScheduler::RoundRobin(_) => Some(RunPolicy::RoundRobin),
        _ => None,
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

impl Runner for RealRunner<'_> {
    type Error = RealRunError;

    fn run(&mut self, set: &TaskSet, spec: &RunSpec) -> Result<RunCounts, RealRunError> {
        let outcome = self.run_once(set, spec);
        if let Some(observe) = &mut self.observer {
            observe(set, spec, &outcome);
        }
        outcome
    }

    /// Every scheduler with a Linux policy (not the hybrid); phases of any
    /// kind.
    fn supports(&self, spec: &RunSpec) -> bool {
        self.policy_for(spec).is_some()
    }

    /// A set the platform refuses ends a series, as a miss would:
    /// SCHED_DEADLINE admission above its limit (0.90 of a CPU here: 0.95
    /// minus the fair server's 0.05; rtlab keeps RT throttling and
    /// admission on), or a parameter refused before the run (e.g. more
    /// distinct rate-monotonic priorities than SCHED_FIFO has).
    fn refusal(&self, error: &RealRunError) -> Option<String> {
        match error {
            RealRunError::Rt(e) if e.is_admission_refusal() => Some(e.to_string()),
            RealRunError::Rt(
                e @ (RtError::Invalid { .. } | RtError::Host(HostError::Invalid { .. })),
            ) => Some(e.to_string()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NEVER: AtomicBool = AtomicBool::new(false);

    fn spec(scheduler: ModelScheduler) -> RunSpec {
        RunSpec {
            scheduler,
            duration: Nanos::from_ms(300),
            phases: Vec::new(),
        }
    }

    /// Every scheduler with a Linux policy runs; the hybrid does not,
    /// unless a policy is pinned.
    #[test]
    fn real_threads_run_every_linux_policy_but_not_the_hybrid() {
        let dm = PriorityAssignment::DeadlineMonotonic;
        let mut runner =
            RealRunner::new(RunConfig::new(Nanos::from_ms(300), RunPolicy::Edf), &NEVER);
        assert!(runner.supports(&spec(ModelScheduler::Edf)));
        assert!(runner.supports(&spec(ModelScheduler::FixedPriority(dm))));
        assert!(runner.supports(&spec(ModelScheduler::RoundRobin(Nanos::from_ms(100)))));
        assert!(!runner.supports(&spec(ModelScheduler::Hybrid(dm))));
        assert_eq!(
            runner.policy_for(&spec(ModelScheduler::FixedPriority(dm))),
            Some(RunPolicy::DeadlineMonotonic)
        );
        runner.policy = Some(RunPolicy::Other);
        assert_eq!(
            runner.policy_for(&spec(ModelScheduler::Hybrid(dm))),
            Some(RunPolicy::Other)
        );
    }

    /// A model scheduler and its Linux policy map back to each other.
    #[test]
    fn linux_policies_model_back_to_their_scheduler() {
        let ts = Nanos::from_ms(100);
        for policy in [
            RunPolicy::Edf,
            RunPolicy::RateMonotonic,
            RunPolicy::DeadlineMonotonic,
            RunPolicy::Given,
            RunPolicy::FifoOrder,
            RunPolicy::RoundRobin,
        ] {
            let model = policy.model_scheduler(ts).unwrap();
            assert_eq!(linux_policy(model), Some(policy), "{policy:?}");
        }
    }
}
