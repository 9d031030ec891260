//! EDZL (`edzl`; Lee 1994; Cho, Ravindran, Jensen 2002): global EDF until
//! zero laxity.
//!
//! Rule: a waiting job whose laxity `d - t - remaining` reaches zero gets
//! top priority and keeps it; otherwise global EDF with its tie rule
//! ([`super::gedf`]). The instant a waiting job's laxity reaches zero is a
//! scheduling point of its own ([`GlobalRule::change_at`]).

use rtlab_model::Nanos;

use super::global::GlobalJob;
use super::rule::{GlobalRule, Key};

/// Earliest deadline until zero laxity.
#[derive(Debug, Clone, Copy, Default)]
pub struct Edzl;

impl GlobalRule for Edzl {
    fn key(&self, job: &GlobalJob, _running: bool) -> Key {
        (
            u64::from(!job.zero_laxity),
            job.deadline.as_ns(),
            job.task as u64,
            job.index,
        )
    }

    fn update(&self, job: &mut GlobalJob, running: bool, now: Nanos) {
        if !running && job.deadline.saturating_sub(job.remaining()) <= now {
            job.zero_laxity = true;
        }
    }

    fn watches_time(&self) -> bool {
        true
    }

    fn change_at(&self, job: &GlobalJob, running: bool, _now: Nanos) -> Option<Nanos> {
        if job.zero_laxity || running {
            return None;
        }
        Some(job.deadline.saturating_sub(job.remaining()))
    }
}
