//! The dispatcher on real threads. These tests assert what must hold on a
//! noisy 2-core VM (every job recorded once, in release order per task,
//! the dispatcher's counts and costs present, the run ends, the watchdog
//! ends a hung dispatcher) and never tight timings. They run one at a time
//! under the per-CPU measurement lock, and need root
//! (`#[ignore = "needs root"]`: `.ci/run` runs them).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rtlab_model::policy::RunPolicy;
use rtlab_model::policy::{LockingProtocol, MissRule};
use rtlab_model::{file, Nanos, Task, TaskSet};
use rtlab_rt::dispatcher::{run_dispatched, DispatchConfig};
use rtlab_rt::executor::{JobRecord, JobSink, RunConfig, RunReport};

static NEVER: AtomicBool = AtomicBool::new(false);

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

struct Collect(Arc<Mutex<Vec<JobRecord>>>);

impl JobSink for Collect {
    fn job(&mut self, job: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        self.0.lock().unwrap().push(*job);
        Ok(())
    }
}

fn dispatched(set: &TaskSet, cfg: &RunConfig, d: &DispatchConfig) -> (RunReport, Vec<JobRecord>) {
    let (report, jobs, _) = dispatched_timed(set, cfg, d);
    (report, jobs)
}

/// [`dispatched`], with how long the run took (not the wait for the other
/// tests' runs).
fn dispatched_timed(
    set: &TaskSet,
    cfg: &RunConfig,
    d: &DispatchConfig,
) -> (RunReport, Vec<JobRecord>, std::time::Duration) {
    let _serial = common::one_at_a_time();
    let jobs = Arc::new(Mutex::new(Vec::new()));
    let began = Instant::now();
    let (report, written, _) =
        run_dispatched(set, cfg, d, &NEVER, vec![Box::new(Collect(jobs.clone()))])
            .expect("the run");
    let took = began.elapsed();
    assert!(written.iter().all(Result::is_ok));
    let jobs = jobs.lock().unwrap().clone();
    (report, jobs, took)
}

/// Every release before the end is recorded exactly once, numbered
/// 0, 1, 2, ... per task at offset + k T, and the summary counts them.
fn every_job_once(set: &TaskSet, report: &RunReport, jobs: &[JobRecord]) {
    let mut per_task: BTreeMap<usize, Vec<&JobRecord>> = BTreeMap::new();
    for j in jobs {
        per_task.entry(j.task).or_default().push(j);
    }
    let ended = Nanos::from_ns(report.ended_ns);
    for (i, t) in set.tasks.iter().enumerate() {
        let mut mine = per_task.remove(&i).unwrap_or_default();
        mine.sort_by_key(|j| j.job);
        let expected = ended.saturating_sub(t.offset).div_ceil(t.period);
        assert_eq!(mine.len() as u64, expected, "task {}", t.name);
        for (k, j) in mine.iter().enumerate() {
            assert_eq!(j.job, k as u64);
            assert_eq!(
                j.release,
                t.offset + t.period.checked_mul(k as u64).unwrap()
            );
            if let (Some(s), Some(f)) = (j.start, j.finish) {
                assert!(j.release <= s && s <= f, "{j:?}");
            }
        }
        assert_eq!(report.tasks[i].released, expected, "task {}", t.name);
    }
}

#[test]
#[ignore = "needs root"]
fn hartstone_runs_under_edf_and_multiburst_every_job_recorded_with_the_dispatchers_costs() {
    rtlab_testkit::require_root();
    let set = file::load("builtin:hartstone-ph").unwrap().set;
    for spec in ["edf", "multiburst"] {
        let mut cfg = RunConfig::new(ms(1200), RunPolicy::FifoOrder);
        cfg.on_miss = MissRule::Continue;
        let d = DispatchConfig::new(spec.parse().unwrap());
        let began = Instant::now();
        let (report, jobs) = dispatched(&set, &cfg, &d);
        assert!(began.elapsed().as_secs_f64() < 10.0);
        every_job_once(&set, &report, &jobs);
        let costs = report.dispatcher.as_ref().expect("the costs");
        assert_eq!(costs.scheduler, spec);
        assert!(costs.decisions > 0 && costs.dispatches > 0);
        assert!(costs.dispatch_latency.count > 0);
        assert!(costs.dispatch_latency.p50_ns <= costs.dispatch_latency.p999_ns);
        // Every completion reached the dispatcher as a post, and was timed.
        assert_eq!(costs.post_latency.count, report.totals.completed);
        assert!(costs.cpu_share > 0.0 && costs.cpu_share < 1.0);
        assert_eq!(costs.watchdog, None);
        assert_eq!(report.context_switches, costs.context_switches);
        println!(
            "{spec}: misses {}, latency p50 {} p99.9 {}, decision p50 {}, cpu {:.4}, cs/s {:.1}",
            report.deadline_misses,
            costs.dispatch_latency.p50_ns,
            costs.dispatch_latency.p999_ns,
            costs.decision_cost.p50_ns,
            costs.cpu_share,
            report.context_switches_per_s
        );
    }
}

#[test]
#[ignore = "needs root"]
fn critical_sections_go_through_the_dispatcher_under_ipcp() {
    rtlab_testkit::require_root();
    let set = file::load("builtin:priority-inversion").unwrap().set;
    let cfg = RunConfig::new(ms(600), RunPolicy::FifoOrder);
    let mut d = DispatchConfig::new("fp:dm".parse().unwrap());
    d.protocol = LockingProtocol::Ipcp;
    let (report, jobs) = dispatched(&set, &cfg, &d);
    every_job_once(&set, &report, &jobs);
    // Under IPCP on one processor no job waits on a lock.
    for j in &jobs {
        if set.tasks[j.task].critical_sections.is_empty() {
            continue;
        }
        assert_eq!(j.blocked, Some(Nanos::ZERO), "{j:?}");
    }
}

#[test]
#[ignore = "needs root"]
fn the_watchdog_ends_a_hung_dispatcher_with_what_was_recorded() {
    rtlab_testkit::require_root();
    let set = TaskSet::new(
        "two",
        vec![Task::new("a", ms(10), ms(2)), Task::new("b", ms(20), ms(5))],
    );
    let cfg = RunConfig::new(Nanos::from_secs(3), RunPolicy::FifoOrder);
    let mut d = DispatchConfig::new("edf".parse().unwrap());
    d.hang_at = Some(ms(300));
    d.watchdog = ms(200);
    let (report, jobs, took) = dispatched_timed(&set, &cfg, &d);
    let costs = report.dispatcher.as_ref().unwrap();
    let why = costs.watchdog.as_deref().expect("the watchdog's verdict");
    assert!(why.contains("stalled"), "{why}");
    assert!(
        report.ended_ns < Nanos::from_secs(1).as_ns(),
        "{}",
        report.ended_ns
    );
    assert!(took.as_secs_f64() < 3.0, "the run went on: {took:?}");
    // What was recorded before the hang is kept.
    assert!(jobs.len() >= 20, "{}", jobs.len());
    assert!(report.released >= 20);
}
