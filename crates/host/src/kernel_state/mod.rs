//! Kernel settings that rtlab changes, recorded before each change and
//! restored afterwards — also when the process that changed them was
//! killed.
//!
//! rtlab changes a few machine-wide settings for a run: RT throttling
//! (`/proc/sys/kernel/sched_rt_runtime_us = -1`, `--no-rt-throttling`), the
//! root cpuset's `cpuset.sched_load_balance` and an exclusive cpuset
//! `rtlab-edf-PID` (SCHED_DEADLINE on one CPU), and `/dev/cpu_dma_latency`
//! (latency measurements). Every one of them goes through a [`Ledger`]:
//!
//! 1. **Record first.** Under a directory lock (`flock` on
//!    `/run/rtlab/lock`, released by the kernel even on SIGKILL), the
//!    original value is read and written with the change to this process's
//!    state file `/run/rtlab/<pid>-<starttime>.json` — a temporary file,
//!    fsync, rename, fsync of the directory — and only then is the setting
//!    changed. A process killed at any point leaves either no change or a
//!    record of it.
//! 2. **Owner.** A record names its process by pid *and* start time (field
//!    22 of `/proc/PID/stat`), so a reused pid is not taken for the owner;
//!    a zombie counts as dead. `/run` is tmpfs: records vanish at reboot,
//!    as the settings do.
//! 3. **Recovery, never of the living.** Before any change, and at the
//!    start of every measuring command ([`crate::recover::recover_left_state`]), the
//!    records of dead owners are restored, newest change first, and their
//!    files removed; each dead owner gets one line of output. Records of
//!    live owners are never touched.
//! 4. **One owner per setting.** A change to a setting that a live rtlab
//!    has changed is refused with an error naming its pid (its modified
//!    value must not be recorded as "original", and restoring ours would
//!    pull the setting from under its run). `/dev/cpu_dma_latency` is the
//!    exception: the kernel keeps every holder's request and applies the
//!    strictest, so holders do not conflict.
//! 5. **Restore what is ours only.** A value is written back only while
//!    the file still reads what rtlab set; one changed since by someone
//!    else is left, and said so. Restores refused with EBUSY (RT runtime
//!    while deadline bandwidth is still allocated) are retried for 1.5 s;
//!    a restore that still fails stays recorded for the next command.
//! 6. **Guards.** Each change returns a [`SettingGuard`] that restores on
//!    drop and removes the record (the state file goes with the last one).
//!    A second stop signal restores everything at once
//!    ([`restore_this_process`], see [`crate::interrupt`]) before exiting.
//!
//! `/dev/cpu_dma_latency` is self-restoring (the kernel drops the request
//! when the file closes, even on SIGKILL); it is recorded anyway so that
//! `rtlab doctor` can say who holds it, and its record is best-effort (a
//! user allowed to open the device without root still gets the hold).
//!
//! The state directory is `/run/rtlab`; the environment variable
//! `RTLAB_STATE_DIR` moves it, for tests.

mod change;
mod ledger;
mod owner;
mod recovery;
mod state_file;

pub use change::{Change, Restored};
pub use ledger::{ledger, restore_this_process, take_notices, Ledger, SettingGuard, StateError};
pub use owner::{pid_exists, Liveness, Owner};
pub use recovery::{recover_dead_owners, Recovery, RestoredChange};
pub use state_file::{DirLock, StateDir, StateFile, StateRecord, FORMAT};

/// The owners of the records in `dir` that ended and left a kernel setting
/// changed (read only: for a warning when recovery itself is not allowed).
/// A record of only self-restoring changes (`/dev/cpu_dma_latency`, which
/// the kernel released when the owner's file descriptor closed) does not
/// count: nothing is left changed.
pub fn dead_owners(dir: &StateDir) -> Vec<Owner> {
    dir.read_all()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| f.record.ok())
        .filter(|r| r.changes.iter().any(|c| !c.restores_itself()))
        .map(|r| r.owner)
        .filter(|o| !o.is_alive())
        .collect()
}
