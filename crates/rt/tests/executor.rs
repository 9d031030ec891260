//! The real-thread executor against the kernel. These tests assert what
//! must hold on a noisy 2-core VM (every job recorded once, ordering,
//! counts, the run ends) and never tight timings. They share CPU 1 and the
//! cpuset hierarchy, so they run one at a time (`common::one_at_a_time`).
//! Those that need root are `#[ignore = "needs root"]` (run them as root
//! with `-- --ignored`).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rtlab_model::policy::RunPolicy;
use rtlab_model::{file, Nanos, Task, TaskSet};
use rtlab_rt::executor::{
    run, run_recording, JobRecord, JobSink, LockingProtocol, MissRule, RunConfig, RunReport,
};
use rtlab_rt::RtError;

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

/// A run's report and every job record its writer received, in the order
/// received.
struct Recorded {
    report: RunReport,
    jobs: Vec<JobRecord>,
}

/// Keeps what the writer thread hands it (a test's runs are short).
struct Collect(Arc<Mutex<Vec<JobRecord>>>);

impl JobSink for Collect {
    fn job(&mut self, job: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        self.0.lock().unwrap().push(*job);
        Ok(())
    }
}

/// Runs with the job records collected (callers hold `SERIAL`).
fn record(set: &TaskSet, cfg: &RunConfig) -> Result<Recorded, RtError> {
    let jobs = Arc::new(Mutex::new(Vec::new()));
    let (report, written) = run_recording(
        set,
        cfg,
        &AtomicBool::new(false),
        vec![Box::new(Collect(jobs.clone()))],
    )?;
    assert!(written.iter().all(Result::is_ok));
    let jobs = std::mem::take(&mut *jobs.lock().unwrap());
    Ok(Recorded { report, jobs })
}

fn execute(set: &TaskSet, cfg: &RunConfig) -> Result<Recorded, RtError> {
    let _one_at_a_time = common::one_at_a_time();
    record(set, cfg)
}

/// U = 0.2, periods of 20 and 50 ms, one with an offset.
fn light_set() -> TaskSet {
    TaskSet::new(
        "light",
        vec![
            Task::new("fast", ms(20), ms(2)),
            Task::new("slow", ms(50), ms(5)).with_offset(ms(3)),
        ],
    )
}

/// Releases offset + kT before `duration`.
fn releases(task: &Task, duration: Nanos) -> u64 {
    duration.saturating_sub(task.offset).div_ceil(task.period)
}

/// Every release before the end has exactly one record, each task's in job
/// order, with start >= release and finish >= start, and the
/// release/deadline the model gives; the summary counts the same jobs.
fn assert_every_job_recorded_once(set: &TaskSet, recorded: &Recorded, duration: Nanos) {
    let report = &recorded.report;
    assert_eq!(report.jobs_dropped, 0);
    let mut per_task: BTreeMap<usize, Vec<&JobRecord>> = BTreeMap::new();
    for j in &recorded.jobs {
        per_task.entry(j.task).or_default().push(j);
    }
    for (i, task) in set.tasks.iter().enumerate() {
        let jobs = per_task.remove(&i).unwrap_or_default();
        let expected = releases(task, duration) - report.tasks[i].skipped;
        assert_eq!(
            jobs.len() as u64,
            expected,
            "{}: one record per release",
            task.name
        );
        assert_eq!(report.tasks[i].released, expected);
        let mut previous: Option<&JobRecord> = None;
        for j in &jobs {
            let release = task.offset + Nanos::from_ns(task.period.as_ns() * j.job);
            assert_eq!(j.release, release, "{} job {}", task.name, j.job);
            assert_eq!(j.deadline, release + task.deadline);
            if let Some(p) = previous {
                assert!(j.job > p.job, "{}: job numbers increase", task.name);
            }
            if let Some(s) = j.start {
                assert!(s >= j.release, "{} job {} started early", task.name, j.job);
                if let Some(p) = previous.and_then(|p| p.finish) {
                    assert!(
                        s >= p,
                        "{} job {} started before its predecessor finished",
                        task.name,
                        j.job
                    );
                }
            }
            if let (Some(s), Some(f)) = (j.start, j.finish) {
                assert!(f >= s);
            }
            assert!(j.finish.is_none() || j.start.is_some());
            previous = Some(j);
        }
        let completed = jobs.iter().filter(|j| j.finish.is_some()).count() as u64;
        assert_eq!(report.tasks[i].completed, completed, "{}", task.name);
    }
}

#[test]
#[ignore = "needs root"]
fn a_light_set_under_rm_records_every_job_and_misses_nothing() {
    rtlab_testkit::require_root();
    let set = light_set();
    let duration = Nanos::from_secs(2);
    let cfg = RunConfig::new(duration, RunPolicy::RateMonotonic);
    let recorded = execute(&set, &cfg).unwrap();
    assert_every_job_recorded_once(&set, &recorded, duration);
    let report = &recorded.report;
    assert_eq!(report.deadline_misses, 0, "{:#?}", report.tasks);
    assert_eq!(report.completed, report.released);
    assert!(!report.interrupted);
    assert_eq!(report.ended_ns, duration.as_ns());
    assert_eq!(
        report.scheduler.map(|m| m.to_string()).as_deref(),
        Some("fp:rm")
    );
    // Pinned: every job finished on the CPU asked for.
    let cpu = cfg.cpu.unwrap() as u32;
    assert!(recorded.jobs.iter().all(|j| j.cpu == Some(cpu)));
    assert_eq!(report.tasks[0].thread_policy, "SCHED_FIFO priority 11");
    assert_eq!(report.tasks[1].thread_policy, "SCHED_FIFO priority 10");
}

#[test]
fn sched_other_runs_without_privileges_and_records_every_job() {
    let set = light_set();
    let duration = ms(500);
    let mut cfg = RunConfig::new(duration, RunPolicy::Other);
    cfg.mlock = false;
    let recorded = execute(&set, &cfg).unwrap();
    assert_every_job_recorded_once(&set, &recorded, duration);
    assert_eq!(recorded.report.scheduler, None);
}

/// paper 000 scenario 1 under fifo-order: both tasks are released together
/// every 50 ms; t1 is declared first, so it runs first and t2 (23 ms, D =
/// 25 ms) cannot finish before 15 + 23 = 38 ms: every t2 job misses. The
/// order is FIFO's only for a release both threads sleep until: when a
/// stall of the machine ends t2's previous job past it, t2 goes on to its
/// next job at once, ahead of t1 waiting behind it (seen in CI), so those
/// releases are not checked (at least half of them must be).
#[test]
#[ignore = "needs root"]
fn fifo_order_runs_simultaneous_releases_in_declaration_order() {
    rtlab_testkit::require_root();
    let set = file::load("builtin:lf-scenario-1").unwrap().set;
    let duration = ms(500);
    let recorded = execute(&set, &RunConfig::new(duration, RunPolicy::FifoOrder)).unwrap();
    assert_every_job_recorded_once(&set, &recorded, duration);
    let report = &recorded.report;
    let t1: Vec<_> = recorded.jobs.iter().filter(|j| j.task == 0).collect();
    let t2: Vec<_> = recorded.jobs.iter().filter(|j| j.task == 1).collect();
    let mut checked = 0;
    for (k, (a, b)) in t1.iter().zip(&t2).enumerate() {
        assert_eq!(a.release, b.release);
        let waited_for_release = k == 0
            || [t1[k - 1], t2[k - 1]]
                .iter()
                .all(|p| p.finish.is_some_and(|f| f <= a.release));
        if !waited_for_release {
            continue;
        }
        checked += 1;
        assert!(
            b.start.unwrap() >= a.finish.unwrap(),
            "t2 job {} started before t1's job of the same release finished",
            b.job
        );
    }
    assert!(
        2 * checked >= t1.len(),
        "{checked} of {} releases",
        t1.len()
    );
    assert_eq!(report.tasks[1].misses, report.tasks[1].released);
    assert_eq!(report.tasks[0].misses, 0);
}

/// C = 30 ms every 10 ms: an overload. The run still ends at its duration,
/// every release is accounted for, and the unfinished job is recorded.
#[test]
#[ignore = "needs root"]
fn an_overrunning_task_is_stopped_at_the_end_and_every_release_is_accounted_for() {
    rtlab_testkit::require_root();
    let hog = Task::new("hog", ms(10), ms(30)).with_deadline(ms(40));
    let set = TaskSet::new("overload", vec![hog]);
    let duration = ms(300);
    // Held across both runs and the cool-down below.
    let _one_at_a_time = common::one_at_a_time();
    for on_miss in [MissRule::Continue, MissRule::Skip] {
        let mut cfg = RunConfig::new(duration, RunPolicy::RateMonotonic);
        cfg.on_miss = on_miss;
        let began = Instant::now();
        let recorded = record(&set, &cfg).unwrap();
        let wall = began.elapsed();
        // Generous: only that the run did end near its duration, not
        // after the 30 releases' worth of work (900 ms).
        assert!(wall.as_millis() < 800, "{on_miss:?}: took {wall:?}");
        assert_every_job_recorded_once(&set, &recorded, duration);
        let t = &recorded.report.tasks[0];
        assert_eq!(t.released + t.skipped, 30, "{on_miss:?}");
        assert!(t.misses > 0);
        assert!(
            t.unfinished >= 1,
            "{on_miss:?}: the job running at the end is unfinished"
        );
        match on_miss {
            MissRule::Continue => assert_eq!(t.skipped, 0),
            MissRule::Skip => assert!(t.skipped > 0),
            MissRule::Abort => unreachable!("not a real-run rule"),
        }
    }
    // CPU 1 was kept 100% busy at SCHED_FIFO for about 0.7 s: let the
    // kernel's 1 s RT-throttling / fair-server window pass, so that starved
    // SCHED_OTHER work does not preempt the next real-time test's threads.
    std::thread::sleep(std::time::Duration::from_secs(1));
}

#[test]
#[ignore = "needs root"]
fn edf_on_one_cpu_runs_in_a_cpuset_that_is_removed_afterwards() {
    rtlab_testkit::require_root();
    if !std::path::Path::new("/sys/fs/cgroup/cpuset/cpuset.cpus").exists() {
        rtlab_testkit::unavailable("no cgroup-v1 cpuset hierarchy");
        return;
    }
    let balance = || std::fs::read_to_string("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance");
    let _one_at_a_time = common::one_at_a_time();
    let before = balance().unwrap();
    let set = light_set();
    let duration = ms(600);
    let cfg = RunConfig::new(duration, RunPolicy::Edf);
    let recorded = record(&set, &cfg).unwrap();
    assert_every_job_recorded_once(&set, &recorded, duration);
    let cpu = cfg.cpu.unwrap() as u32;
    assert!(recorded
        .jobs
        .iter()
        .all(|j| j.finish.is_none() || j.cpu == Some(cpu)));
    assert!(recorded.report.tasks[0]
        .thread_policy
        .starts_with("SCHED_DEADLINE runtime 2.1ms"));
    assert_eq!(balance().unwrap(), before, "root load balancing restored");
    let stale = std::fs::read_dir("/sys/fs/cgroup/cpuset")
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy() == format!("rtlab-edf-{}", std::process::id()));
    assert!(!stale, "the cpuset is removed");
    let me = std::process::id();
    let records = rtlab_host::kernel_state::StateDir::from_env()
        .read_all()
        .unwrap();
    assert!(
        !records
            .iter()
            .any(|f| f.record.as_ref().is_ok_and(|r| r.owner.pid == me)),
        "the state file is removed with the last change"
    );
}

/// A job charged more than its SCHED_DEADLINE budget: C = 2 ms burnt as
/// thread CPU time with a margin of 0, so runtime = C and the executor's
/// few microseconds around the burn (wake-up, clock reads, the record)
/// overshoot it in every job, as a host stall at the end of a job does on a
/// VM. With hard budgets (`edf_reclaim = false`) the constant bandwidth
/// server throttles each job until its kernel deadline (wake-up + T, after
/// release + T): every job but a lucky few misses. With `SCHED_FLAG_RECLAIM`
/// (the default) the job alone on its CPU (U = 0.2) is charged at U/U_max
/// of the time it runs (GRUB), so its 2 ms budget lasts about 9.5 ms and
/// nothing is throttled: misses only from noise.
#[test]
#[ignore = "needs root"]
fn edf_reclaim_absorbs_what_a_hard_budget_throttles() {
    rtlab_testkit::require_root();
    if !std::path::Path::new("/sys/fs/cgroup/cpuset/cpuset.cpus").exists() {
        rtlab_testkit::unavailable("no cgroup-v1 cpuset hierarchy");
        return;
    }
    let set = TaskSet::new("overrun", vec![Task::new("tight", ms(10), ms(2))]);
    let misses = |reclaim: bool| {
        let mut cfg = RunConfig::new(ms(500), RunPolicy::Edf);
        cfg.edf_margin = Some(Nanos::ZERO);
        cfg.edf_reclaim = reclaim;
        let report = {
            let _one_at_a_time = common::one_at_a_time();
            run(&set, &cfg, &AtomicBool::new(false)).unwrap()
        };
        let policy = &report.tasks[0].thread_policy;
        assert_eq!(
            policy.ends_with(" reclaim"),
            reclaim,
            "the report says how the budget was set: {policy}"
        );
        (report.totals.deadline_misses, report.totals.released)
    };
    let (hard, released) = misses(false);
    assert_eq!(released, 50);
    assert!(
        hard >= 40,
        "hard budgets throttle every job: {hard} of 50 missed"
    );
    let (reclaimed, released) = misses(true);
    assert_eq!(released, 50);
    println!("misses of 50 jobs: hard budget {hard}, reclaiming {reclaimed}");
    assert!(
        reclaimed <= 5,
        "reclaiming, a job at U = 0.2 is not throttled: {reclaimed} of 50 missed"
    );
}

#[test]
#[ignore = "needs root"]
fn edf_admission_refusal_is_explained_and_cleans_up() {
    rtlab_testkit::require_root();
    let set = TaskSet::new(
        "too-much",
        vec![Task::new("a", ms(10), ms(6)), Task::new("b", ms(10), ms(4))],
    );
    let e = {
        let _one_at_a_time = common::one_at_a_time();
        run(
            &set,
            &RunConfig::new(ms(100), RunPolicy::Edf),
            &AtomicBool::new(false),
        )
        .unwrap_err()
    };
    let text = e.to_string();
    // The kernel's to_ratio per task, truncated: 6/10 and 4/10 of 2^20
    // are 629145 and 419430, one unit short of a whole CPU.
    assert!(
        text.contains(
            "the WCETs alone need sum C/T = 1048575 (0.999999) of 1 CPU(s) in the kernel's units"
        ) && text.contains("--no-rt-throttling"),
        "{text}"
    );
    let stale = std::fs::read_dir("/sys/fs/cgroup/cpuset")
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("rtlab-edf-"))
        })
        .unwrap_or(false);
    assert!(!stale, "no cpuset left behind after a refusal");
}

#[test]
fn policy_errors_are_explained_before_any_thread_runs() {
    let fails = |set: &TaskSet, cfg: &RunConfig| {
        let _one_at_a_time = common::one_at_a_time();
        run(set, cfg, &AtomicBool::new(false)).unwrap_err()
    };
    let e = fails(&light_set(), &RunConfig::new(ms(100), RunPolicy::Given));
    assert!(e.to_string().contains("task `fast` has no priority"), "{e}");
    let empty = TaskSet::new("empty", vec![]);
    let e = fails(&empty, &RunConfig::new(ms(100), RunPolicy::Other));
    assert!(e.to_string().contains("no tasks"), "{e}");
    let mut cfg = RunConfig::new(ms(100), RunPolicy::Other);
    cfg.cpu = Some(4096);
    let e = fails(&light_set(), &cfg);
    assert!(e.to_string().contains("cannot pin to CPU(s) [4096]"), "{e}");
}

/// The regression of issue 10: a day-long run used to preallocate every
/// job's record (1.7 GB for `gap`) and fault it in after the first release,
/// which made a schedulable set miss hundreds of deadlines. Interrupted
/// after 2 s it must have missed nothing, recorded every release before the
/// interrupt exactly once through the rings, and dropped no record.
#[test]
#[ignore = "needs root"]
fn a_day_long_run_interrupted_early_misses_nothing_and_records_every_job() {
    rtlab_testkit::require_root();
    let set = file::load("builtin:gap").unwrap().set;
    let cfg = RunConfig::new(Nanos::from_secs(86_400), RunPolicy::RateMonotonic);
    let _one_at_a_time = common::one_at_a_time();
    let interrupt = Arc::new(AtomicBool::new(false));
    let ctrl_c = {
        let interrupt = interrupt.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(2));
            interrupt.store(true, std::sync::atomic::Ordering::SeqCst);
        })
    };
    let jobs = Arc::new(Mutex::new(Vec::new()));
    let began = Instant::now();
    let (report, written) = run_recording(
        &set,
        &cfg,
        &interrupt,
        vec![Box::new(Collect(jobs.clone()))],
    )
    .unwrap();
    ctrl_c.join().unwrap();
    assert!(
        began.elapsed().as_secs() < 10,
        "ends soon after the interrupt"
    );
    assert!(written.iter().all(Result::is_ok));
    assert!(report.interrupted);
    let ended = Nanos::from_ns(report.ended_ns);
    assert!(ended > ms(1500) && ended < Nanos::from_secs(5), "{ended}");
    let recorded = Recorded {
        report,
        jobs: std::mem::take(&mut *jobs.lock().unwrap()),
    };
    assert_every_job_recorded_once(&set, &recorded, ended);
    assert_eq!(
        recorded.report.deadline_misses, 0,
        "{:#?}",
        recorded.report.tasks
    );
    assert!(recorded.report.tasks.iter().all(|t| t.released >= 1));
}

// ------------------------------------------------------ critical sections

/// `builtin:priority-inversion` under SCHED_FIFO (dm) on one CPU, one
/// protocol, three periods.
fn inversion_run(protocol: LockingProtocol) -> Recorded {
    let set = file::load("builtin:priority-inversion").unwrap().set;
    let mut cfg = RunConfig::new(ms(300), RunPolicy::DeadlineMonotonic);
    cfg.protocol = protocol;
    execute(&set, &cfg).unwrap()
}

/// The finish of job k of task `task` (0 high, 1 mid, 2 low).
fn finish_of(jobs: &[JobRecord], task: usize, k: u64) -> Nanos {
    jobs.iter()
        .find(|j| j.task == task && j.job == k)
        .and_then(|j| j.finish)
        .unwrap_or_else(|| panic!("job {k} of task {task} did not finish"))
}

#[test]
#[ignore = "needs root"]
fn the_priority_inversion_example_inverts_under_none_and_not_under_pip_or_ipcp() {
    rtlab_testkit::require_root();
    for protocol in [
        LockingProtocol::None,
        LockingProtocol::Pip,
        LockingProtocol::Ipcp,
    ] {
        let r = inversion_run(protocol);
        assert_eq!(r.report.protocol, protocol);
        assert_eq!(r.report.lock_errors, 0, "{protocol}");
        // Every job recorded once, all finished (U = 0.56).
        assert_eq!(r.jobs.len(), 9, "{protocol}: {:?}", r.jobs);
        assert_eq!(r.report.completed, 9, "{protocol}");
        let (high, mid) = (finish_of(&r.jobs, 0, 0), finish_of(&r.jobs, 1, 0));
        let inverted = high > mid;
        assert_eq!(
            inverted,
            protocol == LockingProtocol::None,
            "{protocol}: high's first job finished at {high}, mid's at {mid}"
        );
        // Lock wait: present for the lockers only; high waits for low's
        // lock under none and pip (under ipcp it cannot even ask).
        let high_wait = r
            .jobs
            .iter()
            .find(|j| j.task == 0 && j.job == 0)
            .unwrap()
            .blocked;
        assert!(r
            .jobs
            .iter()
            .filter(|j| j.task == 1)
            .all(|j| j.blocked.is_none()));
        assert!(r
            .jobs
            .iter()
            .filter(|j| j.task != 1)
            .all(|j| j.blocked.is_some()));
        if protocol != LockingProtocol::Ipcp {
            assert!(high_wait > Some(Nanos::ZERO), "{protocol}: {high_wait:?}");
        }
        let m = &r.report.tasks[0];
        assert!(
            m.max_blocked_ns >= high_wait.map(Nanos::as_ns),
            "{protocol}"
        );
        assert_eq!(r.report.tasks[1].max_blocked_ns, None);
    }
}

/// The example under SCHED_DEADLINE with `pip`, which documents two things
/// Linux does (kernel/sched/deadline.c):
/// - A constrained task's first release is not throttled to the kernel's
///   period begun at `sched_setattr` (`first_release_delay`): `high`
///   (released at 5 ms, D 20) gets the CPU before `mid` (released at 8 ms,
///   D 68) starts. Without the delay, `high` slept until about 100 ms after
///   the setup and `mid` started first.
/// - The rt-mutex boost of a deadline task does not give the holder its
///   waiter's deadline (`replenish_dl_entity` keeps the holder's own
///   deadline; the donor only keeps it from being throttled): `low`
///   (D 100) holding `R` still yields to `mid` (D 68), so `high` finishes
///   after `mid`, as under `none` with SCHED_FIFO.
#[test]
#[ignore = "needs root"]
fn under_sched_deadline_high_starts_first_and_pip_does_not_reorder_the_holder() {
    rtlab_testkit::require_root();
    let set = file::load("builtin:priority-inversion").unwrap().set;
    let mut cfg = RunConfig::new(ms(300), RunPolicy::Edf);
    cfg.protocol = LockingProtocol::Pip;
    let r = execute(&set, &cfg).unwrap();
    assert_eq!(r.report.lock_errors, 0);
    assert_eq!(r.jobs.len(), 9, "{:?}", r.jobs);
    let first = |task: usize| {
        r.jobs
            .iter()
            .find(|j| j.task == task && j.job == 0)
            .unwrap()
    };
    let (high, mid) = (first(0), first(1));
    assert!(
        high.start.unwrap() < mid.start.unwrap(),
        "high {high:?}, mid {mid:?}"
    );
    let high_finish = high.finish.unwrap_or(Nanos::MAX);
    assert!(
        high_finish > mid.finish.unwrap(),
        "high {high:?}, mid {mid:?}"
    );
    assert!(high.blocked > Some(Nanos::ZERO), "{high:?}");
}

/// Two tasks whose whole 10 s jobs hold one lock: when a 200 ms run ends,
/// one job holds it and the other waits in `pthread_mutex_lock`.
fn lock_held_past_the_end() -> TaskSet {
    let task = |name: &str, offset: u64| {
        let mut t =
            Task::new(name, Nanos::from_secs(20), Nanos::from_secs(10)).with_offset(ms(offset));
        t.critical_sections = vec![rtlab_model::CriticalSection {
            resource: "R".into(),
            start: Nanos::ZERO,
            length: Nanos::from_secs(10),
        }];
        t
    };
    TaskSet::new("held", vec![task("holder", 0), task("waiter", 20)])
}

#[test]
fn a_run_ends_on_time_with_a_job_holding_a_lock_and_another_waiting_for_it() {
    // SCHED_OTHER, memory not locked: no privilege needed.
    for protocol in [LockingProtocol::None, LockingProtocol::Pip] {
        let mut cfg = RunConfig::new(ms(200), RunPolicy::Other);
        cfg.mlock = false;
        cfg.protocol = protocol;
        let began = Instant::now();
        let r = execute(&lock_held_past_the_end(), &cfg).unwrap();
        let took = began.elapsed();
        assert!(took.as_secs() < 5, "{protocol}: the run took {took:?}");
        assert!(r.report.lost_tasks.is_empty(), "{protocol}");
        assert_eq!(r.report.lock_errors, 0, "{protocol}");
        let unfinished: u64 = r.report.tasks.iter().map(|t| t.unfinished).sum();
        assert_eq!(unfinished, 2, "{protocol}");
        // The waiter waited from its release until the holder stopped.
        let waiter = r.jobs.iter().find(|j| j.task == 1).unwrap();
        assert!(waiter.blocked >= Some(ms(100)), "{protocol}: {waiter:?}");
    }
}

#[test]
fn ipcp_is_refused_for_deadline_and_other_threads_before_anything_runs() {
    let set = file::load("builtin:priority-inversion").unwrap().set;
    for policy in [RunPolicy::Edf, RunPolicy::Other] {
        let mut cfg = RunConfig::new(ms(100), policy);
        cfg.protocol = LockingProtocol::Ipcp;
        let e = rtlab_rt::executor::run(&set, &cfg, &AtomicBool::new(false)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid protocol ipcp: priority ceilings"),
            "{e}"
        );
    }
}

/// What the kernel does with a SCHED_DEADLINE job in flight when its
/// thread's budget changes (the case the executor avoids by changing
/// budgets between jobs): a thread (runtime 2 ms, period 40 ms) starts a
/// job, burns 1 ms, raises its runtime to 20 ms with sched_setattr, and
/// burns 6 ms more. The reservation in progress keeps its remaining ~1 ms
/// (the new runtime applies from the next replenishment), so the job is
/// throttled until its current period ends: it takes about 40 ms, not 7.
/// Prints the measured figure; asserts only the throttling's order of
/// magnitude.
#[test]
#[ignore = "needs root"]
fn a_budget_raised_in_flight_applies_from_the_next_replenishment() {
    rtlab_testkit::require_root();
    let _one_at_a_time = common::one_at_a_time();
    let took = std::thread::spawn(|| {
        use rtlab_host::policy::{set_current_thread_policy, Policy};
        use rtlab_rt::work::burn_cpu;
        use rtlab_sys::clock::monotonic_now;
        let dl = |runtime| Policy::Deadline {
            runtime,
            deadline: ms(40),
            period: ms(40),
        };
        set_current_thread_policy(&dl(ms(2))).expect("SCHED_DEADLINE");
        // Start at a fresh reservation: sleep past the first period.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let began = monotonic_now();
        burn_cpu(ms(1));
        let asked = monotonic_now();
        set_current_thread_policy(&dl(ms(20))).expect("the larger budget is admitted");
        let changed = monotonic_now() - asked;
        burn_cpu(ms(6));
        let took = monotonic_now() - began;
        let _ = set_current_thread_policy(&Policy::Other { nice: 0 });
        (took, changed)
    })
    .join()
    .unwrap();
    println!(
        "job of 7 ms with the budget raised from 2 ms to 20 ms after 1 ms: took {}, sched_setattr {}",
        took.0, took.1
    );
    assert!(
        took.0 >= ms(25),
        "took {}: the new runtime applied at once",
        took.0
    );
}
