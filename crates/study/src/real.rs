//! A [`StudyRunner`] on real threads: the study's runs through
//! `rtlab-rt`'s executor, pinned to one CPU. EDF is SCHED_DEADLINE (runtime
//! C plus the executor's margin, deadline D, period T), FPS is SCHED_FIFO
//! at deadline-monotonic priorities. Linux has no hybrid and a set cannot
//! change in the middle of a run, so of the overload phases only one that
//! covers the whole run (a permanent overload) is run: as the set with
//! every C scaled exactly as the simulator scales it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rtlab_host::interrupt::pause;
use rtlab_host::HostError;
use rtlab_model::{Nanos, TaskSet};
use rtlab_rt::executor::{self, JobRecord, JobSink, RunConfig, RunPolicy};
use rtlab_rt::RtError;
use rtlab_sim::Scale;

use crate::runner::{RunCounts, RunSpec, StudyRunner, StudyScheduler, TaskCounts};
use crate::utilization::RunRefusal;

/// Runs sets on real threads through the executor: EDF as SCHED_DEADLINE
/// (runtime C plus the executor's margin, deadline D, period T), FPS as
/// SCHED_FIFO at deadline-monotonic priorities; pinned to one CPU; a late
/// job runs on (continue). No hybrid; of the overload phases only one
/// that covers the whole run (see [`whole_run_scale`]).
pub struct RealRunner {
    cpu: usize,
    no_rt_throttling: bool,
    cooldown: Nanos,
    flag: &'static AtomicBool,
    progress: fn(&str),
    first: bool,
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
        }
    }
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

/// Counts, per task, the jobs that completed by their deadline (the
/// executor's writer thread calls it, off the real-time path).
struct OnTime(Arc<Mutex<Vec<u64>>>);

impl JobSink for OnTime {
    fn job(&mut self, job: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        if job.finish.is_some_and(|f| f <= job.deadline) {
            let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(c) = counts.get_mut(job.task) {
                *c += 1;
            }
        }
        Ok(())
    }
}

impl StudyRunner for RealRunner {
    type Error = RealError;

    /// No hybrid; no phases but one that covers the whole run (a permanent
    /// overload), which is the set with every C scaled as the simulator
    /// scales it.
    fn supports(&self, scheduler: StudyScheduler, spec: &RunSpec) -> bool {
        scheduler != StudyScheduler::Hybrid && whole_run_scale(spec).is_some()
    }

    fn run(
        &mut self,
        set: &TaskSet,
        scheduler: StudyScheduler,
        spec: &RunSpec,
    ) -> Result<RunCounts, RealError> {
        if !self.supports(scheduler, spec) {
            return Err(RealError::Failed(format!(
                "real threads cannot run {} with overload phases or the hybrid",
                scheduler.name()
            )));
        }
        let scaled;
        let set = match whole_run_scale(spec) {
            Some(Some(scale)) => {
                scaled = scale_like_the_simulator(set, scale);
                &scaled
            }
            _ => set,
        };
        let spec = &RunSpec {
            duration: spec.duration,
            phases: Vec::new(),
        };
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
        let on_time = Arc::new(Mutex::new(vec![0u64; set.tasks.len()]));
        let sinks: Vec<Box<dyn JobSink>> = vec![Box::new(OnTime(Arc::clone(&on_time)))];
        let report = match executor::run_recording(set, &cfg, self.flag, sinks) {
            Ok((report, _)) => report,
            Err(
                e @ (RtError::Host(HostError::DeadlineAdmission { .. })
                | RtError::DeadlineOverLimit { .. }),
            ) => {
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
        (self.progress)(&format!(
            "{} at U {:.1}% under {}: {} misses of {} jobs",
            set.name,
            set.utilization() * 100.0,
            scheduler.name(),
            report.deadline_misses,
            report.released
        ));
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
        Ok(RunCounts { tasks })
    }
}

/// `Some(None)`: no phase; `Some(Some(scale))`: one phase over the whole
/// run that only scales execution times; `None`: anything else (real
/// threads cannot change a set in the middle of a run).
pub fn whole_run_scale(spec: &RunSpec) -> Option<Option<Scale>> {
    match spec.phases.as_slice() {
        [] => Some(None),
        [p] if p.start == Nanos::ZERO
            && p.end >= spec.duration
            && p.tasks.is_empty()
            && p.suspended.is_empty() =>
        {
            Some(Some(p.scale))
        }
        _ => None,
    }
}

/// `set` with every C scaled as the simulator scales a job in a phase:
/// `ceil(C * num / den)`, where a target utilization `L` is `num = L` over
/// `den` = the set's utilization (both in ppm).
pub fn scale_like_the_simulator(set: &TaskSet, scale: Scale) -> TaskSet {
    let (num, den) = match scale {
        Scale::Factor { num, den } => (num, den.max(1)),
        Scale::UtilizationPpm(ppm) => (ppm, (set.utilization() * 1e6).round().max(1.0) as u64),
    };
    let mut out = set.clone();
    for t in &mut out.tasks {
        let c = (u128::from(t.wcet.as_ns()) * u128::from(num)).div_ceil(u128::from(den));
        t.wcet = Nanos::from_ns(u64::try_from(c).unwrap_or(u64::MAX));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overload::{self, Profile};
    use crate::runner::SimRunner;

    /// A real permanent overload runs the set scaled as the simulator
    /// scales jobs in a whole-run phase: simulating both gives the same
    /// counts, job for job.
    #[test]
    fn a_whole_run_phase_is_the_scaled_set() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "pair",
            vec![
                rtlab_model::Task::new("a", ms(10), ms(3)),
                rtlab_model::Task::new("b", ms(15), ms(4)),
            ],
        );
        let duration = ms(300);
        for level in [900_000, 1_200_000, 1_500_000] {
            let phases = overload::profile::phases(
                Profile::Permanent,
                level,
                (Nanos::ZERO, Nanos::ZERO),
                duration,
            );
            let spec = RunSpec { duration, phases };
            let Some(Some(scale)) = whole_run_scale(&spec) else {
                panic!("a permanent profile is one whole-run phase");
            };
            let scaled = scale_like_the_simulator(&set, scale);
            for scheduler in [StudyScheduler::Edf, StudyScheduler::Fps] {
                let phased = SimRunner.run(&set, scheduler, &spec).unwrap();
                let plain = SimRunner
                    .run(
                        &scaled,
                        scheduler,
                        &RunSpec {
                            duration,
                            phases: Vec::new(),
                        },
                    )
                    .unwrap();
                assert_eq!(phased, plain, "{level} {scheduler:?}");
            }
        }
        // A burst in the middle of the run is not something real threads can do.
        let burst = RunSpec {
            duration,
            phases: overload::profile::phases(
                Profile::Transient,
                1_200_000,
                (ms(100), ms(200)),
                duration,
            ),
        };
        assert_eq!(whole_run_scale(&burst), None);
    }
}
