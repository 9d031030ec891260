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

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::RtError;

/// Where the cgroup-v1 cpuset hierarchy is mounted.
const CPUSET_ROOT: &str = "/sys/fs/cgroup/cpuset";

/// A cgroup-v1 cpuset holding one CPU exclusively; removed on drop.
#[derive(Debug)]
pub struct ExclusiveCpuset {
    cpu: usize,
    root: PathBuf,
    dir: PathBuf,
    /// The root's `cpuset.sched_load_balance` before we changed it.
    root_balance: String,
}

impl ExclusiveCpuset {
    /// Creates `/sys/fs/cgroup/cpuset/rtlab-edf-<pid>` with `cpus = cpu`,
    /// the root's first memory node, `cpu_exclusive = 1`, and turns load
    /// balancing off at the root. Stale `rtlab-edf-*` cpusets of earlier runs
    /// that died are removed first (an empty cgroup can be removed; a busy
    /// one is left alone).
    pub fn create(cpu: usize) -> Result<ExclusiveCpuset, RtError> {
        let root = PathBuf::from(CPUSET_ROOT);
        let fail = |why: String| RtError::Cpuset { cpu, why };
        if !root.join("cpuset.cpus").exists() {
            return Err(fail(format!(
                "{CPUSET_ROOT} is not a cgroup-v1 cpuset mount"
            )));
        }
        remove_stale(&root);
        let dir = root.join(format!("rtlab-edf-{}", std::process::id()));
        let _ = fs::remove_dir(&dir);
        fs::create_dir(&dir).map_err(|e| fail(format!("mkdir {}: {e}", dir.display())))?;
        let root_balance =
            read(&root.join("cpuset.sched_load_balance")).unwrap_or_else(|_| "1".into());
        let set = ExclusiveCpuset {
            cpu,
            root,
            dir,
            root_balance,
        };
        // From here on, Drop undoes whatever was done.
        let mems = read(&set.root.join("cpuset.mems")).map_err(fail)?;
        let first_mem = first_in_list(&mems).unwrap_or_else(|| "0".into());
        set.write_own("cpuset.cpus", &cpu.to_string())?;
        set.write_own("cpuset.mems", &first_mem)?;
        set.write_own("cpuset.cpu_exclusive", "1")?;
        let balance = set.root.join("cpuset.sched_load_balance");
        write(&balance, "0").map_err(fail)?;
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

    fn write_own(&self, file: &str, value: &str) -> Result<(), RtError> {
        write(&self.dir.join(file), value).map_err(|why| RtError::Cpuset { cpu: self.cpu, why })
    }
}

/// Lets a thread move itself into an [`ExclusiveCpuset`].
#[derive(Debug, Clone)]
pub struct CpusetDoor {
    cpu: usize,
    tasks: PathBuf,
}

impl CpusetDoor {
    /// Moves the calling thread into the cpuset (before it becomes a
    /// deadline thread).
    pub fn add_current_thread(&self) -> Result<(), RtError> {
        let tid = crate::policy::current_tid();
        write(&self.tasks, &tid.to_string()).map_err(|why| RtError::Cpuset { cpu: self.cpu, why })
    }
}

impl Drop for ExclusiveCpuset {
    fn drop(&mut self) {
        if fs::remove_dir(&self.dir).is_err() {
            // Threads still inside (a run that lost a thread): move them out.
            if let Ok(tasks) = read(&self.dir.join("tasks")) {
                for tid in tasks.split_whitespace() {
                    let _ = write(&self.root.join("tasks"), tid);
                }
            }
            let _ = fs::remove_dir(&self.dir);
        }
        let _ = write(
            &self.root.join("cpuset.sched_load_balance"),
            self.root_balance.trim(),
        );
    }
}

/// Removes empty `rtlab-edf-*` cpusets left by runs that were killed.
fn remove_stale(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with("rtlab-edf-")
        {
            let _ = fs::remove_dir(entry.path());
        }
    }
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
