//! Round robin with a quantum (`rr:QUANTUM`).
//!
//! Rule: ready jobs wait in one FIFO queue in the order they became ready;
//! the head runs for at most one quantum of wall-clock time, then goes to the
//! back of the queue (SCHED_RR, POSIX 1003.1b; the RR baseline of paper 002's
//! Hartstone comparison). A job that finishes or blocks early gives the rest
//! of its quantum up; the next job starts a fresh quantum.

use std::collections::VecDeque;

use rtlab_model::Nanos;

use super::{Scheduler, System};
use crate::job::JobId;

/// Round robin.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    quantum: Nanos,
    queue: VecDeque<JobId>,
    /// The job holding the current quantum and when that quantum ends.
    slice: Option<(JobId, Nanos)>,
}

impl RoundRobin {
    /// Round robin with this quantum (> 0).
    pub fn new(quantum: Nanos) -> RoundRobin {
        RoundRobin {
            quantum,
            queue: VecDeque::new(),
            slice: None,
        }
    }

    fn remove(&mut self, job: JobId) {
        self.queue.retain(|&j| j != job);
        if self.slice.is_some_and(|(j, _)| j == job) {
            self.slice = None;
        }
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> String {
        format!("rr:{}", self.quantum)
    }

    fn on_release(&mut self, job: JobId, _sys: &System<'_>) {
        self.queue.push_back(job);
    }

    fn on_unblock(&mut self, job: JobId, _sys: &System<'_>) {
        self.queue.push_back(job);
    }

    fn on_complete(&mut self, job: JobId, _sys: &System<'_>) {
        self.remove(job);
    }

    fn on_block(&mut self, job: JobId, _sys: &System<'_>) {
        self.remove(job);
    }

    fn on_callback(&mut self, sys: &System<'_>) {
        if let Some((job, end)) = self.slice {
            if end <= sys.now() {
                self.slice = None;
                if self.queue.front() == Some(&job) {
                    self.queue.rotate_left(1);
                }
            }
        }
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        // A quantum that expired while the job was alone in the queue
        // rotates as soon as someone else is waiting.
        if let Some((job, end)) = self.slice {
            if end <= sys.now() && self.queue.len() > 1 && self.queue.front() == Some(&job) {
                self.queue.rotate_left(1);
                self.slice = None;
            }
        }
        let head = self.queue.iter().copied().find(|&j| sys.may_start(j))?;
        match self.slice {
            Some((job, _)) if job == head => {}
            _ => self.slice = Some((head, sys.now().saturating_add(self.quantum))),
        }
        Some(head)
    }

    fn callback_at(&self) -> Option<Nanos> {
        // With one job in the queue the rotation is a no-op; skip the event.
        self.slice
            .filter(|_| self.queue.len() > 1)
            .map(|(_, end)| end)
    }
}
