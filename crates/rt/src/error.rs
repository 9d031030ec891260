//! Errors of the runtime, in words that say what to do about them.

use rtlab_host::HostError;

/// Why a run or measurement failed: what the host refused ([`RtError::Host`]),
/// or a setting or set that rtlab refuses before starting.
///
/// Each message names the cause and the fix, because the person who reads it
/// is setting up a machine, not debugging rtlab.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RtError {
    /// What the host refused: a policy, affinity, memory locking, a
    /// cpuset, a kernel setting.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The kernel trace asked for could not be started.
    #[error(transparent)]
    KernelTrace(#[from] rtlab_ktrace::TraceError),
    /// The WCETs of a SCHED_DEADLINE run alone exceed what admission control
    /// allows on the CPUs it uses, so some thread would be refused. Sums
    /// are in the kernel's units ([`rtlab_host::dl_bandwidth`]), so the
    /// excess shows even where three decimals would not.
    #[error(
        "the WCETs alone need sum C/T = {need} of {cpus} CPU(s) in the kernel's units of 2^-20 of a CPU, \
         {over} more than SCHED_DEADLINE admission allows, {limit}; run with --no-rt-throttling \
         (lifts the limit for the run), on more CPUs (--no-pin), or with a lighter set"
    )]
    DeadlineOverLimit {
        /// Sum of C/T, in the kernel's units and as a share.
        need: String,
        /// By how much it exceeds the limit.
        over: String,
        /// CPUs the run uses.
        cpus: usize,
        /// The admission limit for those CPUs and how it is made up.
        limit: String,
    },
    /// A root domain of a multiprocessor SCHED_DEADLINE run (one CPU under
    /// pedf, a cluster under cedf, every CPU under gedf) whose tasks' WCETs
    /// alone exceed what admission control allows on it.
    #[error(
        "SCHED_DEADLINE admission: the tasks on CPU(s) {cpus} ({tasks}) need sum C/T = {need} in the \
         kernel's units of 2^-20 of a CPU, {over} more than that root domain admits, {limit}; \
         place them otherwise (--partition, the file's cpu fields), use more CPUs, or run with \
         --no-rt-throttling (lifts the limit for the run); nothing was changed"
    )]
    DomainOverLimit {
        /// The domain's CPUs.
        cpus: String,
        /// Its tasks, quoted.
        tasks: String,
        /// Sum of C/T of its tasks, in the kernel's units and as a share.
        need: String,
        /// By how much it exceeds the limit.
        over: String,
        /// The admission limit of the domain and how it is made up.
        limit: String,
    },
    /// A phase during which the SCHED_DEADLINE threads' budgets sum above
    /// what admission control accepts (every thread keeps its bandwidth for
    /// the whole run, a suspended one or a phase's task outside its phase
    /// included).
    #[error("{phase} makes the SCHED_DEADLINE set inadmissible: its budgets need sum runtime/period = {need} in the kernel's units of 2^-20 of a CPU, {over} more than {limit} admits on {cpus} CPU{}; add --no-rt-throttling to switch admission control off for the run", if *.cpus == 1 { "" } else { "s" })]
    PhaseOverLimit {
        /// `phase 30s..45s:120%`, or `the phases' tasks` before any phase.
        phase: String,
        /// Sum of runtime/period in it, in the kernel's units and as a share.
        need: String,
        /// By how much it exceeds the limit.
        over: String,
        /// CPUs the run uses.
        cpus: usize,
        /// The admission limit for those CPUs and how it is made up.
        limit: String,
    },
    /// A setting of a run or measurement that rtlab refuses before starting:
    /// `invalid {setting} {value}: {why}`, e.g. `invalid interval 5us: use at
    /// least 10us` (the CLI names the flag, `--{setting}`).
    #[error("invalid {setting}{}: {why}", .value.as_ref().map(|v| format!(" {v}")).unwrap_or_default())]
    Setting {
        /// The setting: `duration`, `interval`, `threads`, `outliers`, `periods`.
        setting: &'static str,
        /// The value refused, when the message shows it.
        value: Option<String>,
        /// Why, and what is accepted.
        why: String,
    },
    /// Latency histograms too large: `threads` x `buckets` above `max` cells.
    #[error("invalid {threads} threads x {buckets} histogram buckets: use at most {max} buckets in all (128 MiB)")]
    HistogramCells {
        /// Measuring threads.
        threads: usize,
        /// Buckets per thread.
        buckets: usize,
        /// The most buckets over all threads.
        max: usize,
    },
    /// A parameter the kernel (or rtlab, before asking it) refuses (EINVAL).
    #[error("invalid {what}: {why}")]
    Invalid {
        /// What was wrong, e.g. `SCHED_FIFO priority 0`.
        what: String,
        /// Why, and what is accepted.
        why: String,
    },
    /// rt-app (`rtlab compare --with rt-app`) could not be run, or its
    /// logs not read.
    #[error("rt-app: {why}")]
    RtApp {
        /// What failed, in one line.
        why: String,
    },
}

impl From<rtlab_host::kernel_state::StateError> for RtError {
    fn from(e: rtlab_host::kernel_state::StateError) -> RtError {
        RtError::Host(HostError::from(e))
    }
}

impl RtError {
    /// SCHED_DEADLINE refused the set: its WCETs alone exceed the admission
    /// limit of its CPUs or of one root domain of a multiprocessor run
    /// (checked before asking, [`RtError::DeadlineOverLimit`],
    /// [`RtError::DomainOverLimit`]) or the kernel's admission control said
    /// EBUSY ([`HostError::DeadlineAdmission`]). Experiments (the demo,
    /// breakdown, Hartstone, the studies) record such a set as refused
    /// instead of failing.
    pub fn is_admission_refusal(&self) -> bool {
        matches!(
            self,
            RtError::DeadlineOverLimit { .. }
                | RtError::DomainOverLimit { .. }
                | RtError::Host(HostError::DeadlineAdmission { .. })
        )
    }

    /// A thread that could not be started ([`HostError::spawn`]).
    pub fn spawn(name: String, source: std::io::Error) -> RtError {
        RtError::Host(HostError::spawn(name, source))
    }

    /// Turns the OS error of `call` into a [`HostError::Os`], for `map_err`.
    pub fn os(call: &'static str) -> impl FnOnce(std::io::Error) -> RtError {
        move |source| RtError::Host(HostError::Os { call, source })
    }
}
