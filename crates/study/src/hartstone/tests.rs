use super::*;
use rtlab_model::runner::TaskCounts;
use rtlab_model::TaskSet;

const KW: Nanos = Nanos::from_us(1250);
const EDF: ModelScheduler = ModelScheduler::Edf;

/// A runner that misses from iteration `miss_at` on and counts calls.
struct Scripted {
    miss_at: u32,
    calls: Vec<(String, Nanos)>,
}

impl Runner for Scripted {
    type Error = String;
    fn run(&mut self, set: &TaskSet, spec: &RunSpec) -> Result<RunCounts, String> {
        let k = self.calls.len() as u32;
        self.calls.push((set.name.clone(), spec.duration));
        if set.name.contains("fail") {
            return Err("refused".into());
        }
        let missed = k >= self.miss_at;
        Ok(RunCounts {
            tasks: vec![TaskCounts {
                name: "t5".into(),
                released: 50,
                regular_completions: 0,
                deadline_misses: if missed { 3 } else { 0 },
                preemptions: 10,
            }],
            first_miss: missed.then(|| ("t5".to_string(), 7_000 + u64::from(k))),
            context_switches: 100 * (u64::from(k) + 1),
            duration_ns: 1_000_000_000,
            ..RunCounts::default()
        })
    }
}

fn config(test: HartstoneTest, max_iterations: u32) -> TestConfig {
    TestConfig {
        test,
        kilo_whet: KW,
        window: Nanos::from_secs(1),
        max_iterations,
        confirm: true,
    }
}

#[test]
fn the_driver_stops_at_the_first_miss() {
    let mut runner = Scripted {
        miss_at: 3,
        calls: Vec::new(),
    };
    let mut seen = Vec::new();
    let out = run_test(
        &mut runner,
        EDF,
        &config(HartstoneTest::Tasks, 100),
        &mut |r| seen.push(r.iteration),
    )
    .unwrap()
    .unwrap();
    assert_eq!(seen, vec![0, 1, 2, 3]);
    assert_eq!(runner.calls.len(), 4, "nothing runs after the miss");
    assert_eq!(runner.calls[3].0, "hartstone-ph-test4-k3");
    assert!(runner.calls.iter().all(|c| c.1 == Nanos::from_secs(1)));
    assert_eq!(out.iterations_completed, 3);
    assert_eq!(out.end, EndReason::Miss);
    assert_eq!(
        out.ending_miss,
        Some(EndingMiss {
            iteration: 3,
            task: "t5".into(),
            at_ns: 7_003
        })
    );
    // Reached: the k = 2 pool, 0.40 + 2 x 0.08.
    assert!((out.utilization_reached.unwrap() - 0.56).abs() < 1e-12);
    // (100 + 200 + 300 + 400) switches over 4 s.
    assert_eq!(out.context_switches_per_s, 250.0);
    assert_eq!(out.preemptions, 40);
    assert_eq!(out.iterations.len(), 4);
    assert_eq!(out.iterations[3].result.misses, 3);
    assert_eq!(out.iterations[3].tasks, 8);
}

#[test]
fn a_baseline_miss_completes_no_iteration_and_the_cap_ends_a_clean_series() {
    let mut runner = Scripted {
        miss_at: 0,
        calls: Vec::new(),
    };
    let out = run_test(
        &mut runner,
        EDF,
        &config(HartstoneTest::Frequency5, 100),
        &mut |_| {},
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        (out.iterations_completed, out.utilization_reached),
        (0, None)
    );
    assert_eq!(out.ending_miss.unwrap().iteration, 0);

    let mut runner = Scripted {
        miss_at: u32::MAX,
        calls: Vec::new(),
    };
    let out = run_test(
        &mut runner,
        EDF,
        &config(HartstoneTest::Workloads, 5),
        &mut |_| {},
    )
    .unwrap()
    .unwrap();
    assert_eq!(runner.calls.len(), 5);
    assert_eq!(out.iterations_completed, 5);
    assert_eq!(out.end, EndReason::Cap);
    assert_eq!(out.ending_miss, None);
}

#[test]
fn an_invalid_next_pool_ends_the_series_with_its_reason() {
    // 2 kilo-whets of 100 ms in task 5's period: 1/(32 + 8k) s < 200 ms
    // from k = 0 on, but the rest is invalid first: task 1 needs 3.2 s.
    let mut runner = Scripted {
        miss_at: u32::MAX,
        calls: Vec::new(),
    };
    let mut cfg = config(HartstoneTest::Frequency5, 10);
    cfg.kilo_whet = Nanos::from_ms(100);
    let out = run_test(&mut runner, EDF, &cfg, &mut |_| {})
        .unwrap()
        .unwrap();
    assert!(runner.calls.is_empty());
    assert!(
        matches!(&out.end, EndReason::InvalidPool(m) if m.starts_with("test 1, iteration 0")),
        "{:?}",
        out.end
    );
}

#[test]
fn a_refused_pool_ends_the_series_without_an_error() {
    struct Admission;
    impl Runner for Admission {
        type Error = u32;
        fn run(&mut self, set: &TaskSet, _: &RunSpec) -> Result<RunCounts, u32> {
            if set.utilization() > 0.5 {
                Err(7)
            } else {
                Ok(RunCounts::default())
            }
        }
        fn refusal(&self, e: &u32) -> Option<String> {
            (*e == 7).then(|| "admission refused".to_string())
        }
    }
    let out = run_test(
        &mut Admission,
        EDF,
        &config(HartstoneTest::Tasks, 9),
        &mut |_| {},
    )
    .unwrap()
    .unwrap();
    // k = 0 (0.40) and k = 1 (0.48) run; k = 2 (0.56) is refused.
    assert_eq!(out.iterations_completed, 2);
    assert_eq!(
        out.end,
        EndReason::Refused("iteration 2: admission refused".into())
    );
}

#[test]
fn a_runner_error_ends_the_series_with_it() {
    struct Failing;
    impl Runner for Failing {
        type Error = &'static str;
        fn run(&mut self, _: &TaskSet, _: &RunSpec) -> Result<RunCounts, &'static str> {
            Err("no permission")
        }
    }
    let e = run_test(
        &mut Failing,
        EDF,
        &config(HartstoneTest::Tasks, 3),
        &mut |_| {},
    );
    assert_eq!(e.unwrap_err(), "no permission");
}

#[test]
fn a_stop_signal_ends_the_series_without_an_outcome() {
    struct Stopped;
    impl Runner for Stopped {
        type Error = String;
        fn run(&mut self, _: &TaskSet, _: &RunSpec) -> Result<RunCounts, String> {
            Ok(RunCounts::interrupted())
        }
    }
    let out = run_test(
        &mut Stopped,
        EDF,
        &config(HartstoneTest::Tasks, 3),
        &mut |_| {},
    );
    assert_eq!(out, Ok(None));
}

mod simulated {
    use super::*;
    use rtlab_model::hartstone::{extended_profile, EXTENDED_LENGTH};
    use rtlab_sim::runner::SimRunner;
    use rtlab_sim::{MissRule, SchedulerSpec};

    fn edf(on_miss: MissRule) -> SimRunner {
        SimRunner::pinned(SchedulerSpec::Edf, on_miss)
    }

    #[test]
    fn an_iteration_reports_the_earliest_miss() {
        // Test 4 at k = 8: U = 0.40 + 8 x 0.08 = 1.04, so EDF misses.
        let set = pool(HartstoneTest::Tasks, 8, KW).unwrap();
        let mut runner = edf(MissRule::Skip);
        let spec = RunSpec {
            scheduler: EDF,
            duration: Nanos::from_secs(2),
            phases: Vec::new(),
        };
        let r = iteration_result(runner.run(&set, &spec).unwrap());
        assert!(r.misses > 0);
        let (task, at) = r.first_miss.unwrap();
        assert!(set.task(&task).is_some(), "{task}");
        assert!(at > 0 && at <= 2_000_000_000);
        assert_eq!(r.duration_ns, 2_000_000_000);
        // k = 7 (U = 0.96) meets every deadline under EDF.
        let set = pool(HartstoneTest::Tasks, 7, KW).unwrap();
        let r = iteration_result(runner.run(&set, &spec).unwrap());
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
            run_extended(&mut edf(MissRule::Continue), EDF, &profile, EXTENDED_LENGTH)
                .unwrap()
                .unwrap()
                .jobs
        };
        assert_eq!(released(HartstoneTest::Frequency5), 3600 + 6720 + 5281);
        assert_eq!(released(HartstoneTest::Tasks), 8400 + 1080);
        let profile = extended_profile(HartstoneTest::Frequency5, KW).unwrap();
        let (set, phases) = profile.run_setup(EXTENDED_LENGTH);
        assert_eq!(set, profile.normal.set);
        assert_eq!(phases[0].suspended, vec![4]);
        assert_eq!(phases[0].tasks.len(), 1);
        assert_eq!(phases[0].tasks[0].name, "t5-352hz");
        let profile = extended_profile(HartstoneTest::Workloads, KW).unwrap();
        let (_, phases) = profile.run_setup(EXTENDED_LENGTH);
        assert_eq!(phases[0].suspended, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn the_overload_makes_misses_and_the_normal_load_none() {
        let profile = extended_profile(HartstoneTest::Tasks, KW).unwrap();
        let r = run_extended(&mut edf(MissRule::Skip), EDF, &profile, EXTENDED_LENGTH)
            .unwrap()
            .unwrap();
        assert!(r.misses > 0);
        assert_eq!(r.normal, "+1 task");
        // The same pool without the overload meets every deadline.
        let calm = edf(MissRule::Skip)
            .run(
                &profile.normal.set,
                &RunSpec {
                    scheduler: EDF,
                    duration: Nanos::from_secs(120),
                    phases: Vec::new(),
                },
            )
            .unwrap();
        assert_eq!(calm.deadline_misses(), 0);
    }
}
