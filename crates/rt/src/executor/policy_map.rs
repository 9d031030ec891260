//! From a run policy (`--policy`) to one Linux policy per task thread.
//!
//! The run policy itself ([`RunPolicy`]: its names, parsing, priority
//! assignment and simulator counterpart) is the model's vocabulary
//! (`rtlab_model::policy`); this module holds what needs the host: the
//! kernel attributes of each thread, its SCHED_FIFO priority, its
//! SCHED_DEADLINE budget and the kernel's SCHED_RR quantum.
//!
//! | run policy   | threads                                   | simulator counterpart |
//! | ------------ | ----------------------------------------- | --------------------- |
//! | `other`      | SCHED_OTHER, nice 0                       | none                  |
//! | `fifo-order` | SCHED_FIFO, all at one priority           | `fifo`                |
//! | `rm`, `dm`   | SCHED_FIFO, distinct priorities           | `fp:rm`, `fp:dm`      |
//! | `given`      | SCHED_FIFO, the file's priorities' order  | `fp:given`            |
//! | `rr`         | SCHED_RR, all at one priority             | `rr:Q`, Q = kernel RR timeslice |
//! | `edf`        | SCHED_DEADLINE (runtime, min(D,T), T)     | `edf`                 |
//!
//! `fifo-order` is paper 000's Lingua Franca-like behaviour: one priority,
//! so a job runs to completion once started (SCHED_FIFO threads at equal
//! priority do not preempt each other) and jobs start in release order, ties
//! in declaration order (see "Tie-break" in [the executor's docs](super)).
//!
//! RM and DM order tasks by the model's [`PriorityAssignment::levels`]
//! ((period, deadline, declaration index) and (deadline, period, index), the
//! tie rules of `rtlab-analysis` and the simulator, written once), and give
//! SCHED_FIFO priorities [`BASE_PRIORITY`].. upwards;
//! the run's watchdog sits above them at 99.

use rtlab_model::policy::{PriorityAssignment, RunPolicy};
use rtlab_model::{Nanos, TaskSet};

use crate::error::RtError;
use rtlab_host::policy::Policy;

/// The SCHED_FIFO/RR priority of the least urgent task.
pub const BASE_PRIORITY: u8 = 10;
/// The highest priority a task thread may get (the watchdog has 99).
pub const TOP_TASK_PRIORITY: u8 = 97;

/// The SCHED_DEADLINE budget of a task: its WCET plus a margin for what the
/// kernel charges to the thread besides the job's own work (wake-up, clock
/// reads, the record). With no explicit margin it is max(5% of C, 100 us).
/// The budget is capped at min(D, T), since the kernel needs runtime <=
/// deadline <= period.
pub fn deadline_runtime(wcet: Nanos, deadline: Nanos, margin: Option<Nanos>) -> Nanos {
    let margin =
        margin.unwrap_or_else(|| Nanos::from_ns(wcet.as_ns() / 20).max(Nanos::from_us(100)));
    wcet.saturating_add(margin).min(deadline)
}

/// One Linux policy per task, in declaration order.
///
/// Errors: `given` with a task that has no `priority`; more distinct
/// priorities than SCHED_FIFO offers between [`BASE_PRIORITY`] and
/// [`TOP_TASK_PRIORITY`].
pub fn thread_policies(
    set: &TaskSet,
    policy: RunPolicy,
    edf_margin: Option<Nanos>,
) -> Result<Vec<Policy>, RtError> {
    let tasks = &set.tasks;
    let n = tasks.len();
    let fifo_levels = |ranks: Vec<usize>| -> Result<Vec<Policy>, RtError> {
        let top = ranks.iter().copied().max().unwrap_or(0);
        if top > usize::from(TOP_TASK_PRIORITY - BASE_PRIORITY) {
            return Err(RtError::Invalid {
                what: format!("policy {policy}"),
                why: format!(
                    "{} distinct priorities do not fit in SCHED_FIFO {BASE_PRIORITY}..={TOP_TASK_PRIORITY}",
                    top + 1
                ),
            });
        }
        Ok(ranks
            .into_iter()
            .map(|r| Policy::Fifo {
                priority: BASE_PRIORITY + r as u8,
            })
            .collect())
    };
    match policy {
        RunPolicy::Other => Ok(vec![Policy::Other { nice: 0 }; n]),
        RunPolicy::FifoOrder => Ok(vec![
            Policy::Fifo {
                priority: BASE_PRIORITY
            };
            n
        ]),
        RunPolicy::RoundRobin => Ok(vec![
            Policy::RoundRobin {
                priority: BASE_PRIORITY
            };
            n
        ]),
        RunPolicy::RateMonotonic | RunPolicy::DeadlineMonotonic | RunPolicy::Given => {
            let assignment = policy
                .priority_assignment()
                .unwrap_or(PriorityAssignment::Given);
            let levels = assignment.levels(tasks).map_err(|e| RtError::Invalid {
                what: format!("policy {policy}"),
                why: e.to_string(),
            })?;
            // Equal levels (only `given` has them) share a SCHED_FIFO
            // priority; distinct ones keep their order.
            let mut distinct = levels.clone();
            distinct.sort_unstable();
            distinct.dedup();
            let ranks = levels
                .iter()
                .map(|l| distinct.binary_search(l).unwrap_or(0))
                .collect();
            fifo_levels(ranks)
        }
        RunPolicy::Edf => Ok(tasks
            .iter()
            .map(|t| {
                let deadline = t.deadline.min(t.period);
                Policy::Deadline {
                    runtime: deadline_runtime(t.wcet, deadline, edf_margin),
                    deadline,
                    period: t.period,
                }
            })
            .collect()),
    }
}

/// The kernel's SCHED_RR quantum (`/proc/sys/kernel/sched_rr_timeslice_ms`,
/// 100 ms by default).
pub fn rr_timeslice() -> Nanos {
    std::fs::read_to_string("/proc/sys/kernel/sched_rr_timeslice_ms")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(Nanos::from_ms(100), Nanos::from_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Task;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn set() -> TaskSet {
        TaskSet::new(
            "s",
            vec![
                Task::new("slow", ms(100), ms(1)).with_deadline(ms(10)),
                Task::new("fast", ms(20), ms(1)),
                Task::new("fast2", ms(20), ms(1)),
            ],
        )
    }

    fn priorities(policy: RunPolicy) -> Vec<u8> {
        thread_policies(&set(), policy, None)
            .unwrap()
            .iter()
            .map(|p| p.priority())
            .collect()
    }

    #[test]
    fn rm_orders_by_period_then_declaration() {
        assert_eq!(priorities(RunPolicy::RateMonotonic), vec![10, 12, 11]);
    }

    #[test]
    fn dm_orders_by_deadline() {
        assert_eq!(priorities(RunPolicy::DeadlineMonotonic), vec![12, 11, 10]);
    }

    #[test]
    fn fifo_order_and_rr_share_one_priority() {
        assert_eq!(priorities(RunPolicy::FifoOrder), vec![10, 10, 10]);
        let rr = thread_policies(&set(), RunPolicy::RoundRobin, None).unwrap();
        assert!(rr.iter().all(|p| p.short_name() == "rr"));
    }

    #[test]
    fn given_keeps_the_files_order_and_ties() {
        let mut s = set();
        for (t, p) in s.tasks.iter_mut().zip([7, 50, 7]) {
            t.priority = Some(p);
        }
        let levels: Vec<u8> = thread_policies(&s, RunPolicy::Given, None)
            .unwrap()
            .iter()
            .map(|p| p.priority())
            .collect();
        assert_eq!(levels, vec![10, 11, 10]);
    }

    #[test]
    fn given_without_priorities_is_explained() {
        let e = thread_policies(&set(), RunPolicy::Given, None).unwrap_err();
        assert!(e.to_string().contains("task `slow` has no priority"), "{e}");
    }

    #[test]
    fn edf_budget_is_wcet_plus_margin_capped_at_the_deadline() {
        assert_eq!(
            deadline_runtime(ms(10), ms(20), None),
            ms(10) + Nanos::from_us(500)
        );
        assert_eq!(
            deadline_runtime(ms(1), ms(20), None),
            ms(1) + Nanos::from_us(100)
        );
        assert_eq!(deadline_runtime(ms(10), ms(10), None), ms(10));
        assert_eq!(
            deadline_runtime(ms(1), ms(20), Some(Nanos::from_us(7))),
            ms(1) + Nanos::from_us(7)
        );
        let p = thread_policies(&set(), RunPolicy::Edf, None).unwrap();
        assert_eq!(
            p[0],
            Policy::Deadline {
                runtime: ms(1) + Nanos::from_us(100),
                deadline: ms(10),
                period: ms(100)
            }
        );
    }
}
