//! Tests of the ledger: recording, refusal, recovery, and a real SIGKILL.

use super::*;
use crate::kernel_state::recover_dead_owners;
use std::fs;
use std::time::{Duration, Instant};

/// A temporary state directory and a fake setting file reading `950000`.
struct Bench {
    _tmp: tempfile::TempDir,
    dir: StateDir,
    setting: PathBuf,
}

fn bench() -> Bench {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::new(tmp.path().join("state"));
    let setting = tmp.path().join("sched_rt_runtime_us");
    fs::write(&setting, "950000\n").unwrap();
    Bench {
        _tmp: tmp,
        dir,
        setting,
    }
}

fn me() -> Owner {
    Owner::current().unwrap()
}

fn value(b: &Bench) -> String {
    read_value(&b.setting).unwrap()
}

/// Writes a record for `owner` as if it had set the setting to -1.
fn plant(b: &Bench, owner: Owner) {
    let _lock = b.dir.lock(true).unwrap();
    b.dir
        .write(&StateRecord {
            format: FORMAT,
            owner,
            changes: vec![Change::Value {
                id: 1,
                path: b.setting.clone(),
                original: "950000".into(),
                set: "-1".into(),
            }],
        })
        .unwrap();
    fs::write(&b.setting, "-1\n").unwrap();
}

fn records(b: &Bench) -> Vec<StateRecord> {
    b.dir
        .read_all()
        .unwrap()
        .into_iter()
        .map(|f| f.record.unwrap())
        .collect()
}

#[test]
fn the_original_is_recorded_before_the_change_and_restored_on_drop() {
    let b = bench();
    let ledger = Ledger::new(b.dir.clone(), me());
    let guard = ledger.set_value(&b.setting, "-1").unwrap();
    assert_eq!(value(&b), "-1");
    let recorded = records(&b);
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].owner, me());
    assert_eq!(
        recorded[0].changes,
        [Change::Value {
            id: 1,
            path: b.setting.clone(),
            original: "950000".into(),
            set: "-1".into()
        }]
    );
    drop(guard);
    assert_eq!(value(&b), "950000");
    assert!(
        records(&b).is_empty(),
        "the state file goes with the last change"
    );
    assert!(ledger.take_notices().is_empty());
}

#[test]
fn a_live_owners_setting_is_refused_naming_its_pid_and_never_recovered() {
    let b = bench();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let stat = fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
    let (_, start_time) = super::super::owner::parse_stat(&stat).unwrap();
    let other = Owner {
        pid: child.id(),
        start_time,
        command: "rtlab run x --no-rt-throttling".into(),
    };
    plant(&b, other.clone());
    let ledger = Ledger::new(b.dir.clone(), me());
    let err = ledger.set_value(&b.setting, "-1").unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, StateError::HeldByLive { pid, .. } if pid == child.id()),
        "{text}"
    );
    assert!(
        text.contains(&format!("rtlab pid {}", child.id())),
        "{text}"
    );
    assert!(!text.contains('\n'));
    assert_eq!(value(&b), "-1", "the live owner's value is untouched");
    assert!(recover_dead_owners(&b.dir).unwrap().is_empty());
    assert_eq!(records(&b).len(), 1, "its record too");
    assert!(ledger.changes().is_empty());

    child.kill().unwrap();
    child.wait().unwrap();
    let recovered = recover_dead_owners(&b.dir).unwrap();
    assert_eq!(recovered.len(), 1);
    assert!(recovered[0].complete());
    assert_eq!(value(&b), "950000");
    assert!(records(&b).is_empty());
}

#[test]
fn a_dead_owners_change_is_restored_first_not_taken_for_the_original() {
    let b = bench();
    // Our pid with another start time: a process that had our pid before.
    let dead = Owner {
        start_time: me().start_time + 1,
        ..me()
    };
    plant(&b, dead);
    assert_eq!(value(&b), "-1");
    let ledger = Ledger::new(b.dir.clone(), me());
    let guard = ledger.set_value(&b.setting, "-1").unwrap();
    let notices = ledger.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with(&format!("rtlab: restored what rtlab pid {}", me().pid)),
        "{}",
        notices[0]
    );
    assert!(notices[0].contains("-1 -> 950000"), "{}", notices[0]);
    let recorded = records(&b);
    assert_eq!(recorded.len(), 1, "the dead owner's file is gone");
    assert!(matches!(&recorded[0].changes[0],
        Change::Value { original, .. } if original == "950000"));
    drop(guard);
    assert_eq!(value(&b), "950000");
}

#[test]
fn a_value_changed_by_someone_else_meanwhile_is_left_and_said() {
    let b = bench();
    let ledger = Ledger::new(b.dir.clone(), me());
    let guard = ledger.set_value(&b.setting, "-1").unwrap();
    fs::write(&b.setting, "800000").unwrap();
    let (_, outcome) = guard.restore().unwrap();
    assert_eq!(
        outcome,
        Restored::LeftAlone {
            now: "800000".into()
        }
    );
    assert_eq!(value(&b), "800000");
    let notices = ledger.take_notices();
    assert!(
        notices[0].contains("someone changed it since"),
        "{notices:?}"
    );
    assert!(records(&b).is_empty());
}

#[test]
fn restore_all_undoes_newest_first_and_leaves_the_guards_nothing() {
    let b = bench();
    let second = b.setting.with_file_name("sched_load_balance");
    fs::write(&second, "1").unwrap();
    let ledger = Ledger::new(b.dir.clone(), me());
    let g1 = ledger.set_value(&b.setting, "-1").unwrap();
    let g2 = ledger.set_value(&second, "0").unwrap();
    let err = ledger.set_value(&second, "0").unwrap_err();
    assert!(err.to_string().contains("changed it already"), "{err}");
    let done = ledger.restore_all();
    let order: Vec<&Path> = done.iter().map(|(c, _)| c.path()).collect();
    assert_eq!(order, [second.as_path(), b.setting.as_path()]);
    assert!(done.iter().all(|(_, r)| *r == Restored::Done));
    assert_eq!(value(&b), "950000");
    assert_eq!(read_value(&second).unwrap(), "1");
    assert!(records(&b).is_empty());
    assert!(g2.restore().is_none(), "already restored");
    drop(g1);
    assert!(ledger.take_notices().is_empty());
}

#[test]
fn a_restore_that_fails_stays_recorded_and_blocks_the_setting() {
    let b = bench();
    // /proc/version cannot be written, even by root.
    let version = PathBuf::from("/proc/version");
    let now = read_value(&version).unwrap();
    let dead = Owner {
        start_time: me().start_time + 2,
        ..me()
    };
    {
        let _lock = b.dir.lock(true).unwrap();
        b.dir
            .write(&StateRecord {
                format: FORMAT,
                owner: dead.clone(),
                changes: vec![Change::Value {
                    id: 7,
                    path: version.clone(),
                    original: "an older kernel".into(),
                    set: now,
                }],
            })
            .unwrap();
    }
    let recovered = recover_dead_owners(&b.dir).unwrap();
    assert_eq!(recovered.len(), 1);
    assert!(!recovered[0].complete());
    assert!(
        recovered[0].line().contains("NOT restored"),
        "{}",
        recovered[0].line()
    );
    assert_eq!(records(&b).len(), 1, "kept for a later try");
    let ledger = Ledger::new(b.dir.clone(), me());
    let err = ledger.set_value(&version, "x").unwrap_err();
    assert!(matches!(err, StateError::LeftChanged { .. }), "{err}");
}

/// Not a test on its own: the child process of
/// `a_killed_owners_setting_is_restored_by_the_next_recovery`, which
/// runs this test binary again with `RTLAB_TEST_CHILD_SETTING` set.
#[test]
fn child_changes_a_setting_then_waits_to_be_killed() {
    let Ok(path) = std::env::var("RTLAB_TEST_CHILD_SETTING") else {
        return;
    };
    let guard = ledger().unwrap().set_value(Path::new(&path), "-1").unwrap();
    std::thread::sleep(Duration::from_secs(60));
    drop(guard);
}

#[test]
fn a_killed_owners_setting_is_restored_by_the_next_recovery() {
    let b = bench();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kernel_state::ledger::tests::child_changes_a_setting_then_waits_to_be_killed",
            "--test-threads=1",
        ])
        .env("RTLAB_TEST_CHILD_SETTING", &b.setting)
        .env(StateDir::ENV, b.dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let give_up = Instant::now() + Duration::from_secs(20);
    while value(&b) != "-1" || records(&b).is_empty() {
        assert!(
            Instant::now() < give_up,
            "the child never changed the setting"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    assert_eq!(value(&b), "-1", "SIGKILL leaves the change in force");
    let recorded = records(&b);
    assert_eq!(recorded[0].owner.pid, child.id());
    assert!(!recorded[0].owner.is_alive());

    let recovered = recover_dead_owners(&b.dir).unwrap();
    assert_eq!(recovered.len(), 1);
    assert_eq!(recovered[0].pid, child.id());
    let line = recovered[0].line();
    assert!(
        line.contains(&format!("rtlab pid {}", child.id())),
        "{line}"
    );
    assert!(!line.contains('\n'));
    assert_eq!(value(&b), "950000");
    assert!(records(&b).is_empty());
}

/// A dead owner that only held `/dev/cpu_dma_latency` left nothing changed
/// (the kernel dropped the request when its descriptor closed): no warning
/// names it; one that left a value changed is named.
#[test]
fn only_dead_owners_that_left_a_setting_changed_are_named() {
    let b = bench();
    let dead = |bump| Owner {
        start_time: me().start_time + bump,
        ..me()
    };
    {
        let _lock = b.dir.lock(true).unwrap();
        b.dir
            .write(&StateRecord {
                format: FORMAT,
                owner: dead(1),
                changes: vec![Change::DmaLatency {
                    id: 1,
                    path: "/dev/cpu_dma_latency".into(),
                    original: Some(2_000_000_000),
                    requested: 0,
                }],
            })
            .unwrap();
    }
    assert!(crate::kernel_state::dead_owners(&b.dir).is_empty());
    plant(
        &b,
        Owner {
            pid: me().pid + 1_000_000,
            ..dead(2)
        },
    );
    let named = crate::kernel_state::dead_owners(&b.dir);
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(named[0].pid, me().pid + 1_000_000);
}
