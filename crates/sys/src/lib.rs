//! Every raw `libc` call of rtlab, each wrapped once in a safe function
//! with a `SAFETY` comment; the other crates call these and have no
//! `unsafe` (they forbid or deny `unsafe_code`). Also the clocks built on
//! them ([`clock`]), the one conversion between [`Nanos`] and `timespec`
//! ([`timespec`]) and the process's stop flag ([`stop_flag`]).
//!
//! [`Nanos`]: rtlab_model::Nanos
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

pub mod clock;
pub mod fd;
pub mod futex;
pub mod log;
pub mod mutex;
pub mod resource;
pub mod sched;
pub mod signal;
pub mod stop_flag;
pub mod time;
pub mod timespec;

pub use clock::{Clock, MonotonicClock, ScriptedClock, Sleeper};

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
