//! Recovery: restoring what rtlab processes that ended recorded, and
//! never what live ones did.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use super::change::{Change, Restored};
use super::owner::Owner;
use super::state_file::StateDir;

/// One change and what restoring it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoredChange {
    /// The change, as recorded.
    pub change: Change,
    /// What restoring it did.
    pub outcome: Restored,
}

/// What recovery did for one rtlab process that ended without restoring.
#[derive(Debug, Clone, Serialize)]
pub struct Recovery {
    /// The process that made the changes.
    pub pid: u32,
    /// Its command line (empty when unknown).
    pub command: String,
    /// Its state file (`None` for a cpuset no state file describes).
    pub file: Option<PathBuf>,
    /// Each change and what restoring it did, in the order restored.
    pub restored: Vec<RestoredChange>,
}

impl Recovery {
    /// True when every change was settled (the state file is gone).
    pub fn complete(&self) -> bool {
        self.restored.iter().all(|r| r.outcome.is_settled())
    }

    /// The one line that tells the user.
    pub fn line(&self) -> String {
        let what: Vec<String> = self
            .restored
            .iter()
            .map(|r| r.change.describe_restore(&r.outcome))
            .collect();
        let command = if self.command.is_empty() {
            String::new()
        } else {
            format!(" (`{}`)", self.command)
        };
        let source = match &self.file {
            Some(_) => "",
            None => " (no state file: an older rtlab)",
        };
        if self.complete() {
            format!(
                "rtlab: restored what rtlab pid {}{command} left when it ended without cleaning up{source}: {}",
                self.pid,
                what.join("; ")
            )
        } else {
            format!(
                "rtlab: could not restore all that rtlab pid {}{command} left{source}: {}; it stays recorded in {} and `rtlab doctor --restore` retries",
                self.pid,
                what.join("; "),
                self.file
                    .as_ref()
                    .map_or("nowhere".into(), |f| f.display().to_string())
            )
        }
    }
}

/// Restores what every dead owner recorded in `dir`, newest change first,
/// and removes (or, after a failure, rewrites) its state file. Live owners'
/// records are left alone, and so are damaged files.
pub fn recover_dead_owners(dir: &StateDir) -> io::Result<Vec<Recovery>> {
    let Some(_lock) = dir.lock(false)? else {
        return Ok(Vec::new());
    };
    recover_locked(dir, None)
}

/// [`recover_dead_owners`] with the directory lock held; `me` is skipped.
pub(super) fn recover_locked(dir: &StateDir, me: Option<&Owner>) -> io::Result<Vec<Recovery>> {
    let mut recoveries = Vec::new();
    for file in dir.read_all()? {
        let Ok(mut record) = file.record else {
            continue;
        };
        if me.is_some_and(|me| me.same_process(&record.owner)) || record.owner.is_alive() {
            continue;
        }
        let mut restored = Vec::new();
        for change in record.changes.clone().into_iter().rev() {
            let outcome = change.restore();
            if outcome.is_settled() {
                record.changes.retain(|c| c.id() != change.id());
                // Written after each change, so a recovery that is itself
                // interrupted does not redo (or misreport) what it did.
                dir.write(&record)?;
            }
            restored.push(RestoredChange { change, outcome });
        }
        recoveries.push(Recovery {
            pid: record.owner.pid,
            command: record.owner.command.clone(),
            file: Some(file.path),
            restored,
        });
    }
    Ok(recoveries)
}
