//! The simulator as a sweep test (`:sim` columns) against the analysis:
//! exact where the theory says so, never below a sufficient test, sharded
//! and merged like every other column.

use rtlab_analysis::sweep::{merge, run_prepared_shard, SweepColumn, SweepResult, SweepSpec};

fn spec(json: &str) -> SweepSpec {
    SweepSpec::from_json(json).unwrap()
}

fn run(spec: &SweepSpec, shards: u64) -> SweepResult {
    let prepared = spec
        .prepare()
        .unwrap()
        .with_simulator(rtlab_sim::sweep_test::simulator());
    let parts: Vec<_> = (0..shards)
        .map(|i| run_prepared_shard(&prepared, i, shards, &|_| true).unwrap())
        .collect();
    merge(&parts).unwrap()
}

/// Columns `a` and `b` accept the same sets at every step.
fn same(result: &SweepResult, a: usize, b: usize) {
    for row in &result.rows {
        assert_eq!(row.accepted[a], row.accepted[b], "{row:?}");
        assert_eq!(row.inconclusive[a], 0, "{row:?}");
    }
}

#[test]
fn one_processor_simulation_is_exact() {
    // Implicit and constrained deadlines: the simulation over the busy
    // period (or hyperperiod) decides like the exact tests.
    for deadlines in ["implicit", "constrained:0.5..1"] {
        let result = run(
            &spec(&format!(
                r#"{{"tasks": 5, "from": 0.75, "to": 0.95, "step": 0.1, "sets": 30, "seed": 3,
                    "deadlines": "{deadlines}",
                    "tests": ["edf:sim", "edf:edf-demand", "fp-rm:sim", "rm:rta", "fp-dm:sim", "dm:rta"]}}"#
            )),
            1,
        );
        same(&result, 0, 1);
        same(&result, 2, 3);
        same(&result, 4, 5);
        let rejected: u64 = result.rows.iter().map(|r| r.rejected[2]).sum();
        assert!(rejected > 0, "RM misses some sets at high U: {deadlines}");
    }
}

#[test]
fn global_simulation_accepts_what_the_sufficient_tests_accept() {
    let result = run(
        &spec(
            r#"{"tasks": 8, "cpus": 4, "from": 2.0, "to": 4.0, "step": 0.5, "sets": 20, "seed": 1,
                "deadlines": "constrained:0.7..1",
                "tests": ["gedf:bcl", "gedf:rta", "gedf:sim", "gfp-dm:sim", "gfp:rta"]}"#,
        ),
        1,
    );
    let mut gap = 0;
    for row in &result.rows {
        for k in [0, 1] {
            assert!(row.accepted[k] <= row.accepted[2], "{row:?}");
        }
        assert!(row.accepted[4] <= row.accepted[3], "{row:?}");
        gap += row.accepted[2] - row.accepted[1];
    }
    assert!(
        gap > 0,
        "the simulation accepts sets the RTA cannot: {result:?}"
    );
    // U = 4 on 4 processors with constrained deadlines misses.
    assert_eq!(result.rows.last().unwrap().accepted[2], 0);
}

#[test]
fn partitioned_simulation_matches_the_partitioning_test_on_implicit_deadlines() {
    let result = run(
        &spec(
            r#"{"tasks": 6, "cpus": 2, "from": 1.2, "to": 2.0, "step": 0.2, "sets": 20, "seed": 5,
                "tests": ["pedf:sim", "pedf:ff-decreasing"]}"#,
        ),
        1,
    );
    same(&result, 0, 1);
}

#[test]
fn shards_of_a_simulated_sweep_merge_to_the_whole() {
    let s = spec(
        r#"{"tasks": 6, "cpus": 4, "from": 2.4, "to": 3.6, "step": 0.6, "sets": 9, "seed": 2,
            "tests": ["gedf:bcl", "gedf:rta", "gedf:sim"]}"#,
    );
    let whole = run(&s, 1);
    assert_eq!(run(&s, 4), whole);
    assert_eq!(
        whole.document_json(),
        run(&s, 3).document_json(),
        "byte for byte"
    );
}

#[test]
fn a_simulated_column_without_a_simulator_is_refused_in_words() {
    let s = spec(r#"{"tests": ["edf:sim"], "sets": 1}"#);
    let e = run_prepared_shard(&s.prepare().unwrap(), 0, 1, &|_| true).unwrap_err();
    assert!(e.to_string().contains("edf:sim needs the simulator"), "{e}");
    assert!(SweepColumn::parse("gedf:sims").is_err());
    let e = SweepColumn::parse("llf:sim").unwrap_err();
    assert!(e.contains("gedf:sim"), "{e}");
}
