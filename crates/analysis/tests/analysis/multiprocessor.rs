//! The catalog's multiprocessor examples and the verdicts the tests must
//! give on them (the simulator's side is in `crates/sim/tests`).

use proptest::prelude::*;
use rtlab_analysis::blocking::EdfBlocking;
use rtlab_analysis::global::{edf_rta, fp_rta, gfb, priority::GlobalPriority};
use rtlab_analysis::multiprocessor::{decide, MultiprocessorTest, Partitioned};
use rtlab_analysis::partition::{partition, Heuristic};
use rtlab_analysis::priority::assign;
use rtlab_analysis::suite::Options;
use rtlab_analysis::sweep::SweepTest;
use rtlab_analysis::{edf_demand, rta};
use rtlab_model::catalog::build;
use rtlab_model::policy::PriorityAssignment;
use rtlab_model::{Nanos, Task, TaskSet};

/// Dhall's effect: global EDF and RM/DM miss (the heavy task ends at
/// 102 ms > 101 ms), so no G-EDF or G-DM test may say schedulable;
/// partitioning puts the heavy task alone and proves it. DkC (k = 1 for
/// m = 2) orders by D − C: 1 ms for the heavy task, 98 ms for the light
/// ones, so the heavy task is the most urgent, keeps a processor to itself
/// and the RTAs prove the set: the order Davis & Burns designed against
/// this effect.
#[test]
fn dhall_no_global_proof_partition_meets() {
    let set = build("dhall").unwrap();
    for test in MultiprocessorTest::ALL {
        let verdict = decide(&set, 2, test);
        let dkc = matches!(test, MultiprocessorTest::Gfp(GlobalPriority::Dkc, _));
        if test.is_global() && !dkc {
            assert_eq!(verdict, None, "{test}");
        } else {
            assert_eq!(verdict, Some(true), "{test}");
        }
    }
    let found = partition(
        &set,
        2,
        Heuristic::FIRST_FIT_DECREASING,
        SweepTest::parse("rm:rta").unwrap(),
        &Options::default(),
    )
    .unwrap();
    // ffd places heavy (0.99) first on P0; the light tasks do not fit
    // beside it under RM (R = 100 + 2 + 2 > 101), so they go to P1.
    assert_eq!(found.cpu, [Some(1), Some(1), Some(0)]);
    // The analyses bound the light tasks and not the heavy one.
    let r = edf_rta::response_times(&set, 2);
    assert_eq!(r[2].wcrt(), None);
    let r = fp_rta::response_times(&set, 2, GlobalPriority::Rm);
    assert_eq!(r[0].wcrt(), Some(rtlab_model::Nanos::from_ms(2)));
    assert_eq!(r[2].wcrt(), None);
}

/// No partition fits `no-partition` (every pair is above U = 1), whatever
/// the heuristic; the global schedule that meets it is hand-checked in the
/// catalog and simulated in the simulator's tests.
#[test]
fn no_partition_fits_under_any_heuristic() {
    let set = build("no-partition").unwrap();
    for heuristic in Heuristic::all() {
        for test in ["edf:edf-demand", "rm:rta", "dm:rta"] {
            let found = partition(
                &set,
                2,
                heuristic,
                SweepTest::parse(test).unwrap(),
                &Options::default(),
            )
            .unwrap();
            assert!(!found.fits(), "{} {test}", heuristic.name());
        }
    }
    for test in MultiprocessorTest::ALL {
        assert_eq!(decide(&set, 2, test), None, "{test}");
    }
}

/// Up to 10 tasks `(C, D, T)` in ns, constrained deadlines, small periods.
fn constrained_sets() -> impl Strategy<Value = TaskSet> {
    prop::collection::vec((2u64..=20, 1u64..=100, 0u64..=100), 1..=10).prop_map(|raw| {
        let tasks = raw
            .iter()
            .enumerate()
            .map(|(i, &(t, c_pct, d_pct))| {
                let c = (t * c_pct).div_ceil(100).clamp(1, t);
                let d = c + (t - c) * d_pct / 100;
                Task::new(format!("t{i}"), Nanos::from_ns(t), Nanos::from_ns(c))
                    .with_deadline(Nanos::from_ns(d))
            })
            .collect();
        TaskSet::new("p", tasks)
    })
}

fn every_test() -> Vec<MultiprocessorTest> {
    let mut all = MultiprocessorTest::ALL.to_vec();
    for name in ["gfp-rm:rta", "gfp-rm:rta-lc", "pfp-rm:wf", "pedf:nf"] {
        all.push(MultiprocessorTest::from_name(name).unwrap());
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// U > m is infeasible: every test says so (never schedulable).
    #[test]
    fn every_test_rejects_utilization_above_m(set in constrained_sets(), m in 1u32..=4) {
        let above = set.utilization() > f64::from(m) + 1e-9;
        for test in every_test() {
            let verdict = decide(&set, m, test);
            if above {
                prop_assert_eq!(verdict, Some(false), "{}", test);
            }
            prop_assert!(verdict != Some(false) || set.utilization() > f64::from(m) - 1e-9, "{}", test);
        }
    }

    /// On one processor a sound global test is a sufficient uniprocessor
    /// test, so what it proves the exact tests must accept: G-EDF tests
    /// imply `edf-demand`, G-FP in DM (RM) order implies DM (RM) RTA; and
    /// partitioning onto one processor is the exact test itself.
    #[test]
    fn on_one_processor_the_global_tests_are_sufficient_uniprocessor_tests(set in constrained_sets()) {
        let edf = edf_demand::verdict(&set, &EdfBlocking::none());
        let dm = rta::is_schedulable(&set, &assign(&set, PriorityAssignment::DeadlineMonotonic).unwrap());
        let rm = rta::is_schedulable(&set, &assign(&set, PriorityAssignment::RateMonotonic).unwrap());
        for test in every_test() {
            if decide(&set, 1, test) != Some(true) {
                continue;
            }
            let exact = match test {
                MultiprocessorTest::Gedf(_) | MultiprocessorTest::Partitioned(Partitioned::Edf, _) => edf,
                MultiprocessorTest::Gfp(GlobalPriority::Rm, _)
                | MultiprocessorTest::Partitioned(Partitioned::Fixed(PriorityAssignment::RateMonotonic), _) => rm,
                MultiprocessorTest::Gfp(GlobalPriority::Dm, _)
                | MultiprocessorTest::Partitioned(Partitioned::Fixed(_), _) => dm,
                _ => continue,
            };
            prop_assert_eq!(exact, Some(true), "{} proved it", test);
        }
        let pedf = decide(&set, 1, MultiprocessorTest::from_name("pedf:ff").unwrap());
        prop_assert_eq!(pedf == Some(true), edf == Some(true));
    }

    /// GFB's bound m − (m − 1) δmax grows with m (δmax <= 1): a set it
    /// accepts on m processors it accepts on m + 1.
    #[test]
    fn gfb_is_monotone_in_m(set in constrained_sets(), m in 1u32..=6) {
        if gfb::verdict(&set, m) == Some(true) {
            prop_assert_eq!(gfb::verdict(&set, m + 1), Some(true));
        }
    }
}
