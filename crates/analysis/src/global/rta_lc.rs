//! RTA-LC: response-time analysis with limited carry-in for global fixed
//! priorities.
//!
//! Guan, Stigge, Yi & Yu, *New response time bounds for fixed priority
//! multiprocessor scheduling*, RTSS 2009 (SchedCAT's `fp/guan.py`); the
//! carry-in limit is Baruah's (RTSS 2007): at most `m − 1` higher-priority
//! tasks carry a job into the busy window. For τk and a window `x`, with
//! `[a]_b = min(a, b)`, `[a]_0 = max(a, 0)`:
//!
//! ```text
//! W_NC_i(x) = ⌊x / Ti⌋ Ci + [x mod Ti]^Ci
//! W_CI_i(x) = ⌊[x − Ci]_0 / Ti⌋ Ci + Ci + α,  α = [[x − Ci]_0 mod Ti − (Ti − Ri)]_0^{Ci − 1}
//! I_i(x)    = [W_i(x)]_0^{x − Ck + 1}              (NC and CI alike)
//! Ω_k(x)    = Σ_{i ∈ hp(k)} I_NC_i(x) + (sum of the m − 1 largest I_CI_i(x) − I_NC_i(x))
//! Rk        = least x >= Ck with x = Ck + ⌊Ω_k(x) / m⌋
//! ```
//!
//! A task with fewer than `m` higher-priority tasks gets `Rk = Ck`.
//! Constrained deadlines; more urgent tasks not proven are taken at
//! `Ri = Di` as in [`super::fp_rta`] and leave the set not proven.

use rtlab_model::TaskSet;

use super::fp_rta::by_priority;
use super::priority::GlobalPriority;
use super::{bound, verdict_of, Sporadic, Work};
use crate::verdict::{Response, Verdict};

fn no_carry_in(ti: &Sporadic, x: i128) -> i128 {
    (x / ti.t) * ti.c + (x % ti.t).min(ti.c)
}

fn carry_in(ti: &Sporadic, ri: i128, x: i128) -> i128 {
    let shifted = (x - ti.c).max(0);
    let alpha = (shifted % ti.t - (ti.t - ri)).max(0).min(ti.c - 1);
    (shifted / ti.t) * ti.c + ti.c + alpha
}

/// `Ω_k(x)`.
fn omega(tk: &Sporadic, hp: &[(Sporadic, i128)], m: i128, x: i128, diffs: &mut Vec<i128>) -> i128 {
    let cap = x - tk.c + 1;
    let clamp = |w: i128| w.max(0).min(cap);
    diffs.clear();
    let mut total = 0;
    for (ti, ri) in hp {
        let nc = clamp(no_carry_in(ti, x));
        total += nc;
        diffs.push(clamp(carry_in(ti, *ri, x)) - nc);
    }
    let carried = (m - 1).max(0) as usize;
    if diffs.len() > carried {
        diffs.select_nth_unstable_by(carried, |a, b| b.cmp(a));
    }
    total + diffs.iter().take(carried).sum::<i128>()
}

fn response(tk: &Sporadic, hp: &[(Sporadic, i128)], m: i128, work: &Work) -> Option<i128> {
    if (hp.len() as i128) < m {
        return Some(tk.c);
    }
    let mut diffs = Vec::with_capacity(hp.len());
    bound(work, hp.len(), tk.c, tk.d, |x| {
        tk.c + omega(tk, hp, m, x, &mut diffs) / m
    })
}

/// Response-time bounds under G-FP with `rule` on `m` processors.
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

    /// The set of the fp_rta example, DM on m = 2: τ2 = (2, 4, 4) with
    /// hp τ0 = (1, 2, 2, R = 1), τ1 = (1, 3, 3, R = 1). x = 2 (cap
    /// x − C + 1 = 1): NC0 = ⌊2/2⌋ + min(0, 1) = 1 → 1; CI0: [2 − 1]_0 = 1,
    /// α = [1 mod 2 − (2 − 1)]_0^0 = 0, W = 0 + 1 + 0 = 1 → 1; NC1 =
    /// 0 + min(2, 1) = 1; CI1 = 0 + 1 + [1 − 2]_0 = 1; Ω = 2 + max diff 0
    /// = 2, x = 2 + 1 = 3. x = 3 (cap 2): NC0 = 1 + min(1, 1) = 2; CI0:
    /// [2] → ⌊2/2⌋ + 1 + [0 − 1]_0 = 2; NC1 = 1 + 0 = 1; CI1: ⌊2/3⌋ + 1
    /// + [2 − 2]_0 = 1: Ω = 3, x = 2 + 1 = 3: R2 = 3.
    #[test]
    fn hand_computed_response_times() {
        let s = set(&[(1, 2, 2), (1, 3, 3), (2, 4, 4)]);
        assert_eq!(
            ns(&response_times(&s, 2, GlobalPriority::Dm)),
            [Some(1), Some(1), Some(3)]
        );
    }

    /// Both analyses on one set with more urgent tasks than processors,
    /// side by side: wherever both bound a task, the limited carry-in bound
    /// is not larger on this set (an observation here, not a theorem used).
    #[test]
    fn never_looser_than_bertogna_cirinei_on_this_set() {
        let s = set(&[(2, 5, 5), (2, 5, 5), (2, 5, 5), (4, 10, 10)]);
        let lc = response_times(&s, 2, GlobalPriority::Dm);
        let bc = super::super::fp_rta::response_times(&s, 2, GlobalPriority::Dm);
        for (a, b) in lc.iter().zip(&bc) {
            if let (Some(a), Some(b)) = (a.wcrt(), b.wcrt()) {
                assert!(a <= b, "{a} > {b}");
            }
        }
    }
}
