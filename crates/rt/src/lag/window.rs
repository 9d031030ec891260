//! The platform's recent wake-up latencies and the outlier threshold learnt
//! from them.
//!
//! A **wake-up latency** is how late a sleep returned after the time it was
//! asked to return (`t_return - sleep target`, never negative): what a plain
//! absolute sleep would have lagged, whatever the control value was. The
//! window keeps the last [`WINDOW`] of them in a fixed array (no allocation)
//! and describes them robustly by their **median** and **median absolute
//! deviation** (MAD), which a burst of fewer than half the window cannot
//! move arbitrarily far (breakdown point 50 %), unlike a mean and standard
//! deviation that one 30 ms stall would dominate.
//!
//! The threshold is a **Hampel identifier** (Hampel 1974; Leys et al.,
//! "Detecting outliers: do not use standard deviation around the mean, use
//! absolute deviation around the median", JESP 2013):
//!
//! ```text
//! threshold = median + K x max(MAD, MAD_FLOOR),   K = 9
//! ```
//!
//! For normal data sigma = 1.4826 MAD, so Hampel's three-sigma rule is
//! K = 4.5. Wake-up latencies are not normal but right-skewed: a shoulder of
//! slower wake-ups that are still the platform's usual behaviour, then rare
//! stalls of hundreds of microseconds or more. On the reference VM (30 s at
//! 1 ms, SCHED_FIFO 99, under load) the median was 13 us, the MAD about
//! 3 us, p97 26 us, p99 46 us, p99.5 166 us: 4.5 MADs (about 27 us) cut into
//! the shoulder the controller should cover. K = 9 (6 sigma for normal
//! data, about 40 us there) still rejects the stalls; replaying that trace
//! through the controller, it raised the share of lags under 10 us from
//! 98.2 % to 98.5 % for 0.1 % more busy-wait. `MAD_FLOOR` (1 us) keeps a
//! platform whose latency hardly varies (MAD 0, e.g. a scripted clock, or an
//! isolated core) from calling every nanosecond of jitter an outlier. Paper 000 uses a fixed threshold,
//! the application's smallest period, and names a threshold derived from the
//! platform as future work (section 4.1); this is that threshold, learnt
//! dynamically from the last [`WINDOW`] sleeps.

use rtlab_model::Nanos;

/// Wake-up latencies remembered (the most recent ones).
pub const WINDOW: usize = 64;
/// Samples needed before the window's statistics are trusted.
pub const WARM_UP: usize = 16;
/// The smallest spread the threshold assumes.
pub const MAD_FLOOR: Nanos = Nanos::from_us(1);
/// The Hampel identifier's K (module docs).
pub const HAMPEL_K: u64 = 9;

/// The last [`WINDOW`] wake-up latencies, oldest overwritten first.
#[derive(Debug, Clone)]
pub struct LatencyWindow {
    samples: [u64; WINDOW],
    len: usize,
    next: usize,
}

impl Default for LatencyWindow {
    fn default() -> Self {
        LatencyWindow {
            samples: [0; WINDOW],
            len: 0,
            next: 0,
        }
    }
}

impl LatencyWindow {
    /// Adds a latency, forgetting the oldest when the window is full.
    pub fn push(&mut self, latency: Nanos) {
        self.samples[self.next] = latency.as_ns();
        self.next = (self.next + 1) % WINDOW;
        self.len = (self.len + 1).min(WINDOW);
    }

    /// Latencies held (at most [`WINDOW`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no latency is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The (lower) median and the MAD of the latencies held: with `n`
    /// values sorted, the median is the value of rank `(n - 1) / 2` (0-based),
    /// and the MAD is the median, by the same rule, of `|x - median|`.
    /// `None` when empty. Works on a stack copy; never allocates.
    pub fn median_and_mad(&self) -> Option<(Nanos, Nanos)> {
        if self.len == 0 {
            return None;
        }
        let mut scratch = [0u64; WINDOW];
        let values = &mut scratch[..self.len];
        values.copy_from_slice(&self.samples[..self.len]);
        let rank = (self.len - 1) / 2;
        let median = *values.select_nth_unstable(rank).1;
        for v in values.iter_mut() {
            *v = v.abs_diff(median);
        }
        let mad = *values.select_nth_unstable(rank).1;
        Some((Nanos::from_ns(median), Nanos::from_ns(mad)))
    }

    /// The Hampel threshold of the latencies held (module docs), or `None`
    /// before [`WARM_UP`] of them have been seen.
    pub fn threshold(&self) -> Option<Nanos> {
        if self.len < WARM_UP {
            return None;
        }
        let (median, mad) = self.median_and_mad()?;
        Some(hampel_threshold(median, mad))
    }
}

/// `median + HAMPEL_K x max(mad, MAD_FLOOR)`.
pub fn hampel_threshold(median: Nanos, mad: Nanos) -> Nanos {
    let spread = mad.max(MAD_FLOOR).as_ns();
    median.saturating_add(Nanos::from_ns(spread.saturating_mul(HAMPEL_K)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Nanos {
        Nanos::from_us(n)
    }

    #[test]
    fn median_and_mad_of_a_small_skewed_sample() {
        let mut w = LatencyWindow::default();
        assert_eq!(w.median_and_mad(), None);
        // 10 12 13 15 40 us: median 13; deviations 3 1 0 2 27 -> MAD 2.
        for l in [40, 12, 10, 15, 13] {
            w.push(us(l));
        }
        assert_eq!(w.median_and_mad(), Some((us(13), us(2))));
        // Even count takes the lower middle: 10 12 13 15 40 41 -> 13;
        // deviations 3 1 0 2 27 28 -> sorted 0 1 2 3 27 28 -> 2.
        w.push(us(41));
        assert_eq!(w.median_and_mad(), Some((us(13), us(2))));
    }

    #[test]
    fn the_learnt_threshold_of_a_synthetic_distribution() {
        // 60 latencies of 10..=19 us (six of each) and 4 stalls of 5 ms.
        // Sorted, rank 31 is 15 us (ranks 30..=35 hold 15). Deviations from
        // 15: 0 x6, 1 x12, 2 x12, 3 x12, 4 x12, 5 x6, 4985 x4 -> rank 31 is
        // 3 us (ranks 30..=41 hold 3). Threshold 15 + 9 x 3 = 42 us.
        let mut w = LatencyWindow::default();
        for k in 0..60u64 {
            w.push(us(10 + k % 10));
        }
        for _ in 0..4 {
            w.push(Nanos::from_ms(5));
        }
        assert_eq!(w.len(), WINDOW);
        assert_eq!(w.median_and_mad(), Some((us(15), us(3))));
        assert_eq!(w.threshold(), Some(us(42)));
    }

    #[test]
    fn the_oldest_latency_is_forgotten_first() {
        let mut w = LatencyWindow::default();
        for _ in 0..WINDOW {
            w.push(us(100));
        }
        for _ in 0..WINDOW / 2 + 1 {
            w.push(us(20));
        }
        // 33 of 64 are now 20 us: the median has moved to them.
        assert_eq!(w.median_and_mad().unwrap().0, us(20));
        assert_eq!(w.len(), WINDOW);
    }

    #[test]
    fn no_threshold_before_the_warm_up_and_a_floor_on_the_spread() {
        let mut w = LatencyWindow::default();
        for _ in 0..WARM_UP - 1 {
            w.push(us(40));
        }
        assert_eq!(w.threshold(), None);
        w.push(us(40));
        // MAD 0 -> the 1 us floor: 40 + 9 us.
        assert_eq!(w.threshold(), Some(us(49)));
    }
}
