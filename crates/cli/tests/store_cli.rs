//! The results store end to end: `--save` on sim, sweep, analyze, latency
//! and run lands in `rtlab results list` with host metadata and rows, and
//! `show`, `export`, `diff` and `rm` work on them. Every test uses its own
//! database (`--store` in a temporary directory), never the user's.

mod common;

use std::path::{Path, PathBuf};

use common::{json_of, rtlab, serial};
use serde_json::Value;

fn store_in(dir: &Path) -> PathBuf {
    dir.join("results.sqlite")
}

/// Runs `rtlab ARGS --store STORE`; requires success; returns stdout and
/// stderr.
fn saved(store: &Path, args: &[&str]) -> (String, String) {
    let out = rtlab()
        .args(args)
        .args(["--store", store.to_str().unwrap()])
        .env_remove("RTLAB_STORE")
        .assert()
        .success()
        .get_output()
        .clone();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn results(store: &Path, args: &[&str]) -> Value {
    let mut all: Vec<&str> = vec!["results"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--store", store.to_str().unwrap(), "--json"]);
    json_of(&all)
}

/// The id in `saved as run N in PATH`, checking the path.
fn saved_id(stderr: &str, store: &Path) -> i64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("saved as run "))
        .unwrap_or_else(|| panic!("no `saved as` line in {stderr}"));
    assert!(
        line.ends_with(&format!(" in {}", store.display())),
        "{line}"
    );
    line["saved as run ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn sim_sweep_and_analyze_are_saved_with_their_document_host_and_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let sim = ["sim", "builtin:lf-scenario-4", "-s", "fp:dm", "-d", "1s"];
    let (out, err) = saved(&store, &[&sim[..], &["--save", "--json"]].concat());
    let dm = saved_id(&err, &store);
    let printed: Value = serde_json::from_str(&out).unwrap();
    let (_, err) = saved(
        &store,
        &[
            "sim",
            "builtin:lf-scenario-4",
            "-s",
            "edf",
            "-d",
            "1s",
            "--save",
        ],
    );
    let edf = saved_id(&err, &store);
    let (_, err) = saved(
        &store,
        &[
            "sweep", "--tasks", "4", "--sets", "10", "--step", "0.1", "--save",
        ],
    );
    let sweep = saved_id(&err, &store);
    let (_, err) = saved(
        &store,
        &["analyze", "builtin:avionics", "--policy", "rm", "--save"],
    );
    let analyze = saved_id(&err, &store);

    let list = results(&store, &["list"]);
    let kinds: Vec<(i64, &str, &str)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["kind"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (dm, "sim", "complete"),
            (edf, "sim", "complete"),
            (sweep, "sweep", "complete"),
            (analyze, "analyze", "complete")
        ]
    );
    // lf-scenario-4 over 1 s: t1 (T=25ms, offset 1ms) releases 40 jobs,
    // t2 (T=50ms) 20; the saved rows are every job of the run.
    assert_eq!(list[0]["jobs"], 60);
    assert_eq!(list[2]["jobs"], 0);

    let run = results(&store, &["show", &dm.to_string()]);
    assert_eq!(
        run["document"], printed,
        "the saved document is the --json output"
    );
    assert!(run["command"]
        .as_str()
        .unwrap()
        .contains("sim builtin:lf-scenario-4 -s fp:dm -d 1s --save --json"));
    assert!(run["taskset"]
        .as_str()
        .unwrap()
        .contains("name = \"lf-scenario-4\""));
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(run["host"]["kernel_release"], release.trim());
    assert!(run["host"]["cpus"].as_u64().unwrap() >= 1);
    assert!(run["host"]["preemption"].is_object());
    assert!(run["host"]["kernel_cmdline"].is_string());
    let sweep_run = results(&store, &["show", &sweep.to_string()]);
    assert!(sweep_run["taskset"].is_null());
    assert!(sweep_run["document"]["rows"].is_array() || sweep_run["document"].is_object());

    // The job rows agree with the document: t1's 40 jobs, each finished
    // by its deadline under DM (paper 000: t2 misses, t1 does not).
    let csv = String::from_utf8(
        rtlab()
            .args([
                "results",
                "export",
                &dm.to_string(),
                "--format",
                "csv",
                "--store",
                store.to_str().unwrap(),
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "task,job,release_ns,deadline_ns,start_ns,finish_ns,preemptions,voluntary_switches,cpu"
    );
    assert_eq!(lines.len(), 61);
    let t1: Vec<Vec<&str>> = lines[1..]
        .iter()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[0] == "t1")
        .collect();
    assert_eq!(t1.len(), 40);
    assert!(t1
        .iter()
        .all(|f| f[5].parse::<u64>().unwrap() <= f[3].parse::<u64>().unwrap()));
    let exported = json_of(&[
        "results",
        "export",
        &dm.to_string(),
        "--format",
        "json",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(exported["run"]["document"], printed);
    assert_eq!(exported["jobs"].as_array().unwrap().len(), 60);
    assert_eq!(exported["jobs"][0]["task"], "t1");

    // DM misses in scenario 4, EDF does not (paper 000): the diff says so.
    let diff = results(&store, &["diff", &dm.to_string(), &edf.to_string()]);
    let misses = diff
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "deadline_misses")
        .expect("deadline_misses differs");
    assert_eq!(misses["right"], 0);
    assert!(misses["left"].as_u64().unwrap() > 0);
    assert_eq!(
        misses["change"].as_f64().unwrap(),
        -misses["left"].as_f64().unwrap()
    );
    rtlab()
        .args([
            "results",
            "diff",
            &dm.to_string(),
            &edf.to_string(),
            "--store",
            store.to_str().unwrap(),
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains("deadline_misses"))
        // Times in their units, as every other human output (README:
        // "results diff"); --json keeps the nanoseconds.
        .stdout(
            predicates::str::is_match(r"tasks\[t1\].mean_response_ns +3 ms +11.5 ms +\+8.5 ms")
                .unwrap(),
        );

    // rm deletes the run (and its rows); a second rm is an error naming the store.
    rtlab()
        .args([
            "results",
            "rm",
            &dm.to_string(),
            "--store",
            store.to_str().unwrap(),
        ])
        .assert()
        .success();
    assert_eq!(results(&store, &["list"]).as_array().unwrap().len(), 3);
    rtlab()
        .args([
            "results",
            "show",
            &dm.to_string(),
            "--store",
            store.to_str().unwrap(),
        ])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!("no run {dm}")))
        .stderr(predicates::str::contains(store.to_str().unwrap()));
    rtlab()
        .args([
            "results",
            "export",
            &edf.to_string(),
            "--format",
            "xml",
            "--store",
            store.to_str().unwrap(),
        ])
        .assert()
        .code(2);
}

#[test]
fn a_store_that_cannot_be_opened_fails_before_measuring_and_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let bad = file.join("results.sqlite");
    rtlab()
        .args([
            "sim",
            "builtin:lf-scenario-4",
            "-s",
            "edf",
            "-d",
            "1s",
            "--store",
            bad.to_str().unwrap(),
        ])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicates::str::contains(bad.to_str().unwrap()));
}

#[test]
fn rtlab_store_names_the_database_when_no_flag_does() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    rtlab()
        .args([
            "sim",
            "builtin:lf-scenario-4",
            "-s",
            "edf",
            "-d",
            "100ms",
            "--save",
        ])
        .env("RTLAB_STORE", &store)
        .assert()
        .success()
        .stderr(predicates::str::contains(format!(
            "saved as run 1 in {}",
            store.display()
        )));
    assert_eq!(results(&store, &["list"]).as_array().unwrap().len(), 1);
}

#[test]
fn latency_saves_every_sample() {
    let _one = serial(); // real-thread runs one at a time (they share CPU 1)
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let (out, err) = saved(
        &store,
        &[
            "latency",
            "--policy",
            "other",
            "--threads",
            "2",
            "--interval",
            "1ms",
            "--loops",
            "200",
            "--json",
            "--save",
        ],
    );
    let id = saved_id(&err, &store);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let list = results(&store, &["list"]);
    assert_eq!(list[0]["kind"], "latency");
    assert_eq!(list[0]["samples"], 400, "2 threads x 200 loops");
    let run = results(&store, &["show", &id.to_string()]);
    assert_eq!(run["document"], doc);
    let exported = json_of(&[
        "results",
        "export",
        &id.to_string(),
        "--store",
        store.to_str().unwrap(),
    ]);
    let samples = exported["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 400);
    // Each thread's samples are numbered 0..200 in order.
    for (thread, chunk) in samples.chunks(200).enumerate() {
        for (seq, s) in chunk.iter().enumerate() {
            assert_eq!(
                (s["thread"].as_u64(), s["seq"].as_u64()),
                (Some(thread as u64), Some(seq as u64))
            );
        }
    }
    let max = doc["threads"][0]["max_ns"].as_u64();
    if let Some(max) = max {
        let stored = samples[..200]
            .iter()
            .map(|s| s["latency_ns"].as_u64().unwrap())
            .max()
            .unwrap();
        assert_eq!(stored, max, "the stored samples hold the reported maximum");
    }
}

/// The total number of jobs released in a `rtlab run --json` document.
fn released(doc: &Value) -> u64 {
    doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["released"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_real_run_is_saved_with_every_job() {
    let _one = serial(); // real-thread runs one at a time (they share CPU 1)
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let (out, err) = saved(
        &store,
        &[
            "run",
            "builtin:lf-scenario-2",
            "--policy",
            "other",
            "-d",
            "300ms",
            "--no-mlock",
            "--json",
            "--save",
        ],
    );
    let id = saved_id(&err, &store);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let list = results(&store, &["list"]);
    assert_eq!(
        (list[0]["kind"].as_str(), list[0]["status"].as_str()),
        (Some("run"), Some("complete"))
    );
    assert_eq!(list[0]["jobs"].as_u64().unwrap(), released(&doc));
    assert!(released(&doc) > 0);
    let run = results(&store, &["show", &id.to_string()]);
    assert_eq!(run["document"], doc);
    assert!(run["host"]["virtualization"].is_object());
}

#[test]
fn a_run_ended_by_sigint_is_saved_as_interrupted_with_its_jobs() {
    let _one = serial(); // real-thread runs one at a time (they share CPU 1)
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let m = common::run_measured(
        &[
            "run",
            "builtin:lf-scenario-2",
            "--policy",
            "other",
            "-d",
            "60s",
            "--no-mlock",
            "--json",
            "--store",
            store.to_str().unwrap(),
        ],
        Some(std::time::Duration::from_secs(2)),
    );
    assert!(m.status.success(), "{:?}: {}", m.status, m.stderr);
    let id = saved_id(&m.stderr, &store);
    let doc: Value = serde_json::from_str(&m.stdout).unwrap();
    assert_eq!(doc["interrupted"], true);
    let list = results(&store, &["list"]);
    assert_eq!(list[0]["status"], "interrupted");
    assert_eq!(list[0]["jobs"].as_u64().unwrap(), released(&doc));
    assert!(released(&doc) > 0);
    assert_eq!(results(&store, &["show", &id.to_string()])["document"], doc);
}

/// A long simulation keeps its first 200,000 trace records
/// (MAX_KEPT_RECORDS) as job rows: a prefix of every task's jobs, each
/// with its completion (avionics is schedulable under RM, so every job of
/// the prefix finished; none is cut in half by the bound).
#[test]
fn a_long_simulation_saves_every_job_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let (_, err) = saved(
        &store,
        &[
            "sim",
            "builtin:avionics",
            "-s",
            "fp:rm",
            "-d",
            "1000s",
            "--save",
        ],
    );
    let id = saved_id(&err, &store);
    let exported = json_of(&[
        "results",
        "export",
        &id.to_string(),
        "--store",
        store.to_str().unwrap(),
    ]);
    let jobs = exported["jobs"].as_array().unwrap();
    let run = results(&store, &["show", &id.to_string()]);
    // Every job of the run (218,950: under the 1,000,000 bound), the
    // records the summary was folded from.
    assert_eq!(
        Some(jobs.len() as u64),
        run["document"]["released"].as_u64()
    );
    assert!(jobs
        .iter()
        .all(|j| j["finish_ns"].as_u64() <= j["deadline_ns"].as_u64() && j["finish_ns"].is_u64()));
    let mut next: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for j in jobs {
        let n = next.entry(j["task"].as_str().unwrap()).or_insert(0);
        assert_eq!(j["job"].as_u64(), Some(*n), "{j}");
        *n += 1;
    }
    assert_eq!(next.len(), 15, "every avionics task has rows");
}

/// Two processes saving into one database at once (WAL, busy timeout):
/// every run lands, with distinct ids; the command line is stored quoted
/// where a shell needs it.
#[test]
fn two_processes_save_into_one_store_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("my results.sqlite");
    let children: Vec<std::process::Child> = (0..2)
        .map(|_| {
            std::process::Command::new(env!("CARGO_BIN_EXE_rtlab"))
                .args([
                    "sim",
                    "builtin:lf-scenario-4",
                    "-s",
                    "edf",
                    "-d",
                    "10s",
                    "--store",
                ])
                .arg(&store)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let list = results(&store, &["list"]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_ne!(list[0]["id"], list[1]["id"]);
    for r in list {
        assert_eq!(r["jobs"], 600, "10 s of lf-scenario-4: 400 + 200 jobs");
        let command = r["command"].as_str().unwrap();
        assert!(
            command.ends_with(&format!("--store '{}'", store.display())),
            "{command}"
        );
    }
}

/// Eight `rtlab sim --save` processes started together on a database that
/// does not exist yet all store their run (README: writers wait). The
/// first opens used to race on the switch to WAL mode and fail about one
/// time in twenty with `database is locked`; three rounds of eight here,
/// the store's own test repeats the race 40 times on threads.
#[test]
fn eight_concurrent_first_saves_into_a_new_store_are_all_stored() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..3 {
        let store = dir.path().join(format!("new {round}.sqlite"));
        let children: Vec<std::process::Child> = (0..8)
            .map(|_| {
                std::process::Command::new(env!("CARGO_BIN_EXE_rtlab"))
                    .args(["sim", "builtin:lf-scenario-4", "-s", "edf", "-d", "1s"])
                    .arg("--store")
                    .arg(&store)
                    .env_remove("RTLAB_STORE")
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let list = results(&store, &["list"]);
        let mut ids: Vec<i64> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, (1..=8).collect::<Vec<i64>>(), "round {round}");
        assert!(list.as_array().unwrap().iter().all(|r| r["jobs"] == 60));
    }
}

/// A store that cannot be written when the run ends (here its `jobs`
/// table was dropped by someone else mid-run) loses nothing: the result is
/// printed in full, the error names the database and why, the exit is 1.
#[test]
fn a_store_that_fails_at_the_end_still_prints_the_result_and_exits_1() {
    let _one = serial(); // real-thread runs one at a time (they share CPU 1)
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_rtlab"))
        .args([
            "run",
            "builtin:lf-scenario-2",
            "--policy",
            "other",
            "-d",
            "1500ms",
            "--no-mlock",
            "--json",
            "--store",
        ])
        .arg(&store)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The store is created before the run starts; break it during the run.
    let started = std::time::Instant::now();
    while !store.exists() && started.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    conn.execute_batch("DROP TABLE jobs").unwrap();
    drop(conn);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("the full JSON report");
    assert!(released(&doc) > 0);
    assert!(
        stderr.contains(&store.display().to_string()) && stderr.contains("jobs"),
        "{stderr}"
    );
    assert!(!stderr.contains("saved as run"), "{stderr}");
}

/// The issue's acceptance: `sim`, `latency`, `run` and `sweep` with
/// `--save` land in `rtlab results list` with host metadata, and
/// `rtlab report --last 4` shows all four with their plots; a report by id
/// shows that run alone.
#[test]
fn report_last_4_shows_the_sim_latency_run_and_sweep_just_saved() {
    let _one = serial(); // real-thread runs one at a time (they share CPU 1)
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let s = |args: &[&str]| saved(&store, args);
    s(&[
        "sim",
        "builtin:lf-scenario-4",
        "-s",
        "edf",
        "-d",
        "1s",
        "--save",
    ]);
    s(&[
        "latency",
        "--policy",
        "other",
        "--threads",
        "1",
        "--interval",
        "1ms",
        "--loops",
        "100",
        "--save",
    ]);
    s(&[
        "run",
        "builtin:lf-scenario-2",
        "--policy",
        "other",
        "-d",
        "300ms",
        "--no-mlock",
        "--save",
    ]);
    s(&[
        "sweep", "--tasks", "4", "--sets", "20", "--seed", "1", "--save",
    ]);
    let list = results(&store, &["list"]);
    let kinds: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["sim", "latency", "run", "sweep"]);
    for id in 1..=4 {
        let run = results(&store, &["show", &id.to_string()]);
        assert!(
            run["host"]["kernel_release"].is_string(),
            "run {id} has no host metadata: {}",
            run["host"]
        );
    }
    let out = dir.path().join("last4.html");
    rtlab()
        .args(["report", "--last", "4", "--store"])
        .arg(&store)
        .arg("--out")
        .arg(&out)
        .env_remove("RTLAB_STORE")
        .assert()
        .success()
        .stdout(predicates::str::starts_with("report: 4 runs ("));
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(html.matches("<section class=\"run\"").count(), 4);
    for title in [
        "Gantt chart",
        "Latency histogram",
        "Response times",
        "Schedulability ratio",
    ] {
        assert!(html.contains(title), "no {title} in the report");
    }
    // The real run's Gantt chart comes from its stored job rows.
    assert!(html.contains("lf-scenario-2"));
    let one = dir.path().join("one.html");
    rtlab()
        .args(["report", "4", "--store"])
        .arg(&store)
        .arg("--out")
        .arg(&one)
        .env_remove("RTLAB_STORE")
        .assert()
        .success()
        .stdout(predicates::str::starts_with("report: 1 run ("));
    let html = std::fs::read_to_string(&one).unwrap();
    assert!(html.contains("Schedulability ratio") && !html.contains("Gantt chart"));
    rtlab()
        .args(["report", "--store"])
        .arg(&store)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--last N"));
    rtlab()
        .args(["report", "9", "--store"])
        .arg(&store)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no run 9"));
}
