//! Job rows from the job records the simulator (`Simulator::on_job`) and
//! the real-thread executor (its job sinks) emit: one record model,
//! for commands that draw a plot themselves (`--plot`) or build a report
//! without the results store (the demo).

use std::sync::{Arc, Mutex, PoisonError};

use rtlab_model::results::{JobRecord, JobSink, SeriesPoint};
use rtlab_model::{Nanos, TaskSet};

use crate::series::MAX_GANTT_JOBS;
use crate::view::{JobRow, SampleRow};

/// One wake-up of latency thread `thread` as a row.
pub fn sample_row(thread: usize, point: &SeriesPoint) -> SampleRow {
    SampleRow {
        thread: u32::try_from(thread).unwrap_or(u32::MAX),
        seq: point.loop_index,
        t_ns: point.at.as_ns(),
        latency_ns: point.latency.as_ns(),
    }
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

    /// Keeps `job` when fewer than [`MAX_GANTT_JOBS`] of its task are kept
    /// (the simulator's `on_job` and the executor's sink both feed this).
    pub fn push(&self, job: &JobRecord) {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        if records.len() <= job.task {
            records.resize_with(job.task + 1, Vec::new);
        }
        let task = &mut records[job.task];
        if task.len() < MAX_GANTT_JOBS {
            task.push(*job);
        }
    }

    /// The kept jobs as rows of `set`'s tasks, task by task.
    pub fn rows(&self, set: &TaskSet) -> Vec<JobRow> {
        let records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        records
            .iter()
            .flatten()
            .map(|r| JobRow::from((r, set)))
            .collect()
    }
}

impl JobSink for GanttRows {
    fn job(&mut self, job: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        self.push(job);
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
        // RM: a (T 4, C 1) runs 0..1, b (T 6, C 3.5) 1..4; a's job 1 at 4 ms
        // preempts b, which resumes 5..5.5; b's job 1 runs 6..8, is
        // preempted by a's job 2 (8..9) and ends at 10.5.
        let set = TaskSet::new(
            "two",
            vec![
                Task::new("a", Nanos::from_ms(4), Nanos::from_ms(1)),
                Task::new("b", Nanos::from_ms(6), Nanos::from_us(3500)),
            ],
        );
        let mut sim = rtlab_sim::Simulator::new(
            &set,
            &"fp:rm".parse().unwrap(),
            rtlab_sim::SimConfig::new(Nanos::from_ms(12)),
        )
        .unwrap();
        let gantt = GanttRows::new();
        let kept = gantt.clone();
        sim.on_job(move |job| kept.push(job));
        sim.run();
        let rows = gantt.rows(&set);
        let b0 = rows.iter().find(|r| r.task == "b" && r.job == 0).unwrap();
        assert_eq!(
            (
                b0.release_ns,
                b0.deadline_ns,
                b0.start_ns,
                b0.finish_ns,
                b0.preemptions
            ),
            (0, 6_000_000, Some(1_000_000), Some(5_500_000), 1)
        );
        let b1 = rows.iter().find(|r| r.task == "b" && r.job == 1).unwrap();
        assert_eq!((b1.finish_ns, b1.preemptions), (Some(10_500_000), 1));
        let a2 = rows.iter().find(|r| r.task == "a" && r.job == 2).unwrap();
        assert_eq!((a2.release_ns, a2.finish_ns), (8_000_000, Some(9_000_000)));
        assert_eq!(rows.len(), 3 + 2);
    }

    #[test]
    fn a_series_point_becomes_a_sample_row_without_its_jitter() {
        let point = SeriesPoint {
            loop_index: 5,
            at: Nanos::from_us(2500),
            latency: Nanos::from_us(12),
            jitter_ns: -300,
        };
        assert_eq!(
            sample_row(1, &point),
            SampleRow {
                thread: 1,
                seq: 5,
                t_ns: 2_500_000,
                latency_ns: 12_000
            }
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
