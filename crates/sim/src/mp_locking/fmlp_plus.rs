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

/// `j` requests global resource `q`: FIFO, suspended.
pub(crate) fn request(sim: &mut LockingSim, j: usize, q: usize) {
    sim.fifo_request(j, q, Wait::Suspended);
}

/// `j` releases `q`: the head of the queue takes it.
pub(crate) fn release(sim: &mut LockingSim, j: usize, q: usize) {
    sim.fifo_release(j, q);
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
