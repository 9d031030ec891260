//! Response-time analysis for global fixed priorities.
//!
//! Bertogna & Cirinei, *Response-time analysis for globally scheduled
//! symmetric multiprocessor platforms*, RTSS 2007 (§5; SchedCAT's
//! `fp/bertogna.py`). Tasks are analysed from the most urgent down; a
//! higher-priority τi with known response time `Ri` does at most
//!
//! ```text
//! Wi(L) = Ni(L) Ci + min(Ci, L + Ri − Ci − Ni(L) Ti),   Ni(L) = ⌊(L + Ri − Ci) / Ti⌋
//! ```
//!
//! in a window of length `L` (its slack `Di − Ri` used as in the EDF
//! analysis), and the response time of τk is the least fixed point, from
//! `Rk = Ck`, of
//!
//! ```text
//! Rk = Ck + ⌊ (1/m) Σ_{i ∈ hp(k)} min(Wi(Rk), Rk − Ck + 1) ⌋
//! ```
//!
//! A task with fewer than `m` higher-priority tasks gets `Rk = Ck`.
//! Constrained deadlines. When a more urgent task is not proven, the
//! lesser ones are analysed assuming it meets its deadline (`Ri = Di`),
//! which can only be reported, never proven: the set is then not proven.

use rtlab_model::TaskSet;

use super::edf_rta::carry_in_workload;
use super::priority::{order, GlobalPriority};
use super::{bound, sporadic, unknown, verdict_of, within, Sporadic, Work};
use crate::verdict::{Response, Verdict};

/// `Rk` given the more urgent tasks and their response times.
fn response(tk: &Sporadic, hp: &[(Sporadic, i128)], m: i128, work: &Work) -> Option<i128> {
    bound(work, hp.len(), tk.c, tk.d, |r| {
        let interference: i128 = hp
            .iter()
            .map(|(ti, ri)| carry_in_workload(ti, ti.d - ri, r).min(r - tk.c + 1))
            .sum();
        tk.c + interference / m
    })
}

/// Response-time bounds under G-FP with `rule` on `m` processors, in task
/// order; all unknown when the order cannot be made (e.g. `given` ties).
pub fn response_times(set: &TaskSet, m: u32, rule: GlobalPriority) -> Vec<Response> {
    response_times_within(set, m, rule, &Work::default())
}

/// [`response_times`] within `work` (past it: [`Response::Unknown`]).
pub fn response_times_within(
    set: &TaskSet,
    m: u32,
    rule: GlobalPriority,
    work: &Work,
) -> Vec<Response> {
    by_priority(set, m, rule, work, response)
}

/// Runs `analyse(τk, hp(k) with response times, m, work)` from the most
/// urgent task down; shared with [`super::rta_lc`].
pub(crate) fn by_priority(
    set: &TaskSet,
    m: u32,
    rule: GlobalPriority,
    work: &Work,
    analyse: impl Fn(&Sporadic, &[(Sporadic, i128)], i128, &Work) -> Option<i128>,
) -> Vec<Response> {
    let (tasks, order) = match (sporadic(set, m, true), order(set, rule, m)) {
        (Ok(t), Ok(o)) => (t, o),
        _ => return unknown(set),
    };
    let mut out = vec![Response::Unknown; tasks.len()];
    let mut hp: Vec<(Sporadic, i128)> = Vec::with_capacity(tasks.len());
    for k in order {
        if rtlab_model::cancel::requested() {
            return unknown(set);
        }
        let tk = tasks[k];
        let r = analyse(&tk, &hp, i128::from(m), work);
        if let Some(r) = r {
            out[k] = within(r);
        }
        hp.push((tk, r.unwrap_or(tk.d)));
    }
    out
}

/// The verdict: every response time within its deadline.
pub fn verdict(set: &TaskSet, m: u32, rule: GlobalPriority) -> Verdict {
    verdict_of(set, m, &response_times(set, m, rule))
}

#[cfg(test)]
mod tests {
    use super::super::testing::set;
    use super::*;
    use rtlab_model::Nanos;

    fn ns(r: &[Response]) -> Vec<Option<u64>> {
        r.iter().map(|r| r.wcrt().map(Nanos::as_ns)).collect()
    }

    /// DM on m = 2: τ0 = (1, 2, 2), τ1 = (1, 3, 3), τ2 = (2, 4, 4).
    /// τ0, τ1 have fewer than 2 more urgent tasks: R = C = 1, 1.
    /// τ2: R = 2: τ0 min(W0(2), 1): W0(2) = ⌊(2 + 1 − 1)/2⌋·1 + min(1,
    /// 2 + 1 − 1 − 2) = 1 + 0 = 1, τ1: W1(2) = ⌊2/3⌋ + min(1, 2) = 1:
    /// Σ = 2, R = 2 + 1 = 3; R = 3: W0(3) = ⌊3/2⌋ + min(1, 1) = 2,
    /// min(2, 2) = 2; W1(3) = ⌊3/3⌋ + min(1, 0) = 1; Σ = 3, R = 2 + 1 = 3.
    #[test]
    fn hand_computed_response_times() {
        let s = set(&[(1, 2, 2), (1, 3, 3), (2, 4, 4)]);
        assert_eq!(
            ns(&response_times(&s, 2, GlobalPriority::Dm)),
            [Some(1), Some(1), Some(3)]
        );
        assert_eq!(verdict(&s, 2, GlobalPriority::Dm), Some(true));
    }

    /// Dhall's effect under RM: two light tasks (2, 10, 10) and a heavy
    /// one (10, 11, 11) on m = 2: the heavy task has the longest period,
    /// R = 10: each light one min(W(10) = ⌊(10 + 2 − 2)/10⌋·2 + min(2, 0)
    /// = 2, 9) = 2, Σ = 4, R = 10 + 2 = 12 > 11: not proven.
    #[test]
    fn dhall_heavy_task_is_not_proven() {
        let s = set(&[(2, 10, 10), (2, 10, 10), (10, 11, 11)]);
        let r = response_times(&s, 2, GlobalPriority::Rm);
        assert_eq!(ns(&r), [Some(2), Some(2), None]);
        assert_eq!(verdict(&s, 2, GlobalPriority::Rm), None);
    }
}
