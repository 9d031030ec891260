//! The EDF processor-demand criterion, decided exactly: QPA from the end
//! of the testing interval, a forward scan from its start, and the tightest
//! interval known.
//!
//! Baruah, Rosier & Howell (*Algorithms and complexity concerning the
//! preemptive scheduling of periodic, real-time tasks on one processor*,
//! Real-Time Systems 2(4), 1990): a synchronous periodic task set is
//! EDF-schedulable iff `h(t) <= t` for every `t` in `(0, L]`, where the
//! demand bound, with release jitter (Spuri 1996), is
//!
//! ```text
//! h(t) = Σ_{i : t >= Di − Ji} (⌊(t − Di + Ji) / Ti⌋ + 1) Ci
//! ```
//!
//! In order, with `U = Σ Ci/Ti` compared with 1 **exactly** (big integers,
//! [`crate::exact`]; the generators round C to whole nanoseconds, so a set
//! drawn at "U = 1" is slightly above or below it):
//!
//! 1. `U > 1`: not schedulable, at once.
//! 2. Without blocking, `h(t) <= U t + K <= t + K` with
//!    `K = Σ max(0, Ti − Di + Ji) Ui`; `h` and `t` are whole nanoseconds, so
//!    `K < 1` decides: schedulable. This covers implicit deadlines (`K = 0`,
//!    Liu & Layland) and sets whose deadlines are within a nanosecond of
//!    their periods, whatever their hyperperiod.
//! 3. The testing interval `L` is the least of what is known of
//!    - `La = max(max_i (Di − Ji), ⌈Σ_i max(0, Ti − Di + Ji) Ui / (1 − U)⌉)`
//!      when `U < 1` (George, Rivierre & Spuri 1996; exact near `U = 1`,
//!      [`crate::exact::demand_horizon`]);
//!    - `H`, the hyperperiod, when it fits in 64 bits and is below `La`
//!      (computed only that far): `h(t + H) <= h(t) + U H`
//!      for every `t >= 0`, so with `U <= 1` a first violation lies in `(0, H]`;
//!    - `Lb`, the synchronous busy period, least `w` with
//!      `w = Σ ⌈(w + Ji)/Ti⌉ Ci` (Ripoll, Crespo & Mok 1996), by a fixed
//!      point from below stopped after
//!      [`BUSY_PERIOD_CAP`](crate::demand_search::BUSY_PERIOD_CAP) steps or
//!      once past the other bounds. At `U = 1` exactly it equals `H`, so
//!      nothing is iterated.
//! 4. [`crate::demand_search`] decides `h(t) <= t` on `[min_i (Di − Ji), L]`:
//!    QPA (Zhang & Burns 2009) walking down from `L`, interleaved with a
//!    forward scan of the deadlines from the start (QPA*'s point: sets that
//!    fail, fail early). Near `U = 1`, `La` is astronomically large and QPA
//!    alone crawls for millions of steps; the forward scan finds the
//!    violation among the first few thousand deadlines.
//!
//! When no finite interval is known (`U = 1` exactly and `H` beyond 64 bits)
//! only a violation can be found; the verdict is then `None` (inconclusive)
//! unless the forward scan finds one within its cap. The same happens when
//! the search's caps run out.
//!
//! With SRP or DFP blocking the condition is `h(t) + B(t) <= t`
//! ([`crate::blocking::EdfBlocking`], Baruah 2006). `B(t)` is not monotone
//! but vanishes from the longest deadline of a blocking task on, so below
//! that point every step of `h` and of `B` is checked (at most
//! [`POINT_CAP`] of them, else inconclusive) and above it the search runs on
//! `h` alone; `L` includes `max B` in `La` and `Lb`. Release offsets are
//! ignored (the synchronous case is the worst).

use rtlab_model::{Task, TaskSet};

use crate::blocking::EdfBlocking;
use crate::demand_search::{self, DemandBound, Staircase};
use crate::exact;
use crate::liu_layland::utilizations;
use crate::verdict::{Outcome, Test, Verdict};
use std::cmp::Ordering;

/// Points checked one by one below the blocking horizon before giving up.
pub const POINT_CAP: u64 = 5_000_000;

/// A task in the demand computation, in nanoseconds.
#[derive(Debug, Clone, Copy)]
struct DemandTask {
    c: u128,
    t: u128,
    /// First absolute deadline: D − J (> 0).
    d: u128,
    /// Release jitter.
    j: u128,
}

/// The processor-demand test (module docs).
pub fn analyse(set: &TaskSet, blocking: &EdfBlocking) -> Outcome {
    Outcome::set_only(Test::EdfDemand, verdict(set, blocking))
}

/// The tasks as demand terms; `Err` holds the verdict when one task decides
/// it alone (a zero period: inconclusive; jitter at or past the deadline:
/// not schedulable).
fn demand_tasks(set: &TaskSet) -> Result<Vec<DemandTask>, Verdict> {
    set.tasks
        .iter()
        .map(|task| {
            if task.period.is_zero() {
                return Err(None);
            }
            if task.jitter >= task.deadline {
                // Released at or after its deadline.
                return Err(Some(false));
            }
            Ok(DemandTask::of(task))
        })
        .collect()
}

impl DemandTask {
    /// `task` in nanoseconds (period > 0, jitter < deadline).
    fn of(task: &Task) -> DemandTask {
        DemandTask {
            c: u128::from(task.wcet.as_ns()),
            t: u128::from(task.period.as_ns()),
            d: u128::from((task.deadline - task.jitter).as_ns()),
            j: u128::from(task.jitter.as_ns()),
        }
    }
}

/// The verdict of [`analyse`].
pub fn verdict(set: &TaskSet, blocking: &EdfBlocking) -> Verdict {
    let tasks = match demand_tasks(set) {
        Ok(tasks) => tasks,
        Err(verdict) => return verdict,
    };
    if tasks.is_empty() {
        return Some(true);
    }
    let u_vs_one = exact::cmp_sum(&utilizations(set), 1, 1);
    if u_vs_one == Ordering::Greater {
        return Some(false);
    }
    if blocking.is_none() && slack_below_one_ns(&tasks) {
        return Some(true);
    }
    let b_max = u128::from(blocking.max());
    let horizon = u128::from(blocking.horizon());
    let l = testing_interval(&tasks, b_max, horizon, u_vs_one);
    let d_min = tasks.iter().map(|k| k.d).min().unwrap_or(1);
    let bound = DemandBound {
        stairs: tasks
            .iter()
            .map(|k| Staircase::deadlines(k.d, k.t, k.c))
            .collect(),
        ..DemandBound::default()
    };
    if blocking.is_none() {
        return demand_search::search(&bound, d_min, l);
    }
    // Below the horizon, h(t) + B(t) point by point; above it, h alone.
    let below = l.map_or(horizon, |l| l.min(horizon));
    match every_point(&tasks, blocking, below) {
        Some(true) => {}
        other => return other,
    }
    demand_search::search(&bound, horizon.max(d_min), l)
}

/// `K = Σ max(0, Ti − Di + Ji) Ci/Ti < 1`, exactly. With `U <= 1`,
/// `h(t) <= U t + K <= t + K`, and `h(t)` and `t` are whole nanoseconds, so
/// `K < 1` means `h(t) <= t` everywhere (`K = 0` for implicit deadlines).
fn slack_below_one_ns(tasks: &[DemandTask]) -> bool {
    let fractions: Option<Vec<(u64, u64)>> = tasks
        .iter()
        .map(|k| {
            let weight = k.t.saturating_sub(k.d).checked_mul(k.c)?;
            Some((u64::try_from(weight).ok()?, u64::try_from(k.t).ok()?))
        })
        .collect();
    fractions.is_some_and(|f| exact::cmp_sum(&f, 1, 1) == Ordering::Less)
}

/// `L`: the least of `La`, `H` and `Lb` that is known (module docs), or
/// `None` when none is.
fn testing_interval(
    tasks: &[DemandTask],
    b_max: u128,
    blocking_horizon: u128,
    u_vs_one: Ordering,
) -> Option<u128> {
    let d_max = tasks.iter().map(|k| k.d).max().unwrap_or(0);
    let la = if u_vs_one == Ordering::Less {
        let terms: Vec<(u128, u128, u128)> = tasks
            .iter()
            .map(|k| (k.t.saturating_sub(k.d), k.c, k.t))
            .collect();
        exact::demand_horizon(b_max, &terms).map(|la| la.max(d_max))
    } else {
        None
    };
    // B(t) = 0 past its horizon, so periodicity holds from there on.
    let hyperperiod =
        hyperperiod_below(tasks, la.unwrap_or(u128::MAX)).map(|h| h.max(blocking_horizon));
    let known = [la, hyperperiod].into_iter().flatten().min();
    // At U = 1 exactly the busy period is the hyperperiod.
    let lb = if u_vs_one == Ordering::Less {
        let workload = DemandBound {
            stairs: tasks
                .iter()
                .map(|k| Staircase::releases(k.j, k.t, k.c, None))
                .collect(),
            surplus: Vec::new(),
            constant: b_max,
        };
        demand_search::busy_period(&workload, known)
    } else {
        None
    };
    [known, lb].into_iter().flatten().min()
}

/// The hyperperiod when it is below `limit` and fits in 64 bits (the
/// catalog's limit): the least common multiple grows with every period, so
/// the computation stops as soon as it passes either.
fn hyperperiod_below(tasks: &[DemandTask], limit: u128) -> Option<u128> {
    let limit = limit.min(u128::from(u64::MAX));
    tasks.iter().try_fold(1u128, |lcm, k| {
        let (mut a, mut b) = (lcm, k.t);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        Some(lcm / a * k.t).filter(|&l| l <= limit)
    })
}

/// `h(t) + B(t) <= t` at every step of `h` and `B` in `[min_i (Di − Ji), below)`.
fn every_point(tasks: &[DemandTask], blocking: &EdfBlocking, below: u128) -> Verdict {
    let mut breaks: Vec<u128> = blocking.breakpoints().map(u128::from).collect();
    breaks.sort_unstable();
    breaks.dedup();
    let mut breaks = breaks.into_iter().peekable();
    let mut next: Vec<u128> = tasks.iter().map(|k| k.d).collect();
    let mut h: u128 = 0;
    for _ in 0..POINT_CAP {
        // Each point costs O(n): poll the caller's stop flag at each.
        if rtlab_model::cancel::requested() {
            return None;
        }
        let deadline = next.iter().copied().min().unwrap_or(u128::MAX);
        let t = breaks.peek().copied().unwrap_or(u128::MAX).min(deadline);
        if t >= below {
            return Some(true);
        }
        while breaks.next_if(|&b| b <= t).is_some() {}
        for (n, k) in next.iter_mut().zip(tasks) {
            if *n == t {
                *n += k.t;
                h += k.c;
            }
        }
        // Before the first deadline no job can miss.
        if h == 0 {
            continue;
        }
        let b = u128::from(blocking.at(u64::try_from(t).unwrap_or(u64::MAX)));
        if h + b > t {
            return Some(false);
        }
    }
    None
}

/// `h(t)`, the demand of jobs with release and deadline in `[0, t]`.
fn demand(tasks: &[DemandTask], t: u128) -> u128 {
    tasks
        .iter()
        .filter(|k| t >= k.d)
        .map(|k| ((t - k.d) / k.t + 1) * k.c)
        .sum()
}

/// The demand bound `h(t)` of `set` at `t` nanoseconds (without blocking).
pub fn demand_at(set: &TaskSet, t: u64) -> u128 {
    let tasks: Vec<DemandTask> = set
        .tasks
        .iter()
        .filter(|k| !k.period.is_zero() && k.jitter < k.deadline)
        .map(DemandTask::of)
        .collect();
    demand(&tasks, u128::from(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Nanos;

    fn set(tasks: &[(u64, u64, u64)]) -> TaskSet {
        TaskSet::new(
            "s",
            tasks
                .iter()
                .enumerate()
                .map(|(i, &(c, d, t))| {
                    Task::new(format!("t{i}"), Nanos::from_ns(t), Nanos::from_ns(c))
                        .with_deadline(Nanos::from_ns(d))
                })
                .collect(),
        )
    }

    #[test]
    fn demand_function_steps_at_deadlines() {
        let s = set(&[(1, 3, 4), (2, 5, 6)]);
        assert_eq!(demand_at(&s, 2), 0);
        assert_eq!(demand_at(&s, 3), 1);
        assert_eq!(demand_at(&s, 5), 3);
        assert_eq!(demand_at(&s, 7), 4);
        assert_eq!(demand_at(&s, 11), 7);
    }

    #[test]
    fn constrained_deadlines_exact() {
        // U = 0.9, but τ0 (C=2, D=2, T=4), τ1 (C=2, D=3, T=5): h(3) = 2 + 2 = 4 > 3.
        assert_eq!(
            verdict(&set(&[(2, 2, 4), (2, 3, 5)]), &EdfBlocking::none()),
            Some(false)
        );
        // τ0 (1, 2, 4), τ1 (2, 4, 6): h(2) = 1, h(4) = 3, h(6) = 4, h(10) = 6, ...
        assert_eq!(
            verdict(&set(&[(1, 2, 4), (2, 4, 6)]), &EdfBlocking::none()),
            Some(true)
        );
    }

    #[test]
    fn full_utilization_uses_the_busy_period() {
        assert_eq!(
            verdict(&set(&[(2, 4, 4), (3, 6, 6)]), &EdfBlocking::none()),
            Some(true)
        );
        assert_eq!(
            verdict(&set(&[(2, 4, 4), (3, 3, 6)]), &EdfBlocking::none()),
            Some(false)
        );
    }

    #[test]
    fn jitter_at_or_beyond_deadline_misses() {
        let mut s = set(&[(1, 5, 10)]);
        s.tasks[0].jitter = Nanos::from_ns(5);
        assert_eq!(verdict(&s, &EdfBlocking::none()), Some(false));
    }

    #[test]
    fn utilization_one_exactly_is_decided_up_to_the_hyperperiod() {
        // U = 1/2 + 1/2 exactly, H = 12: deadlines 3, 6, 7, 11, 12 carry
        // h = 2, 5, 7, 9, 12.
        assert_eq!(
            verdict(&set(&[(2, 3, 4), (3, 6, 6)]), &EdfBlocking::none()),
            Some(true)
        );
        // D2 = 5: h(11) = 3 * 2 + 2 * 3 = 12 > 11.
        assert_eq!(
            verdict(&set(&[(2, 3, 4), (3, 5, 6)]), &EdfBlocking::none()),
            Some(false)
        );
    }

    /// Two large coprime periods: H = lcm(2 ms, 4p, 4q) ≈ 3.7e25 ns does not
    /// fit in 64 bits, and U = 1/2 + 1/4 + 1/4 = 1 exactly, so no finite
    /// testing interval is known.
    const P: u64 = 4_294_967_311;
    const Q: u64 = 4_294_967_357;
    const A: u64 = 1_000_000;

    #[test]
    fn astronomical_hyperperiod_at_utilization_one() {
        // A violation early on is still found: h(p) >= p + p/2.
        let early = set(&[(A, A, 2 * A), (P, P, 4 * P), (Q, 4 * Q, 4 * Q)]);
        assert!(early.hyperperiod().is_err());
        assert_eq!(verdict(&early, &EdfBlocking::none()), Some(false));
        // K = Σ (T − D) U = 1/4 < 1 ns: schedulable whatever H is.
        let within = set(&[(A, 2 * A, 2 * A), (P, 4 * P, 4 * P), (Q, 4 * Q - 1, 4 * Q)]);
        assert_eq!(verdict(&within, &EdfBlocking::none()), Some(true));
        // K = 1: h(t) = t + 1 − Σ Ci frac((t − Di)/Ti), so h(t) > t needs
        // all three nearly aligned, which first happens beyond 1e18 ns
        // (t mod 4p < 4 and (t + 4) mod 4q small need k (p − q) ≡ 0 mod q).
        // Nothing decides it cheaply, and the verdict says so.
        let open = set(&[(A, 2 * A, 2 * A), (P, 4 * P, 4 * P), (Q, 4 * Q - 4, 4 * Q)]);
        assert_eq!(verdict(&open, &EdfBlocking::none()), None);
    }

    #[test]
    fn utilization_just_below_one_is_decided_quickly() {
        // U = 1 − 1/(4Q): La is about 4Q * 4Q / 2 ≈ 1.5e20 ns, yet h(P)
        // exceeds P after a few thousand deadlines of the 2 ms task.
        let s = set(&[(A, A, 2 * A), (P, P, 4 * P), (Q - 1, 4 * Q, 4 * Q)]);
        assert_eq!(verdict(&s, &EdfBlocking::none()), Some(false));
    }
}
