//! One recorded change to a kernel setting, and how it is undone.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// A change rtlab makes to the kernel, recorded before it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A value written to a file (a sysctl, a cgroup attribute). Undone by
    /// writing `original` back, but only while the file still reads `set`:
    /// a value someone changed since is theirs and is left alone.
    Value {
        /// Identifies the change within its owner's record.
        id: u64,
        /// The file, e.g. `/proc/sys/kernel/sched_rt_runtime_us`.
        path: PathBuf,
        /// What the file read before the change (trimmed).
        original: String,
        /// What rtlab wrote.
        set: String,
    },
    /// A cgroup directory rtlab created. Undone by moving any thread still
    /// in it to the parent cgroup and removing it.
    Cpuset {
        /// Identifies the change within its owner's record.
        id: u64,
        /// The directory, e.g. `/sys/fs/cgroup/cpuset/rtlab-edf-4242`.
        path: PathBuf,
    },
    /// `/dev/cpu_dma_latency` held open with a request. The kernel drops the
    /// request when the file is closed, also when its holder is killed, so
    /// nothing needs undoing; it is recorded so that `rtlab doctor` can say
    /// who holds it.
    DmaLatency {
        /// Identifies the change within its owner's record.
        id: u64,
        /// `/dev/cpu_dma_latency`.
        path: PathBuf,
        /// The latency limit in force before (microseconds), when readable.
        original: Option<i32>,
        /// The limit requested (microseconds).
        requested: i32,
    },
}

/// What restoring a change did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Restored {
    /// The original is back (or the cgroup is gone).
    Done,
    /// Nothing to do: the file already reads the original, or the
    /// directory is already gone.
    AlreadyDone,
    /// The kernel undid it by itself (`/dev/cpu_dma_latency`).
    SelfRestored,
    /// Someone changed the value since: it is theirs, left as it is.
    LeftAlone {
        /// What the file reads now.
        now: String,
    },
    /// Restoring failed; the change stays recorded so a later command
    /// (or `rtlab doctor --restore`) tries again.
    Failed {
        /// Why, with the path.
        why: String,
    },
}

impl Restored {
    /// True unless [`Restored::Failed`]: the record can be dropped.
    pub fn is_settled(&self) -> bool {
        !matches!(self, Restored::Failed { .. })
    }
}

/// How long a write refused with EBUSY is retried. Writing
/// `sched_rt_runtime_us` back is refused while SCHED_DEADLINE bandwidth
/// above the new limit is still allocated; a deadline thread's bandwidth
/// returns at its zero-lag time after it ends, well within this.
const BUSY_PATIENCE: Duration = Duration::from_millis(1500);

impl Change {
    /// The change's id within its owner's record.
    pub fn id(&self) -> u64 {
        match self {
            Change::Value { id, .. }
            | Change::Cpuset { id, .. }
            | Change::DmaLatency { id, .. } => *id,
        }
    }

    /// The file or directory it concerns.
    pub fn path(&self) -> &Path {
        match self {
            Change::Value { path, .. }
            | Change::Cpuset { path, .. }
            | Change::DmaLatency { path, .. } => path,
        }
    }

    /// True when two changes cannot be in force at once: the same path,
    /// except `/dev/cpu_dma_latency`, where the kernel keeps every holder's
    /// request and applies the strictest.
    pub fn conflicts_with(&self, other: &Change) -> bool {
        self.path() == other.path()
            && !matches!(
                (self, other),
                (Change::DmaLatency { .. }, Change::DmaLatency { .. })
            )
    }

    /// True when the kernel undoes the change by itself when its owner
    /// ends (`/dev/cpu_dma_latency`): a dead owner left nothing changed.
    pub fn restores_itself(&self) -> bool {
        matches!(self, Change::DmaLatency { .. })
    }

    /// Undoes the change (see each variant for the rule).
    pub fn restore(&self) -> Restored {
        match self {
            Change::Value {
                path,
                original,
                set,
                ..
            } => restore_value(path, original, set),
            Change::Cpuset { path, .. } => remove_cgroup(path),
            Change::DmaLatency { .. } => Restored::SelfRestored,
        }
    }

    /// What was done, e.g. `/proc/sys/kernel/sched_rt_runtime_us 950000 -> -1`.
    pub fn describe(&self) -> String {
        match self {
            Change::Value {
                path,
                original,
                set,
                ..
            } => format!("{} {original} -> {set}", path.display()),
            Change::Cpuset { path, .. } => format!("created {}", path.display()),
            Change::DmaLatency {
                path,
                original,
                requested,
                ..
            } => format!(
                "{} held at {requested} us (was {})",
                path.display(),
                original.map_or("unknown".into(), |o| o.to_string())
            ),
        }
    }

    /// What undoing it did, e.g. `/proc/sys/kernel/sched_rt_runtime_us -1 -> 950000`.
    pub fn describe_restore(&self, outcome: &Restored) -> String {
        let path = self.path().display();
        match (self, outcome) {
            (Change::Value { original, set, .. }, Restored::Done) => {
                format!("{path} {set} -> {original}")
            }
            (Change::Value { original, .. }, Restored::AlreadyDone) => {
                format!("{path} already {original}")
            }
            (Change::Cpuset { .. }, Restored::Done) => format!("removed {path}"),
            (Change::Cpuset { .. }, Restored::AlreadyDone) => format!("{path} already gone"),
            (Change::DmaLatency { .. }, _) => {
                format!("{path} released by the kernel when its holder ended")
            }
            (Change::Value { set, original, .. }, Restored::LeftAlone { now }) => format!(
                "{path} left at {now} (rtlab had set {set}, the original was {original}: someone changed it since)"
            ),
            (_, Restored::Failed { why }) => format!("NOT restored: {why}"),
            (_, _) => format!("{path}: {outcome:?}"),
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Reads a settings file, trimmed.
pub(crate) fn read_value(path: &Path) -> io::Result<String> {
    fs::read_to_string(path).map(|s| s.trim().to_string())
}

/// Writes `value` to a settings file, retrying EBUSY for [`BUSY_PATIENCE`].
pub(crate) fn write_value(path: &Path, value: &str) -> io::Result<()> {
    let give_up = Instant::now() + BUSY_PATIENCE;
    loop {
        match fs::write(path, value) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < give_up => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

fn restore_value(path: &Path, original: &str, set: &str) -> Restored {
    let now = match read_value(path) {
        Ok(now) => now,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Restored::AlreadyDone,
        Err(e) => {
            return Restored::Failed {
                why: format!("read {}: {e}", path.display()),
            }
        }
    };
    if now == original {
        return Restored::AlreadyDone;
    }
    if now != set {
        return Restored::LeftAlone { now };
    }
    match write_value(path, original) {
        Ok(()) => Restored::Done,
        Err(e) => Restored::Failed {
            why: format!("write `{original}` to {}: {e}", path.display()),
        },
    }
}

/// Moves every thread still in the cgroup at `dir` to its parent, then
/// removes the directory.
fn remove_cgroup(dir: &Path) -> Restored {
    if !dir.exists() {
        return Restored::AlreadyDone;
    }
    if fs::remove_dir(dir).is_ok() {
        return Restored::Done;
    }
    if let (Ok(tasks), Some(parent)) = (fs::read_to_string(dir.join("tasks")), dir.parent()) {
        for tid in tasks.split_whitespace() {
            // A thread that ended meanwhile cannot be moved: ignore it.
            let _ = fs::write(parent.join("tasks"), tid);
        }
    }
    match fs::remove_dir(dir) {
        Ok(()) => Restored::Done,
        Err(e) => Restored::Failed {
            why: format!("remove {}: {e}", dir.display()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(path: &Path, original: &str, set: &str) -> Change {
        Change::Value {
            id: 1,
            path: path.to_path_buf(),
            original: original.into(),
            set: set.into(),
        }
    }

    #[test]
    fn a_value_is_written_back_only_while_it_reads_what_rtlab_set() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("sched_rt_runtime_us");
        let change = value(&file, "950000", "-1");
        fs::write(&file, "-1\n").unwrap();
        assert_eq!(change.restore(), Restored::Done);
        assert_eq!(read_value(&file).unwrap(), "950000");
        assert_eq!(change.restore(), Restored::AlreadyDone);
        fs::write(&file, "500000\n").unwrap();
        assert_eq!(
            change.restore(),
            Restored::LeftAlone {
                now: "500000".into()
            }
        );
        assert_eq!(read_value(&file).unwrap(), "500000");
        fs::remove_file(&file).unwrap();
        assert_eq!(change.restore(), Restored::AlreadyDone);
    }

    #[test]
    fn dma_latency_requests_do_not_conflict_values_on_one_path_do() {
        let dma = |id| Change::DmaLatency {
            id,
            path: "/dev/cpu_dma_latency".into(),
            original: Some(2_000_000_000),
            requested: 0,
        };
        assert!(!dma(1).conflicts_with(&dma(2)));
        let a = value(Path::new("/x"), "1", "0");
        let b = value(Path::new("/x"), "0", "0");
        assert!(a.conflicts_with(&b));
        assert!(!a.conflicts_with(&value(Path::new("/y"), "1", "0")));
        assert_eq!(dma(1).restore(), Restored::SelfRestored);
    }

    #[test]
    fn the_json_form_names_the_kind() {
        let c = value(
            Path::new("/proc/sys/kernel/sched_rt_runtime_us"),
            "950000",
            "-1",
        );
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"value","id":1,"path":"/proc/sys/kernel/sched_rt_runtime_us","original":"950000","set":"-1"}"#
        );
        assert_eq!(serde_json::from_str::<Change>(&text).unwrap(), c);
    }
}
