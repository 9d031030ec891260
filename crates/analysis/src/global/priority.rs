//! Priority orders for global fixed-priority scheduling.
//!
//! - `rm`, `dm`, `given`: as on one processor ([`crate::priority`]);
//! - `dkc`: Davis & Burns, *Priority assignment for global fixed priority
//!   pre-emptive scheduling in multiprocessor real-time systems*, RTSS
//!   2009: the smaller `Di − k Ci` the more urgent, with
//!
//!   ```text
//!   k = (m − 1 + √(5m² − 6m + 1)) / (2m)
//!   ```
//!
//!   (computed in `f64`; ties in declaration order, earlier more urgent).
//!
//! The global analyses need a strict order: `given` with two tasks on one
//! level is refused (the tie would be broken at run time, which the
//! response-time bounds do not model).

use rtlab_model::TaskSet;

use crate::error::AnalysisError;
use crate::priority;
use rtlab_model::policy::PriorityAssignment;

/// A priority order for global fixed priorities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GlobalPriority {
    /// Rate monotonic.
    Rm,
    /// Deadline monotonic.
    Dm,
    /// The tasks' `priority` fields (larger is more urgent).
    Given,
    /// Davis & Burns' DkC.
    Dkc,
}

impl GlobalPriority {
    /// Every order.
    pub const ALL: [GlobalPriority; 4] = [
        GlobalPriority::Rm,
        GlobalPriority::Dm,
        GlobalPriority::Given,
        GlobalPriority::Dkc,
    ];

    /// `rm`, `dm`, `given`, `dkc`.
    pub const fn name(self) -> &'static str {
        match self {
            GlobalPriority::Rm => "rm",
            GlobalPriority::Dm => "dm",
            GlobalPriority::Given => "given",
            GlobalPriority::Dkc => "dkc",
        }
    }

    /// The order with this name.
    pub fn from_name(name: &str) -> Option<GlobalPriority> {
        GlobalPriority::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// DkC's `k` for `m` processors.
pub fn dkc_factor(m: u32) -> f64 {
    let m = f64::from(m.max(1));
    (m - 1.0 + (5.0 * m * m - 6.0 * m + 1.0).sqrt()) / (2.0 * m)
}

/// Task indices from most to least urgent.
pub fn order(set: &TaskSet, rule: GlobalPriority, m: u32) -> Result<Vec<usize>, AnalysisError> {
    let uniprocessor = match rule {
        GlobalPriority::Rm => PriorityAssignment::RateMonotonic,
        GlobalPriority::Dm => PriorityAssignment::DeadlineMonotonic,
        GlobalPriority::Given => PriorityAssignment::Given,
        GlobalPriority::Dkc => {
            let k = dkc_factor(m);
            let key = |i: usize| {
                let t = &set.tasks[i];
                t.deadline.as_ns() as f64 - k * t.wcet.as_ns() as f64
            };
            let mut order: Vec<usize> = (0..set.tasks.len()).collect();
            order.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
            return Ok(order);
        }
    };
    let levels = priority::assign(set, uniprocessor)?;
    let mut seen = std::collections::HashSet::new();
    if let Some(i) = (0..set.tasks.len()).find(|&i| !seen.insert(levels.level(i))) {
        return Err(AnalysisError::SharedPriority(set.tasks[i].name.clone()));
    }
    Ok(levels.order())
}

#[cfg(test)]
mod tests {
    use super::super::testing::set;
    use super::*;

    /// k(1) = (0 + √0)/2 = 0; k(2) = (1 + √9)/4 = 1; k(4) = (3 + √57)/8.
    #[test]
    fn dkc_factor_by_hand() {
        assert_eq!(dkc_factor(1), 0.0);
        assert_eq!(dkc_factor(2), 1.0);
        assert!((dkc_factor(4) - (3.0 + 57f64.sqrt()) / 8.0).abs() < 1e-15);
    }

    /// m = 2, k = 1: D − C = (10 − 1, 12 − 8, 11 − 2) = (9, 4, 9): τ1
    /// first, then τ0 and τ2 tied (declaration order). DM gives τ0, τ2, τ1.
    #[test]
    fn dkc_orders_by_deadline_minus_k_wcet() {
        let s = set(&[(1, 10, 20), (8, 12, 20), (2, 11, 20)]);
        assert_eq!(order(&s, GlobalPriority::Dkc, 2).unwrap(), [1, 0, 2]);
        assert_eq!(order(&s, GlobalPriority::Dm, 2).unwrap(), [0, 2, 1]);
    }

    #[test]
    fn given_ties_are_refused() {
        let mut s = set(&[(1, 10, 10), (1, 10, 10)]);
        s.tasks[0].priority = Some(3);
        s.tasks[1].priority = Some(3);
        assert!(matches!(
            order(&s, GlobalPriority::Given, 2),
            Err(AnalysisError::SharedPriority(_))
        ));
        s.tasks[1].priority = Some(4);
        assert_eq!(order(&s, GlobalPriority::Given, 2).unwrap(), [1, 0]);
    }
}
