//! `rtlab characterize`: this machine's scheduling costs in paper 004's
//! model (Arakawa et al., SIGMETRICS 1993, §3-4), measured from user space
//! on one pinned CPU under SCHED_FIFO, as functions of the number of
//! threads n.
//!
//! | scenario     | paper        | set-up (n threads on the CPU)                                   | the cost                                           |
//! | ------------ | ------------ | --------------------------------------------------------------- | -------------------------------------------------- |
//! | `preempt`    | C_preempt    | high sleeps to a release; low spins; n-2 ready below low         | high's first stamp - low's last stamp              |
//! | `exit`       | C_exit       | high stamps and blocks; low observes; n-2 sleep with timers set  | low's first stamp after - high's last stamp        |
//! | `nonpreempt` | C_nonpreempt | high spins; n-2 ready below it; the lowest is released           | the gap in high's stamps at the release            |
//! | `timer`      | C_timer      | one thread spins alone                                           | the gaps at the tick's instants ([`tick`])         |
//! | `pingpong`   | (lat_ctx)    | two threads hand the CPU over by futex                           | first stamp - the other's last stamp, per switch  |
//!
//! See [`scenarios`] for exactly what each gap holds and does not (the
//! timer's own lateness is never included: the thread that is interrupted
//! keeps stamping until the interrupt arrives).
//!
//! **Real-time safety.** Everything a measuring thread uses is allocated
//! before its batch starts ([`batch`]); every role ends by a clock time;
//! the coordinator (this thread, moved off the measured CPU while it runs)
//! gives up on a thread that does not report, so the command always ends.
//!
//! **RT throttling stays on.** Spinning SCHED_FIFO threads run in stretches
//! of at most [`STRETCH`] (50 ms), each followed by a rest at least as long
//! with no real-time thread on the CPU; in `nonpreempt` the spinner spins
//! 40 % of each 500 us period. So real-time threads use at most about half
//! of any second, far from the 950 ms / 1 s that throttling allows.

pub mod batch;
pub mod dispatcher;
pub mod document;
pub mod fit;
pub mod kernel;
pub mod scenarios;
pub mod tick;

use std::sync::atomic::AtomicBool;

use rtlab_model::Nanos;
use serde::Serialize;

use batch::{run_batch, Recorder};
use fit::{CostStats, FitInputs};
use rtlab_host::policy;
use rtlab_rt::RtError;
use rtlab_sys::clock::monotonic_now;
use rtlab_sys::time::clock_getres;
use scenarios::Plan;
use tick::TickEstimate;

/// The longest stretch a SCHED_FIFO thread spins without a rest.
pub const STRETCH: Nanos = Nanos::from_ms(50);
/// The default thread counts (paper 004 measured 0..20; a scenario needs
/// two threads, so n starts at 2).
pub const DEFAULT_THREADS: [usize; 6] = [2, 4, 8, 12, 16, 20];
/// The most threads per scenario.
pub const MAX_THREADS: usize = 64;
/// The default and the range of samples per scenario and n.
pub const DEFAULT_SAMPLES: usize = 1000;
/// Fewest samples per scenario and n.
pub const MIN_SAMPLES: usize = 10;
/// Most samples per scenario and n (memory: 8 bytes each, per thread).
pub const MAX_SAMPLES: usize = 100_000;
/// The most time spent spinning for the tick.
const MAX_TIMER_SPIN: Nanos = Nanos::from_secs(30);
/// Gaps a lone spinner logs per stretch at most.
const GAPS_PER_STRETCH: usize = 8192;
/// The calibration spin.
const CALIBRATION: Nanos = Nanos::from_ms(5);

/// What to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharacterizeConfig {
    /// The CPU every thread is pinned to.
    pub cpu: usize,
    /// The thread counts n (ascending, distinct, each 2..=[`MAX_THREADS`]).
    pub threads: Vec<usize>,
    /// Samples per scenario and n (and tick gaps; and ping-pong switches).
    pub samples: usize,
}

impl CharacterizeConfig {
    /// The defaults on `cpu`.
    pub fn new(cpu: usize) -> CharacterizeConfig {
        CharacterizeConfig {
            cpu,
            threads: DEFAULT_THREADS.to_vec(),
            samples: DEFAULT_SAMPLES,
        }
    }

    /// Checks the settings ([`RtError::Setting`] names the flag's setting).
    pub fn validate(&self) -> Result<(), RtError> {
        let setting = |setting: &'static str, value: String, why: String| {
            Err(RtError::Setting {
                setting,
                value: Some(value),
                why,
            })
        };
        if self.threads.is_empty() {
            return Err(RtError::Setting {
                setting: "threads",
                value: None,
                why: "give at least one thread count".into(),
            });
        }
        if let Some(n) = self.threads.iter().find(|n| !(2..=MAX_THREADS).contains(n)) {
            return setting(
                "threads",
                n.to_string(),
                format!("each n must be in 2..={MAX_THREADS} (a release that preempts, or a job that exits to another, needs two threads)"),
            );
        }
        if !(MIN_SAMPLES..=MAX_SAMPLES).contains(&self.samples) {
            return setting(
                "samples",
                self.samples.to_string(),
                format!("use {MIN_SAMPLES}..={MAX_SAMPLES}"),
            );
        }
        let allowed = policy::allowed_cpus()?;
        if !allowed.contains(&self.cpu) {
            return setting(
                "cpu",
                self.cpu.to_string(),
                format!("this process may use CPUs {allowed:?}"),
            );
        }
        Ok(())
    }

    /// How many progress steps [`characterize`] reports.
    pub fn steps(&self) -> usize {
        2 + 3 * self.threads.len()
    }
}

/// One scenario at one n.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioPoint {
    /// Threads on the CPU.
    pub n: usize,
    /// The statistics of the samples.
    #[serde(flatten)]
    pub stats: CostStats,
    /// Events that could not be measured (the thread that should have been
    /// interrupted was not running, or no gap was seen).
    pub invalid: u64,
    /// Batches in which a thread did not report in time (their samples are
    /// left out).
    pub lost_batches: u64,
    /// When its batches ran (`CLOCK_MONOTONIC` ns, first start to last
    /// end): where `--kernel-trace` looks for its kernel samples.
    #[serde(skip)]
    pub window: (u64, u64),
}

/// The `timer` scenario.
#[derive(Debug, Clone, Serialize)]
pub struct TimerResult {
    /// The tick gaps' statistics.
    pub stats: Option<CostStats>,
    /// How the tick period was found.
    pub tick: Option<TickEstimate>,
    /// `clock_getres(CLOCK_MONOTONIC_COARSE)`: the kernel's tick length, ns.
    pub coarse_resolution_ns: Option<u64>,
    /// Gaps at a tick of a whole tick period or more: the CPU stalled (in a
    /// virtual machine, the host did not run it); left out of `stats`.
    pub stalls: usize,
    /// The longest stall, ns.
    pub stall_max_ns: u64,
    /// Gaps away from the ticks (other interrupts, the host).
    pub other_gaps: usize,
    /// The largest gap off the tick's grid, ns.
    pub other_gap_max_ns: u64,
    /// Time spent spinning.
    pub spun_ns: u64,
    /// Gaps that did not fit in the log.
    pub dropped_gaps: u64,
    /// Local timer interrupts per second on the CPU while spinning
    /// (`/proc/interrupts` LOC), the cross-check of the tick.
    pub loc_per_second: Option<f64>,
}

/// The context-switch cross-check.
#[derive(Debug, Clone, Serialize)]
pub struct PingPongResult {
    /// Per switch, as measured (one blocking `FUTEX_WAIT`, pick, switch).
    pub stats: CostStats,
    /// The median of a `FUTEX_WAIT` that returns at once, ns.
    pub futex_call_median_ns: Option<u64>,
    /// The median per switch less that call, ns.
    pub switch_median_ns: Option<u64>,
    /// When the ping-pong ran (`CLOCK_MONOTONIC` ns).
    #[serde(skip)]
    pub window: (u64, u64),
}

/// Everything [`characterize`] measured.
#[derive(Debug, Clone, Serialize)]
pub struct Characterization {
    /// The CPU.
    pub cpu: usize,
    /// Samples asked for per scenario and n.
    pub samples: usize,
    /// The smallest gap in a spinner's stamps taken as an interruption, ns
    /// (ten loop iterations, 150 ns .. 2 us).
    pub gap_threshold_ns: u64,
    /// The stamping loop's mean iteration, ns.
    pub loop_iteration_ns: f64,
    /// C_timer.
    pub timer: TimerResult,
    /// The ping-pong.
    pub pingpong: Option<PingPongResult>,
    /// C_preempt per n.
    pub preempt: Vec<ScenarioPoint>,
    /// C_exit per n.
    pub exit: Vec<ScenarioPoint>,
    /// C_nonpreempt per n.
    pub nonpreempt: Vec<ScenarioPoint>,
    /// True when a stop signal ended the run early.
    pub interrupted: bool,
    /// Wall time of the whole run, ns.
    pub elapsed_ns: u64,
}

impl Characterization {
    /// The inputs of the fit.
    pub fn fit_inputs(&self) -> FitInputs {
        let rows = |points: &[ScenarioPoint]| points.iter().map(|p| (p.n, p.stats)).collect();
        FitInputs {
            preempt: rows(&self.preempt),
            exit: rows(&self.exit),
            nonpreempt: rows(&self.nonpreempt),
            timer: self.timer.stats,
            tick: self.timer.tick.map(|t| Nanos::from_ns(t.tick_ns)),
        }
    }
}

/// A step done: `(steps done, steps in all, what was just measured)`.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize, &str);

/// Measures every scenario (module docs). `stop` (the Ctrl-C flag) ends
/// the run early with what was measured. Fails before measuring when the
/// threads cannot get SCHED_FIFO or the CPU (e.g. `HostError::NeedsPrivilege`).
pub fn characterize(
    cfg: &CharacterizeConfig,
    stop: &'static AtomicBool,
    progress: Progress,
) -> Result<Characterization, RtError> {
    cfg.validate()?;
    let began = monotonic_now();
    // The coordinator (this thread) runs on the other CPUs meanwhile; its
    // affinity is restored on drop (with the raw call: the checked one
    // would refuse to widen it again).
    let _away = policy::KeptOffCpu::new(cfg.cpu);
    let total = cfg.steps();
    let mut done = 0;
    let mut step = |what: &str| {
        done += 1;
        progress(done, total, what);
    };
    let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);

    let (loop_iteration_ns, gap_threshold) = calibrate(cfg.cpu, stop)?;
    let timer = measure_timer(cfg, gap_threshold, stop)?;
    step("timer");
    let pingpong = if stopped() {
        None
    } else {
        measure_ping_pong(cfg, stop)?
    };
    step("pingpong");
    let mut out = Characterization {
        cpu: cfg.cpu,
        samples: cfg.samples,
        gap_threshold_ns: gap_threshold.as_ns(),
        loop_iteration_ns,
        timer,
        pingpong,
        preempt: Vec::new(),
        exit: Vec::new(),
        nonpreempt: Vec::new(),
        interrupted: false,
        elapsed_ns: 0,
    };
    type Build<'a> = &'a dyn Fn(usize, usize) -> Plan;
    let scenarios: [(&str, Build, Nanos); 3] = [
        (
            "preempt",
            &|n, count| scenarios::preempt(n, count, stop),
            scenarios::SWITCH_PERIOD,
        ),
        (
            "exit",
            &|n, count| scenarios::exit(n, count, stop),
            scenarios::SWITCH_PERIOD,
        ),
        (
            "nonpreempt",
            &|n, count| scenarios::nonpreempt(n, count, gap_threshold, stop),
            scenarios::NONPREEMPT_PERIOD,
        ),
    ];
    for (name, build, period) in scenarios {
        for &n in &cfg.threads {
            if stopped() {
                break;
            }
            if let Some(point) = measure_scenario(cfg, n, build, period, stop)? {
                match name {
                    "preempt" => out.preempt.push(point),
                    "exit" => out.exit.push(point),
                    _ => out.nonpreempt.push(point),
                }
            }
            step(&format!("{name} n={n}"));
        }
    }
    out.interrupted = stopped();
    out.elapsed_ns = monotonic_now().saturating_sub(began).as_ns();
    Ok(out)
}

/// Checks, before anything else is set up, that a thread may be pinned to
/// the CPU and given SCHED_FIFO (as root or with CAP_SYS_NICE): the error
/// says what is missing, in words.
pub fn check_privilege(cfg: &CharacterizeConfig) -> Result<(), RtError> {
    cfg.validate()?;
    let probe = batch::ThreadSpec {
        name: "rtlab-char-probe".into(),
        priority: scenarios::LOW,
        capacity: 0,
        role: Box::new(|_, _| {}),
    };
    run_batch(cfg.cpu, vec![probe], Nanos::ZERO, &mut |_| {}).map(|_| ())
}

/// Runs a plan and returns its recorder's data (`None` when that thread
/// did not report in time).
fn run_plan(
    cpu: usize,
    plan: Plan,
    at_start: &mut dyn FnMut(Nanos),
) -> Result<Option<Recorder>, RtError> {
    let recorder = plan.recorder;
    let mut result = run_batch(cpu, plan.threads, plan.length, at_start)?;
    Ok(result.recorders.get_mut(recorder).and_then(Option::take))
}

/// Sleeps as long as the stretch just spun (at least 20 ms): the rest that
/// keeps real-time threads under half of any second.
fn rest(spun: Nanos) {
    std::thread::sleep(std::time::Duration::from(spun.max(Nanos::from_ms(20))));
}

/// The stamping loop's mean iteration and the gap threshold: ten
/// iterations, within 150 ns .. 2 us.
fn calibrate(cpu: usize, stop: &'static AtomicBool) -> Result<(f64, Nanos), RtError> {
    let rec = run_plan(cpu, scenarios::calibration(CALIBRATION, stop), &mut |_| {})?;
    let (iterations, elapsed) = match rec.as_ref().map(|r| r.samples.as_slice()) {
        Some(&[i, e]) if i > 0 => (i, e),
        _ => (1, 100),
    };
    let mean = elapsed as f64 / iterations as f64;
    let threshold = ((10.0 * mean).ceil() as u64).clamp(150, 2_000);
    rest(CALIBRATION);
    Ok((mean, Nanos::from_ns(threshold)))
}

/// One scenario at one n: batches of at most [`STRETCH`] until `samples`
/// samples are in (at most four times the batches that should take).
fn measure_scenario(
    cfg: &CharacterizeConfig,
    n: usize,
    build: &dyn Fn(usize, usize) -> Plan,
    period: Nanos,
    stop: &'static AtomicBool,
) -> Result<Option<ScenarioPoint>, RtError> {
    let per_batch = (STRETCH.as_ns() / period.as_ns()).max(1) as usize;
    let max_batches = 4 * cfg.samples.div_ceil(per_batch) + 2;
    let mut samples: Vec<u64> = Vec::with_capacity(cfg.samples);
    let (mut invalid, mut lost) = (0, 0);
    let began = monotonic_now().as_ns();
    for _ in 0..max_batches {
        if samples.len() >= cfg.samples || stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let count = per_batch.min(cfg.samples - samples.len());
        let plan = build(n, count);
        let length = plan.length;
        match run_plan(cfg.cpu, plan, &mut |_| {})? {
            Some(rec) => {
                invalid += rec.invalid;
                let room = cfg.samples - samples.len();
                samples.extend(rec.samples.iter().take(room));
            }
            None => lost += 1,
        }
        rest(length.min(STRETCH));
    }
    let window = (began, monotonic_now().as_ns());
    Ok(CostStats::of(&mut samples).map(|stats| ScenarioPoint {
        n,
        stats,
        invalid,
        lost_batches: lost,
        window,
    }))
}

/// The `timer` scenario ([`tick`]): stretches of a lone spinner, while
/// this thread reads the LOC count, until the tick gaps number `samples`
/// (at most [`MAX_TIMER_SPIN`] of spinning).
fn measure_timer(
    cfg: &CharacterizeConfig,
    threshold: Nanos,
    stop: &'static AtomicBool,
) -> Result<TimerResult, RtError> {
    let mut stretches: Vec<Vec<(u64, u64)>> = Vec::new();
    let mut changes: Vec<Vec<u64>> = Vec::new();
    let (mut spun, mut dropped) = (Nanos::ZERO, 0);
    let (mut loc_count, mut loc_time) = (0u64, Nanos::ZERO);
    let mut wanted = 4usize;
    while stretches.len() < wanted && spun < MAX_TIMER_SPIN {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let plan = scenarios::lone_spinner(STRETCH, threshold, GAPS_PER_STRETCH, stop);
        let cpu = cfg.cpu;
        let mut loc = None;
        let rec = run_plan(cpu, plan, &mut |start| {
            // LOC inside the stretch, 1 ms after its start to 1 ms before its end.
            rtlab_sys::clock::wait_until(start + Nanos::from_ms(1));
            let a = read_loc(cpu);
            rtlab_sys::clock::wait_until(start + STRETCH - Nanos::from_ms(1));
            loc = a.zip(read_loc(cpu)).map(|(a, b)| b.saturating_sub(a));
        })?;
        if let Some(delta) = loc {
            loc_count += delta;
            loc_time += STRETCH - Nanos::from_ms(2);
        }
        spun += STRETCH;
        if let Some(rec) = rec {
            dropped += rec.dropped;
            let pairs = rec.samples.chunks_exact(2).map(|p| (p[0], p[1]));
            let (moved, gaps): (Vec<_>, Vec<_>) =
                pairs.partition(|p| p.1 == scenarios::COARSE_CHANGE);
            changes.push(moved.into_iter().map(|p| p.0).collect());
            stretches.push(gaps);
        }
        rest(STRETCH);
        if stretches.len() == 4 {
            // Enough stretches for `samples` ticks at the period seen so far.
            if let Some(t) = tick::estimate_tick(&changes) {
                let need = (cfg.samples as u64 * t.tick_ns * 105 / 100).div_ceil(STRETCH.as_ns());
                wanted = (need as usize).max(4);
            }
        }
    }
    let estimate = tick::estimate_tick(&changes);
    let (mut lengths, mut others, mut stalls) = (Vec::new(), Vec::new(), Vec::new());
    let tick_ns = estimate.map_or(u64::MAX, |t| t.tick_ns);
    for (gaps, changes) in stretches.iter().zip(&changes) {
        let sorted = tick::split_tick_gaps(gaps, changes, tick_ns);
        lengths.extend(sorted.ticks);
        others.extend(sorted.others);
        stalls.extend(sorted.stalls);
    }
    Ok(TimerResult {
        stats: CostStats::of(&mut lengths),
        tick: estimate,
        coarse_resolution_ns: clock_getres(libc::CLOCK_MONOTONIC_COARSE)
            .ok()
            .map(Nanos::as_ns),
        stalls: stalls.len(),
        stall_max_ns: stalls.iter().copied().max().unwrap_or(0),
        other_gaps: others.len(),
        other_gap_max_ns: others.iter().copied().max().unwrap_or(0),
        spun_ns: spun.as_ns(),
        dropped_gaps: dropped,
        loc_per_second: (!loc_time.is_zero()).then(|| loc_count as f64 / loc_time.as_secs_f64()),
    })
}

/// The ping-pong and the futex call it holds.
fn measure_ping_pong(
    cfg: &CharacterizeConfig,
    stop: &'static AtomicBool,
) -> Result<Option<PingPongResult>, RtError> {
    let plan = scenarios::ping_pong(cfg.samples, stop);
    let length = plan.length;
    let began = monotonic_now().as_ns();
    let mut batch = run_batch(cfg.cpu, plan.threads, length, &mut |_| {})?;
    let mut samples: Vec<u64> = batch
        .recorders
        .iter_mut()
        .flatten()
        .flat_map(|r| std::mem::take(&mut r.samples))
        .collect();
    samples.truncate(cfg.samples);
    let window = (began, monotonic_now().as_ns());
    rest(Nanos::from_ms(20));
    let call = run_plan(
        cfg.cpu,
        scenarios::futex_round_trip(cfg.samples, stop),
        &mut |_| {},
    )?;
    let call_median = call
        .and_then(|mut r| CostStats::of(&mut r.samples))
        .map(|s| s.median_ns);
    Ok(CostStats::of(&mut samples).map(|stats| PingPongResult {
        stats,
        futex_call_median_ns: call_median,
        switch_median_ns: call_median.map(|c| stats.median_ns.saturating_sub(c)),
        window,
    }))
}

/// The CPU's local timer interrupt count, from `/proc/interrupts`.
fn read_loc(cpu: usize) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/interrupts").ok()?;
    tick::local_timer_count(&text, cpu)
}
