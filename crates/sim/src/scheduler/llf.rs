//! Least laxity first (`llf`; Mok 1983; Dertouzos & Mok 1989).
//!
//! Rule: at every scheduling point (a release, a completion, an abort, a
//! lock operation) the ready job of least laxity `d - t - remaining` runs,
//! preempting any other. At one instant all jobs share `t`, so it compares
//! `d - remaining`: the latest instant the job can start its remaining work
//! and still meet its deadline. Ties go to the running job, then the earlier
//! release, then the task declared first. Like EDF it is optimal on one
//! processor; unlike EDF a job's urgency grows while it waits.
//!
//! Laxities are compared at scheduling points only: between two events a
//! waiting job's laxity falls while the running job's stays, and the choice
//! is not revisited until the next event (deciding again at every laxity
//! crossing makes two jobs of equal laxity swap every nanosecond). SimSo's
//! `LLF` re-decides on a 1 ms timer besides its events instead.

use super::{pick_highest, Hooks, Priority, Scheduler, System};
use crate::job::JobId;

/// Least laxity first at every scheduling point.
#[derive(Debug, Clone, Copy, Default)]
pub struct Llf;

impl Scheduler for Llf {
    fn name(&self) -> String {
        "llf".into()
    }

    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        pick_highest(sys, true, |job| {
            Priority::deadline(job.deadline.saturating_sub(job.remaining()))
        })
    }
}
