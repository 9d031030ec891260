//! Scheduling system calls: `sched_setattr` / `sched_getattr` (the raw
//! syscalls; glibc has no wrapper), affinity, `sched_getcpu`, `gettid`.

use std::io;

/// `SCHED_DEADLINE` from `<linux/sched.h>` (not in every libc).
pub const SCHED_DEADLINE: u32 = 6;
/// `SCHED_FLAG_RESET_ON_FORK`.
pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;
/// `SCHED_FLAG_RECLAIM` (Linux 4.13): a SCHED_DEADLINE thread may use the
/// bandwidth other deadline threads leave unused (GRUB).
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;

/// `struct sched_attr` (version 0, 48 bytes) from `<linux/sched/types.h>`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct SchedAttr {
    /// Size of the struct, for the kernel's versioning.
    pub size: u32,
    /// `SCHED_OTHER`, `SCHED_FIFO`, ..., [`SCHED_DEADLINE`].
    pub sched_policy: u32,
    /// `SCHED_FLAG_*`.
    pub sched_flags: u64,
    /// Nice value (SCHED_OTHER, SCHED_BATCH).
    pub sched_nice: i32,
    /// Static priority (SCHED_FIFO, SCHED_RR).
    pub sched_priority: u32,
    /// SCHED_DEADLINE runtime, ns.
    pub sched_runtime: u64,
    /// SCHED_DEADLINE relative deadline, ns.
    pub sched_deadline: u64,
    /// SCHED_DEADLINE period, ns.
    pub sched_period: u64,
}

impl SchedAttr {
    /// An all-zero attribute with `size` set.
    pub fn new() -> SchedAttr {
        SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            ..SchedAttr::default()
        }
    }
}

/// `sched_setattr(0, attr, 0)`: sets the calling thread's policy.
pub fn sched_setattr(attr: &SchedAttr) -> io::Result<()> {
    // SAFETY: `attr` is a valid, initialised sched_attr; the kernel reads
    // `attr.size` bytes, which the caller cannot make larger than the struct
    // without also making it invalid for the kernel (E2BIG); pid 0 means the
    // calling thread; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            0 as libc::pid_t,
            attr as *const SchedAttr,
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `sched_setattr(tid, attr, 0)`: sets the policy of thread `tid` of any
/// process the caller may change (root or CAP_SYS_NICE, or its own
/// threads within RLIMIT_RTPRIO): how the real-time dispatcher raises the
/// chosen task thread and lowers the one it preempts.
#[inline]
pub fn sched_setattr_of(tid: i32, attr: &SchedAttr) -> io::Result<()> {
    // SAFETY: as `sched_setattr`: `attr` is a valid, initialised sched_attr
    // of the size it states; `tid` is a plain number (a thread that does
    // not exist is ESRCH); flags must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            tid as libc::pid_t,
            attr as *const SchedAttr,
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `sched_getattr(tid, attr, size, 0)`: thread `tid`'s policy.
pub fn sched_getattr_of(tid: i32) -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: `attr` is writable and as large as the size passed; `tid` is
    // a plain number; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid as libc::pid_t,
            &mut attr as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as libc::c_uint,
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        Ok(attr)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `sched_getattr(0, attr, size, 0)`: the calling thread's policy.
pub fn sched_getattr() -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: `attr` is writable and as large as the size passed; pid 0 is
    // the calling thread; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0 as libc::pid_t,
            &mut attr as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as libc::c_uint,
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        Ok(attr)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A CPU set (`cpu_set_t`) of [`CpuSet::CAPACITY`] CPUs.
#[derive(Clone, Copy)]
pub struct CpuSet(libc::cpu_set_t);

impl std::fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.cpus()).finish()
    }
}

impl CpuSet {
    /// How many CPUs a set can name (1024 on Linux).
    pub const CAPACITY: usize = 8 * std::mem::size_of::<libc::cpu_set_t>();

    /// The empty set.
    pub fn empty() -> CpuSet {
        // SAFETY: an all-zero cpu_set_t is a valid empty set.
        CpuSet(unsafe { std::mem::zeroed() })
    }

    /// Adds `cpu`; CPUs at or past [`CpuSet::CAPACITY`] are ignored.
    pub fn insert(&mut self, cpu: usize) {
        if cpu < Self::CAPACITY {
            // SAFETY: `cpu` is below the set's capacity (checked above).
            unsafe { libc::CPU_SET(cpu, &mut self.0) };
        }
    }

    /// True when `cpu` is in the set.
    pub fn contains(&self, cpu: usize) -> bool {
        // SAFETY: CPU_ISSET reads the set at an index below its capacity.
        cpu < Self::CAPACITY && unsafe { libc::CPU_ISSET(cpu, &self.0) }
    }

    /// The CPUs in the set, ascending.
    pub fn cpus(&self) -> impl Iterator<Item = usize> + '_ {
        (0..Self::CAPACITY).filter(|&c| self.contains(c))
    }
}

/// The calling thread's affinity (`sched_getaffinity(0)`).
pub fn sched_getaffinity() -> io::Result<CpuSet> {
    let mut set = CpuSet::empty();
    // SAFETY: `set.0` is writable and its size is passed; pid 0 is the caller.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set.0) };
    super::check_zero(rc)?;
    Ok(set)
}

/// Sets the calling thread's affinity (`sched_setaffinity(0)`).
pub fn sched_setaffinity(set: &CpuSet) -> io::Result<()> {
    // SAFETY: `set.0` is a valid cpu set of the size passed; pid 0 is the
    // caller.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set.0) };
    super::check_zero(rc)
}

/// Sets thread `tid`'s affinity (`sched_setaffinity(tid)`): how a global
/// dispatcher moves a task thread to the CPU it chose.
pub fn sched_setaffinity_of(tid: i32, set: &CpuSet) -> io::Result<()> {
    // SAFETY: `set.0` is a valid cpu set of the size passed; `tid` is a
    // plain number (ESRCH when no such thread).
    let rc =
        unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set.0) };
    super::check_zero(rc)
}

/// The CPU the calling thread runs on (`sched_getcpu`).
#[inline]
pub fn sched_getcpu() -> io::Result<u32> {
    // SAFETY: sched_getcpu takes no arguments and only returns a value.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).map_err(|_| io::Error::last_os_error())
}

/// The kernel thread id of the calling thread.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}
