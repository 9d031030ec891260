//! MPCP (Rajkumar, *Real-time synchronization protocols for shared memory
//! multiprocessors*, ICDCS 1990) in the simulator, under `pfp:*`.
//!
//! A job that requests a free global resource takes it; its global
//! critical section then runs on its own processor above every task there,
//! at the resource's **remote ceiling** on that processor (the highest
//! priority of the resource's users on other processors): a section of a
//! higher remote ceiling preempts it, one of an equal ceiling waits for it
//! (sections of equal ceiling run in the order they were granted). A job
//! that finds the resource taken **suspends** in a queue served by
//! priority: at each release the most urgent waiter takes it.

use super::engine::{Key, LockingSim, Wait};

/// `j` requests global resource `q`.
pub(crate) fn request(sim: &mut LockingSim, j: usize, q: usize) {
    if sim.resources[q].owner.is_none() {
        grant(sim, j, q);
    } else {
        sim.jobs[j].wait = Wait::Suspended(q);
        sim.resources[q].by_priority.push(j);
    }
}

fn grant(sim: &mut LockingSim, j: usize, q: usize) {
    sim.grant(j, q);
    let seq = sim.next_seq();
    sim.jobs[j].seq = seq;
}

/// `j` releases `q`: the most urgent waiter takes it.
pub(crate) fn release(sim: &mut LockingSim, j: usize, q: usize) {
    sim.jobs[j].global = None;
    sim.resources[q].owner = None;
    let waiters = &sim.resources[q].by_priority;
    let best = (0..waiters.len()).max_by_key(|&k| sim.rank[sim.jobs[waiters[k]].task]);
    if let Some(k) = best {
        let w = sim.resources[q].by_priority.remove(k);
        grant(sim, w, q);
    }
}

/// A holder runs at its gcs priority (class 2, by remote ceiling, then
/// grant order); others by rank and local ceilings.
pub(crate) fn key(sim: &LockingSim, j: usize) -> Key {
    let job = &sim.jobs[j];
    match job.global {
        Some(q) => {
            let cpu = sim.home_cpu(job.task) as usize;
            (
                2,
                u64::MAX - sim.resources[q].remote_ceiling[cpu],
                job.seq,
                0,
            )
        }
        None => sim.normal_key(j, 0),
    }
}
