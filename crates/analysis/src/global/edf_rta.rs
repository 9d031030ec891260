//! Response-time analysis for global EDF with slack iteration.
//!
//! Bertogna & Cirinei, *Response-time analysis for globally scheduled
//! symmetric multiprocessor platforms*, RTSS 2007 (§4 and §6; SchedCAT's
//! `edf/rta.py` is the reference implementation). With `Si` the slack of
//! τi (`Di − Ri`, 0 until known), the work τi can do in a window of length
//! `L` is at most
//!
//! ```text
//! Wi(L) = Ni(L) Ci + min(Ci, (L + Di − Ci − Si) mod Ti),  Ni(L) = ⌊(L + Di − Ci − Si) / Ti⌋
//! ```
//!
//! and, under EDF, what it can do in τk's window `Dk` (jobs with earlier
//! deadlines only) is at most
//!
//! ```text
//! Ei = ⌊Dk / Ti⌋ Ci + min(Ci, max(0, Dk mod Ti − Si))
//! ```
//!
//! The response time of τk is the least fixed point, from `Rk = Ck`, of
//!
//! ```text
//! Rk = Ck + ⌊ (1/m) Σ_{i ≠ k} min(Wi(Rk), Ei, Rk − Ck + 1) ⌋
//! ```
//!
//! Each round computes every `Rk` in task order and sets `Sk = Dk − Rk`
//! for those within their deadline; rounds repeat until every task is
//! within (schedulable), no slack changed (not proven), [`ROUND_CAP`]
//! rounds, or the analysis's [`super::WORK_CAP`]. Constrained deadlines.

use rtlab_model::TaskSet;

use super::{bound, sporadic, unknown, verdict_of, within, Sporadic, Work};
use crate::verdict::{Response, Verdict};

/// Rounds of slack updates before giving up.
pub const ROUND_CAP: u32 = 100;

/// `Wi(L)` with slack `s`.
pub(crate) fn carry_in_workload(i: &Sporadic, s: i128, length: i128) -> i128 {
    let interval = length + i.d - i.c - s;
    if interval < 0 {
        return 0;
    }
    (interval / i.t) * i.c + i.c.min(interval % i.t)
}

/// `Ei`: τi's work in τk's deadline window `dk` under EDF, with slack `s`.
fn edf_workload(i: &Sporadic, s: i128, dk: i128) -> i128 {
    (dk / i.t) * i.c + i.c.min((dk % i.t - s).max(0))
}

/// The fixed point for τk, or `None` past its deadline (or a cap).
fn response(tasks: &[Sporadic], slack: &[i128], k: usize, m: i128, work: &Work) -> Option<i128> {
    let tk = &tasks[k];
    bound(work, tasks.len() - 1, tk.c, tk.d, |r| {
        let interference: i128 = tasks
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .map(|(i, ti)| {
                carry_in_workload(ti, slack[i], r)
                    .min(edf_workload(ti, slack[i], tk.d))
                    .min(r - tk.c + 1)
            })
            .sum();
        tk.c + interference / m
    })
}

/// Response-time bounds under G-EDF on `m` processors, in task order
/// ([`Response::Unknown`] where not proven within the deadline).
pub fn response_times(set: &TaskSet, m: u32) -> Vec<Response> {
    response_times_within(set, m, &Work::default())
}

/// [`response_times`] within `work` (past it: [`Response::Unknown`]).
pub fn response_times_within(set: &TaskSet, m: u32, work: &Work) -> Vec<Response> {
    let tasks = match sporadic(set, m, true) {
        Ok(t) => t,
        Err(_) => return unknown(set),
    };
    let m = i128::from(m);
    let mut slack = vec![0i128; tasks.len()];
    let mut bounded = vec![false; tasks.len()];
    for _ in 0..ROUND_CAP {
        let mut updated = false;
        for k in 0..tasks.len() {
            if rtlab_model::cancel::requested() {
                return unknown(set);
            }
            bounded[k] = false;
            if let Some(r) = response(&tasks, &slack, k, m, work) {
                bounded[k] = true;
                let s = tasks[k].d - r;
                if s != slack[k] {
                    slack[k] = s;
                    updated = true;
                }
            }
        }
        if bounded.iter().all(|&b| b) || !updated || work.gave_up() {
            break;
        }
    }
    tasks
        .iter()
        .zip(slack.iter().zip(&bounded))
        .map(|(t, (&s, &b))| {
            if b {
                within(t.d - s)
            } else {
                Response::Unknown
            }
        })
        .collect()
}

/// The verdict: every response time within its deadline.
pub fn verdict(set: &TaskSet, m: u32) -> Verdict {
    verdict_of(set, m, &response_times(set, m))
}

#[cfg(test)]
mod tests {
    use super::super::testing::set;
    use super::*;
    use rtlab_model::Nanos;

    fn ns(r: &[Response]) -> Vec<Option<u64>> {
        r.iter().map(|r| r.wcrt().map(Nanos::as_ns)).collect()
    }

    /// Two tasks on two processors never interfere: for τ0 = (1, 2, 2)
    /// and τ1 = (2, 4, 4), from R0 = 1: W1(1) = ⌊(1 + 4 − 2)/4⌋·2 +
    /// min(2, 3) = 2, E1 = 0 + min(2, 2) = 2, R − C + 1 = 1: R0 = 1 +
    /// ⌊1/2⌋ = 1. Likewise R1 = 2.
    #[test]
    fn no_more_tasks_than_processors() {
        assert_eq!(
            ns(&response_times(&set(&[(1, 2, 2), (2, 4, 4)]), 2)),
            [Some(1), Some(2)]
        );
    }

    /// Three tasks (2, 4, 4) on m = 2, worked by hand. Round 1, slacks 0:
    /// R = 2: each other task contributes min(W(2), E, 1) = 1 (W(2) =
    /// ⌊4/4⌋·2 + min(2, 0) = 2, E = 2), Σ = 2, R = 2 + ⌊2/2⌋ = 3; R = 3:
    /// min(W(3) = 2 + 1 = 3, E = 2, 2) = 2, Σ = 4, R = 2 + 2 = 4; R = 4:
    /// min(W(4) = 4, 2, 3) = 2, Σ = 4, R = 4 = D: fixed point. Every task
    /// gets R = 4 <= 4 and slack 0 (unchanged): schedulable, R = 4.
    #[test]
    fn three_tasks_on_two_processors() {
        let s = set(&[(2, 4, 4); 3]);
        assert_eq!(ns(&response_times(&s, 2)), [Some(4); 3]);
        assert_eq!(verdict(&s, 2), Some(true));
    }

    /// Slack pays: τ0 = τ1 = (1, 10, 10) and τ2 = (9, 10, 10) on m = 2,
    /// round 1, by hand.
    ///
    /// - τ0 (slacks 0): R = 1: τ1 gives min(W = 1, E = 1, 1) = 1, τ2 gives
    ///   min(W = min(9, 2) = 2, E = 9, 1) = 1; Σ = 2, R = 1 + 1 = 2.
    ///   R = 2: τ1 min(2, 1, 2) = 1, τ2 min(3, 9, 2) = 2; Σ = 3,
    ///   R = 1 + ⌊3/2⌋ = 2: fixed, slack 8.
    /// - τ1 (τ0's slack now 8): the same, R = 2, slack 8.
    /// - τ2: R = 9: τ0 gives min(W, E, 1) = 1 with W = ⌊(9 + 10 − 1 −
    ///   8)/10⌋·1 = 1 and E = 1, τ1 the same; R = 9 + 1 = 10.
    ///   R = 10: min(2, 1, 2) = 1
    ///   each, R = 10 = D: fixed.
    ///
    /// All within: (2, 2, 10).
    #[test]
    fn slack_iteration_example() {
        let s = set(&[(1, 10, 10), (1, 10, 10), (9, 10, 10)]);
        assert_eq!(ns(&response_times(&s, 2)), [Some(2), Some(2), Some(10)]);
    }

    /// The work cap counts interference terms: in the example above each
    /// task takes 3 steps of 2 terms, 18 in all. A budget of 18 proves the
    /// set as before; 17 leaves τ2 one term short at its last step: it is
    /// "not proven" and the analysis says it gave up.
    #[test]
    fn the_work_cap_gives_up_where_it_runs_out() {
        let s = set(&[(2, 4, 4); 3]);
        let work = Work::with_cap(18);
        assert_eq!(ns(&response_times_within(&s, 2, &work)), [Some(4); 3]);
        assert!(!work.gave_up());
        let work = Work::with_cap(17);
        let short = response_times_within(&s, 2, &work);
        assert_eq!(ns(&short), [Some(4), Some(4), None]);
        assert!(work.gave_up());
        assert_eq!(super::super::verdict_of(&s, 2, &short), None);
    }

    #[test]
    fn overload_and_arbitrary_deadlines_are_not_proven() {
        assert_eq!(verdict(&set(&[(9, 10, 10); 3]), 2), Some(false));
        assert_eq!(verdict(&set(&[(1, 12, 10)]), 2), None);
        assert_eq!(response_times(&set(&[(1, 12, 10)]), 2), [Response::Unknown]);
    }
}
