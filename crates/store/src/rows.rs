//! The plain data that goes in and comes out of the store.

use serde::{Deserialize, Serialize};

/// Which command produced a run (the `kind` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunKind {
    /// `rtlab sim`.
    Sim,
    /// `rtlab run`.
    Run,
    /// `rtlab latency`.
    Latency,
    /// `rtlab sweep`.
    Sweep,
    /// `rtlab analyze`.
    Analyze,
    /// `rtlab compare`.
    Compare,
    /// `rtlab lag-study`.
    LagStudy,
    /// `rtlab hartstone`.
    Hartstone,
    /// `rtlab breakdown`.
    Breakdown,
    /// `rtlab characterize`.
    Characterize,
    /// `rtlab study` (paper 001's EDF-versus-FPS study).
    Study,
}

impl RunKind {
    /// The text stored in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Sim => "sim",
            RunKind::Run => "run",
            RunKind::Latency => "latency",
            RunKind::Sweep => "sweep",
            RunKind::Analyze => "analyze",
            RunKind::Compare => "compare",
            RunKind::LagStudy => "lag-study",
            RunKind::Hartstone => "hartstone",
            RunKind::Breakdown => "breakdown",
            RunKind::Characterize => "characterize",
            RunKind::Study => "study",
        }
    }
}

impl std::fmt::Display for RunKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a run ended (the `status` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Ran to its end.
    Complete,
    /// Ended early by Ctrl-C / SIGTERM; what it measured until then is stored.
    Interrupted,
}

impl RunStatus {
    /// The text stored in the `status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// What is known about a run before its rows: everything but the document
/// and the status.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// rtlab's version.
    pub rtlab_version: String,
    /// The full command line.
    pub command: String,
    /// Which command.
    pub kind: RunKind,
    /// The input task set's text, when the command has one.
    pub taskset: Option<String>,
    /// Host metadata (kernel, CPU, ...), as JSON.
    pub host: serde_json::Value,
}

/// One job of a real or simulated run (the `jobs` table). Times are in ns
/// from the start of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRow {
    /// The task's name.
    pub task: String,
    /// The job's number within its task, from 0.
    pub job: u64,
    /// Release time.
    pub release_ns: u64,
    /// Absolute deadline.
    pub deadline_ns: u64,
    /// When it first ran, if it did.
    pub start_ns: Option<u64>,
    /// When it finished, if it did.
    pub finish_ns: Option<u64>,
    /// Times it was preempted (involuntary context switches).
    pub preemptions: u64,
    /// Voluntary context switches.
    pub voluntary_switches: u64,
    /// The CPU it finished on, where known.
    pub cpu: Option<u32>,
}

/// One latency sample (the `samples` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleRow {
    /// The measuring thread, from 0.
    pub thread: u32,
    /// The sample's number within its thread, from 0.
    pub seq: u64,
    /// When the thread should have woken, ns from the start.
    pub t_ns: u64,
    /// How late it woke, ns.
    pub latency_ns: u64,
}

/// A run as `rtlab results list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run's id.
    pub id: i64,
    /// When it was saved, RFC 3339 UTC.
    pub created: String,
    /// Which command.
    pub kind: String,
    /// `complete` or `interrupted`.
    pub status: String,
    /// The full command line.
    pub command: String,
    /// Stored job rows.
    pub jobs: u64,
    /// Stored sample rows.
    pub samples: u64,
}

/// A whole stored run (without its rows; see [`crate::Store::jobs`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// The run's id.
    pub id: i64,
    /// When it was saved, RFC 3339 UTC.
    pub created: String,
    /// The rtlab version that saved it.
    pub rtlab_version: String,
    /// The full command line.
    pub command: String,
    /// Which command (`sim`, `run`, `latency`, ...).
    pub kind: String,
    /// The input task set's text.
    pub taskset: Option<String>,
    /// Host metadata.
    pub host: serde_json::Value,
    /// The command's `--json` document.
    pub document: serde_json::Value,
    /// `complete` or `interrupted`.
    pub status: String,
}
