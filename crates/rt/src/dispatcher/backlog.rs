//! A task's releases that found its previous job unfinished, as both
//! dispatcher engines (one CPU, [`super::engine`]; m CPUs,
//! [`super::global`]) keep them: the first one's time and how many, the
//! later ones found again from the phase plan (consecutive releases of the
//! task), so that nothing is allocated however long the backlog grows.

use rtlab_model::phase::PhasePlan;
use rtlab_model::{Nanos, Task};

/// Consecutive releases of one task waiting for its current job to end.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Backlog {
    /// The earliest waiting release.
    first: Nanos,
    /// How many wait.
    count: u64,
}

impl Backlog {
    /// A release at `at` waits behind the task's unfinished job.
    pub(super) fn push(&mut self, at: Nanos) {
        if self.count == 0 {
            self.first = at;
        }
        self.count += 1;
    }

    /// The earliest waiting release of task `i` (period `period`), taken
    /// out; the next one is its next release in `plan` before `duration`.
    pub(super) fn pop(
        &mut self,
        plan: &PhasePlan,
        i: usize,
        period: Nanos,
        duration: Nanos,
    ) -> Option<Nanos> {
        if self.count == 0 {
            return None;
        }
        let at = self.first;
        self.count -= 1;
        if self.count > 0 {
            let next = at.saturating_add(period);
            self.first = plan.release(i, period, next, duration).unwrap_or(next);
        }
        Some(at)
    }

    /// Empties the backlog of task `i` (`task`) at the end of the run,
    /// giving each waiting release before `ended` to `record` as (job
    /// index, release, demand): jobs released that never started.
    pub(super) fn drain(
        &mut self,
        plan: &PhasePlan,
        i: usize,
        task: &Task,
        duration: Nanos,
        ended: Nanos,
        mut record: impl FnMut(u64, Nanos, Nanos),
    ) {
        let (mut at, mut left) = (self.first, self.count);
        self.count = 0;
        while left > 0 && at < ended {
            let index = plan.job_index(i, task.period, task.offset, at);
            record(index, at, plan.demand(task.wcet, at));
            left -= 1;
            let next = at.saturating_add(task.period);
            match plan.release(i, task.period, next, duration) {
                Some(r) => at = r,
                None => break,
            }
        }
    }
}
