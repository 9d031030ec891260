//! Partitioned FMLP+ (Brandenburg, *The FMLP+: an asymptotically optimal
//! real-time locking protocol for suspension-aware analysis*, ECRTS 2014),
//! under partitioned fixed priorities.
//!
//! A job that finds a global resource taken suspends in the resource's
//! FIFO queue. A holder is boosted above every task of its processor, and
//! boosted jobs run in the order they issued their requests (the earliest
//! first); local resources follow the processor's immediate ceiling
//! protocol.
//!
//! Each task has at most one request outstanding, so every request ahead
//! of a job's in a FIFO queue was issued before it, by a distinct task.
//! While the job waits, the holder of the resource is running its section
//! or is kept from it only by boosted jobs of its processor that requested
//! still earlier: at every instant of the wait some request issued before
//! the job's, by some other task of a processor where the resource's other
//! users run, is being served, at most one per task. Hence, with `L^g_x`
//! the longest global section of τx and `A(i, q)` the processors of q's
//! other users,
//!
//! ```text
//! W(i, q) = Σ_{p ∈ A(i, q)} Σ_{x on p, x ≠ i} L^g_x
//! Bʳi     = Σ_q N_{i,q} · W(i, q)
//! Bˡi     = (1 + Σ_q N_{i,q}) · Σ_{x ∈ lp(i)} max(L^g_x, L^c_x)
//! ```
//!
//! the O(n) per-request bound the paper proves for FIFO queues with
//! request-order boosting (SchedCAT's `fmlp_plus.cpp` refines the count
//! per processor). The local term is the paper's boost blocking: a lower
//! task cannot issue a request while the job is ready, so at the release
//! and after each resumption it is in one boosted section at most (or one
//! ceiling-raised local section above the job). Waiting counts as the
//! job's execution; it interferes with jitter `Rh − Ch` (see [`super`]).

use super::{saturate, Model, Terms};

/// `W(i, q)`.
fn request_wait(model: &Model, i: usize, q: usize) -> u64 {
    let mut cpus: Vec<u32> = model
        .users(q)
        .iter()
        .filter(|&&k| k != i)
        .map(|&k| model.cpu[k])
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    saturate(
        cpus.iter()
            .flat_map(|&p| model.on(p))
            .filter(|&x| x != i)
            .map(|x| u128::from(model.longest_global(x)))
            .sum(),
    )
}

/// The terms of every task.
pub(crate) fn terms(model: &Model) -> Vec<Terms> {
    (0..model.n())
        .map(|i| {
            let remote: u128 = model
                .global_requests(i)
                .map(|r| u128::from(r.count) * u128::from(request_wait(model, i, r.resource)))
                .sum();
            Terms {
                local: model.boosted_local_blocking(i),
                remote: saturate(remote),
                demand: model.wcet(i),
                suspends: model.global_count(i) > 0,
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

    /// The MPCP example's set (µs) under FMLP+:
    /// W(a, q) = cpu 0's b (2) + cpu 1's c (3) = 5 (d has no global
    /// section); W(b, q) = a 1 + c 3 = 4; W(c, q) = a 1 + b 2 = 3.
    /// Bˡa = 2 · b's 2 = 4, others 0.
    /// Ra = 2 + 5 + 4 = 11 > 10: a misses its deadline here.
    #[test]
    fn bounds_by_hand() {
        let s = example(30, true);
        let out = analyse(
            &s,
            MpProtocol::FmlpPlus,
            PriorityAssignment::RateMonotonic,
            2,
        )
        .unwrap();
        let us = Nanos::from_us;
        let remote: Vec<Nanos> = out.tasks.iter().map(|t| t.remote_blocking).collect();
        assert_eq!(remote, [us(5), us(4), us(3), us(0)]);
        assert_eq!(out.tasks[0].local_blocking, us(4));
        assert_eq!(out.tasks[0].response, Response::Exceeds);
        assert_eq!(out.schedulable, Some(false));
    }
}
