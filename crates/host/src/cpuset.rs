//! An exclusive cpuset for running SCHED_DEADLINE threads on one CPU.
//!
//! A deadline thread may not have an affinity narrower than its root domain
//! (the kernel refuses with EPERM/EBUSY), so `sched_setaffinity` cannot pin
//! it. The kernel's way (Documentation/scheduler/sched-deadline.rst,
//! section 5) is a partition: an exclusive cpuset holding the CPU, with load
//! balancing turned off at the root so that the cpuset becomes a root domain
//! of its own. [`ExclusiveCpuset`] builds that with cgroup v1 (checked by
//! hand on this machine kind: `../shared/PLATFORM.md`) and undoes it when
//! dropped: the directory is removed (after moving any thread still in it
//! back to the root) and the root's `cpuset.sched_load_balance` restored.
//!
//! Only the task threads join the cpuset (each writes its own thread id to
//! `tasks`); the rest of the process stays where it was.
//!
//! Both changes, the directory and the root's load balancing, go through
//! the [`kernel_state`] ledger: recorded in `/run/rtlab` before they are
//! made, so that a run killed with SIGKILL is undone by the next rtlab
//! command, and refused while another live rtlab holds them.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::HostError;
use crate::kernel_state::{
    self, Change, Recovery, RestoredChange, SettingGuard, StateDir, StateError,
};

/// Where the cgroup-v1 cpuset hierarchy is mounted.
pub const CPUSET_ROOT: &str = "/sys/fs/cgroup/cpuset";

/// The name of rtlab's cpusets, followed by the owner's pid.
pub const CPUSET_PREFIX: &str = "rtlab-edf-";

/// A cgroup-v1 cpuset holding one CPU exclusively; removed on drop.
#[derive(Debug)]
pub struct ExclusiveCpuset {
    cpu: usize,
    dir: PathBuf,
    // Dropped in this order: threads moved out and the directory removed,
    // then the root's load balancing restored (the reverse of creation).
    _cpuset: SettingGuard,
    _root_balance: SettingGuard,
}

impl ExclusiveCpuset {
    /// Turns load balancing off at the root and creates
    /// `/sys/fs/cgroup/cpuset/rtlab-edf-<pid>` with `cpus = cpu`, the root's
    /// first memory node and `cpu_exclusive = 1`. Both are recorded first
    /// (see [`kernel_state`]); what dead rtlab processes left is restored
    /// before, and a live one holding the root's load balancing makes this
    /// fail with its pid.
    pub fn create(cpu: usize) -> Result<ExclusiveCpuset, HostError> {
        let root = PathBuf::from(CPUSET_ROOT);
        let fail = |why: String| HostError::Cpuset { cpu, why };
        if !root.join("cpuset.cpus").exists() {
            return Err(fail(format!(
                "{CPUSET_ROOT} is not a cgroup-v1 cpuset mount"
            )));
        }
        let state_error = |e: StateError| match e {
            StateError::HeldByLive { .. } | StateError::LeftChanged { .. } => HostError::from(e),
            other => fail(other.to_string()),
        };
        let ledger = kernel_state::ledger().map_err(state_error)?;
        let root_balance = ledger
            .set_value(&root.join("cpuset.sched_load_balance"), "0")
            .map_err(state_error)?;
        let dir = root.join(format!("{CPUSET_PREFIX}{}", std::process::id()));
        let cpuset = ledger.create_cgroup(&dir).map_err(state_error)?;
        let set = ExclusiveCpuset {
            cpu,
            dir,
            _cpuset: cpuset,
            _root_balance: root_balance,
        };
        // From here on, Drop undoes whatever was done.
        let mems = read(&root.join("cpuset.mems")).map_err(fail)?;
        let first_mem = first_in_list(&mems).unwrap_or_else(|| "0".into());
        set.write_own("cpuset.cpus", &cpu.to_string())?;
        set.write_own("cpuset.mems", &first_mem)?;
        set.write_own("cpuset.cpu_exclusive", "1")?;
        Ok(set)
    }

    /// The CPU the cpuset holds.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// A handle the task threads use to join the cpuset; the cpuset itself
    /// stays with its owner, who removes it.
    pub fn door(&self) -> CpusetDoor {
        CpusetDoor {
            cpu: self.cpu,
            tasks: self.dir.join("tasks"),
        }
    }

    fn write_own(&self, file: &str, value: &str) -> Result<(), HostError> {
        write(&self.dir.join(file), value).map_err(|why| HostError::Cpuset { cpu: self.cpu, why })
    }
}

/// Lets a thread move itself into an [`ExclusiveCpuset`].
#[derive(Debug, Clone)]
pub struct CpusetDoor {
    cpu: usize,
    tasks: PathBuf,
}

impl CpusetDoor {
    /// The cpuset's `tasks` file: a process that writes its pid there
    /// joins it (how `rtlab compare --with rt-app` confines rt-app).
    pub fn tasks_file(&self) -> &Path {
        &self.tasks
    }

    /// Moves the calling thread into the cpuset (before it becomes a
    /// deadline thread).
    pub fn add_current_thread(&self) -> Result<(), HostError> {
        let tid = crate::policy::current_tid();
        write(&self.tasks, &tid.to_string()).map_err(|why| HostError::Cpuset { cpu: self.cpu, why })
    }
}

/// `rtlab-edf-PID` cpusets that no state file in `dir` describes: left by
/// an rtlab older than the state files, or by one whose record was removed
/// by hand. Each is listed with the pid in its name.
pub fn stray_cpusets(dir: &StateDir) -> std::io::Result<Vec<(PathBuf, u32)>> {
    let recorded: Vec<PathBuf> = dir
        .read_all()?
        .into_iter()
        .filter_map(|f| f.record.ok())
        .flat_map(|r| r.changes)
        .map(|c| c.path().to_path_buf())
        .collect();
    let Ok(entries) = fs::read_dir(CPUSET_ROOT) else {
        return Ok(Vec::new());
    };
    let mut stray = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(CPUSET_PREFIX)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if entry.path().is_dir() && !recorded.contains(&entry.path()) {
            stray.push((entry.path(), pid));
        }
    }
    stray.sort();
    Ok(stray)
}

/// Removes the [`stray_cpusets`] whose pid no longer runs (moving any
/// thread still inside to the root first). With no record there is no
/// start time to check, so a pid that runs, whoever it now is, keeps its
/// cpuset: never remove a live run's cpuset. The root's load balancing is
/// left as it is (its original is unknown); `rtlab doctor` reports it.
pub fn remove_stray_cpusets(dir: &StateDir) -> std::io::Result<Vec<Recovery>> {
    let mut done = Vec::new();
    for (path, pid) in stray_cpusets(dir)? {
        if kernel_state::pid_exists(pid) {
            continue;
        }
        let change = Change::Cpuset { id: 0, path };
        let outcome = change.restore();
        done.push(Recovery {
            pid,
            command: String::new(),
            file: None,
            restored: vec![RestoredChange { change, outcome }],
        });
    }
    Ok(done)
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| format!("read {}: {e}", path.display()))
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("write `{value}` to {}: {e}", path.display()))
}

/// The first entry of a kernel list such as `0-3,8` (here `0`).
fn first_in_list(list: &str) -> Option<String> {
    let first = list.split(',').next()?.split('-').next()?.trim();
    (!first.is_empty()).then(|| first.to_string())
}

#[cfg(test)]
mod tests {
    use super::first_in_list;

    #[test]
    fn first_entry_of_a_kernel_list() {
        assert_eq!(first_in_list("0").as_deref(), Some("0"));
        assert_eq!(first_in_list("2-5,8").as_deref(), Some("2"));
        assert_eq!(first_in_list(""), None);
    }
}
