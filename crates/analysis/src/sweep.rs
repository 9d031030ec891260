//! The schedulability-ratio experiment: for each target utilization,
//! generate N random task sets and count how many each chosen test accepts
//! (the classic plot of Bini & Buttazzo, *Measuring the performance of
//! schedulability tests*, Real-Time Systems 30(1–2), 2005).
//!
//! Set `j` of utilization step `k` is generator stream index
//! `k * sets_per_step + j` of [`GeneratorConfig`] (with its `utilization`
//! replaced by the step's), so the result depends on the seed alone: the
//! sets are analysed in parallel (rayon) and only counts are combined, in a
//! fixed order. A test "accepts" only on `Some(true)`; `None` verdicts are
//! counted apart as inconclusive.

use rayon::prelude::*;
use rtlab_model::generate::{generate_set, GenerateError, GeneratorConfig};
use rtlab_model::TaskSet;

use crate::blocking::EdfBlocking;
use crate::overhead_rta;
use crate::priority::{self, PriorityPolicy};
use crate::suite::{Options, Policy};
use crate::verdict::{Test, Verdict};
use crate::{audsley, edf_demand, edf_overheads, edf_utilization, hyperbolic, liu_layland, rta};

/// Most tasks per generated set a sweep accepts. Memory is not the limit
/// (a sweep holds one set per worker thread) but time: the exact tests take
/// O(n²) per set, about 4 s for one set of 10,000 tasks on a 2-core VM and
/// so some 6 minutes at 100,000, for each set of each step.
pub const MAX_SWEEP_TASKS: usize = 10_000;

/// One column of the experiment: a test under a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SweepTest {
    /// The policy (priorities for fixed-priority tests).
    pub policy: Policy,
    /// The test.
    pub test: Test,
}

impl SweepTest {
    /// `policy:test`, e.g. `rm:rta`, `edf:edf-demand`.
    pub fn name(&self) -> String {
        format!("{}:{}", self.policy.name(), self.test.name())
    }

    /// Parses `policy:test`; `Err` explains what is accepted.
    pub fn parse(text: &str) -> Result<SweepTest, String> {
        let usage = || {
            format!(
                "invalid test `{text}`: write POLICY:TEST, e.g. rm:rta or edf:edf-demand \
                 (policies rm, dm, given, opa, edf; tests {})",
                Test::ALL.map(Test::name).join(", ")
            )
        };
        let (p, t) = text.split_once(':').ok_or_else(usage)?;
        let policy = Policy::from_name(p).ok_or_else(usage)?;
        let test = Test::from_name(t).ok_or_else(usage)?;
        let edf_test = matches!(
            test,
            Test::EdfUtilization | Test::EdfDensity | Test::EdfDemand | Test::EdfDemandOverheads
        );
        if edf_test != (policy == Policy::Edf) {
            return Err(format!(
                "invalid test `{text}`: EDF tests go with policy edf, fixed-priority tests with rm, dm, given or opa"
            ));
        }
        Ok(SweepTest { policy, test })
    }
}

/// The verdict of one test on one set (no critical sections assumed beyond
/// those in the set; the overhead-aware tests use the first timer model of
/// `options`).
pub fn run_test(set: &TaskSet, test: SweepTest, options: &Options) -> Verdict {
    let none = EdfBlocking::none();
    let priorities = match test.policy {
        Policy::Edf => None,
        Policy::Fixed(PriorityPolicy::Audsley) => {
            let found = audsley::assign(set);
            if test.test == Test::Rta {
                return Some(found.is_some());
            }
            Some(match found {
                Some(p) => p,
                None => priority::assign(set, PriorityPolicy::DeadlineMonotonic).ok()?,
            })
        }
        Policy::Fixed(rule) => Some(priority::assign(set, rule).ok()?),
    };
    let zeros = || vec![rtlab_model::Nanos::ZERO; set.tasks.len()];
    match (test.test, priorities) {
        (Test::EdfUtilization, _) => edf_utilization::utilization_verdict(set, &none),
        (Test::EdfDensity, _) => edf_utilization::density(set, &none).schedulable,
        (Test::EdfDemand, _) => edf_demand::verdict(set, &none),
        (Test::EdfDemandOverheads, _) => {
            let platform = options.platforms().next()?;
            edf_overheads::verdict(set, &none, &platform)
        }
        (Test::LiuLayland, Some(p)) => liu_layland::analyse(set, &p, &zeros()).schedulable,
        (Test::Hyperbolic, Some(p)) => hyperbolic::analyse(set, &p, &zeros()).schedulable,
        (Test::Rta, Some(p)) => rta::is_schedulable(set, &p),
        (Test::RtaOverheads, Some(p)) => {
            let platform = options.platforms().next()?;
            overhead_rta::analyse(set, &p, &zeros(), &platform).schedulable
        }
        _ => None,
    }
}

/// One utilization step of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// The target utilization of the generated sets.
    pub utilization: f64,
    /// Sets generated at this step.
    pub sets: u64,
    /// Sets each test accepted, in the order of [`Sweep::tests`].
    pub accepted: Vec<u64>,
    /// Sets on which each test gave no verdict (`None`: a sufficient test
    /// that did not pass, or an exact test that gave up), in the order of
    /// [`Sweep::tests`].
    pub inconclusive: Vec<u64>,
}

impl SweepRow {
    /// Fraction of the sets test `k` accepted.
    pub fn ratio(&self, k: usize) -> f64 {
        if self.sets == 0 {
            0.0
        } else {
            self.accepted[k] as f64 / self.sets as f64
        }
    }
}

/// The result of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// The tests, in column order.
    pub tests: Vec<SweepTest>,
    /// One row per utilization step, in the order given.
    pub rows: Vec<SweepRow>,
}

/// Runs the experiment. `progress` is called (from worker threads) once per
/// analysed set.
pub fn sweep(
    generator: &GeneratorConfig,
    utilizations: &[f64],
    sets_per_step: u64,
    tests: &[SweepTest],
    options: &Options,
    progress: &(dyn Fn() + Sync),
) -> Result<Sweep, GenerateError> {
    let configs: Vec<GeneratorConfig> = utilizations
        .iter()
        .map(|&u| {
            let config = GeneratorConfig {
                utilization: u,
                ..generator.clone()
            };
            config.validate().map(|()| config)
        })
        .collect::<Result<_, _>>()?;
    let rows = configs
        .iter()
        .enumerate()
        .map(|(k, config)| {
            let counts = (0..sets_per_step)
                .into_par_iter()
                .map(|j| {
                    let index = k as u64 * sets_per_step + j;
                    let set = generate_set(config, index)?;
                    // Per test: accepted, then inconclusive.
                    let tally: Vec<u64> = tests
                        .iter()
                        .flat_map(|&t| {
                            let verdict = run_test(&set, t, options);
                            [
                                u64::from(verdict == Some(true)),
                                u64::from(verdict.is_none()),
                            ]
                        })
                        .collect();
                    progress();
                    Ok(tally)
                })
                .try_reduce(
                    || vec![0u64; 2 * tests.len()],
                    |a, b| Ok(a.iter().zip(&b).map(|(x, y)| x + y).collect()),
                )?;
            Ok(SweepRow {
                utilization: config.utilization,
                sets: sets_per_step,
                accepted: counts.iter().copied().step_by(2).collect(),
                inconclusive: counts.iter().copied().skip(1).step_by(2).collect(),
            })
        })
        .collect::<Result<Vec<_>, GenerateError>>()?;
    Ok(Sweep {
        tests: tests.to_vec(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tests() -> Vec<SweepTest> {
        [
            "rm:liu-layland",
            "rm:hyperbolic",
            "rm:rta",
            "opa:rta",
            "edf:edf-demand",
        ]
        .iter()
        .map(|t| SweepTest::parse(t).unwrap())
        .collect()
    }

    #[test]
    fn parses_test_names() {
        assert_eq!(SweepTest::parse("rm:rta").unwrap().name(), "rm:rta");
        assert!(SweepTest::parse("rm:edf-demand").is_err());
        assert!(SweepTest::parse("edf:rta").is_err());
        assert!(SweepTest::parse("rta").unwrap_err().contains("POLICY:TEST"));
    }

    #[test]
    fn deterministic_and_ordered_by_dominance() {
        let generator = GeneratorConfig {
            tasks: 6,
            seed: 7,
            ..GeneratorConfig::default()
        };
        let us = [0.6, 0.8, 0.95];
        let run = || sweep(&generator, &us, 40, &tests(), &Options::default(), &|| {}).unwrap();
        let a = run();
        assert_eq!(a, run());
        for row in &a.rows {
            // LL <= hyperbolic <= RTA(RM) <= OPA <= EDF demand.
            for pair in row.accepted.windows(2) {
                assert!(pair[0] <= pair[1], "{row:?}");
            }
        }
        assert_eq!(
            a.rows[0].accepted[4], 40,
            "EDF accepts every implicit set with U < 1"
        );
    }
}
