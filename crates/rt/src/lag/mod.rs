//! `wait_until` with and without a lag controller (paper 000, Soyer 2024,
//! section 3.3).
//!
//! **Lag** is how late a waiter returns: `returned - requested`. A plain
//! absolute sleep returns late by the platform's wake-up latency (tens of
//! microseconds here). A lag controller learns that latency, sleeps earlier
//! by it (the **control value**) and busy-waits the rest, so that it returns
//! at the requested time. Two controllers:
//!
//! * [`PaperController`] ([`paper`]): Algorithm 2 of paper 000 as written,
//!   kept for reproduction. Its outlier threshold is the application's
//!   smallest period and nothing bounds its busy-wait, so one sub-threshold
//!   stall can wind it up into spinning the thread into RT throttling.
//! * [`RobustController`] ([`robust`]), the default: the same integral
//!   update plus a threshold learnt from the platform's latencies, a bound on
//!   the control value, and a spin budget against RT throttling.
//!
//! Every controller never returns before `requested`, and reports the time it
//! spent busy-waiting in its [`Wake`].

pub mod paper;
pub mod robust;
pub mod spin_budget;
pub mod window;

use rtlab_model::Nanos;

pub use paper::PaperController;
pub use robust::{RobustConfig, RobustController};

use rtlab_host::policy::RtThrottling;
use rtlab_sys::clock::Sleeper;

/// What one wait did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// The time asked for.
    pub requested: Nanos,
    /// When the underlying sleep returned (`None`: no sleep, the wait was
    /// already late or entirely busy-waited).
    pub slept_until: Option<Nanos>,
    /// When the wait returned; never before `requested`.
    pub returned: Nanos,
    /// Time spent spinning on the clock.
    pub busy_wait: Nanos,
    /// Whether this wait's lag was added to the control value.
    pub integrated: bool,
}

impl Wake {
    /// `returned - requested`: how late the waiter got control back.
    pub fn lag(&self) -> Nanos {
        self.returned.saturating_sub(self.requested)
    }
}

/// Which lag controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerKind {
    /// Paper 000's Algorithm 2 as written.
    Paper,
    /// [`RobustController`].
    Robust,
}

impl ControllerKind {
    /// `paper` or `robust`.
    pub fn name(self) -> &'static str {
        match self {
            ControllerKind::Paper => "paper",
            ControllerKind::Robust => "robust",
        }
    }
}

impl std::str::FromStr for ControllerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<ControllerKind, String> {
        match s {
            "paper" => Ok(ControllerKind::Paper),
            "robust" => Ok(ControllerKind::Robust),
            _ => Err(format!("`{s}`: use paper or robust")),
        }
    }
}

/// A lag controller of either kind.
#[allow(
    clippy::large_enum_variant,
    reason = "built once per thread before its first release and kept on its stack; \
              boxing the robust controller's 512-byte window adds an allocation for nothing"
)]
#[derive(Debug, Clone)]
pub enum LagController {
    /// Paper 000's Algorithm 2.
    Paper(PaperController),
    /// The robust controller (the default).
    Robust(RobustController),
}

impl LagController {
    /// The paper's default gain.
    pub const DEFAULT_KI: f64 = 1.0;

    /// The default controller (robust, [`RobustConfig::new`]) with gain `ki`
    /// for an application whose smallest period is `min_period`, guarding
    /// the RT-throttling settings read now from /proc (none when they cannot
    /// be read). Reads /proc, so call it before the first release.
    pub fn new(ki: f64, min_period: Nanos) -> LagController {
        LagController::of_kind(
            ControllerKind::Robust,
            ki,
            min_period,
            RtThrottling::read().ok(),
        )
    }

    /// A controller of `kind`: the paper's with outlier threshold
    /// `min_period`, or the robust one with its defaults and `throttling`.
    pub fn of_kind(
        kind: ControllerKind,
        ki: f64,
        min_period: Nanos,
        throttling: Option<RtThrottling>,
    ) -> LagController {
        match kind {
            ControllerKind::Paper => LagController::Paper(PaperController::new(ki, min_period)),
            ControllerKind::Robust => LagController::Robust(RobustController::new(
                RobustConfig::new(ki, min_period, throttling),
            )),
        }
    }

    /// Which kind this is.
    pub fn kind(&self) -> ControllerKind {
        match self {
            LagController::Paper(_) => ControllerKind::Paper,
            LagController::Robust(_) => ControllerKind::Robust,
        }
    }

    /// The current control value: how much earlier than requested it sleeps
    /// (before the robust controller's spin budget).
    pub fn control_value(&self) -> Nanos {
        match self {
            LagController::Paper(c) => c.control_value(),
            LagController::Robust(c) => c.control_value(),
        }
    }

    /// The outlier threshold now (fixed for the paper's, learnt for the
    /// robust one).
    pub fn threshold(&self) -> Nanos {
        match self {
            LagController::Paper(c) => c.threshold(),
            LagController::Robust(c) => c.threshold(),
        }
    }

    /// Waits until `requested` on `clock`.
    pub fn wait_until<S: Sleeper>(&mut self, clock: &mut S, requested: Nanos) -> Wake {
        match self {
            LagController::Paper(c) => c.wait_until(clock, requested),
            LagController::Robust(c) => c.wait_until(clock, requested),
        }
    }

    /// Continues after a deliberate pause, keeping what was learnt (the
    /// paper's controller has no time-based state).
    pub fn resume(&mut self) {
        if let LagController::Robust(c) = self {
            c.resume();
        }
    }
}

/// How a periodic loop waits for its next release.
#[allow(
    clippy::large_enum_variant,
    reason = "as for LagController: one per thread, on its stack"
)]
#[derive(Debug, Clone)]
pub enum Waiter {
    /// An absolute sleep, nothing else.
    Plain,
    /// A lag controller.
    Controlled(LagController),
}

impl Waiter {
    /// Waits until `requested`.
    pub fn wait_until<S: Sleeper>(&mut self, clock: &mut S, requested: Nanos) -> Wake {
        match self {
            Waiter::Plain => plain_wait_until(clock, requested),
            Waiter::Controlled(c) => c.wait_until(clock, requested),
        }
    }

    /// Continues after a deliberate pause ([`LagController::resume`]).
    pub fn resume(&mut self) {
        if let Waiter::Controlled(c) = self {
            c.resume();
        }
    }

    /// The controller, if any.
    pub fn controller(&self) -> Option<&LagController> {
        match self {
            Waiter::Plain => None,
            Waiter::Controlled(c) => Some(c),
        }
    }
}

/// An absolute sleep until `requested`, reporting when it returned.
pub fn plain_wait_until<S: Sleeper>(clock: &mut S, requested: Nanos) -> Wake {
    clock.sleep_until(requested);
    let returned = clock.now();
    Wake {
        requested,
        slept_until: Some(returned),
        returned,
        busy_wait: Nanos::ZERO,
        integrated: false,
    }
}

/// What every controller does before sleeping, at `now` with the sleep target
/// `adjusted`: when `requested` has passed, return at once; when `adjusted`
/// has passed, busy-wait to `requested` (the wait is shorter than the control
/// value; Algorithm 2 leaves the control value alone then). `None`: sleep.
fn wait_without_sleeping<S: Sleeper>(
    clock: &S,
    requested: Nanos,
    adjusted: Nanos,
    now: Nanos,
) -> Option<Wake> {
    if now >= requested {
        return Some(Wake {
            requested,
            slept_until: None,
            returned: now,
            busy_wait: Nanos::ZERO,
            integrated: false,
        });
    }
    if now > adjusted {
        let (returned, busy_wait) = spin_until(clock, requested, now);
        return Some(Wake {
            requested,
            slept_until: None,
            returned,
            busy_wait,
            integrated: false,
        });
    }
    None
}

/// After a sleep that returned at `t_return`: busy-wait to `requested`.
fn finish_after_sleep<S: Sleeper>(
    clock: &S,
    requested: Nanos,
    t_return: Nanos,
    integrated: bool,
) -> Wake {
    let (returned, busy_wait) = spin_until(clock, requested, t_return);
    Wake {
        requested,
        slept_until: Some(t_return),
        returned,
        busy_wait,
        integrated,
    }
}

/// Spins until the clock reads `target`, or a stop signal arrived (a sleep
/// it woke early must not become a spin to the release); returns the time
/// read last and the time spent spinning from `from`.
fn spin_until<S: Sleeper>(clock: &S, target: Nanos, from: Nanos) -> (Nanos, Nanos) {
    let mut now = from;
    while now < target && !rtlab_host::interrupt::interrupted() {
        std::hint::spin_loop();
        now = clock.now();
    }
    (now, now.saturating_sub(from))
}

fn signed(t: Nanos) -> i64 {
    i64::try_from(t.as_ns()).unwrap_or(i64::MAX)
}

fn signed_diff(a: Nanos, b: Nanos) -> i64 {
    signed(a).saturating_sub(signed(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_sys::clock::ScriptedClock;

    #[test]
    fn plain_waiter_reports_the_sleep_lag() {
        let mut clock = ScriptedClock::new(Nanos::ZERO, Nanos::ZERO, vec![Nanos::from_us(42)]);
        let w = Waiter::Plain.wait_until(&mut clock, Nanos::from_us(1000));
        assert_eq!(w.lag(), Nanos::from_us(42));
        assert_eq!(w.busy_wait, Nanos::ZERO);
    }

    #[test]
    fn of_kind_builds_the_kind_asked_for() {
        let p = LagController::of_kind(ControllerKind::Paper, 1.0, Nanos::from_ms(1), None);
        assert_eq!(
            (p.kind(), p.threshold()),
            (ControllerKind::Paper, Nanos::from_ms(1))
        );
        let r = LagController::of_kind(ControllerKind::Robust, 1.0, Nanos::from_ms(1), None);
        assert_eq!(r.kind(), ControllerKind::Robust);
        assert_eq!(
            LagController::new(1.0, Nanos::from_ms(1)).kind(),
            ControllerKind::Robust
        );
    }
}
