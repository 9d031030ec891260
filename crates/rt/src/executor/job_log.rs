//! How a task thread records its jobs without allocating: a [`JobLog`]
//! folds each job into the online [`TaskSummary`] and, when job files are
//! asked for, queues it on the task's pre-faulted ring ([`crate::stream`]);
//! the [`JobWriter`] on the writer thread turns the queued records into
//! rows of the [`JobSink`]s.
//!
//! **Ring size.** Each task's ring holds [`RING_WINDOW`] (2 s) of its
//! releases plus 64, at least [`RING_MIN`] records, and all rings together
//! at most [`RING_BUDGET`] records (about 24 MiB; a set releasing more than
//! ~131,000 jobs/s gets a proportionally shorter window). The writer empties
//! the rings every 10 ms, so a ring fills only if the writer is kept off
//! the CPU for ~2 s, far beyond RT throttling's 50 ms a second; a task
//! never waits for it: a record that finds its ring full is dropped and
//! counted (`jobs_dropped`).
//!
//! Releases never started before the run ended (the backlog of an overload
//! under `continue`, which can be as long as the run) are queued as one
//! [`JobMessage::Unstarted`] range and counted in O(1); the writer expands
//! the range into rows.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rtlab_model::{Nanos, Task, TaskSet};

use super::job_files::JobSink;
use crate::stream::{ring_capacities, RecordSender, RecordSink};
use rtlab_model::results::{JobRecord, TaskSummary};

/// Releases of each task one ring holds.
pub const RING_WINDOW: Nanos = Nanos::from_secs(2);
/// Smallest ring, in records.
pub const RING_MIN: usize = 128;
/// Records of all rings together, at most (each ring keeps [`RING_MIN`]).
pub const RING_BUDGET: usize = 1 << 18;

/// What a task thread queues for the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobMessage {
    /// One job.
    Job(JobRecord),
    /// Jobs `first_job..first_job + count` of the task, released before the
    /// run ended and never started.
    Unstarted {
        /// The first job number.
        first_job: u64,
        /// How many.
        count: u64,
    },
}

impl JobMessage {
    /// What a ring is pre-faulted with.
    pub const FILLER: JobMessage = JobMessage::Unstarted {
        first_job: 0,
        count: 0,
    };
}

/// The capacity of each task's ring, in records (see the module docs).
pub fn job_ring_capacities(set: &TaskSet) -> Vec<usize> {
    let periods: Vec<Nanos> = set.tasks.iter().map(|t| t.period).collect();
    ring_capacities(&periods, RING_WINDOW, RING_MIN, RING_BUDGET)
}

/// Release k of a task: offset + k T, relative to the run's start.
fn release_at(offset: Nanos, period: Nanos, k: u64) -> Nanos {
    period
        .checked_mul(k)
        .and_then(|r| r.checked_add(offset))
        .unwrap_or(Nanos::MAX)
}

/// A task thread's record of its jobs: allocation-free.
pub struct JobLog {
    /// The online summary (skipped releases included).
    pub summary: TaskSummary,
    ring: Option<RecordSender<JobMessage>>,
}

impl JobLog {
    /// A log that queues records on `ring` when there is one.
    pub fn new(ring: Option<RecordSender<JobMessage>>) -> JobLog {
        JobLog {
            summary: TaskSummary::default(),
            ring,
        }
    }

    /// One job (`ended` matters only when it has no finish time).
    #[inline]
    pub fn job(&mut self, job: JobRecord, ended: Nanos) {
        self.summary.record(&job, ended);
        if let Some(ring) = &mut self.ring {
            ring.send(JobMessage::Job(job));
        }
    }

    /// Jobs `first_job..first_job + count` of `task`, never started before
    /// the run ended at `ended`.
    pub fn unstarted(&mut self, task: &Task, first_job: u64, count: u64, ended: Nanos) {
        if count == 0 {
            return;
        }
        let first = release_at(task.offset, task.period, first_job);
        self.summary
            .record_unstarted(first, task.period, task.deadline, count, ended);
        if let Some(ring) = &mut self.ring {
            if !ring.send(JobMessage::Unstarted { first_job, count }) {
                ring.count_dropped(count - 1);
            }
        }
    }

    /// Records lost to a full ring.
    pub fn dropped(&self) -> u64 {
        self.ring.as_ref().map_or(0, RecordSender::dropped)
    }
}

/// How long the run lasted, as the task threads and the writer see it:
/// `min(ended_ns, start + duration) - start`, where the watchdog stores
/// `ended_ns` (absolute) before it sets the stop flag after a Ctrl-C; it is
/// final for every record made after the stop.
#[derive(Debug, Clone)]
pub struct RunEnd {
    /// Absolute start (the first release of an offset-0 task).
    pub start_ns: Arc<AtomicU64>,
    /// Absolute time of a Ctrl-C, `u64::MAX` without one.
    pub ended_ns: Arc<AtomicU64>,
    /// The requested duration.
    pub duration: Nanos,
}

impl RunEnd {
    /// The run's length so far decided (see the type's docs).
    pub fn ended(&self) -> Nanos {
        let start = self.start_ns.load(Ordering::SeqCst);
        let interrupted = self.ended_ns.load(Ordering::SeqCst);
        Nanos::from_ns(interrupted.saturating_sub(start)).min(self.duration)
    }
}

/// The writer-thread end: writes every queued record to every sink. A sink
/// that fails is not written to again and its first error is kept; the
/// rings are still emptied, so the task threads never notice.
pub struct JobWriter {
    /// (offset, period, deadline) of each task.
    timing: Vec<(Nanos, Nanos, Nanos)>,
    end: RunEnd,
    sinks: Vec<(Box<dyn JobSink + Send>, io::Result<()>)>,
}

impl JobWriter {
    /// Writes the jobs of `set` to `sinks`.
    pub fn new(set: &TaskSet, end: RunEnd, sinks: Vec<Box<dyn JobSink + Send>>) -> JobWriter {
        JobWriter {
            timing: set
                .tasks
                .iter()
                .map(|t| (t.offset, t.period, t.deadline))
                .collect(),
            end,
            sinks: sinks.into_iter().map(|s| (s, Ok(()))).collect(),
        }
    }

    fn write(&mut self, job: &JobRecord) {
        let ended = self.end.ended();
        for (sink, state) in &mut self.sinks {
            if state.is_ok() {
                *state = sink.job(job, ended);
            }
        }
    }

    /// Completes every sink that has not failed; one result per sink, in
    /// order.
    pub fn finish(self) -> Vec<io::Result<()>> {
        self.sinks
            .into_iter()
            .map(|(mut sink, state)| state.and_then(|()| sink.finish()))
            .collect()
    }
}

impl RecordSink<JobMessage> for JobWriter {
    fn accept(&mut self, task: usize, message: JobMessage) {
        match message {
            JobMessage::Job(job) => self.write(&job),
            JobMessage::Unstarted { first_job, count } => {
                let Some(&(offset, period, deadline)) = self.timing.get(task) else {
                    return;
                };
                for k in first_job..first_job.saturating_add(count) {
                    let release = release_at(offset, period, k);
                    let job =
                        JobRecord::unstarted(task, k, release, release.saturating_add(deadline));
                    self.write(&job);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::record_ring;
    use std::sync::Mutex;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    /// Collects what it is given (tests only: it grows with the run).
    struct Collect(Arc<Mutex<Vec<(JobRecord, Nanos)>>>);

    impl JobSink for Collect {
        fn job(&mut self, job: &JobRecord, ended: Nanos) -> io::Result<()> {
            self.0.lock().unwrap().push((*job, ended));
            Ok(())
        }
    }

    #[test]
    fn a_tiny_ring_drops_and_counts_what_it_cannot_hold_and_the_summary_stays_exact() {
        let task = Task::new("t", ms(10), ms(1)).with_deadline(ms(5));
        let (tx, mut rx) = record_ring(2, JobMessage::FILLER);
        let mut log = JobLog::new(Some(tx));
        let done = |k: u64| JobRecord {
            start: Some(ms(10 * k)),
            finish: Some(ms(10 * k + 1)),
            ..JobRecord::unstarted(0, k, ms(10 * k), ms(10 * k + 5))
        };
        for k in 0..3 {
            log.job(done(k), ms(100));
        }
        // One range of 4 jobs: lost as one message, counted as 4 records.
        log.unstarted(&task, 3, 4, ms(100));
        assert_eq!(log.dropped(), 1 + 4);
        assert_eq!(log.summary.released(), 7);
        let m = log.summary.metrics("t");
        assert_eq!((m.completed, m.unfinished, m.misses), (3, 4, 4));
        let mut queued = Vec::new();
        rx.drain(|m| queued.push(m));
        assert_eq!(
            queued,
            vec![JobMessage::Job(done(0)), JobMessage::Job(done(1))]
        );
    }

    #[test]
    fn the_writer_expands_unstarted_ranges_into_rows_with_the_final_end() {
        let set = TaskSet::new(
            "s",
            vec![
                Task::new("a", ms(10), ms(1)),
                Task::new("b", ms(20), ms(1))
                    .with_offset(ms(3))
                    .with_deadline(ms(7)),
            ],
        );
        let end = RunEnd {
            start_ns: Arc::new(AtomicU64::new(1_000)),
            ended_ns: Arc::new(AtomicU64::new(u64::MAX)),
            duration: ms(100),
        };
        let rows = Arc::new(Mutex::new(Vec::new()));
        let mut writer = JobWriter::new(&set, end.clone(), vec![Box::new(Collect(rows.clone()))]);
        writer.accept(
            1,
            JobMessage::Unstarted {
                first_job: 2,
                count: 3,
            },
        );
        end.ended_ns.store(1_000 + ms(40).as_ns(), Ordering::SeqCst);
        writer.accept(
            0,
            JobMessage::Job(JobRecord::unstarted(0, 4, ms(40), ms(50))),
        );
        assert!(writer.finish().iter().all(Result::is_ok));
        let rows = rows.lock().unwrap();
        let got: Vec<(usize, u64, u64, u64, u64)> = rows
            .iter()
            .map(|(j, e)| {
                (
                    j.task,
                    j.job,
                    j.release.as_ns(),
                    j.deadline.as_ns(),
                    e.as_ns(),
                )
            })
            .collect();
        let ms_ns = |v| ms(v).as_ns();
        assert_eq!(
            got,
            vec![
                (1, 2, ms_ns(43), ms_ns(50), ms_ns(100)),
                (1, 3, ms_ns(63), ms_ns(70), ms_ns(100)),
                (1, 4, ms_ns(83), ms_ns(90), ms_ns(100)),
                (0, 4, ms_ns(40), ms_ns(50), ms_ns(40)),
            ]
        );
    }

    #[test]
    fn a_failing_sink_keeps_its_first_error_and_is_left_alone() {
        struct Full(u32);
        impl JobSink for Full {
            fn job(&mut self, _: &JobRecord, _: Nanos) -> io::Result<()> {
                self.0 += 1;
                Err(io::Error::other(format!("disk full at call {}", self.0)))
            }
        }
        let set = TaskSet::new("s", vec![Task::new("a", ms(10), ms(1))]);
        let end = RunEnd {
            start_ns: Arc::new(AtomicU64::new(0)),
            ended_ns: Arc::new(AtomicU64::new(u64::MAX)),
            duration: ms(100),
        };
        let mut writer = JobWriter::new(&set, end, vec![Box::new(Full(0))]);
        writer.accept(
            0,
            JobMessage::Unstarted {
                first_job: 0,
                count: 5,
            },
        );
        let results = writer.finish();
        assert_eq!(
            results[0].as_ref().unwrap_err().to_string(),
            "disk full at call 1"
        );
    }

    #[test]
    fn gap_rings_are_small_and_cover_two_seconds() {
        let set = rtlab_model::file::load("builtin:gap").unwrap().set;
        let caps = job_ring_capacities(&set);
        for (t, c) in set.tasks.iter().zip(&caps) {
            assert!(
                *c as u64 >= RING_WINDOW.as_ns() / t.period.as_ns(),
                "{}",
                t.name
            );
        }
        assert!(caps.iter().sum::<usize>() < 4096, "{caps:?}");
    }
}
