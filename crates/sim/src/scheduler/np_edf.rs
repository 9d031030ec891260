//! Non-preemptive earliest deadline first (`np-edf`).
//!
//! Rule: when the processor is free, the ready job with the earliest absolute
//! deadline starts and runs to completion (Jeffay, Stanat & Martel, RTSS
//! 1991). Ties: earlier release, then the task declared first. Paper 000
//! discusses it as what the Lingua Franca GEDF scheduler amounts to on one
//! worker without preemption.

use super::{pick_highest, Hooks, PolicyKind, Priority, Scheduler, System};
use crate::job::{Job, JobId};

/// Non-preemptive EDF.
#[derive(Debug, Clone, Copy, Default)]
pub struct NpEdf;

impl Scheduler for NpEdf {
    fn name(&self) -> String {
        "np-edf".into()
    }

    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        pick_highest(sys, false, |job| Priority::deadline(job.deadline))
    }

    fn kind(&self) -> PolicyKind {
        PolicyKind::Deadline
    }

    fn priority(&self, job: &Job) -> Option<Priority> {
        Some(Priority::deadline(job.deadline))
    }
}
