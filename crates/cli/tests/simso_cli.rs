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
fn a_multiprocessor_scheduler_rtlab_has_not_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("smp.xml");
    std::fs::write(
        &xml,
        "<simulation>\n<sched class=\"simso.schedulers.LLF\"/>\n<processors>\n  <processor id=\"1\" name=\"a\"/>\n  <processor id=\"2\" name=\"b\"/>\n</processors>\n\
         <tasks><task name=\"t\" id=\"1\" period=\"10\" deadline=\"10\" WCET=\"1\"/></tasks>\n</simulation>\n",
    )
    .unwrap();
    let path = xml.to_str().unwrap();
    for args in [
        vec!["sim", path, "-s", "gedf"],
        vec!["analyze", path],
        vec!["taskset", "import", path],
    ] {
        rtlab()
            .args(&args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "{path}:2:15: SimSo scheduler LLF on 2 processors has no rtlab equivalent"
            )));
    }
    rtlab()
        .args(["taskset", "validate", path])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{path}:2:15: SimSo scheduler LLF"
        )));
}

/// `pedf` on 2 processors through SimSo's XML: without `cpu` fields the
/// export is SimSo's P_EDF and the import gives the tasks the processors
/// P_EDF's first fit on decreasing utilization puts them on; with
/// `--partition wf` it is Fixed_PEDF with each task's processor; both
/// simulate under `rtlab sim -s pedf` as the TOML they came from.
#[test]
fn partitioned_exports_carry_the_assignment_back() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("set.toml");
    // u: a 0.5, b 0.6, c 0.3, d 0.4. P_EDF: b -> 0, a -> 1, d -> 0, c -> 1.
    std::fs::write(
        &toml,
        "name = \"p\"\n[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"5ms\"\n\
         [[task]]\nname = \"b\"\nperiod = \"20ms\"\nwcet = \"12ms\"\n\
         [[task]]\nname = \"c\"\nperiod = \"30ms\"\nwcet = \"9ms\"\n\
         [[task]]\nname = \"d\"\nperiod = \"40ms\"\nwcet = \"16ms\"\n",
    )
    .unwrap();
    let (toml, xml) = (toml.to_str().unwrap(), dir.path().join("p.xml"));
    let xml = xml.to_str().unwrap();
    rtlab()
        .args([
            "taskset", "export", toml, "--format", "simso", "--cpus", "2", "-s", "pedf", "-d",
            "120ms", "--out", xml,
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "SimSo's P_EDF places them on processors 1 0 1 0",
        ));
    assert!(std::fs::read_to_string(xml)
        .unwrap()
        .contains("simso.schedulers.P_EDF"));
    let imported = dir.path().join("back.json");
    rtlab()
        .args([
            "taskset",
            "import",
            xml,
            "--out",
            imported.to_str().unwrap(),
        ])
        .assert()
        .success();
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&imported).unwrap()).unwrap();
    assert_eq!(back["processors"], 2);
    let cpus: Vec<u64> = back["task"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cpu"].as_u64().unwrap())
        .collect();
    assert_eq!(cpus, [1, 0, 1, 0]);
    let sim = |file: &str, extra: &[&str]| {
        let mut args = vec!["sim", file, "-s", "pedf", "-d", "120ms", "--json"];
        args.extend_from_slice(extra);
        let out = rtlab().args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["tasks"].clone()
    };
    assert_eq!(sim(xml, &[]), sim(imported.to_str().unwrap(), &[]));

    rtlab()
        .args([
            "taskset",
            "export",
            toml,
            "--format",
            "simso",
            "--cpus",
            "2",
            "-s",
            "pedf",
            "--partition",
            "wf",
            "-d",
            "120ms",
            "--out",
            xml,
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "Fixed_PEDF, which SimSo 0.8.5 cannot start",
        ));
    let text = std::fs::read_to_string(xml).unwrap();
    assert!(
        text.contains("simso.schedulers.Fixed_PEDF")
            && text.contains("<field name=\"cpu\" type=\"int\"/>")
    );
    assert_eq!(
        sim(xml, &[]),
        sim(toml, &["--cpus", "2", "--partition", "wf"])
    );

    rtlab()
        .args([
            "taskset", "export", toml, "--format", "simso", "--cpus", "2", "-s", "edf", "-d", "1s",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: --scheduler: `edf` schedules one processor; on 2 processors export gedf",
        ));
    rtlab()
        .args([
            "taskset",
            "export",
            toml,
            "--format",
            "simso",
            "-s",
            "gedf",
            "--partition",
            "ff",
            "-d",
            "1s",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--partition places tasks for pedf or pfp:rm, not gedf",
        ));
}

#[test]
fn export_refusals_are_usage_errors_or_name_the_task() {
    rtlab()
        .args(["taskset", "export", "builtin:avionics", "--format", "simso", "-s", "rr:1ms"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--scheduler: no SimSo scheduler for `rr:1ms`: a SimSo export takes edf, fp:rm, fp:dm, fp:given (one processor); gedf, gfp:rm, gfp:dm, gfp:given, edzl, pedf, pfp:rm",
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
