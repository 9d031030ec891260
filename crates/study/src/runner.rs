//! How a section runs one task set under one scheduler: the
//! [`StudyRunner`] interface, implemented by the simulator and (in the CLI)
//! by the real-thread executor.

use rtlab_model::{Nanos, TaskSet};
use rtlab_sim::Phase;
use serde::Serialize;

/// The schedulers paper 001 compares. FPS uses deadline-monotonic
/// priorities (rate monotonic when deadlines equal periods).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StudyScheduler {
    /// Earliest deadline first (sim `edf`; real threads: SCHED_DEADLINE).
    Edf,
    /// Fixed priorities, deadline monotonic (sim `fp:dm`; real threads:
    /// SCHED_FIFO at DM priorities).
    Fps,
    /// Paper 001's proposal: EDF below 100 % load, FPS above (sim
    /// `hybrid:dm`; no Linux policy does this).
    Hybrid,
}

impl StudyScheduler {
    /// `edf`, `fps` or `hybrid`.
    pub fn name(self) -> &'static str {
        match self {
            StudyScheduler::Edf => "edf",
            StudyScheduler::Fps => "fps",
            StudyScheduler::Hybrid => "hybrid",
        }
    }
}

/// What one run is asked to do besides the set and the scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// Length of the run (releases in `[0, duration)`).
    pub duration: Nanos,
    /// Overload phases (empty: the set as it is, throughout).
    pub phases: Vec<Phase>,
}

/// Per task, what the study counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TaskCounts {
    /// Task name.
    pub name: String,
    /// Jobs released.
    pub released: u64,
    /// Regular completions (RC): jobs that completed by their deadline.
    pub regular_completions: u64,
    /// Deadline misses (DM): late completions, aborts, and jobs unfinished
    /// at the end whose deadline had passed.
    pub deadline_misses: u64,
    /// Preemptions (PR).
    pub preemptions: u64,
}

/// The outcome of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunCounts {
    /// Per task, in declaration order.
    pub tasks: Vec<TaskCounts>,
}

/// Runs task sets for a study section.
pub trait StudyRunner {
    /// Why a run could not be made.
    type Error: std::fmt::Display;
    /// Whether this runner can run `scheduler` with `spec` at all (real
    /// threads have no hybrid, and no overload phases); sections skip, and
    /// say so, what it cannot.
    fn supports(&self, scheduler: StudyScheduler, spec: &RunSpec) -> bool;
    /// Runs `set` under `scheduler`.
    fn run(
        &mut self,
        set: &TaskSet,
        scheduler: StudyScheduler,
        spec: &RunSpec,
    ) -> Result<RunCounts, Self::Error>;
}
