//! `rtlab taskset export/import --format rt-app` and `rtlab compare --with
//! rt-app` from the command line: what the user sees, exit statuses, and
//! (as root, with rt-app installed, under the machine-wide lock) a real
//! side-by-side run, `#[ignore = "needs root"]`.

mod common;

use common::rtlab;

#[test]
fn export_then_analyze_and_import_the_workload() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hph.json");
    rtlab()
        .args([
            "taskset",
            "export",
            "builtin:hartstone-ph",
            "--format",
            "rt-app",
        ])
        .args(["--policy", "rm", "-d", "10s", "--out"])
        .arg(&file)
        .assert()
        .success();
    // Read by content wherever a task-set file is.
    let shown = common::json_of(&["taskset", "show", file.to_str().unwrap(), "--json"]);
    assert_eq!(shown["task_count"], 5);
    assert_eq!(shown["tasks"][4]["period_ns"], 31_250_000);
    assert_eq!(shown["tasks"][4]["wcet_ns"], 2_500_000);
    assert_eq!(shown["tasks"][4]["priority"], 14);
    let out = rtlab()
        .args(["taskset", "import", "--format", "rt-app"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let toml = String::from_utf8(out).unwrap();
    assert!(toml.contains("name = \"t5-32hz\"\nperiod = \"31.25ms\"\ndeadline = \"31.25ms\"\nwcet = \"2.5ms\"\npriority = 14\n"), "{toml}");
}

#[test]
fn a_refused_construct_exits_1_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.json");
    std::fs::write(
        &file,
        "{\"tasks\": {\"a\": {\n  \"run\": 1000,\n  \"iorun\": 10,\n  \"timer\": {\"ref\": \"unique\", \"period\": 10000}}}}",
    )
    .unwrap();
    let out = rtlab()
        .args(["analyze"])
        .arg(&file)
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert_eq!(
        err,
        format!(
            "error: {}:3:3: thread `a`: `iorun` is refused: rtlab's task model has no I/O load\n",
            file.display()
        )
    );
    // Not an rt-app workload, with --format rt-app.
    let plain = dir.path().join("p.json");
    std::fs::write(
        &plain,
        "{\"task\": [{\"name\": \"a\", \"period\": \"1ms\", \"wcet\": \"1us\"}]}",
    )
    .unwrap();
    rtlab()
        .args(["taskset", "import", "--format", "rt-app"])
        .arg(&plain)
        .assert()
        .code(1);
}

#[test]
fn export_refuses_a_duration_rt_app_cannot_hold() {
    rtlab()
        .args([
            "taskset",
            "export",
            "builtin:hartstone-ph",
            "--format",
            "rt-app",
            "-d",
            "1500ms",
        ])
        .assert()
        .code(2)
        .stderr("error: --duration 1.5s: rt-app's duration is a whole number of seconds\n");
    rtlab()
        .args([
            "compare",
            "builtin:hartstone-ph",
            "--with",
            "rt-app",
            "--policy",
            "rm",
            "-d",
            "1500ms",
        ])
        .assert()
        .code(2)
        .stderr("error: --duration 1.5s: rt-app runs for whole seconds (e.g. -d 10s)\n");
    rtlab()
        .args([
            "compare",
            "builtin:hartstone-ph",
            "--with",
            "cyclictest",
            "--policy",
            "rm",
        ])
        .assert()
        .code(2);
}

/// On `--cpus 2` each thread may run on both CPUs and the import reads a
/// 2-processor set back; `--cpu` pins only one-processor sets (usage error).
#[test]
fn a_multiprocessor_export_writes_cpus_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hph2.json");
    let file = file.to_str().unwrap();
    rtlab()
        .args([
            "taskset",
            "export",
            "builtin:hartstone-ph",
            "--format",
            "rt-app",
            "--cpus",
            "2",
            "--out",
            file,
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(file).unwrap();
    assert_eq!(
        text.matches("\"cpus\": [\n        0,\n        1\n      ]")
            .count(),
        5,
        "{text}"
    );
    let out = rtlab()
        .args(["taskset", "import", file, "--to", "json"])
        .output()
        .unwrap();
    let set: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(set["processors"], 2);
    rtlab()
        .args([
            "taskset",
            "export",
            "builtin:hartstone-ph",
            "--format",
            "rt-app",
            "--cpus",
            "2",
            "--cpu",
            "1",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--cpu 1 pins a one-processor set; this one has 2 processors",
        ));
}

#[test]
fn compare_without_rt_app_says_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    rtlab()
        .args(["compare", "builtin:hartstone-ph", "--with", "rt-app", "--policy", "rm", "-d", "1s"])
        .env("PATH", empty.path())
        .assert()
        .code(1)
        .stderr("error: rt-app is not installed (on Debian/Ubuntu: `apt-get install rt-app`; or build scheduler-tools/rt-app)\n");
}

/// Both sides have every task and jobs. Run under the machine-wide lock:
/// `flock /tmp/rtlab-realtime.lock cargo test -p rtlab-cli --test rtapp_cli -- --ignored`.
#[test]
#[ignore = "needs root"]
fn compare_with_rt_app_shows_both_runs_of_every_task() {
    let _one = common::real_time();
    let has_rtapp = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("rt-app").is_file());
    if !has_rtapp {
        common::unavailable("rt-app is not installed (apt-get install rt-app)");
        return;
    }
    let doc = common::json_of(&[
        "compare",
        "builtin:lf-scenario-1",
        "--with",
        "rt-app",
        "--policy",
        "dm",
        "-d",
        "1s",
        "--json",
    ]);
    let tasks = doc["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    for (i, t) in tasks.iter().enumerate() {
        assert_eq!(t["name"], doc["rtlab"]["tasks"][i]["name"]);
        assert_eq!(t["name"], doc["rtapp"]["tasks"][i]["name"]);
        assert!(t["jobs"][0].as_u64().unwrap() > 0, "{t}");
        assert!(t["jobs"][1].as_u64().unwrap() > 0, "{t}");
        assert!(t["mean_response_ns"][1].as_u64().unwrap() > 0, "{t}");
    }
    assert_eq!(doc["policy"], "dm");
    assert_eq!(doc["rtapp"]["exit_status"], 0);
}
