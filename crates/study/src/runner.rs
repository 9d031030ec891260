//! How a section runs one task set under one scheduler: the
//! [`StudyRunner`] interface, implemented by the simulator and (in the CLI)
//! by the real-thread executor.

use std::cell::RefCell;
use std::rc::Rc;

use rtlab_model::policy::PriorityAssignment;
use rtlab_model::results::JobRecord;
use rtlab_model::{Nanos, TaskSet};
use rtlab_sim::{ExecModel, OnMiss, Phase, SchedulerSpec, SimConfig, SimError, Simulator};
use serde::Serialize;

/// The schedulers paper 001 compares. FPS uses deadline-monotonic
/// priorities (rate monotonic when deadlines equal periods).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StudyScheduler {
    /// Earliest deadline first (sim `edf`; real threads: SCHED_DEADLINE).
    Edf,
    /// Fixed priorities, deadline monotonic (sim `fp:dm`; real threads:
    /// SCHED_FIFO at DM priorities).
    Fps,
    /// Paper 001's proposal: EDF below 100 % load, FPS above (sim
    /// `hybrid:dm`; no Linux policy does this).
    Hybrid,
}

impl StudyScheduler {
    /// `edf`, `fps` or `hybrid`.
    pub fn name(self) -> &'static str {
        match self {
            StudyScheduler::Edf => "edf",
            StudyScheduler::Fps => "fps",
            StudyScheduler::Hybrid => "hybrid",
        }
    }
}

/// What one run is asked to do besides the set and the scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// Length of the run (releases in `[0, duration)`).
    pub duration: Nanos,
    /// Overload phases (empty: the set as it is, throughout).
    pub phases: Vec<Phase>,
}

/// Per task, what the study counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TaskCounts {
    /// Task name.
    pub name: String,
    /// Jobs released.
    pub released: u64,
    /// Regular completions (RC): jobs that completed by their deadline.
    pub regular_completions: u64,
    /// Deadline misses (DM): late completions, aborts, and jobs unfinished
    /// at the end whose deadline had passed.
    pub deadline_misses: u64,
    /// Preemptions (PR).
    pub preemptions: u64,
}

/// The outcome of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunCounts {
    /// Per task, in declaration order.
    pub tasks: Vec<TaskCounts>,
    /// The absolute deadlines of the missed jobs (every task), sorted, when
    /// the runner records them: what a transient row's misses in the burst
    /// and recovery are read from ([`crate::overload`]).
    #[serde(skip)]
    pub missed_deadlines: Option<Vec<Nanos>>,
}

/// Runs task sets for a study section.
pub trait StudyRunner {
    /// Why a run could not be made.
    type Error: std::fmt::Display;
    /// Whether this runner can run `scheduler` with `spec` at all (real
    /// threads have no hybrid, and no overload phases); sections skip, and
    /// say so, what it cannot.
    fn supports(&self, scheduler: StudyScheduler, spec: &RunSpec) -> bool;
    /// Runs `set` under `scheduler`.
    fn run(
        &mut self,
        set: &TaskSet,
        scheduler: StudyScheduler,
        spec: &RunSpec,
    ) -> Result<RunCounts, Self::Error>;
}

impl RunCounts {
    /// The sums over tasks (named `total`).
    pub fn totals(&self) -> TaskCounts {
        let mut sum = TaskCounts {
            name: "total".into(),
            ..TaskCounts::default()
        };
        for t in &self.tasks {
            sum.add(t);
        }
        sum
    }

    /// Whether job `job` of a run of `duration` counts as a missed deadline
    /// (as the summaries count: it finished after its deadline, or is
    /// unfinished with its deadline reached by the end).
    pub fn is_miss(job: &JobRecord, duration: Nanos) -> bool {
        match job.finish {
            Some(f) => f > job.deadline,
            None => job.deadline <= duration,
        }
    }

    /// Deadline misses of all tasks.
    pub fn deadline_misses(&self) -> u64 {
        self.tasks.iter().map(|t| t.deadline_misses).sum()
    }
}

impl TaskCounts {
    /// Adds `other`'s counts to these (the name stays).
    pub fn add(&mut self, other: &TaskCounts) {
        self.released += other.released;
        self.regular_completions += other.regular_completions;
        self.deadline_misses += other.deadline_misses;
        self.preemptions += other.preemptions;
    }
}

/// The simulator's scheduler for a study scheduler: `edf`, `fp:dm` or
/// `hybrid:dm`.
pub fn sim_scheduler(scheduler: StudyScheduler) -> SchedulerSpec {
    match scheduler {
        StudyScheduler::Edf => SchedulerSpec::Edf,
        StudyScheduler::Fps => SchedulerSpec::Fp(PriorityAssignment::DeadlineMonotonic),
        StudyScheduler::Hybrid => SchedulerSpec::Hybrid(PriorityAssignment::DeadlineMonotonic),
    }
}

/// Runs sets in rtlab's simulator: no overheads, tickless, every job
/// executes exactly its WCET, a late job runs on to completion and delays
/// its task's next job (`--on-miss continue`), overload phases as given.
///
/// Counts per task (phase tasks after the set's own): `released`, `PR` and
/// `DM` as the simulator's report gives them (a miss is a late completion,
/// or a job unfinished at the end whose deadline the run reached), and
/// `RC` = the jobs whose completion time is at or before their absolute
/// deadline, counted from the simulator's job records
/// ([`Simulator::on_job`]): a job unfinished at the end is neither RC nor
/// DM unless its deadline passed.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimRunner;

impl StudyRunner for SimRunner {
    type Error = SimError;

    fn supports(&self, _scheduler: StudyScheduler, _spec: &RunSpec) -> bool {
        true
    }

    fn run(
        &mut self,
        set: &TaskSet,
        scheduler: StudyScheduler,
        spec: &RunSpec,
    ) -> Result<RunCounts, SimError> {
        let mut config = SimConfig::new(spec.duration);
        config.on_miss = OnMiss::Continue;
        config.exec = ExecModel::Wcet;
        config.phases = spec.phases.clone();
        let mut sim = Simulator::new(set, &sim_scheduler(scheduler), config)?;
        let on_time: Rc<RefCell<Vec<u64>>> = Rc::default();
        let missed: Rc<RefCell<Vec<Nanos>>> = Rc::default();
        let sink = Rc::clone(&on_time);
        let missed_sink = Rc::clone(&missed);
        let duration = spec.duration;
        sim.on_job(move |job: &JobRecord| {
            if RunCounts::is_miss(job, duration) {
                missed_sink.borrow_mut().push(job.deadline);
            }
            if job.finish.is_some_and(|f| f <= job.deadline) {
                let mut counts = sink.borrow_mut();
                if counts.len() <= job.task {
                    counts.resize(job.task + 1, 0);
                }
                counts[job.task] += 1;
            }
        });
        let report = sim.report();
        let on_time = on_time.borrow();
        let tasks = report
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| TaskCounts {
                name: t.name.clone(),
                released: t.released,
                regular_completions: on_time.get(i).copied().unwrap_or(0),
                deadline_misses: t.misses,
                preemptions: t.preemptions,
            })
            .collect();
        let mut missed = missed.take();
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
        let spec = RunSpec {
            duration: ms(30),
            phases: Vec::new(),
        };
        let fps = SimRunner.run(&set, StudyScheduler::Fps, &spec).unwrap();
        assert_eq!(
            fps.tasks,
            vec![counts("a", 6, 6, 0, 0), counts("b", 5, 3, 1, 4)]
        );
        let edf = SimRunner.run(&set, StudyScheduler::Edf, &spec).unwrap();
        assert_eq!(
            edf.tasks,
            vec![counts("a", 6, 6, 0, 0), counts("b", 5, 4, 0, 1)]
        );
        assert_eq!(edf.totals(), counts("total", 11, 10, 0, 1));
        assert_eq!(fps.deadline_misses(), 1);
        // The hybrid runs as EDF below 100 % load.
        let hybrid = SimRunner.run(&set, StudyScheduler::Hybrid, &spec).unwrap();
        assert_eq!(hybrid.totals().deadline_misses, 0);
    }

    #[test]
    fn an_invalid_set_is_an_error_not_a_panic() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new("bad", vec![Task::new("a", ms(5), ms(6))]);
        let spec = RunSpec {
            duration: ms(30),
            phases: Vec::new(),
        };
        assert!(SimRunner.run(&set, StudyScheduler::Edf, &spec).is_err());
    }
}
