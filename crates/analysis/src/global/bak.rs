//! BAK: Baker's test for global EDF.
//!
//! Baker, *Multiprocessor EDF and deadline monotonic schedulability
//! analysis*, RTSS 2003 (the form of Bertogna, Cirinei & Lipari's
//! comparisons, ECRTS 2005, as SchedCAT states it). With `λk = Ck / Dk`,
//! `ui = Ci / Ti` and
//!
//! ```text
//! βk(i) = ui (1 + (Ti − Di) / Dk)                       if ui <= λk
//!       = ui (1 + (Ti − Di) / Dk) + (Ci − λk Ti) / Dk   if ui >  λk
//! ```
//!
//! the set is schedulable by G-EDF on `m` processors if for every task `k`
//!
//! ```text
//! Σ_i min(1, βk(i)) <= m − (m − 1) λk
//! ```
//!
//! Constrained deadlines. The sums are rationals with every period in their
//! denominators, so they are compared in `f64` with a margin of `1e-9` on
//! the safe side: a set within `1e-9` of the bound is "not proven".

use rtlab_model::TaskSet;

use super::{sporadic, Sporadic};
use crate::verdict::Verdict;

/// Safety margin of the `f64` comparison.
const MARGIN: f64 = 1e-9;

fn beta(i: &Sporadic, k: &Sporadic, lambda: f64) -> f64 {
    let u = i.c as f64 / i.t as f64;
    let dk = k.d as f64;
    let base = u * (1.0 + (i.t - i.d) as f64 / dk);
    if u > lambda {
        base + (i.c as f64 - lambda * i.t as f64) / dk
    } else {
        base
    }
}

/// The BAK verdict on `m` processors.
pub fn verdict(set: &TaskSet, m: u32) -> Verdict {
    let tasks = match sporadic(set, m, true) {
        Ok(t) => t,
        Err(v) => return v,
    };
    let m = f64::from(m);
    tasks
        .iter()
        .all(|k| {
            if rtlab_model::cancel::requested() {
                return false;
            }
            let lambda = k.c as f64 / k.d as f64;
            let sum: f64 = tasks.iter().map(|i| beta(i, k, lambda).min(1.0)).sum();
            sum <= m - (m - 1.0) * lambda - MARGIN
        })
        .then_some(true)
}

#[cfg(test)]
mod tests {
    use super::super::testing::set;
    use super::*;

    /// m = 2, implicit deadlines, u = λ = 0.25 for four tasks: every
    /// βk(i) = 0.25 (ui <= λk), Σ = 1 <= 2 − 0.25 = 1.75: schedulable.
    /// Two tasks of u = 0.9 (C = 9, T = 10): for k = either, λ = 0.9,
    /// β = 0.9 each, Σ = 1.8 > 2 − 0.9 = 1.1: not proven (G-EDF does
    /// schedule them, one per processor: BAK is only sufficient).
    #[test]
    fn hand_computed_cases() {
        assert_eq!(verdict(&set(&[(1, 4, 4); 4]), 2), Some(true));
        assert_eq!(verdict(&set(&[(9, 10, 10); 2]), 2), None);
    }

    /// The second term: k = (1, 10, 10) with λ = 0.1 and i = (5, 10, 10)
    /// with u = 0.5 > λ: β = 0.5 + (5 − 0.1·10)/10 = 0.9. Tasks {k, i, i}
    /// on m = 2: for k, Σ = min(1, 0.1) + 0.9 + 0.9 = 1.9 <= 2 − 0.1 = 1.9
    /// only up to rounding: the margin makes it not proven; with C = 4 for
    /// the two: β = 0.4 + 0.3 = 0.7, Σ = 1.5 <= 1.9, and for i (λ = 0.4):
    /// β(k) = 0.1, β(i) = 0.4, Σ = 0.9 <= 1.6: schedulable.
    #[test]
    fn the_carry_in_term() {
        assert_eq!(
            verdict(&set(&[(1, 10, 10), (5, 10, 10), (5, 10, 10)]), 2),
            None
        );
        assert_eq!(
            verdict(&set(&[(1, 10, 10), (4, 10, 10), (4, 10, 10)]), 2),
            Some(true)
        );
    }
}
