//! One job of one task, as the simulator and the real-thread executor
//! record it.

use serde::Serialize;

use crate::Nanos;

/// One job of one task. Small and `Copy`: the real-time path queues it on a
/// pre-allocated ring.
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
    /// When the job first got the CPU (`None`: never started before the end).
    pub start: Option<Nanos>,
    /// When the job's work was done (`None`: unfinished at the end, or aborted).
    pub finish: Option<Nanos>,
    /// Removed at its deadline unfinished (the simulator's `--on-miss abort`).
    pub aborted: bool,
    /// Voluntary context switches of the thread during the job (0 in the
    /// simulator, whose jobs never block on the OS).
    pub voluntary_switches: u64,
    /// Times the job was preempted: involuntary context switches on real
    /// threads, dispatches of another job while it was ready in the simulator.
    pub involuntary_switches: u64,
    /// The CPU the job finished on (`None` if unfinished or simulated).
    pub cpu: Option<u32>,
    /// The CPU the job first ran on: set by the multiprocessor simulator
    /// only, and absent from the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_cpu: Option<u32>,
    /// Times the job resumed on another CPU than the one it last ran on
    /// (global schedulers on m > 1); absent from the JSON when 0, so
    /// uniprocessor records print as before.
    #[serde(skip_serializing_if = "crate::results::is_zero")]
    pub migrations: u64,
    /// Lock wait: the time the job spent waiting to take its critical
    /// sections' locks (on real threads, inside `pthread_mutex_lock`, read
    /// on the monotonic clock before and after each call and summed; in the
    /// simulator, the time it spent blocked on a resource). `None` when its
    /// task has no critical sections. It is not the whole priority
    /// inversion: a job kept from starting by a ceiling, or preempted by a
    /// boosted holder, does not wait on a lock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<Nanos>,
    /// Remote blocking under a multiprocessor locking protocol (the
    /// simulator's `--locking mpcp|dpcp|fmlp+|mrsp|msrp|omlp`): the time
    /// the job waited for global resources, suspended or spinning (see
    /// `rtlab_analysis::mp_locking` for each protocol's reading). `None`
    /// outside such runs and absent from the JSON then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_blocked: Option<Nanos>,
    /// Local blocking under a multiprocessor locking protocol: the time
    /// the job was ready while its processor served lower-priority work
    /// (a boosted or ceiling-raised section, a spin) or an agent. `None`
    /// outside such runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_blocked: Option<Nanos>,
    /// The execution time the job was asked for: its C, scaled by the phase
    /// its release falls in (the simulator's drawn demand; the executor's
    /// burn). `None` where a producer does not say. Not serialised: job
    /// files keep their columns; it is there for sinks that compare.
    #[serde(skip)]
    pub demand: Option<Nanos>,
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
            aborted: false,
            voluntary_switches: 0,
            involuntary_switches: 0,
            cpu: None,
            start_cpu: None,
            migrations: 0,
            blocked: None,
            remote_blocked: None,
            local_blocked: None,
            demand: None,
        }
    }

    /// start - release: how late the job got the CPU.
    #[inline]
    pub fn lag(&self) -> Option<Nanos> {
        self.start.map(|s| s.saturating_sub(self.release))
    }

    /// finish - release.
    #[inline]
    pub fn response(&self) -> Option<Nanos> {
        self.finish.map(|f| f.saturating_sub(self.release))
    }

    /// Missed its deadline: finished after it, aborted at it, or unfinished
    /// when a run that lasted `ended` was past it.
    #[inline]
    pub fn missed(&self, ended: Nanos) -> bool {
        match self.finish {
            Some(f) => f > self.deadline,
            None => self.aborted || self.deadline <= ended,
        }
    }

    /// Paper 000's (Lingua Franca) view: the deadline bounds the *start*, so
    /// the job missed if it started after release + D, or had not started
    /// by then.
    #[inline]
    pub fn missed_start_deadline(&self, ended: Nanos) -> bool {
        match self.start {
            Some(s) => s > self.deadline,
            None => self.aborted || self.deadline <= ended,
        }
    }
}
