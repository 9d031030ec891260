//! What a run measured, per task and in total (the `--json` schema).

use rtlab_model::Nanos;
use serde::Serialize;

/// Per-task counters and response-time statistics.
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
    /// Jobs removed at their deadline (`--on-miss abort`).
    pub aborted: u64,
    /// Releases skipped because the previous job was late (`--on-miss skip`).
    pub skipped: u64,
    /// Jobs still unfinished when the run ended.
    pub unfinished: u64,
    /// Times a job of this task was preempted.
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
    #[serde(skip)]
    pub(crate) response_sum: u128,
}

impl TaskMetrics {
    pub(crate) fn new(name: &str) -> TaskMetrics {
        TaskMetrics {
            name: name.to_string(),
            ..TaskMetrics::default()
        }
    }

    pub(crate) fn record_completion(&mut self, release: Nanos, deadline: Nanos, at: Nanos) {
        self.completed += 1;
        let response = at.saturating_sub(release).as_ns();
        self.response_sum += u128::from(response);
        self.min_response_ns = Some(self.min_response_ns.map_or(response, |m| m.min(response)));
        self.max_response_ns = Some(self.max_response_ns.map_or(response, |m| m.max(response)));
        self.mean_response_ns = u64::try_from(self.response_sum / u128::from(self.completed)).ok();
        let lateness = if at >= deadline {
            i64::try_from((at - deadline).as_ns()).unwrap_or(i64::MAX)
        } else {
            -i64::try_from((deadline - at).as_ns()).unwrap_or(i64::MAX)
        };
        self.max_lateness_ns = Some(self.max_lateness_ns.map_or(lateness, |m| m.max(lateness)));
        if at > deadline {
            self.record_miss(deadline);
        }
    }

    pub(crate) fn record_miss(&mut self, deadline: Nanos) {
        self.misses += 1;
        let d = deadline.as_ns();
        self.first_miss_ns = Some(self.first_miss_ns.map_or(d, |m| m.min(d)));
    }
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimReport {
    /// The scheduler, as a spec (`fp:rm`, `rr:2ms`, ...).
    pub scheduler: String,
    /// The task set's name.
    pub taskset: String,
    /// Simulated time.
    pub duration_ns: u64,
    /// Locking protocol.
    pub protocol: String,
    /// Deadline-miss policy.
    pub on_miss: String,
    /// Tick, or `null` when tickless.
    pub tick_ns: Option<u64>,
    /// Seed of the execution-time and jitter streams.
    pub seed: u64,
    /// Release-jitter model (`none`, `max`, `uniform`).
    pub jitter: String,
    /// Sum over tasks.
    pub released: u64,
    /// Sum over tasks.
    pub completed: u64,
    /// Sum over tasks.
    pub deadline_misses: u64,
    /// Sum over tasks.
    pub aborted: u64,
    /// Sum over tasks.
    pub skipped: u64,
    /// Sum over tasks.
    pub preemptions: u64,
    /// Dispatches of a task other than the one that ran last (a thread
    /// switch; the same thread resuming after idling is not one).
    pub context_switches: u64,
    /// `context_switches` per simulated second.
    pub context_switches_per_s: f64,
    /// Processor time spent in overheads (kernel, scheduler, locks).
    pub overhead_ns: u64,
    /// Processor time in which nothing ran.
    pub idle_ns: u64,
    /// Earliest deadline missed, any task.
    pub first_miss_ns: Option<u64>,
    /// Events the engine processed (releases, completions, lock operations,
    /// deadlines, ticks, call-backs).
    pub events: u64,
    /// Per task, in declaration order (phase tasks last).
    pub tasks: Vec<TaskMetrics>,
    /// Scheduler-specific data (e.g. the control schedulers' rounds), or null.
    pub scheduler_data: Option<serde_json::Value>,
    /// The first deadlock of the run; absent from the JSON when there was
    /// none (so runs without one print exactly as before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlock: Option<Deadlock>,
}

/// Jobs waiting for each other's locks in a cycle: none of them can run
/// again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Deadlock {
    /// When the lock request that closed the cycle was made.
    pub at_ns: u64,
    /// The jobs of the cycle, from the one whose request closed it: each
    /// waits for a resource held by the next, the last by the first.
    pub cycle: Vec<DeadlockLink>,
    /// Deadlocks (cycles formed) in the whole run; the first is described.
    pub count: u64,
}

/// One job of a deadlock cycle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeadlockLink {
    /// Its task.
    pub task: String,
    /// Which job of the task (0 for the first).
    pub job: u64,
    /// The resource it waits for.
    pub waits_for: String,
    /// The task whose job holds that resource.
    pub held_by: String,
    /// Which job of that task.
    pub held_job: u64,
}
