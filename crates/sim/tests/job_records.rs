//! The simulator emits one job record per released job, and its per-task
//! report is exactly the shared result model's summary of those records
//! (`TaskSummary::from_jobs`), whatever the overrun rule.

use std::cell::RefCell;
use std::rc::Rc;

use rtlab_model::results::{JobRecord, TaskSummary};
use rtlab_model::{file, Nanos};
use rtlab_sim::{ExecModel, LockingProtocol, MissRule, SimConfig, Simulator};

fn records_and_report(
    set: &str,
    scheduler: &str,
    on_miss: MissRule,
    duration: Nanos,
) -> (Vec<JobRecord>, rtlab_sim::SimReport) {
    let set = file::load(set).unwrap().set;
    let mut config = SimConfig::new(duration);
    config.on_miss = on_miss;
    config.exec = ExecModel::Uniform;
    config.seed = 9;
    config.protocol = LockingProtocol::None;
    let mut sim = Simulator::new(&set, &scheduler.parse().unwrap(), config).unwrap();
    let records = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&records);
    sim.on_job(move |job| sink.borrow_mut().push(*job));
    sim.run();
    let report = sim.report();
    let records = records.borrow().clone();
    (records, report)
}

#[test]
fn the_report_is_the_summary_of_the_emitted_job_records() {
    let cases = [
        ("builtin:lf-scenario-4", "fp:dm", MissRule::Continue, 1_000),
        ("builtin:lf-scenario-4", "fp:dm", MissRule::Abort, 1_000),
        ("builtin:lf-scenario-4", "np-edf", MissRule::Skip, 1_000),
        ("builtin:hartstone-ph", "multiburst", MissRule::Skip, 3_000),
        ("builtin:avionics", "rr:2ms", MissRule::Continue, 2_500),
    ];
    for (set, scheduler, on_miss, ms) in cases {
        let duration = Nanos::from_ms(ms);
        let (records, report) = records_and_report(set, scheduler, on_miss, duration);
        let what = format!("{set} {scheduler} {on_miss:?}");
        assert!(!records.is_empty(), "{what}");
        for (i, reported) in report.tasks.iter().enumerate() {
            let mine: Vec<&JobRecord> = records.iter().filter(|r| r.task == i).collect();
            // Every released job exactly once, numbered 0.. with skips left out.
            let mut jobs: Vec<u64> = mine.iter().map(|r| r.job).collect();
            jobs.sort_unstable();
            jobs.dedup();
            assert_eq!(jobs.len(), mine.len(), "{what}: a job recorded twice");
            assert_eq!(mine.len() as u64, reported.released, "{what}");
            let mut summary = TaskSummary::from_jobs(mine.iter().copied(), duration);
            summary.record_skipped(reported.skipped);
            assert_eq!(&summary.metrics(&reported.name), reported, "{what}");
        }
    }
}

#[test]
fn aborted_and_unfinished_jobs_are_recorded_as_such() {
    // lf-scenario-4 under fp:dm: t2 (T = 50 ms, D = 45 ms) misses every job.
    let (records, report) = records_and_report(
        "builtin:lf-scenario-4",
        "fp:dm",
        MissRule::Abort,
        Nanos::from_ms(1_000),
    );
    let aborted = records.iter().filter(|r| r.aborted).count() as u64;
    assert!(aborted > 0);
    assert_eq!(aborted, report.aborted);
    assert!(records
        .iter()
        .filter(|r| r.aborted)
        .all(|r| r.finish.is_none() && r.missed(Nanos::ZERO)));
    let (records, report) = records_and_report(
        "builtin:lf-scenario-4",
        "fp:dm",
        MissRule::Continue,
        Nanos::from_ms(1_000),
    );
    let unfinished = records.iter().filter(|r| r.finish.is_none()).count() as u64;
    assert_eq!(
        unfinished,
        report.tasks.iter().map(|t| t.unfinished).sum::<u64>()
    );
    assert!(records.iter().all(|r| !r.aborted));
    assert!(records.iter().filter(|r| r.finish.is_some()).all(|r| r
        .start
        .is_some_and(|s| s >= r.release && Some(s) <= r.finish)));
}
