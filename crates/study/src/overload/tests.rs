use super::*;
use crate::runner::TaskCounts;
use rtlab_model::Task;
use rtlab_sim::{Scale, SchedulerSpec, SimConfig};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

/// A runner whose misses come from a script of (scheduler, spec); every
/// task releases `released[i]` jobs.
struct Scripted {
    released: Vec<u64>,
    hybrid: bool,
    script: fn(ModelScheduler, &RunSpec) -> Vec<u64>,
    calls: Vec<(ModelScheduler, RunSpec)>,
}

impl Runner for Scripted {
    type Error = String;
    fn supports(&self, spec: &RunSpec) -> bool {
        self.hybrid || spec.scheduler != HYBRID
    }
    fn run(&mut self, set: &TaskSet, spec: &RunSpec) -> Result<RunCounts, String> {
        let scheduler = spec.scheduler;
        self.calls.push((scheduler, spec.clone()));
        let misses = (self.script)(scheduler, spec);
        Ok(RunCounts {
            tasks: set
                .tasks
                .iter()
                .zip(misses)
                .zip(&self.released)
                .map(|((t, m), &r)| TaskCounts {
                    name: t.name.clone(),
                    released: r,
                    regular_completions: r.saturating_sub(m),
                    deadline_misses: m,
                    preemptions: 0,
                })
                .collect(),
            ..RunCounts::default()
        })
    }
}

/// The load of a run's only phase, in tenths above 100 % (0 for 100 %,
/// 2 for 120 %); `None` without a phase.
fn tenths_above_full(spec: &RunSpec) -> Option<u64> {
    match spec.phases.first()?.scale {
        Scale::UtilizationPpm(ppm) => Some((ppm - 1_000_000) / 100_000),
        Scale::Factor { .. } => panic!("the section states loads as utilizations"),
    }
}

/// Declared out of deadline order: DM ranks are slow 3, fast 1, mid 2.
fn three_tasks() -> TaskSet {
    TaskSet::new(
        "three",
        vec![
            Task::new("slow", ms(30), ms(3)),
            Task::new("fast", ms(10), ms(1)),
            Task::new("mid", ms(20), ms(1)),
        ],
    )
}

#[test]
fn permanent_rows_fits_and_skips_on_a_scripted_runner() {
    // FPS misses only on the least urgent task, 10 + 5x at 100 + 10x %;
    // EDF on every task once past 100 %.
    let mut runner = Scripted {
        released: vec![100, 300, 150],
        hybrid: false,
        script: |scheduler, spec| match (scheduler, tenths_above_full(spec)) {
            (_, None) => vec![0, 0, 0],
            (FPS, Some(x)) => vec![10 + 5 * x, 0, 0],
            (_, Some(x)) => vec![x + 1, x, x],
        },
        calls: Vec::new(),
    };
    let config = OverloadConfig {
        base: BaseSet::Given(three_tasks()),
        base_load_ppm: 500_000,
        levels_ppm: vec![1_000_000, 1_200_000],
        profiles: vec![Profile::Permanent],
        duration: ms(600),
        ..OverloadConfig::default()
    };
    let section = run(&mut runner, &config).unwrap();

    // U = 0.25 scaled to 50 %: every C doubled.
    let wcets: Vec<u64> = section.tasks.iter().map(|t| t.wcet_ns).collect();
    assert_eq!(wcets, vec![ms(6).as_ns(), ms(2).as_ns(), ms(2).as_ns()]);
    assert_eq!(section.base_utilization, 0.5);
    let ranks: Vec<usize> = section.tasks.iter().map(|t| t.dm_rank).collect();
    assert_eq!(ranks, vec![3, 1, 2]);

    assert_eq!(
        section.skipped,
        vec!["hybrid: the runner cannot run it (no baseline, no overload rows)"]
    );
    // 2 baselines + 2 levels x 2 schedulers, each once (no recovery runs
    // for the permanent profile).
    assert_eq!(runner.calls.len(), 6);
    assert!(runner.calls[..2].iter().all(|(_, s)| s.phases.is_empty()));
    assert_eq!(runner.calls[2].1.phases[0].to_string(), "0ns..600ms:100%");
    assert_eq!(
        section.baseline,
        vec![
            BaselineRow {
                scheduler: EDF,
                released: 550,
                misses: 0
            },
            BaselineRow {
                scheduler: FPS,
                released: 550,
                misses: 0
            },
        ]
    );

    let row = |load_pct, scheduler, misses, tasks_missing, highest| OverloadRow {
        profile: Profile::Permanent,
        load_pct,
        scheduler,
        released: 550,
        misses,
        miss_ratio: misses as f64 / 550.0,
        tasks_missing,
        tasks_missing_fraction: tasks_missing as f64 / 3.0,
        highest_missing_rank: Some(highest),
        misses_on_lowest_ranks: Some(true),
        misses_after_burst: None,
        recovery_ns: None,
        recovered_before_end: None,
        misses_in_burst: None,
    };
    assert_eq!(
        section.rows,
        vec![
            row(100.0, EDF, 1, 1, 3),
            row(100.0, FPS, 10, 1, 3),
            row(120.0, EDF, 7, 3, 1),
            row(120.0, FPS, 20, 1, 3),
        ]
    );
    assert_eq!(section.task_rows.len(), 12);
    assert_eq!(
        section.task_rows[9],
        TaskMissRow {
            profile: Profile::Permanent,
            load_pct: 120.0,
            scheduler: FPS,
            task: "slow".into(),
            dm_rank: 3,
            released: 100,
            misses: 20,
        }
    );

    // FPS: (100, 10), (120, 20): slope 0.5 per point, exactly linear.
    // EDF: (100, 1), (120, 7): slope 0.3.
    assert_eq!(section.fits.len(), 2);
    let edf = &section.fits[0];
    let fps = &section.fits[1];
    assert_eq!((edf.scheduler, fps.scheduler), (EDF, FPS));
    assert!((fps.slope_misses_per_pct - 0.5).abs() < 1e-12);
    assert!((fps.intercept + 40.0).abs() < 1e-9);
    assert!((fps.r_squared.unwrap() - 1.0).abs() < 1e-12);
    assert!((edf.slope_misses_per_pct - 0.3).abs() < 1e-12);
}

#[test]
fn misses_off_the_lowest_ranks_are_flagged() {
    let counts = |m: [u64; 3]| RunCounts {
        tasks: m
            .iter()
            .map(|&m| TaskCounts {
                deadline_misses: m,
                released: 10,
                ..TaskCounts::default()
            })
            .collect(),
        ..RunCounts::default()
    };
    let ranks = [3, 1, 2];
    let r = row_of(
        Profile::Permanent,
        1_100_000,
        EDF,
        &counts([0, 0, 4]),
        &ranks,
    );
    // Only "mid" (rank 2) missed while "slow" (rank 3) did not.
    assert_eq!((r.tasks_missing, r.highest_missing_rank), (1, Some(2)));
    assert_eq!(r.misses_on_lowest_ranks, Some(false));
    let r = row_of(
        Profile::Permanent,
        1_100_000,
        FPS,
        &counts([1, 0, 4]),
        &ranks,
    );
    assert_eq!(r.misses_on_lowest_ranks, Some(true));
    let r = row_of(
        Profile::Permanent,
        1_100_000,
        FPS,
        &counts([0, 0, 0]),
        &ranks,
    );
    assert_eq!(
        (r.highest_missing_rank, r.misses_on_lowest_ranks),
        (None, None)
    );
}

/// Missed deadlines of the transient script: two inside the burst
/// `[1 s, 2 s)`, two after it (2.1 s and 2.3 s).
const MISSED_DEADLINES_MS: [u64; 4] = [1500, 1900, 2100, 2300];

#[test]
fn transient_recovery_is_bisected_from_cut_short_runs() {
    let mut runner = Scripted {
        released: vec![10, 10, 10],
        hybrid: true,
        // A run cut at t counts the deadlines missed at or before t.
        script: |_, spec| {
            if spec.phases.is_empty() && spec.duration == Nanos::from_ms(3024) {
                return vec![0, 0, 0];
            }
            let m = MISSED_DEADLINES_MS
                .iter()
                .filter(|&&d| Nanos::from_ms(d) <= spec.duration)
                .count() as u64;
            vec![m, 0, 0]
        },
        calls: Vec::new(),
    };
    let config = OverloadConfig {
        base: BaseSet::Given(three_tasks()),
        levels_ppm: vec![1_300_000],
        profiles: vec![Profile::Transient],
        schedulers: vec![EDF],
        duration: ms(3024),
        burst_start: ms(1000),
        burst_length: ms(1000),
        recovery_resolution: Some(ms(1)),
        ..OverloadConfig::default()
    };
    let section = run(&mut runner, &config).unwrap();
    let row = &section.rows[0];
    assert_eq!(row.misses, 4);
    assert_eq!(row.misses_after_burst, Some(2));
    // [2000, 3024] ms halves to 1 ms in 10 steps; the last miss is at 2300.
    assert_eq!(row.recovery_ns, Some(ms(300).as_ns()));
    assert_eq!(row.recovered_before_end, Some(true));
    // baseline, full run, run cut at the burst's end, 10 bisection steps.
    assert_eq!(runner.calls.len(), 13);
    let full = &runner.calls[1].1;
    assert_eq!(full.phases.len(), 1);
    assert_eq!(full.phases[0].to_string(), "1s..2s:130%");
    let cut = &runner.calls[2].1;
    assert_eq!(cut.duration, ms(2000));
    assert_eq!(cut.phases[0].to_string(), "1s..2s:130%");
    let first_step = &runner.calls[3].1;
    assert_eq!(first_step.duration, ms(2512));
}

#[test]
fn misses_to_the_end_mean_no_recovery_and_none_after_mean_zero() {
    let config = |script| {
        let runner = Scripted {
            released: vec![10, 10, 10],
            hybrid: true,
            script,
            calls: Vec::new(),
        };
        let config = OverloadConfig {
            base: BaseSet::Given(three_tasks()),
            levels_ppm: vec![1_300_000],
            profiles: vec![Profile::Transient],
            schedulers: vec![FPS],
            duration: ms(3000),
            burst_start: ms(1000),
            burst_length: ms(1000),
            recovery_resolution: Some(ms(100)),
            ..OverloadConfig::default()
        };
        (runner, config)
    };
    // One miss per 10 ms of run after 1.5 s: misses never stop.
    let (mut runner, c) = config(|_, spec| {
        vec![
            spec.duration.as_ns().saturating_sub(ms(1500).as_ns()) / ms(10).as_ns(),
            0,
            0,
        ]
    });
    let row = run(&mut runner, &c).unwrap().rows.remove(0);
    assert_eq!(row.misses, 150);
    assert_eq!(row.misses_after_burst, Some(100));
    assert_eq!(row.recovered_before_end, Some(false));
    assert!(row.recovery_ns.unwrap() > ms(900).as_ns());
    // All misses by the burst's end: recovery 0 at once.
    let (mut runner, c) = config(|_, spec| vec![u64::from(spec.duration >= ms(1500)), 0, 0]);
    let row = run(&mut runner, &c).unwrap().rows.remove(0);
    assert_eq!(
        (
            row.misses_after_burst,
            row.recovery_ns,
            row.recovered_before_end
        ),
        (Some(0), Some(0), Some(true))
    );
    assert_eq!(runner.calls.len(), 3);
}

#[test]
fn settings_that_cannot_mean_anything_are_refused() {
    let mut runner = Scripted {
        released: vec![1, 1, 1],
        hybrid: true,
        script: |_, _| vec![0, 0, 0],
        calls: Vec::new(),
    };
    let base = OverloadConfig {
        base: BaseSet::Given(three_tasks()),
        ..OverloadConfig::default()
    };
    let message = |config: OverloadConfig, runner: &mut Scripted| {
        run(runner, &config).unwrap_err().to_string()
    };
    assert_eq!(
        message(
            OverloadConfig {
                base_load_ppm: 1_000_000,
                ..base.clone()
            },
            &mut runner
        ),
        "overload: base-load: must be above 0 % and below 100 % (got 100 %): the base set must be schedulable load"
    );
    assert!(message(
        OverloadConfig {
            levels_ppm: vec![],
            ..base.clone()
        },
        &mut runner
    )
    .starts_with("overload: levels: "));
    assert_eq!(
        message(
            OverloadConfig {
                burst_start: Nanos::from_secs(9),
                ..base.clone()
            },
            &mut runner
        ),
        "overload: burst: the burst (1s from 9s) must last longer than 0 and end before the run (10s)"
    );
    assert!(runner.calls.is_empty());
}

/// The simulator as a runner (the study's own `SimRunner` is elsewhere):
/// `edf`, `fp:dm`, `hybrid:dm`, WCET execution, late jobs run on.
struct Sim;

impl Runner for Sim {
    type Error = rtlab_sim::SimError;
    fn run(&mut self, set: &TaskSet, spec: &RunSpec) -> Result<RunCounts, rtlab_sim::SimError> {
        let sim_spec: SchedulerSpec = match spec.scheduler {
            EDF => "edf",
            FPS => "fp:dm",
            _ => "hybrid:dm",
        }
        .parse()?;
        let mut config = SimConfig::new(spec.duration);
        config.phases = spec.phases.clone();
        let report = rtlab_sim::simulate(set, &sim_spec, &config)?;
        Ok(RunCounts {
            tasks: report
                .tasks
                .iter()
                .map(|t| TaskCounts {
                    name: t.name.clone(),
                    released: t.released,
                    regular_completions: t.completed.saturating_sub(t.misses),
                    deadline_misses: t.misses,
                    preemptions: t.preemptions,
                })
                .collect(),
            ..RunCounts::default()
        })
    }
}

/// a (T 10, C 4) and b (T 15, C 6), U = 0.8, at 120 % for 30 ms: C becomes
/// 6 and 9.
///
/// FPS (a first): a 0-6, b 6-10, a 10-16, b 16-20, a 20-26, b#0 26-27
/// (late: deadline 15), b#1 27-30 unfinished at its deadline 30: a 0
/// misses, b 2.
/// EDF: a 0-6 (d 10), b 6-10; at 10 b (d 15) beats a#1 (d 20): b 10-15,
/// done at its deadline; a#1 15-21 (late: d 20); at 21 a#2 and b#1 both
/// have d 30 and b#1 was released first: b#1 21-30 (on time), a#2
/// unfinished at its deadline 30: a 2 misses, b 0. EDF's misses fall on the
/// most urgent task, FPS's on the least.
#[test]
fn permanent_overload_in_the_simulator_matches_the_hand_schedule() {
    let set = TaskSet::new(
        "pair",
        vec![Task::new("a", ms(10), ms(4)), Task::new("b", ms(15), ms(6))],
    );
    let config = OverloadConfig {
        base: BaseSet::Given(set),
        base_load_ppm: 800_000,
        levels_ppm: vec![1_200_000],
        profiles: vec![Profile::Permanent],
        schedulers: vec![EDF, FPS],
        duration: ms(30),
        ..OverloadConfig::default()
    };
    let section = run(&mut Sim, &config).unwrap();
    let misses: Vec<(ModelScheduler, &str, u64, u64)> = section
        .task_rows
        .iter()
        .map(|r| (r.scheduler, r.task.as_str(), r.released, r.misses))
        .collect();
    assert_eq!(
        misses,
        vec![
            (EDF, "a", 3, 2),
            (EDF, "b", 2, 0),
            (FPS, "a", 3, 0),
            (FPS, "b", 2, 2),
        ]
    );
    let edf = &section.rows[0];
    assert_eq!(
        (edf.highest_missing_rank, edf.misses_on_lowest_ranks),
        (Some(1), Some(false))
    );
    let fps = &section.rows[1];
    assert_eq!(
        (fps.highest_missing_rank, fps.misses_on_lowest_ranks),
        (Some(2), Some(true))
    );
    assert_eq!(
        section
            .baseline
            .iter()
            .map(|b| b.misses)
            .collect::<Vec<_>>(),
        vec![0, 0]
    );
}

/// The defaults in the simulator: prints the tables the report quotes
/// (`cargo test -p rtlab-study --release -- --ignored --nocapture overload_defaults`).
#[test]
#[ignore = "prints figures; run by hand"]
fn overload_defaults_in_the_simulator() {
    let section = run(&mut Sim, &OverloadConfig::default()).unwrap();
    println!(
        "{} U={:.4} tasks={:?}",
        section.taskset,
        section.base_utilization,
        section
            .tasks
            .iter()
            .map(|t| (
                t.period_ns / 1_000_000,
                t.deadline_ns / 1_000_000,
                t.dm_rank
            ))
            .collect::<Vec<_>>()
    );
    println!("baseline {:?}", section.baseline);
    println!("profile    load sched   released misses ratio  tasks_missing highest lowest after_burst recovery_ms recovered");
    for r in &section.rows {
        println!(
            "{:<10} {:>4} {:<7} {:>8} {:>6} {:.4} {:>2} ({:.2}) {:?} {:?} {:?} {:?} {:?}",
            r.profile.name(),
            r.load_pct,
            name(r.scheduler),
            r.released,
            r.misses,
            r.miss_ratio,
            r.tasks_missing,
            r.tasks_missing_fraction,
            r.highest_missing_rank,
            r.misses_on_lowest_ranks,
            r.misses_after_burst,
            r.recovery_ns.map(|n| n / 1_000_000),
            r.recovered_before_end
        );
    }
    for f in &section.fits {
        println!(
            "fit {} {}: slope {:.2} misses/pct, R2 {:?}",
            f.profile.name(),
            name(f.scheduler),
            f.slope_misses_per_pct,
            f.r_squared
        );
    }
    println!("{}", serde_json::to_string(&section).unwrap().len());
}

/// Recovery read from one run's missed deadlines (the real runs): burst
/// [2 s, 3 s); deadlines missed at 2.1, 2.5, 3.0 (in the burst), 3.2 and
/// 3.45 s (after it): 2 after, the last 450 ms after the end; recovered
/// when the longest period (100 ms) passed without a miss before the end.
#[test]
fn recovery_from_one_runs_missed_deadlines_is_exact() {
    let ms = Nanos::from_ms;
    let set = TaskSet::new(
        "s",
        vec![
            rtlab_model::Task::new("a", ms(10), ms(2)),
            rtlab_model::Task::new("b", ms(100), ms(20)),
        ],
    );
    let missed = [ms(2100), ms(2500), ms(3000), ms(3200), ms(3450)];
    let r = recovery_from_timeline(&missed, ms(3000), ms(10_000), &set);
    assert_eq!(
        (r.misses_after_burst, r.recovery, r.recovered_before_end),
        (2, ms(450), true)
    );
    let late = recovery_from_timeline(&missed, ms(3000), ms(3500), &set);
    assert!(!late.recovered_before_end);
    let none = recovery_from_timeline(&missed[..3], ms(3000), ms(10_000), &set);
    assert_eq!((none.misses_after_burst, none.recovery), (0, Nanos::ZERO));
}
