//! The first wake-up latencies of a controller, from which it starts.
//!
//! A **wake-up latency** is how late a sleep returned after the time it was
//! asked to return (`t_return - sleep target`, never negative): what a plain
//! absolute sleep would have lagged, whatever the control value was.
//!
//! The robust controller ([`super::robust`]) tracks a high quantile of the
//! latencies with steps of about a microsecond, so from a control value of 0
//! it would need some 50 late wakes to reach a 50 us latency quantile. It
//! starts instead from its first [`WARM_UP`] latencies, measured with plain
//! sleeps: the **second largest** of them, an order statistic that estimates
//! the 1 - 2/17 = 88th percentile (the k-th largest of n samples estimates
//! the (n + 1 - k)/(n + 1) quantile) and that one stall among them cannot
//! move. The tracker then climbs from there to the quantile it aims at.

use rtlab_model::Nanos;

/// Latencies measured with plain sleeps before the controller starts.
pub const WARM_UP: usize = 16;

/// The first [`WARM_UP`] wake-up latencies, in a fixed array (no
/// allocation).
#[derive(Debug, Clone, Default)]
pub struct WarmUp {
    samples: [u64; WARM_UP],
    len: usize,
}

impl WarmUp {
    /// Adds a latency; returns the starting point (the second largest of
    /// the [`WARM_UP`] latencies) when this one completes the set, `None`
    /// before and after.
    pub fn push(&mut self, latency: Nanos) -> Option<Nanos> {
        if self.len >= WARM_UP {
            return None;
        }
        self.samples[self.len] = latency.as_ns();
        self.len += 1;
        (self.len == WARM_UP).then(|| self.second_largest())
    }

    /// Whether every warm-up latency has been seen.
    pub fn is_done(&self) -> bool {
        self.len >= WARM_UP
    }

    /// Latencies seen so far (at most [`WARM_UP`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none has been seen.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn second_largest(&self) -> Nanos {
        let mut sorted = self.samples;
        sorted.sort_unstable();
        Nanos::from_ns(sorted[WARM_UP - 2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Nanos {
        Nanos::from_us(n)
    }

    #[test]
    fn the_start_is_the_second_largest_of_the_first_sixteen() {
        let mut w = WarmUp::default();
        // 10..=24 us and one 5 ms stall: the stall is the largest, so the
        // start is 24 us.
        for l in 10..25 {
            assert_eq!(w.push(us(l)), None);
        }
        assert!(!w.is_done());
        assert_eq!(w.push(Nanos::from_ms(5)), Some(us(24)));
        assert!(w.is_done());
        assert_eq!(w.push(us(1)), None, "later latencies change nothing");
        assert_eq!(w.len(), WARM_UP);
    }

    #[test]
    fn equal_latencies_start_at_that_latency() {
        let mut w = WarmUp::default();
        assert!(w.is_empty());
        let starts: Vec<Option<Nanos>> = (0..WARM_UP).map(|_| w.push(us(40))).collect();
        assert_eq!(starts.last().copied().flatten(), Some(us(40)));
        assert!(starts[..WARM_UP - 1].iter().all(Option::is_none));
    }
}
