//! Round robin with Linux SCHED_RR's timeslice rule (`rr:QUANTUM:linux`).
//!
//! Rule (Linux `kernel/sched/rt.c`): every task (thread) owns a timeslice
//! `time_slice`, set to `sched_rr_timeslice` (the quantum Q) when the thread
//! is created. `task_tick_rt` decrements the running thread's slice; only
//! when it reaches 0 is it refilled to Q and the thread requeued at the
//! tail of its priority level (if it is not alone there). Nothing else
//! touches it: a thread that **blocks or sleeps** (here: its job completes)
//! keeps what is left and its next job starts with that remainder, not with
//! a fresh quantum; a woken thread joins the **tail** of the queue. This is
//! where it differs from [`super::rr`] (`rr:Q`), which gives every dispatch a
//! fresh quantum. A thread that runs alone keeps using up (and refilling) its
//! slice, and a thread that arrives meanwhile waits for the slice to run
//! out, not for a quantum counted from its arrival.
//!
//! All tasks share one level, as `rtlab run --policy rr` runs them (one
//! SCHED_RR priority), so no thread is preempted by a higher-priority one;
//! preemption happens only at slice expiry.
//!
//! Time: the kernel counts the slice in ticks (it samples the running thread
//! at each tick, `--p->rt.time_slice`); the simulator counts it in exact
//! execution time (the processor time the engine credits the job; time
//! taken by overheads does not count), which differs by less than one tick
//! per dispatch (1 ms at HZ = 1000, 4 ms at HZ = 250, against a 100 ms
//! slice). Tickless, the slice's end is acted on at its exact instant; with
//! `--tick` (paper 004's model) the expiry is noticed at the next tick, and
//! the time run past it counts against the next slice.

use std::collections::VecDeque;

use rtlab_model::Nanos;

use super::{Scheduler, System};
use crate::job::JobId;

/// Round robin with per-task timeslices that survive sleeping.
#[derive(Debug, Clone)]
pub struct LinuxRoundRobin {
    quantum: Nanos,
    /// Ready jobs and their tasks, head first.
    queue: VecDeque<(JobId, usize)>,
    /// Each task's remaining timeslice (`time_slice`), grown on demand.
    left: Vec<Nanos>,
    /// The job on the processor (as last picked) and its task.
    current: Option<(JobId, usize)>,
    /// The current job's slice ran out since it was last checked.
    expired: bool,
    /// Others were waiting when the current job was last picked (so its
    /// slice's end was to requeue it; alone, an expiry only refills).
    contended: bool,
    /// When the current slice ends if the job keeps the processor.
    slice_end: Option<Nanos>,
}

impl LinuxRoundRobin {
    /// Linux round robin with this timeslice (> 0).
    pub fn new(quantum: Nanos) -> LinuxRoundRobin {
        LinuxRoundRobin {
            quantum,
            queue: VecDeque::new(),
            left: Vec::new(),
            current: None,
            expired: false,
            contended: false,
            slice_end: None,
        }
    }

    fn left_mut(&mut self, task: usize) -> &mut Nanos {
        if self.left.len() <= task {
            self.left.resize(task + 1, self.quantum);
        }
        &mut self.left[task]
    }

    fn enqueue(&mut self, job: JobId, sys: &System<'_>) {
        self.queue.push_back((job, sys.job(job).task));
    }

    fn remove(&mut self, job: JobId) {
        self.queue.retain(|&(j, _)| j != job);
        if self.current.is_some_and(|(j, _)| j == job) {
            self.current = None;
            self.expired = false;
            self.slice_end = None;
        }
    }

    /// A slice that ran out while others waited: the head goes to the tail
    /// (`requeue_task_rt`); one that ran out while the job was alone was
    /// only refilled, and the job keeps the processor.
    fn rotate_if_expired(&mut self) {
        let expired = std::mem::take(&mut self.expired);
        if !(expired && self.contended) {
            return;
        }
        let head = self.queue.front().map(|&(j, _)| j);
        if self.queue.len() > 1 && head.is_some() && head == self.current.map(|(j, _)| j) {
            self.queue.rotate_left(1);
        }
    }
}

impl Scheduler for LinuxRoundRobin {
    fn name(&self) -> String {
        format!("rr:{}:linux", self.quantum)
    }

    fn on_release(&mut self, job: JobId, sys: &System<'_>) {
        self.enqueue(job, sys);
    }

    fn on_unblock(&mut self, job: JobId, sys: &System<'_>) {
        self.enqueue(job, sys);
    }

    fn on_complete(&mut self, job: JobId, _sys: &System<'_>) {
        self.remove(job);
    }

    fn on_block(&mut self, job: JobId, _sys: &System<'_>) {
        self.remove(job);
    }

    /// Uses up the slice; each time it reaches 0 it is refilled to Q
    /// (`task_tick_rt`), so `left = Q - ((Q - left + amount) mod Q)`.
    fn on_executed(&mut self, job: JobId, amount: Nanos) {
        let Some((current, task)) = self.current else {
            return;
        };
        if current != job || amount.is_zero() {
            return;
        }
        let quantum = self.quantum.as_ns();
        let left = self.left_mut(task);
        if amount >= *left {
            let over = (amount - *left).as_ns() % quantum;
            *left = Nanos::from_ns(quantum - over);
            self.expired = true;
        } else {
            *left = *left - amount;
        }
    }

    fn on_callback(&mut self, _sys: &System<'_>) {
        self.rotate_if_expired();
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        self.rotate_if_expired();
        let (head, task) = self
            .queue
            .iter()
            .copied()
            .find(|&(j, _)| sys.may_start(j))?;
        self.current = Some((head, task));
        self.contended = self.queue.len() > 1;
        let left = *self.left_mut(task);
        self.slice_end = Some(sys.now().saturating_add(left));
        Some(head)
    }

    fn callback_at(&self) -> Option<Nanos> {
        // Alone in the queue, an expiry changes nothing that `on_executed`
        // does not already account; skip the event.
        self.slice_end.filter(|_| self.queue.len() > 1)
    }
}
