//! The global OMLP (Brandenburg & Anderson, *Optimality results for
//! multiprocessor real-time locking*, RTSS 2010) in the simulator, under
//! `gedf` (and `cedf`, each resource inside one cluster).
//!
//! Each resource has a FIFO queue of at most m jobs (m: the processors of
//! the cluster), its head the holder, and a priority queue behind it: a
//! request joins the FIFO queue while it holds fewer than m jobs, else the
//! priority queue (EDF order); when the holder releases, the most urgent
//! job of the priority queue moves to the FIFO queue's tail and the next
//! in FIFO order takes the resource. Waiting jobs suspend. The holder
//! inherits the highest priority among the jobs waiting for its resource.
//!
//! Blocking is the paper's s-oblivious pi-blocking: a pending job is
//! pi-blocked while it is not scheduled and is among the m
//! highest-priority pending jobs of its cluster (remote while it waits for
//! a resource, local otherwise: with inheritance the latter never
//! happens, which the soundness test checks).

use rtlab_model::Nanos;

use super::engine::{Key, LockingSim, Wait};

/// `j`'s own EDF priority: deadline, then task order.
fn base(sim: &LockingSim, j: usize) -> Key {
    let job = &sim.jobs[j];
    (job.deadline.as_ns(), job.task as u64, job.index, 0)
}

/// `j` requests `q`.
pub(crate) fn request(sim: &mut LockingSim, j: usize, q: usize) {
    let m = sim.domains[sim.home[sim.jobs[j].task]].len();
    let r = &mut sim.resources[q];
    if r.fifo.len() < m {
        r.fifo.push_back(j);
        if r.fifo.len() == 1 {
            sim.grant(j, q);
            return;
        }
    } else {
        r.by_priority.push(j);
    }
    sim.jobs[j].wait = Wait::Suspended(q);
}

/// `j` releases `q`: the priority queue's most urgent job joins the FIFO
/// queue, whose next job takes the resource.
pub(crate) fn release(sim: &mut LockingSim, j: usize, q: usize) {
    sim.jobs[j].global = None;
    let r = &mut sim.resources[q];
    r.owner = None;
    r.fifo.retain(|&w| w != j);
    let best = (0..sim.resources[q].by_priority.len())
        .min_by_key(|&k| base(sim, sim.resources[q].by_priority[k]));
    if let Some(k) = best {
        let w = sim.resources[q].by_priority.remove(k);
        sim.resources[q].fifo.push_back(w);
    }
    if let Some(&h) = sim.resources[q].fifo.front() {
        sim.grant(h, q);
    }
}

/// EDF, a holder inheriting its waiters' most urgent priority.
pub(crate) fn key(sim: &LockingSim, j: usize) -> Key {
    let own = base(sim, j);
    match sim.jobs[j].global {
        Some(q) => {
            let r = &sim.resources[q];
            r.fifo
                .iter()
                .chain(&r.by_priority)
                .filter(|&&w| w != j)
                .map(|&w| base(sim, w))
                .fold(own, |a, b| a.min(b))
        }
        None => own,
    }
}

/// Charges s-oblivious pi-blocking over `[from, to)` (module docs).
pub(crate) fn account(sim: &mut LockingSim, from: Nanos, to: Nanos) {
    let mut pending: Vec<(usize, Key, usize)> = sim
        .heads()
        .map(|j| (sim.home[sim.jobs[j].task], base(sim, j), j))
        .collect();
    pending.sort_unstable();
    let mut taken = vec![0usize; sim.domains.len()];
    let mut charges = Vec::new();
    for (d, _, j) in pending {
        if taken[d] >= sim.domains[d].len() {
            continue;
        }
        taken[d] += 1;
        let job = &sim.jobs[j];
        if job.on_cpu.is_none() {
            charges.push((j, matches!(job.wait, Wait::Suspended(_))));
        }
    }
    for (j, remote) in charges {
        sim.charge(j, remote, from, to);
    }
}
