//! rt-app side by side: the export's exact JSON, the round trip through
//! the model's loader, the log parser on logs rt-app 1.0 wrote on this
//! machine kind (`tests/fixtures/rtapp/`, Hartstone PH under RM, trimmed),
//! and, as root with rt-app installed, a real rt-app run.

use std::sync::atomic::AtomicBool;

use proptest::prelude::*;
use rtlab_model::file::{parse_str, Format};
use rtlab_model::generate::{generate_set, DeadlineModel, GeneratorConfig};
use rtlab_model::policy::RunPolicy;
use rtlab_model::{CriticalSection, Nanos, Task, TaskSet};
use rtlab_rt::executor::RunConfig;
use rtlab_rt::rtapp::{self, log, summarize, Calibration, ExportOptions};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

fn us(v: u64) -> Nanos {
    Nanos::from_us(v)
}

/// Two tasks, one with nested critical sections and an offset.
fn hand_written() -> TaskSet {
    let mut control = Task::new("control", ms(10), ms(2)).with_offset(us(500));
    control.critical_sections = vec![
        CriticalSection {
            resource: "bus".into(),
            start: us(500),
            length: us(1000),
        },
        CriticalSection {
            resource: "dma".into(),
            start: us(700),
            length: us(300),
        },
    ];
    let logger = Task::new("logger", ms(50), ms(5));
    TaskSet::new("hand", vec![control, logger])
}

const GOLDEN_RM: &str = r#"{
  "tasks": {
    "control": {
      "policy": "SCHED_FIFO",
      "priority": 11,
      "cpus": [
        1
      ],
      "delay": 500,
      "loop": -1,
      "run0": 500,
      "lock0": "bus",
      "run1": 200,
      "lock1": "dma",
      "run2": 300,
      "unlock0": "dma",
      "run3": 500,
      "unlock1": "bus",
      "run4": 500,
      "timer": {
        "ref": "unique",
        "period": 10000,
        "mode": "absolute"
      }
    },
    "logger": {
      "policy": "SCHED_FIFO",
      "priority": 10,
      "cpus": [
        1
      ],
      "loop": -1,
      "run": 5000,
      "timer": {
        "ref": "unique",
        "period": 50000,
        "mode": "absolute"
      }
    }
  },
  "global": {
    "duration": 10,
    "calibration": "CPU1",
    "default_policy": "SCHED_OTHER",
    "pi_enabled": false,
    "lock_pages": true,
    "logdir": "./",
    "log_basename": "rt-app",
    "ftrace": false,
    "gnuplot": false
  }
}
"#;

#[test]
fn a_hand_written_set_exports_exactly() {
    let options = ExportOptions::new(Some(1), Nanos::from_secs(10));
    let out = rtapp::export(&hand_written(), RunPolicy::RateMonotonic, None, &options).unwrap();
    assert_eq!(out.document.to_json_string(), GOLDEN_RM);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn edf_exports_deadline_parameters_and_no_pinning() {
    let mut set = hand_written();
    set.tasks[1].deadline = ms(40);
    let mut options = ExportOptions::new(Some(1), Nanos::from_secs(3));
    options.calibration = Calibration::NsPerLoop(20);
    let text = rtapp::export(&set, RunPolicy::Edf, Some(us(7)), &options)
        .unwrap()
        .document
        .to_json_string();
    // Budget C + 7us; deadline min(D, T); no `cpus` for SCHED_DEADLINE.
    assert!(text.contains("\"policy\": \"SCHED_DEADLINE\",\n      \"dl-runtime\": 5007,\n      \"dl-period\": 50000,\n      \"dl-deadline\": 40000,"), "{text}");
    assert!(!text.contains("cpus"), "{text}");
    assert!(text.contains("\"calibration\": 20,"), "{text}");
    assert!(text.contains("\"duration\": 3,"), "{text}");
}

#[test]
fn what_rt_app_cannot_say_is_refused_or_warned() {
    let options = ExportOptions::new(Some(1), Nanos::from_secs(1));
    let mut set = hand_written();
    set.tasks[1].wcet = Nanos::from_ns(5_000_500);
    let e = rtapp::export(&set, RunPolicy::RateMonotonic, None, &options).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid task `logger`: wcet 5.0005ms: rt-app's times are whole microseconds; round it in the task set"
    );
    let e = rtapp::export(
        &hand_written(),
        RunPolicy::RateMonotonic,
        None,
        &ExportOptions::new(None, ms(1500)),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid duration 1.5s: rt-app's duration is a whole number of seconds"
    );
    let mut set = hand_written();
    set.tasks[1].deadline = ms(40);
    set.tasks[1].jitter = us(10);
    set.tasks[1].bcet = Some(ms(1));
    let w = rtapp::export(&set, RunPolicy::DeadlineMonotonic, None, &options)
        .unwrap()
        .warnings;
    assert_eq!(
        w,
        [
            "task `logger`: rt-app has no deadline outside SCHED_DEADLINE; its D 40ms is not in the file (D = T = 50ms when read back)",
            "task `logger`: rt-app releases strictly periodically; its jitter 10us is not in the file",
            "task `logger`: rt-app runs every job for C; its bcet 1ms is not in the file",
        ]
    );
}

/// Reads an exported document back with the model's loader.
fn import(text: &str) -> TaskSet {
    match parse_str(text, Format::Json, "x.json", "x") {
        Ok(loaded) => loaded.set,
        Err(e) => panic!("{e}\n{text}"),
    }
}

#[test]
fn the_hand_written_set_comes_back() {
    let options = ExportOptions::new(Some(1), Nanos::from_secs(10));
    let set = hand_written();
    let back = import(GOLDEN_RM);
    let mut expected = set.clone();
    expected.name = "x".into();
    // SCHED_FIFO priorities come back as the file's priorities.
    expected.tasks[0].priority = Some(11);
    expected.tasks[1].priority = Some(10);
    assert_eq!(back, expected);
    // Exported again under `given`, it is the same workload.
    let again = rtapp::export(&back, RunPolicy::Given, None, &options).unwrap();
    assert_eq!(again.document.to_json_string(), GOLDEN_RM);
}

/// A generated set with every time a whole number of microseconds (C
/// rounded up, within D).
fn generated(index: u64, constrained: bool, seed: u64) -> TaskSet {
    let config = GeneratorConfig {
        tasks: 6,
        utilization: 0.7,
        seed,
        deadlines: if constrained {
            DeadlineModel::Constrained {
                x_min: 0.5,
                x_max: 1.0,
            }
        } else {
            DeadlineModel::Implicit
        },
        ..GeneratorConfig::default()
    };
    let mut set = generate_set(&config, index).unwrap();
    for t in &mut set.tasks {
        let round_us = |n: Nanos| us(n.as_ns().div_ceil(1_000));
        t.deadline = us(t.deadline.as_ns() / 1_000).max(us(1));
        t.wcet = round_us(t.wcet).min(t.deadline);
    }
    set
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Under SCHED_DEADLINE (D in `dl-deadline`) a generated set comes back
    /// as it was; under RM it comes back with the RM priorities it was
    /// exported with, and exporting that under `given` writes the same file.
    #[test]
    fn export_then_import_gives_the_same_set(seed in 0u64..1000, index in 0u64..50, constrained: bool) {
        let set = generated(index, constrained, seed);
        let options = ExportOptions::new(Some(1), Nanos::from_secs(10));
        let edf = rtapp::export(&set, RunPolicy::Edf, None, &options).unwrap();
        let mut back = import(&edf.document.to_json_string());
        back.name = set.name.clone();
        prop_assert_eq!(&back, &set);

        let implicit = generated(index, false, seed);
        let rm = rtapp::export(&implicit, RunPolicy::RateMonotonic, None, &options).unwrap();
        let text = rm.document.to_json_string();
        let back = import(&text);
        for (a, b) in back.tasks.iter().zip(&implicit.tasks) {
            let mut a = a.clone();
            prop_assert!(a.priority.is_some());
            a.priority = None;
            prop_assert_eq!(&a, b);
        }
        let again = rtapp::export(&back, RunPolicy::Given, None, &options).unwrap();
        prop_assert_eq!(again.document.to_json_string(), text);
    }
}

const T1_LOG: &str = include_str!("fixtures/rtapp/hartstone-ph-t1-2hz.log");
const T5_LOG: &str = include_str!("fixtures/rtapp/hartstone-ph-t5-32hz.log");

#[test]
fn the_log_parser_reads_rt_app_1_0_logs() {
    let log = log::parse(T5_LOG).unwrap();
    assert_eq!(log.policy, "SCHED_FIFO priority : 14");
    assert_eq!(log.rows.len(), 10);
    let first = log.rows[0];
    assert_eq!(
        (
            first.idx,
            first.perf,
            first.run_us,
            first.slack_us,
            first.c_period_us
        ),
        (4, 9433, 278, -185_349, 31_250)
    );
    assert_eq!(first.response_ns(), 216_599_000);
    assert!(!first.slept());
    assert_eq!(log.rows[9].wu_lat_us, 81);
}

/// The 32 Hz task of Hartstone PH (C 2.5 ms, T = D = 31.25 ms) from its
/// fixture, every figure worked out by hand from the rows: rt-app 1.0 sets
/// its time zero before its threads have locked their pages, so the first
/// six jobs were released ~200 ms before the thread could run (slack
/// -185 ms): six misses, then R ~ 0.3 ms. Its calibration said 265 ns per
/// loop, so `run` took 0.27 ms for 2.5 ms asked: -89 %.
#[test]
fn the_summary_of_a_log_is_worked_out_from_its_rows() {
    let task = Task::new("t5-32hz", Nanos::from_us(31_250), us(2_500));
    let m = summarize(&task, &log::parse(T5_LOG).unwrap());
    assert_eq!(m.jobs, 10);
    assert_eq!(m.misses, 6);
    assert_eq!(m.max_response_ns, Some(216_599_000));
    assert_eq!(m.mean_response_ns, Some(86_683_000));
    assert_eq!(m.mean_wakeup_latency_ns, Some(38_500));
    assert_eq!(m.max_wakeup_latency_ns, Some(81_000));
    assert_eq!(m.mean_run_ns, Some(274_900));
    assert!((m.run_overshoot_pct.unwrap() - -89.004).abs() < 1e-9);

    let task = Task::new("t1-2hz", ms(500), ms(40));
    let m = summarize(&task, &log::parse(T1_LOG).unwrap());
    assert_eq!((m.jobs, m.misses), (4, 0));
    assert_eq!(m.mean_response_ns, Some(64_719_000));
    assert_eq!(m.mean_wakeup_latency_ns, Some(4_937_750));
    assert_eq!(m.mean_run_ns, Some(4_838_750));
}

#[test]
fn a_log_in_another_layout_is_refused_with_its_line() {
    let other = T5_LOG.replace("wu_lat", "wakeup");
    let e = log::parse(&other).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().starts_with("line 2: columns `#idx perf run period start end rel_st slack c_duration c_period wakeup` are not rt-app 1.0's"), "{e}");
    let cut = T5_LOG.replacen("     9433      278", "     9433      x", 1);
    assert_eq!(log::parse(&cut).unwrap_err().line, 3);
    assert_eq!(log::parse("hello\n").unwrap_err().line, 1);
    // A last line cut short (rt-app killed mid-write) is dropped.
    let partial = format!("{T5_LOG}   4     94");
    assert_eq!(log::parse(&partial).unwrap().rows.len(), 10);
}

/// A real rt-app run of a small set: every task logged jobs. Run it under
/// the machine-wide lock (`flock /tmp/rtlab-realtime.lock cargo test -p
/// rtlab-rt --test rtapp`).
#[test]
#[ignore = "needs root"]
fn rt_app_runs_a_set_and_every_task_has_jobs() {
    rtlab_testkit::require_root();
    let Some(binary) = rtapp::find_rtapp() else {
        rtlab_testkit::unavailable(rtapp::INSTALL_HINT);
        return;
    };
    let set = TaskSet::new(
        "small",
        vec![
            Task::new("fast", ms(10), ms(1)),
            Task::new("slow", ms(40), ms(4)),
        ],
    );
    let cfg = RunConfig::new(Nanos::from_secs(1), RunPolicy::RateMonotonic);
    let run = rtapp::runner::run(&set, &cfg, &binary, None, &AtomicBool::new(false)).unwrap();
    assert_eq!(run.exit_status, Some(0));
    assert!(!run.interrupted);
    assert_eq!(run.tasks.len(), 2);
    for (task, m) in set.tasks.iter().zip(&run.tasks) {
        assert_eq!(m.name, task.name);
        // One job per period over a second, give or take rt-app's start.
        let expected = Nanos::from_secs(1).as_ns() / task.period.as_ns();
        assert!(m.jobs > 0 && m.jobs <= expected + 1, "{m:?}");
        assert_eq!(m.wcet_ns, task.wcet.as_ns());
    }
    assert!(run.ns_per_loop.is_some());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// On m > 1 processors each thread's `cpus` is its task's `cpu` (or all
    /// m CPUs without one) and the import reads them back: a partitioned
    /// set whose tasks use every processor, and a global set, come back as
    /// they were (under SCHED_FIFO, with the priorities they were given).
    #[test]
    fn multiprocessor_sets_come_back_with_their_cpus(seed in 0u64..1000, index in 0u64..50, m in 2u32..5) {
        let mut set = generated(index, false, seed).on_platform(rtlab_model::Platform::new(m));
        let options = ExportOptions::new(Some(1), Nanos::from_secs(10));
        let global = rtapp::export(&set, RunPolicy::Given, None, &options);
        prop_assert!(global.is_err(), "`given` needs priorities");
        for (i, t) in set.tasks.iter_mut().enumerate() {
            t.priority = Some(10 + i as u32);
        }
        let text = rtapp::export(&set, RunPolicy::Given, None, &options).unwrap().document.to_json_string();
        let all: Vec<String> = (0..m).map(|c| c.to_string()).collect();
        let cpus_line = format!("\"cpus\": [\n        {}\n      ]", all.join(",\n        "));
        prop_assert!(text.contains(&cpus_line), "{}", text);
        let mut back = import(&text);
        back.name = set.name.clone();
        prop_assert_eq!(&back, &set);

        for (i, t) in set.tasks.iter_mut().enumerate() {
            t.cpu = Some(i as u32 % m);
        }
        let text = rtapp::export(&set, RunPolicy::Given, None, &options).unwrap().document.to_json_string();
        let mut back = import(&text);
        back.name = set.name.clone();
        prop_assert_eq!(back, set);
    }
}

/// `instance` > 1: import gives one task per instance (`name-IND`); export
/// writes one thread per task (`instance` 1), so import -> export -> import
/// is the identity on the task set, and export -> import -> export on the
/// file (priorities 11 and 10 are what `given` maps two levels to, as in
/// the hand-written set).
#[test]
fn instances_round_trip_as_one_thread_per_task() {
    let workload = r#"{"tasks": {
  "sensor": {"instance": 3, "policy": "SCHED_FIFO", "priority": 11, "run": 1000,
             "timer": {"ref": "unique", "period": 10000, "mode": "absolute"}},
  "logger": {"policy": "SCHED_FIFO", "priority": 10, "run": 5000,
             "timer": {"ref": "unique", "period": 50000, "mode": "absolute"}}
}}"#;
    let set = import(workload);
    let names: Vec<&str> = set.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["sensor-0", "sensor-1", "sensor-2", "logger"]);
    let options = ExportOptions::new(Some(1), Nanos::from_secs(10));
    let text = rtapp::export(&set, RunPolicy::Given, None, &options)
        .unwrap()
        .document
        .to_json_string();
    assert!(!text.contains("instance"));
    assert!(text.contains("\"sensor-2\": {"));
    let back = import(&text);
    assert_eq!(back, set);
    let again = rtapp::export(&back, RunPolicy::Given, None, &options)
        .unwrap()
        .document
        .to_json_string();
    assert_eq!(again, text);
}
