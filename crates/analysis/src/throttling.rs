//! Linux's bandwidth limits on real-time threads as interference: RT
//! throttling and the fair server (the overheads file's `[throttling]`
//! table, [`rtlab_model::overheads::Throttling`]).
//!
//! # What Linux does
//!
//! - **RT throttling** (`sched_rt_runtime_us` = Q_rt per
//!   `sched_rt_period_us` = P_rt, 950 ms per 1 s by default): the kernel's
//!   period timer cuts time into windows `[k P_rt, (k+1) P_rt)`; once the
//!   SCHED_FIFO/RR threads of a CPU have run Q_rt in a window they wait for
//!   the next one. A blackout therefore lies inside the last `P_rt − Q_rt`
//!   of a window, and happens only after the real-time threads used Q_rt in
//!   it.
//! - **The fair server** (Linux 6.12+, Q_fs = 50 ms per P_fs = 1 s by
//!   default): a *deferred* SCHED_DEADLINE server for SCHED_OTHER work. The
//!   time SCHED_OTHER work gets in the background is charged to it; only
//!   when its remaining budget `r` equals the time left to its deadline
//!   (zero laxity) does it start, with a new period (deadline `now + P_fs`,
//!   budget Q_fs), above every SCHED_FIFO thread, and run Q_fs in one piece.
//!   It stays deferred as long as SCHED_OTHER work gets Q_fs of every
//!   `P_fs`.
//!
//! # The model (fixed priorities: `rta-overheads`)
//!
//! Let `W(L)` bound the processor time the set (jobs and kernel work) can
//! take in any window of length `L` when nothing throttles it, from the
//! response times `Rj` of the unthrottled test (Bertogna & Cirinei,
//! *Response-time analysis for globally scheduled symmetric multiprocessor
//! platforms*, RTSS 2007, workload with carry-in; on one processor):
//!
//! ```text
//! W(L) = Σj [ Nj C'j + min(C'j, L + Rj − C'j − Nj Tj) ] + ⌈L/T_tic⌉ (C_timer + C_schedule)
//! Nj   = ⌊(L + Rj − C'j)/Tj⌋,   C'j = Cj + C_release + max(C_preempt, C_nonpreempt) + C_exit + 2 C_schedule
//! ```
//!
//! 1. **Under the caps.** If `W(P_rt) < Q_rt` and `W(P_fs) < P_fs − Q_fs`,
//!    neither limit ever engages (by induction on time: up to the first
//!    engagement the schedule is the unthrottled one, which never uses Q_rt
//!    of a window nor leaves SCHED_OTHER less than Q_fs of a server period),
//!    and the unthrottled response times stand.
//! 2. **Through the caps.** Otherwise each limit is a highest-priority
//!    interference in the response-time recurrence, with worst-case phasing
//!    (a blackout starts at the critical instant):
//!    - RT throttling: the blackouts lie in the last `P_rt − Q_rt` of each
//!      window of a fixed grid, so the blackout time in any window of length
//!      `t` is at most `⌈t/P_rt⌉ (P_rt − Q_rt)`: a periodic interferer of
//!      period `P_rt` and cost `P_rt − Q_rt`. (The supply bound function of
//!      a periodic resource, Shin & Lee, *Periodic resource model for
//!      compositional real-time guarantees*, RTSS 2003, allows a blackout of
//!      `2(Π − Θ)` because it lets the supply fall anywhere in each period;
//!      Linux places the blackout at the end of its window, so one
//!      `P_rt − Q_rt` is the longest.)
//!    - The fair server: each of its runs of at most Q_fs lies within one
//!      of its periods, whose deadlines are at least P_fs apart: a periodic
//!      interferer of period `P_fs`, cost `Q_fs` and release jitter
//!      `P_fs − Q_fs` (two runs back to back, `2 Q_fs`: Shin & Lee's worst
//!      case, seen from the server's side).
//!
//! The verdict is case 1 when it holds, else case 2. Case 2 fails any task
//! whose deadline is shorter than a blackout, which is what Linux does to it
//! when the set does need more than the caps.
//!
//! # EDF (`edf-demand-overheads`)
//!
//! SCHED_DEADLINE threads are not subject to RT throttling (its runtime is
//! only their admission limit). The fair server is itself a SCHED_DEADLINE
//! reservation scheduled by EDF among them: a sporadic task of cost `Q_fs`,
//! period and deadline `P_fs` in the processor demand (its runs lie within
//! periods whose deadlines are at least `P_fs` apart).
//!
//! # Assumptions
//!
//! SCHED_OTHER work is always runnable on the CPU (otherwise the fair server
//! never starts), the two limits' phases relative to the set are the worst,
//! and kernel work done in a real-time thread's context counts towards its
//! RT runtime.

use rtlab_model::overheads::{Overheads, Reservation, Throttling};
use rtlab_model::{Nanos, TaskSet};

use crate::overhead_rta::TimerModel;
use crate::rta::Interferer;
use crate::verdict::Response;

/// The highest-priority interferers of case 2 (module docs): the RT
/// throttling blackout and the fair server, those the file states.
pub fn blackout_interferers(throttling: &Throttling) -> Vec<Interferer> {
    let mut out = Vec::with_capacity(2);
    if let Some(rt) = throttling.rt.filter(|r| !r.gap().is_zero()) {
        out.push(Interferer {
            period: rt.period.as_ns(),
            jitter: 0,
            cost: rt.gap().as_ns(),
        });
    }
    if let Some(fs) = throttling.fair_server {
        out.push(Interferer {
            period: fs.period.as_ns(),
            jitter: fs.gap().as_ns(),
            cost: fs.runtime.as_ns(),
        });
    }
    out
}

/// True when neither limit can engage (case 1 of the module docs): the
/// set's busy time bound `W` stays below Q_rt in any `P_rt` and below
/// `P_fs − Q_fs` in any `P_fs`. `responses` are the unthrottled test's;
/// any that is not within its deadline makes this false.
pub fn under_the_caps(
    set: &TaskSet,
    responses: &[Response],
    overheads: &Overheads,
    timer: TimerModel,
    threads: usize,
) -> bool {
    let Some(wcrt) = responses
        .iter()
        .map(|r| r.wcrt())
        .collect::<Option<Vec<Nanos>>>()
    else {
        return false;
    };
    let bound = |window: Nanos| busy_bound(set, &wcrt, overheads, timer, threads, window);
    let fits = |limit: Option<Reservation>, allowed: fn(Reservation) -> Nanos| {
        limit.is_none_or(|r| bound(r.period) < u128::from(allowed(r).as_ns()))
    };
    let throttling = &overheads.throttling;
    fits(throttling.rt, |r| r.runtime) && fits(throttling.fair_server, |r| r.gap())
}

/// `W(L)` of the module docs: the most processor time the set and its
/// kernel work take in any window of length `window`, given each task's
/// worst-case response time `wcrt[j]` (ns, saturating at `u128::MAX`).
pub fn busy_bound(
    set: &TaskSet,
    wcrt: &[Nanos],
    overheads: &Overheads,
    timer: TimerModel,
    threads: usize,
    window: Nanos,
) -> u128 {
    let ns = |c: rtlab_model::overheads::LinearCost| u128::from(c.at(threads).as_ns());
    let o = overheads;
    let per_job =
        ns(o.release) + ns(o.preempt).max(ns(o.nonpreempt)) + ns(o.exit) + 2 * ns(o.schedule);
    let l = u128::from(window.as_ns());
    let mut total: u128 = 0;
    for (task, r) in set.tasks.iter().zip(wcrt) {
        let t = u128::from(task.period.as_ns()).max(1);
        let c = u128::from(task.wcet.as_ns()) + per_job;
        let r = u128::from(r.as_ns()).max(c);
        let span = l + r - c;
        let n = span / t;
        let carry = c.min(span - n * t);
        total = total
            .saturating_add(n.saturating_mul(c))
            .saturating_add(carry);
    }
    if let Some(tick) = timer.periodic_tick().filter(|t| !t.is_zero()) {
        let ticks = l.div_ceil(u128::from(tick.as_ns()));
        total = total.saturating_add(ticks * (ns(o.timer) + ns(o.schedule)));
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Task;

    #[test]
    fn interferers_by_hand() {
        let ms = Nanos::from_ms;
        let linux = Throttling {
            rt: Some(Reservation::new(ms(950), ms(1000)).unwrap()),
            fair_server: Some(Reservation::new(ms(50), ms(1000)).unwrap()),
        };
        assert_eq!(
            blackout_interferers(&linux),
            vec![
                Interferer {
                    period: 1_000_000_000,
                    jitter: 0,
                    cost: 50_000_000
                },
                Interferer {
                    period: 1_000_000_000,
                    jitter: 950_000_000,
                    cost: 50_000_000
                },
            ]
        );
        // rt_runtime = rt_period: no blackout at all.
        let unlimited = Throttling {
            rt: Some(Reservation::new(ms(10), ms(10)).unwrap()),
            fair_server: None,
        };
        assert!(blackout_interferers(&unlimited).is_empty());
    }

    /// τ (C = 2 ms, T = 10 ms, R = 3 ms), no costs, tickless, window 25 ms:
    /// N = ⌊(25 + 3 − 2)/10⌋ = 2, carry = min(2, 26 − 20) = 2: W = 6 ms
    /// (three jobs: one finishing late at the window's start, two inside).
    /// Window 21 ms: N = ⌊22/10⌋ = 2, carry = min(2, 2) = 2: 6 ms; 20 ms:
    /// N = 2, carry = min(2, 1) = 1: 5 ms.
    #[test]
    fn workload_with_carry_in_by_hand() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new("one", vec![Task::new("a", ms(10), ms(2))]);
        let zero = Overheads::zero();
        let w = |l| busy_bound(&set, &[ms(3)], &zero, TimerModel::Tickless, 1, l);
        assert_eq!(w(ms(25)), 6_000_000);
        assert_eq!(w(ms(21)), 6_000_000);
        assert_eq!(w(ms(20)), 5_000_000);
        // With a 4 ms tick costing 10 us: ⌈20/4⌉ = 5 ticks, +50 us.
        let mut ticked = Overheads::zero();
        ticked.timer = rtlab_model::overheads::LinearCost::constant(Nanos::from_us(10));
        let tick = TimerModel::Hrtimer { tick: Some(ms(4)) };
        assert_eq!(
            busy_bound(&set, &[ms(3)], &ticked, tick, 1, ms(20)),
            5_050_000
        );
    }
}
