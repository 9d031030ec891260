//! Real threads, real kernel trace: a miss of each kind is induced and
//! the cause rtlab names is checked (issue 23). Needs root and tracefs:
//! `#[ignore = "needs root"]`, run as root with `-- --ignored`. Asserts
//! causes, not timings.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rtlab_host::cpu_lock::{lock_cpus, WhenBusy};
use rtlab_host::kernel_state::StateDir;
use rtlab_host::policy::{allowed_cpus, set_current_thread_affinity, set_current_thread_policy};
use rtlab_host::{Policy, RtThrottling};
use rtlab_ktrace::{Analysis, KernelTrace};
use rtlab_model::policy::RunPolicy;
use rtlab_model::{Nanos, Task, TaskSet};
use rtlab_rt::executor::{run_traced, MissRule, RunConfig, RunReport};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

/// The CPU the runs use and the others, or why the test cannot run.
fn cpus() -> Result<(usize, Vec<usize>), String> {
    rtlab_ktrace::check_available().map_err(|e| e.to_string())?;
    let allowed = allowed_cpus().map_err(|e| e.to_string())?;
    let cpu = rtlab_rt::executor::default_cpu();
    Ok((cpu, allowed.into_iter().filter(|c| *c != cpu).collect()))
}

/// Runs `set` traced on `cpu` (holding its measurement lock, so no other
/// rtlab measures there meanwhile) while `during` runs.
fn traced_run(
    set: &TaskSet,
    cfg: &RunConfig,
    during: impl FnOnce(usize) -> Hog,
) -> Option<(RunReport, Analysis)> {
    let (cpu, others) = match cpus() {
        Ok(c) => c,
        Err(why) => {
            rtlab_testkit::unavailable(why);
            return None;
        }
    };
    // One run at a time in this process too (the tests run on threads of
    // one process, which the per-CPU lock does not keep apart).
    let _serial = rtlab_testkit::serial();
    let _lock = lock_cpus(&StateDir::from_env(), &[cpu], WhenBusy::Wait, |_| {}).unwrap();
    let mut cfg = cfg.clone();
    cfg.cpu = Some(cpu);
    // The path every traced command takes: the executor records the run's
    // CPU (the reader on the others) and explains its jobs.
    cfg.kernel_trace = Some(KernelTrace::new(None));
    let hog = during(cpu);
    let (report, _, account) = run_traced(set, &cfg, &AtomicBool::new(false), Vec::new()).unwrap();
    hog.stop();
    let analysis = account.unwrap().traced.unwrap().analysis;
    assert_eq!(others.is_empty(), allowed_cpus().unwrap().len() == 1);
    assert!(
        !analysis.jobs.iter().any(|j| j.untraced),
        "every job lies inside the trace"
    );
    Some((report, analysis))
}

/// A SCHED_FIFO 98 thread named `kt-hog` on the run's CPU that burns 50 ms
/// then sleeps 100 ms, until stopped.
struct Hog {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hog {
    fn none() -> Hog {
        Hog {
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        }
    }

    fn start(cpu: usize) -> Hog {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("kt-hog".into())
            .spawn(move || {
                set_current_thread_affinity(&[cpu]).unwrap();
                set_current_thread_policy(&Policy::Fifo { priority: 98 }).unwrap();
                while !flag.load(Ordering::Relaxed) {
                    let until = Instant::now() + Duration::from_millis(50);
                    while Instant::now() < until {
                        std::hint::spin_loop();
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
            .unwrap();
        Hog {
            stop,
            thread: Some(thread),
        }
    }

    /// A SCHED_OTHER thread named `kt-fair` on the run's CPU that spins
    /// until stopped: since Linux 6.12 RT throttling is the fair server,
    /// which takes its 50 ms per second only while a fair thread is
    /// runnable there; on a quiet CPU an RT thread is never stopped.
    fn fair(cpu: usize) -> Hog {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("kt-fair".into())
            .spawn(move || {
                set_current_thread_affinity(&[cpu]).unwrap();
                set_current_thread_policy(&Policy::Other { nice: 0 }).unwrap();
                while !flag.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
            .unwrap();
        Hog {
            stop,
            thread: Some(thread),
        }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread {
            t.join().unwrap();
        }
    }
}

fn top_cause(a: &Analysis) -> String {
    a.misses
        .lines()
        .first()
        .map(|l| l.cause.clone())
        .unwrap_or_default()
}

#[test]
#[ignore = "needs root"]
fn a_higher_priority_hog_thread_is_named_as_the_cause_of_the_misses_it_makes() {
    rtlab_testkit::require_root();
    // C = 2 ms, D = T = 20 ms: only a long stall of the CPU makes it miss.
    // The hog's 50 ms bursts make a miss whatever their phase: a job
    // released in a burst waits for its end, over 30 ms after any release
    // in it, while a 30 ms burst misses none for 40 % of the phases.
    let set = TaskSet::new("victim", vec![Task::new("victim", ms(20), ms(2))]);
    let cfg = RunConfig::new(ms(1000), RunPolicy::RateMonotonic);
    let Some((report, a)) = traced_run(&set, &cfg, Hog::start) else {
        return;
    };
    assert!(report.deadline_misses > 0, "the hog made misses");
    // Other real-time threads on the machine may add misses of their own;
    // the hog's must be there, named, with its lateness.
    let hog = a
        .misses
        .lines()
        .into_iter()
        .find(|l| l.cause == "thread:kt-hog(fifo/rr)");
    assert!(
        hog.is_some_and(|l| l.misses >= 1 && l.lateness_ns >= 10_000_000),
        "{:?}",
        a.misses.lines()
    );
    let hogged = a
        .jobs
        .iter()
        .filter(|k| k.lateness.contains_key("thread:kt-hog(fifo/rr)"))
        .count();
    assert!(hogged > 0);
    // Those jobs waited for it (whether the hog woke before the release or
    // preempted the job: a 2 ms job is rarely running when it wakes).
    assert!(a
        .jobs
        .iter()
        .filter(|k| k.lateness.contains_key("thread:kt-hog(fifo/rr)"))
        .all(|k| k
            .waits
            .get("thread:kt-hog(fifo/rr)")
            .is_some_and(|w| *w > 0)));
}

#[test]
#[ignore = "needs root"]
fn a_deadline_budget_without_margin_is_exhausted_and_named_throttled() {
    rtlab_testkit::require_root();
    // Budget = C exactly (--edf-margin 0): the wake-up path is charged to
    // the budget too, so each job runs out just before its end and waits
    // for its next period: CBS throttling.
    let set = TaskSet::new("tight", vec![Task::new("tight", ms(20), ms(5))]);
    let mut cfg = RunConfig::new(ms(600), RunPolicy::Edf);
    cfg.edf_margin = Some(Nanos::ZERO);
    // Hard CBS budgets: with reclaiming (the default) the job would take
    // the idle bandwidth instead of being throttled.
    cfg.edf_reclaim = false;
    let Some((report, a)) = traced_run(&set, &cfg, |_| Hog::none()) else {
        return;
    };
    assert!(report.deadline_misses > 0, "jobs overran their budget");
    assert_eq!(
        top_cause(&a),
        "throttled:deadline",
        "{:?}",
        a.misses.lines()
    );
}

#[test]
#[ignore = "needs root"]
fn rt_throttling_above_the_limit_is_named_as_the_cause() {
    rtlab_testkit::require_root();
    match RtThrottling::read() {
        Ok(t) if t.limit().is_some_and(|l| l < 0.98) => {}
        _ => {
            rtlab_testkit::unavailable("RT throttling is off or above 0.98 here");
            return;
        }
    }
    // U = 0.98 > 0.95 with a fair thread runnable on the CPU: in every
    // full throttling period (1 s) the kernel stops the thread for the
    // fair server's 50 ms (or RT throttling's 50 ms on older kernels).
    let set = TaskSet::new(
        "heavy",
        vec![Task::new("heavy", ms(10), Nanos::from_us(9_800))],
    );
    let mut cfg = RunConfig::new(ms(2200), RunPolicy::RateMonotonic);
    cfg.on_miss = MissRule::Skip;
    let Some((report, a)) = traced_run(&set, &cfg, Hog::fair) else {
        return;
    };
    assert!(report.deadline_misses > 0);
    let throttled = a
        .misses
        .lines()
        .into_iter()
        .find(|l| l.cause == "throttled:rt");
    assert!(
        throttled.is_some_and(|l| l.misses >= 1 && l.lateness_ns >= 5_000_000),
        "{:?}",
        a.misses.lines()
    );
}
