//! `rtlab report` and `--plot`: the files they write, and errors that name
//! the file and position.

mod common;

use common::rtlab;
use predicates::prelude::*;

/// A stored sweep run in the shape `rtlab report --from-json` reads, with
/// a command line that must be escaped.
const SWEEP_RUN: &str = r#"{"id": 7, "created": "2026-11-23T06:00:00Z", "rtlab_version": "0.1.0",
  "command": "rtlab sweep <x>", "kind": "sweep", "host": {"kernel": "6.18"}, "status": "complete",
  "document": {"tests": ["rm:rta", "edf:edf-demand"], "rows": [
    {"utilization": 0.5, "sets": 2, "ratio": {"rm:rta": 1.0, "edf:edf-demand": 1.0}},
    {"utilization": 1.0, "sets": 2, "ratio": {"rm:rta": 0.0, "edf:edf-demand": 0.5}}]}}"#;

#[test]
fn report_from_json_writes_one_self_contained_page() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.json"), SWEEP_RUN).unwrap();
    std::fs::write(
        dir.path().join("many.json"),
        format!("[{SWEEP_RUN}, {SWEEP_RUN}]"),
    )
    .unwrap();
    let out = dir.path().join("r.html");
    rtlab()
        .current_dir(dir.path())
        .args([
            "report",
            "--from-json",
            "one.json",
            "many.json",
            "--out",
            "r.html",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("report: 3 runs ("));
    let html = std::fs::read_to_string(out).unwrap();
    assert_eq!(html.matches("<section class=\"run\"").count(), 3);
    assert_eq!(html.matches("<svg").count(), 3);
    assert!(html.contains("rtlab sweep &lt;x&gt;"));
}

#[test]
fn report_errors_name_the_file_and_position() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), "{\n  \"id\": 1,\n  oops\n}").unwrap();
    std::fs::write(dir.path().join("shape.json"), "{\"id\": 1}").unwrap();
    rtlab()
        .current_dir(dir.path())
        .args(["report", "--from-json", "bad.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: bad.json:3:3: "));
    rtlab()
        .current_dir(dir.path())
        .args(["report", "--from-json", "shape.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "shape.json: not a stored run: missing field",
        ));
    rtlab().args(["report"]).assert().code(2);
}

#[test]
fn plot_writes_the_commands_main_plot() {
    let dir = tempfile::tempdir().unwrap();
    rtlab()
        .current_dir(dir.path())
        .args([
            "sweep",
            "--tasks",
            "4",
            "--from",
            "0.5",
            "--to",
            "1.0",
            "--step",
            "0.25",
            "--sets",
            "10",
            "--test",
            "rm:rta,edf:edf-demand",
            "--plot",
            "ratio.svg",
        ])
        .assert()
        .success();
    let svg = std::fs::read_to_string(dir.path().join("ratio.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("rm:rta") && svg.contains("edf:edf-demand"));
    rtlab()
        .current_dir(dir.path())
        .args([
            "sim",
            "builtin:lf-scenario-4",
            "--scheduler",
            "fp:dm",
            "--duration",
            "100ms",
            "--plot",
            "gantt.svg",
        ])
        .assert()
        .success();
    let svg = std::fs::read_to_string(dir.path().join("gantt.svg")).unwrap();
    // Both tasks' lanes, and t2's preemptions by t1 (2 per job under DM).
    for text in ["t1", "t2", "2p"] {
        assert!(
            svg.contains(&format!(">\n{text}\n<")),
            "no `{text}` in {svg}"
        );
    }
    rtlab()
        .current_dir(dir.path())
        .args([
            "sim",
            "builtin:lf-scenario-4",
            "--scheduler",
            "fp:dm",
            "--plot",
            "/nonexistent/dir/x.svg",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "error: --plot: cannot write /nonexistent/dir/x.svg",
        ));
}
