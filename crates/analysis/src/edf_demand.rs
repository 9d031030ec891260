//! The EDF processor-demand criterion, evaluated with Quick Processor-demand
//! Analysis (QPA).
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
//! and `L = min(La, Lb)` (`La` only when `U < 1`):
//!
//! - `La = max( max_i (Di − Ji), Σ_i max(0, Ti − Di + Ji) Ui / (1 − U) )`
//!   (George, Rivierre & Spuri 1996; computed in floating point and rounded
//!   *up*, which only widens the interval checked);
//! - `Lb`, the synchronous busy period: least `w` with
//!   `w = Σ ⌈(w + Ji)/Ti⌉ Ci` (Ripoll, Crespo & Mok 1996).
//!
//! QPA (Zhang & Burns, *Schedulability Analysis for Real-Time Systems with
//! EDF Scheduling*, IEEE TC 58(9), 2009) walks backwards from the last
//! deadline before `L`: `t ← h(t)` while `h(t) < t`, else `t ←` the previous
//! deadline; the set is schedulable iff it reaches `h(t) <= d_min`.
//!
//! When every `Di − Ji >= Ti` (and there is no blocking) `h(t) <= U t`, so
//! `U <= 1` decides at once. With SRP or DFP blocking the condition is `h(t) + B(t) <= t`
//! ([`crate::blocking::EdfBlocking`], Baruah 2006). `B(t)` is not monotone,
//! so then every absolute deadline up to `L` is checked (at most
//! [`POINT_CAP`] of them, else inconclusive); `L` includes `max B` in both
//! bounds. Release offsets are ignored (the synchronous case is the worst).

use rtlab_model::TaskSet;

use crate::blocking::EdfBlocking;
use crate::exact;
use crate::liu_layland::utilizations;
use crate::rta::ITERATION_CAP;
use crate::verdict::{Outcome, Test, Verdict};
use std::cmp::Ordering;

/// Deadlines enumerated with blocking before giving up (inconclusive).
pub const POINT_CAP: u64 = 5_000_000;

/// A task in the demand computation, in nanoseconds.
#[derive(Debug, Clone, Copy)]
struct DemandTask {
    c: u128,
    t: u128,
    /// First absolute deadline: D − J (> 0).
    d: u128,
}

/// The processor-demand test (QPA; point-by-point with blocking).
pub fn analyse(set: &TaskSet, blocking: &EdfBlocking) -> Outcome {
    Outcome::set_only(Test::EdfDemand, verdict(set, blocking))
}

/// The verdict of [`analyse`].
pub fn verdict(set: &TaskSet, blocking: &EdfBlocking) -> Verdict {
    let mut tasks = Vec::with_capacity(set.tasks.len());
    for task in &set.tasks {
        if task.period.is_zero() {
            return None;
        }
        if task.jitter >= task.deadline {
            // Released at or after its deadline.
            return Some(false);
        }
        tasks.push(DemandTask {
            c: u128::from(task.wcet.as_ns()),
            t: u128::from(task.period.as_ns()),
            d: u128::from((task.deadline - task.jitter).as_ns()),
        });
    }
    if tasks.is_empty() {
        return Some(true);
    }
    let fractions = utilizations(set);
    let u_vs_one = exact::cmp_sum(&fractions, 1, 1);
    if u_vs_one == Ordering::Greater {
        return Some(false);
    }
    // With every D − J >= T, h(t) <= U t: U <= 1 decides (Liu & Layland),
    // and the busy period at U = 1 can be as long as the hyperperiod.
    if blocking.is_none() && tasks.iter().all(|k| k.d >= k.t) {
        return Some(true);
    }
    let b_max = u128::from(blocking.max());
    let la = (u_vs_one == Ordering::Less)
        .then(|| bound_la(set, &tasks, b_max))
        .flatten();
    // Lb matters only when it is below La: stop iterating once past La.
    let lb = busy_period(set, &tasks, b_max, la);
    let l = match (la, lb) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => return None,
    };
    if blocking.is_none() {
        qpa(&tasks, l)
    } else {
        every_deadline(&tasks, l, blocking)
    }
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
        .map(|k| DemandTask {
            c: u128::from(k.wcet.as_ns()),
            t: u128::from(k.period.as_ns()),
            d: u128::from((k.deadline - k.jitter).as_ns()),
        })
        .collect();
    demand(&tasks, u128::from(t))
}

/// The largest absolute deadline strictly before `t`.
fn deadline_before(tasks: &[DemandTask], t: u128) -> Option<u128> {
    tasks
        .iter()
        .filter(|k| k.d < t)
        .map(|k| k.d + (t - 1 - k.d) / k.t * k.t)
        .max()
}

fn qpa(tasks: &[DemandTask], l: u128) -> Verdict {
    let d_min = tasks.iter().map(|k| k.d).min().unwrap_or(0);
    let Some(mut t) = deadline_before(tasks, l + 1) else {
        return Some(true);
    };
    for _ in 0..ITERATION_CAP {
        let h = demand(tasks, t);
        if h > t {
            return Some(false);
        }
        if h <= d_min {
            return Some(true);
        }
        if h < t {
            t = h;
        } else {
            match deadline_before(tasks, t) {
                Some(d) => t = d,
                None => return Some(true),
            }
        }
    }
    None
}

fn every_deadline(tasks: &[DemandTask], l: u128, blocking: &EdfBlocking) -> Verdict {
    let mut next: Vec<u128> = tasks.iter().map(|k| k.d).collect();
    for _ in 0..POINT_CAP {
        let Some(t) = next.iter().copied().min().filter(|&t| t <= l) else {
            return Some(true);
        };
        let b = u128::from(blocking.at(u64::try_from(t).unwrap_or(u64::MAX)));
        if demand(tasks, t) + b > t {
            return Some(false);
        }
        for (n, k) in next.iter_mut().zip(tasks) {
            if *n == t {
                *n += k.t;
            }
        }
    }
    None
}

/// `La` in nanoseconds, rounded up; `None` when it is not finite.
fn bound_la(set: &TaskSet, tasks: &[DemandTask], b_max: u128) -> Option<u128> {
    let u = set.utilization();
    if u >= 1.0 {
        return None;
    }
    let slack: f64 = tasks
        .iter()
        .map(|k| (k.t as f64 - k.d as f64).max(0.0) * (k.c as f64 / k.t as f64))
        .sum::<f64>()
        + b_max as f64;
    let la = slack / (1.0 - u);
    if !la.is_finite() || la > 1e30 {
        return None;
    }
    let la = (la * (1.0 + 1e-9)).ceil() as u128 + 1;
    let d_max = tasks.iter().map(|k| k.d).max().unwrap_or(0);
    Some(la.max(d_max))
}

/// `Lb`, the synchronous busy period (with `max B` up front); `None` when
/// it exceeds `limit` or the iteration cap.
fn busy_period(
    set: &TaskSet,
    tasks: &[DemandTask],
    b_max: u128,
    limit: Option<u128>,
) -> Option<u128> {
    let mut w: u128 = b_max + tasks.iter().map(|k| k.c).sum::<u128>();
    for _ in 0..ITERATION_CAP {
        if limit.is_some_and(|l| w > l) {
            return None;
        }
        let next = b_max
            + set
                .tasks
                .iter()
                .zip(tasks)
                .map(|(task, k)| (w + u128::from(task.jitter.as_ns())).div_ceil(k.t) * k.c)
                .sum::<u128>();
        if next == w {
            return Some(w);
        }
        w = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::{Nanos, Task};

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
}
