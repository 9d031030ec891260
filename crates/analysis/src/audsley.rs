//! Audsley's optimal priority assignment (OPA).
//!
//! N. C. Audsley, *Optimal priority assignment and feasibility of static
//! priority tasks with arbitrary start times*, University of York YCS-164,
//! 1991; and *On priority assignment in fixed priority scheduling*,
//! Information Processing Letters 79(1), 2001. Levels are filled from the
//! lowest: at each level, pick an unassigned task that is schedulable there
//! when every other unassigned task is more urgent. The exact RTA of
//! [`crate::rta`] (jitter, arbitrary deadlines) is OPA-compatible, so if
//! this fails no fixed-priority order passes RTA.
//!
//! Candidates at a level are tried longest deadline first (then longest
//! period, then last declared), so the result is deterministic and equals
//! deadline-monotonic order whenever DM works for the lowest levels.
//! Blocking from critical sections is not considered while assigning (it
//! depends on the whole order); analyse the result with blocking afterwards.

use rtlab_model::{Nanos, TaskSet};

use crate::priority::Priorities;
use crate::rta::{self, Interferer};
use crate::verdict::Response;

/// An order under which every task passes exact RTA, or `None` if there is
/// none (or the analysis was inconclusive for every candidate at a level).
pub fn assign(set: &TaskSet) -> Option<Priorities> {
    let n = set.tasks.len();
    let mut candidates: Vec<usize> = (0..n).collect();
    candidates.sort_by(|&a, &b| {
        let (ta, tb) = (&set.tasks[a], &set.tasks[b]);
        (tb.deadline, tb.period, b).cmp(&(ta.deadline, ta.period, a))
    });
    let mut unassigned = vec![true; n];
    let mut levels = vec![0u32; n];
    let mut interferers: Vec<Interferer> = Vec::with_capacity(n);
    for level in 1..=n as u32 {
        let chosen =
            candidates.iter().copied().find(|&i| {
                if !unassigned[i] {
                    return false;
                }
                interferers.clear();
                interferers.extend((0..n).filter(|&j| j != i && unassigned[j]).map(|j| {
                    Interferer {
                        period: set.tasks[j].period.as_ns(),
                        jitter: set.tasks[j].jitter.as_ns(),
                        cost: set.tasks[j].wcet.as_ns(),
                    }
                }));
                matches!(
                    rta::response_time(&rta::analysed(set, i, Nanos::ZERO), &interferers),
                    Response::Within(_)
                )
            })?;
        unassigned[chosen] = false;
        levels[chosen] = level;
    }
    Some(Priorities(levels))
}
