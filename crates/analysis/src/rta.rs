//! Exact response-time analysis for preemptive fixed-priority scheduling,
//! with release jitter, blocking and arbitrary deadlines.
//!
//! For task τi with execution time Ci, period Ti, deadline Di, release
//! jitter Ji and blocking Bi, and the set hp(i) of tasks at least as urgent,
//! the level-i busy period is examined job by job (Lehoczky, *Fixed priority
//! scheduling of periodic task sets with arbitrary deadlines*, RTSS 1990;
//! Tindell, Burns & Wellings, *An extendible approach for analysing fixed
//! priority hard real-time tasks*, Real-Time Systems 6(2), 1994):
//!
//! ```text
//! w(q) = Bi + (q+1) Ci + Σ_{j ∈ hp(i)} ⌈(w(q) + Jj) / Tj⌉ Cj      (least fixed point)
//! R(q) = w(q) − q Ti + Ji
//! Ri   = max over q = 0, 1, ... of R(q), stopping at the first q with w(q) <= (q+1) Ti − Ji
//! ```
//!
//! The reported response time is `R = w + J` and the task is schedulable iff
//! `R <= D`. For constrained deadlines (D <= T) only `q = 0` is ever needed,
//! which is the classic recurrence of Joseph & Pandya (1986) and Audsley,
//! Burns, Richardson, Tindell & Wellings (1993).
//!
//! All arithmetic is on integer nanoseconds (`u128` inside, so nothing
//! overflows); the iteration stops as soon as R exceeds D, and gives up with
//! [`Response::Unknown`] after [`ITERATION_CAP`] steps. When a busy period
//! outlasts its first job, the level's utilization is compared with 1
//! exactly: above 1 the busy period never ends and R grows without bound, so
//! the answer is R > D at once rather than after the cap (an arbitrary
//! deadline far beyond T would otherwise take millions of jobs to pass).

use rtlab_model::{Nanos, TaskSet};

use crate::exact;
use crate::priority::Priorities;
use crate::verdict::{Outcome, Response, Test};

/// Fixed-point steps after which an analysis gives up (inconclusive).
pub const ITERATION_CAP: u64 = 10_000_000;

/// A source of interference: `cost` released every `period` with release
/// jitter `jitter`, all in nanoseconds. Higher-priority tasks are
/// interferers; so are kernel activities such as timer ticks
/// ([`crate::overhead_rta`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interferer {
    /// Minimum time between releases (ns, > 0).
    pub period: u64,
    /// Release jitter (ns).
    pub jitter: u64,
    /// Execution demanded per release (ns).
    pub cost: u64,
}

/// The task under analysis, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Analysed {
    /// Execution time per job, including any per-job overhead.
    pub wcet: u64,
    /// Period.
    pub period: u64,
    /// Relative deadline.
    pub deadline: u64,
    /// Release jitter.
    pub jitter: u64,
    /// Blocking (non-preemptible lower-priority work), once per busy period.
    pub blocking: u64,
}

/// The worst-case response time of `task` when `interferers` preempt it, by
/// the busy-period recurrence above.
pub fn response_time(task: &Analysed, interferers: &[Interferer]) -> Response {
    // Every step below costs O(n): poll the caller's stop flag
    // (rtlab_model::cancel) before the first and at each.
    if rtlab_model::cancel::requested() {
        return Response::Unknown;
    }
    if task.period == 0 || interferers.iter().any(|j| j.period == 0) {
        return Response::Unknown;
    }
    let (c, t, d, jit, b) = (
        u128::from(task.wcet),
        u128::from(task.period),
        u128::from(task.deadline),
        u128::from(task.jitter),
        u128::from(task.blocking),
    );
    let mut steps = 0u64;
    let mut worst = 0u128;
    let mut q: u128 = 0;
    // A lower bound on w(0): every interferer releases at least once.
    let mut w = b + c + interferers.iter().map(|j| u128::from(j.cost)).sum::<u128>();
    loop {
        // Least fixed point of w(q), from below.
        loop {
            steps += 1;
            if steps > ITERATION_CAP || rtlab_model::cancel::requested() {
                return Response::Unknown;
            }
            let mut next = b + (q + 1) * c;
            for j in interferers {
                let releases = ceil_div(w + u128::from(j.jitter), j.period);
                next += releases * u128::from(j.cost);
            }
            // R(q) = next − qT + J > D  ⇔  next + J > D + qT.
            if next + jit > d + q * t {
                return Response::Exceeds;
            }
            if next == w {
                break;
            }
            w = next;
        }
        worst = worst.max(w + jit - q * t);
        // Busy period over when the next job is released after w(q).
        if w + jit <= (q + 1) * t {
            break;
        }
        if q == 0 && level_overloaded(task, interferers) {
            // The busy period never ends: R grows without bound.
            return Response::Exceeds;
        }
        q += 1;
        // w(q+1) >= w(q) + C: a valid start from below.
        w += c;
    }
    match u64::try_from(worst) {
        Ok(r) => Response::Within(Nanos::from_ns(r)),
        Err(_) => Response::Unknown,
    }
}

/// ⌈a / b⌉ (`b > 0`), by a 64-bit division whenever `a` fits in 64 bits
/// (always, in practice: nanoseconds below 584 years), which is several
/// times faster than the 128-bit one; the result is the same.
#[inline]
fn ceil_div(a: u128, b: u64) -> u128 {
    match u64::try_from(a) {
        Ok(a) => u128::from(a.div_ceil(b)),
        Err(_) => a.div_ceil(u128::from(b)),
    }
}

/// `C/T + Σ Cj/Tj > 1` over the task and its interferers, exactly: the
/// level busy period is then endless. Checked only once a busy period
/// outlasts the first job (so constrained deadlines never pay for it).
fn level_overloaded(task: &Analysed, interferers: &[Interferer]) -> bool {
    let fractions: Vec<(u64, u64)> = interferers
        .iter()
        .map(|j| (j.cost, j.period))
        .chain(std::iter::once((task.wcet, task.period)))
        .collect();
    exact::cmp_sum(&fractions, 1, 1) == std::cmp::Ordering::Greater
}

/// Exact RTA of every task of `set` under `priorities`, with per-task
/// blocking `blocking[i]` (use [`crate::blocking`] for critical sections,
/// or zeros). Tasks at a level equal to τi's count as interference for τi.
///
/// # Panics
///
/// Never on user input; `priorities` and `blocking` must have one entry per
/// task (programming error otherwise).
pub fn analyse(set: &TaskSet, priorities: &Priorities, blocking: &[Nanos]) -> Outcome {
    let mut interferers = Vec::with_capacity(set.tasks.len());
    let responses = (0..set.tasks.len())
        .map(|i| {
            // O(n) per task even before its recurrence: poll the caller's
            // stop flag (rtlab_model::cancel) first.
            if rtlab_model::cancel::requested() {
                return Response::Unknown;
            }
            interferers.clear();
            interferers.extend(higher_or_equal(set, priorities, i));
            response_time(&analysed(set, i, blocking[i]), &interferers)
        })
        .collect();
    Outcome::from_responses(Test::Rta, responses)
}

/// Exact RTA verdict without blocking, stopping at the first task that
/// misses (the fast path used by sweeps and priority assignment).
///
/// Tasks are taken from the most urgent down, so that the interferers of
/// the task at rank r are the r tasks before it, one slice of a list built
/// once (tasks sharing a level also interfere with each other). The
/// verdict does not depend on the order: any miss gives `Some(false)`, else
/// any inconclusive task gives `None`.
pub fn is_schedulable(set: &TaskSet, priorities: &Priorities) -> Option<bool> {
    let order = priorities.order();
    let by_urgency: Vec<Interferer> = order
        .iter()
        .map(|&i| {
            let t = &set.tasks[i];
            Interferer {
                period: t.period.as_ns(),
                jitter: t.jitter.as_ns(),
                cost: t.wcet.as_ns(),
            }
        })
        .collect();
    let mut tied = Vec::new();
    let mut all = Some(true);
    let mut rank = 0;
    while rank < order.len() {
        let level = priorities.level(order[rank]);
        let group_end = rank
            + order[rank..]
                .iter()
                .take_while(|&&i| priorities.level(i) == level)
                .count();
        for r in rank..group_end {
            let interferers = if group_end == rank + 1 {
                &by_urgency[..r]
            } else {
                tied.clear();
                tied.extend((0..group_end).filter(|&k| k != r).map(|k| by_urgency[k]));
                &tied[..]
            };
            match response_time(&analysed(set, order[r], Nanos::ZERO), interferers) {
                Response::Within(_) => {}
                Response::Exceeds => return Some(false),
                Response::Unknown => all = None,
            }
        }
        rank = group_end;
    }
    all
}

/// Task `i` as the analysed task, with blocking `blocking`.
pub fn analysed(set: &TaskSet, i: usize, blocking: Nanos) -> Analysed {
    let t = &set.tasks[i];
    Analysed {
        wcet: t.wcet.as_ns(),
        period: t.period.as_ns(),
        deadline: t.deadline.as_ns(),
        jitter: t.jitter.as_ns(),
        blocking: blocking.as_ns(),
    }
}

/// The tasks other than `i` whose level is at least τi's, as interferers.
pub fn higher_or_equal<'a>(
    set: &'a TaskSet,
    priorities: &'a Priorities,
    i: usize,
) -> impl Iterator<Item = Interferer> + 'a {
    let level = priorities.level(i);
    set.tasks
        .iter()
        .enumerate()
        .filter(move |&(j, _)| j != i && priorities.level(j) >= level)
        .map(|(_, t)| Interferer {
            period: t.period.as_ns(),
            jitter: t.jitter.as_ns(),
            cost: t.wcet.as_ns(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(c: u64, t: u64, d: u64) -> Analysed {
        Analysed {
            wcet: c,
            period: t,
            deadline: d,
            jitter: 0,
            blocking: 0,
        }
    }

    fn hp(c: u64, t: u64) -> Interferer {
        Interferer {
            period: t,
            jitter: 0,
            cost: c,
        }
    }

    #[test]
    fn single_task_and_simple_interference() {
        assert_eq!(
            response_time(&task(3, 10, 10), &[]),
            Response::Within(Nanos::from_ns(3))
        );
        // C=2 under (1,4): w = 2+1 = 3, ⌈3/4⌉ = 1 → 3.
        assert_eq!(
            response_time(&task(2, 10, 10), &[hp(1, 4)]),
            Response::Within(Nanos::from_ns(3))
        );
        assert_eq!(
            response_time(&task(4, 10, 5), &[hp(2, 4)]),
            Response::Exceeds
        );
    }

    #[test]
    fn overloaded_level_exceeds_at_once() {
        // Level utilization 1/2 + 1000001/2000000 > 1 and D = 1000 s: the
        // busy period never ends, R grows by 1 ns per job; without the exact
        // utilization check the iteration cap would leave it unknown.
        let over = Analysed {
            deadline: 1_000_000_000_000,
            ..task(1_000_001, 2_000_000, 0)
        };
        assert_eq!(response_time(&over, &[hp(1, 2)]), Response::Exceeds);
        // At exactly 1 the busy period is the hyperperiod (2 ms): decided.
        let full = Analysed {
            deadline: 1_000_000_000_000,
            ..task(1_000_000, 2_000_000, 0)
        };
        assert!(matches!(
            response_time(&full, &[hp(1, 2)]),
            Response::Within(_)
        ));
    }

    #[test]
    fn zero_period_is_inconclusive_not_a_panic() {
        assert_eq!(response_time(&task(1, 0, 1), &[]), Response::Unknown);
        assert_eq!(
            response_time(&task(1, 5, 5), &[hp(1, 0)]),
            Response::Unknown
        );
    }

    #[test]
    fn the_fast_verdict_is_the_full_analysis_verdict_with_ties_and_jitter() {
        use rtlab_model::generate::{generate_set, DeadlineModel, GeneratorConfig};
        let config = GeneratorConfig {
            tasks: 7,
            utilization: 0.85,
            deadlines: DeadlineModel::constrained(0.3, 1.0),
            ..GeneratorConfig::default()
        };
        let mut decided = [0; 3];
        for index in 0..300 {
            let mut set = generate_set(&config, index).unwrap();
            for (k, t) in set.tasks.iter_mut().enumerate() {
                t.jitter = Nanos::from_ns((index * 7 + k as u64 * 13) % 3 * 100_000);
            }
            // Levels with ties (1..=3) as well as distinct ones.
            let tied = Priorities((0..7).map(|k| ((index + k) % 3 + 1) as u32).collect());
            let distinct = crate::priority::assign(
                &set,
                rtlab_model::policy::PriorityAssignment::DeadlineMonotonic,
            )
            .unwrap();
            for priorities in [tied, distinct] {
                let full = analyse(&set, &priorities, &[Nanos::ZERO; 7]).schedulable;
                assert_eq!(is_schedulable(&set, &priorities), full, "set {index}");
                decided[match full {
                    Some(true) => 0,
                    Some(false) => 1,
                    None => 2,
                }] += 1;
            }
        }
        assert!(decided[0] > 50 && decided[1] > 50, "{decided:?}");
    }
}
