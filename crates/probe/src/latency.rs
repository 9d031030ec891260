//! The latency probe: cyclictest's measurement, as a library.
//!
//! Each of `threads` threads sets its affinity and policy, then loops: sleep
//! until `next` with `clock_nanosleep(TIMER_ABSTIME)`, read
//! `CLOCK_MONOTONIC`, record the **wake-up latency** `now - next` and the
//! **period jitter** (time since the previous wake-up minus the interval),
//! advance `next` by the interval and skip periods already missed. Thread
//! `i` uses the interval `interval + i * distance`.
//!
//! **Relative timers** ([`TimerMode::Relative`], cyclictest's `-r`): each
//! loop reads the clock (`before`), sleeps `interval` with a relative
//! `clock_nanosleep`, reads the clock again (`now`) and records the
//! latency `now - (before + interval)`, exactly as cyclictest computes it
//! with `-r`: the overshoot of that one sleep. What the loop spends between
//! a wake-up and the next `before` (recording, preemption) is in no sample
//! but pushes every later wake-up back, so the loop falls behind the grid
//! `start + k * interval`; the report keeps how far its last wake-up was
//! behind ([`ThreadReport::drift`]). No period is ever missed in this mode.
//!
//! Everything the loop touches is allocated before it starts: an HDR
//! histogram per quantity (records never allocate), a per-microsecond bucket
//! array for the cyclictest histogram file, a fixed table of the worst
//! outliers, and, for the time series (`--series`), a pre-faulted ring per
//! thread that a writer thread streams to the file as the run goes
//! ([`rtlab_rt::stream`]), so memory does not grow with loops. Nothing inside
//! the loop allocates, takes a lock, waits or prints; the stop flag is a
//! relaxed atomic.
//!
//! **Series rings.** Each thread's ring holds [`SERIES_WINDOW`] (2 s) of its
//! samples plus 64, at least [`SERIES_MIN`], all threads together at most
//! [`SERIES_BUDGET`] points (32 bytes each: 32 MiB); the writer empties them
//! every 10 ms. A sample that finds its ring full is dropped and counted
//! (`series_dropped`), never waited for.
//!
//! A run always ends: at `loops`, at `duration`, when the stop flag is set
//! (Ctrl-C), and at the latest a grace period after the expected end, when
//! threads that have not reported are given up on and reported as such.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use hdrhistogram::Histogram;
use rtlab_model::Nanos;
use serde::Serialize;

use rtlab_host::policy::{self, Policy};
use rtlab_rt::stats::{new_histogram, Extremes, Summary};
use rtlab_rt::stream::{ring_capacities, start_streams, Drainer, RecordSender, RecordSink};
use rtlab_rt::RtError;
use rtlab_sys::clock::{monotonic_now, Clock, MonotonicClock, Sleeper};

/// Samples of each thread one series ring holds.
pub const SERIES_WINDOW: Nanos = Nanos::from_secs(2);
/// Smallest series ring, in points.
pub const SERIES_MIN: usize = 1024;
/// Points of all series rings together, at most (each keeps [`SERIES_MIN`]).
pub const SERIES_BUDGET: usize = 1 << 20;
/// Most worst wake-ups kept per thread (each sample is compared with them).
pub const MAX_OUTLIERS: usize = 1000;
/// Most histogram buckets over all threads (8 bytes each, twice: counts and
/// overflow loop numbers).
pub const MAX_HISTOGRAM_CELLS: usize = 1 << 24;

/// Where the measuring threads run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Affinity {
    /// Wherever the scheduler puts them.
    #[default]
    Unpinned,
    /// Thread `i` is pinned to `cpus[i % cpus.len()]`.
    RoundRobin(Vec<usize>),
}

impl Affinity {
    /// The CPU of thread `i`, if pinned.
    pub fn cpu_of(&self, i: usize) -> Option<usize> {
        match self {
            Affinity::Unpinned => None,
            Affinity::RoundRobin(cpus) if cpus.is_empty() => None,
            Affinity::RoundRobin(cpus) => Some(cpus[i % cpus.len()]),
        }
    }
}

/// How a measuring thread times its wake-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimerMode {
    /// Sleep until `start + k * interval` with `clock_nanosleep(TIMER_ABSTIME)`
    /// (cyclictest's default, Ada's `delay until`): a late wake-up does not
    /// move later ones.
    #[default]
    Absolute,
    /// Sleep `interval` from a clock read just before the sleep, with a
    /// relative `clock_nanosleep` (cyclictest `-r`, Ada's `delay`): every
    /// delay between a wake-up and the next sleep accumulates.
    Relative,
}

impl TimerMode {
    /// `absolute` or `relative`.
    pub fn name(self) -> &'static str {
        match self {
            TimerMode::Absolute => "absolute",
            TimerMode::Relative => "relative",
        }
    }
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// Measuring threads (at least 1).
    pub threads: usize,
    /// Interval of thread 0.
    pub interval: Nanos,
    /// Added to the interval of each further thread.
    pub distance: Nanos,
    /// Policy of every thread. For SCHED_DEADLINE the runtime is kept and the
    /// deadline and period are set to the thread's interval.
    pub policy: Policy,
    /// Pinning.
    pub affinity: Affinity,
    /// Loops per thread (`None`: until `duration`).
    pub loops: Option<u64>,
    /// Run length (`None`: until `loops`). One of the two must be set.
    pub duration: Option<Nanos>,
    /// Buckets of the per-microsecond histogram (cyclictest `-h`).
    pub histogram_buckets: usize,
    /// Worst wake-ups to keep per thread (at most [`MAX_OUTLIERS`]).
    pub outliers: usize,
    /// Absolute (default) or relative timers.
    pub timer: TimerMode,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            threads: 1,
            interval: Nanos::from_ms(1),
            distance: Nanos::from_us(500),
            policy: Policy::Fifo { priority: 99 },
            affinity: Affinity::Unpinned,
            loops: None,
            duration: Some(Nanos::from_secs(10)),
            histogram_buckets: 1000,
            outliers: 10,
            timer: TimerMode::Absolute,
        }
    }
}

impl ProbeConfig {
    /// The interval of thread `i`.
    pub fn interval_of(&self, i: usize) -> Nanos {
        self.interval
            .saturating_add(self.distance.checked_mul(i as u64).unwrap_or(Nanos::MAX))
    }

    /// The policy of thread `i`.
    pub fn policy_of(&self, i: usize) -> Policy {
        match self.policy {
            Policy::Deadline { runtime, .. } => Policy::Deadline {
                runtime,
                deadline: self.interval_of(i),
                period: self.interval_of(i),
            },
            p => p,
        }
    }

    /// Loops thread `i` will run at most.
    pub fn loops_of(&self, i: usize) -> u64 {
        let by_duration = self
            .duration
            .map(|d| d.div_floor(self.interval_of(i)).max(1));
        match (self.loops, by_duration) {
            (Some(l), Some(d)) => l.min(d),
            (Some(l), None) => l,
            (None, Some(d)) => d,
            (None, None) => 0,
        }
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), RtError> {
        let invalid = |what: &str, why: &str| {
            Err(RtError::Invalid {
                what: what.into(),
                why: why.into(),
            })
        };
        let setting = |setting: &'static str, value: String, why: &str| {
            Err(RtError::Setting {
                setting,
                value: Some(value),
                why: why.into(),
            })
        };
        if self.threads == 0 {
            return setting("threads", "0".into(), "measure with at least one thread");
        }
        if self.interval < Nanos::from_us(10) {
            return setting(
                "interval",
                self.interval.to_string(),
                "use at least 10us (shorter intervals only measure the timer's own overhead)",
            );
        }
        if self.loops.is_none() && self.duration.is_none() {
            return invalid("run length", "give a number of loops or a duration");
        }
        if self.loops == Some(0) || self.duration == Some(Nanos::ZERO) {
            return invalid("run length", "loops and duration must be above zero");
        }
        if self.outliers > MAX_OUTLIERS {
            return setting(
                "outliers",
                self.outliers.to_string(),
                &format!("keep at most {MAX_OUTLIERS} (every sample is compared with them)"),
            );
        }
        if self.threads.saturating_mul(self.histogram_buckets) > MAX_HISTOGRAM_CELLS {
            return Err(RtError::HistogramCells {
                threads: self.threads,
                buckets: self.histogram_buckets,
                max: MAX_HISTOGRAM_CELLS,
            });
        }
        if self.timer == TimerMode::Relative && matches!(self.policy, Policy::Deadline { .. }) {
            return Err(RtError::Setting {
                setting: "relative",
                value: None,
                why: RELATIVE_DEADLINE_REFUSAL.into(),
            });
        }
        for i in 0..self.threads {
            self.policy_of(i).validate()?;
        }
        Ok(())
    }

    fn expected_length(&self) -> Nanos {
        (0..self.threads)
            .map(|i| {
                self.interval_of(i)
                    .checked_mul(self.loops_of(i).saturating_add(1))
                    .unwrap_or(Nanos::MAX)
            })
            .max()
            .unwrap_or(Nanos::ZERO)
    }
}

/// Why relative timers are refused under SCHED_DEADLINE.
///
/// A SCHED_DEADLINE thread is admitted for a reservation whose period is
/// the interval: the kernel's periodic form of such a task waits for its
/// next period with `sched_yield()` (Documentation/scheduler/sched-deadline.rst,
/// 4.4; rt-tests' cyclicdeadline), an absolute timeline kept by the CBS, and
/// this probe sleeps to the same absolute grid. A relative sleep would make
/// every activation sporadic, the CBS restarting the deadline at each late
/// wake-up, so what it measured would no longer be the reservation; and
/// cyclictest `-r` has no deadline mode to compare with.
pub const RELATIVE_DEADLINE_REFUSAL: &str = "a SCHED_DEADLINE thread is released on its reservation's period, an absolute timeline the kernel keeps (sched_yield waits for the next period); a sleep counted from the previous wake-up would drift off that period and measure a sporadic task instead: use --relative with --policy fifo, rr or other";

/// One of the worst wake-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outlier {
    /// Loop number (0-based).
    pub loop_index: u64,
    /// When it should have woken, from the start of the run.
    pub at: Nanos,
    /// Its wake-up latency.
    pub latency: Nanos,
}

pub use rtlab_model::results::SeriesPoint;

/// What one thread measured.
#[derive(Debug, Clone)]
pub struct ThreadReport {
    /// Thread number (0-based).
    pub index: usize,
    /// Kernel thread id.
    pub tid: i32,
    /// Pinned CPU.
    pub cpu: Option<usize>,
    /// Its policy.
    pub policy: Policy,
    /// Its interval.
    pub interval: Nanos,
    /// Loops measured.
    pub loops: u64,
    /// Loops it was asked to run.
    pub requested_loops: u64,
    /// Wake-up latency.
    pub latency: Summary,
    /// The last latency (cyclictest's `Act`).
    pub last: Nanos,
    /// |period - interval| between consecutive wake-ups.
    pub jitter: Summary,
    /// Smallest signed period deviation (ns, negative: a short period).
    pub jitter_min_ns: i64,
    /// Largest signed period deviation.
    pub jitter_max_ns: i64,
    /// Periods skipped because a wake-up came after the next release.
    pub missed_periods: u64,
    /// How the thread timed its wake-ups.
    pub timer: TimerMode,
    /// Relative timers only: how far its last wake-up was behind the grid,
    /// `last wake-up - (start + loops * interval)` (never negative: each
    /// relative wake-up is at least an interval after the previous one).
    pub drift: Option<Nanos>,
    /// HDR histogram of the latency (ns).
    pub latency_histogram: Histogram<u64>,
    /// Counts per microsecond of latency, `0..histogram_buckets`.
    pub buckets_us: Vec<u64>,
    /// Samples at or above the last bucket.
    pub overflows: u64,
    /// Loop numbers of the first overflows (as many as there are buckets).
    pub overflow_loops: Vec<u64>,
    /// Worst wake-ups, worst first.
    pub outliers: Vec<Outlier>,
    /// Series points lost because the thread's ring was full (0 without
    /// a series).
    pub series_dropped: u64,
}

/// What a probe run measured.
#[derive(Debug, Clone)]
pub struct ProbeReport {
    /// One per thread that reported, in thread order.
    pub threads: Vec<ThreadReport>,
    /// Threads that did not report within the grace period after the end.
    pub lost_threads: Vec<usize>,
    /// Stopped early by the stop flag (Ctrl-C).
    pub interrupted: bool,
    /// Wall time from the common start to the last report.
    pub wall: Nanos,
}

/// Per-thread state, allocated before the loop.
struct Recorder {
    hist: Histogram<u64>,
    jitter_hist: Histogram<u64>,
    ext: Extremes,
    jitter_ext: Extremes,
    jitter_min: i64,
    jitter_max: i64,
    buckets: Vec<u64>,
    overflows: u64,
    overflow_loops: Vec<u64>,
    outliers: Vec<Outlier>,
    outlier_cap: usize,
    series: Option<RecordSender<SeriesPoint>>,
    last: Nanos,
    missed: u64,
    loops: u64,
    drift: Option<Nanos>,
}

impl Recorder {
    fn new(cfg: &ProbeConfig, series: Option<RecordSender<SeriesPoint>>) -> Recorder {
        Recorder {
            hist: new_histogram(),
            jitter_hist: new_histogram(),
            ext: Extremes::default(),
            jitter_ext: Extremes::default(),
            jitter_min: i64::MAX,
            jitter_max: i64::MIN,
            buckets: vec![0; cfg.histogram_buckets.max(1)],
            overflows: 0,
            // cyclictest keeps as many overflow loop numbers as it has buckets.
            overflow_loops: Vec::with_capacity(cfg.histogram_buckets.max(1)),
            outliers: Vec::with_capacity(cfg.outliers),
            outlier_cap: cfg.outliers,
            series,
            last: Nanos::ZERO,
            missed: 0,
            loops: 0,
            drift: None,
        }
    }

    /// Records one wake-up. Allocation-free: every container has its room.
    #[inline]
    fn record(&mut self, index: u64, at: Nanos, latency: Nanos, jitter: Option<i64>) {
        self.loops += 1;
        self.last = latency;
        self.ext.record(latency);
        self.hist.saturating_record(latency.as_ns());
        let bucket = (latency.as_ns() / 1000) as usize;
        if bucket < self.buckets.len() {
            self.buckets[bucket] += 1;
        } else {
            self.overflows += 1;
            if self.overflow_loops.len() < self.overflow_loops.capacity() {
                self.overflow_loops.push(index);
            }
        }
        if self.outlier_cap > 0 {
            let o = Outlier {
                loop_index: index,
                at,
                latency,
            };
            if self.outliers.len() < self.outlier_cap {
                self.outliers.push(o);
            } else if let Some(least) = self.outliers.iter_mut().min_by_key(|o| o.latency) {
                if latency > least.latency {
                    *least = o;
                }
            }
        }
        let jitter_ns = jitter.unwrap_or(0);
        if jitter.is_some() {
            self.jitter_min = self.jitter_min.min(jitter_ns);
            self.jitter_max = self.jitter_max.max(jitter_ns);
            let abs = Nanos::from_ns(jitter_ns.unsigned_abs());
            self.jitter_ext.record(abs);
            self.jitter_hist.saturating_record(abs.as_ns());
        }
        if let Some(series) = &mut self.series {
            series.send(SeriesPoint {
                loop_index: index,
                at,
                latency,
                jitter_ns,
            });
        }
    }

    fn into_report(
        mut self,
        index: usize,
        tid: i32,
        cfg: &ProbeConfig,
        requested_loops: u64,
    ) -> ThreadReport {
        self.outliers.sort_by(|a, b| {
            b.latency
                .cmp(&a.latency)
                .then(a.loop_index.cmp(&b.loop_index))
        });
        let has_jitter = !self.jitter_hist.is_empty();
        ThreadReport {
            index,
            tid,
            cpu: cfg.affinity.cpu_of(index),
            policy: cfg.policy_of(index),
            interval: cfg.interval_of(index),
            loops: self.loops,
            requested_loops,
            latency: self.ext.summary(&self.hist),
            last: self.last,
            jitter: self.jitter_ext.summary(&self.jitter_hist),
            jitter_min_ns: if has_jitter { self.jitter_min } else { 0 },
            jitter_max_ns: if has_jitter { self.jitter_max } else { 0 },
            missed_periods: self.missed,
            timer: cfg.timer,
            drift: self.drift,
            latency_histogram: self.hist,
            buckets_us: self.buckets,
            overflows: self.overflows,
            overflow_loops: self.overflow_loops,
            outliers: self.outliers,
            series_dropped: self.series.as_ref().map_or(0, RecordSender::dropped),
        }
    }
}

/// Runs the probe. `stop` ends it early (set it from a Ctrl-C handler); the
/// probe only reads it.
///
/// Fails before measuring when any thread cannot get its affinity or
/// policy (the error of the first such thread).
pub fn run_probe(cfg: &ProbeConfig, stop: &AtomicBool) -> Result<ProbeReport, RtError> {
    run_probe_with_series(cfg, stop, None).map(|(report, _)| report)
}

/// [`run_probe`], with every sample also written to `series` as CSV
/// ([`SeriesCsv`]) as the run goes. Returns the report and how writing the
/// series went (an error stops the writing, not the measurement).
pub fn run_probe_with_series(
    cfg: &ProbeConfig,
    stop: &AtomicBool,
    series: Option<Box<dyn Write + Send>>,
) -> Result<(ProbeReport, io::Result<()>), RtError> {
    run_probe_with_tap(cfg, stop, series, None)
}

/// A callback that sees every sample of the time series (thread, point)
/// on the series writer thread, never on a measuring thread.
pub type SeriesTap = Box<dyn FnMut(usize, SeriesPoint) + Send>;

/// [`run_probe_with_series`], with every sample also handed to `tap`
/// (e.g. to save it in the results store). The series is recorded when
/// either is given.
pub fn run_probe_with_tap(
    cfg: &ProbeConfig,
    stop: &AtomicBool,
    series: Option<Box<dyn Write + Send>>,
    tap: Option<SeriesTap>,
) -> Result<(ProbeReport, io::Result<()>), RtError> {
    cfg.validate()?;
    let sink = (series.is_some() || tap.is_some()).then(|| SeriesOut {
        csv: series.map(SeriesCsv::new),
        tap,
    });
    let intervals: Vec<Nanos> = (0..cfg.threads).map(|i| cfg.interval_of(i)).collect();
    let (rings, writer) = start_streams(
        "rtlab-series-writer",
        ring_capacities(&intervals, SERIES_WINDOW, SERIES_MIN, SERIES_BUDGET),
        SeriesPoint::default(),
        sink,
        None,
    )?;
    let finish_series = |writer: Option<Drainer<SeriesOut>>| match writer {
        Some(w) => w.finish().finish(),
        None => Ok(()),
    };
    let halt = Arc::new(AtomicBool::new(false));
    let gate = Arc::new(Barrier::new(cfg.threads + 1));
    let start_ns = Arc::new(AtomicU64::new(0));
    let abort = Arc::new(AtomicBool::new(false));
    let (setup_tx, setup_rx) = mpsc::channel::<Result<(), RtError>>();
    let (done_tx, done_rx) = mpsc::channel::<ThreadReport>();
    rtlab_sys::resource::limit_malloc_arenas();
    for (i, ring) in rings.into_iter().enumerate() {
        let cfg = cfg.clone();
        let (gate, start_ns, abort, halt) =
            (gate.clone(), start_ns.clone(), abort.clone(), halt.clone());
        let (setup_tx, done_tx) = (setup_tx.clone(), done_tx.clone());
        let name = format!("rtlab-probe-{i}");
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                let setup = setup_thread(&cfg, i);
                let ok = setup.is_ok();
                let _ = setup_tx.send(setup);
                let requested = cfg.loops_of(i);
                let mut rec = Recorder::new(&cfg, ring);
                let tid = policy::current_tid();
                gate.wait();
                if !ok || abort.load(Ordering::SeqCst) {
                    return;
                }
                let start = Nanos::from_ns(start_ns.load(Ordering::SeqCst));
                measure(&cfg, i, start, requested, &halt, &mut rec);
                let _ = done_tx.send(rec.into_report(i, tid, &cfg, requested));
            })
            .map_err(|source| RtError::spawn(name, source))?;
    }
    drop((setup_tx, done_tx));
    let mut first_error = None;
    for _ in 0..cfg.threads {
        match setup_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(_) => break,
        }
    }
    // Start a little after the gate opens, so every thread sleeps to its
    // first release rather than starting late.
    let start = monotonic_now() + Nanos::from_ms(2);
    start_ns.store(start.as_ns(), Ordering::SeqCst);
    abort.store(first_error.is_some(), Ordering::SeqCst);
    gate.wait();
    if let Some(e) = first_error {
        let _ = finish_series(writer);
        return Err(e);
    }

    // Loop-bound runs may take longer than loops x interval when periods are
    // missed: they are halted a grace period after the expected end, and
    // threads still silent a grace period later are given up on.
    let expected_end = start.saturating_add(cfg.expected_length());
    let longest = cfg.interval_of(cfg.threads - 1);
    let grace = Nanos::from_secs(1).saturating_add(longest.saturating_add(longest));
    let mut halt_at = expected_end.saturating_add(grace);
    let mut give_up = halt_at.saturating_add(grace);
    let mut reports: Vec<ThreadReport> = Vec::with_capacity(cfg.threads);
    let mut interrupted = false;
    while reports.len() < cfg.threads {
        let now = monotonic_now();
        if now >= give_up {
            break;
        }
        if !interrupted && stop.load(Ordering::Relaxed) {
            // Ctrl-C: every thread sees the halt within one interval.
            interrupted = true;
            halt_at = now;
            give_up = now.saturating_add(grace);
        }
        if now >= halt_at {
            halt.store(true, Ordering::Relaxed);
        }
        let step = (give_up - now).min(Nanos::from_ms(50));
        match done_rx.recv_timeout(Duration::from(step)) {
            Ok(r) => reports.push(r),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    halt.store(true, Ordering::Relaxed);
    reports.sort_by_key(|r| r.index);
    let lost_threads = (0..cfg.threads)
        .filter(|i| !reports.iter().any(|r| r.index == *i))
        .collect();
    let wall = monotonic_now().saturating_sub(start);
    // Every thread that reported has queued its last point.
    let series = finish_series(writer);
    Ok((
        ProbeReport {
            threads: reports,
            lost_threads,
            interrupted,
            wall,
        },
        series,
    ))
}

fn setup_thread(cfg: &ProbeConfig, i: usize) -> Result<(), RtError> {
    if let Some(cpu) = cfg.affinity.cpu_of(i) {
        policy::set_current_thread_affinity(&[cpu])?;
    }
    policy::set_current_thread_policy(&cfg.policy_of(i)).map_err(RtError::from)
}

/// The measuring loop. Nothing here allocates, locks or prints.
///
/// Absolute timers (cyclictest's default): sleep until `next`, latency
/// `now - next`, `next += interval`, skipping periods already past.
/// Relative timers (cyclictest's `-r`): `next = now() + interval`, sleep
/// `interval`, latency `now - next`; the thread first sleeps until the
/// common `start`, so its drift is measured from the same grid as the
/// absolute threads'.
fn measure(
    cfg: &ProbeConfig,
    i: usize,
    start: Nanos,
    loops: u64,
    stop: &AtomicBool,
    rec: &mut Recorder,
) {
    let mut clock = MonotonicClock;
    let interval = cfg.interval_of(i);
    let end = cfg.duration.map(|d| start.saturating_add(d));
    let relative = cfg.timer == TimerMode::Relative;
    let mut next = start.saturating_add(interval);
    if relative {
        clock.sleep_until(start);
    }
    let mut previous: Option<Nanos> = None;
    for index in 0..loops {
        if relative {
            next = clock.now().saturating_add(interval);
        }
        if stop.load(Ordering::Relaxed) || end.is_some_and(|e| next > e) {
            break;
        }
        if relative {
            clock.sleep_for(interval);
        } else {
            clock.sleep_until(next);
        }
        // Woken early, by a stop signal (`rtlab_host::interrupt`): wait for the
        // halt, which follows within 50 ms, in short sleeps; no sample.
        while clock.now() < next && !stop.load(Ordering::Relaxed) {
            clock.sleep_until(next.min(clock.now().saturating_add(Nanos::from_ms(1))));
        }
        if clock.now() < next {
            break;
        }
        let now = clock.now();
        let latency = now.saturating_sub(next);
        let jitter = previous.map(|p| {
            (now.as_ns() as i64)
                .saturating_sub(p.as_ns() as i64)
                .saturating_sub(interval.as_ns() as i64)
        });
        rec.record(index, next.saturating_sub(start), latency, jitter);
        previous = Some(now);
        if relative {
            let grid = interval.checked_mul(index + 1).unwrap_or(Nanos::MAX);
            rec.drift = Some(now.saturating_sub(start.saturating_add(grid)));
        } else {
            next = next.saturating_add(interval);
            while next <= now {
                next = next.saturating_add(interval);
                rec.missed += 1;
            }
        }
    }
}

/// The cyclictest histogram file (`cyclictest -h N` output): one line per
/// microsecond with the count of each thread, then totals, min / avg / max
/// latencies in microseconds, overflow counts and the loop numbers of the
/// overflows.
pub fn cyclictest_histogram(threads: &[ThreadReport]) -> String {
    use std::fmt::Write;
    let mut out = String::from("# Histogram\n");
    let buckets = threads
        .iter()
        .map(|t| t.buckets_us.len())
        .max()
        .unwrap_or(0);
    for b in 0..buckets {
        let counts: Vec<String> = threads
            .iter()
            .map(|t| format!("{:06}", t.buckets_us.get(b).copied().unwrap_or(0)))
            .collect();
        let _ = writeln!(out, "{b:06} {}", counts.join("\t"));
    }
    let row = |label: &str, f: &dyn Fn(&ThreadReport) -> String| {
        let cells: Vec<String> = threads.iter().map(f).collect();
        format!("# {label}: {}\n", cells.join(" "))
    };
    let us = |n: Nanos| n.as_ns() / 1000;
    // As in cyclictest, the total counts the samples inside the histogram.
    out += &row("Total", &|t| {
        format!("{:09}", t.buckets_us.iter().sum::<u64>())
    });
    out += &row("Min Latencies", &|t| format!("{:05}", us(t.latency.min)));
    out += &row("Avg Latencies", &|t| format!("{:05}", us(t.latency.mean())));
    out += &row("Max Latencies", &|t| format!("{:05}", us(t.latency.max)));
    out += &row("Histogram Overflows", &|t| format!("{:05}", t.overflows));
    out += "# Histogram Overflow at cycle number:\n";
    for t in threads {
        let _ = write!(out, "# Thread {}:", t.index);
        for l in &t.overflow_loops {
            let _ = write!(out, " {l:05}");
        }
        let shown = t.overflow_loops.len() as u64;
        if shown < t.overflows {
            let _ = write!(out, " # {:05} others", t.overflows - shown);
        }
        out.push('\n');
    }
    out
}

/// cyclictest's summary line for one thread, times in microseconds:
/// `T: 0 ( 1234) P:99 I:1000 C:   1000 Min:      3 Act:    5 Avg:    6 Max:      40`.
pub fn cyclictest_line(t: &ThreadReport) -> String {
    let us = |n: Nanos| n.as_ns() / 1000;
    format!(
        "T:{:2} ({:5}) P:{:2} I:{} C:{:7} Min:{:7} Act:{:5} Avg:{:5} Max:{:8}",
        t.index,
        t.tid,
        t.policy.priority(),
        us(t.interval),
        t.loops,
        us(t.latency.min),
        us(t.last),
        us(t.latency.mean()),
        us(t.latency.max),
    )
}

/// The header of the CSV time series (`--series`).
pub const SERIES_CSV_HEADER: &str = "thread,loop,time_ns,latency_ns,jitter_ns";

/// The CSV time series, written point by point: `thread,loop,time_ns,
/// latency_ns,jitter_ns`. Each thread's rows are in loop order; threads are
/// interleaved in the order the writer drains them. Written through the
/// `csv` crate's fixed-size buffer on the writer thread. After the first
/// write error nothing more is written and the error is kept.
pub struct SeriesCsv {
    out: csv::Writer<Box<dyn Write + Send>>,
    state: io::Result<()>,
}

/// One row of [`SeriesCsv`], in [`SERIES_CSV_HEADER`] order.
#[derive(Serialize)]
struct SeriesRow {
    thread: usize,
    #[serde(rename = "loop")]
    loop_index: u64,
    time_ns: u64,
    latency_ns: u64,
    jitter_ns: i64,
}

impl SeriesCsv {
    /// Writes the header to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> SeriesCsv {
        let mut out = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        let state = out
            .write_record(SERIES_CSV_HEADER.split(','))
            .map_err(io::Error::from);
        SeriesCsv { out, state }
    }

    /// Flushes; the first error, if any.
    pub fn finish(mut self) -> io::Result<()> {
        self.state?;
        self.out.flush()
    }
}

impl RecordSink<SeriesPoint> for SeriesCsv {
    fn accept(&mut self, thread: usize, p: SeriesPoint) {
        if self.state.is_ok() {
            let row = SeriesRow {
                thread,
                loop_index: p.loop_index,
                time_ns: p.at.as_ns(),
                latency_ns: p.latency.as_ns(),
                jitter_ns: p.jitter_ns,
            };
            self.state = self.out.serialize(row).map_err(io::Error::from);
        }
    }
}

/// Where the series goes: the CSV, the tap, or both.
struct SeriesOut {
    csv: Option<SeriesCsv>,
    tap: Option<SeriesTap>,
}

impl SeriesOut {
    fn finish(self) -> io::Result<()> {
        self.csv.map_or(Ok(()), SeriesCsv::finish)
    }
}

impl RecordSink<SeriesPoint> for SeriesOut {
    fn accept(&mut self, thread: usize, p: SeriesPoint) {
        if let Some(csv) = &mut self.csv {
            csv.accept(thread, p);
        }
        if let Some(tap) = &mut self.tap {
            tap(thread, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_rt::stream::record_ring;

    fn cfg() -> ProbeConfig {
        ProbeConfig {
            threads: 2,
            interval: Nanos::from_us(1000),
            distance: Nanos::from_us(500),
            policy: Policy::Other { nice: 0 },
            loops: Some(10),
            duration: None,
            histogram_buckets: 5,
            outliers: 2,
            ..ProbeConfig::default()
        }
    }

    #[test]
    fn per_thread_intervals_loops_and_policies() {
        let mut c = cfg();
        assert_eq!(c.interval_of(1), Nanos::from_us(1500));
        assert_eq!(c.loops_of(1), 10);
        c.duration = Some(Nanos::from_ms(6));
        assert_eq!(c.loops_of(0), 6);
        assert_eq!(c.loops_of(1), 4);
        c.policy = Policy::Deadline {
            runtime: Nanos::from_us(100),
            deadline: Nanos::ZERO,
            period: Nanos::ZERO,
        };
        assert_eq!(
            c.policy_of(1),
            Policy::Deadline {
                runtime: Nanos::from_us(100),
                deadline: Nanos::from_us(1500),
                period: Nanos::from_us(1500)
            }
        );
        assert!(c.validate().is_ok());
    }

    #[test]
    fn bad_configurations_are_refused_with_reasons() {
        let mut c = cfg();
        c.threads = 0;
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("at least one"));
        let mut c = cfg();
        c.interval = Nanos::from_us(1);
        assert!(c.validate().unwrap_err().to_string().contains("10us"));
        let mut c = cfg();
        c.loops = None;
        assert!(c.validate().is_err());
    }

    #[test]
    fn recorder_keeps_worst_outliers_buckets_and_overflows() {
        let c = cfg();
        let (ring, mut points) = record_ring(3, SeriesPoint::default());
        let mut r = Recorder::new(&c, Some(ring));
        for (k, us) in [1u64, 7, 3, 9, 2].iter().enumerate() {
            let jitter = (k > 0).then_some(*us as i64 * 100 - 300);
            r.record(
                k as u64,
                Nanos::from_ms(k as u64),
                Nanos::from_us(*us),
                jitter,
            );
        }
        let t = r.into_report(0, 42, &c, 10);
        assert_eq!(t.loops, 5);
        assert_eq!(t.latency.max, Nanos::from_us(9));
        assert_eq!(t.latency.min, Nanos::from_us(1));
        assert_eq!(t.last, Nanos::from_us(2));
        assert_eq!(t.buckets_us, vec![0, 1, 1, 1, 0]);
        assert_eq!(t.overflows, 2);
        assert_eq!(t.overflow_loops, vec![1, 3]);
        let worst: Vec<u64> = t.outliers.iter().map(|o| o.loop_index).collect();
        assert_eq!(worst, vec![3, 1]);
        // A ring of 3: the first 3 points are queued, 2 dropped and counted.
        assert_eq!(t.series_dropped, 2);
        let mut queued = Vec::new();
        points.drain(|p| queued.push(p));
        assert_eq!(queued.len(), 3);
        assert_eq!(
            queued[1],
            SeriesPoint {
                loop_index: 1,
                at: Nanos::from_ms(1),
                latency: Nanos::from_us(7),
                jitter_ns: 400
            }
        );
        assert_eq!((t.jitter_min_ns, t.jitter_max_ns), (-100, 600));
        assert_eq!(t.jitter.count, 4);
        let text = cyclictest_histogram(std::slice::from_ref(&t));
        assert!(text.starts_with("# Histogram\n000000 000000\n000001 000001\n"));
        assert!(text.contains("# Total: 000000003\n"));
        assert!(text.contains("# Max Latencies: 00009\n"));
        assert!(text.contains("# Thread 0: 00001 00003\n"));
        let line = cyclictest_line(&t);
        assert_eq!(
            line,
            "T: 0 (   42) P: 0 I:1000 C:      5 Min:      1 Act:    2 Avg:    4 Max:       9"
        );
    }

    /// A Write that appends to a shared buffer.
    #[derive(Clone, Default)]
    struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn series_csv_rows() {
        let out = Shared::default();
        let mut csv = SeriesCsv::new(Box::new(out.clone()));
        let p = |k: u64| SeriesPoint {
            loop_index: k,
            at: Nanos::from_ms(k + 1),
            latency: Nanos::from_us(7),
            jitter_ns: -40,
        };
        csv.accept(1, p(0));
        csv.accept(0, p(1));
        csv.finish().unwrap();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "thread,loop,time_ns,latency_ns,jitter_ns\n1,0,1000000,7000,-40\n0,1,2000000,7000,-40\n"
        );
    }

    /// The CSV series as rows of numbers.
    fn series_rows(out: &Shared) -> Vec<Vec<i64>> {
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .skip(1)
            .map(|l| l.split(',').map(|c| c.parse::<i64>().unwrap()).collect())
            .collect()
    }

    /// Relative timers on a real thread: what must hold whatever the
    /// machine's noise. Each target is an interval after a clock read made
    /// after the previous wake-up, so consecutive targets are at least
    /// `interval + previous latency` apart; the last wake-up is behind the
    /// grid by at least the sum of all latencies; nothing is ever missed.
    #[test]
    fn relative_timers_fall_behind_by_at_least_their_latencies() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let mut c = cfg();
        c.threads = 1;
        c.interval = Nanos::from_us(500);
        c.loops = Some(300);
        c.timer = TimerMode::Relative;
        let out = Shared::default();
        let (report, written) =
            run_probe_with_series(&c, &STOP, Some(Box::new(out.clone()))).unwrap();
        written.unwrap();
        let t = &report.threads[0];
        assert_eq!(
            (t.loops, t.missed_periods, t.timer),
            (300, 0, TimerMode::Relative)
        );
        let rows = series_rows(&out);
        assert_eq!(rows.len(), 300);
        let interval = c.interval.as_ns() as i64;
        assert!(
            rows[0][2] >= interval,
            "first target {} before start + interval",
            rows[0][2]
        );
        for w in rows.windows(2) {
            let (prev_at, prev_latency, at) = (w[0][2], w[0][3], w[1][2]);
            assert!(
                at >= prev_at + prev_latency + interval,
                "loop {}: target {at} < previous wake-up {} + interval",
                w[1][1],
                prev_at + prev_latency
            );
        }
        let latencies: u64 = rows.iter().map(|r| r[3] as u64).sum();
        let drift = t.drift.expect("relative timers report their drift").as_ns();
        assert!(
            drift >= latencies,
            "drift {drift} < sum of latencies {latencies}"
        );
        // The last sample's wake-up, from the start, is the grid point plus
        // the drift.
        let last = rows.last().unwrap();
        assert_eq!((last[2] + last[3]) as u64, 300 * c.interval.as_ns() + drift);
    }

    /// The absolute loop's wake-ups stay on the grid `start + (k+1) *
    /// interval` (plus their own latency), and it reports no drift.
    #[test]
    fn absolute_timers_stay_on_the_grid() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let mut c = cfg();
        c.threads = 1;
        c.interval = Nanos::from_us(500);
        c.loops = Some(300);
        let out = Shared::default();
        let (report, written) =
            run_probe_with_series(&c, &STOP, Some(Box::new(out.clone()))).unwrap();
        written.unwrap();
        let t = &report.threads[0];
        assert_eq!(t.drift, None);
        let mut k: i64 = 1;
        for row in series_rows(&out) {
            // A skipped period moves the target to a later grid point, never
            // off the grid.
            let at = row[2];
            assert_eq!(at % 500_000, 0, "target {at} off the grid");
            assert!(at >= k * 500_000);
            k = at / 500_000 + 1;
        }
    }

    #[test]
    fn relative_timers_are_refused_under_sched_deadline() {
        let mut c = cfg();
        c.timer = TimerMode::Relative;
        c.policy = Policy::Deadline {
            runtime: Nanos::from_us(100),
            deadline: Nanos::ZERO,
            period: Nanos::ZERO,
        };
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.starts_with("invalid relative: a SCHED_DEADLINE thread"),
            "{e}"
        );
        c.timer = TimerMode::Absolute;
        assert!(c.validate().is_ok());
    }

    #[test]
    fn sched_other_probe_records_every_requested_loop() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let mut c = cfg();
        c.interval = Nanos::from_us(500);
        c.distance = Nanos::from_us(100);
        c.loops = Some(200);
        let out = Shared::default();
        let (report, written) =
            run_probe_with_series(&c, &STOP, Some(Box::new(out.clone()))).unwrap();
        written.unwrap();
        assert!(report.lost_threads.is_empty());
        assert!(!report.interrupted);
        assert_eq!(report.threads.len(), 2);
        for t in &report.threads {
            assert_eq!(t.requested_loops, 200);
            assert_eq!(t.loops, 200);
            assert!(t.latency.min <= t.latency.p50 && t.latency.p50 <= t.latency.max);
            assert_eq!(t.latency.count, t.loops);
            assert_eq!(t.series_dropped, 0);
            assert!(t.tid > 0);
        }
        // Every sample in the series, each thread's in loop order.
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        for thread in 0..2 {
            let loops: Vec<u64> = text
                .lines()
                .skip(1)
                .map(|l| {
                    l.split(',')
                        .map(|c| c.parse::<i64>().unwrap())
                        .collect::<Vec<_>>()
                })
                .filter(|row| row[0] == thread)
                .map(|row| row[1] as u64)
                .collect();
            assert_eq!(loops, (0..200).collect::<Vec<u64>>());
        }
    }
}
