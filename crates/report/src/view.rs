//! The input of the report: one run as the results store keeps it. The
//! store hands the report these values; `rtlab report --from-json` reads
//! them from files in the same shape.

use rtlab_model::results::ScheduleSpan;
use serde::{Deserialize, Serialize};

/// Job rows of one run the report reads at most: about 270 MB in memory
/// (a row is about 135 bytes). A stored run with more is refused in words;
/// its rows can still be exported (`rtlab results export`).
pub const MAX_REPORT_JOB_ROWS: u64 = 2_000_000;

/// Sample rows of one run the report reads at most (about 56 bytes each
/// with the per-thread series drawn from them: 224 MB).
pub const MAX_REPORT_SAMPLE_ROWS: u64 = 4_000_000;

/// Bytes of a `--from-json` file the report reads at most: a parsed JSON
/// value takes up to ten times its text, so 64 MiB keeps a file under
/// about 700 MB.
pub const MAX_REPORT_JSON_BYTES: u64 = 64 << 20;

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
    /// A drawn window of the schedule: the kernel's (a real run with
    /// `--kernel-trace`) and the simulator's of the same window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<ScheduleSpan>,
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
            schedule: Vec::new(),
        }
    }

    /// A run read back from the results store, with its rows.
    pub fn from_stored(
        run: rtlab_store::StoredRun,
        jobs: Vec<JobRow>,
        samples: Vec<SampleRow>,
    ) -> RunView {
        RunView {
            id: run.id,
            created: run.created,
            rtlab_version: run.rtlab_version,
            command: run.command,
            kind: run.kind,
            taskset: run.taskset,
            host: run.host,
            document: run.document,
            status: run.status,
            jobs,
            samples,
            schedule: Vec::new(),
        }
    }

    /// The same run with `command` as its command line.
    pub fn with_command(mut self, command: &str) -> RunView {
        self.command = command.to_string();
        self
    }
}

/// Job and sample rows are the results store's own types: one definition
/// of a stored row.
pub use rtlab_store::{JobRow, SampleRow};

/// `rtlab results export --format json`'s document: the run, its rows.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Exported {
    run: rtlab_store::StoredRun,
    #[serde(default)]
    jobs: Vec<JobRow>,
    #[serde(default)]
    samples: Vec<SampleRow>,
    #[serde(default)]
    schedule: Vec<ScheduleSpan>,
}

impl From<Exported> for RunView {
    fn from(e: Exported) -> RunView {
        RunView {
            schedule: e.schedule,
            ..RunView::from_stored(e.run, e.jobs, e.samples)
        }
    }
}

/// The runs of a JSON document as `rtlab report --from-json` reads it: one
/// run or a list of runs, each a [`RunView`] or what `rtlab results export
/// --format json` writes (`{"run": ..., "jobs": [...], "samples": [...]}`),
/// every run checked ([`RunView::check`]). `Err` says what is wrong, and
/// in which run of a list.
pub fn runs_from_json(value: serde_json::Value) -> Result<Vec<RunView>, String> {
    let one = |value: serde_json::Value| -> Result<RunView, String> {
        let run = if value.get("run").is_some() {
            serde_json::from_value::<Exported>(value).map(RunView::from)
        } else {
            serde_json::from_value::<RunView>(value)
        }
        .map_err(|e| format!("not a stored run: {e}"))?;
        run.check()?;
        Ok(run)
    };
    match value {
        serde_json::Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(k, v)| one(v).map_err(|e| format!("run #{} of the list: {e}", k + 1)))
            .collect(),
        other => one(other).map(|r| vec![r]),
    }
}

impl RunView {
    /// Refuses what no rtlab command stores: a `kind` or `status` the store
    /// does not know, a job that starts after it finishes or whose deadline
    /// is before its release, a schedule span that ends before it starts.
    pub fn check(&self) -> Result<(), String> {
        let text = |s: &str| serde_json::Value::String(s.to_string());
        if serde_json::from_value::<rtlab_store::RunKind>(text(&self.kind)).is_err() {
            return Err(format!(
                "kind `{}` is none of rtlab's commands that save (sim, run, latency, sweep, analyze, \
                 compare, lag-study, hartstone, breakdown, characterize, study)",
                rtlab_model::printable(&self.kind)
            ));
        }
        if serde_json::from_value::<rtlab_store::RunStatus>(text(&self.status)).is_err() {
            return Err(format!(
                "status `{}` is neither complete nor interrupted",
                rtlab_model::printable(&self.status)
            ));
        }
        for j in &self.jobs {
            let job = || {
                format!(
                    "job {} of task `{}`",
                    j.job,
                    rtlab_model::printable(&j.task)
                )
            };
            if let (Some(start), Some(finish)) = (j.start_ns, j.finish_ns) {
                if start > finish {
                    return Err(format!(
                        "{} starts at {start} ns, after it finishes at {finish} ns",
                        job()
                    ));
                }
            }
            if j.deadline_ns < j.release_ns {
                return Err(format!(
                    "{} has its deadline at {} ns, before its release at {} ns",
                    job(),
                    j.deadline_ns,
                    j.release_ns
                ));
            }
        }
        if let Some(s) = self.schedule.iter().find(|s| s.end_ns < s.start_ns) {
            return Err(format!(
                "a schedule span of `{}` ends at {} ns, before it starts at {} ns",
                rtlab_model::printable(&s.row),
                s.end_ns,
                s.start_ns
            ));
        }
        Ok(())
    }
}
