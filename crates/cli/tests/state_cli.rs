//! Kernel settings are restored however a run ends (issue 10, section 2):
//! SIGKILL leaves a state file that `rtlab doctor` reports and that
//! `rtlab doctor --restore`, or the next run, undoes with one line; SIGINT,
//! SIGTERM, SIGHUP and SIGQUIT restore and print what was measured; a
//! second rtlab is refused while the first holds the settings.
//!
//! The kernel tests need root (`#[ignore = "needs root"]`) and a cgroup-v1
//! cpuset hierarchy (without it they say why, and fail under CI), run one
//! at a time (`common::serial`), and put the machine back as they found it
//! even when they fail (`Machine`'s drop). Run them under the machine-wide
//! lock: `flock /tmp/rtlab-realtime.lock cargo test -p rtlab-cli --test
//! state_cli -- --ignored`.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{json_of, rtlab, serial};
use serde_json::Value;

const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";
const CPUSET_ROOT: &str = "/sys/fs/cgroup/cpuset";
const STATE_DIR: &str = "/run/rtlab";

fn balance_path() -> PathBuf {
    Path::new(CPUSET_ROOT).join("cpuset.sched_load_balance")
}

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn cpuset_of(pid: u32) -> PathBuf {
    Path::new(CPUSET_ROOT).join(format!("rtlab-edf-{pid}"))
}

fn state_files_of(pid: u32) -> Vec<PathBuf> {
    std::fs::read_dir(STATE_DIR)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{pid}-")))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The settings as the test found them, and the runs it started; dropping
/// it kills those runs and puts everything back, so a failing test leaves
/// the machine as it was.
struct Machine {
    runtime: String,
    balance: String,
    runs: Vec<Child>,
    /// Runs started by someone else (under `script`), by pid.
    adopted: Vec<u32>,
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

impl Machine {
    /// The machine, one test at a time, for a test marked
    /// `#[ignore = "needs root"]` (it fails without root); `None` (said
    /// through `common::unavailable`) without a cgroup-v1 cpuset hierarchy.
    fn take() -> Option<Machine> {
        let one = common::real_time();
        if !Path::new(CPUSET_ROOT).join("cpuset.cpus").exists() {
            common::unavailable("needs a cgroup-v1 cpuset hierarchy at /sys/fs/cgroup/cpuset");
            return None;
        }
        Some(Machine {
            runtime: read(RT_RUNTIME),
            balance: read(balance_path()),
            runs: Vec::new(),
            adopted: Vec::new(),
            _one_at_a_time: one,
        })
    }

    /// `rtlab run builtin:lf-scenario-4 --policy edf --no-rt-throttling -d 30s --json`,
    /// returned once its state file exists and RT throttling is off.
    fn start_edf_run(&mut self) -> u32 {
        let child = Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
            .args([
                "run",
                "builtin:lf-scenario-4",
                "--policy",
                "edf",
                "--no-rt-throttling",
                "-d",
                "30s",
                "--json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rtlab starts");
        let pid = child.id();
        self.runs.push(child);
        wait_for(
            Duration::from_secs(20),
            "the run's state file and -1",
            || {
                !state_files_of(pid).is_empty()
                    && read(RT_RUNTIME) == "-1"
                    && cpuset_of(pid).exists()
            },
        );
        pid
    }

    fn run_of(&mut self, pid: u32) -> &mut Child {
        self.runs
            .iter_mut()
            .find(|c| c.id() == pid)
            .expect("a run this test started")
    }

    /// SIGKILL, and reap it (an unreaped child is a zombie, which counts as dead too).
    fn kill_hard(&mut self, pid: u32) {
        let child = self.run_of(pid);
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// Sends `signal` (e.g. `INT`) and waits for the run to end: its exit
    /// status, standard output and standard error.
    fn stop(&mut self, pid: u32, signal: &str) -> (std::process::ExitStatus, String, String) {
        send(pid, signal);
        let child = self.run_of(pid);
        let give_up = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < give_up,
                "the run did not end after SIG{signal}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        let mut err = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (status, out, err)
    }

    /// Everything is as the test found it, and `pid` left nothing behind.
    fn assert_restored(&self, pid: u32) {
        assert_eq!(
            read(RT_RUNTIME),
            self.runtime,
            "sched_rt_runtime_us restored"
        );
        assert_eq!(
            read(balance_path()),
            self.balance,
            "root sched_load_balance restored"
        );
        assert!(
            !cpuset_of(pid).exists(),
            "the cpuset of pid {pid} is removed"
        );
        assert!(
            state_files_of(pid).is_empty(),
            "the state file of pid {pid} is removed"
        );
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let mut pids = self.adopted.clone();
        for child in &mut self.runs {
            let _ = child.kill();
            let _ = child.wait();
            pids.push(child.id());
        }
        for &pid in &self.adopted {
            let _ = Command::new("kill")
                .args(["-s", "KILL", &pid.to_string()])
                .status();
        }
        for pid in pids {
            let dir = cpuset_of(pid);
            if let Ok(tasks) = std::fs::read_to_string(dir.join("tasks")) {
                for tid in tasks.split_whitespace() {
                    let _ = std::fs::write(Path::new(CPUSET_ROOT).join("tasks"), tid);
                }
            }
            let _ = std::fs::remove_dir(&dir);
            for f in state_files_of(pid) {
                let _ = std::fs::remove_file(f);
            }
        }
        let _ = std::fs::write(balance_path(), &self.balance);
        let _ = std::fs::write(RT_RUNTIME, &self.runtime);
    }
}

fn send(pid: u32, signal: &str) {
    let ok = Command::new("kill")
        .args(["-s", signal, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -s {signal} {pid}");
}

fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let give_up = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < give_up, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `rtlab run builtin:lf-scenario-4 --policy edf --no-rt-throttling -d 300ms --json`.
fn short_edf_run() -> assert_cmd::Command {
    let mut cmd = rtlab();
    cmd.args([
        "run",
        "builtin:lf-scenario-4",
        "--policy",
        "edf",
        "--no-rt-throttling",
        "-d",
        "300ms",
        "--json",
    ]);
    cmd
}

/// The SIGKILL leak is there: -1, load balancing off, the cpuset, the record.
fn assert_leaked(pid: u32) {
    assert_eq!(read(RT_RUNTIME), "-1", "SIGKILL leaves RT throttling off");
    assert_eq!(read(balance_path()), "0", "and root load balancing off");
    assert!(cpuset_of(pid).exists(), "and the cpuset");
    assert_eq!(
        state_files_of(pid).len(),
        1,
        "and a state file that says so"
    );
}

#[test]
#[ignore = "needs root"]
fn sigkill_leaves_state_that_doctor_reports_and_restore_or_the_next_run_undoes() {
    let Some(mut m) = Machine::take() else {
        return;
    };

    // Round 1: rtlab doctor reports it, rtlab doctor --restore undoes it.
    let pid = m.start_edf_run();
    m.kill_hard(pid);
    assert_leaked(pid);
    let doctor = json_of(&["doctor", "--json"]);
    let leftover = &doctor["leftover_state"];
    assert_eq!(leftover["level"], "warn", "{leftover}");
    let record = leftover["value"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pid"] == pid)
        .unwrap_or_else(|| panic!("doctor lists pid {pid}: {leftover}"))
        .clone();
    assert_eq!(record["alive"], false);
    let kinds: Vec<&str> = record["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            RT_RUNTIME.to_string(),
            balance_path().display().to_string(),
            cpuset_of(pid).display().to_string()
        ]
    );
    assert_eq!(record["changes"][0]["original"], m.runtime.as_str());
    let out = rtlab().args(["doctor", "--restore"]).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("rtlab: restored what rtlab pid {pid}")),
        "{stdout}"
    );
    assert!(first.contains(&format!("-1 -> {}", m.runtime)), "{first}");
    m.assert_restored(pid);

    // Round 2: the next edf run restores first and says so in one line.
    let pid = m.start_edf_run();
    m.kill_hard(pid);
    assert_leaked(pid);
    let out = short_edf_run().assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let restored: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("rtlab: restored"))
        .collect();
    assert_eq!(restored.len(), 1, "{stderr}");
    assert!(
        restored[0].starts_with(&format!("rtlab: restored what rtlab pid {pid}")),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    // 300 ms of periods 25 ms and 50 ms.
    assert_eq!(report["released"], 12 + 6, "the run itself went ahead");
    m.assert_restored(pid);
}

#[test]
#[ignore = "needs root"]
fn each_stop_signal_restores_and_prints_what_was_measured() {
    let Some(mut m) = Machine::take() else {
        return;
    };
    for signal in ["INT", "TERM", "HUP", "QUIT"] {
        let pid = m.start_edf_run();
        std::thread::sleep(Duration::from_millis(300));
        let (status, out, err) = m.stop(pid, signal);
        assert!(status.success(), "SIG{signal}: {status:?}: {err}");
        let report: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("SIG{signal}: JSON on stdout ({e}): {out:?} {err}"));
        assert_eq!(report["interrupted"], true, "SIG{signal}");
        assert!(report["released"].as_u64().unwrap() > 0, "SIG{signal}");
        assert!(
            err.contains(&format!("interrupted by SIG{signal}")),
            "SIG{signal}: {err}"
        );
        assert!(!err.contains("panicked"), "SIG{signal}: {err}");
        m.assert_restored(pid);
    }
}

#[test]
#[ignore = "needs root"]
fn a_second_signal_restores_before_exiting_at_once() {
    let Some(mut m) = Machine::take() else {
        return;
    };
    let pid = m.start_edf_run();
    send(pid, "INT");
    let (status, _, err) = m.stop(pid, "TERM");
    // Either the second signal came first (exit 128 + 15, after restoring)
    // or the clean stop finished before it (exit 0): nothing leaks either way.
    match status.code() {
        Some(143) => assert!(
            err.contains("rtlab: second stop signal (SIGTERM): exiting at once after restoring"),
            "{err}"
        ),
        Some(0) => {}
        other => panic!("unexpected exit {other:?}: {err}"),
    }
    m.assert_restored(pid);
}

#[test]
#[ignore = "needs root"]
fn a_second_rtlab_is_refused_while_the_first_holds_the_settings() {
    let Some(mut m) = Machine::take() else {
        return;
    };
    let first = m.start_edf_run();
    // On CPU 0, not the first's (the default, the last CPU): on the same
    // CPU the measurement lock makes the second wait for the first (tested
    // in run_cli), so the settings would never be contended.
    let out = short_edf_run().args(["--cpu", "0"]).assert().failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("rtlab pid {first}")), "{err}");
    assert!(err.contains("still running"), "{err}");
    // The first run keeps its settings and its record.
    assert_eq!(read(RT_RUNTIME), "-1");
    assert_eq!(state_files_of(first).len(), 1);
    assert!(cpuset_of(first).exists());
    let (status, _, err) = m.stop(first, "INT");
    assert!(status.success(), "{err}");
    m.assert_restored(first);
}

#[test]
#[ignore = "needs root"]
fn a_terminal_that_hangs_up_does_not_keep_the_run_from_restoring() {
    let Some(mut m) = Machine::take() else {
        return;
    };
    if Command::new("script").arg("--version").output().is_err() {
        common::unavailable("needs `script` (util-linux) to give the run a terminal that hangs up");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("pid");
    let err_file = tmp.path().join("stderr");
    // `script` gives the run a pseudo-terminal as its controlling terminal
    // and standard output; killing `script` closes the master side, so the
    // kernel hangs the terminal up and sends SIGHUP, as when an SSH session
    // drops. Standard error goes to a file, to catch a panic.
    let inner = format!(
        "echo $$ > {}; exec {} run builtin:lf-scenario-4 --policy edf --no-rt-throttling -d 30s 2>{}",
        pid_file.display(),
        assert_cmd::cargo::cargo_bin("rtlab").display(),
        err_file.display()
    );
    let mut script = Command::new("script")
        .args(["-q", "-c", &inner, "/dev/null"])
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pid = 0;
    wait_for(Duration::from_secs(20), "the run under a terminal", || {
        pid = read(&pid_file).parse().unwrap_or(0);
        pid != 0 && read(RT_RUNTIME) == "-1" && !state_files_of(pid).is_empty()
    });
    m.adopted.push(pid);
    std::thread::sleep(Duration::from_millis(300));
    script.kill().unwrap();
    script.wait().unwrap();
    wait_for(
        Duration::from_secs(20),
        "the run to end after the hang-up",
        || !Path::new(&format!("/proc/{pid}")).exists(),
    );
    let err = read(&err_file);
    assert!(err.contains("interrupted by SIGHUP"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    m.assert_restored(pid);
}

#[test]
fn doctor_json_has_the_documented_keys() {
    // Not while a kernel test has RT throttling off.
    let _one = serial();
    let doc = json_of(&["doctor", "--json"]);
    for key in [
        "kernel",
        "preemption",
        "rt_throttling",
        "fair_server",
        "deadline_admission",
        "isolation",
        "cpu_frequency",
        "idle_states",
        "smt",
        "virtualization",
        "clocksource",
        "privileges",
        "leftover_state",
    ] {
        let item = &doc[key];
        let level = item["level"]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {item}"));
        assert!(
            ["ok", "note", "warn", "unknown"].contains(&level),
            "{key}: {level}"
        );
        assert!(
            item["summary"].as_str().is_some_and(|s| !s.is_empty()),
            "{key}"
        );
        assert!(
            item.get("advice").is_some() && item.get("value").is_some(),
            "{key}"
        );
    }
    assert!(doc["restored"].as_array().unwrap().is_empty());
    let release = read("/proc/sys/kernel/osrelease");
    assert_eq!(doc["kernel"]["value"]["release"], release.as_str());
    let model = &doc["preemption"]["value"]["model"];
    assert!(
        ["none", "voluntary", "full", "lazy", "dynamic", "rt"].contains(&model.as_str().unwrap()),
        "{model}"
    );
    let runtime: i64 = read(RT_RUNTIME).parse().unwrap();
    assert_eq!(doc["rt_throttling"]["value"]["runtime_us"], runtime);
}

#[test]
fn doctor_prints_one_line_per_item_with_its_level() {
    let out = rtlab().arg("doctor").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for key in ["kernel", "preemption", "rt_throttling", "leftover_state"] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("] {key} ")))
            .unwrap_or_else(|| panic!("no `{key}` line in:\n{text}"));
        assert!(line.starts_with('['), "{line}");
    }
}

#[test]
fn stop_signals_end_a_command_cleanly_without_root() {
    for signal in ["INT", "TERM", "HUP", "QUIT"] {
        let child = Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
            .args(["load", "cpu:1", "--duration", "30s", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Once its load threads run the command handles stops (a signal
        // before that, while the process starts, has its default action:
        // 300 ms was not always enough on a loaded machine).
        let tasks = format!("/proc/{}/task", child.id());
        wait_for(Duration::from_secs(20), "the load threads", || {
            std::fs::read_dir(&tasks)
                .into_iter()
                .flatten()
                .flatten()
                .any(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.starts_with("rtlab-load"))
                })
        });
        send(child.id(), signal);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "SIG{signal}: {out:?}");
        let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
        let elapsed = stats["elapsed_ns"].as_u64().unwrap();
        assert!(
            elapsed < 20_000_000_000,
            "SIG{signal} ended it early: {elapsed} ns"
        );
    }
}
