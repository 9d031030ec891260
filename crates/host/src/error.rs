//! What the host refused (a policy, affinity, memory locking, a cpuset, a
//! kernel setting), in words that say what to do about it.

use rtlab_model::Nanos;

/// Why a request to the host (policy, affinity, memory locking, a cpuset,
/// a kernel setting) failed.
///
/// Each message names the cause and the fix, because the person who reads it
/// is setting up a machine, not debugging rtlab.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// A real-time policy (or a negative nice) was refused for lack of
    /// privilege (EPERM).
    #[error(
        "{what} needs root or CAP_SYS_NICE: run with sudo, or `setcap cap_sys_nice+ep <rtlab binary>`{hint}"
    )]
    NeedsPrivilege {
        /// What was asked for, e.g. `SCHED_FIFO priority 99`.
        what: String,
        /// A further way out, e.g. an rlimit; empty or starting with `; `.
        hint: String,
    },
    /// A real-time policy was refused although the process is privileged:
    /// its cgroup has no real-time runtime (cgroup v1 `cpu.rt_runtime_us`).
    #[error(
        "{what} was refused although this process is privileged: its cgroup probably has no real-time \
         runtime (cpu.rt_runtime_us = 0 under /sys/fs/cgroup/cpu); run it from the root cgroup or give \
         the cgroup RT runtime"
    )]
    NoRtRuntimeInCgroup {
        /// What was asked for.
        what: String,
    },
    /// SCHED_DEADLINE refused because the thread may run on fewer CPUs than
    /// its root domain (EPERM as root).
    #[error(
        "SCHED_DEADLINE refused: a deadline thread must be allowed on every CPU of its root domain, \
         so do not combine it with --affinity; to run EDF on one CPU, put the process in an exclusive \
         cpuset with load balancing off at the root (kernel Documentation/scheduler/sched-deadline.rst, section 5)"
    )]
    DeadlineAffinity,
    /// SCHED_DEADLINE admission control refused the bandwidth (EBUSY).
    #[error(
        "SCHED_DEADLINE admission refused: runtime {runtime} / period {period} = {bandwidth:.3} of a CPU, \
         added to the deadline threads already admitted, exceeds the limit \
         sched_rt_runtime_us / sched_rt_period_us = {limit} per CPU (see /proc/sys/kernel/sched_rt_runtime_us){note}; \
         ask for less runtime, a longer period, or fewer threads"
    )]
    DeadlineAdmission {
        /// Requested runtime.
        runtime: Nanos,
        /// Requested period.
        period: Nanos,
        /// runtime / period.
        bandwidth: f64,
        /// The limit in force, e.g. `0.950` or `unlimited`.
        limit: String,
        /// More on the limit (the fair server's share), empty or starting with `; `.
        note: String,
    },
    /// A parameter the kernel (or rtlab, before asking it) refuses (EINVAL).
    #[error("invalid {what}: {why}")]
    Invalid {
        /// What was wrong, e.g. `SCHED_FIFO priority 0`.
        what: String,
        /// Why, and what is accepted.
        why: String,
    },
    /// An affinity naming CPUs that cannot be used.
    #[error(
        "cannot pin to CPU(s) {cpus:?}: {why} (this process may use CPUs {allowed:?}; see `nproc` and /sys/devices/system/cpu/online)"
    )]
    Affinity {
        /// The CPUs asked for.
        cpus: Vec<usize>,
        /// The CPUs this process may use.
        allowed: Vec<usize>,
        /// The kernel's reason, in words.
        why: String,
    },
    /// `mlockall` refused: the process needs more locked memory than
    /// RLIMIT_MEMLOCK allows (or the limit is 0) and it is not privileged.
    #[error(
        "cannot lock memory (mlockall): {error}: RLIMIT_MEMLOCK is {limit} for this user, less than the process \
         needs; {MEMLOCK_FIXES}"
    )]
    MemoryLock {
        /// errno of `mlockall`.
        error: std::io::Error,
        /// The soft limit in force, e.g. `8 MiB`.
        limit: String,
    },
    /// With memory locked (`mlockall(MCL_FUTURE)`), every new mapping, a
    /// thread's stack among them, is locked too and counts against
    /// RLIMIT_MEMLOCK; past the limit the kernel refuses it (EAGAIN/ENOMEM).
    #[error(
        "cannot start thread `{name}`: memory is locked (mlockall) and each new thread's stack counts against \
         RLIMIT_MEMLOCK, which is {limit} for this user; {MEMLOCK_FIXES}"
    )]
    MemoryLockLimit {
        /// The thread's name.
        name: String,
        /// The soft limit in force, e.g. `8 MiB`.
        limit: String,
    },
    /// `/dev/cpu_dma_latency` could not be opened or written.
    #[error(
        "cannot hold /dev/cpu_dma_latency at 0: {0}; it needs root (CPU idle states stay enabled, which adds wake-up latency)"
    )]
    DmaLatency(std::io::Error),
    /// Any other failed system call.
    #[error("{call} failed: {source}")]
    Os {
        /// The call, e.g. `sched_setattr`.
        call: &'static str,
        /// errno as an I/O error.
        source: std::io::Error,
    },
    /// The exclusive cpuset that confines SCHED_DEADLINE threads to one CPU
    /// could not be set up.
    #[error(
        "cannot confine the SCHED_DEADLINE threads to CPU {cpu}: {why}; EDF on one CPU needs root and \
         a cgroup-v1 cpuset hierarchy at /sys/fs/cgroup/cpuset (kernel Documentation/scheduler/sched-deadline.rst, \
         section 5); or use --no-pin to run global EDF on every CPU"
    )]
    Cpuset {
        /// The CPU asked for.
        cpu: usize,
        /// What failed, with the path.
        why: String,
    },
    /// The exclusive cpusets that make each domain of a partitioned or
    /// clustered SCHED_DEADLINE run a root domain of its own could not be
    /// set up (or would take CPUs another tool's cpusets hold).
    #[error("cannot make CPUs {cpus} a SCHED_DEADLINE root domain of their own: {why}")]
    CpusetDomain {
        /// The domain's CPUs, e.g. `0` or `2,3`.
        cpus: String,
        /// What failed or stands in the way, with the path.
        why: String,
    },
    /// `--isolate`: the shield of the measured CPUs is refused or could
    /// not be raised.
    #[error("--isolate: cannot shield CPU {cpus}: {why}")]
    Shield {
        /// The measured CPUs, e.g. `1`.
        cpus: String,
        /// Why, and what to do.
        why: String,
    },
    /// A kernel setting could not be changed, or its original not recorded
    /// (see [`crate::kernel_state`]); e.g. another live rtlab holds it.
    #[error(transparent)]
    KernelState(#[from] crate::kernel_state::StateError),
    /// A thread could not be started.
    #[error("cannot start thread `{name}`: {source}")]
    Spawn {
        /// The thread's name.
        name: String,
        /// Why.
        source: std::io::Error,
    },
}

/// What to do when RLIMIT_MEMLOCK is too small for `mlockall`.
const MEMLOCK_FIXES: &str = "raise it (`ulimit -l unlimited`, or `memlock` in /etc/security/limits.conf), run as root \
     or with CAP_IPC_LOCK, or do not lock memory (`rtlab run --no-mlock`; `rtlab latency` and `rtlab lag-study` \
     without -m)";

impl HostError {
    /// Turns the OS error of `call` into a [`HostError::Os`], for `map_err`.
    pub fn os(call: &'static str) -> impl FnOnce(std::io::Error) -> HostError {
        move |source| HostError::Os { call, source }
    }
}
