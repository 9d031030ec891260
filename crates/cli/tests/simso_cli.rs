//! `rtlab taskset export --format simso`, `rtlab taskset import`, and SimSo
//! configurations wherever a task-set file is accepted, through the binary.

mod common;

use common::{json_of, rtlab};
use predicates::prelude::*;

/// Exports `builtin:lf-scenario-4` for SimSo under `scheduler` into `dir`.
fn exported_lf(dir: &tempfile::TempDir, scheduler: &str) -> String {
    let xml = dir.path().join("lf.xml");
    rtlab()
        .args([
            "taskset",
            "export",
            "builtin:lf-scenario-4",
            "--format",
            "simso",
        ])
        .args(["--scheduler", scheduler, "--out", xml.to_str().unwrap()])
        .assert()
        .success();
    xml.to_str().unwrap().to_string()
}

#[test]
fn export_import_gives_the_same_set() {
    let dir = tempfile::tempdir().unwrap();
    let xml = exported_lf(&dir, "edf");
    let text = std::fs::read_to_string(&xml).unwrap();
    assert!(
        text.contains("class=\"simso.schedulers.EDF_mono\""),
        "{text}"
    );
    assert!(
        text.contains("duration=\"50000000\""),
        "one hyperperiod, in cycles of 1 ns"
    );
    let original = json_of(&["taskset", "show", "builtin:lf-scenario-4", "--json"]);
    let back = json_of(&["taskset", "show", &xml, "--json"]);
    assert_eq!(back["tasks"], original["tasks"]);
    assert_eq!(back["name"], original["name"]);
    rtlab()
        .args(["taskset", "import", &xml])
        .assert()
        .success()
        .stdout(predicate::str::contains("name = \"lf-scenario-4\""))
        .stderr(predicate::str::contains(
            "lf.xml:3:16: note: SimSo scheduler EDF_mono: `rtlab sim --scheduler edf` simulates the same rule",
        ));
}

#[test]
fn a_simso_configuration_simulates_in_rtlab_sim() {
    let dir = tempfile::tempdir().unwrap();
    let xml = exported_lf(&dir, "fp:dm");
    let from_xml = json_of(&["sim", &xml, "-s", "fp:given", "--json"]);
    let builtin = json_of(&["sim", "builtin:lf-scenario-4", "-s", "fp:dm", "--json"]);
    assert_eq!(
        from_xml["tasks"], builtin["tasks"],
        "DM's levels travel as FP priorities"
    );
    assert_eq!(
        from_xml["deadline_misses"], 1,
        "t2 misses once in the 50 ms hyperperiod"
    );
}

#[test]
fn a_multiprocessor_configuration_is_refused_at_its_second_processor() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("smp.xml");
    std::fs::write(
        &xml,
        "<simulation>\n<processors>\n  <processor id=\"1\" name=\"a\"/>\n  <processor id=\"2\" name=\"b\"/>\n</processors>\n\
         <tasks><task name=\"t\" id=\"1\" period=\"10\" deadline=\"10\" WCET=\"1\"/></tasks>\n</simulation>\n",
    )
    .unwrap();
    let path = xml.to_str().unwrap();
    for args in [
        vec!["sim", path, "-s", "edf"],
        vec!["analyze", path],
        vec!["taskset", "import", path],
    ] {
        rtlab().args(&args).assert().code(1).stderr(predicate::str::contains(format!(
            "{path}:4:3: a multiprocessor configuration (2 processors): rtlab simulates one processor"
        )));
    }
    rtlab()
        .args(["taskset", "validate", path])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{path}:4:3: a multiprocessor"
        )));
}

#[test]
fn export_refusals_are_usage_errors_or_name_the_task() {
    rtlab()
        .args(["taskset", "export", "builtin:avionics", "--format", "simso", "-s", "rr:1ms"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--scheduler: no SimSo scheduler for `rr:1ms`: a SimSo export takes edf, fp:rm, fp:dm or fp:given",
        ));
    rtlab()
        .args(["taskset", "export", "builtin:avionics", "--format", "simso"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--duration is needed"));
    rtlab()
        .args([
            "taskset",
            "export",
            "builtin:avionics",
            "--format",
            "simso",
            "-s",
            "fp:given",
            "-d",
            "1s",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("has no priority"));
}
