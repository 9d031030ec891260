//! End-to-end tests of `rtlab taskset ...` through the real binary.

mod common;

use common::{json_of, rtlab};

use predicates::prelude::*;
use serde_json::Value;

#[test]
fn show_avionics_json_lists_15_tasks() {
    let doc = json_of(&["taskset", "show", "builtin:avionics", "--json"]);
    assert_eq!(doc["tasks"].as_array().unwrap().len(), 15);
    assert_eq!(doc["task_count"], 15);
    let u = doc["utilization"].as_f64().unwrap();
    assert!((u - 0.8301).abs() < 5e-5, "{u}");
    assert_eq!(doc["deadlines"], "implicit");
    assert_eq!(doc["tasks"][0]["period_ns"], 25_000_000);
    assert_eq!(doc["hyperperiod_ns"], 118_000_000_000u64);
}

#[test]
fn show_prints_a_readable_table() {
    rtlab()
        .args(["taskset", "show", "builtin:lf-scenario-4"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "lf-scenario-4 (builtin:lf-scenario-4): 2 tasks, U = 0.9200",
        ))
        .stdout(predicate::str::contains("constrained deadlines"))
        .stdout(predicate::str::is_match(r"t1\s+25 ms\s+23 ms\s+3 ms\s+1 ms").unwrap());
}

#[test]
fn list_names_every_builtin() {
    let doc = json_of(&["taskset", "list", "--json"]);
    let names: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "hartstone-ph",
            "gap",
            "avionics",
            "ins",
            "ins-big",
            "lf-scenario-1",
            "lf-scenario-2",
            "lf-scenario-3",
            "lf-scenario-4",
            "priority-inversion",
            "dhall",
            "dhall-linux",
            "no-partition",
        ]
    );
    rtlab()
        .args(["taskset", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "builtin:hartstone-ph?kilo-whet=1ms",
        ));
}

#[test]
fn validate_reports_every_error_with_its_place_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[task]]\nname = \"a\"\nperiod = \"2ms\"\nwcet = \"3ms\"\n\
         [[task]]\nname = \"a\"\nperiod = \"5ms\"\nwcet = \"1ms\"\n",
    )
    .unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(
        &good,
        r#"{"name": "g", "task": [{"name": "x", "period": "10ms", "wcet": "1ms"}]}"#,
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let good = good.to_str().unwrap();
    rtlab()
        .args(["taskset", "validate", bad, good])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{bad}:4:8: task `a`: wcet 3ms exceeds deadline 2ms: no job can meet it\n\
             {bad}:6:8: task `a`: duplicate task name\n\
             {good}: ok (1 tasks, U = 0.1000)"
        )));
    let out = rtlab()
        .args(["taskset", "validate", bad, good, "--json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc[0]["valid"], false);
    assert_eq!(doc[0]["errors"].as_array().unwrap().len(), 2);
    assert_eq!(doc[0]["errors"][1]["line"], 6);
    assert_eq!(doc[1]["valid"], true);
}

#[test]
fn a_bad_file_is_one_line_on_stderr_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unit.toml");
    std::fs::write(
        &path,
        "[[task]]\nname = \"a\"\nperiod = \"10xs\"\nwcet = \"1ms\"\n",
    )
    .unwrap();
    let path = path.to_str().unwrap();
    rtlab()
        .args(["taskset", "show", path])
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "error: {path}:3:10: invalid duration `10xs`: unknown unit `xs` (use ns, us, ms or s)\n"
        ));
}

#[test]
fn unknown_builtin_and_missing_file_are_explained() {
    rtlab()
        .args(["taskset", "show", "builtin:nope"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "error: unknown built-in task set `nope` (known: hartstone-ph,",
        ));
    rtlab()
        .args(["taskset", "show", "/nonexistent/x.toml"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "error: /nonexistent/x.toml: cannot read: No such file or directory",
        ));
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    rtlab()
        .args(["taskset", "show"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("<TASKSET>"));
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    // `rtlab ... | head -1`: the reader goes away after one line.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rtlab"))
        .args(["taskset", "show", "builtin:gap", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
