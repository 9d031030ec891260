//! MrsP: the multiprocessor resource sharing protocol (Burns & Wellings,
//! *A schedulability compatible multiprocessor resource sharing protocol
//! -- MrsP*, ECRTS 2013), under partitioned fixed priorities.
//!
//! A job requesting a resource runs from then on at the resource's ceiling
//! **on its own processor** (the highest priority of the resource's users
//! there) and spins in the resource's FIFO queue; a holder that is
//! preempted moves to a processor where a queued job is spinning and runs
//! there in its place ("helping"), so the queue advances whenever any of
//! its waiters holds its processor. A resource used on one processor is
//! the immediate ceiling protocol's.
//!
//! As each processor has at most one job queued per resource (the spinner
//! holds the local ceiling), a request waits for at most one section per
//! other processor, and with helping it spins no longer than those take;
//! the paper charges that spin as execution. For task τk and resource q:
//!
//! ```text
//! spin(k, q) = Σ_{p ≠ P(k)} max { L_{x,q} : x on p uses q }            (0 for a local q)
//! Bʳi        = Σ_q N_{i,q} · spin(i, q)
//! Bˡi        = max { spin(x, q) + L_{x,q} : x ∈ lp(i), q used by x, ceil_{P(i)}(q) >= Pi }
//! C'h        = Ch + Bʳh
//! ```
//!
//! `Bˡi` is the paper's single blocking term: the job, which never
//! suspends, meets at most one lower-priority job at a ceiling at or above
//! its priority, once, at its release.

use super::msrp::{spin, total_spin};
use super::{Model, Terms};

/// The terms of every task.
pub(crate) fn terms(model: &Model) -> Vec<Terms> {
    let spins: Vec<u64> = (0..model.n()).map(|k| total_spin(model, k)).collect();
    (0..model.n())
        .map(|i| {
            let (rank, p) = (model.rank[i], model.cpu[i]);
            let local = model
                .lower_local(i)
                .flat_map(|x| {
                    model.requests[x]
                        .iter()
                        .filter(move |r| model.ceiling_on(r.resource, p) >= rank)
                        .map(move |r| {
                            let wait = if model.global(r.resource) {
                                spin(model, x, r.resource)
                            } else {
                                0
                            };
                            wait.saturating_add(r.longest)
                        })
                })
                .max()
                .unwrap_or(0);
            Terms::spinning(model.wcet(i), local, spins[i])
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

    /// The MSRP example's set under MrsP (µs): the bounds coincide except
    /// where the ceiling matters. a (rank 3) is q's only user above b on
    /// cpu 0, so b's spin + section (3 + 2) blocks a: Bˡa = 5; a task d
    /// added below b with a section on a local r blocks nobody above r's
    /// ceiling (d itself).
    #[test]
    fn local_ceiling_decides_who_is_blocked() {
        let s = set(
            2,
            vec![
                task("a", 2, 10, 0, &[("q", 0, 1)]),
                task("b", 4, 20, 0, &[("q", 1, 2)]),
                task("c", 3, 15, 1, &[("q", 0, 3)]),
                task("d", 1, 40, 0, &[("r", 0, 1)]),
            ],
        );
        let out = analyse(&s, MpProtocol::Mrsp, PriorityAssignment::RateMonotonic, 2).unwrap();
        let us = Nanos::from_us;
        let local: Vec<Nanos> = out.tasks.iter().map(|t| t.local_blocking).collect();
        let remote: Vec<Nanos> = out.tasks.iter().map(|t| t.remote_blocking).collect();
        assert_eq!(local, [us(5), us(0), us(0), us(0)]);
        assert_eq!(remote, [us(3), us(3), us(2), us(0)]);
        assert_eq!(out.schedulable, Some(true));
    }
}
