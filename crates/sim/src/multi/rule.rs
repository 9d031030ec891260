//! The trait every global rule implements: how the global engine
//! ([`super::global`]) orders the ready jobs. One module per rule:
//! [`super::gedf`], [`super::gfp`], [`super::edzl`], [`super::linux_dl`],
//! [`super::gllf`]; the registry ([`crate::registry`]) builds them.

use rtlab_model::Nanos;

use super::global::GlobalJob;

/// The key of a job: compared as a tuple, smaller runs first.
pub type Key = (u64, u64, u64, u64);

/// How a global scheduler orders ready jobs. At every scheduling point the
/// m jobs of smallest [`GlobalRule::key`] run.
pub trait GlobalRule {
    /// The job's key; `running` is true for a job on a processor now.
    fn key(&self, job: &GlobalJob, running: bool) -> Key;

    /// True when a job's key never changes while it is ready (EDF, FP): it
    /// is then computed once, when the job becomes ready.
    ///
    /// A static rule's key is `(urgency, task, ..)`: among the ready jobs,
    /// one per task, its order is the first element's, then the task's, and
    /// the global engine's ready set keeps only the first element (one
    /// integer compared instead of a tuple; checked in debug builds).
    fn is_static(&self) -> bool {
        false
    }

    /// Called for every ready job at each scheduling point of a dynamic
    /// rule, before its key is taken (EDZL marks zero laxity here).
    fn update(&self, _job: &mut GlobalJob, _running: bool, _now: Nanos) {}

    /// True when the order can change with no event, at
    /// [`GlobalRule::change_at`] (EDZL).
    fn watches_time(&self) -> bool {
        false
    }

    /// The next instant after `now` at which the job's key changes with no
    /// event, if any.
    fn change_at(&self, _job: &GlobalJob, _running: bool, _now: Nanos) -> Option<Nanos> {
        None
    }
}
