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

/// Caps glibc's malloc arenas at [`MALLOC_ARENAS`], once per process.
///
/// glibc gives each thread that allocates its own arena, up to 8 per CPU,
/// and reserves 64 MiB of address space for each: 32 measuring threads
/// reserved a gigabyte (`latency -t 32` had 29 MB resident and 1.06 GB of
/// address space, and under `ulimit -v` a thread stack could no longer be
/// mapped). rtlab's measuring and task threads allocate while setting up,
/// not while measuring, so a few shared arenas cost nothing measurable.
pub fn limit_malloc_arenas() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(target_env = "gnu")]
        // SAFETY: mallopt takes two integers and touches no Rust memory;
        // M_ARENA_MAX may be set at any time (it bounds arenas made later).
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
        }
    });
}

/// glibc malloc arenas a process keeps at most (see [`limit_malloc_arenas`]).
pub const MALLOC_ARENAS: libc::c_int = 2;
