//! MSRP (Gai, Lipari & Di Natale, *Minimizing memory utilization of
//! real-time task sets in single and multi-processor systems-on-a-chip*,
//! RTSS 2001) in the simulator, under `pfp:*`.
//!
//! A job that requests a global resource becomes **non-preemptive** and,
//! if the resource is taken, **spins** on its processor in the resource's
//! FIFO queue; it runs its section still non-preemptive and becomes
//! preemptive again when it releases the resource. Local resources follow
//! the immediate ceiling protocol (the stack resource policy's
//! fixed-priority form).

use super::engine::{Key, LockingSim, Wait};

/// `j` requests global resource `q`: non-preemptive from now, FIFO,
/// spinning.
pub(crate) fn request(sim: &mut LockingSim, j: usize, q: usize) {
    sim.jobs[j].np = true;
    sim.fifo_request(j, q, Wait::Spinning);
}

/// `j` releases `q`, preemptive again; the head of the queue (spinning)
/// takes it.
pub(crate) fn release(sim: &mut LockingSim, j: usize, q: usize) {
    sim.jobs[j].np = false;
    sim.fifo_release(j, q);
}

/// Non-preemptive jobs first (class 0); others by rank and local ceilings.
pub(crate) fn key(sim: &LockingSim, j: usize) -> Key {
    let job = &sim.jobs[j];
    if job.np {
        (0, job.seq, 0, 0)
    } else {
        sim.normal_key(j, 0)
    }
}
