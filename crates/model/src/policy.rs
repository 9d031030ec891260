//! One vocabulary for how tasks are scheduled, shared by the analysis, the
//! simulator and the real-thread executor:
//!
//! * [`PriorityAssignment`]: rate monotonic (Liu & Layland 1973), deadline
//!   monotonic (Leung & Whitehead 1982), the file's own priorities, and
//!   Audsley's optimal assignment (OPA); [`PriorityAssignment::levels`] is
//!   the one place the RM/DM orders and their tie rules are written;
//! * [`ModelScheduler`]: the simulator scheduler that models a real-thread
//!   policy (`rtlab compare`), as a type rather than a `--scheduler` string.
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

/// A scheduler of the simulator that models a real-thread policy. Its
/// display is the simulator's scheduler spec (`fp:rm`, `edf`, `fifo`,
/// `rr:100ms:linux`), which the reports print.
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
            ModelScheduler::Hybrid(a) => write!(f, "hybrid:{a}"),
        }
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
}
