//! SCHED_DEADLINE admission as the kernel decides it, in its own
//! fixed-point units.
//!
//! The kernel holds a bandwidth runtime/period as `to_ratio(period,
//! runtime) = (runtime << BW_SHIFT) / period`, rounded down, with
//! `BW_SHIFT = 20` (`kernel/sched/sched.h`; `to_ratio` in
//! `kernel/sched/core.c`): units of 2^-20 of a CPU. A root domain of `n`
//! CPUs may hold `n x to_ratio(sched_rt_period, sched_rt_runtime)` (the
//! `dl_bw` of `kernel/sched/deadline.c`, scaled by the CPUs' capacity:
//! `cap_scale(bw, n x 1024) = n x bw` on symmetric CPUs), and since Linux
//! 6.12 that total already counts each CPU's fair server,
//! `to_ratio(1 s, 50 ms)` by default. A new deadline thread is refused
//! (`__dl_overflow`, EBUSY) when `cap_scale(bw, cap) < total_bw - old_bw +
//! new_bw`: it is admitted while the sum **stays at or under** the limit.
//!
//! So with the defaults (950000 us per 1000000 us, fair server 50 ms per
//! 1 s) one CPU admits 996147 - 52428 = 943719 units of tasks, and a set
//! whose C/T sum to exactly 0.9 (943718 units, each rounded down) fits.
//! Measured on this project's Linux 6.18 VM with two `chrt -d` threads of
//! period 100 ms in the 2-CPU root domain: runtimes 90 ms and 90.000247 ms
//! are admitted (943718 + 943720 = 1887438 = 2 x 943719), 90 ms and
//! 90.000248 ms refused (one unit more).

use rtlab_model::Nanos;

use crate::policy::{fair_server_share, RtThrottling};

/// The kernel's `BW_SHIFT`: bandwidths are in units of 2^-20 of a CPU.
pub const BW_SHIFT: u32 = 20;

/// One CPU, in the kernel's units.
pub const BW_UNIT: u64 = 1 << BW_SHIFT;

/// The fair server's default reservation (Linux 6.12+), per CPU.
const FAIR_SERVER: (Nanos, Nanos) = (Nanos::from_ms(50), Nanos::from_secs(1));

/// `to_ratio(period, runtime)`: runtime/period in units of 2^-20, rounded
/// down as the kernel rounds it; 0 for a zero period.
pub fn to_ratio(period: Nanos, runtime: Nanos) -> u64 {
    if period.is_zero() {
        return 0;
    }
    let ratio = (u128::from(runtime.as_ns()) << BW_SHIFT) / u128::from(period.as_ns());
    u64::try_from(ratio).unwrap_or(u64::MAX)
}

/// A bandwidth in the kernel's units with its share of a CPU, for
/// messages: `943720 (0.900001)`.
pub fn show(units: u64) -> String {
    format!("{units} ({:.6})", units as f64 / BW_UNIT as f64)
}

/// What SCHED_DEADLINE admission lets the tasks of one root domain hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainCapacity {
    /// CPUs of the root domain.
    pub cpus: usize,
    /// Per CPU: `to_ratio(sched_rt_period_us, sched_rt_runtime_us)`.
    pub rt: u64,
    /// Per CPU: the fair server's bandwidth (0 before Linux 6.12).
    pub fair_server: u64,
}

impl DomainCapacity {
    /// The capacity of a root domain of `cpus` CPUs under `throttling`;
    /// `None` when admission control is off (`sched_rt_runtime_us = -1`).
    pub fn new(throttling: RtThrottling, cpus: usize) -> Option<DomainCapacity> {
        let runtime = u64::try_from(throttling.runtime_us).ok()?;
        if throttling.period_us == 0 {
            return None;
        }
        let fair_server = if fair_server_share() > 0.0 {
            to_ratio(FAIR_SERVER.1, FAIR_SERVER.0)
        } else {
            0
        };
        Some(DomainCapacity {
            cpus: cpus.max(1),
            rt: to_ratio(
                Nanos::from_us(throttling.period_us),
                Nanos::from_us(runtime),
            ),
            fair_server,
        })
    }

    /// What the domain's tasks may hold together: `cpus x (rt -
    /// fair_server)` units; a sum of `to_ratio`s at or under it is admitted.
    pub fn for_tasks(&self) -> u64 {
        (self.cpus as u64).saturating_mul(self.rt.saturating_sub(self.fair_server))
    }

    /// How [`DomainCapacity::for_tasks`] is made up, for messages:
    /// `943719 (0.900001) = 1 x (996147 for sched_rt_runtime_us /
    /// sched_rt_period_us - 52428 for the fair server since Linux 6.12)`.
    pub fn describe(&self) -> String {
        let fair = if self.fair_server > 0 {
            format!(
                " - {} for the fair server since Linux 6.12",
                self.fair_server
            )
        } else {
            String::new()
        };
        format!(
            "{} = {} x ({} for sched_rt_runtime_us / sched_rt_period_us{fair})",
            show(self.for_tasks()),
            self.cpus,
            self.rt
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidths_are_the_kernels_rounded_down_units() {
        assert_eq!(to_ratio(Nanos::from_secs(1), Nanos::from_ms(950)), 996_147);
        assert_eq!(to_ratio(Nanos::from_secs(1), Nanos::from_ms(50)), 52_428);
        assert_eq!(to_ratio(Nanos::from_ms(100), Nanos::from_ms(90)), 943_718);
        assert_eq!(
            to_ratio(Nanos::from_ms(100), Nanos::from_ns(90_000_247)),
            943_720
        );
        assert_eq!(
            to_ratio(Nanos::from_ms(100), Nanos::from_ns(90_000_248)),
            943_721
        );
        assert_eq!(to_ratio(Nanos::from_ms(1), Nanos::from_ms(1)), BW_UNIT);
        assert_eq!(to_ratio(Nanos::ZERO, Nanos::from_ms(1)), 0);
        assert_eq!(show(943_720), "943720 (0.900002)");
    }

    /// The boundary measured on Linux 6.18 (module docs): in a 2-CPU root
    /// domain 943718 + 943720 units fit, one more does not.
    #[test]
    fn the_measured_boundary_is_at_or_under_the_capacity() {
        let two = DomainCapacity {
            cpus: 2,
            rt: 996_147,
            fair_server: 52_428,
        };
        assert_eq!(two.for_tasks(), 1_887_438);
        let pair = |r: u64| {
            to_ratio(Nanos::from_ms(100), Nanos::from_ms(90))
                + to_ratio(Nanos::from_ms(100), Nanos::from_ns(r))
        };
        assert!(pair(90_000_247) <= two.for_tasks());
        assert!(pair(90_000_248) > two.for_tasks());
        let one = DomainCapacity { cpus: 1, ..two };
        assert_eq!(
            one.describe(),
            "943719 (0.900001) = 1 x (996147 for sched_rt_runtime_us / sched_rt_period_us - 52428 for the fair server since Linux 6.12)"
        );
        // C/T = 0.9 exactly fits one CPU: the kernel admits it.
        assert!(to_ratio(Nanos::from_ms(10), Nanos::from_ms(9)) <= one.for_tasks());
        let off = RtThrottling {
            runtime_us: -1,
            period_us: 1_000_000,
        };
        assert_eq!(DomainCapacity::new(off, 1), None);
    }
}
