//! One vocabulary for "which scheduler", shared by the analysis, the
//! simulator and the real-thread executor. Each idea has one type here:
//!
//! | type | what it names | who chooses it |
//! | --- | --- | --- |
//! | [`PriorityAssignment`] | how fixed priorities are chosen: rate monotonic (Liu & Layland 1973), deadline monotonic (Leung & Whitehead 1982), the file's own priorities, Audsley's optimal assignment (OPA) | every fixed-priority scheduler below |
//! | [`AnalysedPolicy`] | a uniprocessor policy the analysis tests: fixed priorities under an assignment, or EDF | `analyze --policy`, `sweep` |
//! | [`RunPolicy`] | how the task threads of a real run are scheduled: `other`, `fifo-order`, `rm`, `dm`, `given`, `rr`, `edf` | `run --policy`, `hartstone`, `breakdown` |
//! | [`ModelScheduler`] | the simulator scheduler that models one of the above, on one CPU or several (`linux-dl`, `pedf`, `gfp:dm`, ...), as a type rather than a `--scheduler` string | `compare`, `run --json`'s `scheduler`, `hartstone`, `breakdown`, the global-vs-partitioned study |
//!
//! [`PriorityAssignment::levels`] is the one place the RM/DM orders and
//! their tie rules are written.
//!
//! Conversions, each written once: `AnalysedPolicy -> ModelScheduler`
//! (`From`), `RunPolicy -> ModelScheduler` ([`RunPolicy::model_scheduler`],
//! which needs the kernel's SCHED_RR quantum; on several CPUs
//! `rtlab_rt::executor::Placement::model_scheduler`, which needs how the
//! CPUs are shared), `RunPolicy -> PriorityAssignment`
//! ([`RunPolicy::priority_assignment`]), and in the simulator
//! `ModelScheduler -> SchedulerSpec` (`From`). None goes through a string.
//!
//! Two other types live elsewhere on purpose:
//!
//! * `rtlab_sim::SchedulerSpec` is the simulator's parameterised registry
//!   (every `--scheduler`, multiprocessor ones included, with their
//!   parameters and parsing) and builds the engine's schedulers
//!   (`SchedulerSpec::build`), so it stays in `sim`;
//! * `rtlab_host::policy::Policy` is one thread's kernel attributes for
//!   `sched_setattr` (SCHED_FIFO priority, SCHED_DEADLINE runtime, ...);
//!   `rtlab_rt::executor::thread_policies` computes one per task from a
//!   [`RunPolicy`], since it needs the host.
//!
//! [`crate::simso::SimsoScheduler`] names a scheduler both rtlab and SimSo
//! have, in the SimSo file format's terms (its class names); the simulator
//! converts it `From` into `SchedulerSpec` as well.
//!
//! Levels follow the SCHED_FIFO convention: a **larger number is more
//! urgent**. RM and DM give distinct levels `n` (most urgent) down to `1`;
//! ties in the ordering key are broken by the other parameter (deadline for
//! RM, period for DM), then by declaration order (earlier declared is more
//! urgent), so an assignment is deterministic.

use std::fmt;
use std::str::FromStr;

use crate::{Nanos, Task};

/// How fixed priorities are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PriorityAssignment {
    /// Rate monotonic: shorter period, more urgent.
    RateMonotonic,
    /// Deadline monotonic: shorter relative deadline, more urgent.
    DeadlineMonotonic,
    /// The `priority` written for every task in the task set.
    Given,
    /// Audsley's optimal priority assignment; it needs a schedulability
    /// test, so it is computed by `rtlab_analysis::audsley::assign`.
    Audsley,
}

/// A task without the `priority` that [`PriorityAssignment::Given`] needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("task `{task}` has no priority (add `priority = N`)")]
pub struct MissingPriority {
    /// The task's name.
    pub task: String,
}

impl PriorityAssignment {
    /// The stable short name (`rm`, `dm`, `given`, `opa`).
    pub const fn name(self) -> &'static str {
        match self {
            PriorityAssignment::RateMonotonic => "rm",
            PriorityAssignment::DeadlineMonotonic => "dm",
            PriorityAssignment::Given => "given",
            PriorityAssignment::Audsley => "opa",
        }
    }

    /// One level per task, in declaration order (larger is more urgent):
    /// RM orders by (period, deadline, index), DM by (deadline, period,
    /// index), giving levels n..1; `Given` copies the tasks' priorities.
    /// `Audsley` starts from (and here returns) the DM order: the search
    /// itself belongs to the analysis.
    pub fn levels(self, tasks: &[Task]) -> Result<Vec<u32>, MissingPriority> {
        let key = |i: usize| match self {
            PriorityAssignment::RateMonotonic => (tasks[i].period, tasks[i].deadline),
            _ => (tasks[i].deadline, tasks[i].period),
        };
        if self == PriorityAssignment::Given {
            return tasks
                .iter()
                .map(|t| {
                    t.priority.ok_or_else(|| MissingPriority {
                        task: t.name.clone(),
                    })
                })
                .collect();
        }
        let mut order: Vec<usize> = (0..tasks.len()).collect();
        order.sort_by_key(|&i| (key(i), i));
        Ok(levels_from_order(&order))
    }
}

/// Distinct levels `n..1` following `order` (task indices, most urgent first).
pub fn levels_from_order(order: &[usize]) -> Vec<u32> {
    let n = order.len();
    let mut levels = vec![0; n];
    for (rank, &index) in order.iter().enumerate() {
        levels[index] = (n - rank) as u32;
    }
    levels
}

impl fmt::Display for PriorityAssignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PriorityAssignment {
    type Err = String;

    /// `rm`, `dm`, `given` or `opa`; the error lists them.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rm" => Ok(PriorityAssignment::RateMonotonic),
            "dm" => Ok(PriorityAssignment::DeadlineMonotonic),
            "given" => Ok(PriorityAssignment::Given),
            "opa" => Ok(PriorityAssignment::Audsley),
            _ => Err(format!(
                "unknown priority assignment `{s}` (rm, dm, given, opa)"
            )),
        }
    }
}

/// A scheduler of the simulator that models a real-thread policy, on one
/// CPU or (the last five) on several. Its display is the simulator's
/// scheduler spec (`fp:rm`, `edf`, `fifo`, `rr:100ms:linux`, `linux-dl`,
/// `pfp:dm`, ...), which the reports print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelScheduler {
    /// Preemptive fixed priority under an assignment.
    FixedPriority(PriorityAssignment),
    /// Preemptive EDF.
    Edf,
    /// Non-preemptive, release order (one SCHED_FIFO level).
    Fifo,
    /// SCHED_RR with this timeslice, under the kernel's rule: a thread's
    /// slice is refilled only when it runs out, not when the thread sleeps
    /// (the simulator's `rr:Q:linux`).
    RoundRobin(Nanos),
    /// Global EDF as SCHED_DEADLINE runs it on one root domain: a running
    /// job keeps its CPU on a deadline tie (`linux-dl`).
    LinuxDl,
    /// Partitioned EDF: one root domain per CPU (`pedf`).
    PartitionedEdf,
    /// Clustered EDF: global inside each cluster (`cedf`).
    ClusteredEdf,
    /// Global fixed priority under an assignment: SCHED_FIFO floating over
    /// the CPUs (`gfp:ORDER`).
    GlobalFixedPriority(PriorityAssignment),
    /// Partitioned fixed priority under an assignment: SCHED_FIFO pinned per
    /// CPU (`pfp:ORDER`).
    PartitionedFixedPriority(PriorityAssignment),
    /// Paper 001's hybrid: EDF below 100 % load, fixed priorities under
    /// this assignment above (the simulator's `hybrid:dm`; no Linux policy
    /// does this).
    Hybrid(PriorityAssignment),
}

impl fmt::Display for ModelScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelScheduler::FixedPriority(a) => write!(f, "fp:{a}"),
            ModelScheduler::Edf => f.write_str("edf"),
            ModelScheduler::Fifo => f.write_str("fifo"),
            ModelScheduler::RoundRobin(q) => write!(f, "rr:{q}:linux"),
            ModelScheduler::LinuxDl => f.write_str("linux-dl"),
            ModelScheduler::PartitionedEdf => f.write_str("pedf"),
            ModelScheduler::ClusteredEdf => f.write_str("cedf"),
            ModelScheduler::GlobalFixedPriority(a) => write!(f, "gfp:{a}"),
            ModelScheduler::PartitionedFixedPriority(a) => write!(f, "pfp:{a}"),
            ModelScheduler::Hybrid(a) => write!(f, "hybrid:{a}"),
        }
    }
}

/// A uniprocessor scheduling policy as the analysis tests it (`rtlab
/// analyze --policy`, `rtlab sweep`): preemptive fixed priorities under an
/// assignment, or preemptive EDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnalysedPolicy {
    /// Preemptive fixed priorities, assigned by the given rule.
    Fixed(PriorityAssignment),
    /// Preemptive earliest deadline first.
    Edf,
}

impl From<AnalysedPolicy> for ModelScheduler {
    /// The simulator scheduler an analysed policy is checked against:
    /// fixed priorities under the same assignment, or EDF.
    fn from(policy: AnalysedPolicy) -> Self {
        match policy {
            AnalysedPolicy::Fixed(assignment) => Self::FixedPriority(assignment),
            AnalysedPolicy::Edf => Self::Edf,
        }
    }
}

impl AnalysedPolicy {
    /// Every policy, in report order.
    pub const ALL: [AnalysedPolicy; 5] = [
        AnalysedPolicy::Fixed(PriorityAssignment::RateMonotonic),
        AnalysedPolicy::Fixed(PriorityAssignment::DeadlineMonotonic),
        AnalysedPolicy::Fixed(PriorityAssignment::Given),
        AnalysedPolicy::Fixed(PriorityAssignment::Audsley),
        AnalysedPolicy::Edf,
    ];

    /// The stable short name (`rm`, `dm`, `given`, `opa`, `edf`).
    pub const fn name(self) -> &'static str {
        match self {
            AnalysedPolicy::Fixed(p) => p.name(),
            AnalysedPolicy::Edf => "edf",
        }
    }

    /// The policy with this short name.
    pub fn from_name(name: &str) -> Option<AnalysedPolicy> {
        AnalysedPolicy::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// The run policies' names, for messages.
pub const RUN_POLICIES: &str = "other, fifo-order, rm, dm, given, rr or edf";

/// How the task threads of a run are scheduled (`rtlab run --policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPolicy {
    /// SCHED_OTHER (CFS/EEVDF).
    Other,
    /// SCHED_FIFO at one priority: non-preemptive, release order.
    FifoOrder,
    /// SCHED_FIFO, rate-monotonic priorities.
    RateMonotonic,
    /// SCHED_FIFO, deadline-monotonic priorities.
    DeadlineMonotonic,
    /// SCHED_FIFO in the order of the file's `priority` (larger is more urgent).
    Given,
    /// SCHED_RR, all at one priority.
    RoundRobin,
    /// SCHED_DEADLINE: EDF with a constant-bandwidth server per task.
    Edf,
}

impl RunPolicy {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            RunPolicy::Other => "other",
            RunPolicy::FifoOrder => "fifo-order",
            RunPolicy::RateMonotonic => "rm",
            RunPolicy::DeadlineMonotonic => "dm",
            RunPolicy::Given => "given",
            RunPolicy::RoundRobin => "rr",
            RunPolicy::Edf => "edf",
        }
    }

    /// The fixed-priority assignment behind `rm`, `dm` and `given` (the
    /// model's vocabulary, shared with the analysis and the simulator).
    pub fn priority_assignment(self) -> Option<PriorityAssignment> {
        match self {
            RunPolicy::RateMonotonic => Some(PriorityAssignment::RateMonotonic),
            RunPolicy::DeadlineMonotonic => Some(PriorityAssignment::DeadlineMonotonic),
            RunPolicy::Given => Some(PriorityAssignment::Given),
            _ => None,
        }
    }

    /// The simulator scheduler that models this policy, or `None` for
    /// `other` (CFS has no model in the simulator). `rr_timeslice` is the
    /// kernel's SCHED_RR quantum (`rtlab_rt::executor::rr_timeslice` reads it).
    pub fn model_scheduler(self, rr_timeslice: Nanos) -> Option<ModelScheduler> {
        match self {
            RunPolicy::Other => None,
            RunPolicy::FifoOrder => Some(ModelScheduler::Fifo),
            RunPolicy::RoundRobin => Some(ModelScheduler::RoundRobin(rr_timeslice)),
            RunPolicy::Edf => Some(ModelScheduler::Edf),
            fixed => fixed
                .priority_assignment()
                .map(ModelScheduler::FixedPriority),
        }
    }

    /// True for SCHED_DEADLINE.
    pub fn is_deadline(self) -> bool {
        self == RunPolicy::Edf
    }

    /// True for the policies RT throttling applies to (FIFO and RR).
    pub fn is_fifo_or_rr(self) -> bool {
        !matches!(self, RunPolicy::Other | RunPolicy::Edf)
    }
}

impl fmt::Display for RunPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RunPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<RunPolicy, String> {
        Ok(match s {
            "other" => RunPolicy::Other,
            "fifo-order" => RunPolicy::FifoOrder,
            "rm" => RunPolicy::RateMonotonic,
            "dm" => RunPolicy::DeadlineMonotonic,
            "given" => RunPolicy::Given,
            "rr" => RunPolicy::RoundRobin,
            "edf" => RunPolicy::Edf,
            _ => return Err(format!("unknown policy `{s}` (use {RUN_POLICIES})")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    #[test]
    fn rm_and_dm_orders_break_ties_by_the_other_parameter_then_declaration() {
        let tasks = vec![
            Task::new("slow", ms(100), ms(1)).with_deadline(ms(5)),
            Task::new("fast", ms(10), ms(1)),
            Task::new("fast2", ms(10), ms(1)),
            Task::new("fast-tight", ms(10), ms(1)).with_deadline(ms(8)),
        ];
        let rm = PriorityAssignment::RateMonotonic.levels(&tasks).unwrap();
        assert_eq!(rm, vec![1, 3, 2, 4]);
        let dm = PriorityAssignment::DeadlineMonotonic
            .levels(&tasks)
            .unwrap();
        assert_eq!(dm, vec![4, 2, 1, 3]);
        assert_eq!(PriorityAssignment::Audsley.levels(&tasks).unwrap(), dm);
    }

    #[test]
    fn given_copies_the_priorities_or_names_the_task_without_one() {
        let tasks = vec![
            Task::new("a", ms(10), ms(1)).with_priority(4),
            Task::new("b", ms(10), ms(1)).with_priority(4),
        ];
        assert_eq!(
            PriorityAssignment::Given.levels(&tasks).unwrap(),
            vec![4, 4]
        );
        let missing = vec![tasks[0].clone(), Task::new("c", ms(10), ms(1))];
        let e = PriorityAssignment::Given.levels(&missing).unwrap_err();
        assert_eq!(
            e.to_string(),
            "task `c` has no priority (add `priority = N`)"
        );
    }

    #[test]
    fn names_round_trip_and_model_schedulers_print_as_simulator_specs() {
        for a in [
            PriorityAssignment::RateMonotonic,
            PriorityAssignment::DeadlineMonotonic,
            PriorityAssignment::Given,
            PriorityAssignment::Audsley,
        ] {
            assert_eq!(a.name().parse::<PriorityAssignment>(), Ok(a));
        }
        assert!("edf".parse::<PriorityAssignment>().is_err());
        let shown: Vec<String> = [
            ModelScheduler::FixedPriority(PriorityAssignment::DeadlineMonotonic),
            ModelScheduler::Edf,
            ModelScheduler::Fifo,
            ModelScheduler::RoundRobin(ms(100)),
            ModelScheduler::Hybrid(PriorityAssignment::DeadlineMonotonic),
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            shown,
            ["fp:dm", "edf", "fifo", "rr:100ms:linux", "hybrid:dm"]
        );
    }

    #[test]
    fn policy_names_round_trip_and_bad_names_are_explained() {
        for name in ["other", "fifo-order", "rm", "dm", "given", "rr", "edf"] {
            assert_eq!(name.parse::<RunPolicy>().unwrap().name(), name);
        }
        let e = "fifo".parse::<RunPolicy>().unwrap_err();
        assert!(e.contains("use other, fifo-order"), "{e}");
        assert!(!e.contains("--policy"), "{e}");
        let model = |p: RunPolicy| p.model_scheduler(ms(100)).map(|m| m.to_string());
        assert_eq!(model(RunPolicy::RoundRobin).unwrap(), "rr:100ms:linux");
        assert_eq!(model(RunPolicy::Given).unwrap(), "fp:given");
        assert_eq!(model(RunPolicy::FifoOrder).unwrap(), "fifo");
        assert_eq!(model(RunPolicy::Other), None);
    }

    #[test]
    fn each_policy_is_modelled_by_the_simulator_scheduler_of_its_name() {
        let names: Vec<String> = AnalysedPolicy::ALL
            .iter()
            .map(|&p| ModelScheduler::from(p).to_string())
            .collect();
        assert_eq!(names, ["fp:rm", "fp:dm", "fp:given", "fp:opa", "edf"]);
    }

    #[test]
    fn multiprocessor_model_schedulers_print_as_simulator_specs() {
        let shown: Vec<String> = [
            ModelScheduler::LinuxDl,
            ModelScheduler::PartitionedEdf,
            ModelScheduler::ClusteredEdf,
            ModelScheduler::GlobalFixedPriority(PriorityAssignment::RateMonotonic),
            ModelScheduler::PartitionedFixedPriority(PriorityAssignment::Given),
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(shown, ["linux-dl", "pedf", "cedf", "gfp:rm", "pfp:given"]);
    }
}
