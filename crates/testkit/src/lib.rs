//! What rtlab's tests ask of the machine, said once, so that a test never
//! passes without having run.
//!
//! Two kinds of need, two answers:
//!
//! - **Root** (real-time policies, cpusets, tracefs, dropping privilege):
//!   the test is marked `#[ignore = "needs root"]`, so `cargo test` lists
//!   it as *ignored* wherever it runs, and its first line is
//!   [`require_root`], so run with `--ignored` by someone who is not root it
//!   fails with the reason instead of passing. As root,
//!   `cargo test -- --ignored` runs them (`.ci/run` does, after the README's
//!   `cargo test --workspace`).
//! - **A tool or facility the machine may lack** (rt-app, cyclictest,
//!   `script`, `setpriv`, tracefs, a cgroup-v1 cpuset hierarchy, SCHED_DEADLINE
//!   admission room, a browser, SimSo): the test calls [`unavailable`] with
//!   the reason and returns. On a developer's machine that prints
//!   `skipped: REASON` and the test passes; where [`must_run`] holds (`CI`
//!   set, as `.ci/run` sets it, which installs every such tool) it fails.
//!
//! And [`serial`]: the one guard a test binary's tests take when they must
//! not overlap (real-time runs on one CPU, one cpuset hierarchy).

#![forbid(unsafe_code)]

use std::fmt::Display;
use std::sync::{Mutex, MutexGuard};

/// True when the process runs with effective user id 0 (the `Uid:` line of
/// `/proc/self/status`: real, effective, saved, filesystem).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1))
                .map(|euid| euid == "0")
        })
        .unwrap_or(false)
}

/// The first line of a test marked `#[ignore = "needs root"]`: fails it,
/// with the reason, when it was asked to run (`--ignored`) without root.
#[track_caller]
pub fn require_root() {
    assert!(
        is_root(),
        "this test needs root (it is #[ignore = \"needs root\"]; run it as root with \
         `cargo test -- --ignored`)"
    );
}

/// True where every test must run: `CI` set (and not `0` or `false`), as
/// `.ci/run` sets it. There a missing tool is a failure, not a skip.
pub fn must_run() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Says that this test cannot run here and why: prints `skipped: WHY` (the
/// caller then returns), or fails the test where [`must_run`] holds.
#[track_caller]
pub fn unavailable(why: impl Display) {
    assert!(
        !must_run(),
        "{why} (CI is set, so this test must run: install what it needs)"
    );
    eprintln!("skipped: {why}");
}

/// The test binary's one serial guard: tests that must not overlap (one CPU
/// measured, one cpuset hierarchy, one store) hold it for their length. A
/// test that panicked while holding it does not poison it for the others.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_read_from_the_effective_uid() {
        let out = std::process::Command::new("id")
            .arg("-u")
            .output()
            .expect("id runs");
        let euid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(is_root(), euid == "0");
    }

    #[test]
    fn the_serial_guard_survives_a_panic_while_held() {
        let _ = std::thread::spawn(|| {
            let _one = serial();
            panic!("a failing test");
        })
        .join();
        drop(serial());
    }
}
