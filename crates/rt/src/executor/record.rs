//! What a real-thread run recorded: one [`JobRecord`] per released job
//! (streamed to the job files, not kept), and the per-task and total
//! summary ([`RunReport`]) whose JSON carries every field of
//! `rtlab sim --json` (fields that have no meaning on real threads are
//! `null`), so a run and a simulation can be compared field by field.
//!
//! All times are nanoseconds since the run's start (the first release of a
//! task with offset 0).

use rtlab_model::Nanos;
use serde::Serialize;

use super::summary::TaskSummary;

/// One job of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobRecord {
    /// Task index in declaration order.
    pub task: usize,
    /// Job number k: released at offset + k*T.
    pub job: u64,
    /// Release time offset + k*T.
    pub release: Nanos,
    /// Absolute deadline: release + D.
    pub deadline: Nanos,
    /// When the thread began the job (`None`: never started before the end).
    pub start: Option<Nanos>,
    /// When the job's work was done (`None`: unfinished at the end).
    pub finish: Option<Nanos>,
    /// Voluntary context switches of the thread during the job.
    pub voluntary_switches: u64,
    /// Involuntary context switches (preemptions) during the job.
    pub involuntary_switches: u64,
    /// The CPU the job finished on (`None` if unfinished).
    pub cpu: Option<u32>,
}

impl JobRecord {
    /// A job released but not started before the run ended.
    pub fn unstarted(task: usize, job: u64, release: Nanos, deadline: Nanos) -> JobRecord {
        JobRecord {
            task,
            job,
            release,
            deadline,
            start: None,
            finish: None,
            voluntary_switches: 0,
            involuntary_switches: 0,
            cpu: None,
        }
    }

    /// start - release: how late the job got the CPU.
    pub fn lag(&self) -> Option<Nanos> {
        self.start.map(|s| s.saturating_sub(self.release))
    }

    /// finish - release.
    pub fn response(&self) -> Option<Nanos> {
        self.finish.map(|f| f.saturating_sub(self.release))
    }

    /// Missed its deadline: finished after it, or unfinished when a run that
    /// lasted `ended` was past it (the simulator's rule).
    pub fn missed(&self, ended: Nanos) -> bool {
        match self.finish {
            Some(f) => f > self.deadline,
            None => self.deadline <= ended,
        }
    }

    /// Paper 000's (Lingua Franca) view: the deadline bounds the *start*, so
    /// the job missed if it started after release + D, or had not started
    /// by then.
    pub fn missed_start_deadline(&self, ended: Nanos) -> bool {
        match self.start {
            Some(s) => s > self.deadline,
            None => self.deadline <= ended,
        }
    }
}

/// Per-task summary; the first fields are those of the simulator's
/// `TaskMetrics`, with the same meaning.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskRunMetrics {
    /// Task name.
    pub name: String,
    /// Jobs released (skipped releases not included).
    pub released: u64,
    /// Jobs that completed (late or not).
    pub completed: u64,
    /// Late completions and jobs unfinished at the end past their deadline.
    pub misses: u64,
    /// Always 0: real runs do not abort jobs.
    pub aborted: u64,
    /// Releases skipped because the previous job was late (`--on-miss skip`).
    pub skipped: u64,
    /// Jobs unfinished when the run ended.
    pub unfinished: u64,
    /// Involuntary context switches during jobs (preemptions).
    pub preemptions: u64,
    /// Shortest response time of a completed job.
    pub min_response_ns: Option<u64>,
    /// Mean response time of completed jobs, rounded down.
    pub mean_response_ns: Option<u64>,
    /// Longest response time of a completed job.
    pub max_response_ns: Option<u64>,
    /// Largest finish - deadline over completed jobs.
    pub max_lateness_ns: Option<i64>,
    /// Deadline of the first job that missed.
    pub first_miss_ns: Option<u64>,
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
}

/// The result of a run (`rtlab run --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// `--policy`: other, fifo-order, rm, dm, given, rr, edf.
    pub policy: String,
    /// The simulator scheduler that models the policy (null for `other`).
    pub scheduler: Option<String>,
    /// The task set's name.
    pub taskset: String,
    /// Requested duration.
    pub duration_ns: u64,
    /// How long the run lasted: the duration, or less after Ctrl-C.
    pub ended_ns: u64,
    /// True when Ctrl-C ended the run.
    pub interrupted: bool,
    /// The CPU the threads were pinned to (null with `--no-pin`).
    pub cpu: Option<usize>,
    /// Locking protocol: always `none` (real runs have no critical sections).
    pub protocol: String,
    /// Overrun policy: continue or skip.
    pub on_miss: String,
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
    /// The process's peak resident memory so far (`getrusage` ru_maxrss).
    pub peak_rss_bytes: Option<u64>,
}

/// What a task thread reports at the end.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskOutcome {
    /// Its jobs, summarised as they were recorded.
    pub summary: TaskSummary,
    /// Releases skipped.
    pub skipped: u64,
    /// All voluntary + involuntary switches of the thread during the run.
    pub context_switches: u64,
    /// Job records its ring had no room for (not in `--jobs`/`--trace`).
    pub jobs_dropped: u64,
}
