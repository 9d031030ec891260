//! The state files: one JSON file per rtlab process that changed kernel
//! settings, `<dir>/<pid>-<start time>.json`, written atomically, under a
//! directory-wide lock.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::change::Change;
use super::owner::Owner;

/// The version of the state-file format.
pub const FORMAT: u32 = 1;

/// What one process changed: its owner and the changes still in force, in
/// the order they were made (restored in reverse).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateRecord {
    /// [`FORMAT`].
    pub format: u32,
    /// The process that made the changes.
    pub owner: Owner,
    /// Changes not restored yet, oldest first.
    pub changes: Vec<Change>,
}

/// A state file as found on disk: parsed, or why it could not be.
#[derive(Debug)]
pub struct StateFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its record, or the parse error (such files are reported, never acted on).
    pub record: Result<StateRecord, String>,
}

/// The directory of state files: `/run/rtlab`, or `$RTLAB_STATE_DIR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    path: PathBuf,
}

/// Held while a process reads or changes state files and the settings they
/// describe: `flock(LOCK_EX)` on `<dir>/lock`. The kernel releases it when
/// the file is closed, also when its holder is killed, so it never goes stale.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl StateDir {
    /// The default directory. `/run` is tmpfs: state files disappear at
    /// reboot, as the kernel settings they describe are reset then too.
    pub const DEFAULT: &'static str = "/run/rtlab";
    /// Environment variable that moves the directory, for tests.
    pub const ENV: &'static str = "RTLAB_STATE_DIR";

    /// `$RTLAB_STATE_DIR` when set and not empty, else [`StateDir::DEFAULT`].
    pub fn from_env() -> StateDir {
        match std::env::var_os(Self::ENV) {
            Some(dir) if !dir.is_empty() => StateDir::new(dir),
            _ => StateDir::new(Self::DEFAULT),
        }
    }

    /// A state directory at `path`.
    pub fn new(path: impl Into<PathBuf>) -> StateDir {
        StateDir { path: path.into() }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The state file of `owner`.
    pub fn file_of(&self, owner: &Owner) -> PathBuf {
        self.path
            .join(format!("{}-{}.json", owner.pid, owner.start_time))
    }

    /// Takes the directory lock, creating the directory (mode 0755) first
    /// when `create`; `Ok(None)` when it does not exist and `!create`.
    pub fn lock(&self, create: bool) -> io::Result<Option<DirLock>> {
        if create {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(&self.path)?;
        } else if !self.path.is_dir() {
            return Ok(None);
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .open(self.path.join("lock"))?;
        loop {
            match rtlab_sys::fd::flock_exclusive(&file) {
                Ok(()) => return Ok(Some(DirLock { _file: file })),
                Err(err) if err.kind() != io::ErrorKind::Interrupted => return Err(err),
                Err(_) => {}
            }
        }
    }

    /// Every state file in the directory (none when it does not exist),
    /// ordered by name.
    pub fn read_all(&self) -> io::Result<Vec<StateFile>> {
        let entries = match fs::read_dir(&self.path) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut files = Vec::new();
        for entry in entries {
            let path = entry?.path();
            let is_state = path.extension().is_some_and(|e| e == "json")
                && !path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if !is_state {
                continue;
            }
            let record = fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()));
            files.push(StateFile { path, record });
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    /// Writes `record` to its owner's file atomically (a temporary file in
    /// the same directory, fsync, rename, fsync of the directory), or
    /// removes the file when no change is left.
    pub fn write(&self, record: &StateRecord) -> io::Result<()> {
        let path = self.file_of(&record.owner);
        if record.changes.is_empty() {
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            }
            return self.sync_dir();
        }
        let text = serde_json::to_string_pretty(record).map_err(io::Error::other)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = self.path.join(format!(".{name}.tmp"));
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, &path)?;
        self.sync_dir()
    }

    fn sync_dir(&self) -> io::Result<()> {
        File::open(&self.path)?.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pid: u32) -> StateRecord {
        StateRecord {
            format: FORMAT,
            owner: Owner {
                pid,
                start_time: 77,
                command: "rtlab run x".into(),
            },
            changes: vec![Change::Value {
                id: 1,
                path: "/proc/sys/kernel/sched_rt_runtime_us".into(),
                original: "950000".into(),
                set: "-1".into(),
            }],
        }
    }

    #[test]
    fn a_record_is_written_atomically_and_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::new(tmp.path().join("rtlab"));
        assert!(dir.read_all().unwrap().is_empty(), "no directory yet");
        let _lock = dir.lock(true).unwrap().unwrap();
        let r = record(4242);
        dir.write(&r).unwrap();
        let files = dir.read_all().unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, dir.file_of(&r.owner));
        assert_eq!(files[0].path.file_name().unwrap(), "4242-77.json");
        assert_eq!(files[0].record.as_ref().unwrap(), &r);
        // Only the state file and the lock: no temporary file left behind.
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["4242-77.json", "lock"]);
        // Rewriting replaces the whole file; no change left removes it.
        let mut shorter = r.clone();
        shorter.changes.clear();
        dir.write(&shorter).unwrap();
        assert!(dir.read_all().unwrap().is_empty());
    }

    #[test]
    fn a_damaged_file_is_reported_not_guessed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::new(tmp.path());
        fs::write(tmp.path().join("1-2.json"), "{\"format\": 1, \"own").unwrap();
        fs::write(tmp.path().join(".1-2.json.tmp"), "partial").unwrap();
        let files = dir.read_all().unwrap();
        assert_eq!(files.len(), 1, "temporary files are not state files");
        assert!(files[0].record.is_err());
    }

    #[test]
    fn the_directory_comes_from_the_environment_variable() {
        // Read, not set: tests run in parallel threads of one process.
        let dir = StateDir::from_env();
        match std::env::var(StateDir::ENV) {
            Ok(v) if !v.is_empty() => assert_eq!(dir.path(), Path::new(&v)),
            _ => assert_eq!(dir.path(), Path::new(StateDir::DEFAULT)),
        }
    }
}
