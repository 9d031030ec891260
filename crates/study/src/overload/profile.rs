//! The two overload profiles of paper 001 as simulator phases.
//!
//! Load is stated as a target utilization `L` of the base set (whose own
//! utilization is `U`): a job released inside a phase executes
//! `ceil(C · L / U)` instead of `C` ([`Scale::UtilizationPpm`], see
//! `rtlab_sim::engine`), so the processor demand per unit of time in the
//! phase is `L`.

use rtlab_model::Nanos;
use rtlab_sim::{Phase, Scale};
use serde::Serialize;

/// How the overload is applied over a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The base set as it is (load `U`), a burst at the level `L` for
    /// `[burst_start, burst_end)`, then the base set again.
    Transient,
    /// The level `L` for the whole run.
    Permanent,
}

impl Profile {
    /// `transient` or `permanent`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Transient => "transient",
            Profile::Permanent => "permanent",
        }
    }

    /// Both, transient first.
    pub const ALL: [Profile; 2] = [Profile::Transient, Profile::Permanent];
}

/// The phases of `profile` at `level_ppm` (parts per million of one
/// processor) for a run of `duration`, the burst being `burst` (start,
/// end). Outside the phases the base set runs unchanged.
///
/// * transient: one phase `[burst.0, min(burst.1, duration))` at the level,
///   none when the run ends before the burst starts;
/// * permanent: one phase `[0, duration)` at the level.
pub fn phases(
    profile: Profile,
    level_ppm: u64,
    burst: (Nanos, Nanos),
    duration: Nanos,
) -> Vec<Phase> {
    let phase = |start: Nanos, end: Nanos| Phase {
        start,
        end,
        scale: Scale::UtilizationPpm(level_ppm),
        tasks: Vec::new(),
        suspended: Vec::new(),
    };
    match profile {
        Profile::Permanent if duration > Nanos::ZERO => vec![phase(Nanos::ZERO, duration)],
        Profile::Transient if burst.0 < duration && burst.0 < burst.1 => {
            vec![phase(burst.0, burst.1.min(duration))]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_is_one_burst_at_the_level_and_permanent_covers_the_run() {
        let ms = Nanos::from_ms;
        let burst = (ms(2000), ms(3000));
        let t = phases(Profile::Transient, 1_300_000, burst, ms(10_000));
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].start, t[0].end), (ms(2000), ms(3000)));
        assert_eq!(t[0].scale, Scale::UtilizationPpm(1_300_000));
        assert!(t[0].tasks.is_empty() && t[0].suspended.is_empty());
        assert_eq!(t[0].to_string(), "2s..3s:130%");

        let p = phases(Profile::Permanent, 1_500_000, burst, ms(10_000));
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].to_string(), "0ns..10s:150%");

        // A run that ends inside the burst clips it; one that ends before it
        // has no phase (the simulator refuses phases after the end).
        let clipped = phases(Profile::Transient, 1_300_000, burst, ms(2500));
        assert_eq!(clipped[0].to_string(), "2s..2.5s:130%");
        assert!(phases(Profile::Transient, 1_300_000, burst, ms(2000)).is_empty());
    }
}
