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

/// Issue 39: `--shard 0/18446744073709551615` built all N shards to pick
/// one (22 GB in 30 s); now the one shard is computed, empty and said so.
#[test]
fn a_shard_of_a_huge_count_is_computed_alone() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "sweep",
        "--tasks",
        "3",
        "--sets",
        "5",
        "--from",
        "0.5",
        "--to",
        "0.6",
        "--step",
        "0.1",
        "--shard",
        "0/18446744073709551615",
        "--out",
        "z.json",
    ];
    let (code, stderr) = run(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "note: shard 0/18446744073709551615 holds no sample: the sweep has 10 samples"
        ),
        "{stderr}"
    );
}

/// Issue 39: merging a shard whose `count` says 10^12 aborted (16 TB asked
/// for), 2^64 - 1 panicked; the count sizes nothing now.
#[test]
fn a_shard_file_claiming_a_huge_count_is_one_missing_shard() {
    let dir = tempfile::tempdir().unwrap();
    for count in ["1000000000000", "18446744073709551615"] {
        let shard = format!("0/{count}");
        let args = [
            "sweep", "--tasks", "3", "--sets", "5", "--from", "0.5", "--to", "0.6", "--step",
            "0.1", "--shard", &shard, "--out", "e.json",
        ];
        assert_eq!(run(dir.path(), &args).0, 0);
        let (code, stderr) = run(dir.path(), &["sweep", "merge", "e.json"]);
        assert_eq!(code, 1, "{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!("error: rtlab sweep merge: shard 1 of {count} is missing")
        );
    }
}

/// Issue 39: `--threads 65535` started 65,535 threads for 2 sets (over a
/// minute; under this limit an abort).
#[test]
fn sweep_threads_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let out = limited(dir.path(), &["sweep", "--threads", "65535", "--sets", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: invalid value '65535' for '--threads <N>': 65535 is not in 1..=1024"
        ),
        "{stderr}"
    );
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

/// Issue 24: `latency -a 0-99999999999` allocated 800 GB and aborted,
/// `0-18446744073709551615` panicked ("capacity overflow"), `0-40000000`
/// took 318 MB to say CPU 2 is missing. Each range is checked before it is
/// expanded.
#[test]
fn cpu_lists_are_checked_before_they_are_expanded() {
    let dir = tempfile::tempdir().unwrap();
    for list in ["0-99999999999", "0-18446744073709551615", "0-40000000"] {
        let (code, stderr) = run(dir.path(), &["latency", "-a", list, "-l", "1"]);
        assert_eq!(code, 2, "{list}: {stderr}");
        assert!(stderr.contains("is not available"), "{list}: {stderr}");
    }
}

/// Issue 24: 32 measuring threads reserved a gigabyte of address space
/// (one 64 MiB malloc arena each) and failed to start under `ulimit -v`.
#[test]
fn thirty_two_measuring_threads_fit() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "latency", "-t", "32", "-l", "5", "-i", "1ms", "--policy", "other",
    ];
    let (code, stderr) = run(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
}

/// Issue 24: `report --from-json /dev/zero` grew past 7 GB.
#[test]
fn report_json_files_are_read_up_to_a_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run(dir.path(), &["report", "--from-json", "/dev/zero"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("larger than the limit of 64 MiB for --from-json files"),
        "{stderr}"
    );
}

/// Issue 24: `report` held every stored run's rows at once (10 ids of a
/// run of 1M jobs: 1.35 GB). Ten ids of a run of 200,000 jobs (27 MB of
/// rows each, 270 MB together, above this file's limit) now hold one run's
/// rows at a time.
#[test]
fn report_reads_one_stored_run_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    // lf-scenario-4 releases 60 jobs a second.
    let args = [
        "sim",
        "builtin:lf-scenario-4",
        "-s",
        "edf",
        "-d",
        "3334s",
        "--store",
        "s.db",
    ];
    let (code, stderr) = run(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    let mut args = vec!["report", "--store", "s.db", "--out", "r.html"];
    args.extend(["1"; 10]);
    let (code, stderr) = run(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert_eq!(html.matches("<section class=\"run\"").count(), 10);
}

/// Issue 24: `taskset validate --json` of 30 files holding 400,000
/// duplicate keys each peaked at 5.5 GB and printed 2.1 GB. A file's
/// errors are listed up to 100 and the rest counted.
#[test]
fn validate_lists_a_hundred_errors_a_file_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let fields = vec!["\"period\": \"1ms\""; 400_000].join(", ");
    let text = format!("{{\"task\": [{{\"name\": \"a\", \"wcet\": \"1ms\", {fields}}}]}}\n");
    std::fs::write(dir.path().join("a.json"), &text).unwrap();
    std::fs::write(dir.path().join("b.json"), &text).unwrap();
    let args = ["taskset", "validate", "--json", "a.json", "b.json"];
    let output = limited(dir.path(), &args);
    // `validate` reports on stdout: an invalid file is exit 1, no stderr.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for file in doc.as_array().unwrap() {
        assert_eq!(file["errors"].as_array().unwrap().len(), 100);
        assert_eq!(file["unlisted_errors"], 399_899);
    }
    assert!(
        output.stdout.len() < 100_000,
        "{} bytes",
        output.stdout.len()
    );
    let args = ["taskset", "validate", "a.json"];
    let output = limited(dir.path(), &args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().count(), 101);
    assert!(
        stdout.ends_with("a.json: and 399,899 more errors\n"),
        "{stdout}"
    );
}
