//! End-to-end tests of `rtlab latency`, `rtlab load` and `rtlab lag-study`.
//! They assert what must hold on a noisy VM (counts, ranges, that runs end),
//! never tight timings. Real-time policies need root: those tests are
//! `#[ignore = "needs root"]` (run them as root with `-- --ignored`).

mod common;

use common::{json_of, rtlab, run_measured};
use serde_json::Value;

use predicates::prelude::*;

#[test]
fn latency_other_records_the_requested_loops() {
    let doc = json_of(&[
        "latency",
        "--policy",
        "other",
        "--loops",
        "50",
        "--interval",
        "1ms",
        "--json",
    ]);
    let threads = doc["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1);
    let t = &threads[0];
    assert_eq!(t["policy"], "other");
    assert_eq!(t["requested_loops"], 50);
    // As cyclictest -l: every requested loop is measured; periods skipped
    // after a late wake-up are counted apart (missed_periods).
    assert_eq!(t["loops"], 50, "every requested loop is measured");
    assert!(t["missed_periods"].as_u64().is_some());
    let (min, avg, max) = (
        t["min_ns"].as_u64().unwrap(),
        t["avg_ns"].as_u64().unwrap(),
        t["max_ns"].as_u64().unwrap(),
    );
    assert!(min <= avg && avg <= max, "{min} {avg} {max}");
    assert!(t["p50_ns"].as_u64().unwrap() <= t["p99_ns"].as_u64().unwrap());
}

#[test]
#[ignore = "needs root"]
fn latency_fifo_two_pinned_threads_cyclictest_lines() {
    let _one = common::real_time();
    rtlab()
        .args([
            "latency", "-t", "2", "-p", "80", "-i", "1ms", "-l", "100", "-a", "-m",
        ])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"T: 0 \(\s*\d+\) P:80 I:1000 C:\s+\d+ Min:").unwrap())
        .stdout(predicate::str::is_match(r"T: 1 \(\s*\d+\) P:80 I:1500 C:\s+\d+ Min:").unwrap());
}

#[test]
fn latency_writes_histogram_and_series() {
    let dir = tempfile::tempdir().unwrap();
    let hist = dir.path().join("hist.txt");
    let series = dir.path().join("lag.csv");
    rtlab()
        .args(["latency", "--policy", "other", "-l", "30", "-i", "1ms"])
        .args([
            "--histogram",
            hist.to_str().unwrap(),
            "--series",
            series.to_str().unwrap(),
        ])
        .assert()
        .success();
    let series = std::fs::read_to_string(series).unwrap();
    let mut lines = series.lines();
    assert_eq!(
        lines.next(),
        Some("thread,loop,time_ns,latency_ns,jitter_ns")
    );
    assert!(lines.count() >= 1);
    let hist = std::fs::read_to_string(hist).unwrap();
    assert!(hist.starts_with("# Histogram"), "{hist}");
}

/// `--series` used to keep every point in memory (16 bytes each, up to 4M
/// per thread, allocated up front). Now it is streamed: a run six times
/// longer writes hundreds of thousands more points, every one of them, in
/// the same memory.
#[test]
#[ignore = "needs root"]
fn latency_series_is_streamed_in_memory_that_does_not_grow_with_the_run() {
    let _one = common::real_time();
    let dir = tempfile::tempdir().unwrap();
    let run = |duration: &str| {
        let series = dir.path().join(format!("series-{duration}.csv"));
        let m = run_measured(
            &[
                "latency",
                "-t",
                "8",
                "-p",
                "50",
                "-i",
                "100us",
                "-d",
                "0",
                "-m",
                "-D",
                duration,
                "--series",
                series.to_str().unwrap(),
                "--json",
            ],
            None,
        );
        assert!(m.status.success(), "{}", m.stderr);
        let doc: Value = serde_json::from_str(&m.stdout).unwrap();
        let threads = doc["threads"].as_array().unwrap();
        let loops: u64 = threads.iter().map(|t| t["loops"].as_u64().unwrap()).sum();
        assert!(threads.iter().all(|t| t["series_dropped"] == 0), "{doc}");
        let rows = std::fs::read_to_string(&series).unwrap().lines().count() as u64 - 1;
        assert_eq!(rows, loops, "{duration}: a row per measured loop");
        (rows, m.peak_rss_bytes)
    };
    let (short_rows, short_peak) = run("1s");
    let (long_rows, long_peak) = run("6s");
    let more = long_rows - short_rows;
    // Kept in memory, the extra points alone would take more than 2.4 MB.
    assert!(more >= 100_000, "only {more} more points");
    assert!(
        long_peak < short_peak + (1 << 20),
        "peak RSS {short_peak} -> {long_peak} bytes for {more} more points"
    );
}

#[test]
fn latency_bad_flags_are_one_line_errors() {
    rtlab()
        .args(["latency", "--interval", "0", "-l", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: invalid --interval 0ns"))
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    rtlab()
        .args([
            "latency",
            "--policy",
            "fifo",
            "--priority",
            "100",
            "-l",
            "5",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--priority"));
    rtlab()
        .args(["latency", "--load", "disco", "-l", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid load `disco`"));
    // Every sample is compared with the kept outliers: their number is capped.
    rtlab()
        .args(["latency", "--outliers", "1001", "-l", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--outliers"));
    rtlab()
        .args([
            "latency",
            "-t",
            "1024",
            "--histogram-buckets",
            "1000000",
            "-l",
            "5",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("buckets in all"));
}

#[test]
fn load_runs_for_its_duration_and_stops() {
    let doc = json_of(&["load", "cpu:1", "--duration", "200ms", "--json"]);
    assert_eq!(doc["threads"], 1, "{doc}");
    assert!(doc["spin_rounds"].as_u64().unwrap() > 0, "{doc}");
    let doc = json_of(&["load", "hackbench:1:pipe", "--duration", "200ms", "--json"]);
    assert!(doc["messages"].as_u64().unwrap() > 0, "{doc}");
}

#[test]
#[ignore = "needs root"]
fn lag_study_one_period_two_controllers() {
    let _one = common::real_time();
    let doc = json_of(&[
        "lag-study",
        "--periods",
        "1ms",
        "--utilizations",
        "0,50",
        "--samples",
        "100",
        "--json",
    ]);
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "2 utilizations x controller off/on");
    for cell in cells {
        assert_eq!(cell["samples"], 100);
        for share in ["below_10us", "below_20us", "busy_wait_share"] {
            let v = cell[share].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&v), "{share} = {v}");
        }
        assert!(cell["below_10us"].as_f64() <= cell["below_20us"].as_f64());
    }
}
