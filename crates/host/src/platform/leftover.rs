//! What rtlab processes left changed: state files, stray cpusets, and
//! settings that look changed with no record to explain them.

use serde::Serialize;

use super::sources::read;
use super::{Item, Level};
use crate::cpuset::{stray_cpusets, CPUSET_ROOT};
use crate::kernel_state::{pid_exists, Change, StateDir};
use crate::policy::RT_RUNTIME;

/// One process's record.
#[derive(Debug, Clone, Serialize)]
pub struct LeftoverRecord {
    /// The state file.
    pub file: String,
    /// The process.
    pub pid: u32,
    /// Its start time (`/proc/PID/stat` field 22).
    pub start_time: u64,
    /// Its command line.
    pub command: String,
    /// Still running: its changes are its own, and are never restored by others.
    pub alive: bool,
    /// The changes in force, oldest first.
    pub changes: Vec<Change>,
}

/// A `rtlab-edf-PID` cpuset that no state file describes.
#[derive(Debug, Clone, Serialize)]
pub struct StrayCpuset {
    /// Its directory.
    pub path: String,
    /// The pid in its name.
    pub pid: u32,
    /// Whether a process with that pid runs (then it is left alone).
    pub pid_running: bool,
}

/// Everything rtlab left changed.
#[derive(Debug, Clone, Serialize)]
pub struct Leftover {
    /// The state directory.
    pub dir: String,
    /// Its records.
    pub records: Vec<LeftoverRecord>,
    /// State files that cannot be parsed (`file: reason`), never acted on.
    pub unreadable: Vec<String>,
    /// Cpusets without a record.
    pub stray_cpusets: Vec<StrayCpuset>,
    /// Settings that look changed by rtlab with no record to explain them.
    pub unexplained: Vec<String>,
}

pub(crate) fn leftover_item(dir: &StateDir) -> Item<Leftover> {
    let files = match dir.read_all() {
        Ok(f) => f,
        Err(e) => return Item::unreadable(format!("{}: {e}", dir.path().display())),
    };
    let mut records = Vec::new();
    let mut unreadable = Vec::new();
    for f in files {
        match f.record {
            Ok(r) => records.push(LeftoverRecord {
                file: f.path.display().to_string(),
                pid: r.owner.pid,
                start_time: r.owner.start_time,
                alive: r.owner.is_alive(),
                command: r.owner.command,
                changes: r.changes,
            }),
            Err(e) => unreadable.push(format!("{}: {e}", f.path.display())),
        }
    }
    let stray: Vec<StrayCpuset> = stray_cpusets(dir)
        .unwrap_or_default()
        .into_iter()
        .map(|(path, pid)| StrayCpuset {
            path: path.display().to_string(),
            pid,
            pid_running: pid_exists(pid),
        })
        .collect();
    let recorded = |path: &str| {
        records
            .iter()
            .flat_map(|r| &r.changes)
            .any(|c| c.path().to_str() == Some(path))
    };
    let mut unexplained = Vec::new();
    let balance = format!("{CPUSET_ROOT}/cpuset.sched_load_balance");
    if read(&balance).is_ok_and(|v| v == "0") && !recorded(&balance) {
        unexplained.push(format!(
            "{balance} is 0 with no rtlab record (an older rtlab killed mid-run, or set on purpose): \
             `echo 1 > {balance}` restores load balancing"
        ));
    }
    if read(RT_RUNTIME).is_ok_and(|v| v == "-1") && !recorded(RT_RUNTIME) {
        unexplained.push(format!(
            "{RT_RUNTIME} is -1 with no rtlab record (an older rtlab killed mid-run, or set on purpose): \
             `sysctl kernel.sched_rt_runtime_us=950000` restores RT throttling"
        ));
    }
    let dead = records.iter().filter(|r| !r.alive).count()
        + stray.iter().filter(|s| !s.pid_running).count();
    let live: Vec<String> = records
        .iter()
        .filter(|r| r.alive)
        .map(|r| {
            format!(
                "rtlab pid {} is running and holds {}",
                r.pid,
                changes_text(r)
            )
        })
        .collect();
    let mut parts = Vec::new();
    for r in records.iter().filter(|r| !r.alive) {
        parts.push(format!(
            "rtlab pid {} ended and left {}",
            r.pid,
            changes_text(r)
        ));
    }
    for s in &stray {
        parts.push(format!(
            "{} with no record (pid {} {})",
            s.path,
            s.pid,
            if s.pid_running {
                "runs: left alone"
            } else {
                "is gone"
            }
        ));
    }
    parts.extend(live.iter().cloned());
    parts.extend(unexplained.iter().cloned());
    parts.extend(
        unreadable
            .iter()
            .map(|u| format!("unreadable state file {u}")),
    );
    let (level, advice) = if dead > 0 {
        (
            Level::Warn,
            Some(
                "`rtlab doctor --restore` puts the originals back (so does the next run, compare, latency or lag-study)"
                    .to_string(),
            ),
        )
    } else if !unexplained.is_empty() || !unreadable.is_empty() {
        (Level::Warn, None)
    } else if !live.is_empty() {
        (
            Level::Note,
            Some("a run is in progress; it restores its settings when it ends, nothing else touches them".into()),
        )
    } else {
        (Level::Ok, None)
    };
    let summary = if parts.is_empty() {
        format!("none ({} holds no record)", dir.path().display())
    } else {
        parts.join("; ")
    };
    Item {
        level,
        summary,
        advice,
        value: Some(Leftover {
            dir: dir.path().display().to_string(),
            records,
            unreadable,
            stray_cpusets: stray,
            unexplained,
        }),
    }
}

/// A record's changes, e.g. `/proc/sys/kernel/sched_rt_runtime_us 950000 -> -1, created ...`.
fn changes_text(r: &LeftoverRecord) -> String {
    r.changes
        .iter()
        .map(Change::describe)
        .collect::<Vec<_>>()
        .join(", ")
}
