//! `rtlab characterize`'s measurements against the kernel, with loose
//! sanity bounds only (a noisy 2-core VM): every n measured with the
//! samples asked for, costs positive and (at the median) below a
//! millisecond, a tick found. Needs root (SCHED_FIFO): `#[ignore = "needs
//! root"]`, run as root with `-- --ignored`. Run under the machine-wide
//! real-time lock.

// The real-thread tests' shared lock helper lives with rt's tests.
#[path = "../../rt/tests/common/mod.rs"]
mod common;

use std::sync::atomic::AtomicBool;

use rtlab_probe::characterize::{characterize, CharacterizeConfig, ScenarioPoint};
use rtlab_rt::executor::default_cpu;
use rtlab_rt::RtError;

fn sane(what: &str, points: &[ScenarioPoint], threads: &[usize], samples: usize) {
    let ns: Vec<usize> = points.iter().map(|p| p.n).collect();
    assert_eq!(ns, threads, "{what}: every n measured");
    for p in points {
        let s = p.stats;
        assert_eq!(s.count, samples, "{what} n={}: {p:?}", p.n);
        assert!(s.min_ns > 0, "{what} n={}: {p:?}", p.n);
        assert!(s.median_ns < 1_000_000, "{what} n={}: {p:?}", p.n);
        assert!(s.min_ns <= s.median_ns && s.median_ns <= s.p99_ns);
        assert!(s.p99_ns <= s.p999_ns && s.p999_ns <= s.max_ns);
    }
}

#[test]
#[ignore = "needs root"]
fn every_scenario_is_measured_at_every_n() {
    rtlab_testkit::require_root();
    let _serial = common::one_at_a_time();
    static STOP: AtomicBool = AtomicBool::new(false);
    let cfg = CharacterizeConfig {
        cpu: default_cpu(),
        threads: vec![2, 5],
        samples: 200,
    };
    let mut steps = Vec::new();
    let c = characterize(&cfg, &STOP, &mut |done, total, what| {
        steps.push((done, total, what.to_string()))
    })
    .unwrap();
    assert!(!c.interrupted);
    assert_eq!(steps.len(), cfg.steps());
    assert_eq!(steps.last().unwrap().0, steps.last().unwrap().1);
    sane("preempt", &c.preempt, &cfg.threads, cfg.samples);
    sane("exit", &c.exit, &cfg.threads, cfg.samples);
    sane("nonpreempt", &c.nonpreempt, &cfg.threads, cfg.samples);
    let timer = c.timer.stats.expect("tick gaps");
    assert!(timer.count >= cfg.samples * 9 / 10, "{:?}", c.timer);
    assert!(
        timer.min_ns > 0 && timer.median_ns < 1_000_000,
        "{:?}",
        c.timer
    );
    let tick = c.timer.tick.expect("a tick period");
    assert!((1_000_000..=10_000_000).contains(&tick.tick_ns), "{tick:?}");
    let pp = c.pingpong.clone().expect("ping-pong");
    assert_eq!(pp.stats.count, cfg.samples);
    assert!(
        pp.stats.min_ns > 0 && pp.stats.median_ns < 1_000_000,
        "{pp:?}"
    );
    assert!(c.gap_threshold_ns >= 150 && c.gap_threshold_ns <= 2_000);
    let fits = c.fit_inputs().fit(Default::default());
    let (o, _) = fits.overheads("t", "test", None).unwrap();
    assert!(!o.preempt.is_zero() && !o.exit.is_zero() && !o.nonpreempt.is_zero());
}

#[test]
#[ignore = "needs root"]
fn a_stop_before_the_start_measures_nothing_and_ends() {
    rtlab_testkit::require_root();
    let _serial = common::one_at_a_time();
    static STOP: AtomicBool = AtomicBool::new(true);
    let cfg = CharacterizeConfig::new(default_cpu());
    let started = std::time::Instant::now();
    let c = characterize(&cfg, &STOP, &mut |_, _, _| {}).unwrap();
    assert!(c.interrupted);
    assert!(c.preempt.is_empty() && c.exit.is_empty() && c.nonpreempt.is_empty());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn bad_settings_are_refused_before_measuring() {
    static STOP: AtomicBool = AtomicBool::new(false);
    let mut cfg = CharacterizeConfig::new(default_cpu());
    cfg.threads = vec![1, 4];
    let err = characterize(&cfg, &STOP, &mut |_, _, _| {}).unwrap_err();
    assert!(
        matches!(
            err,
            RtError::Setting {
                setting: "threads",
                ..
            }
        ),
        "{err}"
    );
    cfg.threads = vec![4];
    cfg.samples = 5;
    let err = characterize(&cfg, &STOP, &mut |_, _, _| {}).unwrap_err();
    assert_eq!(err.to_string(), "invalid samples 5: use 10..=100000");
    cfg.samples = 100;
    cfg.cpu = 4096;
    let err = characterize(&cfg, &STOP, &mut |_, _, _| {}).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid cpu 4096: this process may use CPUs"),
        "{err}"
    );
}
