//! The job lifecycle both engines share (the uniprocessor [`crate::engine`]
//! and the global [`crate::multi::global`]): when a job is released and
//! how long it needs ([`Draws`]), the one-job-at-a-time rule of a task's
//! thread and the backlog limit ([`Backlog`]), and where a job goes when it
//! leaves, its task's summary and the job sink ([`Ledger`]).
//!
//! Each engine keeps its own job table and ready structure (the global
//! engine's ready set can be replaced by an indexed heap without touching
//! these), and calls these at the same points: [`Draws::ready_at`] when it
//! schedules a release, [`Draws::demand`] when the job is made,
//! [`Backlog::arrive`] to queue it behind its task's unfinished job,
//! [`Ledger::record`] when it completes, is aborted or is still unfinished
//! at the end, and [`Backlog::retire`] to promote the next job of its task.

use std::collections::VecDeque;
use std::io;

use rand_chacha::ChaCha8Rng;
use rtlab_model::random::{below, stream_rng};
use rtlab_model::results::{JobRecord, JobSink, TaskMetrics, TaskSummary};
use rtlab_model::{Nanos, Task};

use crate::config::{ExecModel, JitterModel};
use crate::engine::{BacklogStop, JITTER_STREAMS, MAX_PENDING_JOBS};

/// The seeded draws of a run: execution times and release jitter, one
/// ChaCha8 stream per task for each (apart, so that turning jitter on does
/// not change execution times), and when each task's latest job was made
/// ready (jitter never lets a job overtake its predecessor).
pub(crate) struct Draws {
    exec: Vec<ChaCha8Rng>,
    jitter: Vec<ChaCha8Rng>,
    last_ready: Vec<Nanos>,
}

impl Draws {
    /// The streams of `tasks` tasks under `seed`.
    pub(crate) fn new(seed: u64, tasks: usize) -> Draws {
        Draws {
            exec: (0..tasks).map(|i| stream_rng(seed, i as u64)).collect(),
            jitter: (0..tasks)
                .map(|i| stream_rng(seed, JITTER_STREAMS | i as u64))
                .collect(),
            last_ready: vec![Nanos::ZERO; tasks],
        }
    }

    /// When the job of task `i` (`task`) arriving at `at` is made ready:
    /// `at` plus its release jitter under `model`, never before the task's
    /// previous job.
    #[inline]
    pub(crate) fn ready_at(
        &mut self,
        i: usize,
        task: &Task,
        at: Nanos,
        model: JitterModel,
    ) -> Nanos {
        let jitter = task.jitter;
        let delay = match model {
            JitterModel::None => Nanos::ZERO,
            JitterModel::Max => jitter,
            JitterModel::Uniform if jitter.is_zero() => Nanos::ZERO,
            JitterModel::Uniform => Nanos::from_ns(below(&mut self.jitter[i], jitter.as_ns() + 1)),
        };
        let ready = at.saturating_add(delay).max(self.last_ready[i]);
        self.last_ready[i] = ready;
        ready
    }

    /// The execution time of the next job of task `i`: its WCET, or under
    /// [`ExecModel::Uniform`] a draw in `[BCET, WCET]`.
    #[inline]
    pub(crate) fn demand(&mut self, i: usize, task: &Task, model: ExecModel) -> Nanos {
        match task.bcet.filter(|&b| b < task.wcet) {
            Some(bcet) if model == ExecModel::Uniform => {
                let span = (task.wcet - bcet).as_ns() + 1;
                bcet + Nanos::from_ns(below(&mut self.exec[i], span))
            }
            _ => task.wcet,
        }
    }
}

/// A task is one thread: its jobs run one after the other. `S` is the
/// engine's job slot.
pub(crate) struct Backlog<S> {
    head: Vec<Option<S>>,
    pending: Vec<VecDeque<S>>,
    /// Jobs in all of `pending`.
    waiting: usize,
    stopped: Option<BacklogStop>,
}

impl<S: Copy + PartialEq> Backlog<S> {
    /// Nothing released yet, `tasks` tasks.
    pub(crate) fn new(tasks: usize) -> Backlog<S> {
        Backlog {
            head: vec![None; tasks],
            pending: vec![VecDeque::new(); tasks],
            waiting: 0,
            stopped: None,
        }
    }

    /// The job of `task` that is ready (or blocked), if any.
    #[inline]
    pub(crate) fn head(&self, task: usize) -> Option<S> {
        self.head[task]
    }

    /// Every task's ready job, in task order.
    pub(crate) fn heads(&self) -> impl Iterator<Item = S> + '_ {
        self.head.iter().flatten().copied()
    }

    /// Marks `slot` as its task's ready job.
    #[inline]
    pub(crate) fn set_head(&mut self, task: usize, slot: S) {
        self.head[task] = Some(slot);
    }

    /// A new job of `task`: true when it is ready at once (the task has no
    /// unfinished job), false when it waits behind that job. Past
    /// [`MAX_PENDING_JOBS`] waiting jobs the run must stop at `now`
    /// ([`Backlog::stopped`]; the caller ends its run there).
    #[inline]
    pub(crate) fn arrive(&mut self, task: usize, slot: S, now: Nanos) -> bool {
        if self.head[task].is_none() {
            return true;
        }
        self.pending[task].push_back(slot);
        self.waiting += 1;
        if self.waiting > MAX_PENDING_JOBS && self.stopped.is_none() {
            self.stopped = Some(BacklogStop {
                at: now,
                pending: self.waiting,
            });
        }
        false
    }

    /// The task's ready job left: the next one to make ready, if any.
    #[inline]
    pub(crate) fn retire(&mut self, task: usize) -> Option<S> {
        self.head[task] = None;
        let next = self.pending[task].pop_front();
        if next.is_some() {
            self.waiting -= 1;
        }
        next
    }

    /// A waiting job left without becoming ready (aborted at its deadline).
    pub(crate) fn drop_waiting(&mut self, task: usize, slot: S) {
        let before = self.pending[task].len();
        self.pending[task].retain(|&s| s != slot);
        self.waiting -= before - self.pending[task].len();
    }

    /// Why the run must stop early, if it must.
    pub(crate) fn stopped(&self) -> Option<BacklogStop> {
        self.stopped
    }
}

/// Where a job goes when it leaves the run: its task's summary (the
/// report's per-task figures, folded online) and the job sink.
pub(crate) struct Ledger {
    summaries: Vec<TaskSummary>,
    sink: Option<Box<dyn JobSink>>,
    /// The sink's first error (it is given no job after it).
    written: io::Result<()>,
}

impl Ledger {
    /// No job yet, `tasks` tasks.
    pub(crate) fn new(tasks: usize) -> Ledger {
        Ledger {
            summaries: vec![TaskSummary::default(); tasks],
            sink: None,
            written: Ok(()),
        }
    }

    /// Sends every record from now on to `sink` too.
    pub(crate) fn set_sink(&mut self, sink: Box<dyn JobSink>) {
        self.sink = Some(sink);
    }

    /// Folds `record` into its task's summary (a run of `duration`) and
    /// hands it to the sink.
    #[inline]
    pub(crate) fn record(&mut self, record: &JobRecord, duration: Nanos) {
        self.summaries[record.task].record(record, duration);
        if let (Some(sink), Ok(())) = (&mut self.sink, &self.written) {
            self.written = sink.job(record, duration);
        }
    }

    /// True when a job sink takes the records (then every job leaves
    /// through [`Ledger::record`]).
    #[inline]
    pub(crate) fn has_sink(&self) -> bool {
        self.sink.is_some()
    }

    /// `task`'s summary, for a completed job folded in without its record
    /// ([`TaskSummary::record_completed`]: the same figures); only when no
    /// sink takes the records ([`Ledger::has_sink`]).
    #[inline]
    pub(crate) fn summary_without_sink(&mut self, task: usize) -> &mut TaskSummary {
        debug_assert!(self.sink.is_none());
        &mut self.summaries[task]
    }

    /// A release of `task` skipped while its job was late.
    pub(crate) fn skipped(&mut self, task: usize) {
        self.summaries[task].record_skipped(1);
    }

    /// The per-task figures, named after `tasks`.
    pub(crate) fn metrics(&self, tasks: &[Task]) -> Vec<TaskMetrics> {
        self.summaries
            .iter()
            .zip(tasks)
            .map(|(s, t)| s.metrics(&t.name))
            .collect()
    }

    /// Ends the sink's output; its first error, if any.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        std::mem::replace(&mut self.written, Ok(()))?;
        match &mut self.sink {
            Some(sink) => sink.finish(),
            None => Ok(()),
        }
    }
}
