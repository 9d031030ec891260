//! Job rows from what the simulator and the real-thread executor record,
//! for commands that draw a plot themselves (`--plot`) or build a report
//! without the results store (the demo).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use rtlab_model::{Nanos, TaskSet};
use rtlab_rt::executor::{JobRecord, JobSink};
use rtlab_sim::{Trace, TraceRecord};

use crate::series::MAX_GANTT_JOBS;
use crate::view::{JobRow, SampleRow};

/// The jobs of a simulation's trace window: release, deadline (release +
/// D), first start, completion, and preemptions (execution segments - 1).
/// A job whose release falls before the window is left out.
pub fn jobs_from_trace(trace: &Trace, set: &TaskSet) -> Vec<JobRow> {
    let mut jobs: BTreeMap<(usize, u64), JobRow> = BTreeMap::new();
    let mut segments: BTreeMap<(usize, u64), u64> = BTreeMap::new();
    for record in &trace.records {
        match *record {
            TraceRecord::Release { task, job, at } => {
                let deadline = set.tasks.get(task).map_or(Nanos::ZERO, |t| t.deadline);
                jobs.insert(
                    (task, job),
                    JobRow {
                        task: trace.tasks.get(task).cloned().unwrap_or_default(),
                        job,
                        release_ns: at.as_ns(),
                        deadline_ns: (at + deadline).as_ns(),
                        start_ns: None,
                        finish_ns: None,
                        preemptions: 0,
                        voluntary_switches: 0,
                        cpu: Some(0),
                    },
                );
            }
            TraceRecord::Run {
                task, job, start, ..
            } => {
                if let Some(row) = jobs.get_mut(&(task, job)) {
                    row.start_ns =
                        Some(row.start_ns.map_or(start.as_ns(), |s| s.min(start.as_ns())));
                    *segments.entry((task, job)).or_default() += 1;
                }
            }
            TraceRecord::Complete { task, job, at } => {
                if let Some(row) = jobs.get_mut(&(task, job)) {
                    row.finish_ns = Some(at.as_ns());
                }
            }
            TraceRecord::Kernel { .. } | TraceRecord::Miss { .. } => {}
        }
    }
    for (key, n) in segments {
        if let Some(row) = jobs.get_mut(&key) {
            row.preemptions = n.saturating_sub(1);
        }
    }
    jobs.into_values().collect()
}

/// One job of a real-thread run as a row.
pub fn job_row(record: &JobRecord, set: &TaskSet) -> JobRow {
    JobRow {
        task: set
            .tasks
            .get(record.task)
            .map_or_else(String::new, |t| t.name.clone()),
        job: record.job,
        release_ns: record.release.as_ns(),
        deadline_ns: record.deadline.as_ns(),
        start_ns: record.start.map(Nanos::as_ns),
        finish_ns: record.finish.map(Nanos::as_ns),
        preemptions: record.involuntary_switches,
        voluntary_switches: record.voluntary_switches,
        cpu: record.cpu,
    }
}

/// The samples of `rtlab latency --series` CSV
/// (`thread,loop,time_ns,latency_ns,jitter_ns`, header first); a line
/// that is not five integers is skipped.
pub fn samples_from_series_csv(text: &str) -> Vec<SampleRow> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes())
        .deserialize::<(u32, u64, u64, u64, i64)>()
        .filter_map(Result::ok)
        .map(|(thread, seq, t_ns, latency_ns, _jitter)| SampleRow {
            thread,
            seq,
            t_ns,
            latency_ns,
        })
        .collect()
}

/// A [`JobSink`] that keeps, per task, the first [`MAX_GANTT_JOBS`] jobs
/// (all a Gantt chart of the earliest jobs can need), so memory stays
/// bounded however long the run. Read them with [`GanttRows::rows`] after
/// the run; clones share the records.
#[derive(Clone, Default)]
pub struct GanttRows {
    records: Arc<Mutex<Vec<Vec<JobRecord>>>>,
}

impl GanttRows {
    /// An empty collector.
    pub fn new() -> GanttRows {
        GanttRows::default()
    }

    /// The kept jobs as rows of `set`'s tasks, task by task.
    pub fn rows(&self, set: &TaskSet) -> Vec<JobRow> {
        let records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        records.iter().flatten().map(|r| job_row(r, set)).collect()
    }
}

impl JobSink for GanttRows {
    fn job(&mut self, job: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        if records.len() <= job.task {
            records.resize_with(job.task + 1, Vec::new);
        }
        let task = &mut records[job.task];
        if task.len() < MAX_GANTT_JOBS {
            task.push(*job);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Task;

    fn set() -> TaskSet {
        TaskSet::new(
            "two",
            vec![
                Task::new("a", Nanos::from_ms(4), Nanos::from_ms(1)),
                Task::new("b", Nanos::from_ms(6), Nanos::from_ms(2)),
            ],
        )
    }

    #[test]
    fn a_simulated_job_gets_its_first_start_finish_and_preemptions() {
        let set = set();
        let mut sim = rtlab_sim::Simulator::new(
            &set,
            &"fp:rm".parse().unwrap(),
            rtlab_sim::SimConfig {
                trace: Some(rtlab_sim::TraceWindow {
                    from: Nanos::ZERO,
                    to: Nanos::from_ms(12),
                }),
                ..rtlab_sim::SimConfig::new(Nanos::from_ms(12))
            },
        )
        .unwrap();
        sim.run();
        let rows = jobs_from_trace(sim.trace().unwrap(), &set);
        let b0 = rows.iter().find(|r| r.task == "b" && r.job == 0).unwrap();
        // RM: a runs 0..1, b 1..3; a's job 1 at 4 ms does not preempt it.
        assert_eq!(
            (
                b0.release_ns,
                b0.deadline_ns,
                b0.start_ns,
                b0.finish_ns,
                b0.preemptions
            ),
            (0, 6_000_000, Some(1_000_000), Some(3_000_000), 0)
        );
        let a2 = rows.iter().find(|r| r.task == "a" && r.job == 2).unwrap();
        assert_eq!((a2.release_ns, a2.finish_ns), (8_000_000, Some(9_000_000)));
        assert_eq!(rows.len(), 3 + 2);
    }

    #[test]
    fn series_csv_rows_become_samples() {
        let text = "thread,loop,time_ns,latency_ns,jitter_ns\n0,0,1000000,4000,0\n1,5,2500000,12000,-300\nbad\n";
        assert_eq!(
            samples_from_series_csv(text),
            vec![
                SampleRow {
                    thread: 0,
                    seq: 0,
                    t_ns: 1_000_000,
                    latency_ns: 4000
                },
                SampleRow {
                    thread: 1,
                    seq: 5,
                    t_ns: 2_500_000,
                    latency_ns: 12_000
                },
            ]
        );
    }

    #[test]
    fn gantt_rows_keep_the_first_jobs_of_each_task() {
        let set = set();
        let mut sink = GanttRows::new();
        let reader = sink.clone();
        for k in 0..(MAX_GANTT_JOBS as u64 + 10) {
            let r = Nanos::from_ms(4 * k);
            sink.job(
                &JobRecord::unstarted(0, k, r, r + Nanos::from_ms(4)),
                Nanos::ZERO,
            )
            .unwrap();
        }
        let rows = reader.rows(&set);
        assert_eq!(rows.len(), MAX_GANTT_JOBS);
        assert_eq!((rows[0].task.as_str(), rows[0].job), ("a", 0));
        assert_eq!(rows.last().map(|r| r.job), Some(MAX_GANTT_JOBS as u64 - 1));
    }
}
