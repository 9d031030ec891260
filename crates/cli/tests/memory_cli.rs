//! Inputs that used to exhaust memory (issue 10, section 3), each run by the
//! real binary under `ulimit -v`: it must finish, or refuse in one line,
//! and never die of a signal (an allocation failure aborts with SIGABRT; an
//! unbounded one gets the whole VM OOM-killed).
//!
//! The limit here, 256 MiB of address space, is a quarter of README's
//! budget (1 GiB) and below what each case needed before its fix, so every
//! test fails on the old code: RandFixedSum's table at 10,000 tasks took
//! 1.6 GB, a 200 s trace window 400 MB, the backlog of an overloaded set
//! 240 MB in 2 s and more with every second.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};

/// Address-space limit of every run, in KiB.
const LIMIT_KIB: u64 = 256 * 1024;

/// Runs `rtlab ARGS` in `dir` under `ulimit -v LIMIT_KIB`.
fn limited(dir: &std::path::Path, args: &[&str]) -> Output {
    let rtlab = assert_cmd::cargo::cargo_bin("rtlab");
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(rtlab)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("sh runs")
}

/// Exit status 0, or 1 (an input refused) or 2 (a flag's value refused)
/// with exactly one line on standard error; never a signal. Returns
/// standard error.
fn clean(args: &[&str], output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        output.status.signal(),
        None,
        "rtlab {args:?} died of a signal under ulimit -v {LIMIT_KIB}: {stderr}"
    );
    let code = output.status.code().expect("an exit code");
    match code {
        0 => {}
        1 | 2 => assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "rtlab {args:?}: not one line: {stderr}"
        ),
        _ => panic!("rtlab {args:?} exited {code}: {stderr}"),
    }
    stderr
}

fn run(dir: &std::path::Path, args: &[&str]) -> (i32, String) {
    let output = limited(dir, args);
    let stderr = clean(args, &output);
    (output.status.code().unwrap_or(-1), stderr)
}

#[test]
fn randfixedsum_generates_ten_thousand_tasks_in_linear_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _) = run(dir.path(), &["taskset", "gen", "-n", "10000", "-u", "0.9"]);
    assert_eq!(code, 0);
}

#[test]
fn randfixedsum_refuses_a_table_too_large_and_names_the_alternative() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["taskset", "gen", "-n", "100000", "-u", "50000"];
    let (code, stderr) = run(dir.path(), &args);
    assert_eq!(code, 2, "generator refusals are usage errors");
    assert!(stderr.contains("use --method uunifast-discard"), "{stderr}");
}

#[test]
fn sweep_of_one_large_set_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<&str> =
        "sweep --tasks 10000 --sets 1 --from 0.7 --to 0.7 --test edf:edf-utilization"
            .split_whitespace()
            .collect();
    let (code, _) = run(dir.path(), &args);
    assert_eq!(code, 0);
}

#[test]
fn sweep_of_a_hundred_thousand_tasks_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run(dir.path(), &["sweep", "--tasks", "100000", "--sets", "1"]);
    assert_eq!(code, 2, "a flag's value over its limit is a usage error");
    assert!(stderr.contains("limit of 10000 tasks"), "{stderr}");
}

#[test]
fn a_long_trace_window_is_streamed_to_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<&str> = "sim builtin:avionics -s fp:rm -d 200s --trace t.json --window 0s..200s"
        .split_whitespace()
        .collect();
    let (code, _) = run(dir.path(), &args);
    assert_eq!(code, 0);
    let text = std::fs::read(dir.path().join("t.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&text).unwrap();
    // Avionics releases about 107 jobs a second; each gives a release, a
    // run and a completion at least.
    let events = doc["traceEvents"].as_array().unwrap().len();
    assert!(events > 200 * 300, "{events}");
}

#[test]
fn a_gantt_chart_of_a_huge_window_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<&str> = "sim builtin:avionics -s fp:rm -d 1000s --gantt g.svg --window 0s..1000s"
        .split_whitespace()
        .collect();
    let (code, stderr) = run(dir.path(), &args);
    assert_eq!(code, 1);
    assert!(stderr.contains("narrow --window"), "{stderr}");
    assert!(!dir.path().join("g.svg").exists());
}

#[test]
fn an_overloaded_backlog_stops_the_simulation_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    // C = 2T: a job more waits every two periods under --on-miss continue.
    std::fs::write(
        dir.path().join("over.toml"),
        "[[task]]\nname = \"t\"\nperiod = \"1us\"\ndeadline = \"2us\"\nwcet = \"2us\"\n",
    )
    .unwrap();
    let args = ["sim", "over.toml", "-s", "fp:rm", "-d", "10s"];
    let output = limited(dir.path(), &args);
    let stderr = clean(&args, &output);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("stopped at 2.000001s"), "{stderr}");
    // The report of what was simulated is printed all the same.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("for 2.000001s"), "{stdout}");
}

#[test]
fn an_endless_file_is_refused_after_the_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run(dir.path(), &["analyze", "/dev/zero"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("larger than the limit of 8 MiB"),
        "{stderr}"
    );
}
