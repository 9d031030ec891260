//! Breakdown utilization: scale every execution time by α, periods and
//! deadlines fixed, and find the largest α that stays schedulable.
//!
//! Lehoczky, Sha & Ding, *The rate monotonic scheduling algorithm: exact
//! characterization and average case behavior*, RTSS 1989; used by paper
//! 004 (§5) as `U* = Σ α Ci / Ti`, α the scale at which all deadlines are met
//! but any larger α makes one miss.
//!
//! α is searched as an integer in parts per billion: the scaled execution
//! time is `Ci' = max(1 ns, ⌈Ci α⌉)` (critical sections scale the same way,
//! clipped to the job), so every candidate is an exact integer task set.
//! Bisection runs between a schedulable and an unschedulable α until they
//! are [`PRECISION_PPB`] apart (α to 1e-6), assuming the test is monotone
//! in the execution times (true of RTA, Theorem 1, EDF demand and its
//! overhead-aware form, whose testing interval also grows with C). The
//! reported U* is that of the scaled set at the schedulable end.

use rtlab_model::{Nanos, TaskSet};

/// α = 1 in parts per billion.
pub const ONE_PPB: u64 = 1_000_000_000;

/// The bisection stops when the bracket is this narrow (1e-6 in α).
pub const PRECISION_PPB: u64 = 1_000;

/// The result of a breakdown search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Breakdown {
    /// The largest schedulable scale α found (to [`PRECISION_PPB`]).
    pub scale: f64,
    /// `U*`, the utilization of the set scaled by α.
    pub utilization: f64,
}

/// `set` with every execution time scaled by `alpha_ppb / 10^9`, rounded up
/// to whole nanoseconds (at least 1 ns). The input is not modified.
pub fn scale_wcets(set: &TaskSet, alpha_ppb: u64) -> TaskSet {
    let scale = |n: Nanos| -> Nanos {
        let v = (u128::from(n.as_ns()) * u128::from(alpha_ppb)).div_ceil(u128::from(ONE_PPB));
        Nanos::from_ns(u64::try_from(v).unwrap_or(u64::MAX))
    };
    let mut scaled = set.clone();
    for task in &mut scaled.tasks {
        task.wcet = scale(task.wcet).max(Nanos::from_ns(1));
        task.bcet = task.bcet.map(|b| scale(b).min(task.wcet));
        for cs in &mut task.critical_sections {
            cs.start = scale(cs.start).min(task.wcet);
            cs.length = scale(cs.length).min(task.wcet.saturating_sub(cs.start));
        }
    }
    scaled
}

/// The breakdown utilization of `set` under `schedulable` (true only when
/// the test proves the scaled set schedulable). `None` when even the
/// smallest scale (1 ns per job) is unschedulable.
pub fn breakdown(set: &TaskSet, schedulable: impl Fn(&TaskSet) -> bool) -> Option<Breakdown> {
    let ok = |alpha: u64| schedulable(&scale_wcets(set, alpha));
    let mut lo = 1u64;
    if !ok(lo) {
        return None;
    }
    // An α with U > 1, which no test accepts; widen if rounding fooled us.
    let u = set.utilization();
    let mut hi = if u > 0.0 {
        ((ONE_PPB as f64 / u) * (1.0 + 1e-6)).ceil().min(1e18) as u64 + 2
    } else {
        ONE_PPB
    };
    while ok(hi) {
        lo = hi;
        match hi.checked_mul(2) {
            Some(h) if h < u64::MAX / 4 => hi = h,
            _ => return Some(result(set, lo)),
        }
    }
    while hi - lo > PRECISION_PPB {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(result(set, lo))
}

fn result(set: &TaskSet, alpha_ppb: u64) -> Breakdown {
    Breakdown {
        scale: alpha_ppb as f64 / ONE_PPB as f64,
        utilization: scale_wcets(set, alpha_ppb).utilization(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Task;

    #[test]
    fn scaling_rounds_up_and_keeps_the_input() {
        let set = TaskSet::new(
            "s",
            vec![Task::new("a", Nanos::from_ns(10), Nanos::from_ns(3))],
        );
        let scaled = scale_wcets(&set, 500_000_000);
        assert_eq!(scaled.tasks[0].wcet, Nanos::from_ns(2));
        assert_eq!(set.tasks[0].wcet, Nanos::from_ns(3));
        assert_eq!(scale_wcets(&set, 1).tasks[0].wcet, Nanos::from_ns(1));
    }

    #[test]
    fn utilization_test_breaks_down_at_one() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "s",
            vec![Task::new("a", ms(10), ms(2)), Task::new("b", ms(20), ms(4))],
        );
        let b = breakdown(&set, |s| s.utilization() <= 1.0).unwrap();
        assert!((b.utilization - 1.0).abs() < 2e-6, "{b:?}");
        assert!((b.scale - 2.5).abs() < 2e-6, "{b:?}");
        assert_eq!(breakdown(&set, |_| false), None);
    }
}
