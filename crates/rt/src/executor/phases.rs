//! Phases on real threads: the set changes at instants of the run (C
//! scaled, tasks suspended, tasks added), read as the simulator reads them
//! ([`PhasePlan`], `rtlab_model::phase`), with the transition rule "new
//! set from the boundary": a job released at or after a boundary runs the
//! new C, the job in flight finishes with its old one.
//!
//! Nothing happens on the real-time path at a boundary but arithmetic on
//! arrays built before the first release:
//!
//! * every thread (a phase's own tasks included) is created, pinned,
//!   prefaulted and given its policy before the first release; a phase task
//!   sleeps until its phase's start plus its offset, a suspended task
//!   sleeps through the suspension;
//! * each job's C is `PhasePlan::demand(C, release)`;
//! * under SCHED_DEADLINE each thread's budget per segment of the run
//!   ([`DeadlineBudgets`]: C at that segment's scale plus the margin) is
//!   computed before the run; a thread whose next release falls in a
//!   segment with another budget changes its own with one `sched_setattr`
//!   between two of its jobs, before it sleeps until that release.
//!
//! What the kernel does with the change (kernel/sched/core.c
//! `__sched_setscheduler`, kernel/sched/deadline.c): admission control
//! (`sched_dl_overflow`) checks the new bandwidth at once and refuses it
//! with EBUSY when the CPUs' sum would pass the limit; the new runtime,
//! deadline and period are stored for the next replenishment, while the
//! reservation in progress keeps its current runtime and absolute
//! deadline (a running or queued thread is re-enqueued with
//! `ENQUEUE_RESTORE`, which starts a new reservation only when the current
//! deadline has already passed). A job in flight therefore finishes within
//! its old budget (measured by the root test
//! `a_budget_raised_in_flight_applies_from_the_next_replenishment`: a 7 ms
//! job whose runtime went from 2 to 20 ms after 1 ms took 45 ms, throttled
//! to its period's end). The thread changes its budget when it has no job in
//! flight; at its wake-up for the next release its old deadline has passed
//! (D <= T), so the kernel replenishes with the new runtime and that job
//! runs with the new budget from its first nanosecond. [`BudgetChanges`]
//! measures how long each `sched_setattr` took and counts refusals.

use rtlab_model::phase::{Phase, PhasePlan};
use rtlab_model::{Nanos, TaskSet};
use serde::Serialize;

use super::{AdmittedLimit, RunConfig};
use crate::error::RtError;
use rtlab_host::dl_bandwidth;
use rtlab_host::policy::Policy;

/// The set the executor runs under `cfg.phases` (the set's tasks, then
/// every phase's own tasks, whose offset becomes their phase's start plus
/// their offset, so that their first release and their job indices read as
/// the simulator's) and the plan that says which releases are made and
/// each job's C. Errors name `--phase`: overlapping phases, a phase at or
/// after the end, an invalid phase task, a suspension of a missing task.
pub fn phased_set(set: &TaskSet, cfg: &RunConfig) -> Result<(TaskSet, PhasePlan), RtError> {
    let plan = PhasePlan::new(set, &cfg.phases, cfg.duration).map_err(|e| RtError::Setting {
        setting: "phase",
        value: None,
        why: e.to_string(),
    })?;
    let mut phased = set.clone();
    phased.tasks = PhasePlan::tasks(set, &cfg.phases);
    for (i, t) in phased.tasks.iter_mut().enumerate().skip(set.tasks.len()) {
        t.offset = plan.first_release(i, t.offset);
    }
    Ok((phased, plan))
}

/// Per thread, its SCHED_DEADLINE policy in each segment of the run (the
/// spans between phase boundaries), as `(segment start, policy)`; empty for
/// other policies.
///
/// In a segment where the task releases jobs the budget is
/// `min(C' + m, D)` with C' its C at the segment's scale and m the margin
/// it was given over C before the run (after fitting to admission). In a
/// segment where it releases nothing (suspended, or a phase task outside
/// its phase) it keeps the budget it had, since the thread exists for the
/// whole run and admission control counts its bandwidth all along; before
/// its first active segment it holds that segment's budget.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadlineBudgets {
    /// Segment starts, from 0.
    starts: Vec<Nanos>,
    /// Per thread, per segment.
    policies: Vec<Vec<Policy>>,
    /// Periods, per thread (for the sums).
    periods: Vec<Nanos>,
}

impl DeadlineBudgets {
    /// The budgets of `set`'s threads (`policies`: one per task, from
    /// `thread_policies` and the admission fit) under `plan`.
    pub fn new(set: &TaskSet, plan: &PhasePlan, policies: &[Policy], duration: Nanos) -> Self {
        let starts = plan.segment_starts(duration);
        let ends: Vec<Nanos> = starts.iter().skip(1).copied().chain([duration]).collect();
        let mut per_thread = Vec::with_capacity(set.tasks.len());
        for (i, (t, p)) in set.tasks.iter().zip(policies).enumerate() {
            let Policy::Deadline {
                runtime,
                deadline,
                period,
            } = *p
            else {
                per_thread.push(Vec::new());
                continue;
            };
            let margin = runtime.saturating_sub(t.wcet);
            let active: Vec<Option<Policy>> = starts
                .iter()
                .zip(&ends)
                .map(|(&from, &to)| {
                    plan.active_in(i, from, to).then(|| Policy::Deadline {
                        runtime: plan
                            .demand(t.wcet, from)
                            .saturating_add(margin)
                            .min(deadline),
                        deadline,
                        period,
                    })
                })
                .collect();
            let mut held = active.iter().flatten().next().copied().unwrap_or(*p);
            per_thread.push(
                active
                    .into_iter()
                    .map(|a| {
                        held = a.unwrap_or(held);
                        held
                    })
                    .collect(),
            );
        }
        DeadlineBudgets {
            starts,
            policies: per_thread,
            periods: set.tasks.iter().map(|t| t.period).collect(),
        }
    }

    /// Thread `i`'s `(segment start, policy)` list, consecutive duplicates
    /// merged (empty when it is not SCHED_DEADLINE).
    pub fn of(&self, i: usize) -> Vec<(Nanos, Policy)> {
        let mut out: Vec<(Nanos, Policy)> = Vec::new();
        for (&from, &p) in self.starts.iter().zip(&self.policies[i]) {
            if out.last().map(|l| l.1) != Some(p) {
                out.push((from, p));
            }
        }
        out
    }

    /// Gives every SCHED_DEADLINE thread the budget of the run's first
    /// segment as the policy it starts with.
    pub fn apply_first(&self, policies: &mut [Policy]) {
        for (p, budgets) in policies.iter_mut().zip(&self.policies) {
            if let Some(&first) = budgets.first() {
                *p = first;
            }
        }
    }

    /// Per segment, the sum of runtime/period over every SCHED_DEADLINE
    /// thread in the kernel's units of 2^-20 of a CPU (each
    /// `to_ratio(period, runtime)`, [`rtlab_host::dl_bandwidth`]):
    /// `(segment start, sum)`.
    pub fn sums(&self) -> Vec<(Nanos, u64)> {
        self.starts
            .iter()
            .enumerate()
            .map(|(s, &from)| {
                let sum = self
                    .policies
                    .iter()
                    .zip(&self.periods)
                    .filter_map(|(ps, period)| match ps.get(s) {
                        Some(Policy::Deadline { runtime, .. }) => {
                            Some(dl_bandwidth::to_ratio(*period, *runtime))
                        }
                        _ => None,
                    })
                    .sum();
                (from, sum)
            })
            .collect()
    }

    /// Refuses a run in which some segment's budgets sum above what
    /// `limit` admits (the kernel admits at or under it), naming the
    /// phase that segment lies in (or, before every phase, the phases'
    /// tasks, whose threads hold their budgets from the start).
    pub fn check(&self, phases: &[Phase], limit: AdmittedLimit) -> Result<(), RtError> {
        let capacity = limit.capacity.for_tasks();
        for (from, need) in self.sums() {
            if need > capacity {
                let phase = phases
                    .iter()
                    .find(|p| p.start <= from && from < p.end)
                    .map_or_else(
                        || format!("outside the phases (from {from}), the phases' tasks holding their budgets,"),
                        |p| format!("phase {p}"),
                    );
                return Err(RtError::PhaseOverLimit {
                    phase,
                    need: dl_bandwidth::show(need),
                    over: dl_bandwidth::show(need - capacity),
                    cpus: limit.cpus,
                    limit: limit.capacity.describe(),
                });
            }
        }
        Ok(())
    }
}

/// The SCHED_DEADLINE budget changes of a run at phase boundaries: how many,
/// how many the kernel refused (EBUSY: the new bandwidth did not fit; the
/// thread keeps its old budget), and how long the `sched_setattr` calls
/// took on the monotonic clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BudgetChanges {
    /// Calls made.
    pub changes: u64,
    /// Calls the kernel refused.
    pub refused: u64,
    /// Longest call, ns.
    pub max_ns: u64,
    /// All calls together, ns.
    pub total_ns: u64,
}

impl BudgetChanges {
    /// Adds one call that took `took` and succeeded or not.
    pub fn record(&mut self, took: Nanos, ok: bool) {
        self.changes += 1;
        self.refused += u64::from(!ok);
        self.max_ns = self.max_ns.max(took.as_ns());
        self.total_ns = self.total_ns.saturating_add(took.as_ns());
    }

    /// Adds another thread's calls.
    pub fn add(&mut self, other: &BudgetChanges) {
        self.changes += other.changes;
        self.refused += other.refused;
        self.max_ns = self.max_ns.max(other.max_ns);
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_host::dl_bandwidth::DomainCapacity;
    use rtlab_model::Task;

    /// a (T 10, C 2, margin 0.1) and b (T 20, C 4); phase 100..200 ms at x2
    /// suspends b: a's budget is 2.1 ms, 4.1 ms in the phase, 2.1 after; b
    /// keeps 4.1 throughout (suspended, it holds its bandwidth). The sums
    /// are 0.21 + 0.205 = 0.415 and 0.41 + 0.205 = 0.615.
    #[test]
    fn budgets_follow_the_segments_and_suspended_threads_hold_theirs() {
        let ms = Nanos::from_ms;
        let us = Nanos::from_us;
        let set = TaskSet::new(
            "s",
            vec![Task::new("a", ms(10), ms(2)), Task::new("b", ms(20), ms(4))],
        );
        let mut phase = Phase::parse("100ms..200ms:x2").unwrap();
        phase.suspended = vec![1];
        let plan = PhasePlan::new(&set, &[phase.clone()], ms(300)).unwrap();
        let dl = |r: Nanos, t: Nanos| Policy::Deadline {
            runtime: r,
            deadline: t,
            period: t,
        };
        let policies = [dl(us(2100), ms(10)), dl(us(4100), ms(20))];
        let b = DeadlineBudgets::new(&set, &plan, &policies, ms(300));
        assert_eq!(
            b.of(0),
            vec![
                (Nanos::ZERO, dl(us(2100), ms(10))),
                (ms(100), dl(us(4100), ms(10))),
                (ms(200), dl(us(2100), ms(10)))
            ]
        );
        assert_eq!(b.of(1), vec![(Nanos::ZERO, dl(us(4100), ms(20)))]);
        // 2.1/10 + 4.1/20 = 0.415; x2 in the phase: 4.1/10 + 4.1/20 = 0.615.
        let sums: Vec<u64> = b.sums().iter().map(|s| s.1).collect();
        assert_eq!(sums[1], 429_916 + 214_958);
        assert_eq!(sums[2], 220_200 + 214_958);
        let limit = |cpus: usize, rt: u64| AdmittedLimit {
            capacity: DomainCapacity {
                cpus,
                rt,
                fair_server: 0,
            },
            cpus,
        };
        assert!(b.check(&[phase.clone()], limit(1, 996_147)).is_ok());
        // Exactly the phase's sum fits (at or under), one unit less does not.
        assert!(b.check(&[phase.clone()], limit(1, sums[1])).is_ok());
        assert_eq!(
            b.check(&[phase], limit(1, sums[1] - 1)).unwrap_err().to_string(),
            "phase 100ms..200ms:x2 makes the SCHED_DEADLINE set inadmissible: its budgets need sum runtime/period = 644874 (0.615000) in the kernel's units of 2^-20 of a CPU, 1 (0.000001) more than 644873 (0.614999) = 1 x (644873 for sched_rt_runtime_us / sched_rt_period_us) admits on 1 CPU; add --no-rt-throttling to switch admission control off for the run"
        );
    }
}
