//! Descriptor calls std does not offer: `flock`, `isatty` with its error,
//! `dup2` onto a standard stream.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};

/// `flock(fd, LOCK_EX)`: blocks until the exclusive lock is held. A signal
/// ends the wait with [`io::ErrorKind::Interrupted`].
pub fn flock_exclusive(file: &impl AsFd) -> io::Result<()> {
    // SAFETY: the descriptor is borrowed from an open file for the call.
    let rc = unsafe { libc::flock(file.as_fd().as_raw_fd(), libc::LOCK_EX) };
    super::check_zero(rc)
}

/// `flock(fd, LOCK_EX | LOCK_NB)`: `Ok(true)` when the exclusive lock is
/// now held, `Ok(false)` when another open file description holds it.
pub fn try_flock_exclusive(file: &impl AsFd) -> io::Result<bool> {
    // SAFETY: the descriptor is borrowed from an open file for the call.
    let rc = unsafe { libc::flock(file.as_fd().as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    match super::check_zero(rc) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(e),
    }
}

/// `Ok(())` when `fd` is a terminal, else why not (`ENOTTY`, `EBADF`, or
/// `EIO` for a terminal that hung up).
pub fn isatty(fd: RawFd) -> io::Result<()> {
    // SAFETY: isatty only inspects the descriptor number; any value is
    // accepted (a closed one gives EBADF).
    if unsafe { libc::isatty(fd) } == 1 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `dup2(from, onto)`: atomically points descriptor `onto` at the file of
/// `from`, so concurrent users of `onto` see either the old or the new file,
/// never a closed descriptor.
pub fn dup2(from: &impl AsFd, onto: RawFd) -> io::Result<()> {
    // SAFETY: `from` is an open descriptor borrowed for the call; dup2
    // replaces `onto` in one step and never frees Rust-owned memory.
    let rc = unsafe { libc::dup2(from.as_fd().as_raw_fd(), onto) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
