//! Preemptive earliest deadline first (`edf`).
//!
//! Rule: the ready job with the earliest absolute deadline runs, preempting
//! any other (Liu & Layland, JACM 1973). On equal deadlines the running job
//! keeps the processor, then the earlier release, then the task declared
//! first. Optimal on one processor: no deadline is missed whenever the
//! processor-demand test passes. The EDF side of paper 001.

use super::{pick_highest, Hooks, PolicyKind, Priority, Scheduler, System};
use crate::job::{Job, JobId};

/// Preemptive EDF.
#[derive(Debug, Clone, Copy, Default)]
pub struct Edf;

impl Scheduler for Edf {
    fn name(&self) -> String {
        "edf".into()
    }

    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        pick_highest(sys, true, |job| Priority::deadline(job.deadline))
    }

    fn kind(&self) -> PolicyKind {
        PolicyKind::Deadline
    }

    fn priority(&self, job: &Job) -> Option<Priority> {
        Some(Priority::deadline(job.deadline))
    }
}
