//! `rtlab sim --trace` and `rtlab run --trace` write the same format: one
//! Chrome trace-event JSON document with the same `displayTimeUnit`, thread
//! names first, the same event shapes.

mod common;

use std::path::Path;

use common::{json_of, rtlab};
use serde_json::Value;

fn read_trace(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON ({e})", path.display()))
}

/// The keys of the first event with phase `ph`, sorted.
fn keys_of(doc: &Value, ph: &str) -> Vec<String> {
    let event = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["ph"] == ph)
        .unwrap_or_else(|| panic!("no {ph} event"));
    event.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn sim_and_run_traces_are_valid_json_with_the_same_time_unit() {
    let dir = tempfile::tempdir().unwrap();
    let sim_trace = dir.path().join("sim.json");
    let run_trace = dir.path().join("run.json");
    rtlab()
        .args(["sim", "builtin:lf-scenario-2", "-s", "fp:dm", "-d", "100ms"])
        .args(["--trace", sim_trace.to_str().unwrap()])
        .assert()
        .success();
    // SCHED_OTHER: no privilege needed, a short run on real threads.
    let report = json_of(&[
        "run",
        "builtin:lf-scenario-2",
        "--policy",
        "other",
        "--duration",
        "100ms",
        "--no-mlock",
        "--trace",
        run_trace.to_str().unwrap(),
        "--json",
    ]);
    let (sim, run) = (read_trace(&sim_trace), read_trace(&run_trace));
    assert_eq!(sim["displayTimeUnit"], "ns");
    assert_eq!(run["displayTimeUnit"], sim["displayTimeUnit"]);
    for doc in [&sim, &run] {
        let events = doc["traceEvents"].as_array().unwrap();
        assert_eq!(events[0]["ph"], "M", "thread names come first");
        assert_eq!(keys_of(doc, "M"), ["args", "name", "ph", "pid", "tid"]);
        for ph in ["X", "i"] {
            let keys = keys_of(doc, ph);
            for key in ["name", "ph", "pid", "tid", "ts"] {
                assert!(keys.iter().any(|k| k == key), "{ph} event without {key}");
            }
        }
    }
    let releases = run["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "i")
        .count();
    assert_eq!(Value::from(releases), report["released"]);
}
