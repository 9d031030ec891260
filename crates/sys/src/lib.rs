//! Every raw `libc` call of the runtime, each wrapped once in a safe
//! function with a `SAFETY` comment; the rest of the crate calls these and
//! has no `unsafe` (the crate root denies `unsafe_code` everywhere but here).
//!
//! Calls that can fail return [`std::io::Result`] with the kernel's error
//! number (`io::Error::last_os_error()` or the returned error number); calls
//! that cannot fail (`gettid`, `geteuid`) return their value. The wrappers
//! used on real-time paths ([`time::clock_gettime`],
//! [`time::clock_nanosleep_until`], [`resource::getrusage`],
//! [`sched::sched_getcpu`]) are `#[inline]` and allocate nothing: an
//! `io::Error` built from an error number is a plain integer.
//!
//! Written on `libc` rather than `nix` or `rustix`: neither covers
//! `sched_setattr` / `sched_getattr` (SCHED_DEADLINE) or `klogctl`, so they
//! would add a dependency and still leave raw calls here.

pub mod fd;
pub mod futex;
pub mod log;
pub mod mutex;
pub mod resource;
pub mod sched;
pub mod signal;
pub mod time;

use std::io;

/// `Ok(())` when a libc call returned 0, else the thread's `errno`.
#[inline]
fn check_zero(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests;
