//! MPCP: the multiprocessor priority ceiling protocol (Rajkumar,
//! *Real-time synchronization protocols for shared memory
//! multiprocessors*, ICDCS 1990), under partitioned fixed priorities, with
//! the blocking bounds of Lakshmanan, de Niz & Rajkumar (*Coordinated task
//! scheduling, allocation and synchronization on multiprocessors*, RTSS
//! 2009) as SchedCAT's `mpcp.cpp` computes them.
//!
//! A global critical section (gcs) on q runs on the job's own processor at
//! a priority above every task's, boosted by q's *remote ceiling* there,
//! `rc(q, p)`: the highest priority of q's users on other processors; a
//! gcs preempts a gcs of lower boosted priority. A job that finds q taken
//! suspends in q's queue, ordered by the waiters' own priorities. Local
//! resources follow the processor's immediate ceiling protocol.
//!
//! ```text
//! W(k, q)   = L_{k,q} + Σ_{t on P(k), t ≠ k} max { L_{t,q'} : rc(q', P(k)) >= rc(q, P(k)) }
//! b(i, q)   = max { W(l, q) : l uses q, Pl < Pi }
//!           + Σ_{h uses q, Ph > Pi} (⌈(b(i, q) + Jh) / Th⌉ + 1) · N_{h,q} · W(h, q)   (least fixed point)
//! Bʳi       = Σ_q N_{i,q} · b(i, q)
//! Bˡi       = (1 + Σ_q N_{i,q}) · Σ_{x ∈ lp(i)} max(L^g_x, L^c_x)
//! ```
//!
//! `W(k, q)` is how long a gcs can take once granted: its length and one
//! gcs of every other task of its processor at an equal or higher boosted
//! priority (a task enters a gcs only from a suspension, so it meets the
//! granted gcs at most once). A request waits for one lower-priority gcs
//! in progress and every higher-priority request in its window, with one
//! job of each carried in (`Rh <= Th`). The job is ready again after each
//! of its suspensions, and at each of these arrivals every lower task of
//! its processor can be in one boosted gcs (`L^g_x`, its longest) or one
//! ceiling-raised local section above the job's priority (`L^c_x`).
//! Waiting counts as the job's execution; it interferes with jitter
//! `Rh − Ch` (see [`super`]).

use super::{longest, saturate, Model, Terms};

/// The boosted priority of `k`'s gcs on `q`: `q`'s remote ceiling on
/// `k`'s processor.
pub(crate) fn remote_ceiling(model: &Model, q: usize, p: u32) -> u64 {
    model
        .users(q)
        .iter()
        .filter(|&&x| model.cpu[x] != p)
        .map(|&x| model.rank[x])
        .max()
        .unwrap_or(0)
}

/// `W(k, q)`.
fn gcs_response(model: &Model, k: usize, q: usize) -> u64 {
    let p = model.cpu[k];
    let own = remote_ceiling(model, q, p);
    let others: u128 = model
        .on(p)
        .filter(|&t| t != k)
        .map(|t| {
            u128::from(
                model
                    .global_requests(t)
                    .filter(|r| remote_ceiling(model, r.resource, p) >= own)
                    .map(|r| r.longest)
                    .max()
                    .unwrap_or(0),
            )
        })
        .sum();
    saturate(u128::from(longest(model, k, q)) + others)
}

/// `b(i, q)`, or `None` once it passes τi's deadline.
fn request_wait(model: &Model, i: usize, q: usize, w: &[Vec<u64>]) -> Option<u64> {
    let rank = model.rank[i];
    let users = model.users(q);
    let gcs = |k: usize| {
        let at = model.requests[k]
            .iter()
            .position(|r| r.resource == q)
            .unwrap_or(0);
        w[k][at]
    };
    let lower = users
        .iter()
        .filter(|&&l| l != i && model.rank[l] < rank)
        .map(|&l| gcs(l))
        .max()
        .unwrap_or(0);
    let higher: Vec<(usize, u128)> = users
        .iter()
        .filter(|&&h| h != i && model.rank[h] > rank)
        .map(|&h| {
            let n = model.request(h, q).map_or(0, |r| r.count);
            (h, u128::from(n) * u128::from(gcs(h)))
        })
        .collect();
    let limit = model.set.tasks[i].deadline.as_ns();
    let mut b = lower;
    loop {
        let next = u128::from(lower)
            + higher
                .iter()
                .map(|&(h, per_job)| u128::from(model.jobs_in(h, b)) * per_job)
                .sum::<u128>();
        let next = saturate(next);
        if next > limit {
            return None;
        }
        if next == b {
            return Some(b);
        }
        b = next;
    }
}

/// The terms of every task.
pub(crate) fn terms(model: &Model) -> Vec<Terms> {
    let w: Vec<Vec<u64>> = (0..model.n())
        .map(|k| {
            model.requests[k]
                .iter()
                .map(|r| gcs_response(model, k, r.resource))
                .collect()
        })
        .collect();
    (0..model.n())
        .map(|i| {
            let mut remote = 0u128;
            for r in model.global_requests(i) {
                match request_wait(model, i, r.resource, &w) {
                    Some(b) => remote += u128::from(r.count) * u128::from(b),
                    None => {
                        remote = u128::MAX;
                        break;
                    }
                }
            }
            let suspends = model.global_count(i) > 0;
            Terms {
                local: model.boosted_local_blocking(i),
                remote: saturate(remote),
                demand: model.wcet(i),
                suspends,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::analyse;
    use super::super::testing::example;
    use rtlab_model::mp_locking::MpProtocol;
    use rtlab_model::policy::PriorityAssignment;
    use rtlab_model::Nanos;

    use crate::verdict::Response;

    /// Worked by hand (µs, RM ranks a 4 > b 3 > c 2 > d 1):
    /// cpu 0: a (C 2, T 10, q 1), b (C 4, T 20, q 2);
    /// cpu 1: c (C 3, T 30, q 3), d (C 5, T 50, r 2 local on cpu 1).
    /// Remote ceilings: q on cpu 0 is c's rank 2, on cpu 1 a's rank 4.
    /// W(a) = 1 + b's 2 = 3, W(b) = 2 + a's 1 = 3, W(c) = 3 (d has no gcs).
    /// b(a, q) = lower max(W(b), W(c)) = 3, no higher user: Bʳa = 3.
    /// b(b, q) = max W(c) = 3 + a: (⌈b/10⌉ + 1)·3 → 3 + 6 = 9 → 3 + 6 = 9: Bʳb = 9.
    /// b(c, q) = 0 + a: (⌈b/10⌉+1)·3 + b: (⌈b/20⌉+1)·3: 0 → 6 → 12 → 15 → 15: Bʳc = 15.
    /// Bˡa = (1 + 1)·2 (b's gcs) = 4; Bˡb = 0; Bˡc = (1 + 1)·max(0, d's r? ceiling(r) = 1 < 2) = 0.
    /// Ra = 2 + 3 + 4 = 9. Rb = 4 + 9 + ⌈(R + 7)/10⌉·2: 13 + 4 = 17 → 13 + 6 = 19 → 19.
    /// Rc = 3 + 15 = 18. Rd = 5 + ⌈(R + 15)/30⌉·3: 8 → 8.
    #[test]
    fn bounds_by_hand() {
        let s = example(30, true);
        let out = analyse(&s, MpProtocol::Mpcp, PriorityAssignment::RateMonotonic, 2).unwrap();
        let us = Nanos::from_us;
        let got: Vec<(Nanos, Nanos, Response)> = out
            .tasks
            .iter()
            .map(|t| (t.local_blocking, t.remote_blocking, t.response))
            .collect();
        let within = |r| Response::Within(us(r));
        assert_eq!(
            got,
            [
                (us(4), us(3), within(9)),
                (us(0), us(9), within(19)),
                (us(0), us(15), within(18)),
                (us(0), us(0), within(8)),
            ]
        );
    }
}
