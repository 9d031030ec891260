//! Every command's default (human) output fits a 100-column terminal
//! (issue 36): run with `COLUMNS=100` and standard output on a pipe, no
//! line is wider than 100 characters, so tables left out columns (and said
//! which) instead of breaking a cell across lines; with `--wide` a run's
//! table keeps every column.
//!
//! The command list comes from the CLI itself (`rtlab __commands`): a new
//! command without a line in [`SHORT_RUNS`] fails `every_command_is_checked`.
//! The commands that run real-time threads need root; without it their
//! test says so and passes, except under `CI`, where it fails.

mod common;

use std::path::Path;
use std::process::Command;

/// The width checked.
const WIDTH: usize = 100;

/// Commands whose standard output is a file format for programs (SimSo
/// XML, rt-app JSON, CSV), not text for people: they run, unchecked.
const FILE_FORMATS: &[&str] = &["taskset export", "results export", "completions"];

/// A short run of each command with its default output: `(command path,
/// arguments, needs root)`. In the arguments `{dir}` is a scratch folder
/// holding `a.xml` (a SimSo file), `shard-0.json` and `shard-1.json` (two
/// sweep shards) and the store `s.sqlite` with two simulated runs.
const SHORT_RUNS: &[(&str, &[&str], bool)] = &[
    ("taskset list", &["taskset", "list"], false),
    (
        "taskset show",
        &["taskset", "show", "builtin:avionics"],
        false,
    ),
    (
        "taskset validate",
        &["taskset", "validate", "builtin:avionics"],
        false,
    ),
    (
        "taskset gen",
        &[
            "taskset",
            "gen",
            "-n",
            "8",
            "-u",
            "0.7",
            "--count",
            "3",
            "--seed",
            "1",
            "--out",
            "{dir}/gen",
        ],
        false,
    ),
    (
        "taskset export",
        &[
            "taskset",
            "export",
            "builtin:avionics",
            "--format",
            "simso",
            "-d",
            "1s",
        ],
        false,
    ),
    (
        "taskset import",
        &["taskset", "import", "{dir}/a.xml"],
        false,
    ),
    (
        "analyze",
        &[
            "analyze",
            "builtin:avionics",
            "--policy",
            "all",
            "--overheads",
            "builtin:rtmach",
            "--tick",
            "8ms,16ms",
            "--breakdown",
        ],
        false,
    ),
    (
        "partition",
        &[
            "partition",
            "builtin:dhall",
            "--cpus",
            "2",
            "--heuristic",
            "ff-decreasing",
        ],
        false,
    ),
    (
        "sweep",
        &[
            "sweep",
            "--tasks",
            "4",
            "--from",
            "0.7",
            "--to",
            "1.0",
            "--step",
            "0.1",
            "--sets",
            "20",
            "--test",
            "rm:liu-layland,rm:hyperbolic,rm:rta,dm:rta,opa:rta,edf:edf-demand",
        ],
        false,
    ),
    (
        "sweep merge",
        &["sweep", "merge", "{dir}/shard-0.json", "{dir}/shard-1.json"],
        false,
    ),
    (
        "sim",
        &["sim", "builtin:avionics", "-s", "fp:rm", "-d", "1s"],
        false,
    ),
    (
        "study edf-vs-fps",
        &[
            "study",
            "edf-vs-fps",
            "--types",
            "implicit/mid",
            "--sections",
            "utilization,locking",
            "--sets",
            "2",
            "--tasks",
            "4",
        ],
        false,
    ),
    (
        "study global-vs-partitioned",
        &[
            "study",
            "global-vs-partitioned",
            "--sets",
            "2",
            "--tasks",
            "4",
            "--from",
            "0.5",
            "--to",
            "1.5",
            "--step",
            "0.5",
        ],
        false,
    ),
    (
        "study mp-locking",
        &[
            "study",
            "mp-locking",
            "--sets",
            "2",
            "--tasks",
            "4",
            "--cpus",
            "2",
            "--utilization",
            "1.0",
            "--lengths",
            "50us,500us",
            "--resources",
            "1,4",
            "--duration",
            "100ms",
        ],
        false,
    ),
    (
        "hartstone",
        &["hartstone", "--test", "1,2,3,4", "--scheduler", "edf"],
        false,
    ),
    ("doctor", &["doctor"], false),
    (
        "report",
        &[
            "report",
            "--last",
            "2",
            "--store",
            "{dir}/s.sqlite",
            "--out",
            "{dir}/r.html",
        ],
        false,
    ),
    (
        "results list",
        &["results", "list", "--store", "{dir}/s.sqlite"],
        false,
    ),
    (
        "results show",
        &["results", "show", "1", "--store", "{dir}/s.sqlite"],
        false,
    ),
    (
        "results diff",
        &["results", "diff", "1", "2", "--store", "{dir}/s.sqlite"],
        false,
    ),
    (
        "results export",
        &[
            "results",
            "export",
            "1",
            "--format",
            "csv",
            "--store",
            "{dir}/s.sqlite",
        ],
        false,
    ),
    (
        "results rm",
        &["results", "rm", "2", "--store", "{dir}/s.sqlite"],
        false,
    ),
    ("completions", &["completions", "bash"], false),
    ("man", &["man", "--out", "{dir}/man"], false),
    (
        "demo",
        &["demo", "--out", "{dir}/demo", "--report", "{dir}/demo.html"],
        true,
    ),
    (
        "run",
        &[
            "run",
            "builtin:hartstone-ph",
            "--policy",
            "rm",
            "-d",
            "300ms",
        ],
        true,
    ),
    (
        "compare",
        &[
            "compare",
            "builtin:lf-scenario-4",
            "--policy",
            "dm",
            "-d",
            "300ms",
        ],
        true,
    ),
    // The dispatcher's block under a run and a comparison.
    (
        "run",
        &[
            "run",
            "builtin:hartstone-ph",
            "--dispatcher",
            "-s",
            "ipi",
            "-d",
            "300ms",
        ],
        true,
    ),
    (
        "compare",
        &[
            "compare",
            "builtin:hartstone-ph",
            "--dispatcher",
            "-s",
            "edf",
            "-d",
            "300ms",
        ],
        true,
    ),
    (
        "latency",
        &["latency", "-t", "2", "-l", "100", "-i", "1ms"],
        true,
    ),
    (
        "characterize",
        &["characterize", "--samples", "20", "--threads", "2,4"],
        true,
    ),
    ("load", &["load", "cpu:1", "--duration", "200ms"], true),
    (
        "lag-study",
        &[
            "lag-study",
            "--periods",
            "1ms,10ms",
            "--utilizations",
            "20,50",
            "--samples",
            "20",
            "--cooldown",
            "0s",
            "--rounds",
            "1",
        ],
        true,
    ),
    (
        "drift",
        &["drift", "--period", "1ms", "--duration", "100ms"],
        true,
    ),
    (
        "breakdown",
        &[
            "breakdown",
            "builtin:avionics",
            "--policy",
            "rm",
            "--overheads",
            "builtin:rtmach",
            "--time-scale",
            "0.1",
            "--duration-per-step",
            "300ms",
            "--repeat",
            "1",
            "--resolution",
            "0.05",
        ],
        true,
    ),
];

/// `rtlab ARGS` with `COLUMNS=100`, standard output on a pipe; its output.
fn output(dir: &Path, args: &[&str]) -> std::process::Output {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{dir}", &dir.display().to_string()))
        .collect();
    Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(&args)
        .env("COLUMNS", WIDTH.to_string())
        .env_remove("RTLAB_STORE")
        .output()
        .expect("rtlab starts")
}

/// The lines of `stdout` wider than [`WIDTH`], with what printed them.
fn too_wide(what: &str, stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.chars().count() > WIDTH)
        .map(|l| format!("rtlab {what}: {} columns: {l}", l.chars().count()))
        .collect()
}

/// A scratch folder with the files the short runs read.
fn bench() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let ok = |args: &[&str]| {
        let out = output(dir.path(), args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(&[
        "taskset",
        "export",
        "builtin:avionics",
        "--format",
        "simso",
        "-d",
        "1s",
        "--out",
        &format!("{d}/a.xml"),
    ]);
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = format!("{d}/shard-{i}.json");
        ok(&[
            "sweep", "--tasks", "3", "--sets", "4", "--from", "0.5", "--to", "0.6", "--step",
            "0.1", "--shard", &shard, "--out", &out,
        ]);
    }
    for scheduler in ["fp:rm", "edf"] {
        let store = format!("{d}/s.sqlite");
        ok(&[
            "sim",
            "builtin:avionics",
            "-s",
            scheduler,
            "-d",
            "500ms",
            "--store",
            &store,
        ]);
    }
    dir
}

/// The short runs that need root or not, each checked.
fn check(root: bool) {
    let dir = bench();
    let mut wide = Vec::new();
    for (what, args, _) in SHORT_RUNS.iter().filter(|r| r.2 == root) {
        let out = output(dir.path(), args);
        assert!(
            out.status.success(),
            "rtlab {what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if !FILE_FORMATS.contains(what) {
            wide.extend(too_wide(what, &out.stdout));
        }
    }
    assert!(
        wide.is_empty(),
        "lines wider than {WIDTH} columns:\n{}",
        wide.join("\n")
    );
}

#[test]
fn every_command_is_checked() {
    let out = Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .arg("__commands")
        .output()
        .unwrap();
    let commands = String::from_utf8(out.stdout).unwrap();
    for c in commands.lines() {
        assert!(
            SHORT_RUNS.iter().any(|r| r.0 == c),
            "`rtlab {c}` has no short run in tests/fits_the_terminal.rs: add one with its default output"
        );
    }
}

#[test]
fn the_commands_without_real_time_threads_fit_100_columns() {
    check(false);
}

#[test]
#[ignore = "needs root"]
fn the_commands_with_real_time_threads_fit_100_columns() {
    let _one = common::real_time();
    check(true);
}

/// `--wide` gives every column back, and a pipe without `COLUMNS` too.
#[test]
fn wide_and_a_pipe_without_columns_keep_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["sim", "builtin:avionics", "-s", "fp:rm", "-d", "200ms"];
    let narrow = String::from_utf8(output(dir.path(), &args).stdout).unwrap();
    assert!(narrow.contains("(--wide adds: "), "{narrow}");
    let mut wide_args = args.to_vec();
    wide_args.push("--wide");
    let wide = String::from_utf8(output(dir.path(), &wide_args).stdout).unwrap();
    assert!(!wide.contains("--wide adds"), "{wide}");
    assert!(
        wide.lines()
            .any(|l| l.contains("skipped") && l.contains("aborted")),
        "{wide}"
    );
    let piped = Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(piped.stdout).unwrap(), wide);
}
