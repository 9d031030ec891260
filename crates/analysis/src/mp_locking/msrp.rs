//! MSRP: the multiprocessor stack resource policy (Gai, Lipari & Di Natale,
//! *Minimizing memory utilization of real-time task sets in single and
//! multi-processor systems-on-a-chip*, RTSS 2001), under partitioned fixed
//! priorities.
//!
//! A job that requests a global resource becomes non-preemptive and spins
//! until its turn in the resource's FIFO queue, then runs its section,
//! still non-preemptive; local resources follow the ceiling protocol of
//! their processor (SRP, whose fixed-priority form is the immediate
//! ceiling).
//!
//! Since a processor spinning or in a global section runs nothing else, at
//! most one request per other processor is ahead of a job's in the FIFO
//! queue. For task τk on processor P(k) and global resource q:
//!
//! ```text
//! spin(k, q) = Σ_{p ≠ P(k)} max { L_{x,q} : x on p uses q }
//! Bʳi        = Σ_q N_{i,q} · spin(i, q)                       (spinning: charged as execution)
//! Bˡi        = max( max { spin(x, q) + L_{x,q} : x ∈ lp(i), q global },
//!                   max { L_{x,r} : x ∈ lp(i), r local, ceil(r) >= Pi } )
//! C'h        = Ch + Bʳh                                        (what τh takes from its processor)
//! ```
//!
//! The job never suspends, so one lower-priority non-preemptive stretch
//! (a spin and its section, or one ceiling section) can delay it, at its
//! release. These are the paper's bounds (SchedCAT's `msrp.cpp`).

use super::{saturate, Model, Terms};

/// `spin(k, q)`: the longest request of each other processor on `q`.
pub(crate) fn spin(model: &Model, k: usize, q: usize) -> u64 {
    let mut per_cpu: Vec<(u32, u64)> = Vec::new();
    for &x in model.users(q) {
        let p = model.cpu[x];
        if p == model.cpu[k] {
            continue;
        }
        let len = super::longest(model, x, q);
        match per_cpu.iter_mut().find(|(c, _)| *c == p) {
            Some((_, l)) => *l = (*l).max(len),
            None => per_cpu.push((p, len)),
        }
    }
    saturate(per_cpu.iter().map(|&(_, l)| u128::from(l)).sum())
}

/// `Bʳk` of a spinning protocol: every request's spin.
pub(crate) fn total_spin(model: &Model, k: usize) -> u64 {
    saturate(
        model
            .global_requests(k)
            .map(|r| u128::from(r.count) * u128::from(spin(model, k, r.resource)))
            .sum(),
    )
}

/// The terms of every task.
pub(crate) fn terms(model: &Model) -> Vec<Terms> {
    let spins: Vec<u64> = (0..model.n()).map(|k| total_spin(model, k)).collect();
    (0..model.n())
        .map(|i| {
            let rank = model.rank[i];
            let local = model
                .lower_local(i)
                .flat_map(|x| {
                    let global = model
                        .global_requests(x)
                        .map(move |r| spin(model, x, r.resource).saturating_add(r.longest));
                    global.chain(std::iter::once(model.local_ceiling_blocking(x, rank)))
                })
                .max()
                .unwrap_or(0);
            Terms::spinning(model.wcet(i), local, spins[i])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testing::example;
    use super::super::{analyse, TaskBound};
    use rtlab_model::mp_locking::MpProtocol;
    use rtlab_model::policy::PriorityAssignment;
    use rtlab_model::Nanos;

    use crate::verdict::Response;

    /// Worked by hand (µs): cpu 0 holds a (C 2, T 10, q 1 long) and
    /// b (C 4, T 20, q 2 long); cpu 1 holds c (C 3, T 15, q 3 long).
    /// spin(a) = spin(b) = 3 (c's section), spin(c) = max(1, 2) = 2.
    /// a: Bʳ 3, Bˡ = b's spin + section = 3 + 2 = 5, R = 2 + 3 + 5 = 10.
    /// b: Bʳ 3, Bˡ 0, R = 4 + 3 + ⌈R/10⌉(2 + 3): 7 → 12 → 17 → 17.
    /// c: Bʳ 2, alone on cpu 1: R = 3 + 2 = 5.
    #[test]
    fn bounds_by_hand() {
        let s = example(15, false);
        let out = analyse(&s, MpProtocol::Msrp, PriorityAssignment::RateMonotonic, 2).unwrap();
        let us = Nanos::from_us;
        let bound = |l, r, resp| TaskBound {
            local_blocking: us(l),
            remote_blocking: us(r),
            response: Response::Within(us(resp)),
        };
        assert_eq!(
            out.tasks,
            [bound(5, 3, 10), bound(0, 3, 17), bound(0, 2, 5)]
        );
        assert_eq!(out.schedulable, Some(true));
    }
}
