//! Non-preemptive first-in first-out (`fifo`).
//!
//! Rule: jobs run to completion in release order; jobs released at the same
//! instant run in task declaration order. This is what the Lingua Franca
//! runtime on SCHED_FIFO threads of equal priority does in paper 000 (§4.2):
//! a reaction, once started, runs to completion, and the order of
//! declaration is the only priority there is — which is why scenario 1 meets
//! its deadlines only when the tight task is declared first.

use super::{pick_highest, Hooks, Priority, Scheduler, System};
use crate::job::JobId;

/// Non-preemptive FIFO by release time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fifo;

impl Scheduler for Fifo {
    fn name(&self) -> String {
        "fifo".into()
    }

    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        // Earlier release compares larger; ties fall to declaration order.
        pick_highest(sys, false, |job| Priority(u64::MAX - job.release.as_ns()))
    }
}
