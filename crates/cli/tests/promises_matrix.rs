//! The promises every command keeps (the guide, docs/src/reference/promises.md: "Kernel settings and
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
//!   run: exit 0, valid JSON with `interrupted: true` (and, once more with
//!   SIGINT, the text output saying `interrupted`), the kernel settings as
//!   before, the run saved (status `interrupted`) when it was asked to save.
//!
//! Rows that run real-time threads need root: their tests are
//! `#[ignore = "needs root"]` (run them as root with `-- --ignored`). The
//! rows run one after the other (they are real-time runs, and the kernel
//! settings are compared before and after each): run the tests under the
//! machine-wide lock, `flock /tmp/rtlab-realtime.lock cargo test -p
//! rtlab-cli --test promises_matrix -- --include-ignored`.

mod common;

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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
    measuring(
        "study global-vs-partitioned",
        &[
            "study",
            "global-vs-partitioned",
            "--sets",
            "1",
            "--tasks",
            "3",
            "--from",
            "0.5",
            "--to",
            "1.0",
            "--step",
            "0.5",
        ],
        false,
        &[
            "study",
            "global-vs-partitioned",
            "--cpus",
            "0,1",
            "--sets",
            "3",
            "--tasks",
            "3",
            "--from",
            "0.5",
            "--to",
            "1.5",
            "--step",
            "0.5",
            "--duration",
            "2s",
            "--real",
            "--json",
        ],
        1500,
    ),
    row(
        "study mp-locking",
        &[
            "study",
            "mp-locking",
            "--sets",
            "2",
            "--lengths",
            "100us",
            "--resources",
            "2",
        ],
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
    row(
        "sweep merge",
        &["sweep", "merge", "{dir}/shard-0.json", "{dir}/shard-1.json"],
    ),
    row(
        "partition",
        &["partition", "builtin:dhall", "--heuristic", "ff-decreasing"],
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
    measuring(
        "drift",
        &["drift", "--period", "1ms", "--duration", "100ms"],
        false,
        &["drift", "--period", "1ms", "--duration", "30s", "--json"],
        500,
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
    row("completions", &["completions", "bash"]),
    Row {
        prints: false,
        ..row("man", &["man", "--out", "{dir}/man"])
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

/// Checks that the run of `pid` left nothing changed: no state file or
/// cpuset of its own, and RT throttling and the root's load balancing as
/// `before` when no other rtlab held settings meanwhile (other runs on the
/// machine may change them for their own time).
fn assert_restored(before: &Kernel, pid: u32, what: &str) {
    let after = kernel();
    let own = format!("{pid}-");
    assert!(
        !after.state_files.iter().any(|f| f.starts_with(&own)),
        "state file left: {after:?}: {what}"
    );
    assert!(
        !after.cpusets.contains(&format!("rtlab-edf-{pid}")),
        "cpuset left: {after:?}: {what}"
    );
    let quiet = |k: &Kernel| !k.state_files.iter().any(|f| f.ends_with(".json"));
    if quiet(before) && quiet(&after) {
        assert_eq!(
            (&after.rt_runtime, &after.load_balance),
            (&before.rt_runtime, &before.load_balance),
            "{what}"
        );
    }
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

/// The scratch folder with its fixtures, one test at a time.
struct Bench {
    dir: tempfile::TempDir,
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

impl Bench {
    fn new() -> Bench {
        let one = common::serial();
        let dir = tempfile::tempdir().unwrap();
        let bench = Bench {
            dir,
            _one_at_a_time: one,
        };
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
        for i in 0..2 {
            rtlab_ok(&[
                "sweep",
                "--tasks",
                "3",
                "--from",
                "0.5",
                "--to",
                "0.6",
                "--step",
                "0.1",
                "--sets",
                "5",
                "--shard",
                &format!("{i}/2"),
                "--out",
                &bench.path(&format!("shard-{i}.json")),
            ]);
        }
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

/// Runs `attempt` (which returns its result and the standard error of the
/// rtlab it ran) again, up to 10 times 2 s apart, while rtlab refuses to
/// start because another rtlab on the machine holds the kernel settings it
/// needs (other test suites on a shared machine): that refusal is its own
/// promise, tested in state_cli, not this file's.
fn retried_while_busy<T>(mut attempt: impl FnMut() -> (T, String)) -> (T, String) {
    for _ in 0..10 {
        let (result, err) = attempt();
        if !err.contains("changed it and is still running") {
            return (result, err);
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    attempt()
}

fn rtlab_ok(args: &[&str]) {
    let out = Command::new(rtlab_path()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "rtlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_full_disk_or_a_closed_pipe_on_stdout_is_one_error_line_and_exit_1() {
    full_or_closed_stdout(ROWS.iter().filter(|r| !r.root));
}

#[test]
#[ignore = "needs root"]
fn a_full_disk_or_a_closed_pipe_on_stdout_of_a_real_time_run_is_one_error_line_and_exit_1() {
    rtlab_testkit::require_root();
    full_or_closed_stdout(ROWS.iter().filter(|r| r.root));
}

/// Runs each row with standard output on `/dev/full` and on a pipe whose
/// reader is gone.
fn full_or_closed_stdout<'a>(rows: impl Iterator<Item = &'a Row>) {
    let bench = Bench::new();
    for row in rows {
        for target in ["/dev/full", "a closed pipe"] {
            let stdout = || {
                if target == "/dev/full" {
                    Stdio::from(File::options().write(true).open("/dev/full").unwrap())
                } else {
                    let (reader, writer) = std::io::pipe().unwrap();
                    drop(reader);
                    Stdio::from(writer)
                }
            };
            let args = bench.args(row.args);
            let before = kernel();
            let saved_before = bench.stored().len();
            let ((pid, out), _) = retried_while_busy(|| {
                let child = Command::new(rtlab_path())
                    .args(&args)
                    .stdout(stdout())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                let pid = child.id();
                let out = child.wait_with_output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr).into_owned();
                ((pid, out), err)
            });
            let err = String::from_utf8_lossy(&out.stderr);
            let what = format!("`rtlab {}` into {target}: {err}", args.join(" "));
            assert_restored(&before, pid, &what);
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
/// status, standard output and error, how long it took to exit after the
/// signal, and its pid.
fn stopped(
    args: &[String],
    settle: Duration,
    signal: &str,
    dir: &Path,
) -> (ExitStatus, String, String, Duration, u32) {
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
    (status, read(&out_path), read(&err_path), took, child.id())
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

/// Every measuring row runs real-time threads.
#[test]
#[ignore = "needs root"]
fn each_stop_signal_ends_a_measuring_command_cleanly() {
    rtlab_testkit::require_root();
    let bench = Bench::new();
    for row in ROWS {
        let Some((long, settle)) = row.measure else {
            continue;
        };
        assert!(
            row.root,
            "{}: a measuring row runs real-time threads",
            row.path
        );
        // Each signal with --json, then SIGINT with the human output.
        for (signal, json) in [("INT", true), ("TERM", true), ("HUP", true), ("INT", false)] {
            let mut args = bench.args(long);
            if !json {
                args.retain(|a| a != "--json");
            }
            let saves = args.iter().any(|a| a == "--store");
            let before = kernel();
            let saved_before = bench.stored();
            let ((status, out, took, pid), err) = retried_while_busy(|| {
                let (status, out, err, took, pid) =
                    stopped(&args, settle, signal, bench.dir.path());
                ((status, out, took, pid), err)
            });
            let what = format!("`rtlab {}`, SIG{signal}: {status:?}: {err}", args.join(" "));
            assert!(status.success(), "{what}");
            assert!(!err.contains("panicked"), "{what}");
            if json {
                let doc: Value = serde_json::from_str(&out)
                    .unwrap_or_else(|e| panic!("{what}: JSON ({e}): {out}"));
                assert!(
                    says_interrupted(&doc),
                    "{what}: no interrupted: true in {out}"
                );
            } else {
                assert!(
                    out.contains("interrupted") || err.contains("interrupted"),
                    "{what}: the text does not say interrupted: {out}"
                );
            }
            assert_restored(&before, pid, &what);
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

// Exit statuses and quiet failures (issue 24, item 6).

/// `rtlab ARGS`: exit code, stdout, stderr; killed (and failed) after 20 s.
fn exit_of(args: &[&str]) -> (Option<i32>, String, String) {
    exit_within(
        Command::new(rtlab_path()).args(args),
        Duration::from_secs(20),
    )
}

/// Runs `command`: exit code, stdout, stderr; killed (and failed) after
/// `limit`. The outputs are read as they come (a full pipe would stop it).
fn exit_within(command: &mut Command, limit: Duration) -> (Option<i32>, String, String) {
    use std::io::Read;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = reader(Box::new(child.stdout.take().unwrap()));
    let stderr = reader(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{command:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.code(),
        stdout.join().unwrap(),
        stderr.join().unwrap(),
    )
}

#[test]
fn flags_that_cannot_mean_anything_are_usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        // As `sim -d 0s` (it exited 1).
        (
            &["run", "builtin:lf-scenario-1", "--policy", "rm", "-d", "0s"],
            "invalid --duration",
        ),
        // Both were measured under SCHED_OTHER without a word.
        (
            &["latency", "--policy", "other", "-p", "50", "-l", "5"],
            "--priority 50 does not apply to --policy other",
        ),
        (
            &[
                "run",
                "builtin:lf-scenario-1",
                "--policy",
                "other",
                "--edf-margin",
                "1ms",
            ],
            "--edf-margin 1ms applies to --policy edf",
        ),
        (
            &[
                "run",
                "builtin:lf-scenario-1",
                "--policy",
                "rm",
                "--no-edf-reclaim",
            ],
            "--no-edf-reclaim applies to --policy edf",
        ),
        (
            &[
                "hartstone",
                "--test",
                "1",
                "--policy",
                "rm",
                "--no-edf-reclaim",
            ],
            "--no-edf-reclaim applies to --policy edf",
        ),
        // An empty table and exit 0 before (a panic in debug builds).
        (
            &["sweep", "--step", "1e-20"],
            "utilization steps, above the limit",
        ),
        // An empty report and exit 0 before.
        (&["report", "--last", "0"], "--last 0 names no run"),
        // Issue 39: "0 of 15 placed" and exit 0 (partition takes no overheads).
        (
            &[
                "partition",
                "builtin:avionics",
                "--cpus",
                "2",
                "--test",
                "edf:edf-demand-overheads",
            ],
            "--test edf:edf-demand-overheads charges scheduler overheads, and `rtlab partition` takes none",
        ),
        // Issue 39: the overheads were ignored by the multiprocessor tests.
        (
            &[
                "sweep",
                "--cpus",
                "4",
                "--test",
                "gedf:gfb",
                "--overheads",
                "builtin:rtmach",
            ],
            "--overheads builtin:rtmach is read by none of the tests counted",
        ),
        // Generated sets have no priorities: every set was "inconclusive".
        (
            &["sweep", "--test", "given:rta"],
            "--test given:rta reads each task's priority, and generated sets have none",
        ),
        // Issue 39: exit 1 for a scheduler that does not fit --cpus.
        (
            &[
                "taskset",
                "export",
                "builtin:avionics",
                "--format",
                "simso",
                "-s",
                "edf",
                "--cpus",
                "2",
                "-d",
                "1s",
            ],
            "--scheduler: `edf` schedules one processor",
        ),
    ];
    for (args, says) in cases {
        let (code, out, err) = exit_of(args);
        assert_eq!(code, Some(2), "rtlab {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "rtlab {args:?}: {err}");
        assert!(err.contains(says), "rtlab {args:?}: {err}");
        assert!(out.is_empty(), "rtlab {args:?}: {out}");
    }
}

/// Issue 39: a test or scheduler that reads priorities, on a set without
/// them, said "fits no processor" (or "not proven"): now the task without a
/// priority is named, exit 1, whichever command asks.
#[test]
fn a_test_reading_priorities_names_the_task_without_one() {
    let cases: &[&[&str]] = &[
        &[
            "partition",
            "builtin:dhall",
            "--cpus",
            "2",
            "--test",
            "given:rta",
        ],
        &[
            "analyze",
            "builtin:dhall",
            "--cpus",
            "2",
            "--test",
            "pfp-given:ff",
        ],
        &[
            "analyze",
            "builtin:dhall",
            "--cpus",
            "2",
            "--test",
            "gfp-given:rta",
        ],
        &[
            "sim",
            "builtin:dhall",
            "--cpus",
            "2",
            "-s",
            "pfp:given",
            "--partition",
            "ff",
            "-d",
            "1s",
        ],
    ];
    for args in cases {
        let (code, out, err) = exit_of(args);
        assert_eq!(code, Some(1), "rtlab {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "rtlab {args:?}: {err}");
        assert!(
            err.contains("task `light1` has no priority"),
            "rtlab {args:?}: {err}"
        );
        assert!(out.is_empty(), "rtlab {args:?}: {out}");
    }
}

/// Issue 39: a spec's missing keys take the flags' defaults, `test` with
/// them: `"cpus": 4` alone counts the multiprocessor tests, as `--cpus 4`.
#[test]
fn a_spec_without_tests_counts_what_the_flags_would() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.json");
    std::fs::write(
        &spec,
        r#"{"cpus": 4, "sets": 2, "from": 1, "to": 2, "step": 1}"#,
    )
    .unwrap();
    let (code, from_spec, err) = exit_of(&["sweep", "--spec", spec.to_str().unwrap(), "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, from_flags, err) = exit_of(&[
        "sweep", "--cpus", "4", "--sets", "2", "--from", "1", "--to", "2", "--step", "1", "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(from_spec, from_flags);
    assert!(from_spec.contains("gedf:gfb"), "{from_spec}");
}

#[test]
fn a_catalog_parameter_given_twice_is_refused() {
    let (code, _, err) = exit_of(&[
        "taskset",
        "show",
        "builtin:hartstone-ph?kilo-whet=1ms&kilo-whet=2ms",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("parameter `kilo-whet` is given twice"),
        "{err}"
    );
}

#[test]
fn a_named_pipe_as_the_task_set_is_refused_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("set.toml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.display().to_string();
    let (code, _, err) = exit_of(&["sim", &fifo, "-s", "edf", "-d", "1s"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("a named pipe (FIFO), not a regular file"),
        "{err}"
    );
}

#[test]
fn an_export_that_meets_a_bad_row_prints_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db").display().to_string();
    rtlab_ok(&[
        "sim",
        "builtin:lf-scenario-1",
        "-s",
        "edf",
        "-d",
        "200ms",
        "--store",
        &store,
    ]);
    let db = rusqlite::Connection::open(&store).unwrap();
    // The last row in export order: everything before it would be printed.
    db.execute(
        "UPDATE jobs SET cpu = 'not a number' WHERE rowid = \
         (SELECT rowid FROM jobs ORDER BY task DESC, job DESC LIMIT 1)",
        [],
    )
    .unwrap();
    drop(db);
    let (code, out, err) = exit_of(&[
        "results", "export", "1", "--format", "json", "--store", &store,
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.is_empty(), "half a JSON document: {out}");
}

#[test]
#[ignore = "needs root"]
fn an_immutable_store_is_refused_before_measuring() {
    let _one = common::real_time();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db").display().to_string();
    rtlab_ok(&[
        "sim",
        "builtin:lf-scenario-1",
        "-s",
        "edf",
        "-d",
        "100ms",
        "--store",
        &store,
    ]);
    if !Command::new("chattr")
        .args(["+i", &store])
        .status()
        .is_ok_and(|s| s.success())
    {
        common::unavailable("chattr +i is not supported here");
        return;
    }
    let started = Instant::now();
    let (code, _, err) = exit_of(&[
        "run",
        "builtin:lf-scenario-1",
        "--policy",
        "rm",
        "-d",
        "3s",
        "--store",
        &store,
    ]);
    let took = started.elapsed();
    let _ = Command::new("chattr").args(["-i", &store]).status();
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot be written"), "{err}");
    // Refused before the 3 s run, not after it.
    assert!(took < Duration::from_secs(2), "took {took:?}: {err}");
}

#[test]
#[ignore = "needs root"]
fn every_failure_of_a_run_is_said_once_and_a_lost_thread_fails_it() {
    rtlab_testkit::require_root();
    let _bench = Bench::new();
    let dir = tempfile::tempdir().unwrap();
    // The job file on a full disk and the plot in a folder that is not
    // there: both errors, each once, after the summary.
    let plot = dir.path().join("no/such/dir/g.svg").display().to_string();
    let (code, out, err) = exit_of(&[
        "run",
        "builtin:lf-scenario-1",
        "--policy",
        "rm",
        "-d",
        "300ms",
        "--jobs",
        "/dev/full",
        "--plot",
        &plot,
        "--json",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(serde_json::from_str::<Value>(&out).is_ok(), "{out}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 2, "{err}");
    assert!(
        errors[0].contains("--jobs: cannot write /dev/full"),
        "{err}"
    );
    assert!(errors[1].contains("g.svg"), "{err}");

    // A process stopped past the end of its run (SIGSTOP 7 s, then
    // SIGCONT): the threads report back as soon as they run again and keep
    // their jobs (they were dropped before); a thread that still does not
    // report is lost, and the guide says a lost thread fails the run.
    let child = Command::new(rtlab_path())
        .args([
            "run",
            "builtin:lf-scenario-1",
            "--policy",
            "edf",
            "-d",
            "1s",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap()
        .success());
    std::thread::sleep(Duration::from_secs(7));
    assert!(Command::new("kill")
        .args(["-CONT", &pid])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    if report["lost_tasks"]
        .as_array()
        .is_some_and(|l| l.is_empty())
    {
        assert!(out.status.success(), "{err}");
        for t in report["tasks"].as_array().unwrap() {
            assert!(t["released"].as_u64().unwrap() > 0, "{t}");
        }
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("did not report back in time"), "{err}");
    }
}

// Output files (issue 39, item 1): every flag that names a file rtlab
// writes goes through one writer (`rtlab_model::file::OutputFile`).

/// A flag that names a file (or folder) rtlab writes, and a short run that
/// writes it: `{out}` in `args` is the path under test.
struct Output {
    /// The command path as `rtlab __commands` prints it.
    path: &'static str,
    /// The flag, as its help spells it.
    flag: &'static str,
    args: &'static [&'static str],
    /// What the path names.
    kind: OutputKind,
    /// Runs real-time threads or records a kernel trace (needs root).
    root: bool,
    /// Tried with every kind of path; false for a flag that is the same
    /// flattened flag as a tried row's (`--kernel-trace` of every real-run
    /// command is `KernelTraceFlags`, tried on `run`).
    tried: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum OutputKind {
    /// A file: a regular file replaced whole, a device or pipe written in
    /// place, a link followed.
    File,
    /// A file rtlab reads back (`--kernel-trace=FILE`): a regular file or a
    /// link to one; a device or pipe is refused before anything runs.
    RegularFile,
    /// A folder the files go into (made when missing).
    Folder,
    /// A file, or a folder that is there (`study --csv DIR|FILE`).
    FileOrFolder,
}

const fn output(path: &'static str, flag: &'static str, args: &'static [&'static str]) -> Output {
    Output {
        path,
        flag,
        args,
        kind: OutputKind::File,
        root: false,
        tried: true,
    }
}

/// `--kernel-trace=FILE` of `path`: the one `KernelTraceFlags`, tried on
/// `run`.
const fn kernel_trace(path: &'static str) -> Output {
    Output {
        path,
        flag: "--kernel-trace",
        args: &[],
        kind: OutputKind::RegularFile,
        root: true,
        tried: false,
    }
}

/// Every output flag of every command (`every_output_flag_has_a_row`
/// keeps this complete).
const OUTPUTS: &[Output] = &[
    Output {
        kind: OutputKind::Folder,
        ..output("man", "--out", &["man", "--out", "{out}"])
    },
    output(
        "taskset export",
        "--out",
        &[
            "taskset",
            "export",
            "builtin:avionics",
            "--format",
            "simso",
            "-d",
            "1s",
            "--out",
            "{out}",
        ],
    ),
    output(
        "taskset import",
        "--out",
        &["taskset", "import", "{dir}/a.xml", "--out", "{out}"],
    ),
    Output {
        kind: OutputKind::Folder,
        ..output(
            "taskset gen",
            "--out",
            &[
                "taskset", "gen", "-n", "3", "-u", "0.5", "--count", "2", "--out", "{out}",
            ],
        )
    },
    // As root the demo runs real threads (and waits for a busy CPU 1).
    Output {
        kind: OutputKind::Folder,
        root: true,
        ..output(
            "demo",
            "--out",
            &["demo", "--out", "{out}", "--report", "{dir}/demo.html"],
        )
    },
    Output {
        root: true,
        ..output(
            "demo",
            "--report",
            &["demo", "--out", "{dir}/demo", "--report", "{out}"],
        )
    },
    output(
        "partition",
        "--out",
        &[
            "partition",
            "builtin:dhall",
            "--cpus",
            "2",
            "--out",
            "{out}",
        ],
    ),
    Output {
        kind: OutputKind::FileOrFolder,
        ..output(
            "study edf-vs-fps",
            "--csv",
            &[
                "study",
                "edf-vs-fps",
                "--sections",
                "utilization",
                "--sets",
                "2",
                "--tasks",
                "3",
                "--from",
                "90",
                "--to",
                "95",
                "--step",
                "5",
                "--types",
                "implicit/short-mid",
                "--csv",
                "{out}",
            ],
        )
    },
    output(
        "study mp-locking",
        "--csv",
        &[
            "study",
            "mp-locking",
            "--sets",
            "2",
            "--lengths",
            "100us",
            "--resources",
            "2",
            "--csv",
            "{out}",
        ],
    ),
    Output {
        kind: OutputKind::Folder,
        ..output(
            "study mp-locking",
            "--plot",
            &[
                "study",
                "mp-locking",
                "--sets",
                "2",
                "--lengths",
                "100us",
                "--resources",
                "2",
                "--plot",
                "{out}",
            ],
        )
    },
    Output {
        kind: OutputKind::Folder,
        ..output(
            "study edf-vs-fps",
            "--plot",
            &[
                "study",
                "edf-vs-fps",
                "--sections",
                "utilization",
                "--sets",
                "2",
                "--tasks",
                "3",
                "--from",
                "90",
                "--to",
                "95",
                "--step",
                "5",
                "--types",
                "implicit/short-mid",
                "--plot",
                "{out}",
            ],
        )
    },
    output(
        "sweep",
        "--out",
        &[
            "sweep", "--tasks", "3", "--from", "0.5", "--to", "0.6", "--step", "0.1", "--sets",
            "5", "--shard", "1/5", "--out", "{out}",
        ],
    ),
    output(
        "sweep",
        "--csv",
        &[
            "sweep", "--tasks", "3", "--from", "0.5", "--to", "0.6", "--step", "0.1", "--sets",
            "5", "--csv", "{out}",
        ],
    ),
    output(
        "sweep",
        "--plot",
        &[
            "sweep", "--tasks", "3", "--from", "0.5", "--to", "0.6", "--step", "0.1", "--sets",
            "5", "--plot", "{out}",
        ],
    ),
    output(
        "sweep merge",
        "--csv",
        &[
            "sweep",
            "merge",
            "{dir}/shard-0.json",
            "{dir}/shard-1.json",
            "--csv",
            "{out}",
        ],
    ),
    output(
        "sweep merge",
        "--plot",
        &[
            "sweep",
            "merge",
            "{dir}/shard-0.json",
            "{dir}/shard-1.json",
            "--plot",
            "{out}",
        ],
    ),
    output(
        "sim",
        "--trace",
        &[
            "sim",
            "builtin:lf-scenario-1",
            "-s",
            "edf",
            "-d",
            "100ms",
            "--trace",
            "{out}",
        ],
    ),
    output(
        "sim",
        "--gantt",
        &[
            "sim",
            "builtin:lf-scenario-1",
            "-s",
            "edf",
            "-d",
            "100ms",
            "--gantt",
            "{out}",
        ],
    ),
    output(
        "sim",
        "--plot",
        &[
            "sim",
            "builtin:lf-scenario-1",
            "-s",
            "edf",
            "-d",
            "100ms",
            "--plot",
            "{out}",
        ],
    ),
    output(
        "hartstone",
        "--csv",
        &[
            "hartstone",
            "--test",
            "1",
            "-s",
            "edf",
            "--max-iterations",
            "2",
            "--csv",
            "{out}",
        ],
    ),
    output(
        "hartstone",
        "--plot",
        &[
            "hartstone",
            "--test",
            "1",
            "-s",
            "edf",
            "--max-iterations",
            "2",
            "--plot",
            "{out}",
        ],
    ),
    // Pairs a dispatched run's jobs with the simulator's: real threads.
    Output {
        root: true,
        ..output(
            "compare",
            "--jobs",
            &[
                "compare",
                "builtin:lf-scenario-1",
                "--dispatcher",
                "-s",
                "edf",
                "-d",
                "200ms",
                "--jobs",
                "{out}",
            ],
        )
    },
    output(
        "run",
        "--jobs",
        &[
            "run",
            "builtin:lf-scenario-1",
            "--policy",
            "other",
            "--no-mlock",
            "-d",
            "200ms",
            "--jobs",
            "{out}",
        ],
    ),
    output(
        "run",
        "--trace",
        &[
            "run",
            "builtin:lf-scenario-1",
            "--policy",
            "other",
            "--no-mlock",
            "-d",
            "200ms",
            "--trace",
            "{out}",
        ],
    ),
    output(
        "run",
        "--plot",
        &[
            "run",
            "builtin:lf-scenario-1",
            "--policy",
            "other",
            "--no-mlock",
            "-d",
            "200ms",
            "--plot",
            "{out}",
        ],
    ),
    Output {
        kind: OutputKind::RegularFile,
        root: true,
        ..output(
            "run",
            "--kernel-trace",
            &[
                "run",
                "builtin:lf-scenario-1",
                "--policy",
                "other",
                "--no-mlock",
                "-d",
                "200ms",
                "--kernel-trace={out}",
            ],
        )
    },
    kernel_trace("breakdown"),
    kernel_trace("study edf-vs-fps"),
    kernel_trace("study global-vs-partitioned"),
    kernel_trace("hartstone"),
    kernel_trace("compare"),
    kernel_trace("latency"),
    kernel_trace("characterize"),
    output(
        "latency",
        "--series",
        &[
            "latency", "--policy", "other", "--loops", "50", "--series", "{out}",
        ],
    ),
    output(
        "latency",
        "--histogram",
        &[
            "latency",
            "--policy",
            "other",
            "--loops",
            "50",
            "--histogram",
            "{out}",
        ],
    ),
    output(
        "latency",
        "--plot",
        &[
            "latency", "--policy", "other", "--loops", "50", "--plot", "{out}",
        ],
    ),
    output(
        "latency",
        "--json",
        &[
            "latency",
            "--policy",
            "other",
            "--loops",
            "50",
            "--json={out}",
        ],
    ),
    output(
        "drift",
        "--csv",
        &[
            "drift", "-T", "1ms", "-D", "200ms", "--policy", "other", "--csv", "{out}",
        ],
    ),
    output(
        "drift",
        "--plot",
        &[
            "drift", "-T", "1ms", "-D", "200ms", "--policy", "other", "--plot", "{out}",
        ],
    ),
    output(
        "report",
        "--out",
        &[
            "report", "--store", "{store}", "--last", "1", "--out", "{out}",
        ],
    ),
    Output {
        root: true,
        ..output(
            "breakdown",
            "--plot",
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
                "0.1",
                "--plot",
                "{out}",
            ],
        )
    },
    Output {
        root: true,
        ..output(
            "characterize",
            "--out",
            &[
                "characterize",
                "--threads",
                "2",
                "--samples",
                "10",
                "--out",
                "{out}",
            ],
        )
    },
    Output {
        root: true,
        ..output(
            "characterize",
            "--csv",
            &[
                "characterize",
                "--threads",
                "2",
                "--samples",
                "10",
                "--csv",
                "{out}",
            ],
        )
    },
    Output {
        root: true,
        ..output(
            "lag-study",
            "--csv",
            &[
                "lag-study",
                "--periods",
                "1ms",
                "--utilizations",
                "50",
                "--samples",
                "20",
                "--csv",
                "{out}",
            ],
        )
    },
];

/// Flags whose value names a file or folder rtlab only reads (or a store).
const READ_PATHS: &[&str] = &["--overheads", "--store", "--spec", "--from-json"];

/// Flags that write a file whatever their value is called.
const OUTPUT_NAMES: &[&str] = &[
    "--out",
    "--csv",
    "--plot",
    "--trace",
    "--gantt",
    "--jobs",
    "--report",
    "--series",
    "--histogram",
];

/// The flags of `rtlab PATH` that take a value naming a file rtlab
/// writes: by name (`OUTPUT_NAMES`), by a value that may be a file
/// (`--json[=<FILE>]`, `--kernel-trace[=<FILE>]`), or by a value called a
/// FILE, DIR or `*.svg`-like that no read flag (`READ_PATHS`) explains.
fn output_flags(path: &str) -> Vec<String> {
    let mut flags: Vec<String> = value_flags(path)
        .into_iter()
        .filter(|(flag, value)| {
            let named = OUTPUT_NAMES.contains(&flag.as_str());
            let file_value = ["FILE", "DIR", ".svg", ".csv", ".json", ".toml", ".html"]
                .iter()
                .any(|w| value.contains(w));
            named || (file_value && !READ_PATHS.contains(&flag.as_str()))
        })
        .map(|(flag, _)| flag)
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

/// The flags of `rtlab PATH` that take a value, with the value as the help
/// spells it (`<TASKS>`, `[=<FILE>]`), read from `rtlab PATH --help`.
fn value_flags(path: &str) -> Vec<(String, String)> {
    value_flags_with_short(path)
        .into_iter()
        .map(|(_, flag, value)| (flag, value))
        .collect()
}

/// [`value_flags`] with each flag's short form (`-n`), if it has one.
fn value_flags_with_short(path: &str) -> Vec<(Option<String>, String, String)> {
    let mut args: Vec<&str> = path.split(' ').collect();
    args.push("--help");
    let help = String::from_utf8(
        Command::new(rtlab_path())
            .args(&args)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let mut flags = Vec::new();
    for line in help.lines() {
        // Option lines are indented by at most 6 spaces (`  -s, --scheduler
        // <S>`, `      --trace <TRACE>`); their descriptions by more.
        let text = line.trim_start();
        if line.len() - text.len() > 6 {
            continue;
        }
        let (short, text) = match text.split_once(", ") {
            Some((short, rest)) if short.len() == 2 && short.starts_with('-') => {
                (Some(short.to_string()), rest)
            }
            _ => (None, text),
        };
        let mut words = text.split_whitespace();
        let Some(spec) = words.next().filter(|w| w.starts_with("--")) else {
            continue;
        };
        let (flag, value) = match spec.find(['=', '[']) {
            Some(i) => (&spec[..i], &spec[i..]),
            None => (
                spec,
                words.next().filter(|w| w.starts_with('<')).unwrap_or(""),
            ),
        };
        if !value.is_empty() {
            flags.push((short, flag.to_string(), value.to_string()));
        }
    }
    flags
}

#[test]
fn every_output_flag_has_a_row() {
    for command in commands() {
        for flag in output_flags(&command) {
            assert!(
                OUTPUTS.iter().any(|o| o.path == command && o.flag == flag),
                "`rtlab {command} {flag}` writes a file and has no row in OUTPUTS (tests/promises_matrix.rs): \
                 add one, and write it with rtlab_model::file::OutputFile"
            );
        }
    }
    for o in OUTPUTS {
        assert!(
            output_flags(o.path).iter().any(|f| f == o.flag),
            "OUTPUTS has a row for `rtlab {} {}`, which is not an output flag",
            o.path,
            o.flag
        );
    }
}

/// What a path under test is made as before the run.
#[derive(Clone, Copy, Debug)]
enum Made {
    /// A character device node that takes no byte (`mknod c 1 7`, as
    /// `/dev/full`).
    FullDevice,
    /// A named pipe, read by a thread.
    Fifo,
    /// A link to a regular file in another folder.
    Link,
    /// A regular file with mode 0600.
    Regular,
    /// A folder.
    Folder,
}

/// Runs `o` with `{out}` made as `made` in a fresh folder of `bench`, and
/// checks the promise: the path is what it was (a device, a pipe, a link,
/// a folder), a regular file is replaced whole and keeps its mode, nothing
/// `.partial` stays, a failure is one `error:` line with exit 1.
fn check_output(bench: &Bench, o: &Output, made: Made) {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let elsewhere = scratch.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let target = elsewhere.join("real");
    let mut reader = None;
    match made {
        Made::FullDevice => {
            let ok = Command::new("mknod")
                .args(["-m", "666", out.to_str().unwrap(), "c", "1", "7"])
                .status()
                .unwrap();
            assert!(ok.success(), "mknod");
        }
        Made::Fifo => {
            assert!(Command::new("mkfifo").arg(&out).status().unwrap().success());
            let fifo = out.clone();
            reader = Some(std::thread::spawn(move || {
                std::fs::read(fifo).map(|b| b.len()).unwrap_or(0)
            }));
        }
        Made::Link => {
            std::fs::write(&target, "old").unwrap();
            std::os::unix::fs::symlink(&target, &out).unwrap();
        }
        Made::Regular => {
            std::fs::write(&out, "old").unwrap();
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        Made::Folder => std::fs::create_dir(&out).unwrap(),
    }
    let args: Vec<String> = bench
        .args(o.args)
        .into_iter()
        .map(|a| a.replace("{out}", out.to_str().unwrap()))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // A state folder of its own: a measuring run does not wait for other
    // rtlab runs on the machine's CPU 1 (what is checked is the file). The
    // demo takes seconds, more on a loaded machine.
    let (code, _, err) = exit_within(
        Command::new(rtlab_path())
            .args(&args)
            .env("RTLAB_STATE_DIR", scratch.path().join("state")),
        Duration::from_secs(180),
    );
    if let Some(reader) = reader {
        if code != Some(0) {
            // Unblock a reader the run never wrote to; without blocking
            // here when the reader is already gone (the run opened the
            // pipe, wrote, closed it, then failed): a FIFO opened for
            // writing waits for a reader, and O_NONBLOCK makes that ENXIO.
            use std::os::unix::fs::OpenOptionsExt;
            const O_NONBLOCK: i32 = 0o4000; // Linux's, <asm-generic/fcntl.h>
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(O_NONBLOCK)
                .open(&out);
        }
        let read = reader.join().unwrap();
        if code == Some(0) {
            assert!(
                read > 0,
                "`rtlab {}` wrote nothing into the pipe",
                args.join(" ")
            );
        }
    }
    let what = format!(
        "`rtlab {}` onto {made:?}: exit {code:?}: {err}",
        args.join(" ")
    );
    assert!(!err.contains("panicked"), "{what}");
    let kind = std::fs::symlink_metadata(&out).unwrap().file_type();
    let failed = |what: &str| {
        assert_eq!(code, Some(1), "{what}");
        let errors = err.lines().filter(|l| l.starts_with("error:")).count();
        assert_eq!(errors, 1, "{what}");
    };
    match (made, o.kind) {
        (Made::FullDevice, OutputKind::File | OutputKind::FileOrFolder) => {
            failed(&what);
            assert!(err.contains("No space left on device"), "{what}");
            assert!(kind.is_char_device(), "{what}: the device was replaced");
        }
        (Made::FullDevice | Made::Fifo, OutputKind::RegularFile) => {
            failed(&what);
            assert!(err.contains("not a regular file"), "{what}");
            assert!(kind.is_char_device() || kind.is_fifo(), "{what}: replaced");
        }
        (Made::FullDevice | Made::Fifo | Made::Link | Made::Regular, OutputKind::Folder) => {
            failed(&what);
            assert!(!kind.is_dir(), "{what}: made a folder");
        }
        (Made::Fifo, OutputKind::File | OutputKind::FileOrFolder) => {
            assert_eq!(code, Some(0), "{what}");
            assert!(kind.is_fifo(), "{what}: the pipe was replaced");
        }
        (Made::Link, _) => {
            assert_eq!(code, Some(0), "{what}");
            assert!(kind.is_symlink(), "{what}: the link was replaced");
            let written = std::fs::read(&target).unwrap();
            assert!(
                !written.is_empty() && written != b"old",
                "{what}: the target is not written"
            );
        }
        (Made::Regular, _) => {
            assert_eq!(code, Some(0), "{what}");
            assert!(kind.is_file(), "{what}");
            let written = std::fs::read(&out).unwrap();
            assert!(
                !written.is_empty() && written != b"old",
                "{what}: not written"
            );
            let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{what}: the file's mode was not kept");
        }
        (Made::Folder, OutputKind::Folder | OutputKind::FileOrFolder) => {
            assert_eq!(code, Some(0), "{what}");
            assert!(
                std::fs::read_dir(&out).unwrap().count() > 0,
                "{what}: nothing in it"
            );
        }
        (Made::Folder, _) => {
            failed(&what);
            assert!(kind.is_dir(), "{what}");
            assert!(
                std::fs::read_dir(&out).unwrap().next().is_none(),
                "{what}: wrote into it"
            );
        }
    }
    let partial = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".partial"))
    };
    assert!(
        !partial(scratch.path()) && !partial(&elsewhere),
        "{what}: a .partial stays"
    );
}

/// The variants each kind of output is tried with.
fn variants(kind: OutputKind) -> &'static [Made] {
    match kind {
        OutputKind::File | OutputKind::RegularFile | OutputKind::FileOrFolder => &[
            Made::FullDevice,
            Made::Fifo,
            Made::Link,
            Made::Regular,
            Made::Folder,
        ],
        OutputKind::Folder => &[Made::FullDevice, Made::Folder],
    }
}

/// No output flag replaces a device, a pipe or a link with a file, and a
/// regular file is replaced whole (issue 39: `--out myfull` made the
/// device node a JSON file; as root that was `/dev/full`).
#[test]
fn no_output_flag_replaces_a_device_a_pipe_or_a_link() {
    let bench = Bench::new();
    for o in OUTPUTS.iter().filter(|o| o.tried && !o.root) {
        for &made in variants(o.kind) {
            check_output(&bench, o, made);
        }
    }
}

#[test]
#[ignore = "needs root"]
fn no_output_flag_of_a_real_time_run_replaces_a_device_a_pipe_or_a_link() {
    rtlab_testkit::require_root();
    let bench = Bench::new();
    for o in OUTPUTS.iter().filter(|o| o.tried && o.root) {
        // A real-time run takes seconds (the demo more): its outputs are
        // tried on a device and a link, the two that replaced what they
        // named (issue 39); the writer they share with every other command
        // meets all five kinds in the test above.
        let variants = match (o.path, o.kind) {
            ("demo", _) | (_, OutputKind::Folder) => &[Made::FullDevice][..],
            _ => &[Made::FullDevice, Made::Link][..],
        };
        for &made in variants {
            check_output(&bench, o, made);
        }
    }
}

// Read-only commands create nothing (issue 39, item 6): every row that
// reads `{store}` (and saves nothing) opens it read-only.

/// The rows that read a store: `{store}` in their arguments, no save.
fn store_readers() -> impl Iterator<Item = &'static Row> {
    ROWS.iter()
        .filter(|r| !r.saves && r.args.contains(&"{store}"))
}

#[test]
fn commands_that_read_a_store_create_nothing() {
    use std::os::unix::fs::FileTypeExt;
    let bench = Bench::new();
    assert!(store_readers().count() >= 5);
    let names = |dir: &Path, prefix: &str| -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(prefix))
            .collect()
    };
    for row in store_readers() {
        let scratch = tempfile::tempdir().unwrap();
        let run = |store: &str| {
            let args: Vec<String> = bench
                .args(row.args)
                .into_iter()
                .map(|a| a.replace(&bench.path("store.db"), store))
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, out, err) = exit_of(&args);
            (
                format!("`rtlab {}`: {code:?}: {err}", args.join(" ")),
                code,
                out,
                err,
            )
        };
        // A store that is not there (as `--store /nonexistent/x/y.sqlite`,
        // which made the folders and a database).
        let missing = scratch.path().join("no/such/s.sqlite");
        let (what, code, out, err) = run(missing.to_str().unwrap());
        if row.path == "results list" {
            assert_eq!(code, Some(0), "{what}");
            assert!(out.starts_with("no saved runs in "), "{what}");
        } else {
            assert_eq!(code, Some(1), "{what}");
            assert!(
                err.contains("there is none (nothing was saved there"),
                "{what}"
            );
        }
        assert!(
            !scratch.path().join("no").exists(),
            "{what}: made its folder"
        );
        // A device (as `--store /dev/null`, which left /dev/null-journal).
        let device = scratch.path().join("null");
        let made = Command::new("mknod")
            .args(["-m", "666", device.to_str().unwrap(), "c", "1", "3"])
            .status()
            .unwrap();
        assert!(made.success());
        let (what, code, _, err) = run(device.to_str().unwrap());
        assert_eq!(code, Some(1), "{what}");
        assert!(
            err.contains("not an rtlab results store (a device)"),
            "{what}"
        );
        assert_eq!(err.lines().count(), 1, "{what}");
        assert_eq!(
            names(scratch.path(), "null"),
            BTreeSet::from(["null".to_string()]),
            "{what}"
        );
        assert!(std::fs::metadata(&device)
            .unwrap()
            .file_type()
            .is_char_device());
        // The store itself: no -wal, -shm or -journal left beside it.
        let before = names(bench.dir.path(), "store.db");
        let (what, code, _, _) = run(&bench.path("store.db"));
        assert_eq!(code, Some(0), "{what}");
        assert_eq!(names(bench.dir.path(), "store.db"), before, "{what}");
    }
}

// Invalid input refused (issue 39, item 7): each was accepted before.

/// `rtlab ARGS` in `dir`: exit code, stdout, stderr.
fn exit_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    exit_within(
        Command::new(rtlab_path()).args(args).current_dir(dir),
        Duration::from_secs(20),
    )
}

#[test]
fn invalid_input_is_refused_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).unwrap();
        name.to_string()
    };
    let task = "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n";
    let mode = |name: &str, start: &str| {
        format!("[[mode]]\nname = \"{name}\"\nstart = \"{start}\"\ntasks = [\"a\"]\n")
    };
    let xml = {
        let (code, out, err) = exit_in(
            dir.path(),
            &[
                "taskset",
                "export",
                "builtin:dhall",
                "--format",
                "simso",
                "--cpus",
                "2",
                "-s",
                "gedf",
                "-d",
                "1s",
            ],
        );
        assert_eq!(code, Some(0), "{err}");
        out.replacen("name=\"CPU 2\" id=\"2\"", "name=\"CPU 2\" id=\"1\"", 1)
    };
    let (code, _, err) = exit_in(
        dir.path(),
        &[
            "sweep",
            "--tasks",
            "3",
            "--sets",
            "4",
            "--from",
            "0.5",
            "--to",
            "0.6",
            "--step",
            "0.1",
            "--shard",
            "0/1",
            "--out",
            "shard.json",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let shard = std::fs::read_to_string(dir.path().join("shard.json")).unwrap();
    let mut edited: Value = serde_json::from_str(&shard).unwrap();
    edited["rows"][1]["utilization"] = Value::from(0.65);
    edited.as_object_mut().unwrap().remove("digest");
    let digest = {
        // The digest of the edited document, as an editor would redo it
        // (sha256 of the compact JSON with sorted keys, as serde_json writes).
        let out = Command::new("sha256sum")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(edited.to_string().as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        format!(
            "sha256:{}",
            String::from_utf8_lossy(&out.stdout)
                .split(' ')
                .next()
                .unwrap()
        )
    };
    edited["digest"] = Value::from(digest);
    let run = r#"{"id": 1, "created": "2026-11-23T06:00:00Z", "rtlab_version": "0.1.0",
        "command": "rtlab sim", "kind": "KIND", "host": {}, "status": "STATUS",
        "document": {}, "jobs": [{"task": "a", "job": 0, "release_ns": 0, "deadline_ns": 10,
        "start_ns": START, "finish_ns": 5, "preemptions": 0, "voluntary_switches": 0, "cpu": null}]}"#;
    let run = |kind: &str, status: &str, start: &str| {
        run.replace("KIND", kind)
            .replace("STATUS", status)
            .replace("START", start)
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "taskset".into(),
                "validate".into(),
                at("cl.toml", &format!("processors = 2\nclusters = []\n{task}")),
            ],
            "cl.toml:2:12: `clusters` is empty: it names no cluster",
        ),
        (
            vec![
                "taskset".into(),
                "validate".into(),
                at(
                    "twice.toml",
                    &format!("{task}{}{}", mode("m", "0ms"), mode("m", "5ms")),
                ),
            ],
            "twice.toml:10:8: mode `m` is named twice",
        ),
        (
            vec![
                "taskset".into(),
                "validate".into(),
                at("empty.toml", &format!("{task}{}", mode("", "0ms"))),
            ],
            "empty.toml:6:8: a mode's `name` is empty",
        ),
        (
            vec!["taskset".into(), "validate".into(), at("two.xml", &xml)],
            "processor id 1 is given twice (processors #1 and #2)",
        ),
        (
            vec![
                "report".into(),
                "--from-json".into(),
                at("kind.json", &run("bogus", "complete", "1")),
                "--out".into(),
                "r.html".into(),
            ],
            "kind.json: kind `bogus` is none of rtlab's commands that save",
        ),
        (
            vec![
                "report".into(),
                "--from-json".into(),
                at("status.json", &run("sim", "half", "1")),
                "--out".into(),
                "r.html".into(),
            ],
            "status.json: status `half` is neither complete nor interrupted",
        ),
        (
            vec![
                "report".into(),
                "--from-json".into(),
                at("late.json", &run("sim", "complete", "7")),
                "--out".into(),
                "r.html".into(),
            ],
            "late.json: job 0 of task `a` starts at 7 ns, after it finishes at 5 ns",
        ),
        (
            vec!["sweep".into(), "--spec".into(), at("array.json", "[1, 2]")],
            "array.json: must be a JSON object of keys, not an array",
        ),
        (
            vec![
                "sweep".into(),
                "merge".into(),
                at("edited.json", &edited.to_string()),
            ],
            "edited.json: its row 1 is at utilization 0.65, where the spec's step 1 is 0.6",
        ),
        (
            vec![
                "partition".into(),
                "builtin:dhall".into(),
                "--cpus".into(),
                "1".into(),
                "--out".into(),
                "p.toml".into(),
            ],
            "--out p.toml: not written: task `light1` fits no processor",
        ),
    ];
    for (args, says) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = exit_in(dir.path(), &args);
        // `validate` reports on standard output; the others on stderr.
        let said = if args[0] == "taskset" { out } else { err };
        assert_eq!(code, Some(1), "rtlab {args:?}: {said}");
        assert_eq!(said.lines().count(), 1, "rtlab {args:?}: {said}");
        assert!(said.contains(says), "rtlab {args:?}: {said}");
    }
    assert!(!dir.path().join("r.html").exists() && !dir.path().join("p.toml").exists());
    // `validate` reports every task's bad `cpu`, not the first only.
    let cpus = at(
        "cpus.toml",
        "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"1ms\"\ncpu = \"x\"\n\
         [[task]]\nname = \"b\"\nperiod = \"10ms\"\nwcet = \"1ms\"\ncpu = 7\n",
    );
    let (code, out, _) = exit_in(dir.path(), &["taskset", "validate", &cpus]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("cpus.toml:5:7: `cpu` must be a processor number"),
        "{out}"
    );
    assert!(
        out.contains("cpus.toml:10:7: task `b`: cpu 7 does not exist"),
        "{out}"
    );
}

/// Issue 39, item 10: `results export --format json` is read back by
/// `report --from-json` (it said "missing field `id`"), rows and schedule
/// with it.
#[test]
fn an_exported_run_is_read_back_by_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let store = store.to_str().unwrap();
    let (code, _, err) = exit_in(
        dir.path(),
        &[
            "sim",
            "builtin:lf-scenario-1",
            "-s",
            "edf",
            "-d",
            "100ms",
            "--store",
            store,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, exported, err) = exit_in(
        dir.path(),
        &[
            "results", "export", "1", "--format", "json", "--store", store,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&exported).unwrap();
    assert!(doc["jobs"].as_array().is_some_and(|j| !j.is_empty()) && doc["schedule"].is_array());
    std::fs::write(dir.path().join("e.json"), &exported).unwrap();
    let (code, out, err) = exit_in(
        dir.path(),
        &["report", "--from-json", "e.json", "--out", "e.html"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("report: 1 run "), "{out}");
    let html = std::fs::read_to_string(dir.path().join("e.html")).unwrap();
    assert!(html.contains("lf-scenario-1"));
}

/// Issue 39, item 8: each error names what the user gave, not a flag or a
/// cause they did not.
#[test]
fn errors_name_their_cause() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).unwrap();
        name.to_string()
    };
    let modes = at(
        "modes.toml",
        "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n\
         [[mode]]\nname = \"m\"\nstart = \"0ms\"\ntasks = [\"a\"]\n",
    );
    let foreign = dir.path().join("other.sqlite");
    let made = Command::new("python3")
        .args([
            "-c",
            &format!(
                "import sqlite3; c = sqlite3.connect('{}'); c.execute('create table runs(x)'); c.commit()",
                foreign.display()
            ),
        ])
        .status()
        .is_ok_and(|s| s.success());
    let instance = at(
        "instance.json",
        r#"{"tasks": {"t": {"instance": -1, "run": 1000, "timer": {"ref": "unique", "period": 10000}}}}"#,
    );
    let period = at(
        "period.json",
        r#"{"tasks": {"t": {"run": 1000, "timer": {"ref": "unique", "period": 0}}}}"#,
    );
    let mut cases: Vec<(Vec<&str>, i32, &str, &str)> = vec![
        // Was "--utilization must be > 0".
        (
            vec!["sweep", "--from", "1e308", "--to", "1e308"],
            2,
            "--to 1e308 is above the most a set of 10 tasks can reach",
            "--utilization",
        ),
        // Was "--phase overload phases are not modelled" with no --phase.
        (
            vec!["sim", &modes, "--cpus", "2", "-s", "gedf", "-d", "100ms"],
            2,
            "modes.toml: the file's modes run as phases",
            "--phase",
        ),
        // Was "--overheads ...".
        (
            vec![
                "sim",
                "builtin:lf-scenario-1",
                "--cpus",
                "2",
                "-s",
                "gedf",
                "--tick",
                "1ms",
                "-d",
                "100ms",
            ],
            2,
            "--tick is not modelled under gedf",
            "--overheads",
        ),
        // Was "(rt-app's times are microseconds)".
        (
            vec!["taskset", "validate", &instance],
            1,
            "`instance` must be a whole number >= 0",
            "microseconds",
        ),
        // Was "has no `timer`" beside the period's own error.
        (
            vec!["taskset", "validate", &period],
            1,
            "timer period 0 is refused",
            "has no `timer`",
        ),
    ];
    let foreign = foreign.display().to_string();
    if made {
        // Was SQLite's CREATE TABLE statement, 1,140 characters.
        cases.push((
            vec!["sim", "builtin:lf-scenario-1", "-s", "edf", "-d", "100ms", "--store", &foreign],
            1,
            "not an rtlab results store (an SQLite database with 1 tables and no rtlab schema version)",
            "CREATE TABLE",
        ));
    } else {
        common::unavailable("python3's sqlite3 module, to make another program's database");
    }
    for (args, exit, says, not) in &cases {
        let (code, out, err) = exit_in(dir.path(), args);
        let said = if args[0] == "taskset" { out } else { err };
        assert_eq!(code, Some(*exit), "rtlab {args:?}: {said}");
        assert_eq!(said.lines().count(), 1, "rtlab {args:?}: {said}");
        assert!(
            said.contains(says) && !said.contains(not),
            "rtlab {args:?}: {said}"
        );
    }
}

// Sizes from the user (issue 39, item 2): no value any flag takes makes
// rtlab allocate past 1 GiB, abort or panic. Every value-taking flag of
// every row is given 2^64 - 1 (with a unit if it wants one) under
// `ulimit -v` 1 GiB; what is still running after a few seconds (a long
// request: `sim -d 18446744073709551615ns`) is stopped with SIGINT.

/// What a run under the limit did.
struct Limited {
    status: ExitStatus,
    stderr: String,
    /// It was still running after the time given and was stopped.
    stopped: bool,
}

/// `rtlab ARGS` under `ulimit -v` 1 GiB, a private state folder in `dir`,
/// stopped with SIGINT after `limit` (SIGKILL 20 s later).
fn limited_run(args: &[String], dir: &Path, limit: Duration) -> Limited {
    let err_path = dir.join("stderr");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(rtlab_path())
        .args(args)
        .current_dir(dir)
        .env("RTLAB_STATE_DIR", dir.join("state"))
        .stdout(Stdio::null())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut stopped = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let waited = started.elapsed();
        if waited > limit + Duration::from_secs(20) {
            let _ = child.kill();
        } else if waited > limit && !stopped {
            let _ = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
            stopped = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Limited {
        status,
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        stopped,
    }
}

/// `args` with `flag` (or its `short` form) set to `value`: its value
/// replaced where the row gives it, else the flag added.
fn with_flag(args: &[String], short: Option<&str>, flag: &str, value: &str) -> Vec<String> {
    let mut out = args.to_vec();
    match out
        .iter()
        .position(|a| a == flag || Some(a.as_str()) == short)
    {
        Some(i) if i + 1 < out.len() => out[i + 1] = value.to_string(),
        _ => match out.iter().position(|a| a.starts_with(&format!("{flag}="))) {
            Some(i) => out[i] = format!("{flag}={value}"),
            None if value.is_empty() => out.push(flag.to_string()),
            None => out.push(format!("{flag}={value}")),
        },
    }
    out
}

/// Every value-taking flag of `rows` given 2^64 - 1.
fn huge_values<'a>(rows: impl Iterator<Item = &'a Row>) {
    let bench = Bench::new();
    let mut tried = 0;
    for row in rows {
        let base = bench.args(row.args);
        for (short, flag, value) in value_flags_with_short(row.path) {
            // Files and stores are the output and store matrices' (a huge
            // number is a file name there).
            if OUTPUT_NAMES.contains(&flag.as_str())
                || READ_PATHS.contains(&flag.as_str())
                || output_flags(row.path).contains(&flag)
                || value.contains("FILE")
            {
                continue;
            }
            let scratch = tempfile::tempdir().unwrap();
            let mut huge = "18446744073709551615".to_string();
            let mut outcome;
            loop {
                let args = with_flag(&base, short.as_deref(), &flag, &huge);
                outcome = limited_run(&args, scratch.path(), Duration::from_secs(3));
                // A duration without a unit is refused: try it in ns.
                if outcome.status.code() == Some(2)
                    && outcome.stderr.contains("unit")
                    && !huge.ends_with("ns")
                {
                    huge.push_str("ns");
                    continue;
                }
                break;
            }
            tried += 1;
            let what = format!(
                "`rtlab {}` with {flag} {huge}: {:?}{}: {}",
                row.path,
                outcome.status,
                if outcome.stopped { " (stopped)" } else { "" },
                outcome.stderr
            );
            assert!(!outcome.stderr.contains("panicked"), "{what}");
            if !outcome.stopped {
                use std::os::unix::process::ExitStatusExt;
                assert_eq!(outcome.status.signal(), None, "{what}");
                assert!(matches!(outcome.status.code(), Some(0..=2)), "{what}");
            }
            let errors = outcome
                .stderr
                .lines()
                .filter(|l| l.starts_with("error"))
                .count();
            assert!(errors <= 1, "{what}");
        }
    }
    assert!(tried > 0);
}

#[test]
fn no_flag_value_allocates_past_a_gib_or_panics() {
    huge_values(ROWS.iter().filter(|r| !r.root && r.path != "demo"));
}

#[test]
#[ignore = "needs root"]
fn no_flag_value_of_a_real_time_command_allocates_past_a_gib_or_panics() {
    rtlab_testkit::require_root();
    huge_values(ROWS.iter().filter(|r| r.root || r.path == "demo"));
}
