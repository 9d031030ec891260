//! Helpers shared by the CLI integration tests (each test binary includes
//! this module with `mod common;`): the binary under test, running it
//! (`outcome`, `failure`, `json_of`, `stdout_of`, `run_measured`), files
//! for it (`write`), and what a test asks of the machine (`real_time`,
//! `serial`, from `rtlab_testkit`).
//!
//! A test that runs real-time threads is `#[ignore = "needs root"]` and
//! starts with `let _one = common::real_time();`: it fails, with the reason,
//! when run with `--ignored` by someone who is not root, and otherwise
//! holds the binary's one serial guard (real-time runs share CPU 1).

#![allow(dead_code)] // not every test binary uses every helper

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

pub use rtlab_testkit::{is_root, serial, unavailable};

/// The `rtlab` binary under test.
pub fn rtlab() -> Command {
    Command::cargo_bin("rtlab").expect("the rtlab binary is built")
}

/// Runs `rtlab ARGS`, requires success, and parses standard output as JSON.
pub fn json_of(args: &[&str]) -> Value {
    serde_json::from_str(&stdout_of(args)).expect("valid JSON on stdout")
}

/// Runs `rtlab ARGS`, requires success, and returns standard output.
pub fn stdout_of(args: &[&str]) -> String {
    let out = rtlab()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).expect("UTF-8 on stdout")
}

/// The first line of a test marked `#[ignore = "needs root"]` that runs
/// real-time threads: fails it unless root, then holds the binary's serial
/// guard for the test's length.
#[track_caller]
pub fn real_time() -> std::sync::MutexGuard<'static, ()> {
    rtlab_testkit::require_root();
    serial()
}

/// True when the kernel's tracefs is there to trace a run (the tests that
/// call it run as root); otherwise says so through [`unavailable`].
pub fn can_trace() -> bool {
    let ok = Path::new("/sys/kernel/tracing").exists();
    if !ok {
        unavailable(
            "no tracefs at /sys/kernel/tracing (mount -t tracefs nodev /sys/kernel/tracing)",
        );
    }
    ok
}

/// Runs `rtlab ARGS` without privilege, with its own state directory
/// `state` under the temporary directory: as root, as nobody (uid 65534,
/// through util-linux's `setpriv`); otherwise as the user the tests run as.
/// `None` (said through [`unavailable`]) when root cannot drop to nobody
/// here: no `setpriv`, or nobody may not execute the test binary.
pub fn unprivileged(args: &[&str], state: &str) -> Option<std::process::Output> {
    let rtlab = assert_cmd::cargo::cargo_bin("rtlab");
    let mut command = if is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&rtlab);
        c
    } else {
        std::process::Command::new(&rtlab)
    };
    let out = match command
        .args(args)
        .env("RTLAB_STATE_DIR", std::env::temp_dir().join(state))
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            unavailable(format!("cannot drop root to nobody: setpriv: {e}"));
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if is_root() && stderr.starts_with("setpriv:") && stderr.contains("Permission denied") {
        unavailable(format!(
            "nobody cannot execute the test binary here: {stderr}"
        ));
        return None;
    }
    Some(out)
}

/// Runs `rtlab ARGS` (killed and failed after two minutes) and returns its
/// exit code (-1 for a signal), standard output and standard error.
pub fn outcome(args: &[&str]) -> (i32, String, String) {
    let out = rtlab()
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `rtlab ARGS`, requires it to fail, and returns its exit code and
/// standard error without the final newline.
pub fn failure(args: &[&str]) -> (i32, String) {
    let out = rtlab().args(args).assert().failure().get_output().clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    (out.status.code().unwrap(), stderr.trim_end().to_string())
}

/// Writes `text` to `dir/name` and returns the path as a string.
pub fn write(dir: impl AsRef<Path>, name: &str, text: &str) -> String {
    let path = dir.as_ref().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// What a run of `rtlab` measured from outside.
pub struct Measured {
    /// Exit status.
    pub status: std::process::ExitStatus,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Largest `VmHWM` (peak resident memory) read from /proc/PID/status
    /// while it ran, in bytes; sampled every 10 ms until it exited.
    pub peak_rss_bytes: u64,
}

/// Runs `rtlab ARGS`; with `interrupt_after`, sends it SIGINT (`kill -INT`)
/// that long after the start, as Ctrl-C would.
pub fn run_measured(args: &[&str], interrupt_after: Option<Duration>) -> Measured {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rtlab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rtlab starts");
    let pid = child.id().to_string();
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            pipe.read_to_string(&mut text).unwrap();
            text
        })
    };
    let stdout = reader(Box::new(child.stdout.take().unwrap()));
    let stderr = reader(Box::new(child.stderr.take().unwrap()));
    let started = std::time::Instant::now();
    let mut interrupted = false;
    let mut peak_kb = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            peak_kb = peak_kb.max(hwm.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(after) = interrupt_after {
            if !interrupted && started.elapsed() >= after {
                let sent = std::process::Command::new("kill")
                    .args(["-INT", &pid])
                    .status()
                    .expect("kill runs");
                assert!(sent.success());
                interrupted = true;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Measured {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        peak_rss_bytes: peak_kb * 1024,
    }
}
