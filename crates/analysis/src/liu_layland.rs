//! The Liu & Layland utilization bound for rate-monotonic scheduling.
//!
//! C. L. Liu and J. W. Layland, *Scheduling Algorithms for Multiprogramming
//! in a Hard-Real-Time Environment*, JACM 20(1), 1973: n tasks with implicit
//! deadlines are schedulable under rate-monotonic priorities if
//!
//! ```text
//! U = Σ Ci/Ti <= n (2^{1/n} − 1)
//! ```
//!
//! With blocking (Sha, Rajkumar & Lehoczky, *Priority Inheritance Protocols*,
//! IEEE TC 39(9), 1990, Theorem 16): for every task i in priority order,
//! `Σ_{j <= i} Cj/Tj + Bi/Ti <= i (2^{1/i} − 1)`.
//!
//! Sufficient only. Applies when every D >= T, there is no release jitter and
//! the priorities are rate monotonic; otherwise the verdict is `None`. A set
//! with U > 1 is reported unschedulable. Comparisons are exact
//! ([`crate::exact`]).

use rtlab_model::{Nanos, TaskSet};

use crate::exact::{self, Fraction};
use crate::priority::Priorities;
use crate::verdict::{Outcome, Test, Verdict};

/// The Liu & Layland test (with blocking terms; pass zeros for none).
pub fn analyse(set: &TaskSet, priorities: &Priorities, blocking: &[Nanos]) -> Outcome {
    Outcome::set_only(Test::LiuLayland, verdict(set, priorities, blocking))
}

fn verdict(set: &TaskSet, priorities: &Priorities, blocking: &[Nanos]) -> Verdict {
    bound_verdict(
        set,
        priorities,
        blocking,
        |fractions| exact::sum_within_liu_layland(fractions, fractions.len() as u32),
        |order, k, fractions| {
            let i = order[k];
            let mut terms: Vec<Fraction> = order[..=k].iter().map(|&j| fractions[j]).collect();
            terms.push((blocking[i].as_ns(), set.tasks[i].period.as_ns()));
            exact::sum_within_liu_layland(&terms, k as u32 + 1)
        },
    )
}

/// The frame the utilization bounds share: U > 1 is refused outright; a
/// bound is inconclusive outside its assumptions ([`applies`]); without
/// blocking `whole(fractions)` judges the set, with blocking every task
/// (rank `k` of the priority `order`, most urgent first) is judged by
/// `ranked(order, k, fractions)` with its own blocking term. A bound only
/// ever accepts: failing it is inconclusive, not a miss.
pub(crate) fn bound_verdict(
    set: &TaskSet,
    priorities: &Priorities,
    blocking: &[Nanos],
    whole: impl Fn(&[Fraction]) -> bool,
    ranked: impl Fn(&[usize], usize, &[Fraction]) -> bool,
) -> Verdict {
    let fractions = utilizations(set);
    if !exact::sum_at_most_one(&fractions) {
        return Some(false);
    }
    if !applies(set, priorities) {
        return None;
    }
    let passes = if blocking.iter().all(|b| b.is_zero()) {
        whole(&fractions)
    } else {
        let order = priorities.order();
        (0..order.len()).all(|k| ranked(&order, k, &fractions))
    };
    passes.then_some(true)
}

/// `(Ci, Ti)` for every task.
pub(crate) fn utilizations(set: &TaskSet) -> Vec<Fraction> {
    set.tasks
        .iter()
        .map(|t| (t.wcet.as_ns(), t.period.as_ns().max(1)))
        .collect()
}

/// The assumptions of the utilization bounds: D >= T, no jitter, RM order.
pub(crate) fn applies(set: &TaskSet, priorities: &Priorities) -> bool {
    set.tasks
        .iter()
        .all(|t| t.deadline >= t.period && t.jitter.is_zero())
        && priorities.is_rate_monotonic(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::assign;
    use rtlab_model::policy::PriorityAssignment;
    use rtlab_model::Task;

    fn set(tasks: &[(u64, u64)]) -> TaskSet {
        TaskSet::new(
            "s",
            tasks
                .iter()
                .enumerate()
                .map(|(i, &(c, t))| {
                    Task::new(format!("t{i}"), Nanos::from_ms(t), Nanos::from_ms(c))
                })
                .collect(),
        )
    }

    fn ll(s: &TaskSet) -> Verdict {
        let p = assign(s, PriorityAssignment::RateMonotonic).unwrap();
        verdict(s, &p, &vec![Nanos::ZERO; s.tasks.len()])
    }

    #[test]
    fn buttazzo_bounds() {
        // Buttazzo, Hard Real-Time Computing Systems (3rd ed.), §4.3: U_lub(3) = 0.780.
        // U = 1/4 + 1/5 + 3/10 = 0.75 <= 0.7798 → accepted.
        assert_eq!(ll(&set(&[(1, 4), (1, 5), (3, 10)])), Some(true));
        // U = 1/4 + 2/5 + 2/10 = 0.85 > 0.7798 → inconclusive, yet <= 1.
        assert_eq!(ll(&set(&[(1, 4), (2, 5), (2, 10)])), None);
        // U > 1 → unschedulable.
        assert_eq!(ll(&set(&[(3, 4), (2, 5)])), Some(false));
    }

    #[test]
    fn not_applicable_without_rm_or_with_constrained_deadlines() {
        let mut s = set(&[(1, 4), (1, 5)]);
        s.tasks[1].deadline = Nanos::from_ms(3);
        assert_eq!(ll(&s), None);
    }
}
