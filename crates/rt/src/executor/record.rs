//! What a real-thread run recorded: one [`JobRecord`] per released job, and
//! the per-task and total summary ([`RunReport`]) whose JSON carries every
//! field of `rtlab sim --json` (fields that have no meaning on real threads
//! are `null`), so a run and a simulation can be compared field by field.
//!
//! All times are nanoseconds since the run's start (the first release of a
//! task with offset 0).

use std::io::{self, Write};

use rtlab_model::{Nanos, TaskSet};
use serde::Serialize;

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
    /// Every job, sorted by (release, task); not in the JSON (use `--jobs`).
    #[serde(skip)]
    pub jobs: Vec<JobRecord>,
}

/// What a task thread reports at the end.
#[derive(Debug, Clone, Default)]
pub struct TaskOutcome {
    /// Its jobs in release order.
    pub jobs: Vec<JobRecord>,
    /// Releases skipped.
    pub skipped: u64,
    /// All voluntary + involuntary switches of the thread during the run.
    pub context_switches: u64,
}

/// Summarises one task's outcome; `ended` is how long the run lasted.
pub fn task_metrics(name: &str, outcome: &TaskOutcome, ended: Nanos) -> TaskRunMetrics {
    let mut m = TaskRunMetrics {
        name: name.to_string(),
        released: outcome.jobs.len() as u64,
        skipped: outcome.skipped,
        ..TaskRunMetrics::default()
    };
    let (mut response_sum, mut lag_sum, mut started) = (0u128, 0u128, 0u64);
    for job in &outcome.jobs {
        m.preemptions += job.involuntary_switches;
        m.voluntary_switches += job.voluntary_switches;
        if job.missed(ended) {
            m.misses += 1;
            let d = job.deadline.as_ns();
            m.first_miss_ns = Some(m.first_miss_ns.map_or(d, |f| f.min(d)));
        }
        if job.missed_start_deadline(ended) {
            m.start_deadline_misses += 1;
        }
        if let Some(lag) = job.lag() {
            started += 1;
            lag_sum += u128::from(lag.as_ns());
            m.max_lag_ns = m.max_lag_ns.max(Some(lag.as_ns()));
        }
        match (job.response(), job.finish) {
            (Some(r), Some(f)) => {
                m.completed += 1;
                let r = r.as_ns();
                response_sum += u128::from(r);
                m.min_response_ns = Some(m.min_response_ns.map_or(r, |x| x.min(r)));
                m.max_response_ns = m.max_response_ns.max(Some(r));
                let lateness = f.as_ns() as i128 - job.deadline.as_ns() as i128;
                let lateness = i64::try_from(lateness).unwrap_or(i64::MAX);
                m.max_lateness_ns = Some(m.max_lateness_ns.map_or(lateness, |x| x.max(lateness)));
            }
            _ => m.unfinished += 1,
        }
    }
    if m.completed > 0 {
        m.mean_response_ns = u64::try_from(response_sum / u128::from(m.completed)).ok();
    }
    if started > 0 {
        m.mean_lag_ns = u64::try_from(lag_sum / u128::from(started)).ok();
    }
    m
}

/// The header of `--jobs FILE.csv`.
pub const JOBS_CSV_HEADER: &str = "task,job,release_ns,deadline_ns,start_ns,finish_ns,lag_ns,response_ns,missed,start_deadline_missed,voluntary_switches,involuntary_switches,cpu";

/// Writes every job as CSV (empty cells where a job never started or
/// finished); `ended` decides misses of unfinished jobs as in the summary.
pub fn write_jobs_csv<W: Write>(
    mut out: W,
    set: &TaskSet,
    jobs: &[JobRecord],
    ended: Nanos,
) -> io::Result<()> {
    writeln!(out, "{JOBS_CSV_HEADER}")?;
    let cell = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    for j in jobs {
        let name = set.tasks.get(j.task).map_or("?", |t| t.name.as_str());
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(name),
            j.job,
            j.release.as_ns(),
            j.deadline.as_ns(),
            cell(j.start.map(Nanos::as_ns)),
            cell(j.finish.map(Nanos::as_ns)),
            cell(j.lag().map(Nanos::as_ns)),
            cell(j.response().map(Nanos::as_ns)),
            j.missed(ended),
            j.missed_start_deadline(ended),
            j.voluntary_switches,
            j.involuntary_switches,
            cell(j.cpu.map(u64::from)),
        )?;
    }
    out.flush()
}

/// Quotes a CSV field when it holds a comma, quote or newline.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Task;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn job(k: u64, start: Option<u64>, finish: Option<u64>) -> JobRecord {
        JobRecord {
            start: start.map(ms),
            finish: finish.map(ms),
            involuntary_switches: 1,
            ..JobRecord::unstarted(0, k, ms(10 * k), ms(10 * k + 5))
        }
    }

    #[test]
    fn summary_counts_misses_the_way_the_simulator_does() {
        let outcome = TaskOutcome {
            jobs: vec![
                job(0, Some(1), Some(3)),   // met, lag 1, response 3
                job(1, Some(12), Some(16)), // late by 1: miss; lag 2, response 6
                job(2, Some(26), None), // started after D=25: start miss; unfinished at 27 -> miss
                job(3, None, None),     // released at 30, deadline 35 > ended: not (yet) a miss
            ],
            skipped: 2,
            context_switches: 9,
        };
        let m = task_metrics("t", &outcome, ms(31));
        assert_eq!(m.released, 4);
        assert_eq!(m.completed, 2);
        assert_eq!(m.unfinished, 2);
        assert_eq!(m.misses, 2);
        assert_eq!(m.first_miss_ns, Some(ms(15).as_ns()));
        assert_eq!(m.start_deadline_misses, 1);
        assert_eq!(m.min_response_ns, Some(ms(3).as_ns()));
        assert_eq!(m.max_response_ns, Some(ms(6).as_ns()));
        assert_eq!(m.mean_response_ns, Some(ms(4).as_ns() + ms(1).as_ns() / 2));
        assert_eq!(m.max_lateness_ns, Some(ms(1).as_ns() as i64));
        assert_eq!(m.max_lag_ns, Some(ms(6).as_ns()));
        assert_eq!(m.mean_lag_ns, Some(ms(3).as_ns()));
        assert_eq!(m.preemptions, 4);
        assert_eq!(m.skipped, 2);
    }

    #[test]
    fn csv_has_one_row_per_job_and_empty_cells_for_missing_times() {
        let set = TaskSet::new("s", vec![Task::new("a,b", ms(10), ms(1))]);
        let mut out = Vec::new();
        write_jobs_csv(
            &mut out,
            &set,
            &[job(0, Some(1), Some(3)), job(1, None, None)],
            ms(20),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], JOBS_CSV_HEADER);
        assert_eq!(
            lines[1],
            "\"a,b\",0,0,5000000,1000000,3000000,1000000,3000000,false,false,0,1,"
        );
        assert_eq!(lines[2], "\"a,b\",1,10000000,15000000,,,,,true,true,0,1,");
        assert_eq!(lines.len(), 3);
    }
}
