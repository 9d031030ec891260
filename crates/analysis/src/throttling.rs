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
//! 1. **Under the caps.** A limit never engages when the set always leaves
//!    enough of the processor free: RT throttling when the set (jobs and
//!    kernel work) uses less than Q_rt of *every* window of length P_rt,
//!    the fair server when it leaves SCHED_OTHER more than Q_fs of every
//!    window of length P_fs (its laxity can reach zero only in a window of
//!    less than P_fs in which the set was busy P_fs − Q_fs). The time the
//!    set leaves free in a window is what a **virtual lowest-priority
//!    task** τv with `Cv = P − Q_rt + 1 ns` (RT throttling) or
//!    `Cv = Q_fs + 1 ns` (the fair server), `Tv = Dv = P`, would receive
//!    there; τv meets its deadline at every phase if its response time,
//!    from the critical instant (Liu & Layland 1973; Joseph & Pandya 1986),
//!    is at most P:
//!
//!    ```text
//!    Rv = Cv + Σj ⌈(Rv + Jj)/Tj⌉ C'j + ⌈Rv/T_tic⌉ (C_timer + C_schedule) <= P
//!    C'j = Cj + C_release + max(C_preempt, C_nonpreempt) + C_exit + 2 C_schedule
//!    ```
//!
//!    (a lowest-priority task does not change the schedule of the others,
//!    so in the real schedule that time is free). Then, by induction on
//!    time, the schedule is the unthrottled one and the unthrottled
//!    response times stand.
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
//! never starts), the two limits' phases relative to the set are the worst
//! (case 1 holds at every phase), and kernel work done in a real-time
//! thread's context counts towards its RT runtime.

use rtlab_model::overheads::{Overheads, Throttling};
use rtlab_model::{Nanos, TaskSet};

use crate::overhead_rta::TimerModel;
use crate::rta::{Analysed, Interferer};
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
/// virtual lowest-priority task of each stated limit meets its deadline.
pub fn under_the_caps(
    set: &TaskSet,
    overheads: &Overheads,
    timer: TimerModel,
    threads: usize,
) -> bool {
    let throttling = &overheads.throttling;
    let free_needed = [
        throttling
            .rt
            .filter(|r| !r.gap().is_zero())
            .map(|r| (r.gap(), r.period)),
        throttling.fair_server.map(|r| (r.runtime, r.period)),
    ];
    free_needed
        .into_iter()
        .flatten()
        .all(|(free, period)| leaves_free(set, overheads, timer, threads, free, period))
}

/// True when the set leaves more than `free` of every window of length
/// `period` (the virtual task `Cv = free + 1 ns`, `Tv = Dv = period` of the
/// module docs meets its deadline).
pub fn leaves_free(
    set: &TaskSet,
    overheads: &Overheads,
    timer: TimerModel,
    threads: usize,
    free: Nanos,
    period: Nanos,
) -> bool {
    let ns = |c: rtlab_model::overheads::LinearCost| c.at(threads).as_ns();
    let o = overheads;
    let per_job = ns(o.release)
        .saturating_add(ns(o.wake))
        .saturating_add(ns(o.preempt).max(ns(o.nonpreempt)))
        .saturating_add(ns(o.exit))
        .saturating_add(ns(o.schedule).saturating_mul(2));
    let mut interferers: Vec<Interferer> = set
        .tasks
        .iter()
        .map(|t| Interferer {
            period: t.period.as_ns(),
            jitter: t.jitter.as_ns(),
            cost: t.wcet.as_ns().saturating_add(per_job),
        })
        .collect();
    if let Some(tick) = timer.periodic_tick() {
        interferers.push(Interferer {
            period: tick.as_ns(),
            jitter: 0,
            cost: ns(o.timer).saturating_add(ns(o.schedule)),
        });
    }
    let virtual_task = Analysed {
        wcet: free.as_ns().saturating_add(1),
        period: period.as_ns(),
        deadline: period.as_ns(),
        jitter: 0,
        blocking: 0,
    };
    matches!(
        crate::rta::response_time(&virtual_task, &interferers),
        Response::Within(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::overheads::Reservation;
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

    /// τ1 (1 ms / 10 ms), τ2 (2 ms / 20 ms), no costs, tickless. The
    /// virtual task for "more than 5 ms free in every 10 ms" (Cv = 5 ms +
    /// 1 ns, Tv = Dv = 10 ms): Rv = 5.000001 + 1 + 2 = 8.000001 ms <= 10:
    /// free. For "more than 7 ms free": Rv = 7.000001 + 3 = 10.000001 > 10:
    /// not (in [0, 10) the set is busy 3 ms, free exactly 7 ms).
    #[test]
    fn the_virtual_lowest_priority_task_by_hand() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "two",
            vec![Task::new("a", ms(10), ms(1)), Task::new("b", ms(20), ms(2))],
        );
        let zero = Overheads::zero();
        let free = |f| leaves_free(&set, &zero, TimerModel::Tickless, 2, f, ms(10));
        assert!(free(ms(5)));
        assert!(free(ms(7) - Nanos::from_ns(1)));
        assert!(!free(ms(7)));
        // A 1 ms tick costing 100 us adds ⌈Rv/1ms⌉ x 100 us: with Cv = 6 ms
        // + 1 ns, Rv = 9 + 10 x 0.1 = 10.000001 ms: not free any more.
        let mut ticked = Overheads::zero();
        ticked.timer = rtlab_model::overheads::LinearCost::constant(Nanos::from_us(100));
        let tick = TimerModel::Hrtimer { tick: Some(ms(1)) };
        assert!(leaves_free(&set, &zero, tick, 2, ms(6), ms(10)));
        assert!(!leaves_free(&set, &ticked, tick, 2, ms(6), ms(10)));
    }
}
