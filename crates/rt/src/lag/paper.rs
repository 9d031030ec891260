//! The lag controller exactly as paper 000 gives it (Soyer 2024, section
//! 3.3 and Algorithm 2), kept for reproduction (`--controller paper`).
//!
//! **Lag** is how late a waiter returns: `returned - requested`. A plain
//! absolute sleep returns late by the platform's wake-up latency (tens of
//! microseconds here). The lag controller is an integral (I) controller that
//! learns that latency and sleeps *earlier* by it:
//!
//! ```text
//! control  = max(control, 0)
//! adjusted = requested - control
//! if now >= requested:            return at once            (already late)
//! elif now > adjusted:            busy-wait to requested    (the wait is shorter
//!                                 than the control value; control unchanged)
//! else:
//!     sleep until adjusted        -> returns at t_return
//!     lag = t_return - requested  (signed: negative when it woke early)
//!     if lag < threshold:  control += Ki * lag              (outliers are ignored)
//!     busy-wait to requested if t_return < requested
//! ```
//!
//! The outlier threshold defaults to the smallest period of the application
//! (the paper's `min_period`): a lag that long is not the platform's usual
//! latency, and integrating it would make every later wait a busy wait.
//! The controller never returns before `requested`, and it accounts the time
//! it spent busy-waiting so that its CPU cost is visible.

use rtlab_model::Nanos;

use super::{finish_after_sleep, signed, signed_diff, wait_without_sleeping, Wake};
use rtlab_sys::clock::Sleeper;

/// The integral lag controller of paper 000, Algorithm 2.
#[derive(Debug, Clone)]
pub struct PaperController {
    ki: f64,
    threshold: Nanos,
    control_ns: i64,
}

impl PaperController {
    /// A controller with gain `ki` (> 0; the paper uses 1) that ignores lags
    /// of `outlier_threshold` or more (use the application's smallest period).
    pub fn new(ki: f64, outlier_threshold: Nanos) -> PaperController {
        PaperController {
            ki,
            threshold: outlier_threshold,
            control_ns: 0,
        }
    }

    /// The current control value: how much earlier than requested it sleeps.
    pub fn control_value(&self) -> Nanos {
        Nanos::from_ns(self.control_ns.max(0) as u64)
    }

    /// The outlier threshold.
    pub fn threshold(&self) -> Nanos {
        self.threshold
    }

    /// Waits until `requested` on `clock`, as described in the module docs.
    pub fn wait_until<S: Sleeper>(&mut self, clock: &mut S, requested: Nanos) -> Wake {
        self.control_ns = self.control_ns.max(0);
        let adjusted = requested.saturating_sub(self.control_value());
        let now = clock.now();
        // Late: return at once; shorter than the control value: spin, and
        // leave the control value alone (the deleted line 11 of Algorithm 2).
        if let Some(wake) = wait_without_sleeping(clock, requested, adjusted, now) {
            return wake;
        }
        clock.sleep_until(adjusted);
        let t_return = clock.now();
        let lag_ns = signed_diff(t_return, requested);
        let integrated = lag_ns < signed(self.threshold);
        if integrated {
            self.control_ns = self
                .control_ns
                .saturating_add((self.ki * lag_ns as f64).round() as i64);
        }
        finish_after_sleep(clock, requested, t_return, integrated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_sys::clock::ScriptedClock;

    const PERIOD: Nanos = Nanos::from_ms(1);

    fn us(n: u64) -> Nanos {
        Nanos::from_us(n)
    }

    /// Runs `n` periods of a 1 ms loop on `clock`; returns every wake.
    fn run(c: &mut PaperController, clock: &mut ScriptedClock, n: u64) -> Vec<Wake> {
        let start = clock.peek();
        (1..=n)
            .map(|k| c.wait_until(clock, start + PERIOD.checked_mul(k).unwrap()))
            .collect()
    }

    #[test]
    fn converges_to_the_platform_lag_and_removes_it() {
        let mut clock = ScriptedClock::new(us(0), Nanos::from_ns(100), vec![us(50)]);
        let mut c = PaperController::new(1.0, PERIOD);
        let wakes = run(&mut c, &mut clock, 20);
        assert_eq!(wakes[0].lag(), us(50), "first wait learns nothing yet");
        assert_eq!(c.control_value(), us(50));
        for w in &wakes[1..] {
            assert!(
                w.lag() <= Nanos::from_ns(100),
                "lag {} after convergence",
                w.lag()
            );
        }
    }

    #[test]
    fn converges_with_a_smaller_gain() {
        let mut clock = ScriptedClock::new(us(0), Nanos::from_ns(50), vec![us(40)]);
        let mut c = PaperController::new(0.5, PERIOD);
        let wakes = run(&mut c, &mut clock, 40);
        let control = c.control_value().as_ns() as i64;
        assert!((control - 40_000).abs() < 1_000, "control {control} ns");
        assert!(wakes.last().unwrap().lag() < us(1));
        // The lag shrinks monotonically while it is large.
        assert!(wakes[1].lag() < wakes[0].lag());
        assert!(wakes[5].lag() < wakes[1].lag());
    }

    #[test]
    fn never_returns_before_the_requested_time() {
        // Noisy lags: the controller overshoots (wakes early) sometimes.
        let lags = [80, 10, 60, 5, 90, 30, 0, 70, 20, 50]
            .iter()
            .cycle()
            .take(200)
            .map(|&l| us(l))
            .collect();
        let mut clock = ScriptedClock::new(us(0), Nanos::from_ns(300), lags);
        let mut c = PaperController::new(1.0, PERIOD);
        let wakes = run(&mut c, &mut clock, 200);
        assert!(wakes.iter().all(|w| w.returned >= w.requested));
        let busy: u64 = wakes.iter().map(|w| w.busy_wait.as_ns()).sum();
        assert!(busy > 0, "early wake-ups must be busy-waited");
        // Busy-wait is accounted: each spin ends at `returned`.
        for w in wakes.iter().filter(|w| w.busy_wait > Nanos::ZERO) {
            let from = w.slept_until.unwrap_or(w.returned - w.busy_wait);
            assert_eq!(from + w.busy_wait, w.returned);
        }
    }

    #[test]
    fn ignores_outliers_at_or_past_the_threshold() {
        let mut clock = ScriptedClock::new(
            us(0),
            Nanos::from_ns(100),
            vec![
                us(30),
                us(5000),
                Nanos::from_ns(PERIOD.as_ns() + 30_000),
                us(30),
            ],
        );
        let mut c = PaperController::new(1.0, PERIOD);
        let first = c.wait_until(&mut clock, us(1000));
        assert!(first.integrated);
        assert_eq!(c.control_value(), us(30));
        // A 5 ms lag (>= the 1 ms threshold) is not integrated.
        let outlier = c.wait_until(&mut clock, us(2000));
        assert!(!outlier.integrated);
        assert_eq!(c.control_value(), us(30));
        // Nor is a lag of exactly the threshold past the requested time.
        let next = clock.peek() + us(1000);
        let edge = c.wait_until(&mut clock, next);
        assert_eq!(edge.slept_until.unwrap() - next, PERIOD);
        assert!(!edge.integrated);
        assert_eq!(c.control_value(), us(30));
    }

    #[test]
    fn stops_integrating_past_the_threshold_but_integrates_below_it() {
        let threshold = us(100);
        // Control 0: a sleep lag of 99 us is below the threshold and integrated.
        // Then control 99: sleeping to requested - 99 us and waking 199 us
        // later is a lag of exactly 100 us, which is not integrated.
        let mut clock = ScriptedClock::new(us(0), Nanos::from_ns(10), vec![us(99), us(199)]);
        let mut c = PaperController::new(1.0, threshold);
        assert!(c.wait_until(&mut clock, us(1000)).integrated);
        assert_eq!(c.control_value(), us(99));
        let w = c.wait_until(&mut clock, us(2000));
        assert_eq!(w.lag(), us(100));
        assert!(!w.integrated);
        assert_eq!(c.control_value(), us(99));
    }

    #[test]
    fn short_waits_are_busy_waited_without_touching_the_control_value() {
        let mut clock = ScriptedClock::new(us(0), Nanos::from_ns(100), vec![us(50)]);
        let mut c = PaperController::new(1.0, PERIOD);
        c.wait_until(&mut clock, us(1000));
        assert_eq!(c.control_value(), us(50));
        // Ask for 20 us from now: shorter than the control value.
        let target = clock.peek() + us(20);
        let w = c.wait_until(&mut clock, target);
        assert_eq!(w.slept_until, None);
        assert!(w.returned >= target);
        assert!(w.busy_wait >= Nanos::from_us(19));
        assert_eq!(c.control_value(), us(50));
        assert_eq!(clock.sleeps().len(), 1);
    }

    #[test]
    fn a_late_caller_returns_at_once() {
        let mut clock = ScriptedClock::new(us(500), Nanos::from_ns(100), vec![]);
        let mut c = PaperController::new(1.0, PERIOD);
        let w = c.wait_until(&mut clock, us(400));
        assert_eq!(w.lag(), us(100));
        assert_eq!(w.busy_wait, Nanos::ZERO);
        assert!(clock.sleeps().is_empty());
        assert_eq!(c.control_value(), Nanos::ZERO);
    }

    #[test]
    fn early_wakes_lower_the_control_value_but_never_below_zero() {
        // Learn 50 us, then the platform becomes fast (0 us lag): the wake
        // returns 50 us early, the control value drops back to 0.
        let mut clock = ScriptedClock::new(us(0), Nanos::from_ns(100), vec![us(50), us(0)]);
        let mut c = PaperController::new(1.0, PERIOD);
        c.wait_until(&mut clock, us(1000));
        let w = c.wait_until(&mut clock, us(2000));
        assert!(w.busy_wait >= us(49));
        assert_eq!(c.control_value(), Nanos::ZERO);
        let w = c.wait_until(&mut clock, us(3000));
        assert_eq!(w.lag(), Nanos::ZERO);
        assert_eq!(c.control_value(), Nanos::ZERO);
    }
}
