//! DPCP: the distributed priority ceiling protocol (Rajkumar, Sha &
//! Lehoczky, *Real-time synchronization protocols for multiprocessors*,
//! RTSS 1988), under partitioned fixed priorities.
//!
//! Every global resource lives on a *synchronization processor*
//! ([`rtlab_model::mp_locking::Sharing::synchronization_processors`]: the
//! k-th global resource on processor `k mod m`). A job's global critical
//! section is executed there by an **agent**, at a priority above every
//! task of that processor, while the job suspends; the agents of one
//! processor follow the priority ceiling protocol among themselves (rtlab
//! uses its immediate form: an agent runs at its resource's ceiling, the
//! highest priority of the resource's users, from its first instant, with
//! PCP's worst case). Local resources follow the processor's immediate
//! ceiling protocol.
//!
//! With `w` the job's response window (`Ri`, iterated to the least fixed
//! point), `s(q)` the synchronization processor of q, `N^s_i` τi's
//! sections on resources of processor s, `Σ^s_k` the total length of τk's
//! sections on them and `η_k(w) = ⌈(w + Jk) / Tk⌉ + 1` the jobs of τk in
//! the window:
//!
//! ```text
//! Bʳi = Σ_{s : N^s_i > 0} ( Σ_{h ≠ i, Ph > Pi} η_h(w) · Σ^s_h
//!                           + N^s_i · max { L_{l,q} : Pl < Pi, s(q) = s, ceil(q) >= Pi } )
//! Bˡi = Σ_{k ≠ i} η_k(w) · Σ^{P(i)}_k  +  (1 + Σ_q N_{i,q}) · max { L_{x,r} : x ∈ lp(i), r local, ceil(r) >= Pi }
//! C'h = Ch − Σ_q global Σ_{sections of h on q} L
//! ```
//!
//! `Bʳi` is how long τi's agents wait beyond their own sections: for every
//! higher-priority agent that arrives on their processors in the window,
//! and for one lower-priority agent already inside a resource whose
//! ceiling is at least τi's priority per request (SchedCAT's `dpcp.cpp`,
//! after Rajkumar 1991, p. 87). `Bˡi` is the agents run on τi's own
//! processor for other tasks (all of them preempt τi) and the ceiling
//! blocking of local resources at the release and after each suspension.
//! A task demands of its own processor only its sections that are not
//! global (`C'h`), and suspends, so it interferes with jitter `Rh − C'h`.

use super::{saturate, Model, Terms};

/// The terms of every task, with response windows `responses`.
pub(crate) fn terms(model: &Model, responses: &[u64]) -> Vec<Terms> {
    let sync = &model.sharing.synchronization_processors(model.m);
    // Σ^s_k: per task, per processor, the length of its agents' work.
    let agent_work = |k: usize, s: u32| -> u128 {
        model
            .global_requests(k)
            .filter(|r| sync[r.resource] == s)
            .map(|r| u128::from(r.total))
            .sum()
    };
    (0..model.n())
        .map(|i| {
            let (rank, p, w) = (model.rank[i], model.cpu[i], responses[i]);
            let mut targets: Vec<(u32, u64)> = Vec::new();
            for r in model.global_requests(i) {
                let s = sync[r.resource];
                match targets.iter_mut().find(|(t, _)| *t == s) {
                    Some((_, n)) => *n += r.count,
                    None => targets.push((s, r.count)),
                }
            }
            let mut remote = 0u128;
            for &(s, count) in &targets {
                let higher: u128 = (0..model.n())
                    .filter(|&h| h != i && model.rank[h] > rank)
                    .map(|h| u128::from(model.jobs_in(h, w)) * agent_work(h, s))
                    .sum();
                let lower = (0..model.n())
                    .filter(|&l| l != i && model.rank[l] < rank)
                    .flat_map(|l| {
                        model.global_requests(l).filter(move |r| {
                            sync[r.resource] == s && model.ceiling(r.resource) >= rank
                        })
                    })
                    .map(|r| r.longest)
                    .max()
                    .unwrap_or(0);
                remote += higher + u128::from(count) * u128::from(lower);
            }
            let agents: u128 = (0..model.n())
                .filter(|&k| k != i)
                .map(|k| u128::from(model.jobs_in(k, w)) * agent_work(k, p))
                .sum();
            let ceiling = model
                .lower_local(i)
                .map(|x| model.local_ceiling_blocking(x, rank))
                .max()
                .unwrap_or(0);
            let local = agents + u128::from(1 + model.global_count(i)) * u128::from(ceiling);
            let sections: u64 = model.global_requests(i).map(|r| r.total).sum();
            Terms {
                local: saturate(local),
                remote: saturate(remote),
                demand: model.wcet(i).saturating_sub(sections),
                suspends: model.global_count(i) > 0,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::analyse;
    use super::super::testing::{set, task};
    use rtlab_model::mp_locking::MpProtocol;
    use rtlab_model::policy::PriorityAssignment;
    use rtlab_model::Nanos;

    use crate::verdict::Response;

    /// Worked by hand (µs, RM ranks a 3 > b 2 > c 1): q is the only global
    /// resource, so it lives on cpu 0. cpu 0: a (C 2, T 10, q 1),
    /// b (C 4, T 20, no section); cpu 1: c (C 3, T 40, q 3).
    /// a: its agent waits for a lower agent inside q (ceil q = 3 >= 3):
    /// c's 3, Bʳa = 3; agents on cpu 0 for others: c's, η_c(R_a) = 2 jobs
    /// → Bˡa = 6. Ra = 2 + 3 + 6 = 11 > 10: beyond.
    #[test]
    fn agents_on_the_synchronization_processor_preempt_its_tasks() {
        let s = set(
            2,
            vec![
                task("a", 2, 10, 0, &[("q", 0, 1)]),
                task("b", 4, 20, 0, &[]),
                task("c", 3, 40, 1, &[("q", 0, 3)]),
            ],
        );
        let out = analyse(&s, MpProtocol::Dpcp, PriorityAssignment::RateMonotonic, 2).unwrap();
        let us = Nanos::from_us;
        assert_eq!(out.tasks[0].remote_blocking, us(3));
        assert_eq!(out.tasks[0].local_blocking, us(6));
        assert_eq!(out.tasks[0].response, Response::Exceeds);
        // c's agent waits for a's agents: η_a(Rc) jobs of 1 each; its own
        // processor runs no agent.
        assert_eq!(out.tasks[2].local_blocking, us(0));
    }

    /// A task on another processor than its resource's only suspends: its
    /// own processor runs no agent.
    #[test]
    fn a_task_off_the_synchronization_processor_only_suspends() {
        let s = set(
            2,
            vec![
                task("c", 3, 40, 1, &[("q", 0, 3)]),
                task("a", 2, 20, 0, &[("q", 0, 1)]),
            ],
        );
        // q is first used by c: it lives on processor 0 all the same (the
        // first global resource goes to cpu 0), where a runs.
        let out = analyse(&s, MpProtocol::Dpcp, PriorityAssignment::RateMonotonic, 2).unwrap();
        let us = Nanos::from_us;
        // c (cpu 1) waits for a's agents on cpu 0 (higher priority):
        // η_a(w)·1, from w = 3: (⌈3/20⌉ + 1) = 2 → Bʳc = 2, Rc = 3 + 2 = 5,
        // η_a(5) = 2: settled. a: Bʳ = c's 3 (lower, inside q), Bˡ = c's
        // agents on cpu 0, η_c(11) = 2 → 6: Ra = 2 + 3 + 6 = 11.
        assert_eq!(out.tasks[0].remote_blocking, us(2));
        assert_eq!(out.tasks[0].response, Response::Within(us(5)));
        assert_eq!(out.tasks[0].local_blocking, us(0));
        assert_eq!(out.tasks[1].response, Response::Within(us(11)));
    }
}
