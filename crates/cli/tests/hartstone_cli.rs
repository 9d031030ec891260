//! `rtlab hartstone` end to end: the simulated series' numbers, the
//! outputs' agreement, usage errors, and (as root, under the machine-wide
//! real-time lock; `#[ignore = "needs root"]`) the real-thread series'
//! structure: every iteration reported, nothing run after the first miss.

mod common;

use common::{json_of, rtlab};
use predicates::prelude::*;
use serde_json::Value;

/// Every iteration is numbered 0, 1, ... in order; only the last may have
/// misses, and it has some exactly when the series ended on a miss; a
/// series without a miss ran `max` iterations.
fn assert_series_structure(outcome: &Value, max: u64) {
    let iterations = outcome["iterations"].as_array().expect("iterations");
    assert!(!iterations.is_empty());
    for (k, it) in iterations.iter().enumerate() {
        assert_eq!(it["iteration"], k as u64, "{outcome}");
        assert!(it["jobs"].as_u64().unwrap() > 0, "{it}");
        let missed = it["misses"].as_u64().unwrap() > 0;
        let last = k + 1 == iterations.len();
        assert!(
            !missed || last,
            "iteration {k} missed but the series went on: {outcome}"
        );
        assert_eq!(missed, it["first_miss"].is_array(), "{it}");
    }
    let completed = outcome["iterations_completed"].as_u64().unwrap();
    match outcome["end"].as_str() {
        Some("miss") => {
            assert_eq!(completed + 1, iterations.len() as u64);
            assert_eq!(outcome["ending_miss"]["iteration"], completed);
        }
        Some("cap") => {
            assert_eq!(completed, max);
            assert_eq!(iterations.len() as u64, max);
        }
        _ => {} // refused or invalid: a reason object
    }
}

#[test]
fn the_simulated_series_stops_at_the_first_miss_with_exact_counts() {
    let doc = json_of(&[
        "hartstone",
        "--test",
        "4",
        "--scheduler",
        "edf",
        "--iteration-duration",
        "1s",
        "--json",
    ]);
    let outcome = &doc["runs"][0]["tests"][0];
    // EDF meets every pool up to U = 0.40 + 7 x 0.08 = 0.96 and misses at 1.04.
    assert_eq!(outcome["iterations_completed"], 8);
    assert_eq!(outcome["test"], 4);
    assert_eq!(outcome["iterations"][7]["tasks"], 12);
    assert!((outcome["utilization_reached"].as_f64().unwrap() - 0.96).abs() < 1e-9);
    assert_series_structure(outcome, 200);
    assert_eq!(doc["rankings"][0]["order"][0], "sim edf");
}

#[test]
fn csv_and_table_say_what_the_json_says() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("h.csv");
    let out = rtlab()
        .args(["hartstone", "--test", "3", "--scheduler", "edf,rr:2ms"])
        .args(["--iteration-duration", "1s", "--csv"])
        .arg(&csv)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(out).unwrap();
    assert!(table.contains("sim edf > sim rr:2ms"), "{table}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "world,scheduler,test,iterations,utilization_reached,cs_per_s,preemptions,ending_task,ending_at_ns"
    );
    assert_eq!(lines.len(), 3);
    assert!(lines[1].starts_with("sim,edf,3,8,"), "{}", lines[1]);
}

#[test]
fn the_extended_run_reports_misses_per_test() {
    let doc = json_of(&[
        "hartstone",
        "--test",
        "4",
        "--extended",
        "-s",
        "edf",
        "--json",
    ]);
    let r = &doc["extended_runs"][0]["results"][0];
    assert_eq!(
        (r["normal"].as_str(), r["overload"].as_str()),
        (Some("+1 task"), Some("+10 tasks"))
    );
    assert!(r["misses"].as_u64().unwrap() > 0);
    assert!(r["context_switches_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn usage_errors_name_the_flag() {
    for (args, message) in [
        (vec!["hartstone"], "give --scheduler LIST"),
        (
            vec![
                "hartstone",
                "--extended",
                "-s",
                "edf",
                "--extended-length",
                "3s",
            ],
            "--extended-length 3s: use at least 4s",
        ),
        (
            vec!["hartstone", "-s", "edf", "--test", "5"],
            "--test: unknown Hartstone test `5`",
        ),
        (vec!["hartstone", "-s", "nope"], "--scheduler `nope`"),
        (
            vec!["hartstone", "-s", "edf", "--iteration-duration", "100ms"],
            "use at least 500ms",
        ),
        (vec!["hartstone", "--policy", "nope"], "--policy `nope`"),
        (
            vec!["hartstone", "-s", "edf", "--kilo-whet", "16ms"],
            "--kilo-whet 16ms: test 1, iteration 0",
        ),
        (
            vec![
                "hartstone",
                "-s",
                "edf",
                "--extended",
                "--kilo-whet",
                "2.5ms",
            ],
            "48% is below the baseline's 80%",
        ),
    ] {
        rtlab()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
}

/// The extended Hartstone on real threads (4 s: the overload in
/// [1, 1.5) s): under `--on-miss continue` every release is made, so the
/// real run releases exactly the jobs its simulator counterpart does, and
/// the output says why RT throttling was switched off.
#[test]
#[ignore = "needs root"]
fn the_extended_run_on_real_threads_releases_what_the_simulator_does() {
    let _one = common::real_time();
    let doc = json_of(&[
        "hartstone",
        "--test",
        "1",
        "--extended",
        "--policy",
        "rm",
        "--extended-length",
        "4s",
        "--on-miss",
        "continue",
        "--json",
    ]);
    let runs = doc["extended_runs"].as_array().unwrap();
    let labels: Vec<&str> = runs.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["real rm", "sim fp:rm"]);
    let jobs = |i: usize| runs[i]["results"][0]["jobs"].as_u64().unwrap();
    // Tasks 1-4: 30 a second for 4 s; task 5 at 64 Hz outside [1, 1.5) s
    // (64 + 160 = 224) and at 352 Hz inside it (period 2840909 ns: 177).
    assert_eq!(jobs(1), 120 + 224 + 177);
    assert_eq!(jobs(0), jobs(1));
    assert!(doc["notes"][0]
        .as_str()
        .unwrap()
        .contains("RT throttling and SCHED_DEADLINE admission switched off"));
    assert_eq!(doc["extended_length_ns"], 4_000_000_000u64);
}

/// Real threads, very short iterations: the structure, never the timing.
/// Run under `flock /tmp/rtlab-realtime.lock`.
#[test]
#[ignore = "needs root"]
fn real_thread_series_report_every_iteration_and_stop_at_the_first_miss() {
    let _one = common::real_time();
    // 2.5 ms kilo-whets: U = 0.80, 0.96, 1.12, 1.28 for k = 0..3.
    let doc = json_of(&[
        "hartstone",
        "--test",
        "4",
        "--policy",
        "rm,edf",
        "--kilo-whet",
        "2.5ms",
        "--iteration-duration",
        "500ms",
        "--max-iterations",
        "4",
        "--json",
    ]);
    let runs = doc["runs"].as_array().unwrap();
    let labels: Vec<&str> = runs.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, vec!["real rm", "sim fp:rm", "real edf", "sim edf"]);
    for run in runs {
        let outcome = &run["tests"][0];
        if run["world"] == "real" {
            let first = &outcome["iterations"][0];
            let ns = first["duration_ns"].as_u64().unwrap();
            assert!((450_000_000..=600_000_000).contains(&ns), "{first}");
        }
        assert_series_structure(outcome, 4);
    }
    let rankings: Vec<&str> = doc["rankings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["world"].as_str().unwrap())
        .collect();
    assert_eq!(rankings, vec!["sim", "real"]);
}
