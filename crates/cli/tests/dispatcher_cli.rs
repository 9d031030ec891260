//! `--dispatcher` from the command line (issue 34): a run prints and
//! records its costs; `compare` matches the run job for job; Hartstone
//! puts the real series beside the simulated ones; what the dispatcher
//! cannot do is refused in one line with the project's exit codes; the
//! watchdog ends a hung dispatcher with one line, the run so far printed
//! and the kernel settings restored; a SIGKILL of the whole process leaves
//! settings that `rtlab doctor --restore` puts back.
//!
//! The real runs are short (a second or less) and assert what must hold on
//! a noisy machine (counts, fields, exit codes, restored settings), never
//! timings. They run one at a time and need root (`#[ignore = "needs
//! root"]`: `.ci/run` runs them).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{json_of, rtlab};

const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Exit status and one-line standard error of `rtlab ARGS`.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let out = rtlab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(out.stdout.is_empty(), "nothing ran: {args:?}");
    (out.status.code(), err)
}

#[test]
fn what_the_dispatcher_cannot_run_is_refused_in_one_line() {
    let run = |more: &[&str]| {
        let mut args = vec!["run", "builtin:hartstone-ph", "--dispatcher", "-d", "1s"];
        args.extend_from_slice(more);
        refused(&args)
    };
    let (code, err) = run(&["-s", "multiburst", "--tick", "0s"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--tick 0s"), "{err}");
    let (code, err) = run(&["-s", "edf", "--tick", "1ns"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--tick 1ns") && err.contains("shorter than one decision"),
        "{err}"
    );
    // Global schedulers are one dispatcher's over --cpus: gedf, gfp and
    // edzl, tickless; linux-dl is not dispatched yet.
    let (code, err) = run(&["-s", "linux-dl", "--cpus", "0,1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("global schedulers gedf"), "{err}");
    let (code, err) = run(&["-s", "gedf", "--cpus", "0,1", "--tick", "4ms"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("tickless only"), "{err}");
    let (code, err) = run(&["-s", "fp:dm", "--protocol", "pip"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--protocol `pip`"), "{err}");
    let (code, err) = run(&["-s", "multiburst:burst=0ms"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--scheduler"), "{err}");
    let (code, err) = run(&["-s", "edf", "--edf-margin", "1ms"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--edf-margin"), "{err}");
    // --tick belongs to the dispatcher (clap's own usage error).
    let out = rtlab()
        .args([
            "run",
            "builtin:hartstone-ph",
            "--policy",
            "rm",
            "--tick",
            "4ms",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
#[ignore = "needs root"]
fn without_real_time_rights_the_dispatcher_is_refused_in_one_line() {
    // Root, to become nobody.
    rtlab_testkit::require_root();
    let Some(out) = common::unprivileged(
        &[
            "run",
            "builtin:hartstone-ph",
            "--dispatcher",
            "-s",
            "multiburst",
            "-d",
            "1s",
            "--no-mlock",
        ],
        "rtlab-dispatch-nobody",
    ) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--dispatcher") && err.contains("root"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
}

#[test]
#[ignore = "needs root"]
fn a_dispatched_run_records_every_release_with_the_dispatchers_costs() {
    let _one = common::real_time();
    let r = json_of(&[
        "run",
        "builtin:hartstone-ph",
        "--dispatcher",
        "-s",
        "multiburst",
        "-d",
        "1s",
        "--json",
    ]);
    // The threads' kernel policy (SCHED_FIFO); the scheduler that ran is
    // the dispatcher's.
    assert_eq!(r["policy"], "fifo-order");
    assert!(r["scheduler"].is_null(), "{}", r["scheduler"]);
    assert_eq!(r["dispatcher"]["scheduler"], "multiburst");
    // 1 s of 2, 4, 8, 16 and 32 Hz.
    assert_eq!(r["released"], 2 + 4 + 8 + 16 + 32);
    let d = &r["dispatcher"];
    assert_eq!(d["mode"], "tickless");
    assert!(d["decisions"].as_u64().unwrap() > 0, "{d}");
    assert!(d["dispatch_latency"]["count"].as_u64().unwrap() > 0, "{d}");
    assert!(d["decision_cost"]["p50_ns"].as_u64().unwrap() > 0, "{d}");
    assert_eq!(d["context_switches"], r["context_switches"]);
    assert!(d.get("watchdog").is_none(), "{d}");
    // Multiburst's rounds, as the simulator reports them.
    assert!(r["scheduler_data"]["rounds"].as_u64().unwrap() > 0);
}

#[test]
#[ignore = "needs root"]
fn compare_matches_a_dispatched_run_job_for_job() {
    let _one = common::real_time();
    let dir = tempfile::tempdir().unwrap();
    let pairs = dir.path().join("pairs.csv");
    let c = json_of(&[
        "compare",
        "builtin:hartstone-ph",
        "--dispatcher",
        "-s",
        "edf",
        "-d",
        "1s",
        "--json",
        "--jobs",
        pairs.to_str().unwrap(),
    ]);
    let jobs = &c["jobs"];
    assert_eq!(jobs["real_jobs"], 62, "{jobs}");
    assert_eq!(jobs["sim_jobs"], 62, "{jobs}");
    assert_eq!(jobs["matched"], 62);
    // The dispatcher releases each job at its nominal time, as the
    // simulator does: always the same.
    assert_eq!(jobs["releases_agree"], 62);
    assert!(jobs["tolerance_ns"].as_u64().unwrap() > 0);
    assert_eq!(c["scheduler"], "edf with the dispatcher's measured costs");
    // `--jobs`: every job on one row, both sides filled, the difference
    // the real response less the simulated one.
    let csv = std::fs::read_to_string(&pairs).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 62, "{csv}");
    for row in &rows {
        let n = |i: usize| row[i].parse::<i64>().unwrap();
        assert_eq!(n(12), n(6) - n(10), "{row:?}");
        assert_eq!(n(6), n(5) - n(2), "{row:?}");
    }
}

#[test]
#[ignore = "needs root"]
fn hartstone_puts_the_dispatched_series_beside_the_simulated_one() {
    let _one = common::real_time();
    let doc = json_of(&[
        "hartstone",
        "--test",
        "2",
        "--dispatcher",
        "-s",
        "edf,multiburst",
        "--tick",
        "4ms",
        "--iteration-duration",
        "500ms",
        "--max-iterations",
        "1",
        "--json",
    ]);
    let labels: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "sim edf tick 4ms",
            "sim multiburst tick 4ms",
            "dispatcher edf tick 4ms",
            "dispatcher multiburst tick 4ms"
        ]
    );
    for run in doc["runs"].as_array().unwrap() {
        let test = &run["tests"][0];
        assert_eq!(test["test"], 2, "{run}");
        assert_eq!(test["iterations"].as_array().unwrap().len(), 1, "{run}");
    }
    let worlds: Vec<&str> = doc["rankings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["world"].as_str().unwrap())
        .collect();
    assert_eq!(worlds, ["sim", "real"]);
}

#[test]
#[ignore = "needs root"]
fn the_watchdog_ends_a_hung_dispatcher_in_one_line_with_the_run_so_far_and_settings_restored() {
    let _one = common::real_time();
    let before = read(RT_RUNTIME);
    let out = rtlab()
        .args([
            "run",
            "builtin:hartstone-ph",
            "--dispatcher",
            "-s",
            "edf",
            "-d",
            "5s",
            "--no-rt-throttling",
            "--dispatcher-hang-at",
            "400ms",
            "--dispatcher-watchdog",
            "200ms",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("stalled"), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the report");
    assert!(r["dispatcher"]["watchdog"].is_string());
    assert!(
        r["released"].as_u64().unwrap() >= 10,
        "kept what was recorded: {r}"
    );
    assert!(r["ended_ns"].as_u64().unwrap() < 1_000_000_000);
    assert_eq!(read(RT_RUNTIME), before, "RT throttling restored");
}

#[test]
#[ignore = "needs root"]
fn a_sigkilled_dispatched_run_leaves_settings_that_doctor_restore_puts_back() {
    let _one = common::real_time();
    let before = read(RT_RUNTIME);
    let state = tempfile::tempdir().unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args([
            "run",
            "builtin:hartstone-ph",
            "--dispatcher",
            "-s",
            "multiburst",
            "--no-rt-throttling",
            "-d",
            "30s",
        ])
        .env("RTLAB_STATE_DIR", state.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let give_up = Instant::now() + Duration::from_secs(20);
    let threads = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    // RT throttling off and the dispatcher's threads running.
    while (read(RT_RUNTIME) != "-1" || threads() < 7) && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(read(RT_RUNTIME), "-1", "the run switched RT throttling off");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(read(RT_RUNTIME), "-1", "SIGKILL leaves it off");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "no thread of the run survives it"
    );
    let out = rtlab()
        .args(["doctor", "--restore"])
        .env("RTLAB_STATE_DIR", state.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(RT_RUNTIME), before, "doctor --restore put it back");
    let _ = std::fs::write(RT_RUNTIME, &before);
}

/// Global EDF by one dispatcher over two CPUs. Three tasks of one period
/// (C 4, 3 and 5 ms, T 10 ms, U 1.2): every job is released with the
/// others and none has an earlier deadline than a running one, so G-EDF
/// never preempts (a and b start, c takes b's CPU when b ends). Every
/// release is recorded; per the records no job was preempted, each ran on
/// one CPU, and no CPU ran two of the set's jobs at once (a job starts on
/// a CPU only after the one before it there finished); `compare` matches
/// a run with the simulator's G-EDF job for job.
#[test]
#[ignore = "needs root"]
fn a_global_dispatcher_runs_gedf_over_two_cpus_every_job_recorded_one_job_per_cpu() {
    let _one = common::real_time();
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("three.toml");
    std::fs::write(
        &set,
        "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"4ms\"\n\
         [[task]]\nname = \"b\"\nperiod = \"10ms\"\nwcet = \"3ms\"\n\
         [[task]]\nname = \"c\"\nperiod = \"10ms\"\nwcet = \"5ms\"\n",
    )
    .unwrap();
    let jobs = dir.path().join("jobs.csv");
    let r = json_of(&[
        "run",
        set.to_str().unwrap(),
        "--dispatcher",
        "-s",
        "gedf",
        "--cpus",
        "0,1",
        "-d",
        "500ms",
        "--jobs",
        jobs.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r["dispatcher"]["scheduler"], "gedf");
    assert_eq!(r["dispatcher"]["dispatchers"], 1);
    assert_eq!(r["cpus"], serde_json::json!([0, 1]));
    assert!(
        r["dispatcher"].get("watchdog").is_none(),
        "{}",
        r["dispatcher"]
    );
    // 50 releases of each task.
    assert_eq!(r["released"], 150);
    let text = std::fs::read_to_string(&jobs).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (task, job, release, start, finish, preempted, cpu) = (
        col("task"),
        col("job"),
        col("release_ns"),
        col("start_ns"),
        col("finish_ns"),
        col("involuntary_switches"),
        col("cpu"),
    );
    let mut per_cpu: Vec<Vec<(u64, u64)>> = vec![Vec::new(), Vec::new()];
    let mut rows = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        rows += 1;
        let k: u64 = f[job].parse().unwrap();
        assert_eq!(f[release].parse::<u64>().unwrap(), k * 10_000_000, "{line}");
        assert_eq!(f[preempted], "0", "G-EDF never preempts here: {line}");
        let (Ok(s), Ok(e), Ok(c)) = (
            f[start].parse::<u64>(),
            f[finish].parse::<u64>(),
            f[cpu].parse::<usize>(),
        ) else {
            // The last jobs may still run at the end.
            assert!(k >= 48, "{} job {k} unfinished: {line}", f[task]);
            continue;
        };
        assert!(s <= e, "{line}");
        per_cpu[c].push((s, e));
    }
    assert_eq!(rows, 150, "every release has its record");
    for (c, jobs) in per_cpu.iter_mut().enumerate() {
        assert!(!jobs.is_empty(), "CPU {c} ran jobs");
        jobs.sort_unstable();
        for w in jobs.windows(2) {
            assert!(
                w[0].1 <= w[1].0,
                "CPU {c} ran two jobs at once: {:?} and {:?}",
                w[0],
                w[1]
            );
        }
    }
    // `compare` matches it with the simulator's global EDF job for job.
    let c = json_of(&[
        "compare",
        set.to_str().unwrap(),
        "--dispatcher",
        "-s",
        "gedf",
        "--cpus",
        "0,1",
        "-d",
        "200ms",
        "--json",
    ]);
    let jobs = &c["jobs"];
    assert_eq!(jobs["real_jobs"], 60, "{jobs}");
    assert_eq!(jobs["sim_jobs"], 60, "{jobs}");
    assert_eq!(jobs["matched"], 60, "{jobs}");
    assert_eq!(jobs["releases_agree"], 60, "{jobs}");
}
