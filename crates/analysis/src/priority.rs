//! Fixed-priority assignment: rate monotonic (Liu & Layland 1973), deadline
//! monotonic (Leung & Whitehead 1982), the file's own priorities, and
//! Audsley's optimal priority assignment (see [`crate::audsley`]).
//!
//! Priorities follow the SCHED_FIFO convention of the model crate: a
//! **larger number is more urgent**. RM, DM and OPA give distinct levels
//! `n` (most urgent) down to `1`. Ties in the ordering key are broken by the
//! deadline, then the period, then declaration order (earlier declared is
//! more urgent), so an assignment is deterministic.
//!
//! Tasks that share a level (possible only with `given`) are analysed
//! pessimistically: each counts the others as higher-priority interference,
//! which bounds FIFO-within-priority dispatching.

use rtlab_model::policy::{levels_from_order, PriorityAssignment};
use rtlab_model::TaskSet;

use crate::error::AnalysisError;

/// One priority level per task, in task-set order; larger is more urgent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Priorities(pub Vec<u32>);

impl Priorities {
    /// The level of task `index`.
    pub fn level(&self, index: usize) -> u32 {
        self.0[index]
    }

    /// Task indices from most to least urgent (ties in declaration order).
    pub fn order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.0.len()).collect();
        order.sort_by(|&a, &b| self.0[b].cmp(&self.0[a]).then(a.cmp(&b)));
        order
    }

    /// Distinct levels `n..1` following `order` (most urgent first).
    pub fn from_order(order: &[usize]) -> Priorities {
        Priorities(levels_from_order(order))
    }

    /// True when shorter periods always have strictly higher priority
    /// (what the Liu & Layland and hyperbolic bounds assume).
    ///
    /// Sorted by period, every task must be strictly more urgent than all
    /// tasks of longer periods, i.e. than the most urgent of them: one pass
    /// from the longest period down, O(n log n) (a set of 100,000 tasks took
    /// 100 s with the pairwise check).
    pub fn is_rate_monotonic(&self, set: &TaskSet) -> bool {
        let tasks = &set.tasks;
        let mut by_period: Vec<usize> = (0..tasks.len()).collect();
        by_period.sort_by_key(|&i| tasks[i].period);
        // Most urgent level among the tasks with a longer period than the
        // current group, scanning groups of equal period from the longest.
        let mut longer_max: Option<u32> = None;
        let mut end = by_period.len();
        while end > 0 {
            let period = tasks[by_period[end - 1]].period;
            let start = by_period[..end].partition_point(|&i| tasks[i].period < period);
            let group = &by_period[start..end];
            if let Some(max) = longer_max {
                if group.iter().any(|&i| self.0[i] <= max) {
                    return false;
                }
            }
            let group_max = group.iter().map(|&i| self.0[i]).max();
            longer_max = longer_max.max(group_max);
            end = start;
        }
        true
    }
}

/// Rate-monotonic or deadline-monotonic order, or the given priorities
/// ([`PriorityAssignment::levels`]). For [`PriorityAssignment::Audsley`] use
/// [`crate::audsley::assign`]; here it falls back to deadline monotonic.
pub fn assign(set: &TaskSet, policy: PriorityAssignment) -> Result<Priorities, AnalysisError> {
    if set.tasks.is_empty() {
        return Err(AnalysisError::EmptySet);
    }
    policy
        .levels(&set.tasks)
        .map(Priorities)
        .map_err(|e| AnalysisError::MissingPriority(e.task))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::{Nanos, Task};

    #[test]
    fn rate_monotonic_check_agrees_with_its_pairwise_definition() {
        // Every assignment of levels 1..=3 to periods drawn from {1, 2, 3} ms.
        let pairwise = |p: &Priorities, set: &TaskSet| {
            let t = &set.tasks;
            (0..t.len())
                .all(|i| (0..t.len()).all(|j| !(t[i].period < t[j].period && p.0[i] <= p.0[j])))
        };
        for code in 0..(9u32 * 9 * 9 * 9) {
            let digits: Vec<u32> = (0..4).map(|k| code / 9u32.pow(k) % 9).collect();
            let set = TaskSet::new(
                "s",
                digits
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let period = Nanos::from_ms(u64::from(d % 3) + 1);
                        Task::new(format!("t{i}"), period, Nanos::from_us(10))
                    })
                    .collect(),
            );
            let levels = Priorities(digits.iter().map(|d| d / 3 + 1).collect());
            assert_eq!(
                levels.is_rate_monotonic(&set),
                pairwise(&levels, &set),
                "{digits:?}"
            );
        }
    }

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    #[test]
    fn rm_and_dm_orders() {
        let set = TaskSet::new(
            "s",
            vec![
                Task::new("slow", ms(100), ms(1)).with_deadline(ms(5)),
                Task::new("fast", ms(10), ms(1)),
                Task::new("fast2", ms(10), ms(1)),
            ],
        );
        let rm = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
        assert_eq!(rm.0, vec![1, 3, 2]);
        assert!(rm.is_rate_monotonic(&set));
        let dm = assign(&set, PriorityAssignment::DeadlineMonotonic).unwrap();
        assert_eq!(dm.0, vec![3, 2, 1]);
        assert!(!dm.is_rate_monotonic(&set));
        assert_eq!(dm.order(), vec![0, 1, 2]);
    }

    #[test]
    fn given_needs_every_priority() {
        let set = TaskSet::new(
            "s",
            vec![
                Task::new("a", ms(10), ms(1)).with_priority(4),
                Task::new("b", ms(10), ms(1)),
            ],
        );
        assert_eq!(
            assign(&set, PriorityAssignment::Given),
            Err(AnalysisError::MissingPriority("b".into()))
        );
        assert_eq!(
            assign(
                &TaskSet::new("e", vec![]),
                PriorityAssignment::RateMonotonic
            ),
            Err(AnalysisError::EmptySet)
        );
    }
}
