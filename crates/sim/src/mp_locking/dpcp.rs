//! DPCP (Rajkumar, Sha & Lehoczky, *Real-time synchronization protocols
//! for multiprocessors*, RTSS 1988) in the simulator, under `pfp:*`.
//!
//! Every global resource lives on a synchronization processor (the k-th
//! global resource, in order of first use, on processor `k mod m`). A
//! job's request **suspends** it on its own processor while an **agent**
//! executes the critical section on the synchronization processor, above
//! every task there. The agents of a processor follow the priority
//! ceiling protocol in its immediate form: an agent waits at its task's
//! priority and, from its first instant, holds the resource and runs at
//! the resource's ceiling (the highest priority of its users), so an agent
//! never finds its resource taken. When the section ends the job resumes
//! on its own processor.

use super::engine::{Key, LockingSim};

/// `j` requests global resource `q`: its agent is created.
pub(crate) fn request(sim: &mut LockingSim, j: usize, q: usize) {
    let seq = sim.next_seq();
    let job = &mut sim.jobs[j];
    job.agent = Some(q);
    job.agent_started = false;
    job.seq = seq;
}

/// The agent of `j` gets its first processor time: it takes its resource.
pub(crate) fn start_agent(sim: &mut LockingSim, j: usize) {
    if let Some(q) = sim.jobs[j].agent {
        sim.resources[q].owner = Some(j);
        let job = &mut sim.jobs[j];
        job.agent_started = true;
        job.global = Some(q);
    }
}

/// The agent's section ends: the job goes home.
pub(crate) fn release(sim: &mut LockingSim, j: usize, q: usize) {
    sim.resources[q].owner = None;
    let job = &mut sim.jobs[j];
    job.agent = None;
    job.agent_started = false;
    job.global = None;
}

/// Agents above every task (class 1): a started agent at its resource's
/// ceiling, a waiting one at its task's rank; others by rank and local
/// ceilings.
pub(crate) fn key(sim: &LockingSim, j: usize) -> Key {
    let job = &sim.jobs[j];
    match job.agent {
        Some(q) if job.agent_started => (1, u64::MAX - sim.resources[q].ceiling, 0, job.seq),
        Some(_) => (1, u64::MAX - sim.rank[job.task], 1, job.seq),
        None => sim.normal_key(j, 0),
    }
}
