//! Overhead-aware fixed-priority response-time analysis: paper 004,
//! Theorem 1.
//!
//! Arakawa, Katcher, Strosnider & Tokuda, *Modeling and Validation of the
//! Real-Time Mach Scheduler*, SIGMETRICS 1993, restating Katcher, Arakawa &
//! Strosnider, *Engineering and analysis of fixed priority schedulers*
//! (IEEE TSE 19(9), 1993). For a non-preemptible timer-driven scheduler with
//! tick `T_tic`, task τi (tasks indexed by decreasing priority) meets its
//! deadline if some `0 < t <= Di` satisfies `W_i(t) <= t`, where
//!
//! ```text
//! W_i(t) = Σ_{j <= i} ⌈t/Tj⌉ (Cj + C_preempt + C_exit)      overhead of each job
//!        + ⌈t/T_tic⌉ C_timer                                 timer interrupts
//!        + Σ_{j > i} ⌈t/Tj⌉ C_nonpreempt                     releases of lower-priority jobs
//!        + T_tic                                             release seen only at the next tick
//!        + C_system                                          longest non-preemptible section
//! ```
//!
//! The least such `t` is the least fixed point of `t = W_i(t)`, so the test
//! is computed as a response time `R_i` (reported per task), with the costs
//! `a n + b` evaluated at `n` = the number of threads (by default the number
//! of tasks). This module generalises it the way [`crate::rta`] generalises
//! the ideal test: release jitter `⌈(t + Jj)/Tj⌉`, critical-section blocking
//! added to the blocking terms, and the multi-job busy period for D > T.
//!
//! The **event-driven** (tickless) variant drops the two tick terms: every
//! release interrupts at once, and its cost is already in C_preempt or
//! C_nonpreempt.

use rtlab_model::overheads::Overheads;
use rtlab_model::{Nanos, TaskSet};

use crate::priority::Priorities;
use crate::rta::{self, Interferer};
use crate::verdict::{Outcome, Response, Test};

/// How the scheduler notices releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimerModel {
    /// Timer-driven with a periodic tick of this length (paper 004).
    Tick(Nanos),
    /// Event-driven (tickless, one-shot timers).
    Tickless,
}

impl TimerModel {
    /// The tick, if any.
    pub fn tick(self) -> Option<Nanos> {
        match self {
            TimerModel::Tick(t) => Some(t),
            TimerModel::Tickless => None,
        }
    }
}

/// The platform the overhead-aware test assumes.
#[derive(Debug, Clone, Copy)]
pub struct Platform<'a> {
    /// The cost model.
    pub overheads: &'a Overheads,
    /// Tick or tickless.
    pub timer: TimerModel,
    /// The number of threads `n` at which the costs are evaluated; `None`
    /// for the number of tasks.
    pub threads: Option<usize>,
}

/// Theorem 1 for every task of `set`, with critical-section blocking
/// `blocking[i]` (zeros for none). A zero tick is inconclusive.
pub fn analyse(
    set: &TaskSet,
    priorities: &Priorities,
    blocking: &[Nanos],
    platform: &Platform,
) -> Outcome {
    let n = platform.threads.unwrap_or(set.tasks.len());
    let o = platform.overheads;
    let per_job = o.preempt.at(n).saturating_add(o.exit.at(n)).as_ns();
    let nonpreempt = o.nonpreempt.at(n).as_ns();
    let system = o.system.at(n);
    let mut interferers: Vec<Interferer> = Vec::with_capacity(set.tasks.len() + 1);
    let responses = (0..set.tasks.len())
        .map(|i| {
            let mut extra_blocking = blocking[i].saturating_add(system);
            interferers.clear();
            interferers.extend(rta::higher_or_equal(set, priorities, i).map(|mut j| {
                j.cost = j.cost.saturating_add(per_job);
                j
            }));
            if let TimerModel::Tick(tick) = platform.timer {
                if tick.is_zero() {
                    return Response::Unknown;
                }
                interferers.push(Interferer {
                    period: tick.as_ns(),
                    jitter: 0,
                    cost: o.timer.at(n).as_ns(),
                });
                extra_blocking = extra_blocking.saturating_add(tick);
            }
            let level = priorities.level(i);
            interferers.extend(
                set.tasks
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i && priorities.level(j) < level)
                    .map(|(_, t)| Interferer {
                        period: t.period.as_ns(),
                        jitter: t.jitter.as_ns(),
                        cost: nonpreempt,
                    }),
            );
            let mut task = rta::analysed(set, i, extra_blocking);
            task.wcet = task.wcet.saturating_add(per_job);
            rta::response_time(&task, &interferers)
        })
        .collect();
    Outcome::from_responses(Test::RtaOverheads, responses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::{assign, PriorityPolicy};
    use rtlab_model::Task;

    #[test]
    fn theorem_one_by_hand() {
        // Two tasks, RM, n = 2 threads, RT Mach costs:
        //   C_preempt + C_exit = (0.79*2 + 30.1) + (0.74*2 + 28.8) = 61.96 us
        //   C_nonpreempt = 0.39*2 + 7.12 = 7.9 us, C_timer = 7.92 us,
        //   C_system = C_exit = 30.28 us, tick 1 ms.
        // τ1 (C = 1 ms, T = 10 ms): W(t) = 1061.96 + ⌈t/1ms⌉ 7.92 + 7.9 + 1000 + 30.28 us
        //   t = 2108.06 → ⌈⌉ = 3 → 2123.9 → 3 → fixed point 2123.9 us.
        // τ2 (C = 2 ms, T = 20 ms): W(t) = ⌈t/10⌉ 1061.96 + 2061.96 + ⌈t/1⌉ 7.92 + 1030.28
        //   t0 = 1061.96 + 2061.96 + 7.92 + 1030.28 = 4162.12 → ⌈/1ms⌉ = 5 → 4193.8 → 5 → 4193.8 us.
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "two",
            vec![Task::new("a", ms(10), ms(1)), Task::new("b", ms(20), ms(2))],
        );
        let p = assign(&set, PriorityPolicy::RateMonotonic).unwrap();
        let rtmach = Overheads::rtmach();
        let platform = Platform {
            overheads: &rtmach,
            timer: TimerModel::Tick(ms(1)),
            threads: None,
        };
        let out = analyse(&set, &p, &[Nanos::ZERO; 2], &platform);
        assert_eq!(
            out.responses,
            vec![
                Response::Within(Nanos::from_ns(2_123_900)),
                Response::Within(Nanos::from_ns(4_193_800))
            ]
        );
        // Zero overheads and tickless: the ideal RTA.
        let zero = Overheads::zero();
        let ideal = Platform {
            overheads: &zero,
            timer: TimerModel::Tickless,
            threads: None,
        };
        let out = analyse(&set, &p, &[Nanos::ZERO; 2], &ideal);
        assert_eq!(
            out.responses,
            vec![Response::Within(ms(1)), Response::Within(ms(3))]
        );
    }
}
