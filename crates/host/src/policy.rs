//! Scheduling policy, CPU affinity, memory locking, `/dev/cpu_dma_latency`
//! and the RT-throttling settings: everything set up before a measurement.
//!
//! All policies are set with the raw `sched_setattr` system call (glibc has
//! no wrapper), which is the only interface for SCHED_DEADLINE and also
//! carries the nice value for SCHED_OTHER. They apply to the **calling
//! thread**, except the `*_thread_*` functions, which take a thread id of
//! this process (the real-time dispatcher changes its task threads'
//! priorities and CPUs from its own thread).

use std::fmt;
use std::fs::File;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use rtlab_model::Nanos;

use crate::error::HostError;
use crate::kernel_state::{self, SettingGuard};
use rtlab_sys::resource::{getrlimit, mlockall, munlockall};
use rtlab_sys::sched::{
    sched_getaffinity, sched_getattr, sched_getattr_of, sched_setaffinity, sched_setaffinity_of,
    sched_setattr, sched_setattr_of, CpuSet, SchedAttr, SCHED_DEADLINE, SCHED_FLAG_RECLAIM,
    SCHED_FLAG_RESET_ON_FORK,
};

/// A Linux scheduling policy with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_OTHER (CFS/EEVDF) with a nice value, -20..=19.
    Other {
        /// Nice value; below 0 needs CAP_SYS_NICE.
        nice: i32,
    },
    /// SCHED_FIFO, priority 1..=99.
    Fifo {
        /// Static priority; 99 is highest.
        priority: u8,
    },
    /// SCHED_RR, priority 1..=99.
    RoundRobin {
        /// Static priority; 99 is highest.
        priority: u8,
    },
    /// SCHED_DEADLINE (EDF with CBS): `runtime <= deadline <= period`.
    Deadline {
        /// Budget per period (at least 1024 ns).
        runtime: Nanos,
        /// Relative deadline.
        deadline: Nanos,
        /// Period.
        period: Nanos,
    },
}

impl Policy {
    /// The kernel's name, e.g. `SCHED_FIFO`.
    pub fn kernel_name(&self) -> &'static str {
        match self {
            Policy::Other { .. } => "SCHED_OTHER",
            Policy::Fifo { .. } => "SCHED_FIFO",
            Policy::RoundRobin { .. } => "SCHED_RR",
            Policy::Deadline { .. } => "SCHED_DEADLINE",
        }
    }

    /// The short name used on the command line and in JSON: `other`, `fifo`,
    /// `rr`, `deadline`.
    pub fn short_name(&self) -> &'static str {
        match self {
            Policy::Other { .. } => "other",
            Policy::Fifo { .. } => "fifo",
            Policy::RoundRobin { .. } => "rr",
            Policy::Deadline { .. } => "deadline",
        }
    }

    /// The static priority (0 for SCHED_OTHER and SCHED_DEADLINE).
    pub fn priority(&self) -> u8 {
        match self {
            Policy::Fifo { priority } | Policy::RoundRobin { priority } => *priority,
            _ => 0,
        }
    }

    /// True for the policies that RT throttling applies to (FIFO, RR).
    pub fn is_rt(&self) -> bool {
        matches!(self, Policy::Fifo { .. } | Policy::RoundRobin { .. })
    }

    /// Checks the parameters before asking the kernel, with a reason that
    /// says what is accepted.
    pub fn validate(&self) -> Result<(), HostError> {
        let invalid = |why: String| {
            Err(HostError::Invalid {
                what: self.to_string(),
                why,
            })
        };
        match *self {
            Policy::Other { nice } if !(-20..=19).contains(&nice) => {
                invalid("nice must be in -20..=19".into())
            }
            Policy::Fifo { priority } | Policy::RoundRobin { priority }
                if !(1..=99).contains(&priority) =>
            {
                invalid("priority must be in 1..=99 (99 is highest)".into())
            }
            Policy::Deadline {
                runtime,
                deadline,
                period,
            } => {
                if runtime < Nanos::from_ns(1024) {
                    invalid("runtime must be at least 1024ns".into())
                } else if !(runtime <= deadline && deadline <= period) {
                    invalid(format!(
                        "SCHED_DEADLINE needs runtime <= deadline <= period, got {runtime} / {deadline} / {period}"
                    ))
                } else if period >= Nanos::from_ns(1 << 63) {
                    invalid("period too large".into())
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }

    fn to_attr(self) -> SchedAttr {
        let mut attr = SchedAttr::new();
        match self {
            Policy::Other { nice } => {
                attr.sched_policy = libc::SCHED_OTHER as u32;
                attr.sched_nice = nice;
            }
            Policy::Fifo { priority } => {
                attr.sched_policy = libc::SCHED_FIFO as u32;
                attr.sched_priority = u32::from(priority);
            }
            Policy::RoundRobin { priority } => {
                attr.sched_policy = libc::SCHED_RR as u32;
                attr.sched_priority = u32::from(priority);
            }
            Policy::Deadline {
                runtime,
                deadline,
                period,
            } => {
                attr.sched_policy = SCHED_DEADLINE;
                // A deadline thread cannot fork unless reset-on-fork is set
                // (PLATFORM.md); children then start as SCHED_OTHER.
                attr.sched_flags = SCHED_FLAG_RESET_ON_FORK;
                attr.sched_runtime = runtime.as_ns();
                attr.sched_deadline = deadline.as_ns();
                attr.sched_period = period.as_ns();
            }
        }
        attr
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Other { nice } => write!(f, "SCHED_OTHER nice {nice}"),
            Policy::Fifo { priority } => write!(f, "SCHED_FIFO priority {priority}"),
            Policy::RoundRobin { priority } => write!(f, "SCHED_RR priority {priority}"),
            Policy::Deadline {
                runtime,
                deadline,
                period,
            } => write!(
                f,
                "SCHED_DEADLINE runtime {runtime} deadline {deadline} period {period}"
            ),
        }
    }
}

/// Sets the policy of the calling thread.
///
/// Errors: [`HostError::NeedsPrivilege`] without root/CAP_SYS_NICE,
/// [`HostError::DeadlineAdmission`] when SCHED_DEADLINE admission control
/// refuses the bandwidth, [`HostError::DeadlineAffinity`] when a deadline
/// thread has a narrowed affinity, [`HostError::Invalid`] for bad parameters.
pub fn set_current_thread_policy(policy: &Policy) -> Result<(), HostError> {
    set_current_thread_policy_reclaiming(policy, false)
}

/// [`set_current_thread_policy`], a SCHED_DEADLINE policy with
/// `SCHED_FLAG_RECLAIM` when `reclaim` is true (other policies ignore it).
///
/// With the flag the kernel charges a running deadline thread's runtime by
/// the GRUB rule (Lipari and Baruah, "Greedy reclamation of unused
/// bandwidth in constant-bandwidth servers", ECRTS 2000; Abeni et al.,
/// "Greedy CPU reclaiming for SCHED_DEADLINE", RTLWS 2014): dq = -(U_act /
/// U_max) dt instead of dq = -dt, where U_act is the bandwidth of the
/// deadline threads active on the CPU (at least the thread's own) and
/// U_max the RT limit (sched_rt_runtime_us / sched_rt_period_us). A job
/// may then run past its runtime into bandwidth the others leave unused,
/// and is throttled only when its reservation is really exhausted; the
/// other reservations keep their guarantee (Documentation/scheduler/
/// sched-deadline.rst, section 2.2).
pub fn set_current_thread_policy_reclaiming(
    policy: &Policy,
    reclaim: bool,
) -> Result<(), HostError> {
    policy.validate()?;
    let mut attr = policy.to_attr();
    if reclaim && matches!(policy, Policy::Deadline { .. }) {
        attr.sched_flags |= SCHED_FLAG_RECLAIM;
    }
    sched_setattr(&attr).map_err(|err| explain_policy_error(policy, err))
}

/// Changes the calling thread's policy (a SCHED_DEADLINE budget at a phase
/// boundary) on the real-time path: one `sched_setattr`, nothing allocated,
/// the error (EBUSY: admission refused the new bandwidth) not explained.
pub fn change_current_thread_policy(policy: &Policy) -> bool {
    sched_setattr(&policy.to_attr()).is_ok()
}

/// Sets the policy of thread `tid` (of this process): the real-time
/// dispatcher's set-up of its task threads and the watchdog's demotion of
/// them. Errors as [`set_current_thread_policy`].
pub fn set_thread_policy(tid: i32, policy: &Policy) -> Result<(), HostError> {
    policy.validate()?;
    sched_setattr_of(tid, &policy.to_attr()).map_err(|err| explain_policy_error(policy, err))
}

/// Changes thread `tid`'s policy on the real-time path: one
/// `sched_setattr`, nothing allocated, the error not explained (how the
/// dispatcher raises the chosen thread and lowers the preempted one).
#[inline]
pub fn change_thread_policy(tid: i32, policy: &Policy) -> bool {
    sched_setattr_of(tid, &policy.to_attr()).is_ok()
}

/// Thread `tid`'s policy, read back with `sched_getattr`.
pub fn thread_policy(tid: i32) -> Result<Policy, HostError> {
    let attr = sched_getattr_of(tid).map_err(HostError::os("sched_getattr"))?;
    Ok(policy_of_attr(&attr))
}

/// Pins thread `tid` (of this process) to `cpus`.
pub fn set_thread_affinity(tid: i32, cpus: &[usize]) -> Result<(), HostError> {
    let mut set = CpuSet::empty();
    for &c in cpus {
        set.insert(c);
    }
    sched_setaffinity_of(tid, &set).map_err(HostError::os("sched_setaffinity"))
}

/// Moves thread `tid` to the one CPU `cpu` on the real-time path (one
/// `sched_setaffinity`, nothing allocated): how a global dispatcher
/// places the thread of the job it chose.
#[inline]
pub fn move_thread_to(tid: i32, cpu: usize) -> bool {
    let mut set = CpuSet::empty();
    set.insert(cpu);
    sched_setaffinity_of(tid, &set).is_ok()
}

fn explain_policy_error(policy: &Policy, err: std::io::Error) -> HostError {
    let what = policy.to_string();
    match (err.raw_os_error(), policy) {
        (Some(libc::EPERM), Policy::Deadline { .. }) if has_cap_sys_nice() => {
            HostError::DeadlineAffinity
        }
        (Some(libc::EPERM), Policy::Deadline { .. }) => HostError::NeedsPrivilege {
            what,
            hint: String::new(),
        },
        (Some(libc::EPERM), Policy::Other { .. }) => HostError::NeedsPrivilege {
            what,
            hint: "; or allow it with RLIMIT_NICE (`ulimit -e`)".into(),
        },
        (Some(libc::EPERM), _) if has_cap_sys_nice() => HostError::NoRtRuntimeInCgroup { what },
        (Some(libc::EPERM), _) => HostError::NeedsPrivilege {
            what,
            hint: "; or allow unprivileged RT priorities with RLIMIT_RTPRIO (`ulimit -r 99`)"
                .into(),
        },
        (
            Some(libc::EBUSY),
            Policy::Deadline {
                runtime, period, ..
            },
        ) => HostError::DeadlineAdmission {
            runtime: *runtime,
            period: *period,
            bandwidth: runtime.as_ns() as f64 / period.as_ns() as f64,
            limit: RtThrottling::read()
                .map(|t| t.describe_limit())
                .unwrap_or_else(|_| "unknown".into()),
            note: fair_server_note(),
        },
        (Some(libc::EINVAL), _) => HostError::Invalid {
            what,
            why: "the kernel refused the parameters (EINVAL)".into(),
        },
        _ => HostError::Os {
            call: "sched_setattr",
            source: err,
        },
    }
}

/// The calling thread's policy, read back with `sched_getattr`.
pub fn current_thread_policy() -> Result<Policy, HostError> {
    let attr = sched_getattr().map_err(HostError::os("sched_getattr"))?;
    Ok(policy_of_attr(&attr))
}

fn policy_of_attr(attr: &SchedAttr) -> Policy {
    let priority = u8::try_from(attr.sched_priority).unwrap_or(u8::MAX);
    match attr.sched_policy {
        p if p == libc::SCHED_FIFO as u32 => Policy::Fifo { priority },
        p if p == libc::SCHED_RR as u32 => Policy::RoundRobin { priority },
        SCHED_DEADLINE => Policy::Deadline {
            runtime: Nanos::from_ns(attr.sched_runtime),
            deadline: Nanos::from_ns(attr.sched_deadline),
            period: Nanos::from_ns(attr.sched_period),
        },
        // SCHED_OTHER, SCHED_BATCH, SCHED_IDLE: report the nice value.
        _ => Policy::Other {
            nice: attr.sched_nice,
        },
    }
}

/// True when the calling thread is a SCHED_DEADLINE thread with
/// `SCHED_FLAG_RECLAIM` (see [`set_current_thread_policy_reclaiming`]).
pub fn current_thread_reclaims() -> Result<bool, HostError> {
    let attr = sched_getattr().map_err(HostError::os("sched_getattr"))?;
    Ok(attr.sched_policy == SCHED_DEADLINE && attr.sched_flags & SCHED_FLAG_RECLAIM != 0)
}

/// The kernel thread id of the calling thread (what cyclictest prints).
pub fn current_tid() -> i32 {
    rtlab_sys::sched::gettid()
}

/// True when the process runs as root or has CAP_SYS_NICE in its effective
/// set (read from /proc/self/status).
pub fn has_cap_sys_nice() -> bool {
    const CAP_SYS_NICE: u32 = 23;
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_SYS_NICE) != 0)
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> Result<Vec<usize>, HostError> {
    let set = sched_getaffinity().map_err(HostError::os("sched_getaffinity"))?;
    Ok(set.cpus().collect())
}

/// The calling thread kept off one CPU while the guard lives: its affinity
/// minus that CPU, given back when dropped. How the executor keeps its
/// coordinator (a SCHED_OTHER thread that wakes every 100 ms) off the CPU
/// of the task threads, where it could run only through the fair server,
/// a deadline server that preempts the task set (Linux 6.12+).
#[derive(Debug)]
pub struct KeptOffCpu {
    previous: Option<CpuSet>,
}

impl KeptOffCpu {
    /// Narrows the calling thread's affinity to exclude `cpu`; does nothing
    /// (and restores nothing) when `cpu` is the only CPU it may use, or
    /// when the kernel refuses.
    pub fn new(cpu: usize) -> KeptOffCpu {
        let Ok(previous) = sched_getaffinity() else {
            return KeptOffCpu { previous: None };
        };
        let mut others = CpuSet::empty();
        previous
            .cpus()
            .filter(|&c| c != cpu)
            .for_each(|c| others.insert(c));
        let moved = others.cpus().next().is_some() && sched_setaffinity(&others).is_ok();
        KeptOffCpu {
            previous: moved.then_some(previous),
        }
    }

    /// True when the thread was moved (and will be moved back).
    pub fn moved(&self) -> bool {
        self.previous.is_some()
    }
}

impl Drop for KeptOffCpu {
    fn drop(&mut self) {
        if let Some(previous) = &self.previous {
            let _ = sched_setaffinity(previous);
        }
    }
}

/// Pins the calling thread to `cpus`.
pub fn set_current_thread_affinity(cpus: &[usize]) -> Result<(), HostError> {
    let allowed = allowed_cpus().unwrap_or_default();
    let max = CpuSet::CAPACITY;
    let affinity_error = |why: &str| HostError::Affinity {
        cpus: cpus.to_vec(),
        allowed: allowed.clone(),
        why: why.to_string(),
    };
    if cpus.is_empty() {
        return Err(affinity_error("the CPU list is empty"));
    }
    if let Some(&bad) = cpus.iter().find(|&&c| c >= max || !allowed.contains(&c)) {
        return Err(affinity_error(&format!("CPU {bad} is not available")));
    }
    let mut set = CpuSet::empty();
    for &c in cpus {
        set.insert(c);
    }
    let Err(err) = sched_setaffinity(&set) else {
        return Ok(());
    };
    let is_deadline = matches!(current_thread_policy(), Ok(Policy::Deadline { .. }));
    Err(match err.raw_os_error() {
        Some(libc::EBUSY) | Some(libc::EPERM) if is_deadline => HostError::DeadlineAffinity,
        Some(libc::EINVAL) => affinity_error("the kernel refused the set (EINVAL)"),
        _ => HostError::Os {
            call: "sched_setaffinity",
            source: err,
        },
    })
}

/// Memory locked with `mlockall(MCL_CURRENT | MCL_FUTURE)`; unlocked on drop.
#[derive(Debug)]
pub struct MemoryLock(());

/// How many [`MemoryLock`]s are alive (so a failed thread start can be
/// blamed on RLIMIT_MEMLOCK only while memory is locked).
static MEMORY_LOCKS: AtomicUsize = AtomicUsize::new(0);

/// Locks all current and future memory of the process, so no page fault
/// lands inside a measurement. Unprivileged (no CAP_IPC_LOCK), everything
/// locked, thread stacks created later included, counts against
/// RLIMIT_MEMLOCK; the errors say so, with the limit in force.
pub fn lock_memory() -> Result<MemoryLock, HostError> {
    if let Err(error) = mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) {
        return Err(HostError::MemoryLock {
            error,
            limit: memlock_limit(),
        });
    }
    MEMORY_LOCKS.fetch_add(1, Ordering::SeqCst);
    Ok(MemoryLock(()))
}

impl Drop for MemoryLock {
    fn drop(&mut self) {
        if MEMORY_LOCKS.fetch_sub(1, Ordering::SeqCst) == 1 {
            // Failure leaves memory locked, which is harmless.
            let _ = munlockall();
        }
    }
}

impl HostError {
    /// A thread that could not be started: when memory is locked and the
    /// kernel said EAGAIN or ENOMEM, the cause is RLIMIT_MEMLOCK, and the
    /// error says so with the fixes. (Here, beside [`memory_is_locked`],
    /// so that the error type needs nothing from this module.)
    pub fn spawn(name: String, source: std::io::Error) -> HostError {
        let out_of_lockable = matches!(source.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM));
        if out_of_lockable && memory_is_locked() {
            HostError::MemoryLockLimit {
                name,
                limit: memlock_limit(),
            }
        } else {
            HostError::Spawn { name, source }
        }
    }
}

/// True while a [`MemoryLock`] is held.
pub fn memory_is_locked() -> bool {
    MEMORY_LOCKS.load(Ordering::SeqCst) > 0
}

/// The soft RLIMIT_MEMLOCK in words: `unlimited`, `8 MiB`, `64 KiB`.
pub fn memlock_limit() -> String {
    let Ok(limit) = getrlimit(libc::RLIMIT_MEMLOCK) else {
        return "unknown".to_string();
    };
    match limit.rlim_cur {
        libc::RLIM_INFINITY => "unlimited".to_string(),
        b if b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b % 1024 == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// `/dev/cpu_dma_latency` held open at 0 µs, which keeps CPUs out of deep
/// idle states for as long as it lives (the kernel drops the request when the
/// file is closed, also when the process is killed).
#[derive(Debug)]
pub struct DmaLatencyGuard {
    // Closed first, then the record removed.
    _file: File,
    _record: Option<SettingGuard>,
}

/// Where the CPU latency QoS request is made.
pub const DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// Asks the kernel for 0 µs exit latency from idle states until the guard is
/// dropped. Needs root. The hold is recorded in the state directory (see
/// [`crate::kernel_state`]) for `rtlab doctor`; as the kernel undoes it by
/// itself, a record that cannot be written does not stop the hold.
pub fn hold_dma_latency_zero() -> Result<DmaLatencyGuard, HostError> {
    let path = std::path::Path::new(DMA_LATENCY);
    let record = kernel_state::ledger()
        .and_then(|l| l.record_dma_latency(path, read_dma_latency().ok(), 0))
        .ok();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(HostError::DmaLatency)?;
    file.write_all(&0i32.to_ne_bytes())
        .map_err(HostError::DmaLatency)?;
    Ok(DmaLatencyGuard {
        _file: file,
        _record: record,
    })
}

/// The CPU latency limit in force (microseconds; 2000000000 means no
/// request): what reading `/dev/cpu_dma_latency` returns, a native-endian
/// 32-bit integer. Needs root.
pub fn read_dma_latency() -> std::io::Result<i32> {
    let mut bytes = [0u8; 4];
    File::open(DMA_LATENCY)?.read_exact(&mut bytes)?;
    Ok(i32::from_ne_bytes(bytes))
}

/// The RT-throttling settings: FIFO/RR threads may run `runtime_us` in every
/// `period_us` (per CPU); `runtime_us = -1` disables throttling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtThrottling {
    /// `/proc/sys/kernel/sched_rt_runtime_us`.
    pub runtime_us: i64,
    /// `/proc/sys/kernel/sched_rt_period_us`.
    pub period_us: u64,
}

impl From<RtThrottling> for rtlab_model::schema::RtThrottlingDocument {
    fn from(t: RtThrottling) -> Self {
        Self {
            period_us: t.period_us,
            runtime_us: t.runtime_us,
        }
    }
}

impl RtThrottling {
    /// Reads the settings from /proc.
    pub fn read() -> Result<RtThrottling, HostError> {
        let read = |path: &str| -> Result<String, HostError> {
            std::fs::read_to_string(path).map_err(|source| HostError::Os {
                call: "read /proc/sys/kernel/sched_rt_*",
                source,
            })
        };
        let bad = |what: &str| HostError::Invalid {
            what: what.to_string(),
            why: "not a number".into(),
        };
        let runtime_us = read("/proc/sys/kernel/sched_rt_runtime_us")?
            .trim()
            .parse()
            .map_err(|_| bad("sched_rt_runtime_us"))?;
        let period_us = read("/proc/sys/kernel/sched_rt_period_us")?
            .trim()
            .parse()
            .map_err(|_| bad("sched_rt_period_us"))?;
        Ok(RtThrottling {
            runtime_us,
            period_us,
        })
    }

    /// The share of each CPU that RT threads may use, or `None` when
    /// throttling is off.
    pub fn limit(&self) -> Option<f64> {
        (self.runtime_us >= 0 && self.period_us > 0)
            .then(|| self.runtime_us as f64 / self.period_us as f64)
    }

    /// E.g. `0.950 (950000 us per 1000000 us)` or `unlimited`.
    pub fn describe_limit(&self) -> String {
        match self.limit() {
            Some(l) => format!("{l:.3} ({} us per {} us)", self.runtime_us, self.period_us),
            None => "unlimited (sched_rt_runtime_us = -1)".into(),
        }
    }

    /// Whether a thread that keeps a CPU busy for `share` of the time (work
    /// plus wake-up cost plus busy-waiting) can be throttled.
    pub fn can_throttle(&self, share: f64) -> bool {
        self.limit().is_some_and(|l| share >= l)
    }
}

/// The share of each CPU that Linux 6.12 and later reserve from the
/// SCHED_DEADLINE bandwidth for the fair server (the `dl_server` that keeps
/// SCHED_OTHER from starving: 50 ms every 1 s by default); 0 on older
/// kernels. Its parameters live in debugfs, which may be unreadable, so
/// this is the kernel's default, checked against admission on this machine
/// kind (a lone task above 0.90 of a CPU is refused).
pub fn fair_server_share() -> f64 {
    if kernel_at_least(6, 12) {
        0.05
    } else {
        0.0
    }
}

fn fair_server_note() -> String {
    if fair_server_share() > 0.0 {
        "; Linux 6.12 and later also reserve 0.050 of each CPU for the fair server, so about 0.900 \
         is left for tasks (`rtlab run --no-rt-throttling` lifts the limit for a run)"
            .into()
    } else {
        String::new()
    }
}

/// True when the running kernel's version is at least `major.minor`.
pub fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

/// RT throttling and SCHED_DEADLINE admission control switched off for as
/// long as this guard lives (`sched_rt_runtime_us = -1`); the previous value
/// is written back on drop. The change goes through the
/// [`kernel_state`] ledger: recorded in `/run/rtlab` first, so that after a
/// SIGKILL the next rtlab command (or `rtlab doctor --restore`) writes the
/// original back, and refused while another live rtlab has it off.
#[derive(Debug)]
pub struct RtThrottlingOff {
    _guard: SettingGuard,
}

/// The RT runtime per period, -1 for unlimited.
pub const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";

impl RtThrottlingOff {
    /// Writes -1 to /proc/sys/kernel/sched_rt_runtime_us (needs root).
    pub fn new() -> Result<RtThrottlingOff, HostError> {
        let guard = kernel_state::ledger()?.set_value(std::path::Path::new(RT_RUNTIME), "-1")?;
        Ok(RtThrottlingOff { _guard: guard })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a thread of its own (affinity is per thread): the CPU is left out
    /// while the guard lives and the old affinity comes back on drop; with
    /// a single CPU nothing moves.
    #[test]
    fn kept_off_cpu_leaves_one_cpu_out_and_restores_the_affinity() {
        std::thread::spawn(|| {
            let before = allowed_cpus().unwrap();
            let cpu = before[0];
            let away = KeptOffCpu::new(cpu);
            if before.len() > 1 {
                assert!(away.moved());
                let during = allowed_cpus().unwrap();
                assert_eq!(
                    during,
                    before
                        .iter()
                        .copied()
                        .filter(|&c| c != cpu)
                        .collect::<Vec<_>>()
                );
            } else {
                assert!(!away.moved());
                assert_eq!(allowed_cpus().unwrap(), before);
            }
            drop(away);
            assert_eq!(allowed_cpus().unwrap(), before);
            let pinned_alone = KeptOffCpu::new(usize::MAX);
            assert_eq!(
                allowed_cpus().unwrap(),
                before,
                "a CPU not in the set: same set"
            );
            drop(pinned_alone);
            assert_eq!(allowed_cpus().unwrap(), before);
        })
        .join()
        .unwrap();
    }

    /// SCHED_FLAG_RECLAIM is asked for only with a deadline policy, and the
    /// kernel keeps it (read back with sched_getattr). Needs root.
    #[test]
    #[ignore = "needs root"]
    fn reclaiming_deadline_threads_carry_the_flag() {
        rtlab_testkit::require_root();
        let dl = Policy::Deadline {
            runtime: Nanos::from_us(100),
            deadline: Nanos::from_ms(100),
            period: Nanos::from_ms(100),
        };
        let read_back = |policy: Policy, reclaim: bool| {
            std::thread::spawn(move || {
                set_current_thread_policy_reclaiming(&policy, reclaim)
                    .map(|()| current_thread_reclaims().unwrap())
            })
            .join()
            .unwrap()
        };
        match read_back(dl, true) {
            Ok(flag) => assert!(flag),
            // Another run's cpuset narrows the root domain: a thread that
            // may run on every CPU is refused there; not what is tested.
            Err(e @ (HostError::DeadlineAffinity | HostError::DeadlineAdmission { .. })) => {
                rtlab_testkit::unavailable(e);
                return;
            }
            Err(e) => panic!("{e}"),
        }
        assert!(!read_back(dl, false).unwrap());
        assert!(!read_back(Policy::Other { nice: 0 }, true).unwrap());
    }

    #[test]
    fn this_kernel_is_at_least_version_2_6() {
        assert!(kernel_at_least(2, 6));
        assert!(!kernel_at_least(999, 0));
    }

    /// A thread refused (EAGAIN/ENOMEM) while memory is not locked is the
    /// plain spawn error.
    #[test]
    fn a_refused_thread_without_mlockall_is_the_plain_spawn_error() {
        let eagain = || std::io::Error::from_raw_os_error(libc::EAGAIN);
        let plain = HostError::spawn("rtlab-t1".into(), eagain());
        assert!(matches!(plain, HostError::Spawn { .. }), "{plain}");
    }

    /// A thread refused (EAGAIN/ENOMEM) while memory is locked is blamed on
    /// RLIMIT_MEMLOCK with the limit and the fixes; another error stays the
    /// plain spawn error. Locking memory needs root here.
    #[test]
    #[ignore = "needs root"]
    fn a_refused_thread_under_mlockall_names_rlimit_memlock() {
        rtlab_testkit::require_root();
        let eagain = || std::io::Error::from_raw_os_error(libc::EAGAIN);
        let lock = lock_memory().expect("mlockall as root");
        let e = HostError::spawn("rtlab-t1".into(), eagain());
        let other = HostError::spawn(
            "rtlab-t1".into(),
            std::io::Error::from_raw_os_error(libc::EINVAL),
        );
        drop(lock);
        let text = e.to_string();
        assert!(matches!(e, HostError::MemoryLockLimit { .. }), "{text}");
        assert!(
            text.starts_with("cannot start thread `rtlab-t1`: memory is locked (mlockall)"),
            "{text}"
        );
        for needed in [
            "RLIMIT_MEMLOCK, which is ",
            "ulimit -l unlimited",
            "CAP_IPC_LOCK",
            "--no-mlock",
        ] {
            assert!(text.contains(needed), "{text}");
        }
        assert!(matches!(other, HostError::Spawn { .. }), "{other}");
    }

    #[test]
    fn the_memlock_limit_reads_in_words() {
        let limit = memlock_limit();
        assert!(
            limit == "unlimited" || limit.ends_with("iB") || limit.ends_with("bytes"),
            "{limit}"
        );
    }

    #[test]
    fn sched_attr_has_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<SchedAttr>(), 48);
    }

    #[test]
    fn validation_explains_bad_parameters() {
        let e = Policy::Fifo { priority: 0 }.validate().unwrap_err();
        assert!(e.to_string().contains("1..=99"), "{e}");
        let e = Policy::Other { nice: 25 }.validate().unwrap_err();
        assert!(e.to_string().contains("-20..=19"), "{e}");
        let e = Policy::Deadline {
            runtime: Nanos::from_ms(2),
            deadline: Nanos::from_ms(1),
            period: Nanos::from_ms(10),
        }
        .validate()
        .unwrap_err();
        assert!(
            e.to_string().contains("runtime <= deadline <= period"),
            "{e}"
        );
        assert!(Policy::RoundRobin { priority: 99 }.validate().is_ok());
    }

    #[test]
    fn names() {
        let p = Policy::RoundRobin { priority: 10 };
        assert_eq!(
            (p.kernel_name(), p.short_name(), p.priority()),
            ("SCHED_RR", "rr", 10)
        );
        assert_eq!(p.to_string(), "SCHED_RR priority 10");
    }

    #[test]
    fn throttling_limit() {
        let t = RtThrottling {
            runtime_us: 950_000,
            period_us: 1_000_000,
        };
        assert_eq!(t.limit(), Some(0.95));
        assert!(t.can_throttle(0.96));
        assert!(!t.can_throttle(0.5));
        let off = RtThrottling {
            runtime_us: -1,
            period_us: 1_000_000,
        };
        assert_eq!(off.limit(), None);
        assert!(!off.can_throttle(1.0));
        assert!(RtThrottling::read().is_ok());
    }

    #[test]
    fn allowed_cpus_is_not_empty_and_pinning_to_one_works() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
        let cpu = *cpus.last().unwrap();
        std::thread::spawn(move || {
            set_current_thread_affinity(&[cpu]).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![cpu]);
            let e = set_current_thread_affinity(&[4096]).unwrap_err();
            assert!(e.to_string().contains("not available"), "{e}");
        })
        .join()
        .unwrap();
    }
}
