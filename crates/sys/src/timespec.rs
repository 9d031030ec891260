//! The one place where [`Nanos`] meets `struct timespec`.
//!
//! Every syscall that takes or returns a time goes through these two
//! functions, so the conversion (and its overflow rules) is written once.

use rtlab_model::Nanos;

const NS_PER_S: u64 = 1_000_000_000;

/// `t` as a `timespec`. Saturates at `time_t::MAX` seconds, which no monotonic
/// clock reaches.
pub fn to_timespec(t: Nanos) -> libc::timespec {
    let ns = t.as_ns();
    libc::timespec {
        tv_sec: libc::time_t::try_from(ns / NS_PER_S).unwrap_or(libc::time_t::MAX),
        // Below 10^9, so it fits every `c_long`.
        tv_nsec: (ns % NS_PER_S) as libc::c_long,
    }
}

/// A `timespec` read from the kernel as [`Nanos`]. Negative fields (never
/// produced by the monotonic or CPU-time clocks) clamp to zero, and values past
/// 584 years saturate.
pub fn from_timespec(ts: &libc::timespec) -> Nanos {
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    Nanos::from_ns(secs.saturating_mul(NS_PER_S).saturating_add(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_whole_and_fractional_seconds() {
        for ns in [0, 1, 999_999_999, 1_000_000_000, 1_234_567_890_123] {
            let t = Nanos::from_ns(ns);
            assert_eq!(from_timespec(&to_timespec(t)), t);
        }
        let ts = to_timespec(Nanos::from_ns(2_500_000_001));
        assert_eq!((ts.tv_sec, ts.tv_nsec), (2, 500_000_001));
    }

    #[test]
    fn negative_fields_clamp_to_zero() {
        let ts = libc::timespec {
            tv_sec: -1,
            tv_nsec: -5,
        };
        assert_eq!(from_timespec(&ts), Nanos::ZERO);
    }
}
