//! MrsP (Burns & Wellings, *A schedulability compatible multiprocessor
//! resource sharing protocol -- MrsP*, ECRTS 2013) in the simulator, under
//! `pfp:*`.
//!
//! A job that requests a resource runs from then on at the resource's
//! **ceiling on its own processor** (the highest priority of the
//! resource's users there) and, if the resource is taken, **spins** in its
//! FIFO queue. When the holder is not running (preempted on its
//! processor) while some waiter of its resource is spinning, the holder
//! **migrates** to that waiter's processor and runs its section there in
//! the waiter's place (the waiter's time pays for it); it stays while that
//! waiter keeps its processor, else moves to another spinning waiter (the
//! lowest-numbered processor), and goes home when the section ends.

use super::engine::{Key, LockingSim, Wait};

/// `j` requests global resource `q`: at its local ceiling from now, FIFO,
/// spinning.
pub(crate) fn request(sim: &mut LockingSim, j: usize, q: usize) {
    let cpu = sim.home_cpu(sim.jobs[j].task) as usize;
    sim.jobs[j].ceiling = sim.resources[q].ceiling_on[cpu];
    sim.fifo_request(j, q, Wait::Spinning);
}

/// `j` releases `q` and drops to its own priority; the head of the queue
/// takes it.
pub(crate) fn release(sim: &mut LockingSim, j: usize, q: usize) {
    sim.jobs[j].ceiling = 0;
    sim.fifo_release(j, q);
}

/// By rank, raised to the resource's local ceiling while it requests or
/// holds, and by local ceilings.
pub(crate) fn key(sim: &LockingSim, j: usize) -> Key {
    sim.normal_key(j, sim.jobs[j].ceiling)
}

/// Helping: a holder that no processor runs takes the place of a spinning
/// waiter of its resource (`picked[c]`: whose place processor `c` is;
/// `runs[c]`: who runs there).
pub(crate) fn help(sim: &LockingSim, picked: &[Option<usize>], runs: &mut [Option<usize>]) {
    for (q, r) in sim.resources.iter().enumerate() {
        let Some(h) = r.owner else { continue };
        if !r.global || sim.jobs[h].done || runs.contains(&Some(h)) {
            continue;
        }
        let spinning = |c: usize| {
            picked[c].is_some_and(|w| sim.jobs[w].wait == Wait::Spinning(q)) && runs[c] == picked[c]
        };
        let here = sim.jobs[h]
            .on_cpu
            .map(|c| c as usize)
            .filter(|&c| spinning(c));
        if let Some(c) = here.or_else(|| (0..picked.len()).find(|&c| spinning(c))) {
            runs[c] = Some(h);
        }
    }
}
