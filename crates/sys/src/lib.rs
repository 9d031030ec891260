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

// Linux system calls and their numbers (sched_setattr, futex, klogctl):
// on another system this crate is empty and says so once, instead of a
// call with the wrong number or a hundred unresolved names.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "rtlab-sys wraps Linux system calls and builds on Linux only; the library crates \
     (model, analysis, sim, store) and the Python package do not depend on it"
);

#[cfg(target_os = "linux")]
pub mod clock;
#[cfg(target_os = "linux")]
pub mod fd;
#[cfg(target_os = "linux")]
pub mod futex;
#[cfg(target_os = "linux")]
pub mod log;
#[cfg(target_os = "linux")]
pub mod mutex;
#[cfg(target_os = "linux")]
pub mod resource;
#[cfg(target_os = "linux")]
pub mod sched;
#[cfg(target_os = "linux")]
pub mod signal;
#[cfg(target_os = "linux")]
pub mod stop_flag;
#[cfg(target_os = "linux")]
pub mod time;
#[cfg(target_os = "linux")]
pub mod timespec;

#[cfg(target_os = "linux")]
pub use clock::{Clock, MonotonicClock, ScriptedClock, Sleeper};

#[cfg(target_os = "linux")]
use std::io;

/// `Ok(())` when a libc call returned 0, else the thread's `errno`.
#[cfg(target_os = "linux")]
#[inline]
#[cfg(target_os = "linux")]
fn check_zero(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests;
