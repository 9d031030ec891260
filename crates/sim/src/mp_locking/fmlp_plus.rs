//! Partitioned FMLP+ (Brandenburg, *The FMLP+: an asymptotically optimal
//! real-time locking protocol for suspension-aware analysis*, ECRTS 2014)
//! in the simulator, under `pfp:*`.
//!
//! A job that finds a global resource taken **suspends** in its FIFO
//! queue. A holder is **boosted** above every task of its processor, and
//! boosted jobs run in the order they issued their requests, the earliest
//! first (so a holder is never kept from its section by a request made
//! after its own).

use super::engine::{Key, LockingSim, Wait};

/// `j` requests global resource `q`.
pub(crate) fn request(sim: &mut LockingSim, j: usize, q: usize) {
    let seq = sim.next_seq();
    sim.jobs[j].seq = seq;
    if sim.resources[q].owner.is_none() {
        sim.grant(j, q);
    } else {
        sim.jobs[j].wait = Wait::Suspended(q);
        sim.resources[q].fifo.push_back(j);
    }
}

/// `j` releases `q`: the head of the queue takes it.
pub(crate) fn release(sim: &mut LockingSim, j: usize, q: usize) {
    sim.jobs[j].global = None;
    sim.resources[q].owner = None;
    if let Some(w) = sim.resources[q].fifo.pop_front() {
        sim.grant(w, q);
    }
}

/// A holder is boosted (class 2) in request order; others by rank and
/// local ceilings.
pub(crate) fn key(sim: &LockingSim, j: usize) -> Key {
    let job = &sim.jobs[j];
    match job.global {
        Some(_) => (2, job.seq, 0, 0),
        None => sim.normal_key(j, 0),
    }
}
