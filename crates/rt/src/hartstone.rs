//! The Hartstone benchmark on real threads (paper 002 chapter 4): an
//! [`IterationRunner`] that runs one pool with the executor for a window.
//!
//! Each task's work is its kilo-whets × the kilo-whet's duration of thread
//! CPU time ([`crate::work::burn_cpu`]), as paper 002 replaced the
//! Whetstone kernel by a 1.25 ms busy wait; [`crate::work::FixedWork`]
//! measures what a kilo-whet of real Whetstone computation lasts here.
//! Context switches are the executor's: voluntary plus involuntary switches
//! of the task threads over the run (`getrusage(RUSAGE_THREAD)`), and
//! preemptions the involuntary ones during jobs.

use std::sync::atomic::AtomicBool;

use rtlab_model::hartstone::{ExtendedProfile, ExtendedResult, IterationResult, IterationRunner};
use rtlab_model::{Nanos, TaskSet};

use crate::error::RtError;
use crate::executor::{self, RunConfig, RunReport};
use rtlab_host::HostError;

/// Why a real iteration gave no result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RealIterationError {
    /// The executor refused or failed.
    #[error(transparent)]
    Rt(#[from] RtError),
    /// Ctrl-C (or SIGTERM) ended the iteration early.
    #[error("interrupted")]
    Interrupted,
    /// Task threads did not report back: their jobs are missing.
    #[error("the threads of {0} did not report back in time")]
    LostThreads(String),
}

/// Runs each Hartstone iteration on real threads.
pub struct RealIterations<'a> {
    /// Policy, CPU, overrun rule, ...; `duration` is set per iteration.
    pub config: RunConfig,
    /// Set by Ctrl-C: ends the current iteration and the series.
    pub interrupt: &'a AtomicBool,
}

impl IterationRunner for RealIterations<'_> {
    type Error = RealIterationError;

    fn run(&mut self, set: &TaskSet, window: Nanos) -> Result<IterationResult, RealIterationError> {
        let mut config = self.config.clone();
        config.duration = window;
        let report = executor::run(set, &config, self.interrupt)?;
        if report.interrupted {
            return Err(RealIterationError::Interrupted);
        }
        if !report.lost_tasks.is_empty() {
            return Err(RealIterationError::LostThreads(
                report.lost_tasks.join(", "),
            ));
        }
        Ok(iteration_result(&report))
    }

    /// A pool the platform refuses ends the series, as a miss would:
    /// SCHED_DEADLINE admission above its limit (0.90 of a CPU here: 0.95
    /// minus the fair server's 0.05; rtlab keeps RT throttling and admission
    /// on), or a parameter refused before the run (e.g. more distinct
    /// rate-monotonic priorities than SCHED_FIFO has).
    fn refusal(&self, error: &RealIterationError) -> Option<String> {
        match error {
            RealIterationError::Rt(e) if e.is_admission_refusal() => {
                Some(format!("SCHED_DEADLINE refused the pool: {e}"))
            }
            RealIterationError::Rt(
                e @ (RtError::Invalid { .. } | RtError::Host(HostError::Invalid { .. })),
            ) => Some(format!("the pool was refused: {e}")),
            _ => None,
        }
    }
}

/// The extended Hartstone of `profile` on real threads for `length`: the
/// 48 % pool's threads and the 120 % pool's extra ones all made before the
/// first release, the overload a phase of the executor
/// ([`ExtendedProfile::run_setup`], the phase the simulator runs). `config`
/// gives the policy, CPU and overrun rule; its duration and phases are set
/// here. The 120 % needs more of the CPU than RT throttling (0.95 for
/// SCHED_FIFO/RR) or SCHED_DEADLINE admission (0.90) leave, so callers that
/// want the scheduler's own behaviour set `no_rt_throttling`.
pub fn run_extended(
    profile: &ExtendedProfile,
    config: &RunConfig,
    length: Nanos,
    interrupt: &AtomicBool,
) -> Result<ExtendedResult, RealIterationError> {
    let (set, phases) = profile.run_setup(length);
    let mut config = config.clone();
    config.duration = length;
    config.phases = phases;
    let report = executor::run(&set, &config, interrupt)?;
    if report.interrupted {
        return Err(RealIterationError::Interrupted);
    }
    if !report.lost_tasks.is_empty() {
        return Err(RealIterationError::LostThreads(
            report.lost_tasks.join(", "),
        ));
    }
    Ok(ExtendedResult {
        test: profile.test,
        normal: profile.normal.setting.clone(),
        overload: profile.overload.setting.clone(),
        misses: report.deadline_misses,
        context_switches: report.context_switches,
        context_switches_per_s: report.context_switches_per_s,
        preemptions: report.preemptions,
        jobs: report.released,
        kernel_trace: report.kernel_trace,
    })
}

/// A run's report as one Hartstone iteration: the first miss is the task
/// with the earliest missed deadline.
pub fn iteration_result(report: &RunReport) -> IterationResult {
    IterationResult {
        kernel_trace: report.kernel_trace.clone(),
        ..IterationResult::of_run(
            report.tasks.iter().map(|t| &t.metrics),
            &report.totals,
            report.context_switches,
            report.ended_ns,
        )
    }
}
