use super::*;
use crate::runner::{RunCounts, RunSpec, FPS};
use rtlab_model::policy::ModelScheduler;
use rtlab_model::Task;

/// One task of C = 1 ms, so that at load L (ppm) the scaled C is L ns:
/// the scripted runner reads the load back from the set it is handed.
fn probe(deadline: Nanos) -> TaskSet {
    TaskSet::new(
        "probe",
        vec![Task::new("t", Nanos::from_ms(10), Nanos::from_ms(1)).with_deadline(deadline)],
    )
}

#[derive(Debug)]
enum ScriptError {
    Refused(&'static str),
    Broken,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

/// Misses from `miss_from` (ppm) on, per scheduler; RC = load in percent,
/// DM = 1 on a miss, PR = 1 for EDF and 2 for FPS; every run logged.
struct Scripted {
    edf_miss_from: u64,
    fps_miss_from: u64,
    refuse_edf_from: u64,
    broken_at: u64,
    log: Vec<(ModelScheduler, u64)>,
}

impl Scripted {
    fn new(edf_miss_from: u64, fps_miss_from: u64) -> Scripted {
        Scripted {
            edf_miss_from,
            fps_miss_from,
            refuse_edf_from: u64::MAX,
            broken_at: u64::MAX,
            log: Vec::new(),
        }
    }
}

impl Runner for Scripted {
    type Error = ScriptError;
    fn refusal(&self, error: &ScriptError) -> Option<String> {
        match error {
            ScriptError::Refused(why) => Some((*why).into()),
            ScriptError::Broken => None,
        }
    }
    fn run(&mut self, set: &TaskSet, spec: &RunSpec) -> Result<RunCounts, ScriptError> {
        let scheduler = spec.scheduler;
        assert_eq!(spec.duration, Nanos::from_ms(50));
        let load = set.tasks[0].wcet.as_ns();
        self.log.push((scheduler, load));
        if load == self.broken_at {
            return Err(ScriptError::Broken);
        }
        let (miss_from, pr) = match scheduler {
            EDF if load >= self.refuse_edf_from => return Err(ScriptError::Refused("admission")),
            EDF => (self.edf_miss_from, 1),
            _ => (self.fps_miss_from, 2),
        };
        Ok(RunCounts {
            tasks: vec![TaskCounts {
                name: "t".into(),
                released: 5,
                regular_completions: load / 10_000,
                deadline_misses: u64::from(load >= miss_from),
                preemptions: pr,
            }],
            ..RunCounts::default()
        })
    }
}

const PCT: u64 = 10_000;

fn steps(from: u64, to: u64) -> LoadSteps {
    LoadSteps {
        from_ppm: from * PCT,
        step_ppm: PCT,
        to_ppm: to * PCT,
    }
}

fn total(name: &str, rc: u64, dm: u64, pr: u64) -> Option<TaskCounts> {
    Some(TaskCounts {
        name: name.into(),
        released: 5,
        regular_completions: rc,
        deadline_misses: dm,
        preemptions: pr,
    })
}

fn search(runner: &mut Scripted, deadline_ms: u64, from: u64, to: u64) -> SetResult {
    search_set(
        runner,
        &probe(Nanos::from_ms(deadline_ms)),
        &steps(from, to),
        Nanos::from_ms(50),
    )
    .unwrap()
}

#[test]
fn each_scheduler_is_raised_until_its_own_first_miss() {
    let mut r = Scripted::new(104 * PCT, 98 * PCT);
    let s = search(&mut r, 10, 90, 110);
    assert_eq!(s.edf.hsu_ppm, Some(103 * PCT));
    assert_eq!(s.edf.first_miss_ppm, Some(104 * PCT));
    assert_eq!(s.edf.runs, 15);
    assert_eq!(s.fps.hsu_ppm, Some(97 * PCT));
    assert_eq!(s.fps.first_miss_ppm, Some(98 * PCT));
    assert_eq!(s.fps.runs, 9);
    // Decisive: 98 %, where FPS missed first; both counted there.
    assert_eq!(s.decisive_load_ppm, Some(98 * PCT));
    assert_eq!(s.edf_counts, total("total", 98, 0, 1));
    assert_eq!(s.fps_counts, total("total", 98, 1, 2));
    // No run after both missed; FPS not run after its miss.
    assert_eq!(r.log.len(), 24);
    assert!(!r.log.iter().any(|&(s, l)| s == FPS && l > 98 * PCT));
}

#[test]
fn a_set_that_never_misses_is_capped_at_the_last_load() {
    let mut r = Scripted::new(u64::MAX, u64::MAX);
    let s = search(&mut r, 10, 95, 100);
    assert_eq!(s.edf.hsu_ppm, Some(100 * PCT));
    assert_eq!(s.fps.hsu_ppm, Some(100 * PCT));
    assert_eq!(s.edf.first_miss_ppm, None);
    assert_eq!(s.decisive_load_ppm, Some(100 * PCT));
    assert_eq!(s.fps_counts, total("total", 100, 0, 2));
    assert_eq!(r.log.len(), 12);
}

#[test]
fn a_miss_at_the_first_load_leaves_no_hsu() {
    let mut r = Scripted::new(u64::MAX, 50 * PCT);
    let s = search(&mut r, 10, 90, 92);
    assert_eq!(s.fps.hsu_ppm, None);
    assert_eq!(s.fps.first_miss_ppm, Some(90 * PCT));
    assert_eq!(s.decisive_load_ppm, Some(90 * PCT));
    assert_eq!(s.edf.hsu_ppm, Some(92 * PCT));
}

#[test]
fn a_load_whose_wcet_exceeds_the_deadline_is_a_miss_without_a_run() {
    // D = 1.1 ms: C = 1.11 ms at 111 % exceeds it.
    let mut r = Scripted::new(u64::MAX, 105 * PCT);
    let s = search_set(
        &mut r,
        &probe(Nanos::from_us(1100)),
        &steps(100, 120),
        Nanos::from_ms(50),
    )
    .unwrap();
    assert_eq!(s.fps.first_miss_ppm, Some(105 * PCT));
    assert_eq!(s.edf.hsu_ppm, Some(110 * PCT));
    assert_eq!(s.edf.first_miss_ppm, Some(111 * PCT));
    assert_eq!(s.edf.runs, 11);
    assert!(r.log.iter().all(|&(_, l)| l <= 110 * PCT));
}

#[test]
fn a_refusal_ends_one_search_and_a_failure_ends_all() {
    let mut r = Scripted::new(u64::MAX, 98 * PCT);
    r.refuse_edf_from = 95 * PCT;
    let s = search(&mut r, 10, 90, 110);
    assert_eq!(s.edf.hsu_ppm, Some(94 * PCT));
    assert_eq!(s.edf.refused.as_deref(), Some("admission"));
    assert_eq!(s.edf.first_miss_ppm, None);
    assert_eq!(s.fps.first_miss_ppm, Some(98 * PCT));
    assert_eq!(s.decisive_load_ppm, Some(98 * PCT));
    assert_eq!(s.edf_counts, None);

    // No miss at all: the decisive load is the last load both ran.
    let mut r = Scripted::new(u64::MAX, u64::MAX);
    r.refuse_edf_from = 95 * PCT;
    let s = search(&mut r, 10, 90, 100);
    assert_eq!(s.fps.hsu_ppm, Some(100 * PCT));
    assert_eq!(s.decisive_load_ppm, Some(94 * PCT));
    assert_eq!(s.edf_counts, total("total", 94, 0, 1));
    assert_eq!(s.fps_counts, total("total", 94, 0, 2));

    let mut r = Scripted::new(u64::MAX, u64::MAX);
    r.broken_at = 93 * PCT;
    let e = search_set(
        &mut r,
        &probe(Nanos::from_ms(10)),
        &steps(90, 110),
        Nanos::from_ms(50),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "probe at load 93% under edf: Broken");
}

#[test]
fn a_type_row_averages_its_sets() {
    let mut a = Scripted::new(104 * PCT, 98 * PCT);
    let mut b = Scripted::new(101 * PCT, 100 * PCT);
    let loads = steps(96, 110);
    let sets = vec![
        search_set(
            &mut a,
            &probe(Nanos::from_ms(10)),
            &loads,
            Nanos::from_ms(50),
        )
        .unwrap(),
        search_set(
            &mut b,
            &probe(Nanos::from_ms(10)),
            &loads,
            Nanos::from_ms(50),
        )
        .unwrap(),
    ];
    let row = summarize(SET_TYPES[0], &loads, sets);
    // HSU: a (103, 97), b (100, 99): deltas 6 and 1.
    assert_eq!(row.mean_hsu_edf, Some(101.5));
    assert_eq!(row.mean_hsu_fps, Some(98.0));
    assert_eq!(row.delta_hsu_pp, Some(3.5));
    assert_eq!(row.max_cpu_load, Some(103.0));
    // Decisive loads 98 and 100: RC 98 + 100.
    assert_eq!(row.edf.regular_completions, 198);
    assert_eq!(row.edf.deadline_misses, 0);
    assert_eq!(row.fps.deadline_misses, 2);
    assert_eq!(row.fps.preemptions, 4);
    assert_eq!((row.edf_counted_sets, row.fps_counted_sets), (2, 2));
    let at = |load: f64| row.curve.iter().find(|p| p.load == load).unwrap().clone();
    assert_eq!(
        (at(97.0).edf_schedulable, at(97.0).fps_schedulable),
        (1.0, 1.0)
    );
    assert_eq!(
        (at(98.0).edf_schedulable, at(98.0).fps_schedulable),
        (1.0, 0.5)
    );
    assert_eq!(
        (at(101.0).edf_schedulable, at(101.0).fps_schedulable),
        (0.5, 0.0)
    );
    assert_eq!(row.sets_capped, 0);
}

#[test]
fn the_types_have_the_documented_periods_and_deadlines() {
    let ms = Nanos::from_ms;
    assert_eq!(PeriodClass::ShortMid.range(), (ms(1), ms(100)));
    assert_eq!(PeriodClass::Mid.range(), (ms(10), ms(100)));
    assert_eq!(PeriodClass::All.range(), (ms(1), ms(1000)));
    let names: Vec<String> = SET_TYPES.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "constrained/short-mid",
            "constrained/mid",
            "constrained/all",
            "implicit/short-mid",
            "implicit/mid",
            "implicit/all"
        ]
    );
    let config = UtilizationConfig {
        sets: 20,
        tasks: 10,
        seed: 7,
        loads: steps(50, 120),
        duration: None,
        types: SET_TYPES.to_vec(),
    };
    for t in SET_TYPES {
        let (min, max) = t.periods.range();
        for set in type_sets(&config, t).unwrap() {
            assert_eq!(set.tasks.len(), 10);
            assert!((set.utilization() - 1.0).abs() < 1e-4, "{}", set.name);
            for task in &set.tasks {
                assert!(task.period >= min && task.period <= max);
                assert_eq!(task.period.as_ns() % PERIOD_GRANULARITY.as_ns(), 0);
                assert!(task.utilization() <= MAX_TASK_UTILIZATION + 1e-6);
                let slack = (task.period - task.wcet).as_ns() as f64;
                match t.deadlines {
                    DeadlineKind::Implicit => assert_eq!(task.deadline, task.period),
                    DeadlineKind::Constrained => {
                        let x = (task.deadline - task.wcet).as_ns() as f64 / slack;
                        assert!((0.5 - 1e-6..=1.0).contains(&x), "x = {x}");
                    }
                }
            }
            // Scaled to 120 %, every C stays within its deadline.
            assert!(scale_to_load(&set, 120 * PCT).is_some(), "{}", set.name);
        }
    }
    // Short periods do occur in short-mid, long ones in all.
    let short_mid = type_sets(&config, SET_TYPES[3]).unwrap();
    assert!(short_mid
        .iter()
        .flat_map(|s| &s.tasks)
        .any(|t| t.period < ms(10)));
    let all = type_sets(&config, SET_TYPES[5]).unwrap();
    assert!(all
        .iter()
        .flat_map(|s| &s.tasks)
        .any(|t| t.period > ms(100)));
}

#[test]
fn scaling_rounds_each_wcet_to_the_nearest_nanosecond() {
    let set = TaskSet::new(
        "s",
        vec![Task::new("a", Nanos::from_ns(1000), Nanos::from_ns(3))],
    );
    // 3 x 1.5 = 4.5 -> 5 (half up); 3 x 0.1 = 0.3 -> at least 1 ns.
    assert_eq!(
        scale_to_load(&set, 1_500_000).unwrap().tasks[0]
            .wcet
            .as_ns(),
        5
    );
    assert_eq!(
        scale_to_load(&set, 100_000).unwrap().tasks[0].wcet.as_ns(),
        1
    );
    assert!(scale_to_load(&set, 400 * ONE_PPM).is_none());
}

/// Against theory, in the simulator: with implicit deadlines EDF meets
/// every deadline up to U = 1 (Liu & Layland), and FPS at least up to
/// n (2^(1/n) - 1); and the section is deterministic.
#[test]
fn the_simulated_section_agrees_with_theory_and_is_deterministic() {
    let config = UtilizationConfig {
        sets: 4,
        tasks: 4,
        seed: 3,
        loads: LoadSteps {
            from_ppm: 70 * PCT,
            step_ppm: 2 * PCT,
            to_ppm: 110 * PCT,
        },
        duration: None,
        types: vec![SET_TYPES[3], SET_TYPES[4], SET_TYPES[0]],
    };
    let a = simulate(&config).unwrap();
    let b = simulate(&config).unwrap();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let liu_layland = 4.0 * (2f64.powf(0.25) - 1.0) * 100.0;
    for row in &a.types[..2] {
        for s in &row.sets {
            // 100 % itself may round a few ns above U = 1: allow one step.
            assert!(
                s.edf.hsu_ppm.unwrap() >= 98 * PCT,
                "{}: {:?}",
                s.name,
                s.edf
            );
            assert!(
                percent(s.fps.hsu_ppm.unwrap()) >= liu_layland - 2.0,
                "{}",
                s.name
            );
            assert!(s.edf.hsu_ppm >= s.fps.hsu_ppm, "{}", s.name);
            assert_eq!(s.duration_ns, 5 * s_longest(row, s));
        }
        assert!(row.delta_hsu_pp.unwrap() >= 0.0);
        assert!(row.edf.released > 0 && row.fps.released > 0);
    }
    // The sequential path gives the same document.
    let c = run(&config, &mut SimRunner::new()).unwrap();
    assert_eq!(
        serde_json::to_value(&a).unwrap(),
        serde_json::to_value(&c).unwrap()
    );
}

fn s_longest(row: &TypeResult, s: &SetResult) -> u64 {
    let t = row.set_type;
    let config = t.generator(4, 3);
    let index: u64 = s.name.rsplit('-').next().unwrap().parse().unwrap();
    let set = generate_set(&config, index).unwrap();
    set.tasks.iter().map(|t| t.period.as_ns()).max().unwrap()
}

#[test]
fn bad_settings_name_the_flag() {
    let mut config = UtilizationConfig {
        sets: 1,
        tasks: 1,
        seed: 0,
        loads: steps(50, 60),
        duration: None,
        types: vec![SET_TYPES[0]],
    };
    assert!(simulate(&config)
        .unwrap_err()
        .to_string()
        .starts_with("--tasks 1"));
    config.tasks = 3;
    config.loads.step_ppm = 0;
    assert!(simulate(&config)
        .unwrap_err()
        .to_string()
        .starts_with("--step"));
    config.loads = steps(60, 50);
    assert!(simulate(&config)
        .unwrap_err()
        .to_string()
        .starts_with("--to"));
    config.loads = steps(50, 60);
    config.duration = Some(Nanos::from_ms(1));
    assert!(simulate(&config)
        .unwrap_err()
        .to_string()
        .starts_with("--duration 1ms"));
}

#[test]
fn set_types_parse_by_name_and_a_wrong_one_lists_them() {
    assert_eq!("implicit/mid".parse::<SetType>(), Ok(SET_TYPES[4]));
    assert!("implicit/long"
        .parse::<SetType>()
        .unwrap_err()
        .contains("implicit/mid"));
}

#[test]
fn percentages_parse_to_ppm() {
    assert_eq!(load_ppm("50"), Ok(500_000));
    assert_eq!(load_ppm("50%"), Ok(500_000));
    assert_eq!(load_ppm("0.5"), Ok(5_000));
    for bad in ["0", "-1", "x", "", "2000"] {
        assert!(load_ppm(bad).is_err(), "{bad}");
    }
}
