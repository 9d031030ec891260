//! The plain data that goes in and comes out of the store.

use rtlab_model::results::JobRecord;
use rtlab_model::{Nanos, TaskSet};
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

/// One job of a real or simulated run (the `jobs` table): every field of
/// the [`JobRecord`] it is made from ([`JobRow::from`]) but the demand,
/// with the task by name. Times are in ns from the start of the run.
///
/// The fields after `cpu` mean something only for some runs (the
/// multiprocessor simulator's CPUs and migrations, `--on-miss abort`,
/// critical sections): they are left out of the JSON when they hold their
/// default, so a uniprocessor run's rows print as they always did.
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
    /// The CPU it first ran on (the multiprocessor simulator only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_cpu: Option<u32>,
    /// Times it resumed on another CPU than the one it last ran on.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub migrations: u64,
    /// Removed at its deadline unfinished (`--on-miss abort`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub aborted: bool,
    /// Time spent waiting for its critical sections' locks (`None`: its
    /// task has none, or the run did not measure it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_ns: Option<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A job record of `set`'s run as a row: the record names its task by
/// index, the row by name (empty for an index the set does not have).
impl From<(&JobRecord, &TaskSet)> for JobRow {
    fn from((record, set): (&JobRecord, &TaskSet)) -> JobRow {
        JobRow {
            task: set
                .tasks
                .get(record.task)
                .map_or_else(String::new, |t| t.name.clone()),
            job: record.job,
            release_ns: record.release.as_ns(),
            deadline_ns: record.deadline.as_ns(),
            start_ns: record.start.map(Nanos::as_ns),
            finish_ns: record.finish.map(Nanos::as_ns),
            preemptions: record.involuntary_switches,
            voluntary_switches: record.voluntary_switches,
            cpu: record.cpu,
            start_cpu: record.start_cpu,
            migrations: record.migrations,
            aborted: record.aborted,
            blocked_ns: record.blocked.map(Nanos::as_ns),
        }
    }
}

impl JobRow {
    /// Missed its deadline, as [`JobRecord::missed`] decides: finished
    /// after it, aborted at it, or unfinished when a run that lasted
    /// `ended_ns` was past it.
    pub fn missed(&self, ended_ns: u64) -> bool {
        match self.finish_ns {
            Some(f) => f > self.deadline_ns,
            None => self.aborted || self.deadline_ns <= ended_ns,
        }
    }
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

impl StoredRun {
    /// How long the run lasted, in ns, as its document says (`ended_ns`
    /// of a real run, else `duration_ns`; a comparison's real side): what
    /// decides whether an unfinished job missed ([`JobRow::missed`]).
    pub fn ended_ns(&self) -> Option<u64> {
        run_end_ns(&self.document)
    }
}

/// How long the run of a command's `--json` document lasted, in ns
/// (`ended_ns` of a real run, else `duration_ns`; a comparison's `real`
/// side), when it says.
pub fn run_end_ns(document: &serde_json::Value) -> Option<u64> {
    let doc = document.get("real").unwrap_or(document);
    doc.get("ended_ns")
        .or_else(|| doc.get("duration_ns"))
        .and_then(serde_json::Value::as_u64)
}
