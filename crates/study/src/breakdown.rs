//! Paper 004's validation experiment (§5) at one time scale, driven
//! through [`Runner`]s: the analytic predictions
//! ([`rtlab_analysis::breakdown_experiment::predictions`]), then the
//! breakdown search ([`rtlab_analysis::measured_breakdown::search`]) with
//! the simulator, then with real threads (`rtlab breakdown`). Each step of
//! a search runs the set with every C scaled by α
//! ([`rtlab_analysis::breakdown::scale_wcets`]) once; a set the platform
//! refuses ([`Runner::refusal`], e.g. SCHED_DEADLINE admission) is a
//! refused, failing step.

use rtlab_analysis::breakdown::{scale_wcets, ONE_PPB};
use rtlab_analysis::breakdown_experiment::{
    predictions, ExperimentConfig, Predicted, PredictionError, ScaleResult, SIM_RESOLUTION_DIVISOR,
};
use rtlab_analysis::measured_breakdown::{search, SearchConfig, Step, StepOutcome};
use std::sync::atomic::{AtomicBool, Ordering};

use rtlab_analysis::breakdown_experiment::BreakdownDocument;
use rtlab_model::overheads::Overheads;
use rtlab_model::policy::ModelScheduler;
use rtlab_model::runner::{RunSpec, Runner};

use crate::confirm::{run_confirmed, Confirmed};
use rtlab_model::{Nanos, TaskSet};
use rtlab_rt::executor::RunConfig;
use rtlab_rt::runner::{RealRunError, RealRunner};
use rtlab_sim::runner::SimRunner;
use rtlab_sim::SimError;

/// One run of `set` scaled by `alpha_ppb` as a step's outcome: its misses
/// and jobs, or the platform's refusal. A real step that misses is run once
/// more before it counts ([`crate::confirm`]).
pub fn step<R: Runner>(
    runner: &mut R,
    set: &TaskSet,
    spec: &RunSpec,
    alpha_ppb: u64,
) -> Result<StepOutcome, R::Error> {
    match run_confirmed(runner, &scale_wcets(set, alpha_ppb), spec, true) {
        Ok(Confirmed { counts, rerun }) => Ok(StepOutcome {
            misses: counts.deadline_misses(),
            jobs: counts.released(),
            interrupted: counts.interrupted,
            refused: None,
            kernel_trace: counts.kernel_trace,
            rerun,
        }),
        Err(e) => match runner.refusal(&e) {
            Some(why) => Ok(StepOutcome {
                refused: Some(why),
                ..StepOutcome::default()
            }),
            None => Err(e),
        },
    }
}

/// A scale's result and the error that stopped its measurement, if any.
pub type ScaleOutcome<E> = (ScaleResult, Option<E>);

/// The experiment on `set` (already time-scaled by `time_scale_ppb`):
/// predictions, then the simulated search through `simulate`, then the
/// measured one through `measure` (each runs the α-scaled set once for
/// `duration` under `scheduler`). `observe` sees every measured step as it
/// is made.
#[allow(clippy::too_many_arguments)]
pub fn run_scale<S, M, E>(
    set: &TaskSet,
    time_scale_ppb: u64,
    duration: Nanos,
    cfg: &ExperimentConfig,
    scheduler: ModelScheduler,
    simulate: &mut S,
    measure: &mut M,
    observe: impl FnMut(&Step),
) -> ScaleOutcome<E>
where
    S: Runner,
    M: Runner,
    S::Error: Into<E>,
    M::Error: Into<E>,
{
    let spec = RunSpec {
        scheduler,
        duration,
        phases: Vec::new(),
    };
    let utilization = |alpha_ppb| scale_wcets(set, alpha_ppb).utilization();
    let (ideal, overhead_aware) = predictions(set, cfg);
    let res = cfg.resolution_ppb.max(1);
    let ppb = |p: Option<Predicted>| p.map(|p| (p.alpha * ONE_PPB as f64).round() as u64);
    let u = set.utilization();
    let top = if u > 0.0 {
        ((ONE_PPB as f64 / u).ceil() as u64).saturating_add(res)
    } else {
        4 * ONE_PPB
    };
    let hi = ppb(ideal).map_or(ONE_PPB, |a| a.saturating_add(res));
    let search_cfg = |lo: u64, repeat: u32, resolution_ppb: u64| SearchConfig {
        bracket: (lo, hi),
        resolution_ppb,
        repeat,
        rule: cfg.pass_rule,
        min_alpha_ppb: res,
        max_alpha_ppb: top.max(hi),
    };
    let lo = ppb(overhead_aware).or(ppb(ideal)).unwrap_or(ONE_PPB / 2);
    let sim_cfg = search_cfg(
        lo.saturating_sub(res),
        1,
        (res / SIM_RESOLUTION_DIVISOR).max(1),
    );
    let sim = search(
        &sim_cfg,
        utilization,
        |a| step(simulate, set, &spec, a),
        |_| {},
    );
    let lo = lo.min(sim.result.alpha_ppb.unwrap_or(u64::MAX));
    let measured = search(
        &search_cfg(lo.saturating_sub(res), cfg.repeat, res),
        utilization,
        |a| step(measure, set, &spec, a),
        observe,
    );
    let error = sim.error.map(Into::into).or(measured.error.map(Into::into));
    let (simulated, measured) = (sim.result, measured.result);
    let pp = |p: Option<f64>| measured.utilization.zip(p).map(|(m, p)| 100.0 * (m - p));
    let prediction_error = PredictionError {
        ideal_pp: pp(ideal.map(|p| p.utilization)),
        overhead_aware_pp: pp(overhead_aware.map(|p| p.utilization)),
        simulated_pp: pp(simulated.utilization),
    };
    let first_failing_u = measured
        .failing_alpha
        .map(|a| scale_wcets(set, (a * ONE_PPB as f64).round() as u64))
        .map(|s| s.utilization());
    let throttling_may_cap = cfg
        .utilization_limit
        .zip(first_failing_u.or(measured.utilization))
        .is_some_and(|(limit, u)| u + 0.05 >= limit);
    let result = ScaleResult {
        time_scale: time_scale_ppb as f64 / ONE_PPB as f64,
        time_scale_ppb,
        utilization: u,
        duration_per_step_ns: duration.as_ns(),
        ideal,
        overhead_aware,
        simulated,
        measured,
        prediction_error,
        throttling_may_cap,
    };
    (result, error)
}

/// How the real runs of a breakdown are made: the executor's
/// configuration (CPU, RT throttling, kernel trace; each run sets its
/// duration and policy), the rest between two runs of a time scale, and
/// the stop flag.
pub struct RealSetup<'a> {
    /// The executor's configuration.
    pub config: RunConfig,
    /// Rest between two runs of one time scale (none before its first).
    pub cooldown: Nanos,
    /// Set by a stop signal.
    pub interrupt: &'a AtomicBool,
}

/// The experiment at every time scale in order (`scaled`: the time scale
/// in ppb, the time-scaled set, its run length), into `doc.scales`: the
/// simulator with `overheads`, real threads as `real` says. A stop signal
/// or a failed run ends it (`doc.interrupted`, the last scale partial);
/// the error of a failed run is returned. `observe(time scale, step)` sees
/// every measured step.
#[allow(clippy::too_many_arguments)]
pub fn run_scales<E>(
    doc: &mut BreakdownDocument,
    scaled: &[(u64, TaskSet, Nanos)],
    cfg: &ExperimentConfig,
    scheduler: ModelScheduler,
    overheads: &Overheads,
    real: &RealSetup<'_>,
    mut observe: impl FnMut(f64, &Step),
) -> Option<E>
where
    SimError: Into<E>,
    RealRunError: Into<E>,
{
    let mut failure = None;
    for (x, set, duration) in scaled {
        if real.interrupt.load(Ordering::Relaxed) {
            doc.interrupted = true;
            break;
        }
        // No --tick: the simulator takes the timer model from the file.
        let mut simulate = SimRunner::new();
        simulate.overheads = Some(overheads.clone());
        let mut config = real.config.clone();
        config.duration = *duration;
        let mut measure = RealRunner::new(config, real.interrupt);
        measure.cooldown = real.cooldown;
        let scale = *x as f64 / ONE_PPB as f64;
        let (result, error) = run_scale(
            set,
            *x,
            *duration,
            cfg,
            scheduler,
            &mut simulate,
            &mut measure,
            |step: &Step| observe(scale, step),
        );
        let stopped = result.measured.interrupted;
        doc.scales.push(result);
        if let Some(e) = error {
            failure = Some(e);
        }
        if stopped {
            doc.interrupted = true;
            break;
        }
    }
    failure
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_analysis::measured_breakdown::{PassRule, Phase};
    use rtlab_analysis::suite::{self, Options};
    use rtlab_model::policy::AnalysedPolicy;
    use rtlab_model::runner::{RunCounts, TaskCounts};

    /// Passes exactly the sets the exact test accepts.
    struct Exact(AnalysedPolicy);

    impl Runner for Exact {
        type Error = String;
        fn run(&mut self, set: &TaskSet, _: &RunSpec) -> Result<RunCounts, String> {
            let ok = suite::exact_verdict(set, self.0, &Options::default(), None) == Some(true);
            Ok(RunCounts {
                tasks: vec![TaskCounts {
                    released: 10,
                    deadline_misses: u64::from(!ok),
                    ..TaskCounts::default()
                }],
                ..RunCounts::default()
            })
        }
    }

    #[test]
    fn a_runner_at_the_ideal_breakdown_has_no_error_against_it() {
        // Avionics under RM with no costs: a runner that passes exactly the
        // sets RTA accepts measures the ideal breakdown (92.23 %, paper 004)
        // to the resolution, and the overhead-aware prediction with zero
        // costs is the ideal one.
        let set = rtlab_model::catalog::build("avionics").unwrap();
        let cfg = ExperimentConfig {
            policy: AnalysedPolicy::Fixed(rtlab_model::policy::PriorityAssignment::RateMonotonic),
            overheads: Overheads::zero(),
            resolution_ppb: 1_000_000,
            repeat: 2,
            pass_rule: PassRule::All,
            utilization_limit: Some(0.95),
        };
        let mut seen = 0;
        let (r, e): (_, Option<String>) = run_scale(
            &set,
            ONE_PPB,
            Nanos::from_secs(1),
            &cfg,
            ModelScheduler::from(cfg.policy),
            &mut Exact(cfg.policy),
            &mut Exact(cfg.policy),
            |_| seen += 1,
        );
        assert!(e.is_none());
        let ideal = r.ideal.unwrap();
        assert!((ideal.utilization - 0.9223).abs() < 5e-5, "{ideal:?}");
        assert_eq!(r.overhead_aware, Some(ideal));
        let m = r.measured.utilization.unwrap();
        assert!(
            m <= ideal.utilization && ideal.utilization - m < 0.001 * 1.2,
            "{m}"
        );
        // The simulated search is ten times finer, at or above the measured one.
        let (sim, measured) = (r.simulated.alpha.unwrap(), r.measured.alpha.unwrap());
        assert!(
            sim >= measured && sim - measured <= 0.001 + 1e-12,
            "{sim} {measured}"
        );
        assert_eq!(seen, r.measured.steps.len());
        let err = r.prediction_error.ideal_pp.unwrap();
        assert!((-0.12..=0.0).contains(&err), "{err}");
        assert!(r.prediction_error.simulated_pp.unwrap() <= 0.0);
        // The first failure, near U = 0.923, is within 0.05 of 0.95.
        assert!(r.throttling_may_cap);
        assert!(r.measured.steps.iter().all(|s| s.phase != Phase::Widen));
    }
}
