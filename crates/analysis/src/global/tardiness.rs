//! Devi & Anderson's tardiness bound for global EDF (soft real-time).
//!
//! Devi & Anderson, *Tardiness bounds under global EDF scheduling on a
//! multiprocessor*, Real-Time Systems 38(2), 2008 (Corollary as in Devi's
//! thesis, 2006, Cor. 4.11; SchedCAT's `edf/da.py`). Implicit deadlines,
//! `U <= m`, `Ci <= Ti`: no job of τk finishes later than `x + Ck` after
//! its deadline, where, with `Λ = ⌈U⌉ − 1`,
//!
//! ```text
//! x = ⌈ (E − Cmin) / (m − U') ⌉,   E = sum of the Λ largest Ci,   U' = sum of the Λ − 1 largest ui
//! ```
//!
//! (`x = 0` when `Λ <= 1`... formally `E − Cmin` clamps at 0). This is a
//! **bound**, not a verdict: it says deadlines may be missed by at most
//! that much. The division is done in `f64` and rounded up, plus one
//! nanosecond so rounding can never make the bound smaller.

use rtlab_model::{Nanos, TaskSet};

use crate::exact::{self, Fraction};

/// The tardiness bound of every task (task order), or `None` when the
/// bound does not apply: deadlines not implicit, `U > m`, jitter or
/// critical sections, `m = 0`.
pub fn bounds(set: &TaskSet, m: u32) -> Option<Vec<Nanos>> {
    if m == 0 || set.tasks.is_empty() || !set.has_implicit_deadlines() {
        return None;
    }
    if set
        .tasks
        .iter()
        .any(|t| !t.jitter.is_zero() || !t.critical_sections.is_empty() || t.period.is_zero())
    {
        return None;
    }
    let u: Vec<Fraction> = set
        .tasks
        .iter()
        .map(|t| (t.wcet.as_ns(), t.period.as_ns()))
        .collect();
    if exact::cmp_sum(&u, u64::from(m), 1) == std::cmp::Ordering::Greater {
        return None;
    }
    // ⌈U⌉: the least whole j with U <= j.
    let ceil_u = (0..=m)
        .find(|&j| exact::sum_at_most(&u, u64::from(j), 1))
        .unwrap_or(m);
    let lambda = ceil_u.saturating_sub(1) as usize;
    let mut costs: Vec<u64> = set.tasks.iter().map(|t| t.wcet.as_ns()).collect();
    costs.sort_unstable_by(|a, b| b.cmp(a));
    let mut utils: Vec<f64> = set.tasks.iter().map(|t| t.utilization()).collect();
    utils.sort_unstable_by(|a, b| b.total_cmp(a));
    let c_min = *costs.last().expect("non-empty");
    let e: u128 = costs.iter().take(lambda).map(|&c| u128::from(c)).sum();
    let u_prime: f64 = utils.iter().take(lambda.saturating_sub(1)).sum();
    let reduced = e.saturating_sub(u128::from(c_min));
    let x = if reduced == 0 {
        0
    } else {
        let capacity = f64::from(m) - u_prime;
        if capacity <= 0.0 {
            return None;
        }
        (reduced as f64 / capacity).ceil() as u64 + 1
    };
    Some(
        set.tasks
            .iter()
            .map(|t| Nanos::from_ns(x.saturating_add(t.wcet.as_ns())))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::set;
    use super::*;

    /// m = 2, C = (2, 3, 4), T = 4 each: U = 2.25 > 2: no bound.
    /// C = (2, 3, 2), T = 4: U = 1.75, Λ = ⌈1.75⌉ − 1 = 1, E = 3 (largest
    /// C), Cmin = 2, U' = 0 (Λ − 1 = 0 terms): x = ⌈1 / 2⌉ + 1 = 2, so
    /// bounds are x + C = (4, 5, 4).
    #[test]
    fn hand_computed_bounds() {
        assert_eq!(bounds(&set(&[(2, 4, 4), (3, 4, 4), (4, 4, 4)]), 2), None);
        let b = bounds(&set(&[(2, 4, 4), (3, 4, 4), (2, 4, 4)]), 2).unwrap();
        assert_eq!(b.iter().map(|n| n.as_ns()).collect::<Vec<_>>(), [4, 5, 4]);
    }

    /// Λ = 0 when U <= 1: no term, x = 0, bound = C.
    #[test]
    fn light_sets_are_bounded_by_their_wcet() {
        let b = bounds(&set(&[(1, 4, 4), (1, 4, 4)]), 2).unwrap();
        assert_eq!(b.iter().map(|n| n.as_ns()).collect::<Vec<_>>(), [1, 1]);
        assert_eq!(bounds(&set(&[(1, 3, 4)]), 2), None, "constrained");
    }
}
