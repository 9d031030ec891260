//! One phased set, simulated and run on real threads: the two worlds make
//! the same releases (task, job index, release instant) and ask each job
//! for the same C, job for job. Phases mean one thing (`PhasePlan`).
//!
//! The real half needs root (SCHED_FIFO): `#[ignore = "needs root"]`, run
//! as root with `-- --ignored`. It asserts what must hold on a loaded
//! 2-core machine: the releases and the C asked, never timings.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use rtlab_host::cpu_lock::{lock_cpus, WhenBusy};
use rtlab_host::kernel_state::StateDir;
use rtlab_model::phase::Phase;
use rtlab_model::policy::RunPolicy;
use rtlab_model::results::JobRecord;
use rtlab_model::{Nanos, Task, TaskSet};
use rtlab_rt::executor::{self, JobSink, RunConfig};
use rtlab_sim::{MissRule, SchedulerSpec, SimConfig, Simulator};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

/// (task, job) -> (release, C asked).
type Jobs = BTreeMap<(usize, u64), (Nanos, Option<Nanos>)>;

struct Collect(Arc<Mutex<Jobs>>);

impl JobSink for Collect {
    fn job(&mut self, job: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        let previous = self
            .0
            .lock()
            .unwrap()
            .insert((job.task, job.job), (job.release, job.demand));
        assert!(
            previous.is_none(),
            "job {}/{} recorded twice",
            job.task,
            job.job
        );
        Ok(())
    }
}

/// a (T 20, C 2) and b (T 30, C 3), U = 0.2, for 300 ms; three phases:
/// 60..120 ms at x2; 120..200 ms at 40 % (C x2 again, as a target
/// utilization) suspending b and adding c (T 25, C 1, offset 5, so first
/// released at 125 ms); 240..300 ms at x0.5.
fn phased() -> (TaskSet, Vec<Phase>, Nanos) {
    let set = TaskSet::new(
        "phased",
        vec![Task::new("a", ms(20), ms(2)), Task::new("b", ms(30), ms(3))],
    );
    let mut middle = Phase::parse("120ms..200ms:40%").unwrap();
    middle.suspended = vec![1];
    middle.tasks = vec![Task::new("c", ms(25), ms(1)).with_offset(ms(5))];
    let phases = vec![
        Phase::parse("60ms..120ms:x2").unwrap(),
        middle,
        Phase::parse("240ms..300ms:x0.5").unwrap(),
    ];
    (set, phases, ms(300))
}

fn simulated(set: &TaskSet, phases: &[Phase], duration: Nanos) -> Jobs {
    let mut config = SimConfig::new(duration);
    config.on_miss = MissRule::Continue;
    config.phases = phases.to_vec();
    let mut sim = Simulator::new(set, &SchedulerSpec::Edf, config).unwrap();
    let jobs = Arc::new(Mutex::new(Jobs::new()));
    let mut sink = Collect(jobs.clone());
    sim.on_job(move |j: &JobRecord| {
        sink.job(j, Nanos::ZERO).unwrap();
    });
    sim.report();
    let jobs = std::mem::take(&mut *jobs.lock().unwrap());
    jobs
}

#[test]
fn the_simulator_releases_the_phased_jobs_counted_by_hand() {
    let (set, phases, duration) = phased();
    let sim = simulated(&set, &phases, duration);
    // By hand: a releases 15 jobs (0..280 by 20); b 0, 30, 60, 90 then
    // suspended over [120, 200): 120, 150, 180 move to 210, so 210, 240,
    // 270 (indices 7, 8, 9); c 125, 150, 175 (indices 0, 1, 2).
    let count = |task| sim.keys().filter(|k| k.0 == task).count();
    assert_eq!((count(0), count(1), count(2)), (15, 7, 3));
    let b: Vec<(u64, Nanos)> = sim
        .iter()
        .filter(|(k, _)| k.0 == 1)
        .map(|(k, v)| (k.1, v.0))
        .collect();
    assert_eq!(
        b,
        vec![
            (0, ms(0)),
            (1, ms(30)),
            (2, ms(60)),
            (3, ms(90)),
            (7, ms(210)),
            (8, ms(240)),
            (9, ms(270))
        ]
    );
    assert_eq!(sim[&(0, 3)], (ms(60), Some(ms(4))));
    assert_eq!(sim[&(0, 6)], (ms(120), Some(ms(4))));
    assert_eq!(sim[&(2, 0)], (ms(125), Some(ms(2))));
    assert_eq!(sim[&(0, 12)], (ms(240), Some(ms(1))));
    assert_eq!(sim[&(1, 9)], (ms(270), Some(Nanos::from_us(1500))));
}

#[test]
#[ignore = "needs root"]
fn the_simulator_and_the_executor_release_the_same_jobs_with_the_same_c() {
    rtlab_testkit::require_root();
    let (set, phases, duration) = phased();
    let sim = simulated(&set, &phases, duration);
    let cpu = executor::default_cpu();
    let _lock = lock_cpus(&StateDir::from_env(), &[cpu], WhenBusy::Wait, |h| {
        eprintln!("waiting for CPU {}: {h}", h.cpu)
    })
    .expect("the measurement lock");
    let mut cfg = RunConfig::new(duration, RunPolicy::RateMonotonic);
    cfg.cpu = Some(cpu);
    cfg.phases = phases;
    let jobs = Arc::new(Mutex::new(Jobs::new()));
    let (report, written) = executor::run_recording(
        &set,
        &cfg,
        &AtomicBool::new(false),
        vec![Box::new(Collect(jobs.clone()))],
    )
    .unwrap();
    assert!(written.iter().all(Result::is_ok));
    assert!(report.lost_tasks.is_empty() && report.jobs_dropped == 0);
    let real = std::mem::take(&mut *jobs.lock().unwrap());
    // The same jobs, released at the same instants.
    let releases =
        |j: &Jobs| -> Vec<((usize, u64), Nanos)> { j.iter().map(|(k, v)| (*k, v.0)).collect() };
    assert_eq!(releases(&real), releases(&sim));
    // Every job the executor started was asked for the simulator's C; one
    // never started before the end (the machine is shared) has none.
    let started: Vec<_> = real.iter().filter(|(_, v)| v.1.is_some()).collect();
    assert!(
        started.len() + 2 >= sim.len(),
        "{} of {}",
        started.len(),
        sim.len()
    );
    for (k, v) in started {
        assert_eq!(v.1, sim[k].1, "job {k:?}");
    }
    assert_eq!(report.phases.len(), 3);
}
