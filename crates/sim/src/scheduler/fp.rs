//! Preemptive fixed-priority scheduling (`fp:rm`, `fp:dm`, `fp:given`).
//!
//! Rule: at every instant the ready job of the most urgent task runs,
//! preempting any other. Levels are rate monotonic (Liu & Layland, JACM
//! 1973), deadline monotonic (Leung & Whitehead 1982) or the file's own
//! `priority` fields; larger is more urgent. Equal levels (possible only with
//! `given`) run in release order (SCHED_FIFO within a level). This is the
//! scheduler of paper 004 (RT Mach) and the FPS side of paper 001.

use rtlab_model::Task;

use super::{pick_highest, Hooks, PolicyKind, Priority, Scheduler, System};
use crate::error::SimError;
use crate::job::{Job, JobId};
use rtlab_model::policy::PriorityAssignment;

/// Preemptive fixed priority.
#[derive(Debug, Clone)]
pub struct FixedPriority {
    policy: PriorityAssignment,
    levels: Vec<u64>,
}

impl FixedPriority {
    /// Assigns the levels for `tasks`.
    pub fn new(policy: PriorityAssignment, tasks: &[Task]) -> Result<FixedPriority, SimError> {
        Ok(FixedPriority {
            policy,
            levels: super::fixed_levels(policy, tasks, &format!("fp:{policy}"))?,
        })
    }

    /// The level of each task (larger is more urgent).
    pub fn levels(&self) -> &[u64] {
        &self.levels
    }

    fn level(&self, task: usize) -> Priority {
        // Tasks added by an overload phase after construction get the lowest level.
        Priority(self.levels.get(task).copied().unwrap_or(0))
    }
}

impl Scheduler for FixedPriority {
    fn name(&self) -> String {
        format!("fp:{}", self.policy.name())
    }

    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        pick_highest(sys, true, |job| self.level(job.task))
    }

    fn kind(&self) -> PolicyKind {
        PolicyKind::FixedPriority
    }

    fn priority(&self, job: &Job) -> Option<Priority> {
        Some(self.level(job.task))
    }

    fn task_priority(&self, task: usize) -> Option<Priority> {
        Some(self.level(task))
    }
}
