//! The study on real threads: rtlab-rt's [`RealRunner`] set up as the
//! study runs it (pinned to one CPU, a late job runs on, every job record
//! required for the regular completions), with the study's progress lines
//! and the kernel traces of its runs. EDF is SCHED_DEADLINE (runtime C
//! plus the executor's margin, deadline D, period T), FPS is SCHED_FIFO at
//! deadline-monotonic priorities. Linux has no hybrid. Overload phases,
//! transient or permanent, are the executor's phases, read as the
//! simulator reads them (`rtlab_model::phase::PhasePlan`).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

use rtlab_model::policy::RunPolicy;
use rtlab_model::Nanos;
use rtlab_rt::executor::{KernelTrace, RunConfig};
use rtlab_rt::runner::{RealRunError, RealRunner};
use serde::Serialize;

use crate::runner::name;

/// The kernel traces of a study's real runs, in run order, filled while
/// its [`RealRunner`] runs.
#[derive(Clone, Debug, Default)]
pub struct Traced(Rc<RefCell<Vec<KernelTraceOfRun>>>);

impl Traced {
    /// The traced runs so far (empty without a trace).
    pub fn take(&self) -> Vec<KernelTraceOfRun> {
        self.0.take()
    }
}

/// Real threads as the study runs them: pinned to `cpu`, lifting RT
/// throttling and SCHED_DEADLINE admission for each run when
/// `no_rt_throttling`, resting `cooldown` between runs, stopping when
/// `flag` is raised (the interrupt flag), recording the kernel's schedule
/// of each run when `kernel_trace` asks; `progress` is told each run's
/// outcome in one line. The traced runs are read from the returned
/// [`Traced`].
pub fn runner(
    cpu: usize,
    no_rt_throttling: bool,
    cooldown: Nanos,
    flag: &'static AtomicBool,
    progress: fn(&str),
    kernel_trace: Option<KernelTrace>,
) -> (RealRunner<'static>, Traced) {
    let mut config = RunConfig::new(Nanos::ZERO, RunPolicy::Edf);
    config.cpu = Some(cpu);
    config.no_rt_throttling = no_rt_throttling;
    config.kernel_trace = kernel_trace;
    let traced = Traced::default();
    let mut runner = RealRunner::new(config, flag);
    runner.cooldown = cooldown;
    runner.job_counts = true;
    let sink = Rc::clone(&traced.0);
    runner.observer = Some(Box::new(move |set, spec, outcome| {
        let under = name(spec.scheduler);
        let at = set.utilization() * 100.0;
        match outcome {
            Ok(counts) if !counts.interrupted => {
                let misses = counts.deadline_misses();
                progress(&format!(
                    "{} at U {at:.1}% under {under}: {misses} misses of {} jobs",
                    set.name,
                    counts.released()
                ));
                if let Some(k) = &counts.kernel_trace {
                    sink.borrow_mut().push(KernelTraceOfRun {
                        set: set.name.clone(),
                        utilization: set.utilization(),
                        scheduler: under.to_string(),
                        misses,
                        kernel_trace: k.clone(),
                    });
                }
            }
            Err(RealRunError::Rt(e)) if e.is_admission_refusal() => progress(&format!(
                "{} at U {at:.1}% under {under}: refused by SCHED_DEADLINE admission",
                set.name
            )),
            _ => {}
        }
    }));
    (runner, traced)
}

/// One traced real run of a study (`--real --kernel-trace`): which set,
/// under what, and the kernel's account of it (events, losses, misses by
/// cause).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelTraceOfRun {
    /// The set's name.
    pub set: String,
    /// Its total utilization.
    pub utilization: f64,
    /// The scheduler or method it ran under.
    pub scheduler: String,
    /// Its deadline misses on real threads.
    pub misses: u64,
    /// The summary.
    pub kernel_trace: rtlab_model::kernel_trace::KernelTraceSummary,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{RunSpec, Runner, EDF, FPS, HYBRID};
    use std::sync::atomic::AtomicBool;

    static NEVER: AtomicBool = AtomicBool::new(false);

    /// Transient and permanent overloads are both phases the executor runs;
    /// only the hybrid has no Linux counterpart.
    #[test]
    fn real_threads_run_every_profile_but_not_the_hybrid() {
        let (runner, _) = runner(1, true, Nanos::ZERO, &NEVER, |_| {}, None);
        let ms = Nanos::from_ms;
        for profile in crate::overload::Profile::ALL {
            let spec = |scheduler| RunSpec {
                scheduler,
                duration: ms(300),
                phases: crate::overload::profile::phases(
                    profile,
                    1_200_000,
                    (ms(100), ms(200)),
                    ms(300),
                ),
            };
            assert!(runner.supports(&spec(EDF)));
            assert!(runner.supports(&spec(FPS)));
            assert!(!runner.supports(&spec(HYBRID)));
        }
    }
}
