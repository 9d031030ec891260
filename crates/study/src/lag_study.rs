//! The timer-utilization study of paper 000 (section 4.1) as an
//! experiment: the grid of cells (period, utilization, waiter) run in
//! rounds, a cooldown between two cells, each cell measured on a fresh
//! real-time thread by `rtlab_rt::lag_study::run_cell` (the module docs
//! there give the measurement, the cooldown's reason and the RT-throttling
//! flag). It runs no task set, so it drives `rt` directly rather than a
//! [`rtlab_model::runner::Runner`].

use std::sync::atomic::{AtomicBool, Ordering};

use rtlab_host::policy::RtThrottling;
use rtlab_rt::lag::Waiter;
use rtlab_rt::lag_study::{
    cool_down, mark_tails, run_cell, waiter_for, CellResult, StudyConfig, Tally,
};
use rtlab_rt::RtError;

/// Runs the grid `cfg.rounds` times in order, each cell of a round on a
/// fresh thread for its share of the samples
/// ([`StudyConfig::round_samples`]), and adds each cell's rounds up. A
/// cell's waiter goes on from round to round (resumed after the pause, see
/// [`Waiter::resume`]), as a controller in a long-running program would:
/// a fresh one per round would pay its warm-up once per round. After
/// every cell of every round it calls `on_cell(round, cell so far)` (for
/// progress). Stops early when `stop` is set, returning the cells measured
/// so far (those with samples), marked `cut_short` when short of samples.
pub fn run_study(
    cfg: &StudyConfig,
    stop: &AtomicBool,
    mut on_cell: impl FnMut(u32, &CellResult),
) -> Result<Vec<CellResult>, RtError> {
    cfg.validate()?;
    let cells = cfg.cells();
    let mut tallies: Vec<Tally> = cells.iter().map(|_| Tally::default()).collect();
    let mut risks = vec![false; cells.len()];
    let mut waiters: Vec<Option<Waiter>> = cells.iter().map(|_| None).collect();
    let mut first = true;
    'rounds: for round in 0..cfg.rounds {
        let samples = cfg.round_samples(round);
        for (i, &cell) in cells.iter().enumerate() {
            if !first {
                cool_down(cfg.cooldown, stop);
            }
            first = false;
            if stop.load(Ordering::Relaxed) {
                break 'rounds;
            }
            let throttling = RtThrottling::read().ok();
            risks[i] = throttling.is_some_and(|t| cell.can_throttle(&t));
            let waiter = match waiters[i].take() {
                Some(mut w) => {
                    w.resume();
                    w
                }
                None => waiter_for(cfg, cell, throttling),
            };
            let (tally, waiter) = run_cell(cfg, cell, samples, waiter, stop)?;
            waiters[i] = Some(waiter);
            tallies[i].add(&tally);
            on_cell(round, &tallies[i].result(cell, risks[i]));
        }
    }
    let mut results: Vec<CellResult> = cells
        .iter()
        .zip(&tallies)
        .zip(&risks)
        .filter(|((_, t), _)| !t.is_empty())
        .map(|((&cell, t), &risk)| {
            let mut r = t.result(cell, risk);
            r.cut_short |= r.samples < cfg.samples;
            r
        })
        .collect();
    mark_tails(&mut results);
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_host::policy::Policy;
    use rtlab_model::Nanos;
    use rtlab_rt::lag_study::WaiterKind;
    use std::time::{Duration, Instant};

    #[test]
    fn rounds_share_the_samples_and_add_up() {
        let cfg = StudyConfig {
            samples: 10,
            rounds: 4,
            ..StudyConfig::default()
        };
        let split: Vec<u64> = (0..4).map(|r| cfg.round_samples(r)).collect();
        assert_eq!(split, vec![3, 3, 2, 2]);
        assert!(StudyConfig {
            rounds: 11,
            ..cfg.clone()
        }
        .validate()
        .is_err());
        assert!(StudyConfig { rounds: 0, ..cfg }.validate().is_err());

        static STOP: AtomicBool = AtomicBool::new(false);
        let cfg = StudyConfig {
            periods: vec![Nanos::from_us(500)],
            utilizations: vec![30],
            waiters: vec![WaiterKind::Off, WaiterKind::Paper, WaiterKind::Robust],
            samples: 101,
            rounds: 3,
            cooldown: Nanos::from_ms(50),
            policy: Policy::Other { nice: 0 },
            cpu: None,
            ..StudyConfig::default()
        };
        let mut calls = Vec::new();
        let t0 = Instant::now();
        let cells = run_study(&cfg, &STOP, |round, c| {
            calls.push((round, c.cell.waiter, c.samples))
        })
        .unwrap();
        // 3 x 101 periods of 500 us, and 8 pauses of 50 ms between the 9 runs.
        let took = t0.elapsed();
        assert!(
            took >= Duration::from(Nanos::from_us(3 * 101 * 500 + 8 * 50_000)),
            "{took:?}"
        );
        use WaiterKind::{Off, Paper, Robust};
        assert_eq!(
            calls,
            vec![
                (0, Off, 34),
                (0, Paper, 34),
                (0, Robust, 34),
                (1, Off, 68),
                (1, Paper, 68),
                (1, Robust, 68),
                (2, Off, 101),
                (2, Paper, 101),
                (2, Robust, 101),
            ]
        );
        for c in &cells {
            assert_eq!(c.samples, 101);
            assert!(!c.cut_short);
            assert!(c.wall >= Nanos::from_us(500 * 98), "{}", c.wall);
            assert_eq!(c.tail_vs_off.is_some(), c.cell.waiter.is_controlled());
        }
    }

    #[test]
    fn a_small_sched_other_study_measures_every_sample() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let cfg = StudyConfig {
            periods: vec![Nanos::from_ms(1)],
            utilizations: vec![0, 50],
            samples: 100,
            cooldown: Nanos::ZERO,
            policy: Policy::Other { nice: 0 },
            ..StudyConfig::default()
        };
        let mut seen = 0;
        let cells = run_study(&cfg, &STOP, |_, _| seen += 1).unwrap();
        assert_eq!((cells.len(), seen), (4, 4));
        for c in &cells {
            assert_eq!(c.samples, 100);
            assert!(c.below_10us <= c.below_20us && c.below_20us <= 1.0);
            assert!(c.lag.mean_ns <= c.lag.max.as_ns() as f64);
            assert!((0.0..=1.0).contains(&c.busy_wait_share));
            if !c.cell.waiter.is_controlled() {
                assert_eq!(c.busy_wait, Nanos::ZERO);
                assert_eq!(c.tail_vs_off, None);
            } else {
                assert!(c.tail_vs_off.is_some());
            }
        }
    }
}
