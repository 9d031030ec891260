//! Linux SCHED_DEADLINE on one root domain (`linux-dl`; kernel
//! `kernel/sched/deadline.c`; Abeni & Buttazzo 1998 for its servers).
//!
//! Rule: earliest deadline, but a waiting job preempts only with a strictly
//! earlier deadline (a running job wins ties) and equal waiting jobs go in
//! the order they became ready (the rb-tree inserts equal keys to the
//! right).

use super::global::GlobalJob;
use super::rule::{GlobalRule, Key};

/// Global EDF as SCHED_DEADLINE runs it.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinuxDl;

impl GlobalRule for LinuxDl {
    fn key(&self, job: &GlobalJob, running: bool) -> Key {
        (
            job.deadline.as_ns(),
            u64::from(!running),
            job.ready_seq,
            job.task as u64,
        )
    }
}
