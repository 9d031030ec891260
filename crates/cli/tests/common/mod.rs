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
    let out = rtlab()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("valid JSON on stdout")
}

/// True when the tests run as root (real-time policies need it here).
pub fn is_root() -> bool {
    let out = std::process::Command::new("id")
        .arg("-u")
        .output()
        .expect("id runs");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}
