//! Errors the analysis reports instead of panicking.

/// Why an analysis could not run on a task set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisError {
    /// The task set has no tasks.
    #[error("the task set has no tasks")]
    EmptySet,
    /// Policy `given` needs an explicit priority on every task.
    #[error("task `{0}` has no priority (policy `given` needs `priority = N` on every task; larger is more urgent)")]
    MissingPriority(String),
    /// An overhead-aware test was asked for without overheads.
    #[error(
        "{0} charges scheduler overheads and was given none (an overheads file or builtin:rtmach)"
    )]
    MissingOverheads(String),
    /// A global fixed-priority analysis needs a strict order.
    #[error("task `{0}` shares its priority level with another task (global fixed-priority analysis needs distinct priorities)")]
    SharedPriority(String),
    /// A period, deadline or execution time of zero reached the analysis.
    #[error("task `{0}` has a zero period, deadline or wcet (validate the task set first)")]
    ZeroParameter(String),
}
