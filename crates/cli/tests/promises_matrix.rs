//! The promises every command keeps (README "Kernel settings and
//! interrupted runs"; issue 24), checked for every command the CLI defines.
//!
//! The command list comes from the CLI itself (`rtlab __commands`, a hidden
//! command that walks the clap definition), and every command must have a
//! row in [`ROWS`]: a new command without one fails
//! `every_command_has_a_row`. For every row:
//!
//! * standard output on `/dev/full` and on a pipe whose reader is gone: exit
//!   1, one `error: writing to stdout: ...` line, no panic, the kernel
//!   settings as before, and a measuring run still saved;
//! * for each command that measures, SIGINT, SIGTERM and SIGHUP during the
//!   run: exit 0, valid JSON with `interrupted: true`, the kernel settings as
//!   before, the run saved (status `interrupted`) when it was asked to save.
//!
//! Rows that run real-time threads need root and skip with a printed reason
//! without it. The rows run one after the other (they are real-time runs)
//! under the machine-wide lock `/tmp/rtlab-realtime.lock`.

mod common;

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::is_root;
use serde_json::Value;

/// A command and how the matrix runs it. In `args`, `{dir}` is a scratch
/// folder, `{store}` a results store holding two runs, `{fresh}` a store
/// made anew for each run holding one.
struct Row {
    /// The command path as `rtlab __commands` prints it.
    path: &'static str,
    /// A short run that writes to standard output (when `prints`).
    args: &'static [&'static str],
    /// Whether it writes anything to standard output.
    prints: bool,
    /// Runs real-time threads (needs root here).
    root: bool,
    /// It saves a run in `{store}`: it must do so even when stdout fails.
    saves: bool,
    /// A long measuring run to stop with signals, and how long to let it
    /// start first.
    measure: Option<(&'static [&'static str], Duration)>,
}

const fn row(path: &'static str, args: &'static [&'static str]) -> Row {
    Row {
        path,
        args,
        prints: true,
        root: false,
        saves: false,
        measure: None,
    }
}

const fn measuring(
    path: &'static str,
    args: &'static [&'static str],
    saves: bool,
    long: &'static [&'static str],
    settle_ms: u64,
) -> Row {
    Row {
        path,
        args,
        prints: true,
        root: true,
        saves,
        measure: Some((long, Duration::from_millis(settle_ms))),
    }
}

const ROWS: &[Row] = &[
    row("taskset list", &["taskset", "list"]),
    row("taskset show", &["taskset", "show", "builtin:avionics"]),
    row(
        "taskset validate",
        &["taskset", "validate", "builtin:avionics"],
    ),
    row(
        "taskset gen",
        &["taskset", "gen", "-n", "3", "-u", "0.5", "--seed", "1"],
    ),
    row(
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
    ),
    row("taskset import", &["taskset", "import", "{dir}/a.xml"]),
    row(
        "demo",
        &["demo", "--out", "{dir}/demo", "--report", "{dir}/demo.html"],
    ),
    row(
        "analyze",
        &["analyze", "builtin:avionics", "--policy", "rm"],
    ),
    measuring(
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
            "--store",
            "{store}",
        ],
        true,
        &[
            "breakdown",
            "builtin:avionics",
            "--policy",
            "rm",
            "--overheads",
            "builtin:rtmach",
            "--time-scale",
            "0.1,0.2",
            "--duration-per-step",
            "20s",
            "--repeat",
            "1",
            "--json",
            "--store",
            "{store}",
        ],
        1500,
    ),
    measuring(
        "study edf-vs-fps",
        &[
            "study",
            "edf-vs-fps",
            "--types",
            "implicit/mid",
            "--sections",
            "locking",
        ],
        false,
        &[
            "study",
            "edf-vs-fps",
            "--types",
            "implicit/mid",
            "--sections",
            "utilization",
            "--sets",
            "1",
            "--tasks",
            "3",
            "--from",
            "50",
            "--step",
            "10",
            "--real",
            "--real-from",
            "50",
            "--real-step",
            "10",
            "--real-to",
            "90",
            "--real-duration",
            "2s",
            "--cooldown",
            "0s",
            "--no-rt-throttling",
            "--json",
            "--store",
            "{store}",
        ],
        2500,
    ),
    row(
        "sweep",
        &[
            "sweep", "--tasks", "3", "--from", "0.5", "--to", "0.6", "--step", "0.1", "--sets", "5",
        ],
    ),
    row(
        "sim",
        &["sim", "builtin:lf-scenario-1", "-s", "edf", "-d", "100ms"],
    ),
    measuring(
        "hartstone",
        &["hartstone", "--test", "1", "--scheduler", "edf"],
        false,
        &[
            "hartstone",
            "--test",
            "1",
            "--policy",
            "rm",
            "--iteration-duration",
            "2s",
            "--json",
            "--store",
            "{store}",
        ],
        1500,
    ),
    measuring(
        "run",
        &[
            "run",
            "builtin:lf-scenario-4",
            "--policy",
            "edf",
            "--no-rt-throttling",
            "-d",
            "300ms",
            "--json",
            "--store",
            "{store}",
        ],
        true,
        &[
            "run",
            "builtin:lf-scenario-4",
            "--policy",
            "edf",
            "--no-rt-throttling",
            "-d",
            "30s",
            "--json",
            "--store",
            "{store}",
        ],
        1000,
    ),
    measuring(
        "compare",
        &[
            "compare",
            "builtin:lf-scenario-1",
            "--policy",
            "dm",
            "-d",
            "300ms",
            "--store",
            "{store}",
        ],
        true,
        &[
            "compare",
            "builtin:lf-scenario-1",
            "--policy",
            "dm",
            "-d",
            "30s",
            "--json",
            "--store",
            "{store}",
        ],
        1000,
    ),
    // A 60 s interval: the stop must wake the sleeping thread.
    measuring(
        "latency",
        &["latency", "-l", "50", "-i", "1ms", "--store", "{store}"],
        true,
        &[
            "latency", "-i", "60s", "-l", "2", "--json", "--store", "{store}",
        ],
        1000,
    ),
    measuring(
        "characterize",
        &[
            "characterize",
            "--samples",
            "20",
            "--threads",
            "2",
            "--store",
            "{store}",
        ],
        true,
        &["characterize", "--json", "--store", "{store}"],
        2000,
    ),
    measuring(
        "load",
        &["load", "cpu:1", "--duration", "200ms"],
        false,
        &["load", "cpu:1", "--duration", "30s", "--json"],
        500,
    ),
    measuring(
        "lag-study",
        &[
            "lag-study",
            "--periods",
            "1ms",
            "--utilizations",
            "50",
            "--samples",
            "20",
            "--cooldown",
            "0s",
            "--rounds",
            "1",
            "--store",
            "{store}",
        ],
        true,
        &[
            "lag-study",
            "--periods",
            "1ms",
            "--utilizations",
            "50",
            "--samples",
            "1000000",
            "--cooldown",
            "0s",
            "--json",
            "--store",
            "{store}",
        ],
        1500,
    ),
    row("doctor", &["doctor"]),
    row(
        "report",
        &[
            "report",
            "--last",
            "1",
            "--store",
            "{store}",
            "--out",
            "{dir}/r.html",
        ],
    ),
    row("results list", &["results", "list", "--store", "{store}"]),
    row(
        "results show",
        &["results", "show", "1", "--store", "{store}"],
    ),
    row(
        "results diff",
        &["results", "diff", "1", "2", "--store", "{store}"],
    ),
    row(
        "results export",
        &["results", "export", "1", "--store", "{store}"],
    ),
    Row {
        prints: false,
        ..row("results rm", &["results", "rm", "1", "--store", "{fresh}"])
    },
];

fn rtlab_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("rtlab")
}

/// Every command, from the CLI definition.
fn commands() -> Vec<String> {
    let out = Command::new(rtlab_path())
        .arg("__commands")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines().map(str::to_string).collect()
}

#[test]
fn every_command_has_a_row() {
    let commands = commands();
    assert!(commands.len() > 20, "{commands:?}");
    for c in &commands {
        assert!(
            ROWS.iter().any(|r| r.path == c),
            "`rtlab {c}` has no row in tests/promises_matrix.rs: add one (how to run it shortly, \
             and whether it measures)"
        );
    }
    for r in ROWS {
        assert!(
            commands.iter().any(|c| c == r.path),
            "row for a command that is gone: {}",
            r.path
        );
    }
}

/// What rtlab runs can leave changed: RT throttling, the root cpuset's
/// load balancing, rtlab's cpusets and its state files.
#[derive(Debug, PartialEq, Eq)]
struct Kernel {
    rt_runtime: String,
    load_balance: String,
    cpusets: BTreeSet<String>,
    state_files: BTreeSet<String>,
}

fn names_in(dir: &str, prefix: &str) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

fn kernel() -> Kernel {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    Kernel {
        rt_runtime: read("/proc/sys/kernel/sched_rt_runtime_us"),
        load_balance: read("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance"),
        cpusets: names_in("/sys/fs/cgroup/cpuset", "rtlab"),
        state_files: names_in("/run/rtlab", ""),
    }
}

/// The scratch folder with its fixtures, and the machine-wide lock.
struct Bench {
    dir: tempfile::TempDir,
    _lock: File,
}

impl Bench {
    fn new() -> Bench {
        let lock = File::create("/tmp/rtlab-realtime.lock").unwrap();
        lock.lock().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let bench = Bench { dir, _lock: lock };
        let a = bench.path("a.xml");
        rtlab_ok(&[
            "taskset",
            "export",
            "builtin:avionics",
            "--format",
            "simso",
            "-d",
            "1s",
            "--out",
            &a,
        ]);
        for _ in 0..2 {
            bench.save_sim(&bench.path("store.db"));
        }
        bench
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn save_sim(&self, store: &str) {
        rtlab_ok(&[
            "sim",
            "builtin:lf-scenario-1",
            "-s",
            "edf",
            "-d",
            "100ms",
            "--store",
            store,
        ]);
    }

    /// `args` with the placeholders filled in.
    fn args(&self, args: &[&str]) -> Vec<String> {
        let fresh = self.path("fresh.db");
        if args.contains(&"{fresh}") {
            let _ = std::fs::remove_file(&fresh);
            self.save_sim(&fresh);
        }
        args.iter()
            .map(|a| {
                a.replace("{dir}", &self.dir.path().display().to_string())
                    .replace("{store}", &self.path("store.db"))
                    .replace("{fresh}", &fresh)
            })
            .collect()
    }

    /// The runs in the store, by status.
    fn stored(&self) -> Vec<String> {
        let out = Command::new(rtlab_path())
            .args([
                "results",
                "list",
                "--json",
                "--store",
                &self.path("store.db"),
            ])
            .output()
            .unwrap();
        let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
        runs.as_array()
            .unwrap()
            .iter()
            .map(|r| r["status"].as_str().unwrap().to_string())
            .collect()
    }
}

fn rtlab_ok(args: &[&str]) {
    let out = Command::new(rtlab_path()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "rtlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Why a row cannot run here, if it cannot.
fn skip_reason(row: &Row) -> Option<&'static str> {
    (row.root && !is_root()).then_some("needs root (real-time threads)")
}

#[test]
fn a_full_disk_or_a_closed_pipe_on_stdout_is_one_error_line_and_exit_1() {
    let bench = Bench::new();
    for row in ROWS {
        if let Some(why) = skip_reason(row) {
            println!("skipping `{}`: {why}", row.path);
            continue;
        }
        for target in ["/dev/full", "a closed pipe"] {
            let stdout = if target == "/dev/full" {
                Stdio::from(File::options().write(true).open("/dev/full").unwrap())
            } else {
                let (reader, writer) = std::io::pipe().unwrap();
                drop(reader);
                Stdio::from(writer)
            };
            let args = bench.args(row.args);
            let before = kernel();
            let saved_before = bench.stored().len();
            let out = Command::new(rtlab_path())
                .args(&args)
                .stdout(stdout)
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let what = format!("`rtlab {}` into {target}: {err}", args.join(" "));
            assert_eq!(kernel(), before, "{what}");
            assert!(!err.contains("panicked"), "{what}");
            if !row.prints {
                assert!(out.status.success(), "{what}");
                continue;
            }
            assert_eq!(out.status.code(), Some(1), "{what}");
            let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
            let expected = if target == "/dev/full" {
                "error: writing to stdout: No space left on device (os error 28)"
            } else {
                "error: writing to stdout: Broken pipe (os error 32)"
            };
            assert_eq!(errors, [expected], "{what}");
            if row.saves {
                assert_eq!(bench.stored().len(), saved_before + 1, "not saved: {what}");
            }
        }
    }
}

/// Runs `args`, sends `signal` after `settle`, and returns the exit
/// status, standard output and error, and how long it took to exit after
/// the signal.
fn stopped(
    args: &[String],
    settle: Duration,
    signal: &str,
    dir: &Path,
) -> (ExitStatus, String, String, Duration) {
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new(rtlab_path())
        .args(args)
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(settle);
    let sent = Instant::now();
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!(
                "`rtlab {}` still running 60 s after SIG{signal}",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = sent.elapsed();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (status, read(&out_path), read(&err_path), took)
}

/// True when `doc` holds `"interrupted": true` at any depth.
fn says_interrupted(doc: &Value) -> bool {
    match doc {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| (k == "interrupted" && *v == Value::Bool(true)) || says_interrupted(v)),
        Value::Array(items) => items.iter().any(says_interrupted),
        _ => false,
    }
}

#[test]
fn each_stop_signal_ends_a_measuring_command_cleanly() {
    let bench = Bench::new();
    for row in ROWS {
        let Some((long, settle)) = row.measure else {
            continue;
        };
        if let Some(why) = skip_reason(row) {
            println!("skipping `{}`: {why}", row.path);
            continue;
        }
        for signal in ["INT", "TERM", "HUP"] {
            let args = bench.args(long);
            let saves = args.iter().any(|a| a == "--store");
            let before = kernel();
            let saved_before = bench.stored();
            let (status, out, err, took) = stopped(&args, settle, signal, bench.dir.path());
            let what = format!("`rtlab {}`, SIG{signal}: {status:?}: {err}", args.join(" "));
            assert!(status.success(), "{what}");
            assert!(!err.contains("panicked"), "{what}");
            let doc: Value =
                serde_json::from_str(&out).unwrap_or_else(|e| panic!("{what}: JSON ({e}): {out}"));
            assert!(
                says_interrupted(&doc),
                "{what}: no interrupted: true in {out}"
            );
            assert_eq!(kernel(), before, "{what}");
            if saves {
                let saved = bench.stored();
                assert_eq!(saved.len(), saved_before.len() + 1, "{what}");
                assert_eq!(
                    saved.last().map(String::as_str),
                    Some("interrupted"),
                    "{what}"
                );
            }
            if row.path == "latency" {
                // The thread slept towards a release 60 s away.
                assert!(took < Duration::from_secs(5), "{what}: took {took:?}");
            }
        }
    }
}
