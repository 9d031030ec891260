//! Deciding `W(t) <= t` for every integer `t` in `[lo, hi]`, where the
//! demand bound `W` is a constant plus a sum of staircases: the search
//! behind the EDF processor-demand tests ([`crate::edf_demand`],
//! [`crate::edf_overheads`]).
//!
//! A staircase adds `cost` at each of its step points `first + k period`
//! (`k = 0, 1, ...`, at most `cap` steps), so `W` is nondecreasing and
//! constant between step points. The classic demand bound
//! `h(t) = Σ (⌊(t − Di)/Ti⌋ + 1) Ci` is one staircase per task.
//!
//! Two searches run interleaved and stop when they meet:
//!
//! - **backward**, Quick Processor-demand Analysis (Zhang & Burns, *Schedulability
//!   analysis for real-time systems with EDF scheduling*, IEEE TC 58(9),
//!   2009): from `u = hi`, if `W(u) > u` the set fails; otherwise every `t`
//!   in `[W(u), u]` satisfies `W(t) <= W(u) <= t` (W is monotone), so the
//!   search continues at `u = W(u) − 1`. (QPA's `t ← h(t)`, and its jump to
//!   the previous deadline when `h(t) = t`, are this rule read at step
//!   points.)
//! - **forward**, every step point from `lo` upwards in increasing order
//!   (with `W` updated incrementally), which finds an early violation in
//!   a few hundred points where QPA would crawl down from an enormous `hi`
//!   (near `U = 1`). This is the idea of QPA* (Zhang & Burns, *Improvement to
//!   Quick Processor-Demand Analysis for EDF-Scheduled Real-Time Systems*,
//!   ECRTS 2009): look at the start of the interval first, where
//!   unschedulable sets fail.
//!
//! Everything below the forward frontier and above the backward point is
//! verified; when they meet the set passes. After the first [`QPA_ALONE`]
//! backward steps (most sets need fewer), each backward step is followed
//! by [`FORWARD_PER_BACKWARD`] forward points; after [`BACKWARD_CAP`]
//! backward steps (or [`FORWARD_CAP`] forward points when there is no
//! finite `hi`) the search gives up and says so (`None`). Arithmetic is
//! `u128` and saturates, which can only make `W` look larger at values far
//! beyond any `hi` used.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::verdict::Verdict;

/// Backward (QPA) steps before the search gives up.
pub const BACKWARD_CAP: u64 = 200_000;

/// Backward steps before the forward scan starts.
pub const QPA_ALONE: u64 = 16;

/// Forward points checked per backward step.
pub const FORWARD_PER_BACKWARD: u64 = 8;

/// Forward points checked when no finite testing interval is known.
pub const FORWARD_CAP: u64 = BACKWARD_CAP * FORWARD_PER_BACKWARD;

/// `cost` at every point `first + k period`, at most `cap` of them, plus
/// `base` steps already taken below 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Staircase {
    first: u128,
    period: u128,
    cost: u128,
    base: u128,
    cap: Option<u128>,
}

impl Staircase {
    /// `cost` for each deadline `d, d + T, ...`: `(⌊(t − d)/T⌋ + 1) cost`
    /// for `t >= d` (`d >= 1`, `T >= 1`).
    pub fn deadlines(d: u128, period: u128, cost: u128) -> Staircase {
        Staircase {
            first: d.max(1),
            period: period.max(1),
            cost,
            base: 0,
            cap: None,
        }
    }

    /// `min(cap, ⌈(t + delta)/T⌉) cost` for `t >= 1`: the releases of a
    /// periodic source seen in a window of length `t` when each may be seen
    /// up to `delta` late (`cap = None` for no cap).
    pub fn releases(delta: u128, period: u128, cost: u128, cap: Option<u128>) -> Staircase {
        let period = period.max(1);
        // Points 1 − delta + k T; those <= 0 are already counted at t = 1.
        let (base, first) = if delta == 0 {
            (0, 1)
        } else {
            let base = (delta - 1) / period + 1;
            (base, base * period + 1 - delta)
        };
        Staircase {
            first,
            period,
            cost,
            base,
            cap,
        }
    }

    /// Steps taken at `t`.
    fn count(&self, t: u128) -> u128 {
        let steps = if t >= self.first {
            let x = t - self.first;
            // 64-bit division where it fits: several times faster.
            match (u64::try_from(x), u64::try_from(self.period)) {
                (Ok(x), Ok(p)) => u128::from(x / p) + 1,
                _ => x / self.period + 1,
            }
        } else {
            0
        };
        let n = self.base + steps;
        self.cap.map_or(n, |c| n.min(c))
    }

    /// The first step point after `t`, if the cap allows another.
    fn next_after(&self, t: u128) -> Option<u128> {
        if self.cap.is_some_and(|c| self.count(t) >= c) {
            return None;
        }
        if t < self.first {
            return Some(self.first);
        }
        let k = (t - self.first) / self.period + 1;
        k.checked_mul(self.period)?.checked_add(self.first)
    }
}

/// Releases seen in a window beyond the jobs due in it, each costing
/// `seen.cost`, at most `cap` of them: `min(cap, seen(t) − due(t))` where
/// `due` is the staircase `stairs[due]` of the same task. Its cost must not
/// exceed that staircase's, so that `W` stays nondecreasing (a release that
/// becomes due trades `seen.cost` for the due job's cost).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Surplus {
    /// Index of the task's due-jobs staircase in [`DemandBound::stairs`].
    pub due: usize,
    /// The releases seen in a window of length `t` (its `cost` per release).
    pub seen: Staircase,
    /// At most this many releases are not due.
    pub cap: u128,
}

impl Surplus {
    fn value(&self, seen: u128, due: u128) -> u128 {
        seen.saturating_sub(due)
            .min(self.cap)
            .saturating_mul(self.seen.cost)
    }
}

/// `W(t) = constant + Σ staircases + Σ surpluses`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DemandBound {
    /// The staircases.
    pub stairs: Vec<Staircase>,
    /// Releases not due in the window, per task (see [`Surplus`]).
    pub surplus: Vec<Surplus>,
    /// A demand present in every window (blocking).
    pub constant: u128,
}

impl DemandBound {
    /// `W(t)`.
    pub fn at(&self, t: u128) -> u128 {
        let stairs = self.stairs.iter().fold(self.constant, |w, s| {
            w.saturating_add(s.count(t).saturating_mul(s.cost))
        });
        self.surplus.iter().fold(stairs, |w, s| {
            w.saturating_add(s.value(s.seen.count(t), self.stairs[s.due].count(t)))
        })
    }
}

/// Fixed-point steps of [`busy_period`] before it gives up.
pub const BUSY_PERIOD_CAP: u64 = 64;

/// The least `w >= 1` with `R(w) <= w` (then `R(w) = w`), by the iteration
/// `w ← R(w)` from `w = 1`, where `R` is a nondecreasing workload such as
/// the synchronous busy period's `Σ ⌈(w + Ji)/Ti⌉ Ci`. `None` once `w`
/// passes `limit` or after [`BUSY_PERIOD_CAP`] steps: near full utilization
/// it creeps up for a very long time, and the other bounds serve then.
pub fn busy_period(workload: &DemandBound, limit: Option<u128>) -> Option<u128> {
    let mut w = 1;
    for _ in 0..BUSY_PERIOD_CAP {
        let next = workload.at(w);
        if next <= w {
            return Some(w);
        }
        if limit.is_some_and(|l| next > l) {
            return None;
        }
        w = next;
    }
    None
}

/// The step points of a [`DemandBound`] in increasing order, with `W`
/// maintained incrementally. Heap entries `(point, k)`: `k` below the number
/// of staircases is a staircase, above it a surplus's `seen`.
struct Forward<'a> {
    bound: &'a DemandBound,
    heap: BinaryHeap<Reverse<(u128, usize)>>,
    /// Steps taken, per staircase then per surplus.
    counts: Vec<u128>,
    /// The surplus of each staircase, if any.
    surplus_of: Vec<Option<usize>>,
    w: u128,
}

impl<'a> Forward<'a> {
    /// Positioned at `lo`: `W(lo)` known, the next points queued.
    fn new(bound: &'a DemandBound, lo: u128) -> Forward<'a> {
        let all = || {
            bound
                .stairs
                .iter()
                .chain(bound.surplus.iter().map(|s| &s.seen))
        };
        let counts: Vec<u128> = all().map(|s| s.count(lo)).collect();
        let heap = all()
            .enumerate()
            .filter_map(|(k, s)| s.next_after(lo).map(|p| Reverse((p, k))))
            .collect();
        let mut surplus_of = vec![None; bound.stairs.len()];
        for (k, s) in bound.surplus.iter().enumerate() {
            surplus_of[s.due] = Some(k);
        }
        Forward {
            w: bound.at(lo),
            bound,
            heap,
            counts,
            surplus_of,
        }
    }

    fn stair(&self, k: usize) -> &Staircase {
        let n = self.bound.stairs.len();
        match k.checked_sub(n) {
            None => &self.bound.stairs[k],
            Some(s) => &self.bound.surplus[s].seen,
        }
    }

    /// The contribution of surplus `s` at the current counts.
    fn surplus_value(&self, s: usize) -> u128 {
        let surplus = &self.bound.surplus[s];
        let seen = self.counts[self.bound.stairs.len() + s];
        surplus.value(seen, self.counts[surplus.due])
    }

    /// The next step point and `W` there.
    fn next(&mut self) -> Option<(u128, u128)> {
        let Reverse((p, _)) = *self.heap.peek()?;
        while let Some(&Reverse((q, k))) = self.heap.peek() {
            if q != p {
                break;
            }
            self.heap.pop();
            let n = self.bound.stairs.len();
            let surplus = match k.checked_sub(n) {
                None => self.surplus_of[k],
                Some(s) => Some(s),
            };
            let before = surplus.map_or(0, |s| self.surplus_value(s));
            self.counts[k] += 1;
            if k < n {
                self.w = self.w.saturating_add(self.bound.stairs[k].cost);
            }
            if let Some(s) = surplus {
                self.w = (self.w - before).saturating_add(self.surplus_value(s));
            }
            if let Some(next) = self.stair(k).next_after(q) {
                self.heap.push(Reverse((next, k)));
            }
        }
        Some((p, self.w))
    }

    /// Everything below this point has been passed.
    fn frontier(&self) -> Option<u128> {
        self.heap.peek().map(|Reverse((p, _))| *p)
    }
}

/// `W(t) <= t` for every integer `t` in `[lo, hi]`: `Some(true)`;
/// `Some(false)` when some `t` there has `W(t) > t` (the violation is
/// genuine: both searches only stop on one they evaluated); `None` when the
/// caps ran out first. `hi = None` means no finite interval is known: only a
/// violation can then be found.
pub fn search(bound: &DemandBound, lo: u128, hi: Option<u128>) -> Verdict {
    let lo = lo.max(1);
    if hi.is_some_and(|h| h < lo) {
        return Some(true);
    }
    if bound.at(lo) > lo {
        return Some(false);
    }
    let Some(hi) = hi else {
        let mut forward = Forward::new(bound, lo);
        for step in 0..FORWARD_CAP {
            if step.is_multiple_of(4096) && rtlab_model::cancel::requested() {
                return None;
            }
            match forward.next() {
                Some((p, w)) if w > p => return Some(false),
                Some(_) => {}
                // W is constant from here on and was within the last point.
                None => return Some(true),
            }
        }
        return None;
    };
    // Most sets need a handful of QPA steps: start the forward scan only
    // when QPA alone has not finished quickly.
    let mut forward: Option<Forward> = None;
    let mut u = hi;
    for step in 0..BACKWARD_CAP {
        // Verified: [lo, frontier) and (u, hi].
        if u < lo
            || forward
                .as_ref()
                .is_some_and(|f| f.frontier().is_none_or(|f| u < f))
        {
            return Some(true);
        }
        // W(u) costs O(n): poll the caller's stop flag at each step.
        if rtlab_model::cancel::requested() {
            return None;
        }
        let w = bound.at(u);
        if w > u {
            return Some(false);
        }
        if w <= lo {
            return Some(true);
        }
        u = w - 1;
        if step < QPA_ALONE {
            continue;
        }
        let forward = forward.get_or_insert_with(|| Forward::new(bound, lo));
        for _ in 0..FORWARD_PER_BACKWARD {
            match forward.next() {
                Some((p, w)) if p <= u && w > p => return Some(false),
                Some((p, _)) if p <= u => {}
                _ => return Some(true),
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every t in [lo, hi], one by one.
    fn brute(bound: &DemandBound, lo: u128, hi: u128) -> bool {
        (lo.max(1)..=hi).all(|t| bound.at(t) <= t)
    }

    #[test]
    fn staircases_count_their_steps() {
        let d = Staircase::deadlines(3, 4, 1);
        assert_eq!(
            (0..12).map(|t| d.count(t)).collect::<Vec<_>>(),
            [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3]
        );
        // ⌈(t + 5)/3⌉ for t >= 1, capped at 4.
        let r = Staircase::releases(5, 3, 1, Some(4));
        for t in 1..20u128 {
            assert_eq!(r.count(t), (t + 5).div_ceil(3).min(4), "t = {t}");
        }
        assert_eq!(r.next_after(4), Some(5));
        assert_eq!(r.next_after(7), None, "capped");
        // A tick: ⌈t/T⌉.
        let tick = Staircase::releases(0, 4, 1, None);
        for t in 1..20u128 {
            assert_eq!(tick.count(t), t.div_ceil(4));
        }
    }

    #[test]
    fn agrees_with_checking_every_point() {
        // Small random-ish bounds from a fixed LCG, against brute force.
        let mut x: u64 = 12345;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..3000 {
            let n = 1 + next(4) as usize;
            let mut bound = DemandBound {
                constant: u128::from(next(3)),
                ..DemandBound::default()
            };
            for _ in 0..n {
                let period = 1 + u128::from(next(12));
                let cost = 1 + u128::from(next(4));
                let delta = u128::from(next(6));
                bound.stairs.push(match next(4) {
                    0 => Staircase::releases(delta, period, cost, Some(2)),
                    1 => Staircase::releases(delta, period, cost, None),
                    _ => Staircase::deadlines(1 + delta + u128::from(next(15)), period, cost),
                });
                if next(2) == 0 {
                    // Releases seen up to `delta` late, not due yet.
                    bound.surplus.push(Surplus {
                        due: bound.stairs.len() - 1,
                        seen: Staircase::releases(
                            delta,
                            period,
                            1 + u128::from(next(cost as u64)),
                            None,
                        ),
                        cap: 1 + u128::from(next(2)),
                    });
                }
            }
            let lo = 1 + u128::from(next(10));
            let hi = lo + u128::from(next(200));
            let expected = brute(&bound, lo, hi);
            assert_eq!(
                search(&bound, lo, Some(hi)),
                Some(expected),
                "{bound:?} on [{lo}, {hi}]"
            );
            if !expected {
                assert_eq!(search(&bound, lo, None), Some(false), "{bound:?}");
            }
        }
    }
}
