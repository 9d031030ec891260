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
//! **Each job's own release is charged `max(C_preempt, C_nonpreempt)`**, not
//! C_preempt alone. Theorem 1 charges C_preempt because on RT Mach a release
//! that switches costs more than one that does not; a job of τj released
//! while a higher-priority job runs does not switch, and pays C_nonpreempt
//! instead (as the simulator charges it, and as the EDF test of
//! [`crate::edf_overheads`] does). A measured profile can have
//! C_nonpreempt > C_preempt (on this project's VM, the p99.9 of the
//! `nonpreempt` scenario includes host interrupts), and then C_preempt alone
//! would not bound the cost: the larger of the two keeps the test
//! sufficient. With RT Mach's figures (C_preempt > C_nonpreempt) it is
//! Theorem 1 exactly.
//!
//! # Timer models ([`TimerModel`])
//!
//! - **Tick** (`T_tic`): paper 004's timer-driven scheduler, the formula
//!   above.
//! - **Tickless** (event-driven): drops both tick terms: every release
//!   interrupts at once, and its cost is already in C_preempt or
//!   C_nonpreempt.
//! - **Hrtimer** (Linux): every release fires its own one-shot
//!   high-resolution timer, so, as tickless, no release waits for a tick (no
//!   `T_tic` blocking term); but the periodic scheduler tick still
//!   interrupts every `T_tic` = 1/HZ and costs C_timer, so the timer term
//!   `⌈t/T_tic⌉ C_timer` stays:
//!
//! ```text
//! W_i(t) = Σ_{j <= i} ⌈t/Tj⌉ (Cj + C_preempt + C_exit) + ⌈t/T_tic⌉ C_timer
//!        + Σ_{j > i} ⌈t/Tj⌉ C_nonpreempt + C_system
//! ```
//!
//!   Without a stated tick (a fully tickless kernel, `nohz_full`) it is the
//!   tickless test.
//!
//! The model comes from the overheads file's `releases`/`tick` keys
//! ([`TimerModel::for_overheads`]); the command line's `--tick` overrides it
//! with paper 004's timer-driven model at each tick given.

use std::fmt;

use rtlab_model::overheads::{Overheads, Timing};
use rtlab_model::{Nanos, TaskSet};

use crate::priority::Priorities;
use crate::rta::{self, Interferer};
use crate::verdict::{Outcome, Response, Test};

/// How the scheduler notices releases, and which periodic tick costs
/// C_timer (module docs, "Timer models"). In JSON (a sweep shard's record
/// of the model it ran): `{"tick": "4ms"}`, `"tickless"` or
/// `{"hrtimer": {"tick": "4ms"}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimerModel {
    /// Timer-driven with a periodic tick of this length (paper 004):
    /// releases wait for the next tick, every tick costs C_timer.
    Tick(Nanos),
    /// Event-driven (tickless, one-shot timers), no periodic tick.
    Tickless,
    /// Linux: releases at their exact instants from high-resolution
    /// one-shot timers, while the periodic tick (when given) still costs
    /// C_timer every `tick`.
    Hrtimer {
        /// The periodic tick, 1/HZ (`None`: no periodic tick).
        tick: Option<Nanos>,
    },
}

impl TimerModel {
    /// The tick releases wait for: paper 004's timer-driven model only (the
    /// `tick_ns` of the JSON outputs).
    pub fn tick(self) -> Option<Nanos> {
        match self {
            TimerModel::Tick(t) => Some(t),
            TimerModel::Tickless | TimerModel::Hrtimer { .. } => None,
        }
    }

    /// The periodic tick that interrupts and costs C_timer, in any model.
    pub fn periodic_tick(self) -> Option<Nanos> {
        match self {
            TimerModel::Tick(t) => Some(t),
            TimerModel::Tickless => None,
            TimerModel::Hrtimer { tick } => tick,
        }
    }

    /// How late a release may be noticed: one tick in paper 004's model,
    /// nothing otherwise.
    pub fn release_delay(self) -> Nanos {
        self.tick().unwrap_or(Nanos::ZERO)
    }

    /// The model an overheads file states (its `releases` and `tick` keys):
    /// `releases = "tick"` is [`TimerModel::Tick`], `"hrtimer"` is
    /// [`TimerModel::Hrtimer`], and a file that says nothing is
    /// [`TimerModel::Tickless`]. The command line's `--tick` overrides this
    /// ([`TimerModel::resolve`]).
    pub fn for_overheads(overheads: &Overheads) -> TimerModel {
        match overheads.timing {
            Timing::Unstated => TimerModel::Tickless,
            Timing::Tick(t) => TimerModel::Tick(t),
            Timing::Hrtimer { tick } => TimerModel::Hrtimer { tick },
        }
    }

    /// The models to analyse with: paper 004's timer-driven model at each
    /// tick of `ticks` (the command line's `--tick`) when any is given,
    /// else the overheads file's model ([`TimerModel::for_overheads`]).
    pub fn resolve(ticks: &[Nanos], overheads: &Overheads) -> Vec<TimerModel> {
        if ticks.is_empty() {
            vec![TimerModel::for_overheads(overheads)]
        } else {
            ticks.iter().map(|&t| TimerModel::Tick(t)).collect()
        }
    }
}

impl fmt::Display for TimerModel {
    /// `tick 4ms`, `tickless`, `hrtimer + tick 4ms` or `hrtimer`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match *self {
            TimerModel::Tick(t) => format!("tick {t}"),
            TimerModel::Tickless => "tickless".to_string(),
            TimerModel::Hrtimer { tick: Some(t) } => format!("hrtimer + tick {t}"),
            TimerModel::Hrtimer { tick: None } => "hrtimer".to_string(),
        };
        f.pad(&text)
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
/// `blocking[i]` (zeros for none). A zero tick is inconclusive. With the
/// overheads file's `[throttling]` table, Linux's RT throttling and fair
/// server interfere as [`crate::throttling`] documents.
pub fn analyse(
    set: &TaskSet,
    priorities: &Priorities,
    blocking: &[Nanos],
    platform: &Platform,
) -> Outcome {
    let unthrottled = responses(set, priorities, blocking, platform, &[]);
    let throttling = &platform.overheads.throttling;
    if throttling.is_none()
        || crate::throttling::under_the_caps(
            set,
            platform.overheads,
            platform.timer,
            platform.threads.unwrap_or(set.tasks.len()),
        )
    {
        return Outcome::from_responses(Test::RtaOverheads, unthrottled);
    }
    let blackouts = crate::throttling::blackout_interferers(throttling);
    Outcome::from_responses(
        Test::RtaOverheads,
        responses(set, priorities, blocking, platform, &blackouts),
    )
}

/// Theorem 1's response times with `extra` highest-priority interferers.
fn responses(
    set: &TaskSet,
    priorities: &Priorities,
    blocking: &[Nanos],
    platform: &Platform,
    extra: &[Interferer],
) -> Vec<Response> {
    let n = platform.threads.unwrap_or(set.tasks.len());
    let o = platform.overheads;
    // A job's own release: C_preempt if it switches, C_nonpreempt if not
    // (module docs); the larger bounds both.
    let per_job = o
        .preempt
        .at(n)
        .max(o.nonpreempt.at(n))
        .saturating_add(o.exit.at(n))
        .as_ns();
    let nonpreempt = o.nonpreempt.at(n).as_ns();
    let system = o.system.at(n);
    let mut interferers: Vec<Interferer> = Vec::with_capacity(set.tasks.len() + 1 + extra.len());
    (0..set.tasks.len())
        .map(|i| {
            let mut extra_blocking = blocking[i].saturating_add(system);
            interferers.clear();
            interferers.extend(rta::higher_or_equal(set, priorities, i).map(|mut j| {
                j.cost = j.cost.saturating_add(per_job);
                j
            }));
            if let Some(tick) = platform.timer.periodic_tick() {
                if tick.is_zero() {
                    return Response::Unknown;
                }
                interferers.push(Interferer {
                    period: tick.as_ns(),
                    jitter: 0,
                    cost: o.timer.at(n).as_ns(),
                });
            }
            extra_blocking = extra_blocking.saturating_add(platform.timer.release_delay());
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
            interferers.extend_from_slice(extra);
            let mut task = rta::analysed(set, i, extra_blocking);
            task.wcet = task.wcet.saturating_add(per_job);
            rta::response_time(&task, &interferers)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::assign;
    use rtlab_model::overheads::LinearCost;
    use rtlab_model::policy::PriorityAssignment;
    use rtlab_model::Task;

    /// τ1 (C = 1 ms, T = 10 ms) and τ2 (C = 2 ms, T = 20 ms) under RM.
    fn two_tasks() -> (TaskSet, Priorities) {
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "two",
            vec![Task::new("a", ms(10), ms(1)), Task::new("b", ms(20), ms(2))],
        );
        let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
        (set, p)
    }

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
        let (set, p) = two_tasks();
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

    /// Throttling by hand, no costs, tickless, τ1 (1 ms / 10 ms) and τ2
    /// (2 ms / 20 ms) under RM; unthrottled R = 1 and 3 ms. Under the cap
    /// when the virtual lowest-priority task (Cv = free + 1 ns, Tv = Dv = P;
    /// [`crate::throttling`]) has Rv = Cv + 1 + 2 ms <= P.
    ///
    /// - RT 7 ms per 10 ms: Cv = 3 ms + 1 ns, Rv = 6.000001 ms: under the
    ///   cap, R = 1, 3 ms.
    /// - RT 2.5 ms per 10 ms: Cv = 7.5 ms + 1 ns, Rv = 10.500001 > 10, so a
    ///   7.5 ms blackout every 10 ms interferes from the critical instant:
    ///   τ1: 1 + 7.5 = 8.5 ms. τ2: w = 2 + 1 + 7.5 = 10.5 → 2 + 2·1 + 2·7.5
    ///   = 19 → 19 ms.
    /// - Fair server 1 ms per 5 ms: Cv = 1 ms + 1 ns, Rv = 4.000001 <= 5:
    ///   under the cap.
    /// - Fair server 2 ms per 5 ms: Rv = 5.000001 > 5: interferer (5, 2)
    ///   with jitter 3: τ1: w = 3 → 1 + ⌈6/5⌉·2 = 5 → 1 + ⌈8/5⌉·2 = 5 ms.
    ///   τ2: w = 5 → 2 + ⌈5/10⌉·1 + ⌈8/5⌉·2 = 7 → 2 + 1 + ⌈10/5⌉·2 = 7 ms.
    #[test]
    fn throttling_by_hand() {
        use rtlab_model::overheads::{Reservation, Throttling};
        let (ms, us) = (Nanos::from_ms, Nanos::from_us);
        let (set, p) = two_tasks();
        let at = |throttling: Throttling| {
            let costs = Overheads {
                throttling,
                ..Overheads::zero()
            };
            let platform = Platform {
                overheads: &costs,
                timer: TimerModel::Tickless,
                threads: None,
            };
            analyse(&set, &p, &[Nanos::ZERO; 2], &platform).responses
        };
        let rt = |q, period| Throttling {
            rt: Some(Reservation::new(q, period).unwrap()),
            fair_server: None,
        };
        let fair = |q, period| Throttling {
            rt: None,
            fair_server: Some(Reservation::new(q, period).unwrap()),
        };
        let within = Response::Within;
        assert_eq!(at(rt(ms(7), ms(10))), vec![within(ms(1)), within(ms(3))]);
        assert_eq!(
            at(rt(us(2_500), ms(10))),
            vec![within(us(8_500)), within(ms(19))]
        );
        assert_eq!(at(fair(ms(1), ms(5))), vec![within(ms(1)), within(ms(3))]);
        assert_eq!(at(fair(ms(2), ms(5))), vec![within(ms(5)), within(ms(7))]);
        // Both at once, through the caps: τ1: w = 1 + 7.5 + 2 = 10.5 →
        // 1 + ⌈10.5/10⌉·7.5 + ⌈13.5/5⌉·2 = 22 ms > D = 10 ms.
        let both = Throttling {
            rt: Some(Reservation::new(us(2_500), ms(10)).unwrap()),
            fair_server: Some(Reservation::new(ms(2), ms(5)).unwrap()),
        };
        assert_eq!(at(both)[0], Response::Exceeds);
    }

    #[test]
    fn a_release_costs_the_larger_of_preempt_and_nonpreempt() {
        // C_preempt = 10 us, C_nonpreempt = 50 us, C_exit = 5 us, nothing
        // else, tickless: each job is charged max(10, 50) + 5 = 55 us.
        // τ1: W = 1000 + 55 + ⌈t/20ms⌉ 50 (τ2's releases) = 1105 us, fixed.
        // τ2: W = ⌈t/10ms⌉ 1055 + 2055 = 3110 us, fixed.
        // (Charging C_preempt alone would give 1065 and 3030 us, below what
        // a τ2 job released while τ1 runs really costs.)
        let us = |v| LinearCost::constant(Nanos::from_us(v));
        let costs = Overheads {
            preempt: us(10),
            nonpreempt: us(50),
            exit: us(5),
            system: LinearCost::ZERO,
            ..Overheads::zero()
        };
        let (set, p) = two_tasks();
        let platform = Platform {
            overheads: &costs,
            timer: TimerModel::Tickless,
            threads: None,
        };
        assert_eq!(
            analyse(&set, &p, &[Nanos::ZERO; 2], &platform).responses,
            vec![
                Response::Within(Nanos::from_us(1_105)),
                Response::Within(Nanos::from_us(3_110))
            ]
        );
    }

    #[test]
    fn linux_hrtimer_model_by_hand() {
        // The same two tasks and RT Mach costs (n = 2) as above, under
        // Linux's model: releases from hrtimers (no T_tic blocking term) and
        // a 1 ms periodic tick costing C_timer = 7.92 us.
        // τ1: W(t) = 1061.96 + ⌈t/1ms⌉ 7.92 + ⌈t/20ms⌉ 7.9 + 30.28 us
        //   t0 = 1061.96 + 7.92 + 7.9 + 30.28 = 1108.06 → ⌈/1ms⌉ = 2
        //   → 1061.96 + 15.84 + 7.9 + 30.28 = 1115.98 → 2 → 1115.98 us.
        // τ2: W(t) = ⌈t/10ms⌉ 1061.96 + 2061.96 + ⌈t/1ms⌉ 7.92 + 30.28 us
        //   t0 = 1061.96 + 2061.96 + 7.92 + 30.28 = 3162.12 → ⌈/10ms⌉ = 1,
        //   ⌈/1ms⌉ = 4 → 3123.92 + 31.68 + 30.28 = 3185.88 → 1, 4 → 3185.88 us.
        // (Tick-driven: 2123.9 and 4193.8 us; tickless: 1100.14 and 3154.2.)
        let ms = Nanos::from_ms;
        let (set, p) = two_tasks();
        let rtmach = Overheads::rtmach();
        let at = |timer| {
            let platform = Platform {
                overheads: &rtmach,
                timer,
                threads: None,
            };
            analyse(&set, &p, &[Nanos::ZERO; 2], &platform).responses
        };
        let within = |ns| Response::Within(Nanos::from_ns(ns));
        assert_eq!(
            at(TimerModel::Hrtimer { tick: Some(ms(1)) }),
            vec![within(1_115_980), within(3_185_880)]
        );
        let tickless = vec![within(1_100_140), within(3_154_200)];
        assert_eq!(at(TimerModel::Tickless), tickless);
        assert_eq!(at(TimerModel::Hrtimer { tick: None }), tickless);
        assert_eq!(
            at(TimerModel::Hrtimer {
                tick: Some(Nanos::ZERO)
            }),
            vec![Response::Unknown; 2]
        );
    }

    #[test]
    fn the_model_comes_from_the_file_unless_ticks_are_given() {
        let ms = Nanos::from_ms;
        let mut o = Overheads::rtmach();
        assert_eq!(TimerModel::for_overheads(&o), TimerModel::Tickless);
        o.timing = Timing::Tick(ms(4));
        assert_eq!(TimerModel::for_overheads(&o), TimerModel::Tick(ms(4)));
        o.timing = Timing::Hrtimer { tick: Some(ms(4)) };
        let linux = TimerModel::Hrtimer { tick: Some(ms(4)) };
        assert_eq!(TimerModel::for_overheads(&o), linux);
        assert_eq!(TimerModel::resolve(&[], &o), vec![linux]);
        assert_eq!(
            TimerModel::resolve(&[ms(1), ms(2)], &o),
            vec![TimerModel::Tick(ms(1)), TimerModel::Tick(ms(2))]
        );
        assert_eq!(linux.to_string(), "hrtimer + tick 4ms");
        assert_eq!(linux.tick(), None);
        assert_eq!(linux.periodic_tick(), Some(ms(4)));
        assert_eq!(linux.release_delay(), Nanos::ZERO);
        assert_eq!(TimerModel::Tick(ms(4)).release_delay(), ms(4));
        assert_eq!(TimerModel::Hrtimer { tick: None }.to_string(), "hrtimer");
        assert_eq!(TimerModel::Tick(ms(4)).to_string(), "tick 4ms");
        assert_eq!(TimerModel::Tickless.to_string(), "tickless");
    }
}
