//! GFB: the density bound for global EDF.
//!
//! Goossens, Funk & Baruah, *Priority-driven scheduling of periodic task
//! systems on multiprocessors*, Real-Time Systems 25(2–3), 2003, for
//! implicit deadlines; extended to constrained deadlines with densities by
//! Bertogna, Cirinei & Lipari, *Improved schedulability analysis of EDF on
//! multiprocessor platforms*, ECRTS 2005. With `δi = Ci / min(Di, Ti)`:
//!
//! ```text
//! Σ δi <= m − (m − 1) δmax
//! ```
//!
//! suffices for G-EDF on `m` processors (for implicit deadlines `δ = u`:
//! `U <= m − (m − 1) umax`). Compared exactly ([`crate::exact`]).

use rtlab_model::TaskSet;

use super::sporadic;
use crate::exact::{self, Fraction};
use crate::verdict::Verdict;

/// The GFB verdict on `m` processors.
pub fn verdict(set: &TaskSet, m: u32) -> Verdict {
    if let Err(v) = sporadic(set, m, true) {
        return v;
    }
    let densities: Vec<Fraction> = set
        .tasks
        .iter()
        .map(|t| (t.wcet.as_ns(), t.deadline.min(t.period).as_ns()))
        .collect();
    let max = *densities
        .iter()
        .max_by(|a, b| {
            (u128::from(a.0) * u128::from(b.1)).cmp(&(u128::from(b.0) * u128::from(a.1)))
        })
        .expect("a non-empty set");
    // Σ δi + (m − 1) δmax <= m
    let mut terms = densities;
    terms.extend(std::iter::repeat_n(max, m as usize - 1));
    exact::sum_at_most(&terms, u64::from(m), 1).then_some(true)
}

#[cfg(test)]
mod tests {
    use super::super::testing::set;
    use super::*;

    /// m = 2, u = (0.5, 0.5, 0.5): U = 1.5 <= 2 − 0.5 = 1.5 (on the bound:
    /// accepted); a fourth task of 0.1 gives 1.6 > 1.5.
    #[test]
    fn on_the_bound_is_accepted_just_above_is_not() {
        assert_eq!(verdict(&set(&[(5, 10, 10); 3]), 2), Some(true));
        assert_eq!(
            verdict(
                &set(&[(5, 10, 10), (5, 10, 10), (5, 10, 10), (1, 10, 10)]),
                2
            ),
            None
        );
    }

    /// Densities, not utilizations, for constrained deadlines: C = 2,
    /// D = 4, T = 10 has δ = 0.5 (u = 0.2); two of them and one of δ = 0.5
    /// sit on the bound for m = 2 as above.
    #[test]
    fn constrained_deadlines_use_density() {
        assert_eq!(
            verdict(&set(&[(2, 4, 10), (2, 4, 10), (5, 10, 10)]), 2),
            Some(true)
        );
        assert_eq!(
            verdict(&set(&[(2, 3, 10), (2, 4, 10), (5, 10, 10)]), 2),
            None
        );
        assert_eq!(verdict(&set(&[(2, 12, 10)]), 2), None, "D > T");
    }

    #[test]
    fn utilization_above_m_is_infeasible() {
        assert_eq!(verdict(&set(&[(9, 10, 10); 3]), 2), Some(false));
    }
}
