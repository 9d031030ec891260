//! What a simulated run measured in total: `rtlab sim --json`, the
//! simulator's document (filled by `rtlab-sim`, rendered by `rtlab-report`);
//! per task it is the result model's [`TaskMetrics`], shared with
//! real-thread runs.

use serde::Serialize;

use super::{TaskMetrics, Totals};

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
    /// Paper 004's tick (releases wait for it), or `null` when tickless or
    /// under Linux's model.
    pub tick_ns: Option<u64>,
    /// Linux's timer model (`hrtimer` or `hrtimer + tick 4ms`: releases at
    /// their instants, the periodic tick costing C_timer); absent from the
    /// JSON for the other models, so their runs print exactly as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<String>,
    /// The periodic tick of Linux's model; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub periodic_tick_ns: Option<u64>,
    /// Seed of the execution-time and jitter streams.
    pub seed: u64,
    /// Release-jitter model (`none`, `max`, `uniform`).
    pub jitter: String,
    /// Sums over tasks: released, completed, deadline_misses, aborted,
    /// skipped, preemptions (read them through `Deref`: `report.released`).
    #[serde(flatten)]
    pub totals: Totals,
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
    /// Migrations of all jobs (a job resuming on another processor than
    /// the one it last ran on): runs on m > 1 processors; absent when 0.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub migrations: u64,
    /// Per-processor figures, in processor order: runs on m > 1
    /// processors only (absent from a uniprocessor report).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub processors: Vec<ProcessorMetrics>,
    /// What Linux's RT throttling and fair server did (the overheads
    /// file's `[throttling]`); absent when the file states neither, so such
    /// runs print exactly as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttling: Option<ThrottlingReport>,
}

/// One processor's share of a multiprocessor run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProcessorMetrics {
    /// Processor index, 0..m.
    pub cpu: u32,
    /// Time it executed jobs.
    pub executed_ns: u64,
    /// Time it spent on modelled overheads (migration costs under global
    /// schedulers; every overhead of the file under partitioned ones).
    pub overhead_ns: u64,
    /// `executed_ns / duration_ns`.
    pub utilization: f64,
}

impl std::ops::Deref for SimReport {
    type Target = Totals;

    /// The sums over tasks, so that `report.released` reads them.
    fn deref(&self) -> &Totals {
        &self.totals
    }
}

/// What the servers did in a run (the report's `throttling`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ThrottlingReport {
    /// The limits modelled (`rt 950ms per 1s, fair server 50ms per 1s`), or
    /// why none is (`not modelled under edf: ...`).
    pub model: String,
    /// RT-throttling blackouts.
    pub rt_throttles: u64,
    /// Processor time in them.
    pub rt_throttled_ns: u64,
    /// Fair-server runs that took the processor.
    pub fair_server_runs: u64,
    /// Processor time in them.
    pub fair_server_ns: u64,
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
