//! Global least laxity first (`gllf`; Mok 1983; Dertouzos & Mok 1989).
//!
//! Rule: at every scheduling point (a release, a completion, an abort) the
//! m ready jobs of least laxity `d - t - remaining` run. At one instant all
//! jobs share `t`, so the engine compares `d - remaining`, the latest
//! instant a job can start its remaining work and still meet its deadline.
//! A running job keeps its processor on a tie, then the task declared first
//! wins. Laxities are compared at scheduling points only, as the registry's
//! uniprocessor `llf` does: between two events a waiting job's laxity falls
//! while a running job's stays, and the order is not revisited until the
//! next event (re-deciding at every laxity crossing makes two jobs of equal
//! laxity swap processors every nanosecond).

use super::global::GlobalJob;
use super::rule::{GlobalRule, Key};

/// Global least laxity first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gllf;

impl GlobalRule for Gllf {
    fn key(&self, job: &GlobalJob, running: bool) -> Key {
        (
            job.deadline.saturating_sub(job.remaining()).as_ns(),
            u64::from(!running),
            job.task as u64,
            job.index,
        )
    }
}
