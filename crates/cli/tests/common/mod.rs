//! Helpers shared by the CLI integration tests (each test binary includes
//! this module with `mod common;`).

#![allow(dead_code)] // not every test binary uses every helper

use assert_cmd::Command;
use serde_json::Value;

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

/// True when the tests run as root (real-time policies need it here).
pub fn is_root() -> bool {
    let out = std::process::Command::new("id")
        .arg("-u")
        .output()
        .expect("id runs");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
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
pub fn run_measured(args: &[&str], interrupt_after: Option<std::time::Duration>) -> Measured {
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
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Measured {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        peak_rss_bytes: peak_kb * 1024,
    }
}
