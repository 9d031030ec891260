//! `--isolate` and the disturbance account from outside (issue 35): an
//! isolated run carries its shield in its account and puts every thread
//! and interrupt back when it ends, and after a SIGKILL the next command
//! (`rtlab doctor --restore`) does; `--isolate` that cannot be honoured and
//! `--repeat 0` are refused with one line, nothing changed.
//!
//! The shield tests are `#[ignore = "needs root"]`; they also need a
//! cgroup-v1 cpuset hierarchy and two CPUs (a skip said on stderr, a
//! failure under `CI`) and run one at a time.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::rtlab;
use serde_json::Value;

const CPUSET_ROOT: &str = "/sys/fs/cgroup/cpuset";

/// What a shield changes: every interrupt's affinity, the default mask,
/// the shield cpusets, and the cpuset of this test process.
fn kernel_state() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    if let Ok(irqs) = std::fs::read_dir("/proc/irq") {
        for e in irqs.flatten() {
            let p = e.path().join("smp_affinity_list");
            if p.exists() {
                out.push((p.display().to_string(), read(&p)));
            }
        }
    }
    out.push((
        "default_smp_affinity".into(),
        read(Path::new("/proc/irq/default_smp_affinity")),
    ));
    let mut sets: Vec<String> = std::fs::read_dir(CPUSET_ROOT)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                // Other runs on this machine make and remove their own
                // cpusets meanwhile: only shields are a shield's doing.
                .filter(|name| name.starts_with("rtlab-shield-"))
                .collect()
        })
        .unwrap_or_default();
    sets.sort();
    out.push(("cpusets".into(), sets.join(",")));
    out.push(("own cpuset".into(), read(Path::new("/proc/self/cpuset"))));
    out.sort();
    out
}

/// Why this machine cannot shield a CPU (the tests that ask run as root).
fn cannot_shield() -> Option<&'static str> {
    if !Path::new(CPUSET_ROOT).join("cpuset.cpus").exists() {
        Some("needs a cgroup-v1 cpuset hierarchy")
    } else if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        Some("needs two CPUs")
    } else {
        None
    }
}

fn run_args(duration: &str) -> Vec<String> {
    [
        "run",
        "builtin:lf-scenario-4",
        "--policy",
        "dm",
        "--cpu",
        "1",
        "-d",
        duration,
        "--isolate",
        "--json",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
#[ignore = "needs root"]
fn an_isolated_run_moves_the_rest_off_its_cpu_and_puts_it_back() {
    let _one = common::real_time();
    if let Some(why) = cannot_shield() {
        common::unavailable(why);
        return;
    }
    let before = kernel_state();
    let out = rtlab().args(run_args("300ms")).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let account = &doc["disturbance"];
    let shield = &account["shield"];
    assert_eq!(shield["cpus"], serde_json::json!([1]), "{account}");
    assert!(shield["threads_moved"].as_u64().unwrap() > 0, "{account}");
    assert!(
        matches!(
            account["verdict"]["kind"].as_str(),
            Some("clean" | "disturbed")
        ),
        "{account}"
    );
    assert!(
        account["window_ns"].as_u64().unwrap() >= 300_000_000,
        "{account}"
    );
    assert_eq!(account["cpus"][0]["cpu"], 1);
    assert!(
        account["cpus"][0]["own_ns"].as_u64().unwrap() > 0,
        "{account}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shielded CPU 1: moved "), "{err}");
    assert_eq!(kernel_state(), before, "the machine is as before the run");
}

#[test]
#[ignore = "needs root"]
fn a_killed_isolated_run_is_put_back_by_the_next_command() {
    let _one = common::real_time();
    if let Some(why) = cannot_shield() {
        common::unavailable(why);
        return;
    }
    let before = kernel_state();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(run_args("20s"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let shield = Path::new(CPUSET_ROOT).join(format!("rtlab-shield-{}", child.id()));
    let give_up = Instant::now() + Duration::from_secs(60);
    while !shield.exists() {
        assert!(Instant::now() < give_up, "no shield appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The shield is up: let it move what it moves, then kill it.
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(shield.exists(), "SIGKILL leaves the shield up");
    assert_ne!(kernel_state(), before, "and the machine changed");
    // Its exit status also reports other runs' leftovers, which are not
    // this test's: what matters is what it did to this run's.
    let out = rtlab().args(["doctor", "--restore"]).output().unwrap();
    // Any rtlab command restores what dead runs left first: another one on
    // this machine may have done it before `doctor --restore`.
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("removed {}", shield.display())) || !shield.exists(),
        "{said}"
    );
    assert!(!shield.exists(), "the shield is gone");
    assert!(
        said.contains(&format!("removed {}", shield.display())),
        "{said}"
    );
    assert_eq!(kernel_state(), before, "the machine is as before the run");
}

#[test]
#[ignore = "needs root"]
fn isolating_every_cpu_is_refused_with_one_line_and_nothing_changed() {
    // Without root the refusal is another.
    let _one = common::real_time();
    let before = kernel_state();
    let out = rtlab()
        .args([
            "run",
            "builtin:lf-scenario-4",
            "--policy",
            "dm",
            "--no-pin",
            "-d",
            "300ms",
            "--isolate",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--isolate: cannot shield CPU"), "{err}");
    assert!(err.contains("every CPU of this machine"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(kernel_state(), before);
}

#[test]
#[ignore = "needs root"]
fn isolating_without_root_is_refused_with_one_line() {
    // Root, to become nobody.
    rtlab_testkit::require_root();
    if !Path::new("/usr/bin/setpriv").exists() {
        common::unavailable("needs /usr/bin/setpriv");
        return;
    }
    let out = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("rtlab"))
        .args(["latency", "-t", "1", "-a", "1", "-D", "1s", "--isolate"])
        .env(
            "RTLAB_STATE_DIR",
            std::env::temp_dir().join("rtlab-iso-nobody"),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--isolate: cannot shield CPU 1: moving other users' threads"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn repeat_zero_is_a_usage_error() {
    for command in ["run", "compare"] {
        let out = rtlab()
            .args([
                command,
                "builtin:lf-scenario-4",
                "--policy",
                "dm",
                "--repeat",
                "0",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--repeat 0: give at least 1"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
