//! The one interface every experiment drives its runs through: run this
//! set under this scheduler for this long (with these overload phases),
//! simulated or on real threads, and count what happened.
//!
//! The simulator implements it (`rtlab_sim::runner::SimRunner`), so do
//! real threads (`rtlab_rt::runner::RealRunner`), and tests implement it
//! with scripts. The experiments (`rtlab_study`: the Hartstone series, the
//! measured breakdown, the EDF-versus-FPS study, global versus partitioned)
//! are written once against [`Runner`]; the lag study, which runs one
//! thread per cell rather than a task set, drives `rtlab_rt` directly.

use serde::Serialize;

use crate::phase::Phase;
use crate::policy::ModelScheduler;
use crate::results::{JobRecord, TaskMetrics};
use crate::task::TaskSet;
use crate::time::Nanos;

/// What one run is asked to do besides the set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// The scheduler (real threads: its Linux counterpart).
    pub scheduler: ModelScheduler,
    /// Length of the run (releases in `[0, duration)`).
    pub duration: Nanos,
    /// Overload phases ([`crate::phase::PhasePlan`]; empty: the set as it
    /// is, throughout).
    pub phases: Vec<Phase>,
}

/// Per task, what a run counted.
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

impl TaskCounts {
    /// Adds `other`'s counts to these (the name stays).
    pub fn add(&mut self, other: &TaskCounts) {
        self.released += other.released;
        self.regular_completions += other.regular_completions;
        self.deadline_misses += other.deadline_misses;
        self.preemptions += other.preemptions;
    }
}

/// The outcome of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunCounts {
    /// Per task, in declaration order (a phase's added tasks after the
    /// set's own).
    pub tasks: Vec<TaskCounts>,
    /// The absolute deadlines of the missed jobs (every task), sorted, when
    /// the runner records them: what a transient overload's misses in the
    /// burst and recovery are read from.
    #[serde(skip)]
    pub missed_deadlines: Option<Vec<Nanos>>,
    /// The earliest missed deadline: task name and time (ns from the run's
    /// start); the first declared task wins a tie.
    pub first_miss: Option<(String, u64)>,
    /// Context switches over the run.
    pub context_switches: u64,
    /// `context_switches` per second, as the engine computed it.
    pub context_switches_per_s: f64,
    /// How long the run lasted (ns).
    pub duration_ns: u64,
    /// A stop signal cut the run short: the counts are partial and the
    /// experiment stops with what it measured before.
    pub interrupted: bool,
    /// The kernel's account of a real run (`--kernel-trace`: events,
    /// losses, misses by cause); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_trace: Option<crate::kernel_trace::KernelTraceSummary>,
    /// What else ran on a real run's CPUs, and its verdict
    /// ([`crate::disturbance`]); absent for a simulated run (which is how
    /// an experiment knows a miss may need a confirming rerun).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<crate::disturbance::DisturbanceAccount>,
}

impl RunCounts {
    /// An interrupted run that counted nothing.
    pub fn interrupted() -> RunCounts {
        RunCounts {
            interrupted: true,
            ..RunCounts::default()
        }
    }

    /// The sums over tasks (named `total`).
    pub fn totals(&self) -> TaskCounts {
        let mut sum = TaskCounts {
            name: "total".into(),
            ..TaskCounts::default()
        };
        for t in &self.tasks {
            sum.add(t);
        }
        sum
    }

    /// Deadline misses of all tasks.
    pub fn deadline_misses(&self) -> u64 {
        self.tasks.iter().map(|t| t.deadline_misses).sum()
    }

    /// Jobs released, all tasks.
    pub fn released(&self) -> u64 {
        self.tasks.iter().map(|t| t.released).sum()
    }

    /// Preemptions, all tasks.
    pub fn preemptions(&self) -> u64 {
        self.tasks.iter().map(|t| t.preemptions).sum()
    }

    /// Whether job `job` of a run of `duration` counts as a missed deadline
    /// (as the summaries count: it finished after its deadline, or is
    /// unfinished with its deadline reached by the end).
    pub fn is_miss(job: &JobRecord, duration: Nanos) -> bool {
        match job.finish {
            Some(f) => f > job.deadline,
            None => job.deadline <= duration,
        }
    }

    /// Per-task counts from an engine's metrics and the regular completions
    /// counted from its job records (`on_time[i]`: task `i`'s).
    pub fn tasks_of<'a>(
        metrics: impl IntoIterator<Item = &'a TaskMetrics>,
        on_time: &[u64],
    ) -> Vec<TaskCounts> {
        metrics
            .into_iter()
            .enumerate()
            .map(|(i, t)| TaskCounts {
                name: t.name.clone(),
                released: t.released,
                regular_completions: on_time.get(i).copied().unwrap_or(0),
                deadline_misses: t.misses,
                preemptions: t.preemptions,
            })
            .collect()
    }
}

/// The earliest missed deadline over a run's tasks: (task, time in ns);
/// the first declared wins a tie.
pub fn earliest_miss<'a>(
    tasks: impl IntoIterator<Item = &'a TaskMetrics>,
) -> Option<(String, u64)> {
    tasks
        .into_iter()
        .filter_map(|t| Some((t.first_miss_ns?, t.name.as_str())))
        .min_by_key(|&(at, _)| at)
        .map(|(at, name)| (name.to_string(), at))
}

/// Runs a task set once: the simulator, real threads, or a script.
pub trait Runner {
    /// Why a run could not be made (not a deadline miss: a refused set, a
    /// lost thread, an invalid set).
    type Error: std::fmt::Display;

    /// Runs `set` as `spec` says and counts what happened.
    fn run(&mut self, set: &TaskSet, spec: &RunSpec) -> Result<RunCounts, Self::Error>;

    /// Whether this runner can run `spec` at all (real threads have no
    /// hybrid); experiments skip, and say so, what it cannot. Default: all.
    fn supports(&self, spec: &RunSpec) -> bool {
        let _ = spec;
        true
    }

    /// When `error` means the platform refuses this set (e.g.
    /// SCHED_DEADLINE admission), why: a series ends there, as it would at
    /// a miss, instead of failing. `None` (the default): a real error.
    fn refusal(&self, error: &Self::Error) -> Option<String> {
        let _ = error;
        None
    }
}
