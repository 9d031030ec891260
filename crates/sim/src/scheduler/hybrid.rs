//! EDF with a fixed-priority fallback under overload (`hybrid`, `hybrid:dm`).
//!
//! Paper 001 (Carletto & Vardanega) observes that EDF wins below 100 % load
//! and collapses above it (the domino effect), while FPS degrades linearly,
//! and proposes to run EDF while the load is feasible and FPS when it is not.
//!
//! Rule: in EDF mode the earliest deadline runs (as [`super::edf`]). The
//! **overload detector** runs at every decision: with the ready jobs sorted
//! by deadline, if some job `j` has `now + Σ remaining(i : d_i <= d_j) >
//! d_j` — EDF would miss `j` for certain, even with no further releases — or
//! some ready job is already late, the scheduler switches to fixed priority
//! (RM or DM levels, as [`super::fp`]). It switches back to EDF at the first
//! decision where the same test passes (no ready job late or doomed). The
//! test is exact for the jobs present and costs O(n log n) per decision.

use rtlab_model::{Nanos, Task};
use serde::Serialize;

use super::{pick_highest, Hooks, Priority, Scheduler, System};
use crate::error::SimError;
use crate::job::JobId;
use rtlab_model::policy::PriorityAssignment;

/// The EDF/FPS hybrid.
#[derive(Debug, Clone)]
pub struct Hybrid {
    policy: PriorityAssignment,
    levels: Vec<u64>,
    fixed_mode: bool,
    switches: u64,
    since: Nanos,
    fixed_time: Nanos,
    scratch: Vec<(Nanos, Nanos)>,
}

impl Hybrid {
    /// EDF with `policy` (rm or dm) as the fallback.
    pub fn new(policy: PriorityAssignment, tasks: &[Task]) -> Result<Hybrid, SimError> {
        Ok(Hybrid {
            policy,
            levels: super::fixed_levels(policy, tasks, &format!("hybrid:{policy}"))?,
            fixed_mode: false,
            switches: 0,
            since: Nanos::ZERO,
            fixed_time: Nanos::ZERO,
            scratch: Vec::new(),
        })
    }

    /// True while in fixed-priority mode.
    pub fn in_fixed_mode(&self) -> bool {
        self.fixed_mode
    }

    fn overloaded(&mut self, sys: &System<'_>) -> bool {
        let now = sys.now();
        self.scratch.clear();
        self.scratch.extend(sys.ready().iter().map(|&id| {
            let j = sys.job(id);
            (j.deadline, j.remaining())
        }));
        self.scratch.sort_unstable();
        let mut finish = now;
        for &(deadline, remaining) in &self.scratch {
            finish = finish.saturating_add(remaining);
            if finish > deadline {
                return true;
            }
        }
        false
    }
}

/// The scheduler data of a hybrid report. Fields are declared in
/// alphabetical order, the order the report has always printed them in.
#[derive(Serialize)]
struct HybridData {
    fixed_priority_mode_at_end: bool,
    fixed_priority_time_ns_before_last_switch: u64,
    mode_switches: u64,
}

impl Scheduler for Hybrid {
    fn name(&self) -> String {
        format!("hybrid:{}", self.policy.name())
    }

    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        let overloaded = self.overloaded(sys);
        if overloaded != self.fixed_mode {
            if self.fixed_mode {
                self.fixed_time = self
                    .fixed_time
                    .saturating_add(sys.now().saturating_sub(self.since));
            }
            self.fixed_mode = overloaded;
            self.since = sys.now();
            self.switches += 1;
        }
        if self.fixed_mode {
            let levels = &self.levels;
            pick_highest(sys, true, |j| {
                Priority(levels.get(j.task).copied().unwrap_or(0))
            })
        } else {
            pick_highest(sys, true, |j| Priority::deadline(j.deadline))
        }
    }

    fn data(&self) -> Option<serde_json::Value> {
        serde_json::to_value(HybridData {
            fixed_priority_mode_at_end: self.fixed_mode,
            fixed_priority_time_ns_before_last_switch: self.fixed_time.as_ns(),
            mode_switches: self.switches,
        })
        .ok()
    }
}
