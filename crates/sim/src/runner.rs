//! The simulator as a [`Runner`]: what every experiment (the Hartstone
//! series, the EDF-versus-FPS study, the simulated breakdown search) runs
//! its simulated sets through.

use std::cell::RefCell;
use std::rc::Rc;

use rtlab_model::overheads::Overheads;
use rtlab_model::results::{EachJob, JobRecord};
use rtlab_model::runner::{earliest_miss, RunCounts, RunSpec, Runner};
use rtlab_model::{Nanos, TaskSet};

use crate::config::{MissRule, SimConfig};
use crate::error::SimError;
use crate::scheduler::SchedulerSpec;

/// Runs sets in rtlab's simulator: no overheads, tickless, every job
/// executes exactly its WCET (`SimConfig::new`'s defaults), overload
/// phases as the spec gives them, a late job handled by `on_miss`, the
/// costs of `overheads` when given.
///
/// Counts per task (phase tasks after the set's own): `released`, `PR` and
/// `DM` as the simulator's report gives them (a miss is a late completion,
/// or a job unfinished at the end whose deadline the run reached), and
/// `RC` = the jobs whose completion time is at or before their absolute
/// deadline, counted from the simulator's job records: a job unfinished at
/// the end is neither RC nor DM unless its deadline passed.
#[derive(Clone, Debug)]
pub struct SimRunner {
    /// The deadline-miss rule: `continue` (the study: a late job runs on
    /// and delays its task's next job) or `skip` (Hartstone's count).
    pub on_miss: MissRule,
    /// A simulator scheduler that replaces the spec's
    /// ([`RunSpec::scheduler`]): for experiments that compare schedulers
    /// with no Linux counterpart (`ipi`, `multiburst`, `rr:2ms`).
    pub scheduler: Option<SchedulerSpec>,
    /// The platform's costs charged to every run (the simulated breakdown:
    /// the overheads file the analysis uses); `None`: no overheads.
    pub overheads: Option<Overheads>,
}

impl SimRunner {
    /// The spec's scheduler, a late job running on (`--on-miss continue`).
    pub fn new() -> SimRunner {
        SimRunner {
            on_miss: MissRule::Continue,
            scheduler: None,
            overheads: None,
        }
    }

    /// Runs `scheduler` whatever the spec says.
    pub fn pinned(scheduler: SchedulerSpec, on_miss: MissRule) -> SimRunner {
        SimRunner {
            on_miss,
            scheduler: Some(scheduler),
            overheads: None,
        }
    }
}

impl Default for SimRunner {
    fn default() -> SimRunner {
        SimRunner::new()
    }
}

impl Runner for SimRunner {
    type Error = SimError;

    fn run(&mut self, set: &TaskSet, spec: &RunSpec) -> Result<RunCounts, SimError> {
        let scheduler = self
            .scheduler
            .clone()
            .unwrap_or_else(|| SchedulerSpec::from(spec.scheduler));
        let mut config = SimConfig::new(spec.duration);
        config.on_miss = self.on_miss;
        config.phases = spec.phases.clone();
        config.overheads = self.overheads.clone();
        let on_time: Rc<RefCell<Vec<u64>>> = Rc::default();
        let missed: Rc<RefCell<Vec<Nanos>>> = Rc::default();
        let sink = {
            let on_time = Rc::clone(&on_time);
            let missed = Rc::clone(&missed);
            let duration = spec.duration;
            move |job: &JobRecord| {
                if RunCounts::is_miss(job, duration) {
                    missed.borrow_mut().push(job.deadline);
                }
                if job.finish.is_some_and(|f| f <= job.deadline) {
                    let mut counts = on_time.borrow_mut();
                    if counts.len() <= job.task {
                        counts.resize(job.task + 1, 0);
                    }
                    counts[job.task] += 1;
                }
            }
        };
        let report = crate::run(set, &scheduler, &config, Some(Box::new(EachJob(sink))))?.report;
        let mut missed = missed.take();
        missed.sort();
        let on_time = on_time.take();
        Ok(RunCounts {
            tasks: RunCounts::tasks_of(&report.tasks, &on_time),
            missed_deadlines: Some(missed),
            first_miss: earliest_miss(&report.tasks),
            context_switches: report.context_switches,
            context_switches_per_s: report.context_switches_per_s,
            duration_ns: report.duration_ns,
            interrupted: false,
            kernel_trace: None,
            disturbance: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::policy::{ModelScheduler, PriorityAssignment};
    use rtlab_model::runner::TaskCounts;
    use rtlab_model::Task;

    fn counts(name: &str, released: u64, rc: u64, dm: u64, pr: u64) -> TaskCounts {
        TaskCounts {
            name: name.into(),
            released,
            regular_completions: rc,
            deadline_misses: dm,
            preemptions: pr,
        }
    }

    fn spec(scheduler: ModelScheduler, duration: Nanos) -> RunSpec {
        RunSpec {
            scheduler,
            duration,
            phases: Vec::new(),
        }
    }

    /// a = (T 5, C 2), b = (T 7, C 4), U = 0.971, 30 ms: releases of a at
    /// 0, 5, ..., 25 (6), of b at 0, 7, 14, 21, 28 (5).
    ///
    /// DM (a first): a 0-2, b 2-5, a 5-7 (b preempted), b0 runs 7-8 and
    /// finishes after its deadline 7 (DM), b1 8-10, a 10-12 (PR), b1 12-14
    /// (done at its deadline 14: RC), b2 14-15, a 15-17 (PR), b2 17-20, a
    /// 20-22, b3 22-25, a 25-27 (PR), b3 27-28, b4 28-30 unfinished at the
    /// end (deadline 35 not reached: neither RC nor DM). So a: 6 RC; b: 3 RC,
    /// 1 DM, 4 PR.
    ///
    /// EDF: a 0-2, b0 2-6 (d 7 before a1's 10), a1 6-8, b1 8-12 (d 14 before
    /// a2's 15), a2 12-14, b2 14-15, a3 (d 20 < 21) preempts it 15-17, b2
    /// 17-20, a4 20-22, b3 22-26 (d 28 < 30), a5 26-28, b4 28-30 unfinished.
    /// So a: 6 RC; b: 4 RC, 0 DM, 1 PR.
    #[test]
    fn counts_match_a_hand_computed_schedule() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "pair",
            vec![Task::new("a", ms(5), ms(2)), Task::new("b", ms(7), ms(4))],
        );
        let dm = PriorityAssignment::DeadlineMonotonic;
        let mut sim = SimRunner::new();
        let fps = sim
            .run(&set, &spec(ModelScheduler::FixedPriority(dm), ms(30)))
            .unwrap();
        assert_eq!(
            fps.tasks,
            vec![counts("a", 6, 6, 0, 0), counts("b", 5, 3, 1, 4)]
        );
        // b0's deadline 7 is the only miss.
        assert_eq!(fps.missed_deadlines, Some(vec![ms(7)]));
        assert_eq!(fps.first_miss, Some(("b".to_string(), 7_000_000)));
        let edf = sim.run(&set, &spec(ModelScheduler::Edf, ms(30))).unwrap();
        assert_eq!(
            edf.tasks,
            vec![counts("a", 6, 6, 0, 0), counts("b", 5, 4, 0, 1)]
        );
        assert_eq!(edf.totals(), counts("total", 11, 10, 0, 1));
        assert_eq!(fps.deadline_misses(), 1);
        assert_eq!((edf.first_miss, edf.duration_ns), (None, 30_000_000));
        // The hybrid runs as EDF below 100 % load.
        let hybrid = sim
            .run(&set, &spec(ModelScheduler::Hybrid(dm), ms(30)))
            .unwrap();
        assert_eq!(hybrid.totals().deadline_misses, 0);
        // A pinned scheduler replaces the spec's.
        let pinned = SimRunner::pinned(SchedulerSpec::Fp(dm), MissRule::Continue)
            .run(&set, &spec(ModelScheduler::Edf, ms(30)))
            .unwrap();
        assert_eq!(pinned.tasks, fps.tasks);
    }

    #[test]
    fn an_invalid_set_is_an_error_not_a_panic() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new("bad", vec![Task::new("a", ms(5), ms(6))]);
        assert!(SimRunner::new()
            .run(&set, &spec(ModelScheduler::Edf, ms(30)))
            .is_err());
    }
}
