//! EDF utilization and density tests.
//!
//! - **Utilization** (Liu & Layland 1973, Theorem 7): with implicit deadlines
//!   (more generally D >= T), no jitter and no blocking, EDF meets every
//!   deadline iff `U = Σ Ci/Ti <= 1`. Otherwise `U <= 1` is only necessary:
//!   `U > 1` is reported unschedulable and `U <= 1` inconclusive.
//! - **Density** (e.g. Buttazzo, *Hard Real-Time Computing Systems*, §4.6):
//!   `Σ Ci / min(Di, Ti) <= 1` is sufficient for constrained deadlines;
//!   without jitter and blocking it accepts, `U > 1` rejects, and anything
//!   else is inconclusive.
//!
//! Both compare exactly ([`crate::exact`]).

use rtlab_model::TaskSet;

use crate::blocking::EdfBlocking;
use crate::exact::{self, Fraction};
use crate::liu_layland::utilizations;
use crate::verdict::{Outcome, Test, Verdict};

/// The EDF utilization test.
pub fn utilization(set: &TaskSet, blocking: &EdfBlocking) -> Outcome {
    Outcome::set_only(Test::EdfUtilization, utilization_verdict(set, blocking))
}

/// The verdict of [`utilization`].
pub fn utilization_verdict(set: &TaskSet, blocking: &EdfBlocking) -> Verdict {
    if !exact::sum_at_most_one(&utilizations(set)) {
        return Some(false);
    }
    let exact_here = blocking.is_none()
        && set
            .tasks
            .iter()
            .all(|t| t.deadline >= t.period && t.jitter.is_zero());
    exact_here.then_some(true)
}

/// The EDF density test.
pub fn density(set: &TaskSet, blocking: &EdfBlocking) -> Outcome {
    let verdict = if !exact::sum_at_most_one(&utilizations(set)) {
        Some(false)
    } else if !blocking.is_none() || set.tasks.iter().any(|t| !t.jitter.is_zero()) {
        None
    } else {
        let densities: Vec<Fraction> = set
            .tasks
            .iter()
            .map(|t| (t.wcet.as_ns(), t.deadline.min(t.period).as_ns().max(1)))
            .collect();
        exact::sum_at_most_one(&densities).then_some(true)
    };
    Outcome::set_only(Test::EdfDensity, verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::{Nanos, Task};

    #[test]
    fn utilization_is_exact_for_implicit_deadlines() {
        let ms = Nanos::from_ms;
        // Buttazzo §4.5: U = 1 exactly is schedulable by EDF.
        let s = TaskSet::new(
            "u",
            vec![Task::new("a", ms(4), ms(2)), Task::new("b", ms(6), ms(3))],
        );
        assert_eq!(utilization_verdict(&s, &EdfBlocking::none()), Some(true));
        let mut c = s.clone();
        c.tasks[0].deadline = ms(3);
        assert_eq!(utilization_verdict(&c, &EdfBlocking::none()), None);
        assert_eq!(density(&c, &EdfBlocking::none()).schedulable, None);
        c.tasks[1].wcet = ms(4);
        assert_eq!(utilization_verdict(&c, &EdfBlocking::none()), Some(false));
    }
}
