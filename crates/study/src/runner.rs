//! The study's schedulers, and the runners its sections drive: any
//! [`rtlab_model::runner::Runner`] (the simulator's
//! [`rtlab_sim::runner::SimRunner`], real threads' [`crate::real`], a
//! script in tests).

use rtlab_model::policy::{ModelScheduler, PriorityAssignment};
use serde::Serializer;

pub use rtlab_model::runner::{RunCounts, RunSpec, Runner, TaskCounts};

/// Earliest deadline first (sim `edf`; real threads: SCHED_DEADLINE).
pub const EDF: ModelScheduler = ModelScheduler::Edf;
/// Fixed priorities, deadline monotonic, paper 001's FPS (sim `fp:dm`;
/// real threads: SCHED_FIFO at DM priorities; rate monotonic when
/// deadlines equal periods).
pub const FPS: ModelScheduler =
    ModelScheduler::FixedPriority(PriorityAssignment::DeadlineMonotonic);
/// Paper 001's proposal: EDF below 100 % load, FPS above (sim `hybrid:dm`;
/// no Linux policy does this).
pub const HYBRID: ModelScheduler = ModelScheduler::Hybrid(PriorityAssignment::DeadlineMonotonic);

/// The study's name of a scheduler, as its documents and text print it:
/// `edf`, `fps` or `hybrid` (paper 001's names; the study runs no other,
/// which would print as `other`).
pub fn name(scheduler: ModelScheduler) -> &'static str {
    match scheduler {
        ModelScheduler::Edf => "edf",
        ModelScheduler::FixedPriority(_) => "fps",
        ModelScheduler::Hybrid(_) => "hybrid",
        _ => "other",
    }
}

/// Serialises a scheduler as its study [`name`].
pub fn serialize_name<S: Serializer>(scheduler: &ModelScheduler, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(name(*scheduler))
}

/// A run of `duration` under `scheduler`, without phases.
pub fn plain(scheduler: ModelScheduler, duration: rtlab_model::Nanos) -> RunSpec {
    RunSpec {
        scheduler,
        duration,
        phases: Vec::new(),
    }
}

/// A run's counts, or why there are none: the runner's error, or
/// `interrupted` when a stop signal cut the run short.
pub fn counted<E: std::fmt::Display>(run: Result<RunCounts, E>) -> Result<RunCounts, String> {
    match run {
        Ok(counts) if counts.interrupted => Err("interrupted".into()),
        Ok(counts) => Ok(counts),
        Err(e) => Err(e.to_string()),
    }
}
