//! The simulator falsifies the multiprocessor locking analysis: on random
//! task sets sharing resources across 2 to 4 processors, whenever
//! `rtlab_analysis::mp_locking` proves a set schedulable under a protocol,
//! the simulated run of that protocol misses no deadline and no job's
//! remote blocking, local blocking or response time exceeds its task's
//! bound. A counterexample is a bug in the bound or in the simulator.
//!
//! The sets: random periods from a small-LCM list (the runs cover two
//! hyperperiods and more, from random offsets), one to three resources,
//! each task with zero to two sections of one to three units at random
//! places in its job, random processors for the partitioned protocols
//! (rate-monotonic priorities), execution times drawn between half and all
//! of C (the bounds hold for any demand up to C).

use std::cell::RefCell;
use std::rc::Rc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRng, TestRunner};
use rtlab_analysis::mp_locking::{analyse, LockingOutcome};
use rtlab_model::mp_locking::{MpProtocol, MpScheduling};
use rtlab_model::policy::PriorityAssignment;
use rtlab_model::results::{EachJob, JobRecord};
use rtlab_model::{CriticalSection, Nanos, Platform, Task, TaskSet};
use rtlab_sim::{ExecModel, LockingProtocol, SimConfig};

/// Periods (units) with a least common multiple of 120.
const PERIODS: [u64; 8] = [10, 12, 15, 20, 24, 30, 40, 60];
/// One unit: 10 µs.
const UNIT: u64 = 10_000;

/// One task: period index, C in units, offset in units, its sections
/// `(resource, start place in percent of the room left, length)`, its
/// processor.
type Drawn = (usize, u64, u64, Vec<(usize, u64, u64)>, u32);

fn task_sets(protocol: MpProtocol) -> impl Strategy<Value = TaskSet> {
    (2u32..=4, 1usize..=3).prop_flat_map(move |(m, resources)| {
        let task = (
            0..PERIODS.len(),
            1u64..=3,
            0u64..30,
            prop::collection::vec((0..resources, 0u64..=100, 1u64..=2), 0..=3),
            0..m,
        );
        // The OMLP's 2m − 1 sections per request leave few dense sets
        // provable: fewer tasks there.
        let most = match protocol {
            MpProtocol::Omlp => 2 * m as usize,
            _ => 3 * m as usize,
        };
        let n = (m as usize + 1)..=most;
        prop::collection::vec(task, n).prop_map(move |drawn| build(protocol, m, drawn))
    })
}

/// The set of `drawn` tasks on `m` processors: sections laid one after the
/// other inside C (never nested), C grown to hold them.
fn build(protocol: MpProtocol, m: u32, drawn: Vec<Drawn>) -> TaskSet {
    let tasks = drawn
        .into_iter()
        .enumerate()
        .map(|(i, (p, c, offset, sections, cpu))| {
            let period = PERIODS[p];
            let lengths: u64 = sections.iter().map(|s| s.2).sum();
            let c = c.max(lengths + 1).min(period);
            let mut at = 0u64;
            let mut placed = Vec::new();
            for (k, &(r, frac, len)) in sections.iter().enumerate() {
                let room = c - at - sections[k..].iter().map(|s| s.2).sum::<u64>();
                let start = at + room * frac / 100;
                if start + len > c {
                    break;
                }
                placed.push(CriticalSection {
                    resource: format!("r{r}"),
                    start: Nanos::from_ns(start * UNIT),
                    length: Nanos::from_ns(len * UNIT),
                });
                at = start + len;
            }
            let mut task = Task::new(
                format!("t{i}"),
                Nanos::from_ns(period * UNIT),
                Nanos::from_ns(c * UNIT),
            )
            .with_offset(Nanos::from_ns(offset * UNIT));
            task.bcet = Some(
                Nanos::from_ns(c * UNIT / 2).max(Nanos::from_ns(
                    placed
                        .last()
                        .map_or(0, |cs| cs.end().unwrap_or_default().as_ns()),
                )),
            );
            task.critical_sections = placed;
            if protocol.scheduling() == MpScheduling::PartitionedFixedPriority {
                task.cpu = Some(cpu);
            }
            task
        })
        .collect();
    TaskSet::new("random", tasks).on_platform(Platform::new(m))
}

/// Simulates `set` under `protocol` and returns every job record.
fn simulate(set: &TaskSet, protocol: MpProtocol, seed: u64) -> Vec<JobRecord> {
    let spec = match protocol.scheduling() {
        MpScheduling::PartitionedFixedPriority => "pfp:rm",
        MpScheduling::GlobalEdf => "gedf",
    };
    let mut config = SimConfig::new(Nanos::from_ns(600 * UNIT));
    config.protocol = LockingProtocol::Multiprocessor(protocol);
    config.exec = ExecModel::Uniform;
    config.seed = seed;
    let jobs = Rc::new(RefCell::new(Vec::new()));
    let sink = jobs.clone();
    rtlab_sim::run(
        set,
        &spec.parse().unwrap(),
        &config,
        Some(Box::new(EachJob(move |r: &JobRecord| {
            sink.borrow_mut().push(*r)
        }))),
    )
    .unwrap();
    let out = jobs.borrow().clone();
    out
}

/// Every job against its task's bounds; the first violation in words.
fn violation(set: &TaskSet, outcome: &LockingOutcome, jobs: &[JobRecord]) -> Option<String> {
    for job in jobs {
        let bound = &outcome.tasks[job.task];
        let name = &set.tasks[job.task].name;
        let (remote, local) = (
            job.remote_blocked.unwrap_or_default(),
            job.local_blocked.unwrap_or_default(),
        );
        if remote > bound.remote_blocking {
            return Some(format!(
                "{name} job {}: remote blocking {remote} > bound {}",
                job.job, bound.remote_blocking
            ));
        }
        if local > bound.local_blocking {
            return Some(format!(
                "{name} job {}: local blocking {local} > bound {}",
                job.job, bound.local_blocking
            ));
        }
        let r = bound.response.wcrt()?;
        match job.response() {
            Some(resp) if resp > r => {
                return Some(format!(
                    "{name} job {}: response {resp} > bound {r}",
                    job.job
                ))
            }
            None if job.deadline.saturating_sub(job.release) < Nanos::from_ns(600 * UNIT)
                && job.release.saturating_add(r) <= Nanos::from_ns(600 * UNIT) =>
            {
                return Some(format!(
                    "{name} job {}: unfinished past its bound {r}",
                    job.job
                ))
            }
            _ => {}
        }
    }
    None
}

/// One protocol's falsification: counts the sets proven schedulable.
fn falsify(protocol: MpProtocol, cases: u32) {
    // MPL_CASES=N searches harder (N sets per protocol) than CI does.
    let cases = std::env::var("MPL_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(cases);
    let proven = std::cell::Cell::new(0u32);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    // The same sets on every CI run; a search (MPL_CASES) draws new ones.
    let mut runner = if std::env::var("MPL_CASES").is_ok() {
        TestRunner::new(config)
    } else {
        let rng = TestRng::deterministic_rng(config.rng_algorithm);
        TestRunner::new_with_rng(config, rng)
    };
    runner
        .run(&(task_sets(protocol), 0u64..4), |(set, seed)| {
            let m = set.processors();
            let outcome = analyse(&set, protocol, PriorityAssignment::RateMonotonic, m).unwrap();
            if outcome.schedulable != Some(true) {
                return Ok(());
            }
            proven.set(proven.get() + 1);
            let jobs = simulate(&set, protocol, seed);
            if std::env::var("MPL_DEBUG").is_ok() {
                let mut worst = (0f64, 0f64, 0f64);
                for j in &jobs {
                    let b = &outcome.tasks[j.task];
                    let f = |x: Nanos, y: Nanos| {
                        if y.is_zero() {
                            0.0
                        } else {
                            x.as_ns() as f64 / y.as_ns() as f64
                        }
                    };
                    worst.0 = worst
                        .0
                        .max(f(j.remote_blocked.unwrap_or_default(), b.remote_blocking));
                    worst.1 = worst
                        .1
                        .max(f(j.local_blocked.unwrap_or_default(), b.local_blocking));
                    if let (Some(r), Some(w)) = (j.response(), b.response.wcrt()) {
                        worst.2 = worst.2.max(f(r, w));
                    }
                }
                eprintln!(
                    "{protocol} m={m} n={} jobs={} worst remote {:.2} local {:.2} resp {:.2}",
                    set.tasks.len(),
                    jobs.len(),
                    worst.0,
                    worst.1,
                    worst.2
                );
            }
            if let Some(v) = violation(&set, &outcome, &jobs) {
                prop_assert!(false, "{protocol}: {v}\n{set:#?}");
            }
            if protocol == MpProtocol::Omlp {
                // Inheritance: a job that does not wait is never
                // pi-blocked.
                let local: Option<&JobRecord> = jobs
                    .iter()
                    .find(|j| j.local_blocked.is_some_and(|l| !l.is_zero()));
                prop_assert!(local.is_none(), "omlp local pi-blocking: {local:?}");
            }
            Ok(())
        })
        .unwrap();
    assert!(
        proven.get() >= cases / 8,
        "{protocol}: only {} of {cases} sets proven: the test checks too little",
        proven.get()
    );
}

#[test]
fn mpcp_bounds_hold_in_simulation() {
    falsify(MpProtocol::Mpcp, 256);
}

#[test]
fn dpcp_bounds_hold_in_simulation() {
    falsify(MpProtocol::Dpcp, 256);
}

#[test]
fn fmlp_plus_bounds_hold_in_simulation() {
    falsify(MpProtocol::FmlpPlus, 256);
}

#[test]
fn mrsp_bounds_hold_in_simulation() {
    falsify(MpProtocol::Mrsp, 256);
}

#[test]
fn msrp_bounds_hold_in_simulation() {
    falsify(MpProtocol::Msrp, 256);
}

#[test]
fn omlp_bounds_hold_in_simulation() {
    falsify(MpProtocol::Omlp, 256);
}
