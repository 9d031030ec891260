//! Global EDF (`gedf`; Baker 2003; Goossens, Funk, Baruah 2003).
//!
//! Rule: the m ready jobs of earliest absolute deadline run. Equal
//! deadlines go to the task declared first, even against a running job
//! (LITMUS^RT's `edf_higher_prio`, by task id). SimSo 0.8.5's `EDF` also
//! picks the first task among waiting jobs but keeps a running job on a
//! tie (as [`super::linux_dl`]). Clustered EDF runs this rule inside each
//! cluster.

use super::global::GlobalJob;
use super::rule::{GlobalRule, Key};

/// Global EDF with LITMUS^RT's tie rule.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gedf;

impl GlobalRule for Gedf {
    fn key(&self, job: &GlobalJob, _running: bool) -> Key {
        (job.deadline.as_ns(), job.task as u64, job.index, 0)
    }

    fn is_static(&self) -> bool {
        true
    }
}
