//! `clock_gettime` and `clock_nanosleep`: the calls of every real-time loop.

use std::io;

use rtlab_model::Nanos;

use crate::timespec::{from_timespec, to_timespec};

/// A clock id: `CLOCK_MONOTONIC`, `CLOCK_THREAD_CPUTIME_ID`, ...
pub type ClockId = libc::clockid_t;

/// `clock_gettime(clock)` as [`Nanos`].
#[inline]
pub fn clock_gettime(clock: ClockId) -> io::Result<Nanos> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that outlives the call.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    super::check_zero(rc)?;
    Ok(from_timespec(&ts))
}

/// One `clock_nanosleep(clock, TIMER_ABSTIME, t)`: blocks until `clock`
/// reads `t`. A signal ends it early with [`io::ErrorKind::Interrupted`];
/// the caller retries (the target is absolute, so a retry loses nothing).
#[inline]
pub fn clock_nanosleep_until(clock: ClockId, t: Nanos) -> io::Result<()> {
    let ts = to_timespec(t);
    // SAFETY: `ts` is a valid timespec that outlives the call; the
    // remaining-time pointer may be null with TIMER_ABSTIME.
    let rc =
        unsafe { libc::clock_nanosleep(clock, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
    // clock_nanosleep returns the error number instead of setting errno.
    match rc {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// `clock_getres(clock)` as [`Nanos`]: for the coarse clocks
/// (`CLOCK_MONOTONIC_COARSE`), the kernel's tick length.
pub fn clock_getres(clock: ClockId) -> io::Result<Nanos> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that outlives the call.
    let rc = unsafe { libc::clock_getres(clock, &mut ts) };
    super::check_zero(rc)?;
    Ok(from_timespec(&ts))
}
