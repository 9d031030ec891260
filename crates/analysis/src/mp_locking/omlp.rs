//! The global OMLP (Brandenburg & Anderson, *Optimality results for
//! multiprocessor real-time locking*, RTSS 2010), under global EDF on m
//! processors.
//!
//! Each resource has a FIFO queue of at most m jobs and a priority queue
//! behind it: a request joins the FIFO queue while it holds fewer than m
//! jobs, else the priority queue (by EDF priority), whose head moves up
//! when a FIFO place frees. The head of the FIFO queue holds the resource
//! and inherits the highest priority among the jobs waiting for it.
//! Waiting jobs suspend.
//!
//! The paper's analysis is suspension-oblivious: a job is *pi-blocked*
//! while it is pending, not scheduled, and among the m highest-priority
//! pending jobs. Each request is pi-blocked for at most 2m − 1 critical
//! sections of others (m − 1 ahead in the FIFO queue, m while in the
//! priority queue), so with `Lmax(q)` the longest section of another task
//! on q,
//!
//! ```text
//! bi  = Σ_q N_{i,q} · (2m − 1) · Lmax(q)
//! C'i = Ci + bi
//! ```
//!
//! and the set is schedulable when the global EDF tests ([`crate::global`]:
//! GFB, BAK, BCL, RTA) accept the tasks with `C'` for `C`; the response
//! bound is the RTA's (Bertogna & Cirinei 2007) on `C'`. Inheritance never
//! pi-blocks a job that is not waiting (a holder inherits a waiter's
//! priority, taking a place that waiter would have had), so the bound is
//! all remote and the local blocking 0.

use rtlab_model::mp_locking::{MpProtocol, Sharing};
use rtlab_model::{Nanos, Task, TaskSet};

use super::{saturate, LockingOutcome, TaskBound};
use crate::global::{bak, bcl, edf_rta, gfb};
use crate::verdict::{Response, Verdict};

/// `bi` of every task of `set` on `m` processors.
pub fn pi_blocking(set: &TaskSet, m: u32) -> Vec<u64> {
    let sharing = Sharing::of(set, &vec![0; set.tasks.len()]);
    let factor = u128::from(2 * u64::from(m.max(1)) - 1);
    (0..set.tasks.len())
        .map(|i| {
            let mut total = 0u128;
            for &q in &sharing.sections[i] {
                let longest = sharing.resources[q]
                    .users
                    .iter()
                    .filter(|&&x| x != i)
                    .flat_map(|&x| {
                        set.tasks[x]
                            .critical_sections
                            .iter()
                            .zip(&sharing.sections[x])
                            .filter(|(_, &r)| r == q)
                            .map(|(c, _)| c.length.as_ns())
                    })
                    .max()
                    .unwrap_or(0);
                total += factor * u128::from(longest);
            }
            saturate(total)
        })
        .collect()
}

/// The analysis (see the module docs).
pub(crate) fn analyse(set: &TaskSet, m: u32) -> LockingOutcome {
    let blocking = pi_blocking(set, m);
    let inflated = TaskSet::new(
        set.name.clone(),
        set.tasks
            .iter()
            .zip(&blocking)
            .map(|(t, &b)| Task {
                wcet: Nanos::from_ns(t.wcet.as_ns().saturating_add(b)),
                critical_sections: Vec::new(),
                cpu: None,
                ..t.clone()
            })
            .collect(),
    );
    let responses: Vec<Response> = if inflated.tasks.iter().any(|t| t.wcet > t.deadline) {
        inflated
            .tasks
            .iter()
            .map(|t| {
                if t.wcet > t.deadline {
                    Response::Exceeds
                } else {
                    Response::Unknown
                }
            })
            .collect()
    } else {
        edf_rta::response_times(&inflated, m)
    };
    let verdicts: [Verdict; 4] = [
        gfb::verdict(&inflated, m),
        bak::verdict(&inflated, m),
        bcl::verdict(&inflated, m),
        edf_rta::verdict(&inflated, m),
    ];
    let schedulable = if verdicts.contains(&Some(true)) {
        Some(true)
    } else if verdicts.contains(&Some(false)) {
        Some(false)
    } else {
        None
    };
    LockingOutcome {
        protocol: MpProtocol::Omlp,
        processors: m,
        schedulable,
        tasks: blocking
            .iter()
            .zip(responses)
            .map(|(&b, response)| TaskBound {
                local_blocking: Nanos::ZERO,
                remote_blocking: Nanos::from_ns(b),
                response,
            })
            .collect(),
        note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp_locking::testing::task;
    use rtlab_model::policy::PriorityAssignment;

    /// Three tasks on two processors share q (µs): a's section 1, b's 2,
    /// c's 3. With 2m − 1 = 3: ba = 3·3 = 9, bb = 3·3 = 9, bc = 3·2 = 6.
    #[test]
    fn each_request_waits_for_2m_minus_1_sections() {
        let mut tasks = vec![
            task("a", 2, 20, 0, &[("q", 0, 1)]),
            task("b", 4, 40, 0, &[("q", 1, 2)]),
            task("c", 5, 50, 0, &[("q", 0, 3)]),
        ];
        for t in &mut tasks {
            t.cpu = None;
        }
        let s = TaskSet::new("omlp", tasks);
        assert_eq!(pi_blocking(&s, 2), [9_000, 9_000, 6_000]);
        let out =
            crate::mp_locking::analyse(&s, MpProtocol::Omlp, PriorityAssignment::RateMonotonic, 2)
                .unwrap();
        assert_eq!(out.schedulable, Some(true));
        let remote: Vec<u64> = out
            .tasks
            .iter()
            .map(|t| t.remote_blocking.as_ns())
            .collect();
        assert_eq!(remote, [9_000, 9_000, 6_000]);
        assert!(out.tasks.iter().all(|t| t.response.wcrt().is_some()));
    }
}
