//! Schedulability tests for **global** scheduling on `m` identical
//! processors: one module per published test, each stating its formula.
//!
//! | module | scheduler | test |
//! | --- | --- | --- |
//! | [`gfb`] | G-EDF | `Σ δi <= m − (m − 1) δmax` (Goossens, Funk & Baruah 2003) |
//! | [`bak`] | G-EDF | Baker 2003, per-task `λ` condition |
//! | [`bcl`] | G-EDF | Bertogna, Cirinei & Lipari 2009, interference in the problem window |
//! | [`edf_rta`] | G-EDF | Bertogna & Cirinei 2007 RTA with slack iteration |
//! | [`fp_rta`] | G-FP | Bertogna & Cirinei 2007 RTA |
//! | [`rta_lc`] | G-FP | Guan, Stigge, Yi & Yu 2009, limited carry-in |
//! | [`tardiness`] | G-EDF | Devi & Anderson 2008 tardiness bound (soft real-time, a bound not a verdict) |
//! | [`priority`] | G-FP | RM, DM, given and DkC (Davis & Burns 2009) orders |
//!
//! Every test is **sufficient**: `Some(true)` is a proof, `None` is "not
//! proven", never a wrong "schedulable". `Some(false)` is said only when a
//! necessary condition fails: `U = Σ Ci/Ti > m` (compared exactly), or a
//! task with `Ci > Di`. The tests assume the sporadic model of the papers:
//! constrained deadlines (`D <= T`; only GFB's density form is stated for
//! them, the others need them too, so a set with `D > T` is "not proven"),
//! no release jitter and no shared resources (a set with either is "not
//! proven": multiprocessor locking is out of scope). Release offsets are
//! ignored (the synchronous and sporadic cases are what the bounds cover).
//!
//! The response-time analyses work in integer nanoseconds and use the
//! papers' discrete-time form (`R − Ck + 1`, floors): every release,
//! deadline and scheduling decision of rtlab's simulator falls on a whole
//! nanosecond.

use rtlab_model::TaskSet;

use crate::exact;
use crate::verdict::{Response, Verdict};

pub mod bak;
pub mod bcl;
pub mod edf_rta;
pub mod fp_rta;
pub mod gfb;
pub mod priority;
pub mod rta_lc;
pub mod tardiness;

/// Fixed-point steps of one response-time iteration before giving up
/// ("not proven").
pub const ITERATION_CAP: u64 = 100_000;

/// Steps taken one by one before [`bound`] accelerates.
pub const EXACT_STEPS: u64 = 100;

/// Interference terms (one per interfering task per fixed-point step) one
/// response-time analysis of a set may evaluate, 1 to 3 s of one core in
/// a release build. Past it the analysis gives up ([`Work::gave_up`]):
/// every bound not yet found is "not proven". The cost of the RTAs grows
/// with the square of the task count times their rounds and steps (10,000
/// tasks on 1,024 processors took 196 s under G-EDF's RTA); the cap is
/// counted, not timed, so a verdict is the same on every machine.
pub const WORK_CAP: u64 = 100_000_000;

/// What one analysis has left of its [`WORK_CAP`].
#[derive(Debug)]
pub struct Work {
    left: std::cell::Cell<u64>,
    gave_up: std::cell::Cell<bool>,
}

impl Default for Work {
    fn default() -> Work {
        Work::with_cap(WORK_CAP)
    }
}

impl Work {
    /// A budget of `cap` interference terms.
    pub fn with_cap(cap: u64) -> Work {
        Work {
            left: std::cell::Cell::new(cap),
            gave_up: std::cell::Cell::new(false),
        }
    }

    /// True once a step asked for more than was left: the analysis gave
    /// up, and what it did not bound is "not proven" for that reason.
    pub fn gave_up(&self) -> bool {
        self.gave_up.get()
    }

    /// Takes `terms` from the budget; false (and the analysis given up)
    /// when there are not that many left.
    fn spend(&self, terms: usize) -> bool {
        match self.left.get().checked_sub(terms as u64) {
            Some(left) if !self.gave_up.get() => {
                self.left.set(left);
                true
            }
            _ => {
                self.gave_up.set(true);
                false
            }
        }
    }
}

/// The verdict of a response-time analysis from its bounds: what
/// [`sporadic`] decides without them, else every task within its deadline.
pub(crate) fn verdict_of(set: &TaskSet, m: u32, responses: &[Response]) -> Verdict {
    match sporadic(set, m, true) {
        Err(v) => v,
        Ok(_) => proven(responses),
    }
}

/// A response-time bound from the recurrence `x = f(x)` of the RTAs here,
/// starting at `start` (`Ck`): the first `x` with `f(x) <= x`, or `None`
/// once `f(x) > limit` (`Dk`), after [`ITERATION_CAP`] steps, or when
/// `work` runs out (each step costs `terms`).
///
/// Any `x` with `f(x) <= x` bounds the response time (the papers' proofs
/// argue from such an `x`: were the job unfinished at `x`, the
/// interference would exceed `m (x − Ck + 1)`, which the workload bounds
/// exclude), and `f` is monotone, so from below the first such `x` is the
/// least fixed point. In integer nanoseconds the steps can be one
/// nanosecond long (while `m` interferers are capped at `x − Ck + 1`), so
/// after [`EXACT_STEPS`] the iteration accelerates: `x` grows by at least
/// `(x − Ck + 1) / 64` per step. The bound found is then valid and at most
/// that one step (under 1.6 % of `x`) above the least fixed point.
pub(crate) fn bound(
    work: &Work,
    terms: usize,
    start: i128,
    limit: i128,
    mut f: impl FnMut(i128) -> i128,
) -> Option<i128> {
    let mut x = start;
    for step in 0..ITERATION_CAP {
        // Each step of `f` evaluates `terms` interference terms.
        if !work.spend(terms) {
            return None;
        }
        let next = f(x);
        if next <= x {
            return Some(x);
        }
        if next > limit {
            return None;
        }
        x = if step >= EXACT_STEPS {
            next.max(x + (x - start + 1) / 64).min(limit)
        } else {
            next
        };
    }
    None
}

/// A sporadic task in nanoseconds: execution time, relative deadline,
/// minimum inter-arrival time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sporadic {
    pub c: i128,
    pub d: i128,
    pub t: i128,
}

/// The tasks as [`Sporadic`]s, or the verdict every global test gives
/// without looking further: `Some(false)` when `U > m` or some `C > D`,
/// `None` (not proven) with jitter, critical sections, a zero parameter or
/// (when `constrained`) a deadline beyond its period.
pub(crate) fn sporadic(set: &TaskSet, m: u32, constrained: bool) -> Result<Vec<Sporadic>, Verdict> {
    if set.tasks.is_empty() || m == 0 {
        return Err(None);
    }
    let mut out = Vec::with_capacity(set.tasks.len());
    for task in &set.tasks {
        if task.period.is_zero() || task.deadline.is_zero() || task.wcet.is_zero() {
            return Err(None);
        }
        if task.wcet > task.deadline {
            return Err(Some(false));
        }
        if !task.jitter.is_zero() || !task.critical_sections.is_empty() {
            return Err(None);
        }
        if constrained && task.deadline > task.period {
            return Err(None);
        }
        out.push(Sporadic {
            c: i128::from(task.wcet.as_ns()),
            d: i128::from(task.deadline.as_ns()),
            t: i128::from(task.period.as_ns()),
        });
    }
    if exceeds_processors(set, m) {
        return Err(Some(false));
    }
    Ok(out)
}

/// `Σ Ci/Ti > m`, exactly: no scheduler meets every deadline.
pub fn exceeds_processors(set: &TaskSet, m: u32) -> bool {
    let u: Vec<exact::Fraction> = set
        .tasks
        .iter()
        .map(|t| (t.wcet.as_ns(), t.period.as_ns().max(1)))
        .collect();
    exact::cmp_sum(&u, u64::from(m), 1) == std::cmp::Ordering::Greater
}

/// Response times as a verdict: schedulable when every one is within its
/// deadline, else not proven.
pub(crate) fn proven(responses: &[Response]) -> Verdict {
    responses
        .iter()
        .all(|r| matches!(r, Response::Within(_)))
        .then_some(true)
}

/// `R` in nanoseconds as a [`Response`] within the deadline.
pub(crate) fn within(r: i128) -> Response {
    match u64::try_from(r) {
        Ok(r) => Response::Within(rtlab_model::Nanos::from_ns(r)),
        Err(_) => Response::Unknown,
    }
}

/// The response times of a set the pre-check decided (`U > m`, ...):
/// unknown for every task.
pub(crate) fn unknown(set: &TaskSet) -> Vec<Response> {
    vec![Response::Unknown; set.tasks.len()]
}

#[cfg(test)]
pub(crate) mod testing {
    use rtlab_model::{Nanos, Task, TaskSet};

    /// Tasks `(C, D, T)` in whole nanoseconds (the papers' integer time).
    pub fn set(tasks: &[(u64, u64, u64)]) -> TaskSet {
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
}
