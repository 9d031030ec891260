//! Why a generator refused its settings.

/// A generator setting that cannot produce a task set, or a draw that gave up.
///
/// Messages are one line and name the setting the way the `rtlab generate`
/// command line spells it: `--tasks`, `--utilization`, `--method`,
/// `--max-task-utilization`, `--periods`, `--period-min`, `--period-max`,
/// `--period-granularity` and `--deadlines`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// A setting is outside its allowed range, e.g. `--utilization must be > 0`.
    #[error("{setting} {problem}")]
    InvalidSetting {
        /// The setting, spelled as its command-line flag (`--utilization`).
        setting: &'static str,
        /// What is wrong with it, starting with a verb (`must be > 0`).
        problem: String,
    },
    /// A name (method, period distribution, deadline model) that is not known.
    #[error("unknown {what} `{name}` (expected {expected})")]
    UnknownName {
        /// What was being named, e.g. `utilization method`.
        what: &'static str,
        /// The name as given.
        name: String,
        /// The accepted names, for the message.
        expected: &'static str,
    },
    /// UUniFast-Discard drew `attempts` vectors and every one had a task above the cap.
    #[error(
        "uunifast-discard found no utilizations with every task at most {cap} in {attempts} attempts \
         (--tasks {tasks}, --utilization {total}); lower --utilization or use --method randfixedsum"
    )]
    DiscardExhausted {
        /// Vectors drawn before giving up.
        attempts: usize,
        /// Number of tasks n.
        tasks: usize,
        /// Target total utilization U.
        total: f64,
        /// Per-task cap (`--max-task-utilization`).
        cap: f64,
    },
    /// RandFixedSum was asked for a total that n values in [lo, hi] cannot reach.
    #[error(
        "--utilization {total} is outside [{min}, {max}], the totals {tasks} tasks with utilization in [{lo}, {hi}] can reach"
    )]
    TotalOutOfRange {
        /// Target total utilization U.
        total: f64,
        /// Number of tasks n.
        tasks: usize,
        /// Lower bound on each value.
        lo: f64,
        /// Upper bound on each value.
        hi: f64,
        /// `n * lo`.
        min: f64,
        /// `n * hi`.
        max: f64,
    },
    /// RandFixedSum's transition table for these settings would exceed its
    /// memory limit ([`RANDFIXEDSUM_MAX_TABLE_ENTRIES`](super::RANDFIXEDSUM_MAX_TABLE_ENTRIES)).
    #[error(
        "--method randfixedsum with --tasks {tasks} and --utilization {total} needs a table of \
         {entries} entries, above its limit of {limit} ({} MiB); lower --tasks or --utilization, \
         or use --method uunifast-discard",
        limit * 8 / (1 << 20)
    )]
    TableTooLarge {
        /// Number of tasks n.
        tasks: usize,
        /// Target total utilization U.
        total: f64,
        /// Entries the table would have.
        entries: u64,
        /// The limit on entries.
        limit: u64,
    },
}

impl GenerateError {
    pub(crate) fn invalid(setting: &'static str, problem: impl Into<String>) -> GenerateError {
        GenerateError::InvalidSetting {
            setting,
            problem: problem.into(),
        }
    }
}
