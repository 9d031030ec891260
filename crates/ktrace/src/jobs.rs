//! The executor's job records joined with the kernel's account of them:
//! the windows to explain, and the columns `--jobs` gains.

use rtlab_model::results::JobRecord;
use rtlab_model::Nanos;

use crate::causes::{CauseKind, JobKernel, JobWindow};
use crate::JobToExplain;

/// The columns `run --jobs FILE.csv --kernel-trace` appends, in order:
/// wake-up and first run (ns from the run's start, like `release_ns`),
/// the kernel's preemption and switch counts, the time waited per cause
/// kind (ns), the main cause, and a missed job's lateness split
/// (`cause=ns;cause=ns`).
pub const JOB_COLUMNS: [&str; 14] = [
    "k_wake_ns",
    "k_first_run_ns",
    "k_preemptions",
    "k_switches",
    "k_wait_set_ns",
    "k_wait_other_ns",
    "k_wait_irq_ns",
    "k_wait_softirq_ns",
    "k_wait_throttled_ns",
    "k_wait_idle_ns",
    "k_wait_backlog_ns",
    "k_wait_dispatcher_ns",
    "k_cause",
    "k_lateness_by_cause",
];

/// The windows of `jobs` (times relative to the run's start at absolute
/// `start`; a job that did not finish ends at `ended`).
/// Each task's jobs must come in job order (as the executor gives them).
pub fn windows(jobs: &[JobRecord], start: u64, ended: Nanos) -> Vec<JobToExplain> {
    let mut previous: std::collections::BTreeMap<usize, u64> = Default::default();
    jobs.iter()
        .map(|j| {
            let end = start + j.finish.unwrap_or(ended).as_ns();
            let previous_finish = previous.insert(j.task, end);
            JobToExplain {
                window: JobWindow {
                    task: j.task,
                    release: start + j.release.as_ns(),
                    deadline: start + j.deadline.as_ns(),
                    end,
                    start: j.start.map(|s| start + s.as_ns()),
                    previous_finish,
                },
                missed: j.missed(ended),
            }
        })
        .collect()
}

/// The [`JOB_COLUMNS`] cells of one job.
pub fn cells(k: &JobKernel, start: u64) -> Vec<String> {
    let rel = |t: Option<u64>| t.map_or(String::new(), |t| t.saturating_sub(start).to_string());
    let mut out = vec![
        rel(k.wake),
        rel(k.first_run),
        k.preemptions.to_string(),
        k.switches.to_string(),
    ];
    for kind in CauseKind::ALL {
        out.push(k.by_kind.get(&kind).copied().unwrap_or(0).to_string());
    }
    out.push(k.main_cause());
    out.push(k.lateness_text());
    out
}
