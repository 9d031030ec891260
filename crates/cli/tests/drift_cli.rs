//! End-to-end tests of relative timers: `rtlab latency --relative` and
//! `rtlab drift`. They assert what must hold on a noisy machine shared
//! with other runs (a relative loop is behind the grid by at least what it
//! spent between its sleeps), never tight timings. SCHED_OTHER, so they
//! need no privilege.

mod common;

use common::{json_of, rtlab};
use serde_json::Value;

#[test]
fn latency_relative_reports_its_drift_and_misses_nothing() {
    let doc = json_of(&[
        "latency",
        "--relative",
        "--policy",
        "other",
        "--loops",
        "200",
        "--interval",
        "1ms",
        "--json",
    ]);
    assert_eq!(doc["config"]["timer"], "relative");
    let t = &doc["threads"][0];
    assert_eq!(t["loops"], 200);
    assert_eq!(t["missed_periods"], 0, "relative timers never skip");
    // The drift is the sum of every latency and every gap between a
    // wake-up and the next sleep: at least loops x mean latency (the mean
    // is rounded to the nanosecond).
    let (drift, avg) = (
        t["drift_ns"].as_u64().unwrap(),
        t["avg_ns"].as_u64().unwrap(),
    );
    assert!(drift + 200 >= 200 * avg, "drift {drift} < 200 x {avg}");
    // Absolute timers keep the document they always had.
    let abs = json_of(&["latency", "--policy", "other", "--loops", "20", "--json"]);
    assert!(abs["config"].get("timer").is_none());
    assert!(abs["threads"][0].get("drift_ns").is_none());
}

#[test]
fn drift_puts_the_relative_loop_behind_by_at_least_its_work() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("drift.csv");
    let svg = dir.path().join("drift.svg");
    let out = rtlab()
        .args([
            "drift",
            "--policy",
            "other",
            "--period",
            "1ms",
            "--duration",
            "400ms",
            "--work",
            "100us",
            "--every",
            "50ms",
            "--json",
            "--csv",
        ])
        .arg(&csv)
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let loops = doc["loops"].as_array().unwrap();
    let kinds: Vec<&str> = loops.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["absolute", "relative", "compensated"]);
    // The disturbance account of the loops' CPUs (unpinned: every CPU the
    // process may use) and its verdict (issue 35).
    let account = &doc["disturbance"];
    assert!(!account["cpus"].as_array().unwrap().is_empty(), "{account}");
    assert!(
        ["clean", "disturbed"].contains(&account["verdict"]["kind"].as_str().unwrap()),
        "{account}"
    );
    let rel = &loops[1];
    let wakeups = rel["wakeups"].as_u64().unwrap();
    assert!(wakeups > 50 && wakeups <= 400, "{wakeups}");
    assert_eq!(rel["skipped"], 0);
    // Each period it burns 100us of CPU after waking before it sleeps.
    let lag = rel["final_lag_ns"].as_u64().unwrap();
    assert!(
        lag >= 100_000 * (wakeups - 1),
        "lag {lag} for {wakeups} wake-ups"
    );
    let offset = rel["offset_from_absolute_ns"].as_i64().unwrap();
    let abs_lag = loops[0]["final_lag_ns"].as_u64().unwrap() as i64;
    assert_eq!(offset, lag as i64 - abs_lag);
    assert!(loops[0]["offset_from_absolute_ns"].is_null());
    // The CSV: a row per 50 ms window, the relative lag never decreasing.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "time_s,absolute_lag_ns,relative_lag_ns,compensated_lag_ns,relative_minus_absolute_ns,compensated_minus_absolute_ns"
    );
    let rel_lags: Vec<u64> = lines
        .filter_map(|l| l.split(',').nth(2).and_then(|c| c.parse().ok()))
        .collect();
    assert!(rel_lags.len() >= 6, "{text}");
    assert!(rel_lags.windows(2).all(|w| w[1] >= w[0]), "{text}");
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}
