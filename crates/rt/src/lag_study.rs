//! The timer-utilization study of paper 000 (section 4.1).
//!
//! For each cell (period `P`, utilization `u`, and how the thread waits: a
//! plain absolute sleep, paper 000's controller or the robust one) one
//! thread runs `samples` periods with releases at
//! `start + k P` (fixed, like Lingua Franca's logical time: a late job does
//! not move the next release). Each period it waits for its release,
//! measures the **lag** (`returned - release`), then burns `u P` of CPU
//! time (thread CPU clock, so preemption does not count as work).
//!
//! Per cell it reports the share of lags under 10 µs and under 20 µs, the
//! mean, p99, p99.9 and max lag, and the **busy-wait share**: time spent
//! spinning in the controller divided by the cell's wall time (the CPU the
//! controller costs). A controlled cell whose p99 or max lag is above the
//! plain cell of the same period and utilization in the same run is marked
//! ([`mark_tails`]): the controller made the tail worse there.
//!
//! This module measures a cell on real threads ([`run_cell`]); the
//! experiment that runs the grid in rounds with a cooldown between cells
//! is `rtlab_study::lag_study::run_study`.
//!
//! Each cell is an application with one timer, so its smallest period is
//! `P`: the paper controller's outlier threshold (unless given) and the
//! robust controller's `min_period`. The robust controller guards the
//! RT-throttling settings read when the cell starts.
//!
//! **Cooldown.** A cell can leave the CPU in debt: a controller that spun
//! (the paper's, wound up) or a cell near the RT limit uses up the RT
//! runtime of the current throttling period, and SCHED_OTHER work it starved
//! is owed time by the fair server (Linux 6.12+), which preempts real-time
//! threads to pay it. Whatever cell runs next would then be throttled or
//! preempted for what the previous one did. So between two cells the study
//! sleeps for `cooldown` (default 1 s, the `sched_rt_period_us` and fair
//! server period): each cell starts with the CPU's budgets replenished.
//!
//! **RT throttling.** FIFO/RR threads may use only `sched_rt_runtime_us /
//! sched_rt_period_us` of a CPU (0.95 here). A cell is flagged as able to
//! hit it when `u + 50 µs / P` (work, plus a wake-up and busy-wait cost of
//! the order of this machine's mean wake-up latency) comes within 0.10 of
//! that limit. With the default grid this flags 1 ms at 80 % and above and
//! 10 ms at 90 % and above, the cells paper 000 names, and 100 µs from 50 %.

use std::sync::atomic::{AtomicBool, Ordering};

use hdrhistogram::Histogram;
use rtlab_model::Nanos;

use crate::error::RtError;
use crate::lag::{LagController, PaperController, RobustConfig, RobustController, Waiter};
use crate::stats::{new_histogram, Extremes, Summary};
use crate::work::burn_cpu;
use rtlab_host::policy::{self, Policy, RtThrottling};
use rtlab_sys::clock::{monotonic_now, MonotonicClock};

/// The paper's periods: 100 µs, 1 ms, 10 ms.
pub const PAPER_PERIODS: [Nanos; 3] = [Nanos::from_us(100), Nanos::from_ms(1), Nanos::from_ms(10)];
/// The paper's utilizations, in percent.
pub const PAPER_UTILIZATIONS: [u32; 7] = [0, 25, 50, 70, 80, 90, 95];
/// Wake-up plus busy-wait cost assumed by the throttling warning.
pub const ASSUMED_WAKE_COST: Nanos = Nanos::from_us(50);
/// How close to the RT limit a cell is flagged.
pub const THROTTLE_MARGIN: f64 = 0.10;
/// The pause between cells: one RT-throttling (and fair-server) period.
pub const DEFAULT_COOLDOWN: Nanos = Nanos::from_secs(1);

/// How a cell's thread waits for its releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaiterKind {
    /// A plain absolute sleep.
    Off,
    /// Paper 000's Algorithm 2.
    Paper,
    /// The robust controller (the default).
    Robust,
}

impl WaiterKind {
    /// `off`, `paper` or `robust`.
    pub fn name(self) -> &'static str {
        match self {
            WaiterKind::Off => "off",
            WaiterKind::Paper => "paper",
            WaiterKind::Robust => "robust",
        }
    }

    /// Whether a lag controller is used.
    pub fn is_controlled(self) -> bool {
        self != WaiterKind::Off
    }
}

/// The grid and how each cell runs.
#[derive(Debug, Clone)]
pub struct StudyConfig {
    /// Periods.
    pub periods: Vec<Nanos>,
    /// Utilizations in percent (0..=100).
    pub utilizations: Vec<u32>,
    /// How each cell waits, in this order (put `Off` first so that the
    /// controlled cells can be compared with it).
    pub waiters: Vec<WaiterKind>,
    /// Periods per cell.
    pub samples: u64,
    /// Controller gain (Ki; scales the robust controller's step).
    pub ki: f64,
    /// The paper controller's outlier threshold (`None`: the cell's period).
    pub threshold: Option<Nanos>,
    /// The robust controller's average busy-wait as a share of wall time
    /// (one wait may spin twice that share of the period).
    pub spin_share: f64,
    /// Rounds: the grid is run this many times in order, each cell getting
    /// its share of `samples` per round, and the rounds are added up. With
    /// more than one, every waiter's samples are spread over the whole
    /// study, so a stretch of platform noise (seconds on a shared VM) falls
    /// on all of them instead of on one cell.
    pub rounds: u32,
    /// Pause between two cells, the thread asleep (module docs).
    pub cooldown: Nanos,
    /// Policy of the measuring thread.
    pub policy: Policy,
    /// CPU to pin the measuring thread to.
    pub cpu: Option<usize>,
}

impl Default for StudyConfig {
    fn default() -> Self {
        StudyConfig {
            periods: PAPER_PERIODS.to_vec(),
            utilizations: PAPER_UTILIZATIONS.to_vec(),
            waiters: vec![WaiterKind::Off, WaiterKind::Robust],
            samples: 2000,
            ki: LagController::DEFAULT_KI,
            threshold: None,
            spin_share: RobustConfig::DEFAULT_SPIN_SHARE,
            rounds: 1,
            cooldown: DEFAULT_COOLDOWN,
            policy: Policy::Fifo { priority: 99 },
            cpu: None,
        }
    }
}

/// One cell of the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Period.
    pub period: Nanos,
    /// Utilization in percent.
    pub utilization: u32,
    /// How the thread waits.
    pub waiter: WaiterKind,
}

impl Cell {
    /// CPU time burnt per period.
    pub fn work(&self) -> Nanos {
        Nanos::from_ns(self.period.as_ns() / 100 * u64::from(self.utilization))
    }

    /// Whether this cell can hit RT throttling under `throttling` (see the
    /// module docs for the rule).
    pub fn can_throttle(&self, throttling: &RtThrottling) -> bool {
        let share = f64::from(self.utilization) / 100.0
            + ASSUMED_WAKE_COST.as_ns() as f64 / self.period.as_ns() as f64;
        throttling
            .limit()
            .is_some_and(|limit| share >= limit - THROTTLE_MARGIN)
    }
}

impl StudyConfig {
    /// The cells, period-major, then utilization, then waiter.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = Vec::new();
        for &period in &self.periods {
            for &utilization in &self.utilizations {
                for &waiter in &self.waiters {
                    cells.push(Cell {
                        period,
                        utilization,
                        waiter,
                    });
                }
            }
        }
        cells
    }

    /// Checks the grid.
    pub fn validate(&self) -> Result<(), RtError> {
        let invalid = |what: String, why: &str| {
            Err(RtError::Invalid {
                what,
                why: why.into(),
            })
        };
        if let Some(&u) = self.utilizations.iter().find(|&&u| u > 100) {
            return invalid(format!("utilization {u}%"), "use 0..=100");
        }
        if let Some(&p) = self.periods.iter().find(|&&p| p < Nanos::from_us(10)) {
            return Err(RtError::Setting {
                setting: "periods",
                value: Some(p.to_string()),
                why: "use at least 10us".into(),
            });
        }
        if self.samples == 0 {
            return invalid("samples 0".into(), "use at least 1");
        }
        if self.rounds == 0 || u64::from(self.rounds) > self.samples {
            return invalid(format!("rounds {}", self.rounds), "use 1..=samples");
        }
        if self.periods.is_empty() || self.utilizations.is_empty() || self.waiters.is_empty() {
            return invalid(
                "empty grid".into(),
                "give at least one period and utilization",
            );
        }
        if !(self.ki > 0.0 && self.ki.is_finite()) {
            return invalid(format!("gain {}", self.ki), "Ki must be above 0");
        }
        if !(0.0..=1.0).contains(&self.spin_share) {
            return invalid(
                format!("spin budget {}%", 100.0 * self.spin_share),
                "use 0..=100%",
            );
        }
        self.policy.validate().map_err(RtError::from)
    }

    /// The samples of each cell in round `round` (0-based): `samples /
    /// rounds`, one more for the first `samples % rounds` rounds.
    pub fn round_samples(&self, round: u32) -> u64 {
        let rounds = u64::from(self.rounds.max(1));
        self.samples / rounds + u64::from(u64::from(round) < self.samples % rounds)
    }

    /// The wall time the study needs at least: samples x period per cell,
    /// and a cooldown between every two cells of every round.
    pub fn nominal_length(&self) -> Nanos {
        let measuring = self
            .cells()
            .iter()
            .map(|c| c.period.checked_mul(self.samples).unwrap_or(Nanos::MAX))
            .fold(Nanos::ZERO, Nanos::saturating_add);
        let runs = (self.cells().len() as u64).saturating_mul(u64::from(self.rounds));
        let pauses = self
            .cooldown
            .checked_mul(runs.saturating_sub(1))
            .unwrap_or(Nanos::MAX);
        measuring.saturating_add(pauses)
    }
}

/// What one cell measured.
#[derive(Debug, Clone)]
pub struct CellResult {
    /// The cell.
    pub cell: Cell,
    /// Lags measured (fewer than asked when interrupted or cut at twice the
    /// nominal length).
    pub samples: u64,
    /// Fraction of lags under 10 µs.
    pub below_10us: f64,
    /// Fraction of lags under 20 µs.
    pub below_20us: f64,
    /// The lags.
    pub lag: Summary,
    /// Total busy-wait time.
    pub busy_wait: Nanos,
    /// Busy-wait time over the cell's wall time.
    pub busy_wait_share: f64,
    /// The controller's final control value (zero without it).
    pub final_control: Nanos,
    /// The controller's final outlier threshold (learnt by the robust one;
    /// zero without a controller).
    pub final_threshold: Nanos,
    /// For a controlled cell, how its tail compares with the plain cell of
    /// the same period and utilization in the same run ([`mark_tails`]).
    pub tail_vs_off: Option<TailVsOff>,
    /// The cell can hit RT throttling (module docs).
    pub throttle_risk: bool,
    /// Wall time of the cell.
    pub wall: Nanos,
    /// Cut short (stop flag, or the 2x length bound).
    pub cut_short: bool,
}

/// The counts of a cell's measurement, which rounds add up.
#[derive(Debug)]
pub struct Tally {
    hist: Histogram<u64>,
    ext: Extremes,
    below_10: u64,
    below_20: u64,
    busy: Nanos,
    wall: Nanos,
    cut_short: bool,
    final_control: Nanos,
    final_threshold: Nanos,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            hist: new_histogram(),
            ext: Extremes::default(),
            below_10: 0,
            below_20: 0,
            busy: Nanos::ZERO,
            wall: Nanos::ZERO,
            cut_short: false,
            final_control: Nanos::ZERO,
            final_threshold: Nanos::ZERO,
        }
    }
}

impl Tally {
    /// Whether no lag was measured yet.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// Adds a later round of the same cell (its final values replace ours).
    pub fn add(&mut self, later: &Tally) {
        self.hist
            .add(&later.hist)
            .expect("lag histograms share their bounds");
        self.ext.min = self.ext.min.min(later.ext.min);
        self.ext.max = self.ext.max.max(later.ext.max);
        self.ext.sum_ns += later.ext.sum_ns;
        self.below_10 += later.below_10;
        self.below_20 += later.below_20;
        self.busy = self.busy.saturating_add(later.busy);
        self.wall = self.wall.saturating_add(later.wall);
        self.cut_short |= later.cut_short;
        self.final_control = later.final_control;
        self.final_threshold = later.final_threshold;
    }

    /// What the rounds so far measured of `cell`.
    pub fn result(&self, cell: Cell, throttle_risk: bool) -> CellResult {
        let lag = self.ext.summary(&self.hist);
        let n = lag.count.max(1) as f64;
        CellResult {
            cell,
            samples: lag.count,
            below_10us: self.below_10 as f64 / n,
            below_20us: self.below_20 as f64 / n,
            lag,
            busy_wait: self.busy,
            busy_wait_share: if self.wall.is_zero() {
                0.0
            } else {
                self.busy.as_ns() as f64 / self.wall.as_ns() as f64
            },
            final_control: self.final_control,
            final_threshold: self.final_threshold,
            tail_vs_off: None,
            throttle_risk,
            wall: self.wall,
            cut_short: self.cut_short,
        }
    }
}

/// Runs `samples` periods of one cell on a fresh thread with the configured
/// policy and pinning, continuing `waiter` (returned with what it learnt).
pub fn run_cell(
    cfg: &StudyConfig,
    cell: Cell,
    samples: u64,
    waiter: Waiter,
    stop: &AtomicBool,
) -> Result<(Tally, Waiter), RtError> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("rtlab-lag-study".into())
            .spawn_scoped(scope, || measure_cell(cfg, cell, waiter, samples, stop))
            .map_err(|source| RtError::spawn("rtlab-lag-study".into(), source))?;
        handle.join().expect("the lag-study thread does not panic")
    })
}

/// The waiter of `cell`: the paper controller with threshold
/// `cfg.threshold` or the period, the robust one for the period under
/// `throttling`.
pub fn waiter_for(cfg: &StudyConfig, cell: Cell, throttling: Option<RtThrottling>) -> Waiter {
    match cell.waiter {
        WaiterKind::Off => Waiter::Plain,
        WaiterKind::Paper => Waiter::Controlled(LagController::Paper(PaperController::new(
            cfg.ki,
            cfg.threshold.unwrap_or(cell.period),
        ))),
        WaiterKind::Robust => {
            let robust = RobustConfig {
                spin_share: cfg.spin_share,
                ..RobustConfig::new(cfg.ki, cell.period, throttling)
            };
            Waiter::Controlled(LagController::Robust(RobustController::new(robust)))
        }
    }
}

fn measure_cell(
    cfg: &StudyConfig,
    cell: Cell,
    mut waiter: Waiter,
    samples: u64,
    stop: &AtomicBool,
) -> Result<(Tally, Waiter), RtError> {
    if let Some(cpu) = cfg.cpu {
        policy::set_current_thread_affinity(&[cpu])?;
    }
    policy::set_current_thread_policy(&cfg.policy)?;
    let mut clock = MonotonicClock;
    let mut t = Tally::default();
    let work = cell.work();
    let start = monotonic_now() + Nanos::from_ms(1);
    let nominal = cell.period.checked_mul(samples).unwrap_or(Nanos::MAX);
    let cut_at = start
        .saturating_add(nominal)
        .saturating_add(nominal)
        .saturating_add(Nanos::from_secs(1));
    let mut last = start;
    for k in 1..=samples {
        if stop.load(Ordering::Relaxed) || last > cut_at {
            t.cut_short = true;
            break;
        }
        let release = start.saturating_add(cell.period.checked_mul(k).unwrap_or(Nanos::MAX));
        let wake = waiter.wait_until(&mut clock, release);
        let lag = wake.lag();
        t.ext.record(lag);
        t.hist.saturating_record(lag.as_ns());
        t.below_10 += u64::from(lag < Nanos::from_us(10));
        t.below_20 += u64::from(lag < Nanos::from_us(20));
        t.busy = t.busy.saturating_add(wake.busy_wait);
        burn_cpu(work);
        last = monotonic_now();
    }
    t.wall = last.saturating_sub(start);
    if let Some(c) = waiter.controller() {
        t.final_control = c.control_value();
        t.final_threshold = c.threshold();
    }
    Ok((t, waiter))
}

/// Sleeps for `cooldown`, in steps of at most 50 ms so that `stop` ends it.
pub fn cool_down(cooldown: Nanos, stop: &AtomicBool) {
    let end = monotonic_now().saturating_add(cooldown);
    while !stop.load(Ordering::Relaxed) {
        let now = monotonic_now();
        if now >= end {
            return;
        }
        rtlab_sys::clock::wait_until(end.min(now.saturating_add(Nanos::from_ms(50))));
    }
}

/// How a controlled cell's tail compares with the plain cell of the same
/// period and utilization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailVsOff {
    /// Its p99 lag is above the plain cell's.
    pub p99_worse: bool,
    /// Its max lag is above the plain cell's.
    pub max_worse: bool,
}

impl TailVsOff {
    /// Either is worse.
    pub fn any_worse(&self) -> bool {
        self.p99_worse || self.max_worse
    }
}

/// Sets [`CellResult::tail_vs_off`] of every controlled cell that has a
/// plain cell of the same period and utilization in `cells` (`None` for the
/// others).
pub fn mark_tails(cells: &mut [CellResult]) {
    for i in 0..cells.len() {
        let cell = cells[i].cell;
        let off = cells.iter().find(|o| {
            o.cell.waiter == WaiterKind::Off
                && o.cell.period == cell.period
                && o.cell.utilization == cell.utilization
        });
        let verdict = match off {
            Some(off) if cell.waiter.is_controlled() => Some(TailVsOff {
                p99_worse: cells[i].lag.p99 > off.lag.p99,
                max_worse: cells[i].lag.max > off.lag.max,
            }),
            _ => None,
        };
        cells[i].tail_vs_off = verdict;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_grid_is_the_papers() {
        let cfg = StudyConfig::default();
        assert_eq!(cfg.cells().len(), 3 * 7 * 2);
        assert!(cfg.validate().is_ok());
        // 42 cells of 2000 periods, 41 pauses of 1 s.
        assert_eq!(
            cfg.nominal_length(),
            Nanos::from_ms(2 * 7 * 2000 * 111 / 10 + 41_000)
        );
    }

    #[test]
    fn throttling_flags_the_cells_the_paper_names() {
        let t = RtThrottling {
            runtime_us: 950_000,
            period_us: 1_000_000,
        };
        let cell = |p: Nanos, u| Cell {
            period: p,
            utilization: u,
            waiter: WaiterKind::Robust,
        };
        let flagged: Vec<(u64, u32)> = PAPER_PERIODS
            .iter()
            .flat_map(|&p| PAPER_UTILIZATIONS.iter().map(move |&u| (p, u)))
            .filter(|&(p, u)| cell(p, u).can_throttle(&t))
            .map(|(p, u)| (p.as_ns() / 1000, u))
            .collect();
        for named in [(1000, 80), (1000, 90), (10_000, 95)] {
            assert!(
                flagged.contains(&named),
                "{named:?} not flagged: {flagged:?}"
            );
        }
        assert!(!flagged.contains(&(1000, 50)));
        assert!(!flagged.contains(&(10_000, 50)));
        let off = RtThrottling {
            runtime_us: -1,
            period_us: 1_000_000,
        };
        assert!(!cell(Nanos::from_ms(1), 95).can_throttle(&off));
    }

    #[test]
    fn work_is_the_utilization_of_the_period() {
        let c = Cell {
            period: Nanos::from_ms(1),
            utilization: 25,
            waiter: WaiterKind::Off,
        };
        assert_eq!(c.work(), Nanos::from_us(250));
    }

    #[test]
    fn bad_grids_are_refused() {
        let c = StudyConfig {
            utilizations: vec![120],
            ..StudyConfig::default()
        };
        assert!(c.validate().unwrap_err().to_string().contains("0..=100"));
        let c = StudyConfig {
            samples: 0,
            ..StudyConfig::default()
        };
        assert!(c.validate().is_err());
    }

    fn result(
        period_us: u64,
        utilization: u32,
        waiter: WaiterKind,
        p99_us: u64,
        max_us: u64,
    ) -> CellResult {
        CellResult {
            cell: Cell {
                period: Nanos::from_us(period_us),
                utilization,
                waiter,
            },
            samples: 10,
            below_10us: 0.0,
            below_20us: 0.0,
            lag: Summary {
                p99: Nanos::from_us(p99_us),
                max: Nanos::from_us(max_us),
                ..Summary::default()
            },
            busy_wait: Nanos::ZERO,
            busy_wait_share: 0.0,
            final_control: Nanos::ZERO,
            final_threshold: Nanos::ZERO,
            tail_vs_off: None,
            throttle_risk: false,
            wall: Nanos::ZERO,
            cut_short: false,
        }
    }

    #[test]
    fn controlled_cells_are_compared_with_the_plain_cell_of_the_same_period_and_load() {
        use WaiterKind::{Off, Paper, Robust};
        let mut cells = vec![
            result(1000, 50, Off, 40, 500),
            result(1000, 50, Paper, 41, 400),
            result(1000, 50, Robust, 40, 500),
            result(1000, 70, Robust, 10, 100),
            result(1000, 70, Off, 30, 90),
            result(100, 50, Robust, 99, 999),
        ];
        mark_tails(&mut cells);
        let verdicts: Vec<Option<(bool, bool)>> = cells
            .iter()
            .map(|c| c.tail_vs_off.map(|t| (t.p99_worse, t.max_worse)))
            .collect();
        assert_eq!(
            verdicts,
            vec![
                None,
                Some((true, false)),
                Some((false, false)),
                Some((false, true)),
                None,
                None,
            ]
        );
    }
}
