//! The input of the report: one run as the results store keeps it. The
//! store hands the report these values; `rtlab report --from-json` reads
//! them from files in the same shape.

use serde::{Deserialize, Serialize};

/// One stored run of an rtlab command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunView {
    /// The store's id (0 for a run that was never stored).
    pub id: i64,
    /// When it was made (RFC 3339).
    pub created: String,
    /// rtlab's version that made it.
    pub rtlab_version: String,
    /// The full command line.
    pub command: String,
    /// `sim`, `run`, `latency`, `sweep`, `analyze`, `compare` or `lag-study`.
    pub kind: String,
    /// The input task set's text, where the command had one.
    #[serde(default)]
    pub taskset: Option<String>,
    /// Host metadata (kernel, preemption model, CPU, ...), an object.
    #[serde(default)]
    pub host: serde_json::Value,
    /// Exactly what the command's `--json` prints.
    pub document: serde_json::Value,
    /// `complete` or `interrupted`.
    pub status: String,
    /// Per-job records (run, sim, compare).
    #[serde(default)]
    pub jobs: Vec<JobRow>,
    /// Per-sample records (latency).
    #[serde(default)]
    pub samples: Vec<SampleRow>,
}

impl RunView {
    /// A run that is not stored (id 0, no time, no host): what a command
    /// draws its own `--plot` from.
    pub fn unsaved(kind: &str, document: serde_json::Value) -> RunView {
        RunView {
            id: 0,
            created: String::new(),
            rtlab_version: env!("CARGO_PKG_VERSION").to_string(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            kind: kind.to_string(),
            taskset: None,
            host: serde_json::Value::Null,
            document,
            status: "complete".to_string(),
            jobs: Vec::new(),
            samples: Vec::new(),
        }
    }

    /// The same run with `command` as its command line.
    pub fn with_command(mut self, command: &str) -> RunView {
        self.command = command.to_string();
        self
    }
}

/// One job of one task; times in ns from the run's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRow {
    /// Task name.
    pub task: String,
    /// Job number k (released at offset + kT).
    pub job: u64,
    /// Release time.
    pub release_ns: u64,
    /// Absolute deadline.
    pub deadline_ns: u64,
    /// When the job first ran (`None`: never started).
    pub start_ns: Option<u64>,
    /// When it completed (`None`: unfinished).
    pub finish_ns: Option<u64>,
    /// Times it was preempted.
    pub preemptions: u64,
    /// Times its thread gave up the CPU by itself.
    pub voluntary_switches: u64,
    /// The CPU it finished on.
    pub cpu: Option<u32>,
}

/// One wake-up of a latency thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleRow {
    /// Thread number.
    pub thread: u32,
    /// Loop number.
    pub seq: u64,
    /// Time of the wake-up from the start of the run.
    pub t_ns: u64,
    /// Wake-up latency.
    pub latency_ns: u64,
}
