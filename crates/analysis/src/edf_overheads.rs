//! EDF processor demand with scheduler overheads: paper 004's cost model
//! (Theorem 1, written for fixed priorities) carried over to EDF.
//!
//! # Costs
//!
//! As in [`crate::overhead_rta`] and the simulator, each evaluated at `n`
//! threads (default: the number of tasks) and rounded up to whole
//! nanoseconds: `C_preempt` (a release that takes the processor),
//! `C_nonpreempt` (a release that does not), `C_exit` (a completion and the
//! next dispatch), `C_timer` per tick of period `T_tic`, `C_system` (the
//! longest non-preemptible kernel section), and the simulator's
//! `C_release` (per release) and `C_schedule` (per scheduler call), which
//! are 0 in paper 004's profile.
//!
//! # The test
//!
//! With `Δi = Ji + T_tic` (a release is noticed at the next tick; tickless:
//! `Δi = Ji`), `o_rel = C_release + max(C_preempt, C_nonpreempt) +
//! C_schedule` per release and `o_job = o_rel + C_exit + C_schedule` per
//! job, the set is schedulable if `W(t) <= t` for every `t` in
//! `[min_i (Di − Δi), L]`, where
//!
//! ```text
//! W(t) = B + ⌈t/T_tic⌉ C_timer                                        ticks
//!      + Σ_i N_i(t) (Ci + o_job)                                       jobs due in the window
//!      + Σ_i min(⌈Di/Ti⌉, ⌈(t + Δi)/Ti⌉ − N_i(t)) o_rel               releases due after it
//! N_i(t) = ⌊(t − Di + Δi)/Ti⌋ + 1 for t >= Di − Δi, else 0
//!      + Σ_i min(⌈Di/Ti⌉, ⌈(t + Δi)/Ti⌉ − N_i(t)) o_rel               releases due after it
//! B    = max(C_system, C_exit + C_schedule) + max_t B_SRP(t)          blocking
//! ```
//!
//! (tickless: no `C_timer` term). Linux's model
//! ([`crate::overhead_rta::TimerModel::Hrtimer`]: releases from one-shot high-resolution timers,
//! the periodic tick still interrupting) has `Δi = Ji`, as tickless, and
//! keeps the `⌈t/T_tic⌉ C_timer` term with `T_tic` its periodic tick (none
//! without one). A task with `Di <= Δi` may be noticed
//! only at its deadline: the test fails. `L = min(La, Lb)`:
//! `U' = Σ (Ci + o_job)/Ti + C_timer/T_tic` (compared with 1 exactly; above
//! it the test fails), `La = ⌈K/(1 − U')⌉` with `W(t) <= U' t + K`,
//! `K = B + C_timer + Σ max(0, Ti − Di + Δi)(Ci + o_job)/Ti + Σ ⌈Di/Ti⌉ o_rel`,
//! and `Lb` the least `w` with
//! `w = B + ⌈w/T_tic⌉ C_timer + Σ ⌈(w + Δi)/Ti⌉ (Ci + o_job)`.
//! The search is [`crate::demand_search`]'s.
//!
//! # Derivation
//!
//! Let the first deadline miss be at `t2`, and call the jobs with deadline
//! `<= t2` *window jobs*. Let `t1` be the end of the last stretch before `t2`
//! in which the processor was idle or ran a later-deadline job with no
//! kernel work pending. In `[t1, t2)` the processor only runs kernel work and
//! window jobs: once a window job is visible the scheduler (called on every
//! noticed release) picks it over any later deadline. No window job was
//! visible and unfinished before `t1`, and the missed one was noticed before
//! `t2` (`Di > Δi`), so it is among the window jobs noticed in `[t1, t2)`.
//! The miss means their execution plus the kernel work in the window
//! exceeds `t = t2 − t1`. Counting that work:
//!
//! - A window job of τi is noticed at `>= t1`, so released at `>= t1 − Δi`,
//!   with its deadline `<= t2`: at most `⌊(t − Di + Δi)/Ti⌋ + 1` of them
//!   (Spuri's jitter term; paper 004's `T_tic` blocking becomes this shift).
//!   Each costs `Ci`, its release (`C_release` plus `C_preempt` or
//!   `C_nonpreempt` and a share of `C_schedule`) and its completion
//!   (`C_exit` and a share of `C_schedule`): EDF preempts at most once per
//!   job, at its release, as paper 004 charges `C_preempt + C_exit` per job.
//! - Any other release noticed in the window has its deadline after `t2`, so
//!   it happened in the last `Di` before `t2`: at most `⌈Di/Ti⌉` per task
//!   (one for constrained deadlines), where paper 004 charges
//!   `C_nonpreempt` for every lower-priority release; and with the due ones
//!   they are at most the `⌈(t + Δi)/Ti⌉` releases of τi noticed in a
//!   window of length `t`. It usually costs
//!   `C_nonpreempt`, but one that arrives while the kernel is still busy and
//!   no window job is visible yet can take the processor (`C_preempt`),
//!   hence the max.
//! - Ticks in the window: `⌈t/T_tic⌉ C_timer`, as in Theorem 1.
//! - Work already under way at `t1`: the completion of the later-deadline
//!   job that ran until `t1` (`C_exit + C_schedule`) or paper 004's
//!   non-preemptible section `C_system`, once; plus SRP blocking.
//!
//! So the miss implies `W(t) > t` with `t >= Di − Δi`. `La` follows from the
//! linear bound. For `Lb`: `R(w)` bounds the work *arriving* in
//! `[t1, t1 + w)` (every job noticed there at its full `Ci + o_job`, the
//! ticks, `B`); at the least `w` with `R(w) <= w`, a window at least that
//! long has done all of it by `t1 + w`, which is then a new `t1` with nothing
//! pending; so some violating window is shorter than `Lb`.
//!
//! With the overheads file's `[throttling]` table, Linux's fair server is one
//! more sporadic task (cost Q_fs, period and deadline P_fs); RT throttling
//! does not apply to SCHED_DEADLINE threads ([`crate::throttling`]).
//!
//! Locks' own costs (the simulator's `--lock-cost`) are not modelled, as in
//! `rta-overheads`. The property test in `crates/sim/tests/against_analysis.rs`
//! checks the test against the simulator with the same costs and tick.

use std::cmp::Ordering;

use rtlab_model::overheads::LinearCost;
use rtlab_model::TaskSet;

use crate::blocking::EdfBlocking;
use crate::demand_search::{self, DemandBound, Staircase, Surplus};
use crate::exact;
use crate::overhead_rta::Platform;
use crate::verdict::{Outcome, Test, Verdict};

/// The overhead-aware EDF demand test (module docs) for one platform.
pub fn analyse(set: &TaskSet, blocking: &EdfBlocking, platform: &Platform) -> Outcome {
    Outcome::set_only(Test::EdfDemandOverheads, verdict(set, blocking, platform))
}

/// The costs per job and per release, in nanoseconds.
struct Charges {
    per_release: u128,
    per_job: u128,
    timer: u128,
    blocking: u128,
}

impl Charges {
    fn of(platform: &Platform, threads: usize, srp: u64) -> Charges {
        let o = platform.overheads;
        let ns = |c: LinearCost| u128::from(c.at(threads).as_ns());
        let (schedule, exit) = (ns(o.schedule), ns(o.exit));
        // `wake` is the simulator's once per instant; per release bounds it.
        let per_release =
            ns(o.release) + ns(o.wake) + ns(o.preempt).max(ns(o.nonpreempt)) + schedule;
        Charges {
            per_release,
            per_job: per_release + exit + schedule,
            timer: ns(o.timer),
            blocking: ns(o.system).max(exit + schedule) + u128::from(srp),
        }
    }
}

/// The verdict of [`analyse`]: `Some(true)` schedulable with these
/// overheads, `Some(false)` the test fails (it is sufficient only), `None`
/// inconclusive (a zero tick, or the search gave up).
pub fn verdict(set: &TaskSet, blocking: &EdfBlocking, platform: &Platform) -> Verdict {
    let tick = match platform.timer.periodic_tick() {
        Some(t) if t.is_zero() => return None,
        t => t.map(|t| u128::from(t.as_ns())),
    };
    let release_delay = u128::from(platform.timer.release_delay().as_ns());
    let charges = Charges::of(
        platform,
        platform.threads.unwrap_or(set.tasks.len()),
        blocking.max(),
    );
    let mut demand = DemandBound {
        stairs: Vec::with_capacity(set.tasks.len() + 1),
        surplus: Vec::with_capacity(set.tasks.len()),
        constant: charges.blocking,
    };
    let mut arrivals = DemandBound {
        stairs: Vec::with_capacity(set.tasks.len() + 1),
        surplus: Vec::new(),
        constant: charges.blocking,
    };
    // (weight, a, b) for La and U' = Σ a/b.
    let mut slope: Vec<(u128, u128, u128)> = Vec::with_capacity(set.tasks.len() + 1);
    let mut k = charges.blocking;
    let mut first = u128::MAX;
    let mut last = 0;
    for task in &set.tasks {
        if task.period.is_zero() {
            return None;
        }
        let (c, t, d) = (
            u128::from(task.wcet.as_ns()),
            u128::from(task.period.as_ns()),
            u128::from(task.deadline.as_ns()),
        );
        let delta = u128::from(task.jitter.as_ns()) + release_delay;
        if d <= delta {
            // Noticed, in the worst case, only at or after its deadline.
            return Some(false);
        }
        let cost = c + charges.per_job;
        let due = d - delta;
        let seen = Staircase::releases(delta, t, cost, None);
        demand.stairs.push(Staircase::deadlines(due, t, cost));
        let later = d.div_ceil(t);
        if charges.per_release > 0 {
            demand.surplus.push(Surplus {
                due: demand.stairs.len() - 1,
                seen: Staircase::releases(delta, t, charges.per_release, None),
                cap: later,
            });
            k += later * charges.per_release;
        }
        arrivals.stairs.push(seen);
        slope.push((t.saturating_sub(due), cost, t));
        first = first.min(due);
        last = last.max(due);
    }
    if set.tasks.is_empty() {
        return Some(true);
    }
    if let Some(tick) = tick.filter(|_| charges.timer > 0) {
        let ticks = Staircase::releases(0, tick, charges.timer, None);
        demand.stairs.push(ticks);
        arrivals.stairs.push(ticks);
        slope.push((tick, charges.timer, tick));
    }
    if let Some(server) = platform.overheads.throttling.fair_server {
        // Linux's fair server: a sporadic SCHED_DEADLINE reservation of Q_fs
        // per P_fs, deadline P_fs ([`crate::throttling`], "EDF").
        let (q, p) = (
            u128::from(server.runtime.as_ns()),
            u128::from(server.period.as_ns()),
        );
        demand.stairs.push(Staircase::deadlines(p, p, q));
        arrivals.stairs.push(Staircase::releases(0, p, q, None));
        slope.push((0, q, p));
        first = first.min(p);
        last = last.max(p);
    }
    let Some(fractions) = slope
        .iter()
        .map(|&(_, a, b)| Some((u64::try_from(a).ok()?, u64::try_from(b).ok()?)))
        .collect::<Option<Vec<(u64, u64)>>>()
    else {
        // A cost beyond 2^64 ns per job exceeds any period.
        return Some(false);
    };
    let load = exact::cmp_sum(&fractions, 1, 1);
    if load == Ordering::Greater {
        return Some(false);
    }
    let la = (load == Ordering::Less)
        .then(|| exact::demand_horizon(k, &slope))
        .flatten()
        .map(|la| la.max(last));
    let lb = demand_search::busy_period(&arrivals, la);
    let l = [la, lb].into_iter().flatten().min();
    demand_search::search(&demand, first, l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overhead_rta::TimerModel;
    use rtlab_model::overheads::Overheads;
    use rtlab_model::{Nanos, Task};

    fn platform(overheads: &Overheads, timer: TimerModel) -> Platform<'_> {
        Platform {
            overheads,
            timer,
            threads: None,
        }
    }

    #[test]
    fn zero_costs_and_no_tick_is_the_ideal_test() {
        let ms = Nanos::from_ms;
        let zero = Overheads::zero();
        let ideal = platform(&zero, TimerModel::Tickless);
        for (d1, expected) in [(ms(2), Some(false)), (ms(4), Some(true))] {
            // τ0 (C=2, D=d1, T=4), τ1 (C=2, D=3, T=5).
            let set = TaskSet::new(
                "s",
                vec![
                    Task::new("a", ms(4), ms(2)).with_deadline(d1),
                    Task::new("b", ms(5), ms(2)).with_deadline(ms(3)),
                ],
            );
            let none = EdfBlocking::none();
            assert_eq!(verdict(&set, &none, &ideal), expected);
            assert_eq!(crate::edf_demand::verdict(&set, &none), expected);
        }
    }

    #[test]
    fn a_zero_tick_is_inconclusive() {
        let rtmach = Overheads::rtmach();
        let set = TaskSet::new(
            "s",
            vec![Task::new("a", Nanos::from_ms(10), Nanos::from_ms(1))],
        );
        let p = platform(&rtmach, TimerModel::Tick(Nanos::ZERO));
        assert_eq!(verdict(&set, &EdfBlocking::none(), &p), None);
    }

    /// τa (C = 1 ms, D = 5 ms, T = 10 ms), τb (C = `wcet_b`, D = 8 ms,
    /// T = 20 ms).
    fn pair(wcet_b: Nanos) -> TaskSet {
        let ms = Nanos::from_ms;
        TaskSet::new(
            "pair",
            vec![
                Task::new("a", ms(10), ms(1)).with_deadline(ms(5)),
                Task::new("b", ms(20), wcet_b).with_deadline(ms(8)),
            ],
        )
    }

    /// RT Mach at n = 2: C_preempt = 31.68 us, C_exit = 30.28 us,
    /// C_nonpreempt = 7.9 us, C_timer = 7.92 us, C_system = C_exit, so
    /// o_rel = 31.68 us, o_job = 61.96 us, B = 30.28 us.
    ///
    /// Tick 1 ms: Δ = 1 ms, due points 4 ms (τa) and 7 ms (τb). At t = 7 ms
    /// one job of each is due and no other release is seen
    /// (⌈8/10⌉ = ⌈8/20⌉ = 1), with ⌈7ms/1ms⌉ = 7 ticks:
    /// W(7 ms) = 30.28 + 7 x 7.92 + 1061.96 + (Cb + 61.96) = Cb + 1209.64 us
    /// <= 7000 us, so Cb <= 5790.36 us. Just after 7 ms the eighth tick would
    /// add 7.92 us, but the busy period bound excludes it: at Cb = 5790.36 us,
    /// Lb = 30.28 + 7 x 7.92 + 1061.96 + 5852.32 = 7000 us exactly. One
    /// nanosecond more and W(7 ms) = 7 ms + 1 ns.
    #[test]
    fn breaking_point_with_a_one_millisecond_tick_by_hand() {
        let rtmach = Overheads::rtmach();
        let p = platform(&rtmach, TimerModel::Tick(Nanos::from_ms(1)));
        let none = EdfBlocking::none();
        assert_eq!(
            verdict(&pair(Nanos::from_ns(5_790_360)), &none, &p),
            Some(true)
        );
        assert_eq!(
            verdict(&pair(Nanos::from_ns(5_790_361)), &none, &p),
            Some(false)
        );
    }

    /// Tickless: Δ = 0, due points 5 ms and 8 ms, no timer term. Below 8 ms
    /// τb's release is seen but not due (+31.68 us); at 8 ms
    /// W = 30.28 + 1061.96 + (Cb + 61.96) = Cb + 1154.2 us <= 8000 us:
    /// Cb <= 6845.8 us (at 10 ms + 1 ns τa's second release adds 31.68 us,
    /// at 15 ms its second job: Cb + 2216.16 <= 15000, both looser).
    #[test]
    fn breaking_point_tickless_by_hand() {
        let rtmach = Overheads::rtmach();
        let p = platform(&rtmach, TimerModel::Tickless);
        let none = EdfBlocking::none();
        assert_eq!(
            verdict(&pair(Nanos::from_ns(6_845_800)), &none, &p),
            Some(true)
        );
        assert_eq!(
            verdict(&pair(Nanos::from_ns(6_845_801)), &none, &p),
            Some(false)
        );
        // The ideal test allows Cb up to 8 ms - 1 ms = 7 ms.
        assert_eq!(
            crate::edf_demand::verdict(&pair(Nanos::from_ms(7)), &none),
            Some(true)
        );
    }

    /// Linux's model, hrtimer releases with a 1 ms periodic tick: Δ = 0 as
    /// tickless (due points 5 ms and 8 ms), plus ⌈t/1ms⌉ x 7.92 us of ticks.
    /// At 5 ms: 30.28 + 5 x 7.92 + 1061.96 + 31.68 (τb seen, not due)
    /// = 1163.52 us <= 5000 us. At 8 ms:
    /// W(8 ms) = 30.28 + 8 x 7.92 + 1061.96 + (Cb + 61.96) = Cb + 1217.56 us
    /// <= 8000 us, so Cb <= 6782.44 us (the tickless bound less eight
    /// ticks). The ninth tick just after 8 ms is excluded by the busy period:
    /// at Cb = 6782.44 us, Lb = 30.28 + 8 x 7.92 + 1061.96 + 6844.4 = 8000 us
    /// exactly. Later points are looser (15 ms: Cb + 2334.96 <= 15000).
    #[test]
    fn breaking_point_with_hrtimer_releases_and_a_tick_by_hand() {
        let rtmach = Overheads::rtmach();
        let none = EdfBlocking::none();
        let linux = TimerModel::Hrtimer {
            tick: Some(Nanos::from_ms(1)),
        };
        let p = platform(&rtmach, linux);
        assert_eq!(
            verdict(&pair(Nanos::from_ns(6_782_440)), &none, &p),
            Some(true)
        );
        assert_eq!(
            verdict(&pair(Nanos::from_ns(6_782_441)), &none, &p),
            Some(false)
        );
        // Without a periodic tick Linux's model is the tickless test.
        let p = platform(&rtmach, TimerModel::Hrtimer { tick: None });
        assert_eq!(
            verdict(&pair(Nanos::from_ns(6_845_800)), &none, &p),
            Some(true)
        );
        assert_eq!(
            verdict(&pair(Nanos::from_ns(6_845_801)), &none, &p),
            Some(false)
        );
        // A zero periodic tick is inconclusive, as a zero tick.
        let p = platform(
            &rtmach,
            TimerModel::Hrtimer {
                tick: Some(Nanos::ZERO),
            },
        );
        assert_eq!(verdict(&pair(Nanos::from_ms(1)), &none, &p), None);
    }

    /// No costs, tickless, the fair server 3 ms per 10 ms as a sporadic
    /// task (C = 3, D = T = 10 ms) beside the pair: at t = 10 ms,
    /// h = 1 (τa) + Cb + 3 <= 10, so Cb <= 6 ms (t = 8: Cb <= 7; t = 28:
    /// 3 + 2 Cb + 6; t = 30: 12 + Cb; U = 0.4 + Cb/20: all looser).
    /// Without the server Cb <= 7 ms.
    #[test]
    fn the_fair_server_is_a_sporadic_task_by_hand() {
        use rtlab_model::overheads::{Reservation, Throttling};
        let ms = Nanos::from_ms;
        let costs = Overheads {
            throttling: Throttling {
                rt: Some(Reservation::new(ms(1), ms(10)).unwrap()),
                fair_server: Some(Reservation::new(ms(3), ms(10)).unwrap()),
            },
            ..Overheads::zero()
        };
        let p = platform(&costs, TimerModel::Tickless);
        let none = EdfBlocking::none();
        assert_eq!(verdict(&pair(ms(6)), &none, &p), Some(true));
        assert_eq!(
            verdict(&pair(ms(6) + Nanos::from_ns(1)), &none, &p),
            Some(false)
        );
        let zero = Overheads::zero();
        let ideal = platform(&zero, TimerModel::Tickless);
        assert_eq!(verdict(&pair(ms(7)), &none, &ideal), Some(true));
    }

    #[test]
    fn a_deadline_within_one_tick_fails() {
        // D = 5 ms with an 8 ms tick: the release may be noticed after it.
        let rtmach = Overheads::rtmach();
        let p = platform(&rtmach, TimerModel::Tick(Nanos::from_ms(8)));
        assert_eq!(
            verdict(&pair(Nanos::from_ms(1)), &EdfBlocking::none(), &p),
            Some(false)
        );
    }
}
