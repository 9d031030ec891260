//! The per-CPU measurement lock: one real-time measurement per CPU at a
//! time.
//!
//! Two measurements on one CPU ruin each other silently (a breakdown run at
//! U = 0.025 saw 45 of 75 jobs miss while another rtlab characterised the
//! same CPU). Every measuring command therefore holds, for each CPU it
//! measures on, an exclusive `flock` on `<state dir>/cpu-N.lock` (the state
//! directory of [`crate::kernel_state`]: `/run/rtlab`, or
//! `$RTLAB_STATE_DIR`). The holder writes its pid and command line into the
//! file, so a second command can say whom it waits for. The kernel releases
//! a `flock` when its descriptor closes, also on SIGKILL: a killed holder
//! never leaves a CPU locked.
//!
//! A user who may not create the directory or a lock file (not root, and
//! no root rtlab made them yet) measures without the lock: the lock keeps
//! measurements apart, it must not stop an unprivileged `rtlab run -P
//! other`. Lock files root made are locked read-only by other users
//! (`flock` needs no write permission); their holder is then not named.
//!
//! CPUs are locked in ascending order, so two commands that want
//! overlapping sets cannot deadlock. The lock is re-entrant within a
//! process (`breakdown` holds its CPU and then characterises it): a CPU
//! this process already holds is granted at once.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::Mutex;

use crate::kernel_state::{Owner, StateDir};

/// Whether a command waits for a CPU another measurement holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenBusy {
    /// Wait until the holder ends.
    Wait,
    /// Refuse with [`CpuLockError::Busy`] (`--no-wait`).
    Refuse,
}

/// The measurement that holds a CPU, as its lock file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The CPU.
    pub cpu: usize,
    /// The holder's pid (`None` while it has not written it yet).
    pub pid: Option<u32>,
    /// The holder's command line (`rtlab run ...`).
    pub command: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pid {
            Some(pid) if self.command.is_empty() => write!(f, "pid {pid}"),
            Some(pid) => write!(f, "pid {pid} ({})", self.command),
            None => f.write_str("another process"),
        }
    }
}

/// Why the CPUs could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum CpuLockError {
    /// Another measurement holds the CPU and [`WhenBusy::Refuse`] was asked.
    #[error("CPU {cpu} is busy: {holder} is measuring on it (without --no-wait, rtlab waits for it)", cpu = .0.cpu, holder = .0)]
    Busy(Holder),
    /// The lock file could not be created, opened or locked.
    #[error("measurement lock {}: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// The CPUs this process holds, with how many [`CpuLock`]s hold each.
static HELD: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<(usize, usize)>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Held CPUs; dropping it releases them (the last holder in this process
/// closes the lock file, which releases the `flock`).
#[derive(Debug, Default)]
pub struct CpuLock {
    cpus: Vec<usize>,
    files: Vec<(usize, File)>,
}

impl Drop for CpuLock {
    fn drop(&mut self) {
        let mut held = held();
        for cpu in &self.cpus {
            if let Some(i) = held.iter().position(|(c, _)| c == cpu) {
                held[i].1 -= 1;
                if held[i].1 == 0 {
                    held.remove(i);
                }
            }
        }
        self.files.clear();
    }
}

impl CpuLock {
    /// The CPUs held, ascending.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }
}

/// The lock file of `cpu` in `dir`.
pub fn lock_path(dir: &StateDir, cpu: usize) -> PathBuf {
    dir.path().join(format!("cpu-{cpu}.lock"))
}

/// Locks every CPU of `cpus` in `dir` (ascending, duplicates once). A CPU
/// held by another measurement is waited for ([`WhenBusy::Wait`]: `waiting`
/// is called once with its holder before the wait) or refused.
pub fn lock_cpus(
    dir: &StateDir,
    cpus: &[usize],
    when_busy: WhenBusy,
    mut waiting: impl FnMut(&Holder),
) -> Result<CpuLock, CpuLockError> {
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    let io_err = |path: PathBuf| move |source| CpuLockError::Io { path, source };
    match std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir.path())
    {
        Err(e) if not_allowed(&e) => return Ok(CpuLock::default()),
        other => other.map_err(io_err(dir.path().to_path_buf()))?,
    }
    let me = Owner::current().ok();
    let mut lock = CpuLock {
        cpus: Vec::with_capacity(cpus.len()),
        files: Vec::new(),
    };
    for cpu in cpus {
        // Dropping `lock` on an error below releases what it took so far.
        if let Some(entry) = held().iter_mut().find(|(c, _)| *c == cpu) {
            entry.1 += 1;
            lock.cpus.push(cpu);
            continue;
        }
        let path = lock_path(dir, cpu);
        let opened = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .open(&path);
        let (mut file, writable) = match opened {
            Ok(f) => (f, true),
            Err(e) if not_allowed(&e) => match File::open(&path) {
                Ok(f) => (f, false),
                Err(e) if not_allowed(&e) || e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(path)(e)),
            },
            Err(e) => return Err(io_err(path)(e)),
        };
        if !rtlab_sys::fd::try_flock_exclusive(&file).map_err(io_err(path.clone()))? {
            let holder = read_holder(&mut file, cpu);
            if when_busy == WhenBusy::Refuse {
                return Err(CpuLockError::Busy(holder));
            }
            waiting(&holder);
            lock_blocking(&file).map_err(io_err(path.clone()))?;
        }
        if writable {
            write_holder(&mut file, me.as_ref()).map_err(io_err(path))?;
        }
        held().push((cpu, 1));
        lock.cpus.push(cpu);
        lock.files.push((cpu, file));
    }
    Ok(lock)
}

/// Permission refused (not root) or a read-only file system.
fn not_allowed(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    )
}

/// Waits for the lock by polling (every 50 ms) rather than a blocking
/// `flock`, so a stop signal taken by [`crate::interrupt`]'s thread ends
/// the wait.
fn lock_blocking(file: &File) -> io::Result<()> {
    loop {
        if rtlab_sys::fd::try_flock_exclusive(file)? {
            return Ok(());
        }
        if crate::interrupt::interrupted() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "interrupted while waiting for the CPU",
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The holder's pid and command line: `PID\nCOMMAND\n`.
fn write_holder(file: &mut File, me: Option<&Owner>) -> io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    if let Some(me) = me {
        writeln!(file, "{}\n{}", me.pid, me.command)?;
    }
    Ok(())
}

fn read_holder(file: &mut File, cpu: usize) -> Holder {
    let mut text = String::new();
    let _ = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text));
    let mut lines = text.lines();
    let pid = lines.next().and_then(|l| l.trim().parse().ok());
    Holder {
        cpu,
        pid,
        command: lines.next().unwrap_or("").trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufRead;

    use super::*;

    #[test]
    fn a_held_cpu_is_refused_naming_its_holder_waited_for_and_reentrant_in_one_process() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::new(tmp.path().join("state"));
        let first = lock_cpus(&dir, &[3, 1, 3], WhenBusy::Refuse, |_| {}).unwrap();
        assert_eq!(first.cpus(), &[1, 3]);
        let text = std::fs::read_to_string(lock_path(&dir, 3)).unwrap();
        assert!(
            text.starts_with(&format!("{}\n", std::process::id())),
            "{text}"
        );
        let nested = lock_cpus(&dir, &[3], WhenBusy::Refuse, |_| panic!("no wait")).unwrap();
        assert_eq!(nested.cpus(), &[3]);
        drop(first);
        drop(nested);

        // Another process (util-linux flock) holds CPU 3 for 0.5 s.
        let mut other = std::process::Command::new("flock")
            .arg(lock_path(&dir, 3))
            .args(["-c", "echo held; sleep 0.5"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("flock(1) runs");
        let mut line = String::new();
        std::io::BufReader::new(other.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "held\n");
        match lock_cpus(&dir, &[2, 3], WhenBusy::Refuse, |_| {}) {
            Err(CpuLockError::Busy(h)) => {
                // The file still names the last writer: this process.
                assert_eq!((h.cpu, h.pid), (3, Some(std::process::id())));
                assert!(h.to_string().starts_with("pid "), "{h}");
            }
            other => panic!("{other:?}"),
        }
        assert!(held().is_empty(), "a refusal releases CPU 2 again");
        let mut seen = Vec::new();
        let lock = lock_cpus(&dir, &[3], WhenBusy::Wait, |h| seen.push(h.cpu)).unwrap();
        assert_eq!(seen, [3], "told once whom it waits for");
        assert!(
            other.wait().unwrap().success(),
            "granted only after the holder ended"
        );
        assert_eq!(lock.cpus(), &[3]);
    }
}
