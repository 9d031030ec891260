//! The hyperbolic bound for rate-monotonic scheduling.
//!
//! E. Bini, G. C. Buttazzo and G. M. Buttazzo, *Rate Monotonic Analysis: The
//! Hyperbolic Bound*, IEEE Transactions on Computers 52(7), 2003: n tasks
//! with implicit deadlines are schedulable under rate-monotonic priorities if
//!
//! ```text
//! Π (Ui + 1) <= 2
//! ```
//!
//! and, with blocking (same paper, §5), if for every task i in priority
//! order `(Ui + Bi/Ti + 1) Π_{j < i} (Uj + 1) <= 2`. It dominates the
//! Liu & Layland bound. Sufficient only, with the same applicability as
//! [`crate::liu_layland`]; comparisons are exact ([`crate::exact`]).

use rtlab_model::{Nanos, TaskSet};

use crate::exact::{self, Fraction};
use crate::liu_layland::bound_verdict;
use crate::priority::Priorities;
use crate::verdict::{Outcome, Test, Verdict};

/// The hyperbolic test (with blocking terms; pass zeros for none).
pub fn analyse(set: &TaskSet, priorities: &Priorities, blocking: &[Nanos]) -> Outcome {
    Outcome::set_only(Test::Hyperbolic, verdict(set, priorities, blocking))
}

fn verdict(set: &TaskSet, priorities: &Priorities, blocking: &[Nanos]) -> Verdict {
    bound_verdict(
        set,
        priorities,
        blocking,
        exact::product_of_one_plus_at_most_two,
        |order, k, fractions| {
            let i = order[k];
            let mut terms: Vec<Fraction> = order[..k].iter().map(|&j| fractions[j]).collect();
            // (Ci + Bi)/Ti, exactly, as one factor.
            let t = &set.tasks[i];
            match t.wcet.checked_add(blocking[i]) {
                Some(cb) => terms.push((cb.as_ns(), t.period.as_ns().max(1))),
                None => return false,
            }
            exact::product_of_one_plus_at_most_two(&terms)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::assign;
    use rtlab_model::policy::PriorityAssignment;
    use rtlab_model::Task;

    #[test]
    fn accepts_what_liu_layland_cannot() {
        // U = (0.6, 0.25): U = 0.85 is above the 2-task LL bound 0.828, but
        // (1.6)(1.25) = 2 exactly, so the hyperbolic bound accepts it.
        let s = TaskSet::new(
            "h",
            vec![
                Task::new("a", Nanos::from_ms(10), Nanos::from_ms(6)),
                Task::new("b", Nanos::from_ms(20), Nanos::from_ms(5)),
            ],
        );
        let p = assign(&s, PriorityAssignment::RateMonotonic).unwrap();
        let zero = [Nanos::ZERO; 2];
        assert_eq!(verdict(&s, &p, &zero), Some(true));
        assert_eq!(crate::liu_layland::analyse(&s, &p, &zero).schedulable, None);
    }
}
