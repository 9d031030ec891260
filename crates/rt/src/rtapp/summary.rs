//! Per-task figures from an rt-app thread log, and the side-by-side
//! comparison with a `rtlab run` of the same set (`rtlab compare --with
//! rt-app`).
//!
//! From each log row (one job, [`LogRow`]): the response time
//! `R = c_period - slack` (release to the end of the job's events, exact
//! for the absolute timer rtlab exports), a miss when `R > D`, the wake-up
//! latency `wu_lat` of the rows that slept until their timer, and `run`,
//! the wall-clock time rt-app spent in the job's `run` events. `run` over
//! the requested C is rt-app's **execution overshoot**: its `run` is a
//! loop count calibrated at start-up, so it misses by what the calibration
//! missed (and, for a preempted job, `run` also holds the preemption; the
//! highest-priority task shows the calibration error alone). rtlab burns C
//! of thread CPU time, so its jobs execute exactly C.

use rtlab_model::results::TaskMetrics;
use rtlab_model::Task;
use serde::Serialize;

use super::log::{LogRow, ThreadLog};
use crate::executor::RunReport;

/// What rt-app's log says of one task.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RtAppTaskMetrics {
    /// Task name.
    pub name: String,
    /// Jobs logged (completed phases).
    pub jobs: u64,
    /// Jobs with R > D.
    pub misses: u64,
    /// Mean response time, ns (µs resolution).
    pub mean_response_ns: Option<u64>,
    /// Longest response time, ns.
    pub max_response_ns: Option<u64>,
    /// Mean wake-up latency of the jobs that slept until their timer, ns.
    pub mean_wakeup_latency_ns: Option<u64>,
    /// Largest such latency, ns.
    pub max_wakeup_latency_ns: Option<u64>,
    /// Requested execution C, ns.
    pub wcet_ns: u64,
    /// Mean wall-clock time of the job's `run` events, ns.
    pub mean_run_ns: Option<u64>,
    /// Longest, ns.
    pub max_run_ns: Option<u64>,
    /// Mean `run` over C, in percent (100 · (mean run / C - 1)).
    pub run_overshoot_pct: Option<f64>,
}

/// The figures of `task` from its thread's `log`.
pub fn summarize(task: &Task, log: &ThreadLog) -> RtAppTaskMetrics {
    let rows = &log.rows;
    let n = rows.len() as u64;
    let mean = |f: &dyn Fn(&LogRow) -> u64, rows: &[&LogRow]| -> Option<u64> {
        (!rows.is_empty()).then(|| {
            (rows.iter().map(|r| u128::from(f(r))).sum::<u128>() / rows.len() as u128) as u64
        })
    };
    let all: Vec<&LogRow> = rows.iter().collect();
    let slept: Vec<&LogRow> = rows.iter().filter(|r| r.slept()).collect();
    let run_ns = |r: &LogRow| r.run_us.saturating_mul(1_000);
    let wake_ns = |r: &LogRow| r.wu_lat_us.saturating_mul(1_000);
    let mean_run = mean(&run_ns, &all);
    let wcet = task.wcet.as_ns();
    RtAppTaskMetrics {
        name: task.name.clone(),
        jobs: n,
        misses: rows
            .iter()
            .filter(|r| r.response_ns() > task.deadline.as_ns())
            .count() as u64,
        mean_response_ns: mean(&LogRow::response_ns, &all),
        max_response_ns: rows.iter().map(LogRow::response_ns).max(),
        mean_wakeup_latency_ns: mean(&wake_ns, &slept),
        max_wakeup_latency_ns: slept.iter().map(|r| wake_ns(r)).max(),
        wcet_ns: wcet,
        mean_run_ns: mean_run,
        max_run_ns: rows.iter().map(run_ns).max(),
        run_overshoot_pct: mean_run
            .filter(|_| wcet > 0)
            .map(|m| 100.0 * (m as f64 / wcet as f64 - 1.0)),
    }
}

/// A value from rtlab and one from rt-app.
pub type Pair<T> = (T, T);

/// One task, rtlab's run against rt-app's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RtAppTaskComparison {
    /// Task name.
    pub name: String,
    /// Requested C, ns.
    pub wcet_ns: u64,
    /// Completed jobs (rtlab, rt-app).
    pub jobs: Pair<u64>,
    /// Deadline misses (rtlab, rt-app).
    pub misses: Pair<u64>,
    /// Mean wake-up latency: rtlab's lag (start - release), rt-app's `wu_lat`.
    pub mean_wakeup_latency_ns: Pair<Option<u64>>,
    /// Largest wake-up latency.
    pub max_wakeup_latency_ns: Pair<Option<u64>>,
    /// Mean response time.
    pub mean_response_ns: Pair<Option<u64>>,
    /// Longest response time.
    pub max_response_ns: Pair<Option<u64>>,
    /// rt-app's mean `run` per job (rtlab executes exactly C of CPU time).
    pub rtapp_mean_run_ns: Option<u64>,
    /// rt-app's mean `run` over C, percent.
    pub rtapp_run_overshoot_pct: Option<f64>,
}

/// What an rt-app run measured.
#[derive(Debug, Clone, Serialize)]
pub struct RtAppRun {
    /// The rt-app binary run.
    pub binary: String,
    /// `global.calibration` as written (`"CPU1"` or ns per loop).
    pub calibration: String,
    /// rt-app's calibrated ns per loop, from its `pLoad = Nns` line.
    pub ns_per_loop: Option<u64>,
    /// Requested duration (whole seconds).
    pub duration_ns: u64,
    /// True when Ctrl-C (or the grace running out) stopped rt-app.
    pub interrupted: bool,
    /// rt-app's exit status (null when a signal ended it).
    pub exit_status: Option<i32>,
    /// Per task, from its thread's log, in declaration order.
    pub tasks: Vec<RtAppTaskMetrics>,
}

/// `rtlab compare --with rt-app --json`.
#[derive(Debug, Clone, Serialize)]
pub struct RtAppComparison {
    /// The task set's name.
    pub taskset: String,
    /// `--policy`.
    pub policy: String,
    /// Per task, in declaration order.
    pub tasks: Vec<RtAppTaskComparison>,
    /// rtlab's run, whole.
    pub rtlab: RunReport,
    /// rt-app's run, whole.
    pub rtapp: RtAppRun,
}

impl RtAppComparison {
    /// Pairs the tasks of the two runs by declaration order.
    pub fn new(set: &rtlab_model::TaskSet, rtlab: RunReport, rtapp: RtAppRun) -> Self {
        let tasks = set
            .tasks
            .iter()
            .zip(&rtlab.tasks)
            .zip(&rtapp.tasks)
            .map(|((task, ours), theirs)| {
                compare_task(task, ours, ours.max_lag_ns, ours.mean_lag_ns, theirs)
            })
            .collect();
        RtAppComparison {
            taskset: set.name.clone(),
            policy: rtlab.policy.to_string(),
            tasks,
            rtlab,
            rtapp,
        }
    }
}

fn compare_task(
    task: &Task,
    ours: &TaskMetrics,
    max_lag: Option<u64>,
    mean_lag: Option<u64>,
    theirs: &RtAppTaskMetrics,
) -> RtAppTaskComparison {
    RtAppTaskComparison {
        name: task.name.clone(),
        wcet_ns: task.wcet.as_ns(),
        jobs: (ours.completed, theirs.jobs),
        misses: (ours.misses, theirs.misses),
        mean_wakeup_latency_ns: (mean_lag, theirs.mean_wakeup_latency_ns),
        max_wakeup_latency_ns: (max_lag, theirs.max_wakeup_latency_ns),
        mean_response_ns: (ours.mean_response_ns, theirs.mean_response_ns),
        max_response_ns: (ours.max_response_ns, theirs.max_response_ns),
        rtapp_mean_run_ns: theirs.mean_run_ns,
        rtapp_run_overshoot_pct: theirs.run_overshoot_pct,
    }
}
