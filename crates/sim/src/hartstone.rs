//! The Hartstone benchmark in the simulator (paper 002 chapter 4): an
//! [`IterationRunner`] that simulates one pool for a window, and the
//! extended Hartstone as one 120 s run whose overload is a phase that
//! replaces the 48 % pool's changed tasks with the 120 % pool's.

use rtlab_model::hartstone::{ExtendedProfile, ExtendedResult, IterationResult, IterationRunner};
use rtlab_model::{Nanos, TaskSet};

use crate::config::{OnMiss, SimConfig};
use crate::engine::simulate;
use crate::error::SimError;
use crate::metrics::SimReport;
use crate::scheduler::SchedulerSpec;

/// Runs each Hartstone iteration in the simulator under one scheduler.
#[derive(Debug, Clone)]
pub struct SimIterations {
    /// The scheduler.
    pub spec: SchedulerSpec,
    /// The deadline-miss rule (Hartstone counts with `skip`).
    pub on_miss: OnMiss,
}

impl IterationRunner for SimIterations {
    type Error = SimError;

    fn run(&mut self, set: &TaskSet, window: Nanos) -> Result<IterationResult, SimError> {
        let mut config = SimConfig::new(window);
        config.on_miss = self.on_miss;
        Ok(iteration_result(&simulate(set, &self.spec, &config)?))
    }
}

/// A simulation's report as one Hartstone iteration: the first miss is the
/// task with the earliest missed deadline (the first declared on a tie).
pub fn iteration_result(report: &SimReport) -> IterationResult {
    IterationResult::of_run(
        &report.tasks,
        &report.totals,
        report.context_switches,
        report.duration_ns,
    )
}

/// The extended Hartstone as a simulation of `length` (paper 002: 120 s;
/// see [`ExtendedProfile::run_setup`], the phase the executor runs too).
pub fn extended_setup(
    profile: &ExtendedProfile,
    on_miss: OnMiss,
    length: Nanos,
) -> (TaskSet, SimConfig) {
    let (set, phases) = profile.run_setup(length);
    let mut config = SimConfig::new(length);
    config.on_miss = on_miss;
    config.phases = phases;
    (set, config)
}

/// Simulates the extended Hartstone of `profile` under `spec` for `length`.
pub fn run_extended(
    profile: &ExtendedProfile,
    spec: &SchedulerSpec,
    on_miss: OnMiss,
    length: Nanos,
) -> Result<ExtendedResult, SimError> {
    let (set, config) = extended_setup(profile, on_miss, length);
    let report = simulate(&set, spec, &config)?;
    Ok(ExtendedResult {
        test: profile.test,
        normal: profile.normal.setting.clone(),
        overload: profile.overload.setting.clone(),
        misses: report.deadline_misses,
        context_switches: report.context_switches,
        context_switches_per_s: report.context_switches_per_s,
        preemptions: report.preemptions,
        jobs: report.released,
        kernel_trace: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::hartstone::{extended_profile, pool, HartstoneTest, EXTENDED_LENGTH};

    const KW: Nanos = Nanos::from_us(1250);

    #[test]
    fn an_iteration_reports_the_earliest_miss() {
        // Test 4 at k = 8: U = 0.40 + 8 x 0.08 = 1.04, so EDF misses.
        let set = pool(HartstoneTest::Tasks, 8, KW).unwrap();
        let mut runner = SimIterations {
            spec: SchedulerSpec::Edf,
            on_miss: OnMiss::Skip,
        };
        let r = runner.run(&set, Nanos::from_secs(2)).unwrap();
        assert!(r.misses > 0);
        let (task, at) = r.first_miss.unwrap();
        assert!(set.task(&task).is_some(), "{task}");
        assert!(at > 0 && at <= 2_000_000_000);
        assert_eq!(r.duration_ns, 2_000_000_000);
        // k = 7 (U = 0.96) meets every deadline under EDF.
        let set = pool(HartstoneTest::Tasks, 7, KW).unwrap();
        let r = runner.run(&set, Nanos::from_secs(2)).unwrap();
        assert_eq!((r.misses, r.first_miss), (0, None));
        // 2 s of 62 + 7 x 8 = 118 releases per second.
        assert_eq!(r.jobs, 236);
    }

    /// Releases over the 120 s, counted by hand. Test 1: tasks 1-4 release
    /// 30 jobs per second throughout (3600); task 5 at 64 Hz releases in
    /// [0, 30) and [45, 120) only (64 x 105 = 6720); its 352 Hz replacement
    /// (period floor(1e9/352) = 2840909 ns) releases at 30 s + k x 2840909
    /// < 45 s, k = 0..=5280 (5281). Test 4: the 6-task pool, never
    /// suspended, releases 70 per second throughout (8400) and the 9 tasks
    /// added for the overload 72 per second for 15 s (1080).
    #[test]
    fn the_extended_run_releases_each_phase_pool() {
        let released = |test| {
            let profile = extended_profile(test, KW).unwrap();
            let (set, config) = extended_setup(&profile, OnMiss::Continue, EXTENDED_LENGTH);
            simulate(&set, &SchedulerSpec::Edf, &config)
                .unwrap()
                .released
        };
        assert_eq!(released(HartstoneTest::Frequency5), 3600 + 6720 + 5281);
        assert_eq!(released(HartstoneTest::Tasks), 8400 + 1080);
        let profile = extended_profile(HartstoneTest::Frequency5, KW).unwrap();
        let (set, config) = extended_setup(&profile, OnMiss::Skip, EXTENDED_LENGTH);
        assert_eq!(set, profile.normal.set);
        assert_eq!(config.phases[0].suspended, vec![4]);
        assert_eq!(config.phases[0].tasks.len(), 1);
        assert_eq!(config.phases[0].tasks[0].name, "t5-352hz");
        let profile = extended_profile(HartstoneTest::Workloads, KW).unwrap();
        let (_, config) = extended_setup(&profile, OnMiss::Skip, EXTENDED_LENGTH);
        assert_eq!(config.phases[0].suspended, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn the_overload_makes_misses_and_the_normal_load_none() {
        let profile = extended_profile(HartstoneTest::Tasks, KW).unwrap();
        let r = run_extended(&profile, &SchedulerSpec::Edf, OnMiss::Skip, EXTENDED_LENGTH).unwrap();
        assert!(r.misses > 0);
        assert_eq!(r.normal, "+1 task");
        // The same pool without the overload meets every deadline.
        let mut config = SimConfig::new(Nanos::from_secs(120));
        config.on_miss = OnMiss::Skip;
        let calm = simulate(&profile.normal.set, &SchedulerSpec::Edf, &config).unwrap();
        assert_eq!(calm.deadline_misses, 0);
    }
}
