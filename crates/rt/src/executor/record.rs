//! What a real-thread run recorded: one [`JobRecord`] per released job
//! (the result model's, shared with the simulator; streamed to the job
//! files, not kept), and the per-task and total summary ([`RunReport`]) whose JSON carries every field of
//! `rtlab sim --json` (fields that have no meaning on real threads are
//! `null`), so a run and a simulation can be compared field by field.
//!
//! All times are nanoseconds since the run's start (the first release of a
//! task with offset 0).

use std::ops::Deref;

use rtlab_model::policy::{LockingProtocol, MissRule, ModelScheduler, RealScheduler};
use rtlab_model::results::{TaskMetrics, TaskSummary, Totals};
use serde::Serialize;

pub use rtlab_model::results::JobRecord;

/// Per-task summary: the simulator's [`TaskMetrics`] (serialised first,
/// field for field, so `rtlab run --json` and `rtlab sim --json` share them)
/// and what only real threads measure. It dereferences to the shared part,
/// so `m.misses` reads the same on both kinds of run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskRunMetrics {
    /// The fields every run reports.
    #[serde(flatten)]
    pub metrics: TaskMetrics,
    /// Largest start - release.
    pub max_lag_ns: Option<u64>,
    /// Mean start - release of started jobs, rounded down.
    pub mean_lag_ns: Option<u64>,
    /// Jobs that started after release + D or not at all (paper 000's view).
    pub start_deadline_misses: u64,
    /// Voluntary context switches during jobs.
    pub voluntary_switches: u64,
    /// Priority or SCHED_DEADLINE parameters the thread ran with.
    pub thread_policy: String,
    /// On a multiprocessor run, the CPUs the thread could run on (its
    /// domain); absent on one CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// On a multiprocessor run, how often the kernel moved the thread to
    /// another CPU during the run, between jobs too (`se.nr_migrations`
    /// of /proc/thread-self/sched); absent on one CPU or without that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_migrations: Option<u64>,
}

impl TaskRunMetrics {
    /// The report of task `name`'s `summary`, its thread run under
    /// `thread_policy`.
    pub fn from_summary(name: &str, summary: &TaskSummary, thread_policy: String) -> Self {
        TaskRunMetrics {
            metrics: summary.metrics(name),
            max_lag_ns: summary.max_lag_ns(),
            mean_lag_ns: summary.mean_lag_ns(),
            start_deadline_misses: summary.start_deadline_misses(),
            voluntary_switches: summary.voluntary_switches(),
            thread_policy,
            cpus: None,
            kernel_migrations: None,
        }
    }
}

impl Deref for TaskRunMetrics {
    type Target = TaskMetrics;

    fn deref(&self) -> &TaskMetrics {
        &self.metrics
    }
}

/// The result of a run (`rtlab run --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// `--policy`: other, fifo-order, rm, dm, given, rr, edf; on several
    /// CPUs linux-dl, pedf, cedf, gfp:ORDER, pfp:ORDER.
    pub policy: RealScheduler,
    /// The simulator scheduler that models the policy (null for `other`).
    pub scheduler: Option<ModelScheduler>,
    /// The task set's name.
    pub taskset: String,
    /// Requested duration.
    pub duration_ns: u64,
    /// How long the run lasted: the duration, or less after Ctrl-C.
    pub ended_ns: u64,
    /// True when Ctrl-C ended the run.
    pub interrupted: bool,
    /// The CPU the threads were pinned to (null with `--no-pin` and on
    /// several CPUs).
    pub cpu: Option<usize>,
    /// The CPUs of a multiprocessor run (`--cpus`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// Locking protocol of the critical sections' mutexes: none, pip or ipcp.
    pub protocol: LockingProtocol,
    /// The miss rule: continue or skip.
    pub on_miss: MissRule,
    /// Always null: the kernel is tickless here (hrtimers).
    pub tick_ns: Option<u64>,
    /// Always null: real execution times are not drawn from a seed.
    pub seed: Option<u64>,
    /// Always `none`.
    pub jitter: String,
    /// Whether releases waited with the lag controller.
    pub lag_controller: bool,
    /// Which lag controller: `robust` or `paper` (null without one).
    pub lag_controller_kind: Option<String>,
    /// RT throttling in force (`sched_rt_runtime_us / sched_rt_period_us`).
    pub rt_throttling: String,
    /// Sums over tasks: released, completed, deadline_misses, aborted,
    /// skipped, preemptions (read them through `Deref`: `report.released`).
    #[serde(flatten)]
    pub totals: Totals,
    /// Voluntary plus involuntary switches of the task threads over the run
    /// (getrusage RUSAGE_THREAD): every time one of them left the CPU.
    pub context_switches: u64,
    /// `context_switches` per second of run.
    pub context_switches_per_s: f64,
    /// Null: kernel overheads are not separable on real threads.
    pub overhead_ns: Option<u64>,
    /// Null: idle time is not measured.
    pub idle_ns: Option<u64>,
    /// Earliest deadline missed, any task.
    pub first_miss_ns: Option<u64>,
    /// Null: there is no event loop.
    pub events: Option<u64>,
    /// Sum over tasks (paper 000's start-deadline view).
    pub start_deadline_misses: u64,
    /// Per task, in declaration order.
    pub tasks: Vec<TaskRunMetrics>,
    /// Threads that did not report back in time (should be empty).
    pub lost_tasks: Vec<String>,
    /// Always null (the simulator's control-scheduler data).
    pub scheduler_data: Option<serde_json::Value>,
    /// Job records lost to `--jobs`/`--trace` because a task's ring was
    /// full (the writer fell behind); the summary still counts them.
    pub jobs_dropped: u64,
    /// Lock or unlock calls of critical sections that failed (should be 0;
    /// absent from the JSON when it is).
    #[serde(skip_serializing_if = "is_zero")]
    pub lock_errors: u64,
    /// The process's peak resident memory so far (`getrusage` ru_maxrss).
    pub peak_rss_bytes: Option<u64>,
    /// What the kernel's own trace of the run says (`--kernel-trace`:
    /// events, lost events, misses by cause); absent without a trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_trace: Option<rtlab_model::kernel_trace::KernelTraceSummary>,
    /// The kernel thread id of each task's thread, in declaration order
    /// (`None`: the thread never reported it), to find them in a kernel
    /// trace. Not in the JSON.
    #[serde(skip)]
    pub thread_ids: Vec<Option<i32>>,
    /// CLOCK_MONOTONIC at the run's time 0 (job times are relative to it),
    /// in ns. Not in the JSON.
    #[serde(skip)]
    pub start_monotonic_ns: u64,
    /// The phases the run applied, as `START..END:SCALE` (absent without).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<String>,
    /// SCHED_DEADLINE budgets changed at phase boundaries (absent when none
    /// was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_changes: Option<super::BudgetChanges>,
    /// What else the machine did on the run's CPUs over the measured
    /// window, and the verdict (`rtlab_host::disturbance`); absent only for
    /// a run refused before its window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<rtlab_model::disturbance::DisturbanceAccount>,
}

impl std::ops::Deref for RunReport {
    type Target = Totals;

    /// The sums over tasks, so that `report.released` reads them.
    fn deref(&self) -> &Totals {
        &self.totals
    }
}

/// What a task thread reports at the end.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskOutcome {
    /// Its jobs (and skipped releases), summarised as they were recorded.
    pub summary: TaskSummary,
    /// All voluntary + involuntary switches of the thread during the run.
    pub context_switches: u64,
    /// Job records its ring had no room for (not in `--jobs`/`--trace`).
    pub jobs_dropped: u64,
    /// Failed lock or unlock calls of its critical sections.
    pub lock_errors: u64,
    /// On a multiprocessor run, the kernel's count of the thread's
    /// migrations over the run.
    pub kernel_migrations: Option<u64>,
    /// Its SCHED_DEADLINE budget changes at phase boundaries.
    pub budget_changes: super::BudgetChanges,
    /// Its CPU time at the end (`CLOCK_THREAD_CPUTIME_ID`, ns): the
    /// disturbance account's own time, read after the thread is gone.
    pub cpu_time_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
