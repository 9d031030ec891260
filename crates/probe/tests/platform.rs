//! Tests against the real kernel. Those that need root are
//! `#[ignore = "needs root"]` (run them as root with `-- --ignored`).
//! Real-time runs are kept to a few hundred loops and assert only what must
//! hold on a noisy machine.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc;

use rtlab_host::policy::{
    allowed_cpus, current_thread_policy, has_cap_sys_nice, hold_dma_latency_zero, lock_memory,
    set_current_thread_affinity, set_current_thread_policy,
};
use rtlab_host::{HostError, Policy};
use rtlab_model::Nanos;
use rtlab_probe::latency::{run_probe, run_probe_with_series, Affinity, ProbeConfig};
use rtlab_rt::RtError;

fn on_fresh_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(f).join().unwrap()
}

#[test]
#[ignore = "needs root"]
fn fifo_rr_and_other_are_set_and_read_back() {
    rtlab_testkit::require_root();
    for policy in [
        Policy::Fifo { priority: 10 },
        Policy::RoundRobin { priority: 20 },
        Policy::Other { nice: 5 },
        Policy::Other { nice: -5 },
    ] {
        let read = on_fresh_thread(move || {
            set_current_thread_policy(&policy).unwrap();
            current_thread_policy().unwrap()
        });
        assert_eq!(read, policy);
    }
}

#[test]
#[ignore = "needs root"]
fn deadline_is_set_and_its_errors_say_what_to_do() {
    rtlab_testkit::require_root();
    let dl = |runtime_us, period_us| Policy::Deadline {
        runtime: Nanos::from_us(runtime_us),
        deadline: Nanos::from_us(period_us),
        period: Nanos::from_us(period_us),
    };
    let read = on_fresh_thread(move || {
        set_current_thread_policy(&dl(100, 1000)).unwrap();
        current_thread_policy().unwrap()
    });
    assert_eq!(read, dl(100, 1000));

    // A pinned thread cannot become a deadline thread (root domain rule).
    if allowed_cpus().unwrap().len() > 1 {
        let e = on_fresh_thread(move || {
            set_current_thread_affinity(&[0]).unwrap();
            set_current_thread_policy(&dl(100, 1000)).unwrap_err()
        });
        assert!(matches!(e, HostError::DeadlineAffinity), "{e}");
        assert!(e.to_string().contains("cpuset"), "{e}");
    }

    // Admission control: hold 96 % of a CPU per thread until refused.
    let (tx, rx) = mpsc::channel::<Result<(), HostError>>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = std::sync::Arc::new(std::sync::Mutex::new(release_rx));
    let mut holders = Vec::new();
    let mut refused = None;
    for _ in 0..=allowed_cpus().unwrap().len() + 1 {
        let (tx, release_rx) = (tx.clone(), release_rx.clone());
        holders.push(std::thread::spawn(move || {
            let r = set_current_thread_policy(&dl(960, 1000));
            let ok = r.is_ok();
            tx.send(r).unwrap();
            if ok {
                // Sleep (blocked) while holding the bandwidth.
                let _ = release_rx.lock().unwrap().recv();
            }
        }));
        if let Err(e) = rx.recv().unwrap() {
            refused = Some(e);
            break;
        }
    }
    drop(release_tx);
    for h in holders {
        h.join().unwrap();
    }
    let e = refused.expect("admission control never refused 0.96 bandwidth per CPU");
    assert!(matches!(e, HostError::DeadlineAdmission { .. }), "{e}");
    assert!(e.to_string().contains("sched_rt_runtime_us"), "{e}");
}

#[test]
#[ignore = "needs root"]
fn memory_lock_and_dma_latency_guards() {
    rtlab_testkit::require_root();
    let lock = lock_memory().unwrap();
    let dma = hold_dma_latency_zero().unwrap();
    drop((dma, lock));
}

/// Re-runs this test binary as uid/gid 65534 (nobody), where asking for
/// SCHED_FIFO must fail with the plain-words error.
#[test]
fn unprivileged_fifo_gives_the_plain_words_error() {
    use std::os::unix::process::CommandExt;
    let check = || {
        let e = on_fresh_thread(|| set_current_thread_policy(&Policy::Fifo { priority: 50 }))
            .unwrap_err();
        assert!(matches!(e, HostError::NeedsPrivilege { .. }), "{e}");
        let text = e.to_string();
        assert!(text.starts_with("SCHED_FIFO priority 50 needs root or CAP_SYS_NICE: run with sudo, or `setcap cap_sys_nice+ep"), "{text}");
        println!("CHILD-SAW: {text}");
    };
    if std::env::var_os("RTLAB_TEST_AS_NOBODY").is_some() || !has_cap_sys_nice() {
        check();
        return;
    }
    // std drops to the given gid/uid (and clears supplementary groups) in the child before exec.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "unprivileged_fifo_gives_the_plain_words_error",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RTLAB_TEST_AS_NOBODY", "1")
        .uid(65534)
        .gid(65534)
        .output()
        .expect("re-run the test binary as nobody");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("CHILD-SAW: SCHED_FIFO"),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs root"]
fn fifo_probe_records_the_requested_loops_on_pinned_threads() {
    rtlab_testkit::require_root();
    static STOP: AtomicBool = AtomicBool::new(false);
    let cfg = ProbeConfig {
        threads: 2,
        interval: Nanos::from_us(1000),
        distance: Nanos::from_us(250),
        policy: Policy::Fifo { priority: 80 },
        affinity: Affinity::RoundRobin(allowed_cpus().unwrap()),
        loops: Some(300),
        duration: None,
        ..ProbeConfig::default()
    };
    let path = std::env::temp_dir().join(format!("rtlab-series-{}.csv", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let (report, written) = run_probe_with_series(&cfg, &STOP, Some(Box::new(file))).unwrap();
    written.unwrap();
    let series = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(report.lost_threads.is_empty() && !report.interrupted);
    for t in &report.threads {
        assert_eq!(t.loops, 300);
        assert_eq!(t.policy, Policy::Fifo { priority: 80 });
        assert_eq!(t.cpu, cfg.affinity.cpu_of(t.index));
        let l = &t.latency;
        assert!(l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999);
        assert!(l.p999 <= l.max);
        assert_eq!(t.latency_histogram.len(), 300);
        assert_eq!(t.buckets_us.iter().sum::<u64>() + t.overflows, 300);
        assert!(t.outliers.windows(2).all(|w| w[0].latency >= w[1].latency));
        // The series has every loop of the thread, in order, times rising.
        let rows: Vec<Vec<u64>> = series
            .lines()
            .skip(1)
            .map(|l| l.split(',').take(3).map(|c| c.parse().unwrap()).collect())
            .filter(|row: &Vec<u64>| row[0] == t.index as u64)
            .collect();
        assert_eq!(rows.len(), 300);
        assert!(rows.iter().enumerate().all(|(k, r)| r[1] == k as u64));
        assert!(rows.windows(2).all(|w| w[0][2] < w[1][2]));
        assert_eq!(t.series_dropped, 0);
    }
}

#[test]
fn a_probe_that_cannot_get_its_policy_fails_before_measuring() {
    static STOP: AtomicBool = AtomicBool::new(false);
    let cfg = ProbeConfig {
        affinity: Affinity::RoundRobin(vec![4095]),
        loops: Some(10),
        duration: None,
        policy: Policy::Other { nice: 0 },
        ..ProbeConfig::default()
    };
    let e = run_probe(&cfg, &STOP).unwrap_err();
    assert!(
        matches!(e, RtError::Host(HostError::Affinity { .. })),
        "{e}"
    );
}

#[test]
fn a_stopped_probe_ends_at_once_and_reports_what_it_has() {
    static STOP: AtomicBool = AtomicBool::new(false);
    let cfg = ProbeConfig {
        threads: 1,
        policy: Policy::Other { nice: 0 },
        loops: None,
        duration: Some(Nanos::from_secs(60)),
        ..ProbeConfig::default()
    };
    let stopper = std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        STOP.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let t0 = std::time::Instant::now();
    let report = run_probe(&cfg, &STOP).unwrap();
    stopper.join().unwrap();
    assert!(t0.elapsed() < std::time::Duration::from_secs(5));
    assert!(report.interrupted);
    assert_eq!(report.threads.len(), 1);
    assert!(report.threads[0].loops > 0 && report.threads[0].loops < 60_000);
}
