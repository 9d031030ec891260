//! BCL: interference in the problem window, for global EDF.
//!
//! Bertogna, Cirinei & Lipari, *Schedulability analysis of global
//! scheduling algorithms on multiprocessor platforms*, IEEE TPDS 20(4),
//! 2009 (Theorem 7; first in ECRTS 2005). The jobs of τi that can
//! interfere with a job of τk in its window `[rk, rk + Dk)` do at most
//!
//! ```text
//! Wi = Ni Ci + min(Ci, max(0, Dk − Ni Ti)),   Ni = max(0, ⌊(Dk − Di) / Ti⌋ + 1)
//! ```
//!
//! and the set is schedulable by G-EDF on `m` processors if for every task
//! `k` (multiplying the paper's `βi = Wi / Dk`, `λk = Ck / Dk` by `Dk`,
//! so everything is a whole number of nanoseconds and compared exactly)
//!
//! ```text
//! S = Σ_{i ≠ k} min(Wi, Dk − Ck) <  m (Dk − Ck),   or
//! S = m (Dk − Ck)  and  some i ≠ k has 0 < Wi <= Dk − Ck.
//! ```
//!
//! Constrained deadlines.

use rtlab_model::TaskSet;

use super::{sporadic, Sporadic};
use crate::verdict::Verdict;

/// `Wi`: τi's workload in τk's window.
fn workload(i: &Sporadic, k: &Sporadic) -> i128 {
    let n = ((k.d - i.d).div_euclid(i.t) + 1).max(0);
    n * i.c + i.c.min((k.d - n * i.t).max(0))
}

/// Whether τk passes (the condition above).
fn task_passes(tasks: &[Sporadic], k: usize, m: i128) -> bool {
    let tk = &tasks[k];
    let slack = tk.d - tk.c;
    let mut sum = 0i128;
    let mut some_small = false;
    for (i, ti) in tasks.iter().enumerate() {
        if i == k {
            continue;
        }
        let w = workload(ti, tk);
        sum += w.min(slack);
        some_small |= w > 0 && w <= slack;
    }
    let cap = m * slack;
    sum < cap || (sum == cap && some_small)
}

/// The BCL verdict on `m` processors.
pub fn verdict(set: &TaskSet, m: u32) -> Verdict {
    let tasks = match sporadic(set, m, true) {
        Ok(t) => t,
        Err(v) => return v,
    };
    (0..tasks.len())
        .all(|k| !rtlab_model::cancel::requested() && task_passes(&tasks, k, i128::from(m)))
        .then_some(true)
}

#[cfg(test)]
mod tests {
    use super::super::testing::set;
    use super::*;

    /// Two tasks of u = 0.9 (C = 9, D = T = 10) on m = 2: for either k,
    /// Dk − Ck = 1, Wi = 1·9 + min(9, 0) = 9, S = min(9, 1) = 1 < 2·1:
    /// schedulable (BAK cannot tell, see its tests).
    #[test]
    fn two_heavy_tasks_on_two_processors() {
        assert_eq!(verdict(&set(&[(9, 10, 10); 2]), 2), Some(true));
    }

    /// Three tasks (C = 9, D = T = 10) on m = 2 have U = 2.7 > 2.
    /// Three tasks (5, 10, 10) on m = 2: Dk − Ck = 5, each Wi = 5,
    /// S = 5 + 5 = 10 = 2·5 with 0 < Wi <= 5: schedulable by the equality
    /// case. (3, 4, 10) ×3: Dk − Ck = 1, Wi = 3 > 1, S = 2 = 2·1, no small
    /// Wi: not proven.
    #[test]
    fn the_equality_case() {
        assert_eq!(verdict(&set(&[(9, 10, 10); 3]), 2), Some(false));
        assert_eq!(verdict(&set(&[(5, 10, 10); 3]), 2), Some(true));
        assert_eq!(verdict(&set(&[(3, 4, 10); 3]), 2), None);
    }

    /// The number of body jobs: τi = (1, 2, 2) in τk's window Dk = 7:
    /// Ni = ⌊(7 − 2)/2⌋ + 1 = 3, Wi = 3 + min(1, 7 − 6) = 4.
    #[test]
    fn workload_counts_body_and_carry_in() {
        let i = Sporadic { c: 1, d: 2, t: 2 };
        let k = Sporadic { c: 1, d: 7, t: 7 };
        assert_eq!(workload(&i, &k), 4);
        let late = Sporadic { c: 3, d: 9, t: 9 };
        // Di > Dk: Ni = max(0, ⌊−2/9⌋ + 1) = 0, Wi = min(3, 7) = 3.
        assert_eq!(workload(&late, &k), 3);
    }
}
