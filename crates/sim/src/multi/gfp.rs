//! Global fixed priority (`gfp:rm|dm|given`; Bertogna & Cirinei 2007).
//!
//! Rule: the m ready jobs of the most urgent tasks run; equal levels
//! (possible only with `given`) go to the task declared first.

use super::global::GlobalJob;
use super::rule::{GlobalRule, Key};

/// Global fixed priority under per-task levels (larger is more urgent).
#[derive(Debug, Clone)]
pub struct Gfp {
    levels: Vec<u64>,
}

impl Gfp {
    /// The rule for these levels, one per task.
    pub fn new(levels: Vec<u64>) -> Gfp {
        Gfp { levels }
    }
}

impl GlobalRule for Gfp {
    fn key(&self, job: &GlobalJob, _running: bool) -> Key {
        (
            u64::MAX - self.levels[job.task],
            job.task as u64,
            job.index,
            0,
        )
    }

    fn is_static(&self) -> bool {
        true
    }
}
