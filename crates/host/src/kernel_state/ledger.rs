//! The ledger: this process's record of the kernel settings it changed,
//! mirrored in its state file, and guards that restore on drop.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::change::{read_value, write_value, Change, Restored};
use super::owner::Owner;
use super::recovery::{recover_locked, Recovery};
use super::state_file::{StateDir, StateRecord, FORMAT};

/// Why a change could not be made or recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Another rtlab that is still running changed the same setting: its
    /// modified value must not be taken for the original.
    #[error(
        "cannot change {path}: rtlab pid {pid} changed it and is still running (`{command}`); \
         wait for it to end or stop it (`kill {pid}`), then retry"
    )]
    HeldByLive {
        /// The setting.
        path: PathBuf,
        /// The other rtlab.
        pid: u32,
        /// Its command line.
        command: String,
    },
    /// An rtlab that ended left the setting changed and restoring it failed.
    #[error(
        "cannot change {path}: rtlab pid {pid} (ended) left it changed and it could not be restored \
         ({why}); see `rtlab doctor`, restore it by hand, then remove {file}"
    )]
    LeftChanged {
        /// The setting.
        path: PathBuf,
        /// The rtlab that changed it.
        pid: u32,
        /// Why restoring failed.
        why: String,
        /// Its state file.
        file: PathBuf,
    },
    /// The state directory or file could not be written or read.
    #[error(
        "cannot record kernel settings in {dir} before changing them: {source} (changing kernel \
         settings needs root)"
    )]
    Record {
        /// The state directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The change itself failed (nothing was changed; the record is gone).
    #[error("cannot {action}: {source}")]
    Apply {
        /// What was tried, with the path.
        action: String,
        /// Why.
        source: io::Error,
    },
}

/// This process's changes, in force or being restored, and its state file.
#[derive(Debug)]
pub struct Ledger {
    dir: StateDir,
    owner: Owner,
    state: Mutex<LedgerState>,
    notices: Mutex<Vec<String>>,
}

#[derive(Debug, Default)]
struct LedgerState {
    changes: Vec<Change>,
    next_id: u64,
}

/// A change in force; dropping it restores the setting and updates the
/// state file (a failure becomes a notice, see [`take_notices`]).
#[must_use = "the setting is restored when the guard is dropped"]
#[derive(Debug)]
pub struct SettingGuard {
    ledger: Arc<Ledger>,
    id: u64,
    done: bool,
}

impl SettingGuard {
    /// Restores now and says what happened (`None` when already restored,
    /// e.g. by the emergency path of a second signal).
    pub fn restore(mut self) -> Option<(Change, Restored)> {
        self.done = true;
        self.ledger.finish(self.id)
    }
}

impl Drop for SettingGuard {
    fn drop(&mut self) {
        if !self.done {
            self.ledger.finish(self.id);
        }
    }
}

impl Ledger {
    /// A ledger for `owner` with its state file in `dir`.
    pub fn new(dir: StateDir, owner: Owner) -> Arc<Ledger> {
        Arc::new(Ledger {
            dir,
            owner,
            state: Mutex::new(LedgerState {
                changes: Vec::new(),
                next_id: 1,
            }),
            notices: Mutex::new(Vec::new()),
        })
    }

    /// The process whose changes these are.
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    /// Where the state file is kept.
    pub fn dir(&self) -> &StateDir {
        &self.dir
    }

    /// The changes in force, oldest first.
    pub fn changes(&self) -> Vec<Change> {
        self.lock_state().changes.clone()
    }

    /// Writes `value` to the file at `path` (a sysctl, a cgroup attribute),
    /// after recording what it read before. Dropping the guard writes that
    /// back.
    pub fn set_value(
        self: &Arc<Self>,
        path: &Path,
        value: &str,
    ) -> Result<SettingGuard, StateError> {
        let make = |id| -> Result<Change, StateError> {
            let original = read_value(path).map_err(|source| StateError::Apply {
                action: format!("read {}", path.display()),
                source,
            })?;
            Ok(Change::Value {
                id,
                path: path.to_path_buf(),
                original,
                set: value.to_string(),
            })
        };
        self.begin(make, |_| {
            write_value(path, value).map_err(|source| StateError::Apply {
                action: format!("write `{value}` to {}", path.display()),
                source,
            })
        })
    }

    /// Creates the cgroup directory `path` (a stale one of the same name
    /// that no live rtlab records is removed first). Dropping the guard
    /// moves any thread still in it to the parent and removes it.
    pub fn create_cgroup(self: &Arc<Self>, path: &Path) -> Result<SettingGuard, StateError> {
        self.create_recorded_dir(path, |id, path| Change::Cpuset { id, path })
    }

    /// Creates the tracefs instance directory `path` (a stale one of the
    /// same name that no live rtlab records is removed first). Dropping the
    /// guard removes it, and with it its buffers and enabled events.
    pub fn create_trace_instance(
        self: &Arc<Self>,
        path: &Path,
    ) -> Result<SettingGuard, StateError> {
        self.create_recorded_dir(path, |id, path| Change::TraceInstance { id, path })
    }

    /// `mkdir path`, recorded first as the change `change(id, path)`; a
    /// stale directory of that name, which no live rtlab records (checked
    /// under the lock), is removed by restoring the change first.
    fn create_recorded_dir(
        self: &Arc<Self>,
        path: &Path,
        change: fn(u64, PathBuf) -> Change,
    ) -> Result<SettingGuard, StateError> {
        let make = |id| Ok(change(id, path.to_path_buf()));
        self.begin(make, |change| {
            if path.exists() {
                let _ = change.restore();
            }
            std::fs::create_dir(path).map_err(|source| StateError::Apply {
                action: format!("mkdir {}", path.display()),
                source,
            })
        })
    }

    /// Records that this process holds `/dev/cpu_dma_latency` at
    /// `requested` us (`original`: the limit in force before). The caller
    /// opens the device after this returns; the kernel drops the request
    /// when the file is closed.
    pub fn record_dma_latency(
        self: &Arc<Self>,
        path: &Path,
        original: Option<i32>,
        requested: i32,
    ) -> Result<SettingGuard, StateError> {
        let make = |id| {
            Ok(Change::DmaLatency {
                id,
                path: path.to_path_buf(),
                original,
                requested,
            })
        };
        self.begin(make, |_| Ok(()))
    }

    /// Restores every change in force, newest first, and updates the state
    /// file: what a second stop signal does before the process exits.
    pub fn restore_all(&self) -> Vec<(Change, Restored)> {
        let mut state = self.lock_state();
        let _dir = self.dir.lock(true);
        let mut done = Vec::new();
        for change in state.changes.clone().into_iter().rev() {
            let outcome = change.restore();
            if outcome.is_settled() {
                state.changes.retain(|c| c.id() != change.id());
            }
            done.push((change, outcome));
        }
        if let Err(e) = self.write_locked(&state) {
            self.notice(format!(
                "warning: cannot update {}: {e}",
                self.dir.file_of(&self.owner).display()
            ));
        }
        done
    }

    /// The messages collected since the last call: recoveries made while
    /// changing a setting, restores that failed or found a value changed by
    /// someone else.
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut *self.notices.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn notice(&self, line: String) {
        self.notices
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line);
    }

    fn lock_state(&self) -> MutexGuard<'_, LedgerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record_error(&self, source: io::Error) -> StateError {
        StateError::Record {
            dir: self.dir.path().to_path_buf(),
            source,
        }
    }

    /// The one way a change is made: under this ledger's mutex and the
    /// directory lock, restore what dead owners left, refuse when a live
    /// owner (or a failed restore) holds the same setting, record the
    /// change with its original in the state file, then apply it.
    fn begin(
        self: &Arc<Self>,
        make: impl FnOnce(u64) -> Result<Change, StateError>,
        apply: impl FnOnce(&Change) -> Result<(), StateError>,
    ) -> Result<SettingGuard, StateError> {
        let mut state = self.lock_state();
        let _dir = self
            .dir
            .lock(true)
            .map_err(|e| self.record_error(e))?
            .ok_or_else(|| self.record_error(io::ErrorKind::NotFound.into()))?;
        let recoveries =
            recover_locked(&self.dir, Some(&self.owner)).map_err(|e| self.record_error(e))?;
        for recovery in &recoveries {
            self.notice(recovery.line());
        }
        let id = state.next_id;
        state.next_id += 1;
        let change = make(id)?;
        self.refuse_conflicts(&state, &change, &recoveries)?;
        state.changes.push(change.clone());
        if let Err(e) = self.write_locked(&state) {
            state.changes.pop();
            return Err(self.record_error(e));
        }
        if let Err(e) = apply(&change) {
            state.changes.pop();
            if let Err(w) = self.write_locked(&state) {
                self.notice(format!(
                    "warning: cannot update {}: {w}",
                    self.dir.file_of(&self.owner).display()
                ));
            }
            return Err(e);
        }
        Ok(SettingGuard {
            ledger: self.clone(),
            id,
            done: false,
        })
    }

    fn refuse_conflicts(
        &self,
        state: &LedgerState,
        change: &Change,
        recoveries: &[Recovery],
    ) -> Result<(), StateError> {
        if state.changes.iter().any(|c| c.conflicts_with(change)) {
            return Err(StateError::Apply {
                action: format!("change {}", change.path().display()),
                source: io::Error::other("this process changed it already"),
            });
        }
        let files = self.dir.read_all().map_err(|e| self.record_error(e))?;
        for file in files {
            let record = match file.record {
                Ok(r) => r,
                Err(e) => {
                    self.notice(format!(
                        "warning: ignoring unreadable rtlab state file {}: {e}",
                        file.path.display()
                    ));
                    continue;
                }
            };
            if record.owner.same_process(&self.owner) {
                continue;
            }
            let Some(held) = record.changes.iter().find(|c| c.conflicts_with(change)) else {
                continue;
            };
            return Err(if record.owner.is_alive() {
                StateError::HeldByLive {
                    path: change.path().to_path_buf(),
                    pid: record.owner.pid,
                    command: record.owner.command.clone(),
                }
            } else {
                // Recovery just tried this one and failed.
                let why = recoveries
                    .iter()
                    .flat_map(|r| &r.restored)
                    .find_map(|r| match &r.outcome {
                        Restored::Failed { why } if r.change == *held => Some(why.clone()),
                        _ => None,
                    })
                    .unwrap_or_else(|| "restoring failed".into());
                StateError::LeftChanged {
                    path: change.path().to_path_buf(),
                    pid: record.owner.pid,
                    why,
                    file: file.path,
                }
            });
        }
        Ok(())
    }

    /// Restores change `id` and forgets it (or keeps it, with a notice,
    /// when restoring failed).
    fn finish(&self, id: u64) -> Option<(Change, Restored)> {
        let mut state = self.lock_state();
        let change = state.changes.iter().find(|c| c.id() == id)?.clone();
        let _dir = self.dir.lock(true);
        let outcome = change.restore();
        match &outcome {
            Restored::Failed { .. } | Restored::LeftAlone { .. } => self.notice(format!(
                "warning: {}{}",
                change.describe_restore(&outcome),
                if outcome.is_settled() {
                    String::new()
                } else {
                    format!(
                        " (kept in {}; `rtlab doctor --restore` retries once this process has ended)",
                        self.dir.file_of(&self.owner).display()
                    )
                }
            )),
            _ => {}
        }
        if outcome.is_settled() {
            state.changes.retain(|c| c.id() != id);
        }
        if let Err(e) = self.write_locked(&state) {
            self.notice(format!(
                "warning: cannot update {}: {e}",
                self.dir.file_of(&self.owner).display()
            ));
        }
        Some((change, outcome))
    }

    fn write_locked(&self, state: &LedgerState) -> io::Result<()> {
        self.dir.write(&StateRecord {
            format: FORMAT,
            owner: self.owner.clone(),
            changes: state.changes.clone(),
        })
    }
}

static GLOBAL: OnceLock<Arc<Ledger>> = OnceLock::new();

/// This process's ledger, with its state file in [`StateDir::from_env`].
pub fn ledger() -> Result<Arc<Ledger>, StateError> {
    if let Some(l) = GLOBAL.get() {
        return Ok(l.clone());
    }
    let dir = StateDir::from_env();
    let owner = Owner::current().map_err(|source| StateError::Record {
        dir: dir.path().to_path_buf(),
        source,
    })?;
    let _ = GLOBAL.set(Ledger::new(dir, owner));
    Ok(GLOBAL.get().expect("set above").clone())
}

/// Restores every change this process has in force (see
/// [`Ledger::restore_all`]); nothing when it changed nothing.
pub fn restore_this_process() -> Vec<(Change, Restored)> {
    GLOBAL.get().map(|l| l.restore_all()).unwrap_or_default()
}

/// The notices of this process's ledger (see [`Ledger::take_notices`]).
pub fn take_notices() -> Vec<String> {
    GLOBAL.get().map(|l| l.take_notices()).unwrap_or_default()
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
