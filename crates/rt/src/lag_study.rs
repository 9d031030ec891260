//! The timer-utilization study of paper 000 (section 4.1).
//!
//! For each cell (period `P`, utilization `u`, with or without the lag
//! controller) one thread runs `samples` periods with releases at
//! `start + k P` (fixed, like Lingua Franca's logical time: a late job does
//! not move the next release). Each period it waits for its release,
//! measures the **lag** (`returned - release`), then burns `u P` of CPU
//! time (thread CPU clock, so preemption does not count as work).
//!
//! Per cell it reports the share of lags under 10 µs and under 20 µs, the
//! mean and max lag, and the **busy-wait share**: time spent spinning in the
//! controller divided by the cell's wall time (the CPU the controller costs).
//!
//! The controller's outlier threshold defaults to the cell's period (each
//! cell is an application with one timer, so its smallest period is `P`).
//!
//! **RT throttling.** FIFO/RR threads may use only `sched_rt_runtime_us /
//! sched_rt_period_us` of a CPU (0.95 here). A cell is flagged as able to
//! hit it when `u + 50 µs / P` (work, plus a wake-up and busy-wait cost of
//! the order of this machine's mean wake-up latency) comes within 0.10 of
//! that limit. With the default grid this flags 1 ms at 80 % and above and
//! 10 ms at 90 % and above, the cells paper 000 names, and 100 µs from 50 %.

use std::sync::atomic::{AtomicBool, Ordering};

use rtlab_model::Nanos;

use crate::clock::{monotonic_now, MonotonicClock};
use crate::error::RtError;
use crate::lag::{LagController, Waiter};
use crate::policy::{self, Policy, RtThrottling};
use crate::stats::{new_histogram, Extremes, Summary};
use crate::work::burn_cpu;

/// The paper's periods: 100 µs, 1 ms, 10 ms.
pub const PAPER_PERIODS: [Nanos; 3] = [Nanos::from_us(100), Nanos::from_ms(1), Nanos::from_ms(10)];
/// The paper's utilizations, in percent.
pub const PAPER_UTILIZATIONS: [u32; 7] = [0, 25, 50, 70, 80, 90, 95];
/// Wake-up plus busy-wait cost assumed by the throttling warning.
pub const ASSUMED_WAKE_COST: Nanos = Nanos::from_us(50);
/// How close to the RT limit a cell is flagged.
pub const THROTTLE_MARGIN: f64 = 0.10;

/// The grid and how each cell runs.
#[derive(Debug, Clone)]
pub struct StudyConfig {
    /// Periods.
    pub periods: Vec<Nanos>,
    /// Utilizations in percent (0..=100).
    pub utilizations: Vec<u32>,
    /// Run each cell without the controller (`false`) and/or with it (`true`).
    pub controller: Vec<bool>,
    /// Periods per cell.
    pub samples: u64,
    /// Controller gain.
    pub ki: f64,
    /// Outlier threshold (`None`: the cell's period).
    pub threshold: Option<Nanos>,
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
            controller: vec![false, true],
            samples: 2000,
            ki: LagController::DEFAULT_KI,
            threshold: None,
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
    /// With the lag controller.
    pub controller: bool,
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
    /// The cells, period-major, then utilization, then without/with controller.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells = Vec::new();
        for &period in &self.periods {
            for &utilization in &self.utilizations {
                for &controller in &self.controller {
                    cells.push(Cell {
                        period,
                        utilization,
                        controller,
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
            return invalid(format!("--periods {p}"), "use at least 10us");
        }
        if self.samples == 0 {
            return invalid("samples 0".into(), "use at least 1");
        }
        if self.periods.is_empty() || self.utilizations.is_empty() || self.controller.is_empty() {
            return invalid(
                "empty grid".into(),
                "give at least one period and utilization",
            );
        }
        if !(self.ki > 0.0 && self.ki.is_finite()) {
            return invalid(format!("gain {}", self.ki), "Ki must be above 0");
        }
        self.policy.validate()
    }

    /// The wall time the study needs at least (samples x period per cell).
    pub fn nominal_length(&self) -> Nanos {
        self.cells()
            .iter()
            .map(|c| c.period.checked_mul(self.samples).unwrap_or(Nanos::MAX))
            .fold(Nanos::ZERO, Nanos::saturating_add)
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
    /// The cell can hit RT throttling (module docs).
    pub throttle_risk: bool,
    /// Wall time of the cell.
    pub wall: Nanos,
    /// Cut short (stop flag, or the 2x length bound).
    pub cut_short: bool,
}

/// Runs one cell on a fresh thread with the configured policy and pinning.
pub fn run_cell(cfg: &StudyConfig, cell: Cell, stop: &AtomicBool) -> Result<CellResult, RtError> {
    let throttling = RtThrottling::read().ok();
    let cfg = cfg.clone();
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("rtlab-lag-study".into())
            .spawn_scoped(scope, || measure_cell(&cfg, cell, stop))
            .map_err(|source| RtError::spawn("rtlab-lag-study".into(), source))?;
        let mut result = handle
            .join()
            .expect("the lag-study thread does not panic")?;
        result.throttle_risk = throttling.is_some_and(|t| cell.can_throttle(&t));
        Ok(result)
    })
}

fn measure_cell(cfg: &StudyConfig, cell: Cell, stop: &AtomicBool) -> Result<CellResult, RtError> {
    if let Some(cpu) = cfg.cpu {
        policy::set_current_thread_affinity(&[cpu])?;
    }
    policy::set_current_thread_policy(&cfg.policy)?;
    let mut waiter = if cell.controller {
        Waiter::Controlled(LagController::new(
            cfg.ki,
            cfg.threshold.unwrap_or(cell.period),
        ))
    } else {
        Waiter::Plain
    };
    let mut clock = MonotonicClock;
    let mut hist = new_histogram();
    let mut ext = Extremes::default();
    let (mut below_10, mut below_20) = (0u64, 0u64);
    let mut busy = Nanos::ZERO;
    let work = cell.work();
    let start = monotonic_now() + Nanos::from_ms(1);
    let nominal = cell.period.checked_mul(cfg.samples).unwrap_or(Nanos::MAX);
    let cut_at = start
        .saturating_add(nominal)
        .saturating_add(nominal)
        .saturating_add(Nanos::from_secs(1));
    let mut cut_short = false;
    let mut last = start;
    for k in 1..=cfg.samples {
        if stop.load(Ordering::Relaxed) || last > cut_at {
            cut_short = true;
            break;
        }
        let release = start.saturating_add(cell.period.checked_mul(k).unwrap_or(Nanos::MAX));
        let wake = waiter.wait_until(&mut clock, release);
        let lag = wake.lag();
        ext.record(lag);
        hist.saturating_record(lag.as_ns());
        below_10 += u64::from(lag < Nanos::from_us(10));
        below_20 += u64::from(lag < Nanos::from_us(20));
        busy = busy.saturating_add(wake.busy_wait);
        burn_cpu(work);
        last = monotonic_now();
    }
    let lag = ext.summary(&hist);
    let n = lag.count.max(1) as f64;
    let wall = last.saturating_sub(start);
    Ok(CellResult {
        cell,
        samples: lag.count,
        below_10us: below_10 as f64 / n,
        below_20us: below_20 as f64 / n,
        lag,
        busy_wait: busy,
        busy_wait_share: if wall.is_zero() {
            0.0
        } else {
            busy.as_ns() as f64 / wall.as_ns() as f64
        },
        final_control: match &waiter {
            Waiter::Controlled(c) => c.control_value(),
            Waiter::Plain => Nanos::ZERO,
        },
        throttle_risk: false,
        wall,
        cut_short,
    })
}

/// Runs every cell in order, calling `on_cell` after each (for progress);
/// stops early (returning the cells done) when `stop` is set.
pub fn run_study(
    cfg: &StudyConfig,
    stop: &AtomicBool,
    mut on_cell: impl FnMut(&CellResult),
) -> Result<Vec<CellResult>, RtError> {
    cfg.validate()?;
    let mut results = Vec::new();
    for cell in cfg.cells() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let r = run_cell(cfg, cell, stop)?;
        on_cell(&r);
        results.push(r);
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_grid_is_the_papers() {
        let cfg = StudyConfig::default();
        assert_eq!(cfg.cells().len(), 3 * 7 * 2);
        assert!(cfg.validate().is_ok());
        assert_eq!(
            cfg.nominal_length(),
            Nanos::from_ms(2 * 7 * 2000 * 111 / 10)
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
            controller: true,
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
            controller: false,
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

    #[test]
    fn a_small_sched_other_study_measures_every_sample() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let cfg = StudyConfig {
            periods: vec![Nanos::from_ms(1)],
            utilizations: vec![0, 50],
            samples: 100,
            policy: Policy::Other { nice: 0 },
            ..StudyConfig::default()
        };
        let mut seen = 0;
        let cells = run_study(&cfg, &STOP, |_| seen += 1).unwrap();
        assert_eq!((cells.len(), seen), (4, 4));
        for c in &cells {
            assert_eq!(c.samples, 100);
            assert!(c.below_10us <= c.below_20us && c.below_20us <= 1.0);
            assert!(c.lag.mean_ns <= c.lag.max.as_ns() as f64);
            assert!((0.0..=1.0).contains(&c.busy_wait_share));
            if !c.cell.controller {
                assert_eq!(c.busy_wait, Nanos::ZERO);
            }
        }
    }
}
