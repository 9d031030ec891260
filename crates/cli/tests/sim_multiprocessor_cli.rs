//! `rtlab sim` on m processors from the command line: the platform from
//! the file or `--cpus`, `--partition`, the JSON and human outputs, the
//! per-processor Gantt and trace, and the refusals (exit 2, one line).

mod common;

use common::{json_of, rtlab, stdout_of, write};

/// Dhall's example as a file: two light tasks (C=2, T=10 ms) fixed to cpu
/// 1, a heavy one (C=10, T=11 ms) to cpu 0.
const DHALL: &str = r#"name = "dhall"
processors = 2
[[task]]
name = "light1"
period = "10ms"
wcet = "2ms"
cpu = 1
[[task]]
name = "light2"
period = "10ms"
wcet = "2ms"
cpu = 1
[[task]]
name = "heavy"
period = "11ms"
wcet = "10ms"
cpu = 0
"#;

#[test]
fn the_files_platform_and_cpu_fields_drive_pedf_and_gedf_misses_dhall() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "dhall.toml", DHALL);
    let pedf = json_of(&["sim", &file, "-s", "pedf", "-d", "110ms", "--json"]);
    assert_eq!(pedf["deadline_misses"], 0);
    assert_eq!(pedf["processors"].as_array().unwrap().len(), 2);
    // cpu 0: the heavy task's 10 ms in each of 11 ms periods (the job
    // released at 99 ms done at 109 ms): 100 ms of 110.
    assert_eq!(pedf["processors"][0]["executed_ns"], 100_000_000u64);
    // The same tasks without their cpu fields, globally: Dhall's effect.
    let global = write(
        &dir,
        "global.toml",
        &DHALL
            .lines()
            .filter(|l| !l.starts_with("cpu"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let gedf = json_of(&["sim", &global, "-s", "gedf", "-d", "110ms", "--json"]);
    assert_eq!(gedf["tasks"][2]["first_miss_ns"], 11_000_000u64);
    let placed = json_of(&[
        "sim",
        &global,
        "-s",
        "pedf",
        "--partition",
        "ff-decreasing-util",
        "-d",
        "110ms",
        "--json",
    ]);
    assert_eq!(placed["deadline_misses"], 0);
}

#[test]
fn gedf_reports_migrations_and_per_processor_utilization() {
    let out = stdout_of(&[
        "sim",
        "builtin:avionics",
        "-s",
        "gedf",
        "--cpus",
        "2",
        "-d",
        "1s",
    ]);
    assert!(out.contains("cpu 0: utilization"), "{out}");
    assert!(out.contains("cpu 1: utilization"), "{out}");
    let json = json_of(&[
        "sim",
        "builtin:avionics",
        "-s",
        "gedf",
        "--cpus",
        "2",
        "-d",
        "1s",
        "--json",
    ]);
    let per_task: u64 = json["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["migrations"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(json["migrations"].as_u64().unwrap_or(0), per_task);
    assert_eq!(json["scheduler"], "gedf");
    // A uniprocessor run's JSON has neither key.
    let uni = json_of(&["sim", "builtin:avionics", "-s", "edf", "-d", "1s", "--json"]);
    assert!(uni.get("processors").is_none() && uni.get("migrations").is_none());
}

#[test]
fn gantt_and_trace_get_one_row_per_processor() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("g.svg");
    let trace = dir.path().join("t.json");
    stdout_of(&[
        "sim",
        "builtin:avionics",
        "-s",
        "edzl",
        "--cpus",
        "3",
        "-d",
        "200ms",
        "--gantt",
        svg.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(svg).unwrap();
    // The texts of the chart: its row labels among them.
    let texts: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
        .collect();
    for c in 0..3 {
        assert!(
            texts.contains(&format!("cpu {c}").as_str()),
            "row cpu {c}: {texts:?}"
        );
    }
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(&names[..3], ["cpu 0", "cpu 1", "cpu 2"]);
}

#[test]
fn refusals_name_the_flag_and_exit_2() {
    let cases: [(&[&str], &str); 5] = [
        (&["-s", "edf", "--cpus", "2"], "schedules one processor"),
        (&["-s", "gedf", "--cpus", "0"], "--cpus 0"),
        (
            &["-s", "pedf", "--cpus", "2"],
            "needs every task's processor",
        ),
        (
            &["-s", "gedf", "--cpus", "2", "--partition", "ff"],
            "--partition",
        ),
        (
            &["-s", "pedf", "--cpus", "2", "--partition", "xx"],
            "--partition `xx`",
        ),
    ];
    for (args, needle) in cases {
        let out = rtlab()
            .args(["sim", "builtin:avionics", "-d", "10ms"])
            .args(args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8(out).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}
