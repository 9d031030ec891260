//! End-to-end tests of `rtlab taskset gen` and `rtlab demo` through the real binary.

mod common;

use common::rtlab;

use predicates::prelude::*;

fn read_dir_sorted(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

const GEN: [&str; 12] = [
    "taskset",
    "gen",
    "-n",
    "6",
    "-u",
    "0.8",
    "--count",
    "5",
    "--seed",
    "42",
    "--deadlines",
    "constrained:0.5..1",
];

#[test]
fn same_seed_same_bytes_and_every_file_validates() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for dir in [&a, &b] {
        rtlab()
            .args(GEN)
            .args(["--out", dir.path().to_str().unwrap()])
            .assert()
            .success()
            .stdout(predicate::str::contains("wrote 5 sets to"));
    }
    let first = read_dir_sorted(a.path());
    assert_eq!(first.len(), 5);
    assert_eq!(first, read_dir_sorted(b.path()));
    assert_eq!(first[0].0, "gen-0000.toml");

    let files: Vec<String> = (0..5)
        .map(|i| {
            a.path()
                .join(format!("gen-{i:04}.toml"))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let out = rtlab()
        .args(["taskset", "validate", "--json"])
        .args(&files)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    for entry in doc.as_array().unwrap() {
        assert_eq!(entry["valid"], true, "{entry}");
    }
}

#[test]
fn another_seed_gives_other_sets() {
    let one = rtlab()
        .args(["taskset", "gen", "--seed", "1"])
        .output()
        .unwrap()
        .stdout;
    let two = rtlab()
        .args(["taskset", "gen", "--seed", "2"])
        .output()
        .unwrap()
        .stdout;
    assert_ne!(one, two);
}

#[test]
fn set_k_alone_equals_set_k_of_a_batch_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = rtlab()
        .args([
            "taskset", "gen", "-n", "4", "--count", "3", "--seed", "9", "--json", "--format",
            "json",
        ])
        .args(["--out", dir.path().to_str().unwrap()])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);
    assert_eq!(list[2]["tasks"], 4);
    let u = list[2]["utilization"].as_f64().unwrap();
    assert!((u - 0.75).abs() < 1e-6, "{u}");
    // Set 0 printed alone is byte-identical to the first file of the batch.
    let alone = rtlab()
        .args([
            "taskset", "gen", "-n", "4", "--seed", "9", "--format", "json",
        ])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(
        alone,
        std::fs::read(dir.path().join("gen-0000.json")).unwrap()
    );
}

#[test]
fn bad_settings_name_the_flag() {
    rtlab()
        .args(["taskset", "gen", "-u", "0"])
        .assert()
        .code(2)
        .stderr("error: --utilization must be > 0\n");
    rtlab()
        .args(["taskset", "gen", "--count", "3"])
        .assert()
        .code(2)
        .stderr("error: --count 3 needs --out DIR (one file per set)\n");
    rtlab()
        .args(["taskset", "gen", "--period-min", "10xs"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value '10xs' for '--period-min <PERIOD_MIN>': invalid duration `10xs`: unknown unit `xs`",
        ));
    rtlab()
        .args(["taskset", "gen", "--method", "foo"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown utilization method `foo`"));
}

#[test]
fn demo_runs_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    rtlab()
        .current_dir(dir.path())
        .args(["demo", "--out", dir.path().to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "avionics (builtin:avionics): 15 tasks, U = 0.8301",
        ))
        .stdout(predicate::str::contains("identical").count(4))
        .stdout(predicate::str::contains("DIFFERENT").not())
        .stdout(predicate::str::contains("breakdown utilization"))
        .stdout(
            predicate::str::is_match(r"fp:dm\s+0 misses\s+0 misses\s+0 misses\s+[1-9]\d* misses")
                .unwrap(),
        )
        .stdout(
            predicate::str::is_match(r"edf\s+0 misses\s+0 misses\s+0 misses\s+0 misses").unwrap(),
        )
        .stdout(predicate::str::contains(
            "== Report: rtlab-demo-report.html (",
        ));
    // The report of what it ran: the analysis, both simulations, the sweep
    // and the latency run, whatever the privileges (real runs need root);
    // headings are `#N kind — set`, N the run's place in the report.
    let html = std::fs::read_to_string(dir.path().join("rtlab-demo-report.html")).unwrap();
    for heading in [
        " analyze — avionics</h2>",
        " sim — lf-scenario-4 (fp:dm)</h2>",
        " sim — lf-scenario-4 (edf)</h2>",
        " sweep</h2>",
        " latency</h2>",
        "<h3>Breakdown utilization vs tick</h3>",
        "<h3>Schedulability ratio</h3>",
        "<h3>Latency histogram</h3>",
        "<h3>Latency over time</h3>",
    ] {
        assert!(
            html.contains(heading),
            "no `{heading}` in the demo's report"
        );
    }
    assert!(html.matches("<h3>Gantt chart</h3>").count() >= 2);
    assert!(!html.contains("Not drawn"), "a plot of the demo is missing");
}
