//! Simulation as a sweep test: `edf:sim`, `fp-rm:sim`, `gedf:sim`,
//! `pedf:sim`, ... decide a set by simulating it.
//!
//! The set is released synchronously (every offset as given, generated sets
//! have none), every job runs for its WCET, no jitter, and the set is
//! accepted when no job misses its deadline over the [`horizon`]:
//!
//! 1. `U > m`: rejected without simulating (the backlog grows for ever).
//! 2. On one processor with no offsets: the synchronous busy period `L`,
//!    the least `L > 0` with `L = Σ ⌈L/Ti⌉ Ci` (when it converges within
//!    [`BUSY_PERIOD_CAP`](crate::demand_search::BUSY_PERIOD_CAP) steps and
//!    is at most the cap). Every job released in `[0, L)` is done by `L`.
//! 3. Else the hyperperiod plus the longest offset, `H + max Oi`, when it
//!    is finite and at most the cap.
//! 4. Else the cap: [`HORIZON_CAP_PERIODS`] times the longest period plus
//!    the longest offset.
//!
//! What the answer means:
//!
//! - **One processor, no offsets, horizon 2 or 3**: exact for periodic and
//!   sporadic tasks with any deadlines under preemptive fixed priorities
//!   and EDF. The synchronous release is the critical instant of fixed
//!   priorities (Liu & Layland 1973) and gives the largest processor
//!   demand under EDF, and the first deadline miss, if any, lies in the
//!   synchronous busy period (Spuri 1996; George, Rivierre & Spuri 1996),
//!   which is no longer than the hyperperiod when `U ≤ 1`.
//! - **Several processors, horizon 3, constrained deadlines**: exact for
//!   the *periodic* synchronous set under global FP and global EDF, whose
//!   schedules repeat with period `H` from 0 on (Cucu-Grosjean & Goossens
//!   2011); partitioned schedulers are one uniprocessor schedule per
//!   processor. For *sporadic* tasks it is only necessary: the synchronous
//!   release is not the worst case of global scheduling, and a set the
//!   simulation accepts may still miss under another arrival pattern.
//! - **Horizon 4 (the cap)**: necessary only, for every scheduler.
//!
//! So the curve of a `:sim` test is an upper bound on the schedulable
//! fraction that every sufficient test (`gedf:bcl`, `gedf:rta`, ...) stays
//! under: the gap between them is what the tests leave on the table.
//!
//! This crate does not simulate (the simulator is a layer above it): a
//! sweep with a `:sim` column needs a [`Simulate`] implementation, given
//! with [`super::Prepared::with_simulator`]; `rtlab sweep` and
//! `rtlab.sweep` give the simulator's (`rtlab_sim::sweep_test`).

use std::fmt;

use rtlab_model::policy::PriorityAssignment;
use rtlab_model::{hyperperiod, Nanos, TaskSet};

use crate::demand_search::{self, DemandBound, Staircase};
use crate::partition::{self, Heuristic};
use crate::suite::Options;
use crate::sweep::SweepTest;
use crate::verdict::{Test, Verdict};

/// The horizon's cap, in longest periods: at most this many jobs of the
/// slowest task are simulated when the busy period and the hyperperiod are
/// longer (or do not fit 64 bits).
pub const HORIZON_CAP_PERIODS: u64 = 100;

/// The scheduler a simulated test runs the set under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SimulatedScheduler {
    /// One processor, preemptive EDF (`edf:sim`).
    Edf,
    /// One processor, preemptive fixed priorities (`fp-rm:sim`, `fp-dm:sim`).
    Fp(PriorityAssignment),
    /// Global EDF on m processors (`gedf:sim`).
    Gedf,
    /// Global fixed priorities on m processors (`gfp-rm:sim`, `gfp-dm:sim`).
    Gfp(PriorityAssignment),
    /// Partitioned EDF (`pedf:sim`): first fit by decreasing utilization,
    /// each processor's utilization at most 1, then simulated.
    Pedf,
    /// Partitioned fixed priorities (`pfp-rm:sim`, `pfp-dm:sim`), placed as
    /// for `pedf:sim`.
    Pfp(PriorityAssignment),
}

/// A column that decides a set by simulating it under a scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimulatedTest {
    /// The scheduler simulated.
    pub scheduler: SimulatedScheduler,
}

impl SimulatedTest {
    /// Every simulated test, by its name.
    pub const NAMES: [&'static str; 9] = [
        "edf:sim",
        "fp-rm:sim",
        "fp-dm:sim",
        "gedf:sim",
        "gfp-rm:sim",
        "gfp-dm:sim",
        "pedf:sim",
        "pfp-rm:sim",
        "pfp-dm:sim",
    ];

    /// The stable name (`gedf:sim`, `fp-rm:sim`, ...).
    pub fn name(self) -> String {
        let order = |p: PriorityAssignment| match p {
            PriorityAssignment::RateMonotonic => "rm",
            _ => "dm",
        };
        match self.scheduler {
            SimulatedScheduler::Edf => "edf:sim".into(),
            SimulatedScheduler::Fp(p) => format!("fp-{}:sim", order(p)),
            SimulatedScheduler::Gedf => "gedf:sim".into(),
            SimulatedScheduler::Gfp(p) => format!("gfp-{}:sim", order(p)),
            SimulatedScheduler::Pedf => "pedf:sim".into(),
            SimulatedScheduler::Pfp(p) => format!("pfp-{}:sim", order(p)),
        }
    }

    /// Parses a name ending in `:sim`: one of [`SimulatedTest::NAMES`],
    /// `rm:sim`, `dm:sim` (for `fp-rm:sim`, `fp-dm:sim`), `gfp:sim` and
    /// `pfp:sim` (DM) or `p-edf:sim`. `None` for a name not ending in
    /// `:sim`; `Err` names what is accepted.
    pub fn parse(text: &str) -> Option<Result<SimulatedTest, String>> {
        let scheduler = text.strip_suffix(":sim")?;
        let (rm, dm) = (
            PriorityAssignment::RateMonotonic,
            PriorityAssignment::DeadlineMonotonic,
        );
        let scheduler = match scheduler {
            "edf" => SimulatedScheduler::Edf,
            "fp-rm" | "rm" => SimulatedScheduler::Fp(rm),
            "fp-dm" | "dm" => SimulatedScheduler::Fp(dm),
            "gedf" => SimulatedScheduler::Gedf,
            "gfp-rm" => SimulatedScheduler::Gfp(rm),
            "gfp-dm" | "gfp" => SimulatedScheduler::Gfp(dm),
            "pedf" | "p-edf" => SimulatedScheduler::Pedf,
            "pfp-rm" => SimulatedScheduler::Pfp(rm),
            "pfp-dm" | "pfp" => SimulatedScheduler::Pfp(dm),
            _ => {
                return Some(Err(format!(
                    "invalid simulated test `{text}`: write one of {}",
                    SimulatedTest::NAMES.join(", ")
                )))
            }
        };
        Some(Ok(SimulatedTest { scheduler }))
    }

    /// True for the one-processor schedulers (`edf:sim`, `fp-*:sim`).
    pub fn is_uniprocessor(self) -> bool {
        matches!(
            self.scheduler,
            SimulatedScheduler::Edf | SimulatedScheduler::Fp(_)
        )
    }

    /// The verdict on `set` on `cpus` processors, simulated by `simulator`
    /// over the [`horizon`]; partitioned schedulers place the tasks first
    /// (a set that does not fit is rejected).
    pub fn verdict(self, set: &TaskSet, cpus: u32, simulator: &dyn Simulate) -> Verdict {
        let m = if self.is_uniprocessor() { 1 } else { cpus };
        let horizon = horizon(set, m)?;
        let Some(length) = horizon.length() else {
            return Some(false);
        };
        let mut on_platform = set.clone();
        on_platform.platform = rtlab_model::Platform::new(m);
        if matches!(
            self.scheduler,
            SimulatedScheduler::Pedf | SimulatedScheduler::Pfp(_)
        ) {
            let by_utilization = SweepTest {
                policy: rtlab_model::policy::AnalysedPolicy::Edf,
                test: Test::EdfUtilization,
            };
            let placed = partition::partition(
                set,
                m,
                Heuristic::FIRST_FIT_DECREASING,
                by_utilization,
                &Options::default(),
            )
            .ok()?;
            if !placed.fits() {
                return Some(false);
            }
            on_platform = placed.apply(set);
        } else {
            for task in &mut on_platform.tasks {
                task.cpu = None;
            }
        }
        simulator
            .meets_deadlines(&on_platform, self.scheduler, length)
            .ok()
    }
}

impl fmt::Display for SimulatedTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Runs a set in a simulator: what a `:sim` column asks of the layer above.
pub trait Simulate: fmt::Debug + Send + Sync {
    /// Simulates `set` (on its own platform, partitioned sets with every
    /// task's `cpu`) under `scheduler` from 0 to `horizon`, every job at its
    /// WCET, no jitter: true when no job misses its deadline (a job
    /// unfinished at the end misses only if its deadline is not after the
    /// end). `Err` says why the set could not be simulated.
    fn meets_deadlines(
        &self,
        set: &TaskSet,
        scheduler: SimulatedScheduler,
        horizon: Nanos,
    ) -> Result<bool, String>;
}

/// How long a simulated test simulates a set, and why that long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Horizon {
    /// `U > m`: not simulated, rejected.
    Overloaded,
    /// The synchronous busy period (one processor, no offsets).
    BusyPeriod(Nanos),
    /// The hyperperiod plus the longest offset.
    Hyperperiod(Nanos),
    /// [`HORIZON_CAP_PERIODS`] longest periods plus the longest offset.
    Cap(Nanos),
}

impl Horizon {
    /// The length simulated; `None` when the set is not simulated.
    pub fn length(self) -> Option<Nanos> {
        match self {
            Horizon::Overloaded => None,
            Horizon::BusyPeriod(t) | Horizon::Hyperperiod(t) | Horizon::Cap(t) => Some(t),
        }
    }
}

/// The horizon of a simulated test of `set` on `m` processors (see the
/// module docs); `None` for an empty set.
pub fn horizon(set: &TaskSet, m: u32) -> Option<Horizon> {
    let tasks = &set.tasks;
    let longest = tasks.iter().map(|t| t.period).max()?;
    // Σ Ci/Ti > m, exactly: Σ Ci·(P/Ti) > m·P with P the product is too
    // large, so compare in f64 with a margin of a few ulps, and let the
    // simulation decide the sets at the edge (it finds their misses).
    let u: f64 = tasks.iter().map(|t| t.utilization()).sum();
    if u > f64::from(m) * (1.0 + 1e-12) {
        return Some(Horizon::Overloaded);
    }
    let offset = tasks.iter().map(|t| t.offset).max().unwrap_or(Nanos::ZERO);
    let cap = longest
        .checked_mul(HORIZON_CAP_PERIODS)
        .and_then(|c| c.checked_add(offset))
        .unwrap_or(Nanos::MAX);
    if m == 1 && offset.is_zero() && u < 1.0 {
        let workload = DemandBound {
            stairs: tasks
                .iter()
                .map(|t| {
                    Staircase::releases(
                        0,
                        u128::from(t.period.as_ns()),
                        t.wcet.as_ns().into(),
                        None,
                    )
                })
                .collect(),
            surplus: Vec::new(),
            constant: 0,
        };
        if let Some(l) = demand_search::busy_period(&workload, Some(u128::from(cap.as_ns()))) {
            return Some(Horizon::BusyPeriod(Nanos::from_ns(l as u64)));
        }
    }
    if let Some(h) = hyperperiod(tasks.iter().map(|t| t.period))
        .ok()
        .and_then(|h| h.checked_add(offset))
        .filter(|&h| h <= cap)
    {
        return Some(Horizon::Hyperperiod(h));
    }
    Some(Horizon::Cap(cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Task;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    #[test]
    fn names_round_trip_and_aliases_parse() {
        for name in SimulatedTest::NAMES {
            let t = SimulatedTest::parse(name).unwrap().unwrap();
            assert_eq!(t.name(), name);
        }
        let parsed = |s| SimulatedTest::parse(s).unwrap().unwrap().name();
        assert_eq!(parsed("rm:sim"), "fp-rm:sim");
        assert_eq!(parsed("gfp:sim"), "gfp-dm:sim");
        assert_eq!(parsed("p-edf:sim"), "pedf:sim");
        assert!(SimulatedTest::parse("gedf:rta").is_none());
        let e = SimulatedTest::parse("llf:sim").unwrap().unwrap_err();
        assert!(e.contains("gedf:sim"), "{e}");
    }

    #[test]
    fn horizons_follow_the_documented_order() {
        // C = 1, 2 and T = 4, 6: L = 1 + 2 = 3, then ⌈3/4⌉ + 2⌈3/6⌉ = 3.
        let pair = TaskSet::new(
            "pair",
            vec![Task::new("a", ms(4), ms(1)), Task::new("b", ms(6), ms(2))],
        );
        assert_eq!(horizon(&pair, 1), Some(Horizon::BusyPeriod(ms(3))));
        // On two processors: the hyperperiod, 12 ms.
        assert_eq!(horizon(&pair, 2), Some(Horizon::Hyperperiod(ms(12))));
        // An offset: hyperperiod plus the offset, even on one processor.
        let mut late = pair.clone();
        late.tasks[1].offset = ms(5);
        assert_eq!(horizon(&late, 1), Some(Horizon::Hyperperiod(ms(17))));
        // Periods 997 and 1009 ms (primes) and 3: H = 3 006 873 ms > 100 s.
        let coprime = TaskSet::new(
            "coprime",
            vec![
                Task::new("a", ms(997), ms(1)),
                Task::new("b", ms(1009), ms(1)),
                Task::new("c", ms(3), ms(1)),
            ],
        );
        assert_eq!(
            horizon(&coprime, 2),
            Some(Horizon::Cap(ms(1009 * HORIZON_CAP_PERIODS)))
        );
        // U = 1.5 > 1: overloaded on one processor, simulated on two.
        let heavy = TaskSet::new(
            "heavy",
            vec![Task::new("a", ms(2), ms(2)), Task::new("b", ms(4), ms(2))],
        );
        assert_eq!(horizon(&heavy, 1), Some(Horizon::Overloaded));
        assert_eq!(horizon(&heavy, 2), Some(Horizon::Hyperperiod(ms(4))));
        assert_eq!(horizon(&TaskSet::new("none", vec![]), 1), None);
    }
}
