//! Why a kernel trace could not be recorded or read.

/// A kernel-trace failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The machine cannot trace (no tracefs, no permission): one line
    /// saying what is missing and how to get it.
    #[error("{0}")]
    Unavailable(String),
    /// A tracefs or trace-file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was tried, with the path.
        what: String,
        /// Why.
        source: std::io::Error,
    },
    /// A trace file that is not one (wrong magic, bad header).
    #[error("{path}: not an rtlab kernel trace ({why})")]
    NotATrace {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
}
