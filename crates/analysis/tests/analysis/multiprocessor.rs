//! The catalog's multiprocessor examples and the verdicts the tests must
//! give on them (the simulator's side is in `crates/sim/tests`).

use rtlab_analysis::global::{edf_rta, fp_rta, priority::GlobalPriority};
use rtlab_analysis::multiprocessor::{decide, MultiprocessorTest};
use rtlab_analysis::partition::{partition, Heuristic};
use rtlab_analysis::suite::Options;
use rtlab_analysis::sweep::SweepTest;
use rtlab_model::catalog::build;

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
