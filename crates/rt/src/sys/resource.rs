//! `getrusage`, `getrlimit`, `geteuid`, `mlockall`, `munlockall`.

use std::io;

/// `getrusage(who)`: `RUSAGE_SELF` or `RUSAGE_THREAD`.
#[inline]
pub fn getrusage(who: libc::c_int) -> io::Result<libc::rusage> {
    // SAFETY: an all-zero rusage (integers and timevals) is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage that outlives the call.
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    super::check_zero(rc)?;
    Ok(usage)
}

/// The soft and hard limits of `resource` (`RLIMIT_MEMLOCK`, ...).
pub fn getrlimit(resource: libc::__rlimit_resource_t) -> io::Result<libc::rlimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit that outlives the call.
    let rc = unsafe { libc::getrlimit(resource, &mut limit) };
    super::check_zero(rc)?;
    Ok(limit)
}

/// The effective user id.
pub fn geteuid() -> u32 {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// `mlockall(flags)`: `MCL_CURRENT | MCL_FUTURE`, ...
pub fn mlockall(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: mlockall takes flags only and touches no Rust memory.
    super::check_zero(unsafe { libc::mlockall(flags) })
}

/// `munlockall()`.
pub fn munlockall() -> io::Result<()> {
    // SAFETY: munlockall takes no arguments and touches no Rust memory.
    super::check_zero(unsafe { libc::munlockall() })
}
