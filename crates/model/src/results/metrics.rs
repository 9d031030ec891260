//! What a run reports per task ([`TaskMetrics`], the fields `rtlab sim
//! --json` and `rtlab run --json` share) and in total ([`Totals`]).

use serde::Serialize;

/// Per-task counters and response-time statistics, the same for simulated
/// and real runs (the real executor adds its own fields beside them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TaskMetrics {
    /// Task name.
    pub name: String,
    /// Jobs released (skipped releases not included).
    pub released: u64,
    /// Jobs that completed (late or not).
    pub completed: u64,
    /// Deadline misses: late completions, aborts, and jobs still unfinished
    /// at the end whose deadline had passed.
    pub misses: u64,
    /// Jobs removed at their deadline (the simulator's `abort` rule; 0 on
    /// real threads).
    pub aborted: u64,
    /// Releases skipped because the previous job was late (`skip` rule).
    pub skipped: u64,
    /// Jobs still unfinished when the run ended.
    pub unfinished: u64,
    /// Times a job of this task was preempted (on real threads: involuntary
    /// context switches during jobs).
    pub preemptions: u64,
    /// Shortest response time (completion - release) of a completed job.
    pub min_response_ns: Option<u64>,
    /// Mean response time of completed jobs, rounded down to whole ns.
    pub mean_response_ns: Option<u64>,
    /// Longest response time of a completed job.
    pub max_response_ns: Option<u64>,
    /// Largest completion - deadline over completed jobs (negative: every
    /// job finished early).
    pub max_lateness_ns: Option<i64>,
    /// Deadline of the first job that missed.
    pub first_miss_ns: Option<u64>,
    /// Longest lock wait of a job ([`JobRecord::blocked`](super::JobRecord::blocked));
    /// absent from the JSON for a task without critical sections, so sets
    /// without them print exactly as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_blocked_ns: Option<u64>,
    /// Sum of the lock waits of its jobs; absent like `max_blocked_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_blocked_ns: Option<u64>,
    /// Longest remote blocking of a job under a multiprocessor locking
    /// protocol ([`JobRecord::remote_blocked`](super::JobRecord::remote_blocked));
    /// absent from the JSON outside such runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_remote_blocked_ns: Option<u64>,
    /// Longest local blocking of a job under a multiprocessor locking
    /// protocol; absent like `max_remote_blocked_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_local_blocked_ns: Option<u64>,
    /// Times a job of this task resumed on another CPU (multiprocessor
    /// simulation); absent from the JSON when 0.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub migrations: u64,
}

/// Sums over the tasks of a run: the run-level fields both reports share
/// (serialised in this order, without `first_miss_ns`, which the reports
/// place further on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Sum of `released`.
    pub released: u64,
    /// Sum of `completed`.
    pub completed: u64,
    /// Sum of `misses`.
    pub deadline_misses: u64,
    /// Sum of `aborted`.
    pub aborted: u64,
    /// Sum of `skipped`.
    pub skipped: u64,
    /// Sum of `preemptions`.
    pub preemptions: u64,
    /// Earliest `first_miss_ns`, any task.
    #[serde(skip)]
    pub first_miss_ns: Option<u64>,
}

impl Totals {
    /// The totals of `tasks`.
    pub fn of<'a>(tasks: impl IntoIterator<Item = &'a TaskMetrics>) -> Totals {
        tasks.into_iter().fold(Totals::default(), |t, m| Totals {
            released: t.released + m.released,
            completed: t.completed + m.completed,
            deadline_misses: t.deadline_misses + m.misses,
            aborted: t.aborted + m.aborted,
            skipped: t.skipped + m.skipped,
            preemptions: t.preemptions + m.preemptions,
            first_miss_ns: match (t.first_miss_ns, m.first_miss_ns) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        })
    }
}
