//! `futex(FUTEX_WAIT_PRIVATE / FUTEX_WAKE_PRIVATE)`: the blocking hand-over
//! of the context-switch ping-pong (`rtlab characterize`).

use std::io;
use std::sync::atomic::AtomicU32;

use rtlab_model::Nanos;

use crate::timespec::to_timespec;

/// Blocks while `word` holds `expected`, at most `timeout`
/// (`FUTEX_WAIT_PRIVATE`, relative timeout). Returns at once with
/// [`io::ErrorKind::WouldBlock`] (EAGAIN) when `word` holds another value,
/// with [`io::ErrorKind::TimedOut`] after `timeout`, and with
/// [`io::ErrorKind::Interrupted`] on a signal; the caller re-checks `word`.
#[inline]
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Nanos) -> io::Result<()> {
    let ts = to_timespec(timeout);
    // SAFETY: `word` is a live, aligned 32-bit atomic for the whole call
    // (borrowed); `ts` is a valid timespec that outlives it; the unused
    // arguments (uaddr2, val3) are ignored by FUTEX_WAIT.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Wakes at most `count` threads blocked in [`futex_wait`] on `word`
/// (`FUTEX_WAKE_PRIVATE`) and returns how many it woke.
#[inline]
pub fn futex_wake(word: &AtomicU32, count: i32) -> io::Result<usize> {
    // SAFETY: `word` is a live, aligned 32-bit atomic (borrowed); FUTEX_WAKE
    // reads no other argument than the count.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            count,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}
