//! The simulator falsifies the multiprocessor analysis: on random task sets
//! on m = 2, 4 and 8 processors, whatever a global test (or a partitioning
//! heuristic) proves schedulable, the matching simulated scheduler runs
//! without a deadline miss, and no simulated response time exceeds a bound
//! the response-time analyses computed.
//!
//! Synchronous periodic releases with WCET execution are one of the
//! sporadic behaviours the (sufficient) tests cover, so a miss here would be
//! a wrong "schedulable". The catalog's examples are pinned too: Dhall's
//! effect misses under G-EDF and G-RM; `no-partition` meets every deadline
//! under G-EDF and G-RM though no partition fits.

use std::cell::RefCell;
use std::rc::Rc;

use proptest::prelude::*;
use rtlab_analysis::global::priority::order;
use rtlab_analysis::multiprocessor::{analyse, MultiprocessorTest, Partitioned};
use rtlab_model::catalog::build;
use rtlab_model::policy::PriorityAssignment;
use rtlab_model::results::{EachJob, JobRecord};
use rtlab_model::{Nanos, Platform, Task, TaskSet};
use rtlab_sim::{simulate, SchedulerSpec, SimConfig};

/// Periods with a small least common multiple (120 units of 1 us).
const PERIODS: [u64; 8] = [4, 5, 6, 8, 10, 12, 15, 20];
const UNIT: u64 = 1_000;

/// `n` tasks for `m` processors: each with C from 1 to T·load/10 units
/// (so total U stays near m times a few tenths) and D between C and T.
fn task_sets(m: u32) -> impl Strategy<Value = TaskSet> {
    let task =
        (0..PERIODS.len(), 1u64..=100, 0u64..=100, 3u64..=9).prop_map(|(p, c_pct, d_pct, load)| {
            let t = PERIODS[p];
            let c = (t * load * c_pct / 1000).clamp(1, t);
            let d = c + (t - c) * d_pct / 100;
            (t, c, d)
        });
    let n = (m as usize + 1)..=(2 * m as usize + 2);
    prop::collection::vec(task, n).prop_map(move |tasks| {
        let tasks = tasks
            .into_iter()
            .enumerate()
            .map(|(i, (t, c, d))| {
                Task::new(
                    format!("t{i}"),
                    Nanos::from_ns(t * UNIT),
                    Nanos::from_ns(c * UNIT),
                )
                .with_deadline(Nanos::from_ns(d * UNIT))
            })
            .collect();
        TaskSet::new("random", tasks).on_platform(Platform::new(m))
    })
}

/// The simulated scheduler a test is about, and the set it runs (the
/// analysed priority order written into `priority` for G-FP; the partition
/// found written into `cpu` for the partitioned tests).
fn simulated(set: &TaskSet, m: u32, test: MultiprocessorTest) -> (TaskSet, &'static str) {
    match test {
        MultiprocessorTest::Gedf(_) => (set.clone(), "gedf"),
        MultiprocessorTest::Gfp(rule, _) => {
            let order = order(set, rule, m).unwrap();
            let mut given = set.clone();
            for (rank, &i) in order.iter().enumerate() {
                given.tasks[i].priority = Some((order.len() - rank) as u32);
            }
            (given, "gfp:given")
        }
        MultiprocessorTest::Partitioned(kind, _) => {
            let outcome = analyse(set, m, test);
            let placed = outcome.partition.unwrap().apply(set);
            let spec = match kind {
                Partitioned::Edf => "pedf",
                Partitioned::Fixed(PriorityAssignment::RateMonotonic) => "pfp:rm",
                Partitioned::Fixed(PriorityAssignment::Given) => "pfp:given",
                Partitioned::Fixed(_) => "pfp:dm",
            };
            (placed, spec)
        }
    }
}

/// One hyperperiod plus the longest deadline, so every job released in the
/// hyperperiod is judged.
fn horizon(set: &TaskSet) -> Nanos {
    let longest = set.tasks.iter().map(|t| t.deadline).max().unwrap();
    set.hyperperiod().unwrap() + longest
}

/// Every job record of `set` under `spec`.
fn records(set: &TaskSet, spec: &str) -> (u64, Vec<JobRecord>) {
    let sink = Rc::new(RefCell::new(Vec::new()));
    let into = Rc::clone(&sink);
    let spec: SchedulerSpec = spec.parse().unwrap();
    let out = rtlab_sim::run(
        set,
        &spec,
        &SimConfig::new(horizon(set)),
        Some(Box::new(EachJob(move |r: &JobRecord| {
            into.borrow_mut().push(*r)
        }))),
    )
    .unwrap();
    let records = sink.borrow().clone();
    (out.report.deadline_misses, records)
}

/// Every global and partitioned test and DkC, RM and given orders too.
fn tests() -> Vec<MultiprocessorTest> {
    let mut all = MultiprocessorTest::ALL.to_vec();
    for name in [
        "gfp-rm:rta",
        "gfp-rm:rta-lc",
        "pfp-rm:ff",
        "pedf:wf",
        "pedf:bf-decreasing-density",
    ] {
        all.push(MultiprocessorTest::from_name(name).unwrap());
    }
    all
}

fn check(set: &TaskSet, m: u32) -> Result<u32, TestCaseError> {
    let mut proven = 0;
    for test in tests() {
        let outcome = analyse(set, m, test);
        if outcome.schedulable != Some(true) {
            continue;
        }
        proven += 1;
        let (run_set, spec) = simulated(set, m, test);
        let (misses, jobs) = records(&run_set, spec);
        prop_assert_eq!(misses, 0, "{} proved it, {} missed", test, spec);
        for job in &jobs {
            let Some(bound) = outcome.responses.get(job.task).and_then(|r| r.wcrt()) else {
                continue;
            };
            if let Some(finish) = job.finish {
                prop_assert!(
                    finish - job.release <= bound,
                    "{}: task {} job {} responded in {} > bound {}",
                    test,
                    job.task,
                    job.job,
                    finish - job.release,
                    bound
                );
            }
        }
    }
    Ok(proven)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn what_a_test_proves_two_processors_meet(set in task_sets(2)) {
        check(&set, 2)?;
    }

    #[test]
    fn what_a_test_proves_four_processors_meet(set in task_sets(4)) {
        check(&set, 4)?;
    }

    #[test]
    fn what_a_test_proves_eight_processors_meet(set in task_sets(8)) {
        check(&set, 8)?;
    }
}

/// The property tests are not vacuous: on a fixed sample, each of m = 2,
/// 4, 8 has sets that some test proves and the simulator then checks.
#[test]
fn the_generator_yields_proven_sets() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    for m in [2, 4, 8] {
        let mut runner = TestRunner::deterministic();
        let mut proven = 0;
        for _ in 0..16 {
            let set = task_sets(m).new_tree(&mut runner).unwrap().current();
            proven += check(&set, m).unwrap();
        }
        assert!(proven >= 16, "m = {m}: only {proven} proofs in 16 sets");
    }
}

/// Dhall's effect: G-EDF and G-RM miss (the heavy task), the partition
/// that pedf:ff-decreasing finds meets every deadline, and so does G-FP in
/// DkC order (heavy first), which gfp-dkc:rta proves.
#[test]
fn dhall_catalog_set() {
    let set = build("dhall").unwrap();
    let config = SimConfig::new(Nanos::from_ms(10_100));
    let gedf = simulate(&set, &"gedf".parse().unwrap(), &config).unwrap();
    assert!(gedf.tasks[2].misses > 0);
    assert_eq!(
        gedf.tasks[2].first_miss_ns,
        Some(Nanos::from_ms(101).as_ns())
    );
    let grm = simulate(&set, &"gfp:rm".parse().unwrap(), &config).unwrap();
    assert!(grm.tasks[2].misses > 0);
    for name in ["pedf:ff-decreasing", "gfp-dkc:rta"] {
        let test = MultiprocessorTest::from_name(name).unwrap();
        let (run_set, spec) = simulated(&set, 2, test);
        assert_eq!(records(&run_set, spec).0, 0, "{name}");
    }
}

/// `no-partition`: G-EDF and G-RM meet every deadline over the
/// hyperperiod (6 ms, schedule worked by hand in the catalog), while no
/// partitioning heuristic places all three tasks.
#[test]
fn no_partition_catalog_set() {
    let set = build("no-partition").unwrap();
    for spec in ["gedf", "gfp:rm", "edzl"] {
        let (misses, jobs) = records(&set, spec);
        assert_eq!(misses, 0, "{spec}");
        // 3 + 2 + 2 jobs released in [0, 6), judged by 6 + 3.
        assert!(jobs.len() >= 7, "{spec}: {} jobs", jobs.len());
    }
    let outcome = analyse(
        &set,
        2,
        MultiprocessorTest::from_name("pedf:ff-decreasing").unwrap(),
    );
    assert!(!outcome.partition.unwrap().fits());
}
