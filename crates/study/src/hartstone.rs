//! The Hartstone benchmark as paper 002 (chapter 4) runs it: the PH series
//! (grow a pool one iteration at a time until the first deadline miss) and
//! the extended Hartstone (48 %, 120 %, 48 %), driven through a
//! [`Runner`] so the same series runs in the simulator, on real threads or
//! as a script; the schedulers' runs side by side, ranked, into one
//! [`HartstoneDocument`]. The pools, profiles and rankings are
//! [`rtlab_model::hartstone`]'s.

use rtlab_model::hartstone::document::{ExtendedRun, HartstoneDocument, Ranking, SeriesRun};
use rtlab_model::hartstone::{
    self, pool, EndReason, EndingMiss, ExtendedProfile, ExtendedResult, HartstoneTest,
    IterationRecord, IterationResult, TestConfig, TestOutcome,
};
use rtlab_model::policy::ModelScheduler;
use rtlab_model::policy::RunPolicy;
use rtlab_model::runner::{RunCounts, RunSpec, Runner};

use crate::confirm::run_confirmed;
use rtlab_model::Nanos;
use rtlab_rt::runner::{RealRunError, RealRunner};
use rtlab_sim::runner::SimRunner;
use rtlab_sim::{MissRule, SchedulerSpec, SimError};

/// A run's counts as one Hartstone iteration: misses, the earliest missed
/// deadline, context switches, preemptions and jobs over every task.
pub fn iteration_result(counts: RunCounts) -> IterationResult {
    IterationResult {
        misses: counts.deadline_misses(),
        preemptions: counts.preemptions(),
        jobs: counts.released(),
        first_miss: counts.first_miss,
        context_switches: counts.context_switches,
        duration_ns: counts.duration_ns,
        kernel_trace: counts.kernel_trace,
        verdict: counts.disturbance.map(|d| d.verdict.summary),
        rerun: None,
    }
}

/// Runs `config.test` under `scheduler` from the baseline, one pool per
/// iteration for `config.window`, and stops at the first iteration with a
/// deadline miss (Hartstone's rule), after `config.max_iterations`
/// iterations, when the next pool is not a valid task set, or when the
/// runner refuses it ([`Runner::refusal`]). A real iteration that misses
/// is run once more first when `config.confirm` is on
/// ([`crate::confirm`]): the series ends only when the rerun misses too. `progress` sees every
/// iteration as it ends. A runner error ends the series with that error;
/// a stop signal ends it with `None`.
pub fn run_test<R: Runner>(
    runner: &mut R,
    scheduler: ModelScheduler,
    config: &TestConfig,
    progress: &mut dyn FnMut(&IterationRecord),
) -> Result<Option<TestOutcome>, R::Error> {
    let mut outcome = TestOutcome {
        test: config.test,
        iterations_completed: 0,
        utilization_reached: None,
        context_switches_per_s: 0.0,
        preemptions: 0,
        ending_miss: None,
        end: EndReason::Cap,
        iterations: Vec::new(),
    };
    let spec = RunSpec {
        scheduler,
        duration: config.window,
        phases: Vec::new(),
    };
    let (mut switches, mut ns) = (0u64, 0u64);
    for k in 0..config.max_iterations {
        let set = match pool(config.test, k, config.kilo_whet) {
            Ok(set) => set,
            Err(e) => {
                outcome.end = EndReason::InvalidPool(e.to_string());
                break;
            }
        };
        let result = match run_confirmed(runner, &set, &spec, config.confirm) {
            Ok(c) if c.counts.interrupted => return Ok(None),
            Ok(c) => IterationResult {
                rerun: c.rerun,
                ..iteration_result(c.counts)
            },
            Err(e) => match runner.refusal(&e) {
                Some(why) => {
                    outcome.end = EndReason::Refused(format!("iteration {k}: {why}"));
                    break;
                }
                None => return Err(e),
            },
        };
        switches = switches.saturating_add(result.context_switches);
        ns = ns.saturating_add(result.duration_ns);
        outcome.preemptions = outcome.preemptions.saturating_add(result.preemptions);
        let record = IterationRecord {
            iteration: k,
            utilization: set.utilization(),
            tasks: set.tasks.len(),
            result,
        };
        progress(&record);
        let missed = record.result.misses > 0;
        if missed {
            outcome.end = EndReason::Miss;
            outcome.ending_miss = Some(match &record.result.first_miss {
                Some((task, at_ns)) => EndingMiss {
                    iteration: k,
                    task: task.clone(),
                    at_ns: *at_ns,
                },
                None => EndingMiss {
                    iteration: k,
                    task: String::new(),
                    at_ns: 0,
                },
            });
        } else {
            outcome.iterations_completed += 1;
            outcome.utilization_reached = Some(record.utilization);
        }
        outcome.iterations.push(record);
        if missed {
            break;
        }
    }
    if ns > 0 {
        outcome.context_switches_per_s = switches as f64 * 1e9 / ns as f64;
    }
    Ok(Some(outcome))
}

/// The extended Hartstone of `profile` under `scheduler` as one run of
/// `length` (paper 002: 120 s) whose overload is a phase
/// ([`ExtendedProfile::run_setup`]: the simulator and the executor read it
/// alike). `None` when a stop signal cut it short.
pub fn run_extended<R: Runner>(
    runner: &mut R,
    scheduler: ModelScheduler,
    profile: &ExtendedProfile,
    length: Nanos,
) -> Result<Option<ExtendedResult>, R::Error> {
    let (set, phases) = profile.run_setup(length);
    let spec = RunSpec {
        scheduler,
        duration: length,
        phases,
    };
    let counts = runner.run(&set, &spec)?;
    if counts.interrupted {
        return Ok(None);
    }
    Ok(Some(ExtendedResult {
        test: profile.test,
        normal: profile.normal.setting.clone(),
        overload: profile.overload.setting.clone(),
        misses: counts.deadline_misses(),
        context_switches: counts.context_switches,
        context_switches_per_s: counts.context_switches_per_s,
        preemptions: counts.preemptions(),
        jobs: counts.released(),
        kernel_trace: counts.kernel_trace,
    }))
}

/// Every test's PH series under one scheduler (`label` in the document):
/// `None` when a stop signal cut a series short (the tests finished before
/// it are in `done`).
pub fn series<R: Runner>(
    runner: &mut R,
    scheduler: ModelScheduler,
    configs: &[TestConfig],
    done: &mut Vec<TestOutcome>,
    progress: &mut dyn FnMut(HartstoneTest, &IterationRecord),
) -> Result<bool, R::Error> {
    for config in configs {
        match run_test(runner, scheduler, config, &mut |r| progress(config.test, r))? {
            Some(outcome) => done.push(outcome),
            None => return Ok(false),
        }
    }
    Ok(true)
}

/// Every test's extended run under one scheduler, into `done`; `false`
/// when a stop signal cut one short.
pub fn extended_series<R: Runner>(
    runner: &mut R,
    scheduler: ModelScheduler,
    profiles: &[ExtendedProfile],
    length: Nanos,
    done: &mut Vec<ExtendedResult>,
    progress: &mut dyn FnMut(&ExtendedResult),
) -> Result<bool, R::Error> {
    for profile in profiles {
        match run_extended(runner, scheduler, profile, length)? {
            Some(result) => {
                progress(&result);
                done.push(result);
            }
            None => return Ok(false),
        }
    }
    Ok(true)
}

/// One simulator scheduler's PH series over `configs` (`name` as given
/// on the command line), as the document's run.
pub fn simulated_series(
    name: &str,
    scheduler: &SchedulerSpec,
    on_miss: MissRule,
    configs: &[TestConfig],
) -> Result<SeriesRun, SimError> {
    let mut runner = SimRunner::pinned(scheduler.clone(), on_miss);
    let mut tests = Vec::new();
    // The simulator is never interrupted: every series ends.
    series(
        &mut runner,
        ModelScheduler::Edf,
        configs,
        &mut tests,
        &mut |_, _| {},
    )?;
    Ok(SeriesRun {
        world: "sim",
        scheduler: name.to_string(),
        label: format!("sim {name}"),
        tests,
    })
}

/// One simulator scheduler's extended Hartstone over `profiles`.
pub fn simulated_extended(
    name: &str,
    scheduler: &SchedulerSpec,
    on_miss: MissRule,
    profiles: &[ExtendedProfile],
    length: Nanos,
) -> Result<ExtendedRun, SimError> {
    let mut runner = SimRunner::pinned(scheduler.clone(), on_miss);
    let mut results = Vec::new();
    extended_series(
        &mut runner,
        ModelScheduler::Edf,
        profiles,
        length,
        &mut results,
        &mut |_| {},
    )?;
    Ok(ExtendedRun {
        world: "sim",
        scheduler: name.to_string(),
        label: format!("sim {name}"),
        results,
    })
}

/// Adds the simulated counterpart `model` of a real policy's runs, unless
/// the document has it already (from `--scheduler`): PH series over
/// `configs`, or with `profiles` the extended Hartstone of `length`.
pub fn add_counterpart(
    doc: &mut HartstoneDocument,
    model: ModelScheduler,
    on_miss: MissRule,
    configs: &[TestConfig],
    profiles: Option<(&[ExtendedProfile], Nanos)>,
) -> Result<(), SimError> {
    let name = model.to_string();
    let spec = SchedulerSpec::from(model);
    match profiles {
        Some((profiles, length)) => {
            if !doc
                .extended_runs
                .iter()
                .any(|r| r.world == "sim" && r.scheduler == name)
            {
                let run = simulated_extended(&name, &spec, on_miss, profiles, length)?;
                doc.extended_runs.push(run);
            }
        }
        None => {
            if !doc
                .runs
                .iter()
                .any(|r| r.world == "sim" && r.scheduler == name)
            {
                doc.runs
                    .push(simulated_series(&name, &spec, on_miss, configs)?);
            }
        }
    }
    Ok(())
}

/// Why a series of real runs stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RealSeriesError {
    /// A real run under this policy failed.
    #[error("{1}")]
    Run(RunPolicy, RealRunError),
    /// The simulated counterpart failed.
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// The PH series on real threads, one policy after the other (each pinned
/// on `runner`), each followed by its simulated counterpart unless the
/// document has it (`timeslice`: the kernel's SCHED_RR quantum, which the
/// counterpart of `rr` uses). `progress` sees every iteration. Returns
/// true when a stop signal cut it short (the tests finished until then
/// are in the document).
pub fn real_series(
    doc: &mut HartstoneDocument,
    runner: &mut RealRunner<'_>,
    policies: &[RunPolicy],
    configs: &[TestConfig],
    sim_on_miss: MissRule,
    timeslice: Nanos,
    progress: &mut dyn FnMut(RunPolicy, HartstoneTest, &IterationRecord),
) -> Result<bool, RealSeriesError> {
    for &policy in policies {
        runner.policy = Some(policy);
        let model = policy.model_scheduler(timeslice);
        let mut outcomes = Vec::new();
        // The pinned policy runs whatever the spec's scheduler (SCHED_OTHER has none).
        let scheduler = model.unwrap_or(ModelScheduler::Edf);
        let finished = series(runner, scheduler, configs, &mut outcomes, &mut |test, r| {
            progress(policy, test, r)
        })
        .map_err(|e| RealSeriesError::Run(policy, e))?;
        doc.runs.push(SeriesRun {
            world: "real",
            scheduler: policy.name().to_string(),
            label: format!("real {policy}"),
            tests: outcomes,
        });
        if let Some(model) = model {
            add_counterpart(doc, model, sim_on_miss, configs, None)?;
        }
        if !finished {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The extended Hartstone on real threads, one policy after the other,
/// each beside its simulated counterpart (the same phase, the same
/// length), as [`real_series`] does the PH series.
#[allow(clippy::too_many_arguments)]
pub fn real_extended(
    doc: &mut HartstoneDocument,
    runner: &mut RealRunner<'_>,
    policies: &[RunPolicy],
    profiles: &[ExtendedProfile],
    length: Nanos,
    sim_on_miss: MissRule,
    timeslice: Nanos,
    progress: &mut dyn FnMut(RunPolicy, &ExtendedResult),
) -> Result<bool, RealSeriesError> {
    for &policy in policies {
        runner.policy = Some(policy);
        let model = policy.model_scheduler(timeslice);
        let mut results = Vec::new();
        let scheduler = model.unwrap_or(ModelScheduler::Edf);
        let finished = extended_series(
            runner,
            scheduler,
            profiles,
            length,
            &mut results,
            &mut |r| progress(policy, r),
        )
        .map_err(|e| RealSeriesError::Run(policy, e))?;
        doc.extended_runs.push(ExtendedRun {
            world: "real",
            scheduler: policy.name().to_string(),
            label: format!("real {policy}"),
            results,
        });
        if let Some(model) = model {
            add_counterpart(doc, model, sim_on_miss, &[], Some((profiles, length)))?;
        }
        if !finished {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Per test and world, the labels best first ([`hartstone::rank`],
/// [`hartstone::rank_extended`]).
pub fn rankings(doc: &HartstoneDocument, tests: &[HartstoneTest]) -> Vec<Ranking> {
    let mut out = Vec::new();
    for &test in tests {
        for world in ["sim", "real"] {
            let order: Vec<String> = if doc.extended {
                let runs: Vec<(&ExtendedRun, &ExtendedResult)> = doc
                    .extended_runs
                    .iter()
                    .filter(|r| r.world == world)
                    .filter_map(|r| Some((r, r.results.iter().find(|e| e.test == test)?)))
                    .collect();
                let results: Vec<&ExtendedResult> = runs.iter().map(|r| r.1).collect();
                hartstone::rank_extended(&results)
                    .into_iter()
                    .map(|i| runs[i].0.label.clone())
                    .collect()
            } else {
                let runs: Vec<(&SeriesRun, &TestOutcome)> = doc
                    .runs
                    .iter()
                    .filter(|r| r.world == world)
                    .filter_map(|r| Some((r, r.tests.iter().find(|o| o.test == test)?)))
                    .collect();
                let outcomes: Vec<&TestOutcome> = runs.iter().map(|r| r.1).collect();
                hartstone::rank(&outcomes)
                    .into_iter()
                    .map(|i| runs[i].0.label.clone())
                    .collect()
            };
            if !order.is_empty() {
                out.push(Ranking { test, world, order });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
