//! Relative versus absolute sleeps: how far a periodic loop that sleeps a
//! *relative* interval falls behind one that sleeps *until* an absolute
//! time (`rtlab drift`).
//!
//! Seed 003 (Desmazes, Ortalda, Verhelst, *RTOS Lab 1*, ECE Paris 2018,
//! section 2.2 "Program 2") runs two Ada tasks with the same 100 ms period,
//! one with `delay 0.1` and one with `delay until`, and sees them "end up
//! off sync": a relative delay is counted from whenever the task got round
//! to asking for it, so every wake-up latency and every instant spent
//! between a wake-up and the next delay (the loop body, preemption) is
//! added to all later wake-ups. (The report's `delay until` loop computes
//! `Wait_Time := Clock + Interval` afresh each time, which is a relative
//! delay again; the loop that cannot drift advances `Wait_Time` by the
//! interval, as [`SleepKind::Absolute`] does.)
//!
//! Each loop kind runs on its own thread, all with the same period `T`,
//! from one common `start`, and each wake-up `k` (0-based) is compared with
//! the grid `start + n * T`:
//!
//! * [`SleepKind::Absolute`]: `clock_nanosleep(TIMER_ABSTIME)` until
//!   `next`, then `next += T` (periods already past are skipped, as in
//!   cyclictest). `n` is the grid index of `next`.
//! * [`SleepKind::Relative`]: read the clock, then a relative
//!   `clock_nanosleep` of `T` (cyclictest `-r`, Ada's `delay T`). `n = k+1`:
//!   one period per loop.
//! * [`SleepKind::Compensated`]: a relative sleep of `next - now` where
//!   `next = start + (k+1) * T` (Ada's `delay Next - Clock`): relative, but
//!   aimed at the grid, so only the instant between the clock read and the
//!   sleep is lost, and that loss does not accumulate. `n = k+1`.
//!
//! The **lag** of wake-up `k` is `wake - (start + n * T)`: for the absolute
//! and compensated loops it is that wake-up's latency, for the relative
//! loop the lateness accumulated so far. The **phase offset** of two loops
//! is the difference of their lags. The **drift per hour** of a loop is the
//! slope of the least-squares line of its lag against grid time
//! `x = n * T`, times one hour; of an offset, the difference of the two
//! slopes (the fit is linear in the lag). The fit is computed online
//! (Welford's running co-moments), so it covers every wake-up in constant
//! memory; the time series keeps one lag per window of `every` (the last
//! wake-up's in the window), at most [`MAX_WINDOWS`] windows, allocated
//! before the first wake-up.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use hdrhistogram::Histogram;
use rtlab_model::Nanos;

use rtlab_host::policy::{self, Policy};
use rtlab_sys::clock::{monotonic_now, MonotonicClock, Sleeper};

use crate::error::RtError;
use crate::stats::{new_histogram, Extremes};

pub use rtlab_model::results::drift::{DriftLoop, DriftRun, LagFit, SleepKind};

/// What a drift run measured (rendered by `rtlab_report::drift`).
pub type DriftReport = DriftRun;
/// What one loop measured.
pub type LoopReport = DriftLoop;

/// Windows of the time series at most: `every` is raised to
/// `duration / MAX_WINDOWS` when it is shorter.
pub const MAX_WINDOWS: u64 = 20_000;

/// Why the drift loops are not run under SCHED_DEADLINE (see
/// `rtlab_probe::latency::RELATIVE_DEADLINE_REFUSAL`, which says the same for `latency`).
pub const DEADLINE_REFUSAL: &str = "a SCHED_DEADLINE thread is released on its reservation's period, an absolute timeline the kernel keeps (sched_yield waits for the next period), so relative sleeps would only drift off it: use --policy fifo, rr or other";

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftConfig {
    /// The period of every loop.
    pub period: Nanos,
    /// How long the loops run.
    pub duration: Nanos,
    /// One thread per kind, distinct kinds.
    pub kinds: Vec<SleepKind>,
    /// Policy of every loop thread (not SCHED_DEADLINE).
    pub policy: Policy,
    /// CPU every loop thread is pinned to (`None`: unpinned).
    pub cpu: Option<usize>,
    /// CPU time each loop burns after each wake-up (the loop body: the
    /// report's `Put_Line`s).
    pub work: Nanos,
    /// Window of the time series (raised to `duration / MAX_WINDOWS`).
    pub every: Nanos,
}

impl DriftConfig {
    /// Checks the configuration; errors name the setting.
    pub fn validate(&self) -> Result<(), RtError> {
        let setting = |setting: &'static str, value: String, why: &str| {
            Err(RtError::Setting {
                setting,
                value: Some(value),
                why: why.into(),
            })
        };
        if self.period < Nanos::from_us(100) {
            return setting(
                "period",
                self.period.to_string(),
                "use at least 100us (drift is a matter of many periods, not of the timer's resolution)",
            );
        }
        if self.duration < self.period.saturating_add(self.period) {
            return setting(
                "duration",
                self.duration.to_string(),
                &format!(
                    "run at least two periods ({})",
                    self.period.saturating_add(self.period)
                ),
            );
        }
        if self.kinds.is_empty() {
            return Err(RtError::Setting {
                setting: "kinds",
                value: None,
                why: "name at least one of absolute, relative, compensated".into(),
            });
        }
        let mut kinds = self.kinds.clone();
        kinds.sort();
        kinds.dedup();
        if kinds.len() != self.kinds.len() {
            return setting("kinds", names(&self.kinds), "name each kind once");
        }
        if self.work >= self.period {
            return setting(
                "work",
                self.work.to_string(),
                &format!(
                    "use less than the period ({}), or no loop ever sleeps",
                    self.period
                ),
            );
        }
        if self.every < self.period {
            return setting(
                "every",
                self.every.to_string(),
                &format!("use at least the period ({})", self.period),
            );
        }
        if let Policy::Deadline { .. } = self.policy {
            return Err(RtError::Setting {
                setting: "policy",
                value: Some("deadline".into()),
                why: DEADLINE_REFUSAL.into(),
            });
        }
        Ok(self.policy.validate()?)
    }

    /// The window actually used: `every`, or `duration / MAX_WINDOWS`
    /// rounded up to a whole period when that is longer.
    pub fn window(&self) -> Nanos {
        let floor = Nanos::from_ns(self.duration.as_ns().div_ceil(MAX_WINDOWS));
        let periods = floor.as_ns().div_ceil(self.period.as_ns()).max(1);
        self.every
            .max(Nanos::from_ns(periods * self.period.as_ns()))
    }

    fn windows(&self) -> usize {
        (self.duration.as_ns() / self.window().as_ns()) as usize + 1
    }
}

fn names(kinds: &[SleepKind]) -> String {
    kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(",")
}

/// One wake-up, as the loop saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// Wake-up number (0-based).
    pub index: u64,
    /// The grid index `n` it is compared with (`start + n * T`).
    pub grid: u64,
    /// When the loop meant to wake (absolute time).
    pub target: Nanos,
    /// When it read the clock after waking (absolute time).
    pub woke: Nanos,
}

impl Wake {
    /// `woke - (start + grid * period)`.
    pub fn lag(&self, start: Nanos, period: Nanos) -> Nanos {
        self.woke.saturating_sub(
            start.saturating_add(period.checked_mul(self.grid).unwrap_or(Nanos::MAX)),
        )
    }
}

/// One loop to run: its kind and period, from `start` until a target
/// would pass `end`, burning `work` of CPU time after each wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopSpec {
    /// How it sleeps.
    pub kind: SleepKind,
    /// Its period `T`.
    pub period: Nanos,
    /// The common start: the grid is `start + n * T`.
    pub start: Nanos,
    /// No target after this.
    pub end: Nanos,
    /// CPU time burnt after each wake-up.
    pub work: Nanos,
}

/// Runs the loop `spec` until a target would pass its end or `stop` is
/// set, calling `on_wake` after each wake-up (then burning the work).
/// Nothing here allocates unless `on_wake` does.
pub fn run_loop<S: Sleeper>(
    clock: &mut S,
    spec: LoopSpec,
    stop: &AtomicBool,
    mut on_wake: impl FnMut(Wake),
) {
    let LoopSpec {
        kind,
        period,
        start,
        end,
        work,
    } = spec;
    clock.sleep_until(start);
    let mut next = start.saturating_add(period);
    let mut grid: u64 = 1;
    let mut index: u64 = 0;
    loop {
        let target = match kind {
            SleepKind::Relative => clock.now().saturating_add(period),
            SleepKind::Absolute | SleepKind::Compensated => next,
        };
        if stop.load(Ordering::Relaxed) || target > end {
            return;
        }
        match kind {
            SleepKind::Absolute => clock.sleep_until(next),
            SleepKind::Relative => clock.sleep_for(period),
            SleepKind::Compensated => {
                let left = next.saturating_sub(clock.now());
                if left > Nanos::ZERO {
                    clock.sleep_for(left);
                }
            }
        }
        let woke = clock.now();
        if woke < target {
            // Woken early by a stop signal: no sample.
            return;
        }
        on_wake(Wake {
            index,
            grid,
            target,
            woke,
        });
        if work > Nanos::ZERO {
            crate::work::burn_cpu(work);
        }
        index += 1;
        grid += 1;
        next = next.saturating_add(period);
        if kind == SleepKind::Absolute {
            while next <= woke {
                next = next.saturating_add(period);
                grid += 1;
            }
        }
    }
}

/// Per-loop state, allocated before the first wake-up.
struct LoopRecorder {
    start: Nanos,
    period: Nanos,
    window: Nanos,
    hist: Histogram<u64>,
    ext: Extremes,
    fit: LagFit,
    series: Vec<Option<Nanos>>,
    wakeups: u64,
    last_grid: u64,
    final_lag: Nanos,
    max_lag: Nanos,
}

impl LoopRecorder {
    fn new(cfg: &DriftConfig, start: Nanos) -> LoopRecorder {
        LoopRecorder {
            start,
            period: cfg.period,
            window: cfg.window(),
            hist: new_histogram(),
            ext: Extremes::default(),
            fit: LagFit::default(),
            series: vec![None; cfg.windows()],
            wakeups: 0,
            last_grid: 0,
            final_lag: Nanos::ZERO,
            max_lag: Nanos::ZERO,
        }
    }

    fn record(&mut self, w: Wake) {
        let latency = w.woke.saturating_sub(w.target);
        self.ext.record(latency);
        self.hist.saturating_record(latency.as_ns());
        let lag = w.lag(self.start, self.period);
        let x = self.period.as_ns().saturating_mul(w.grid);
        self.fit.add(x as f64, lag.as_ns() as f64);
        let slot = (x / self.window.as_ns()) as usize;
        if let Some(cell) = self.series.get_mut(slot) {
            *cell = Some(lag);
        }
        self.wakeups += 1;
        self.last_grid = w.grid;
        self.final_lag = lag;
        self.max_lag = self.max_lag.max(lag);
    }

    fn into_report(self, kind: SleepKind, tid: i32) -> LoopReport {
        LoopReport {
            kind,
            tid,
            wakeups: self.wakeups,
            skipped: self.last_grid.saturating_sub(self.wakeups),
            latency_avg: self.ext.summary(&self.hist).mean(),
            latency_max: self.ext.summary(&self.hist).max,
            final_lag: self.final_lag,
            max_lag: self.max_lag,
            fit: self.fit,
            series: self.series,
        }
    }
}

/// Runs every loop of `cfg` on its own thread from one common start, until
/// the duration has passed or `stop` is set (e.g. by Ctrl-C).
///
/// Fails before the start when a thread cannot get its affinity or policy.
pub fn run_drift(cfg: &DriftConfig, stop: &AtomicBool) -> Result<DriftReport, RtError> {
    cfg.validate()?;
    let threads = cfg.kinds.len();
    let gate = Arc::new(Barrier::new(threads + 1));
    let start_ns = Arc::new(AtomicU64::new(0));
    let abort = Arc::new(AtomicBool::new(false));
    let (setup_tx, setup_rx) = std::sync::mpsc::channel::<Result<(), RtError>>();
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for &kind in &cfg.kinds {
            let (gate, start_ns, abort, setup_tx) = (
                gate.clone(),
                start_ns.clone(),
                abort.clone(),
                setup_tx.clone(),
            );
            let name = format!("rtlab-drift-{}", kind.name());
            let handle = std::thread::Builder::new()
                .name(name.clone())
                .spawn_scoped(scope, move || {
                    let setup = set_up_thread(cfg);
                    let ok = setup.is_ok();
                    let _ = setup_tx.send(setup);
                    let tid = policy::current_tid();
                    gate.wait();
                    if !ok || abort.load(Ordering::SeqCst) {
                        return None;
                    }
                    let start = Nanos::from_ns(start_ns.load(Ordering::SeqCst));
                    let mut rec = LoopRecorder::new(cfg, start);
                    let end = start.saturating_add(cfg.duration);
                    run_loop(
                        &mut MonotonicClock,
                        LoopSpec {
                            kind,
                            period: cfg.period,
                            start,
                            end,
                            work: cfg.work,
                        },
                        stop,
                        |w| rec.record(w),
                    );
                    Some(rec.into_report(kind, tid))
                })
                .map_err(|source| RtError::spawn(name, source))?;
            handles.push(handle);
        }
        drop(setup_tx);
        let mut first_error = None;
        for _ in 0..threads {
            if let Ok(Err(e)) = setup_rx.recv() {
                first_error.get_or_insert(e);
            }
        }
        // A little after the gate opens, so every loop sleeps to the start.
        let start = monotonic_now().saturating_add(Nanos::from_ms(5));
        start_ns.store(start.as_ns(), Ordering::SeqCst);
        abort.store(first_error.is_some(), Ordering::SeqCst);
        gate.wait();
        let loops: Vec<LoopReport> = handles
            .into_iter()
            .filter_map(|h| h.join().ok().flatten())
            .collect();
        if let Some(e) = first_error {
            return Err(e);
        }
        Ok(DriftRun {
            period: cfg.period,
            duration: cfg.duration,
            policy: cfg.policy.to_string(),
            policy_name: cfg.policy.short_name(),
            priority: cfg.policy.priority(),
            cpu: cfg.cpu,
            work: cfg.work,
            window: cfg.window(),
            loops,
            interrupted: stop.load(Ordering::Relaxed),
            wall: monotonic_now().saturating_sub(start),
        })
    })
}

fn set_up_thread(cfg: &DriftConfig) -> Result<(), RtError> {
    if let Some(cpu) = cfg.cpu {
        policy::set_current_thread_affinity(&[cpu])?;
    }
    Ok(policy::set_current_thread_policy(&cfg.policy)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_sys::clock::ScriptedClock;

    const T: Nanos = Nanos::from_ms(1);

    /// The wake-ups of one loop on a scripted clock whose sleeps each
    /// overshoot by `lag` and whose reads each cost `read`.
    fn scripted(kind: SleepKind, lag: Nanos, read: Nanos, end: Nanos) -> Vec<Wake> {
        let mut clock = ScriptedClock::new(Nanos::ZERO, read, vec![lag]);
        let mut wakes = Vec::new();
        let stop = AtomicBool::new(false);
        run_loop(
            &mut clock,
            LoopSpec {
                kind,
                period: T,
                start: Nanos::from_ms(10),
                end,
                work: Nanos::ZERO,
            },
            &stop,
            |w| wakes.push(w),
        );
        wakes
    }

    /// Hand-computed: sleeps overshoot by 20us, reads cost 1us. The
    /// absolute loop wakes at 10ms + k ms + 20us every time (lag 20us,
    /// constant); the relative loop's k-th target is the previous wake-up
    /// plus 1 ms plus the two clock reads between the wake-up and the
    /// sleep, so its lag grows by 20us + 2us = 22us a period; the
    /// compensated loop aims at the grid and keeps a constant lag of 20us
    /// plus the 1us read between computing `next - now` and sleeping.
    #[test]
    fn scripted_lags_grow_only_for_the_relative_loop() {
        let (lag, read) = (Nanos::from_us(20), Nanos::from_us(1));
        let end = Nanos::from_ms(10 + 100);
        let start = Nanos::from_ms(10);
        let abs = scripted(SleepKind::Absolute, lag, read, end);
        assert_eq!(abs.len(), 100);
        for w in &abs {
            assert_eq!(w.target, start + T.checked_mul(w.index + 1).unwrap());
            assert_eq!(w.lag(start, T), lag);
        }
        let rel = scripted(SleepKind::Relative, lag, read, end);
        // The first loop reads the clock at 10ms + 20us (the sleep until
        // the start overshoots too) + 1us.
        for w in &rel {
            let expected = Nanos::from_us(20 + 22 * w.index + 21);
            assert_eq!(w.lag(start, T), expected, "wake-up {}", w.index);
        }
        // Each relative loop loses 22us, so fewer of them fit in 100 ms.
        assert_eq!(rel.len(), 97);
        let comp = scripted(SleepKind::Compensated, lag, read, end);
        assert_eq!(comp.len(), 100);
        for w in &comp {
            assert_eq!(w.target, start + T.checked_mul(w.index + 1).unwrap());
            assert_eq!(w.lag(start, T), lag + read);
        }
    }

    /// Real sleeps on this thread: what must hold whatever the noise.
    /// Relative: each wake-up is at least a period after the previous one,
    /// so the lag never decreases and ends at least at the sum of the
    /// sleeps' overshoots. Absolute and compensated: every target is on the
    /// grid and no wake-up comes before its target.
    #[test]
    fn real_loops_keep_what_must_hold() {
        let stop = AtomicBool::new(false);
        let period = Nanos::from_us(500);
        for kind in SleepKind::ALL {
            let start = monotonic_now().saturating_add(Nanos::from_ms(1));
            let end = start.saturating_add(Nanos::from_ms(100));
            let mut wakes = Vec::with_capacity(256);
            run_loop(
                &mut MonotonicClock,
                LoopSpec {
                    kind,
                    period,
                    start,
                    end,
                    work: Nanos::from_us(20),
                },
                &stop,
                |w| wakes.push(w),
            );
            assert!(wakes.len() > 20, "{kind:?}: {} wake-ups", wakes.len());
            for w in &wakes {
                assert!(w.woke >= w.target, "{kind:?} woke early: {w:?}");
            }
            match kind {
                SleepKind::Relative => {
                    for p in wakes.windows(2) {
                        assert!(p[1].woke >= p[0].woke + period, "{p:?}");
                        assert!(p[1].lag(start, period) >= p[0].lag(start, period), "{p:?}");
                    }
                    let overshoots: u64 = wakes.iter().map(|w| (w.woke - w.target).as_ns()).sum();
                    let last = wakes.last().unwrap().lag(start, period).as_ns();
                    assert!(last >= overshoots, "lag {last} < overshoots {overshoots}");
                    // At least the 20us of work a period.
                    assert!(last >= 20_000 * (wakes.len() as u64 - 1));
                }
                SleepKind::Absolute | SleepKind::Compensated => {
                    for w in &wakes {
                        assert_eq!(
                            w.target,
                            start + period.checked_mul(w.grid).unwrap(),
                            "{w:?}"
                        );
                    }
                }
            }
        }
    }

    /// The threads of a whole run: one report per kind, in order; the
    /// relative loop's series of lags never decreases.
    #[test]
    fn a_run_reports_every_loop() {
        let cfg = DriftConfig {
            period: Nanos::from_ms(1),
            duration: Nanos::from_ms(300),
            kinds: SleepKind::ALL.to_vec(),
            policy: Policy::Other { nice: 0 },
            cpu: None,
            work: Nanos::from_us(50),
            every: Nanos::from_ms(10),
        };
        let stop = AtomicBool::new(false);
        let report = run_drift(&cfg, &stop).unwrap();
        let kinds: Vec<SleepKind> = report.loops.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, SleepKind::ALL.to_vec());
        assert_eq!(report.window, Nanos::from_ms(10));
        let rel = report.of(SleepKind::Relative).unwrap();
        assert!(rel.wakeups > 100 && rel.wakeups <= 300, "{}", rel.wakeups);
        let lags: Vec<Nanos> = rel.series.iter().flatten().copied().collect();
        assert!(lags.windows(2).all(|p| p[1] >= p[0]), "{lags:?}");
        assert!(rel.final_lag >= Nanos::from_us(50 * (rel.wakeups - 1)));
        assert_eq!(rel.skipped, 0);
        assert_eq!(rel.fit.count(), rel.wakeups);
        let (offset, _) = report
            .offset(SleepKind::Relative, SleepKind::Absolute)
            .unwrap();
        let abs = report.of(SleepKind::Absolute).unwrap();
        assert_eq!(
            offset,
            rel.final_lag.as_ns() as i64 - abs.final_lag.as_ns() as i64
        );
    }

    #[test]
    fn the_fit_of_a_straight_line_is_that_line() {
        let mut fit = LagFit::default();
        for k in 0..1000u64 {
            let x = (k * 1_000_000) as f64;
            fit.add(x, 5_000.0 + 0.002 * x);
        }
        assert!((fit.slope() - 0.002).abs() < 1e-12, "{}", fit.slope());
        // 2 us per ms of grid time is 7.2 s per hour.
        assert_eq!(fit.per_hour(), Nanos::from_ms(7200));
        assert_eq!(LagFit::default().slope(), 0.0);
    }

    /// The scripted relative loop's fit finds its 22 us per period.
    #[test]
    fn scripted_relative_drift_per_hour() {
        let start = Nanos::from_ms(10);
        let mut fit = LagFit::default();
        for w in scripted(
            SleepKind::Relative,
            Nanos::from_us(20),
            Nanos::from_us(1),
            Nanos::from_ms(1010),
        ) {
            fit.add(
                T.checked_mul(w.grid).unwrap().as_ns() as f64,
                w.lag(start, T).as_ns() as f64,
            );
        }
        // 22 us per 1 ms period = 0.022 = 79.2 s per hour.
        assert!((fit.slope() - 0.022).abs() < 1e-9, "{}", fit.slope());
    }

    #[test]
    fn bad_configurations_name_their_setting() {
        let good = DriftConfig {
            period: Nanos::from_ms(1),
            duration: Nanos::from_secs(1),
            kinds: vec![SleepKind::Absolute, SleepKind::Relative],
            policy: Policy::Other { nice: 0 },
            cpu: None,
            work: Nanos::ZERO,
            every: Nanos::from_ms(100),
        };
        assert!(good.validate().is_ok());
        for (cfg, needle) in [
            (
                DriftConfig {
                    period: Nanos::from_us(50),
                    ..good.clone()
                },
                "invalid period 50us",
            ),
            (
                DriftConfig {
                    duration: Nanos::from_ms(1),
                    ..good.clone()
                },
                "invalid duration 1ms",
            ),
            (
                DriftConfig {
                    kinds: vec![],
                    ..good.clone()
                },
                "invalid kinds",
            ),
            (
                DriftConfig {
                    kinds: vec![SleepKind::Relative, SleepKind::Relative],
                    ..good.clone()
                },
                "name each kind once",
            ),
            (
                DriftConfig {
                    work: Nanos::from_ms(1),
                    ..good.clone()
                },
                "invalid work 1ms",
            ),
            (
                DriftConfig {
                    every: Nanos::from_us(500),
                    ..good.clone()
                },
                "invalid every 500us",
            ),
            (
                DriftConfig {
                    policy: Policy::Deadline {
                        runtime: Nanos::from_us(100),
                        deadline: Nanos::from_ms(1),
                        period: Nanos::from_ms(1),
                    },
                    ..good.clone()
                },
                "invalid policy deadline: a SCHED_DEADLINE thread",
            ),
        ] {
            let e = cfg.validate().unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        // A day in 1 s windows fits; a day in 1 ms windows is raised to
        // duration / MAX_WINDOWS, rounded up to whole periods.
        let day = DriftConfig {
            duration: Nanos::from_secs(86_400),
            every: Nanos::from_ms(1),
            ..good
        };
        assert_eq!(day.window(), Nanos::from_ms(4320));
        assert!(day.windows() as u64 <= MAX_WINDOWS + 1);
    }
}
