//! Summaries of latency samples: exact min / max / mean, percentiles from an
//! HDR histogram (3 significant digits, so a percentile is within 0.1 % of
//! the true sample value).

use hdrhistogram::Histogram;
use rtlab_model::Nanos;

/// Largest value a histogram tracks exactly (60 s); larger values are
/// recorded as 60 s.
pub const HISTOGRAM_MAX: Nanos = Nanos::from_secs(60);

/// A histogram of nanosecond values with 3 significant digits, sized once
/// (recording never allocates).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX.as_ns(), 3)
        .expect("static histogram bounds are valid")
}

/// Counts, extremes, mean and percentiles of one measured quantity.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// Samples.
    pub count: u64,
    /// Smallest sample (exact).
    pub min: Nanos,
    /// Largest sample (exact).
    pub max: Nanos,
    /// Mean in ns.
    pub mean_ns: f64,
    /// Median.
    pub p50: Nanos,
    /// 90th percentile.
    pub p90: Nanos,
    /// 99th percentile.
    pub p99: Nanos,
    /// 99.9th percentile.
    pub p999: Nanos,
}

impl Summary {
    /// The summary of the samples in `hist`, with the exact `min`, `max` and
    /// `sum` kept beside it (the histogram's are rounded).
    pub fn new(hist: &Histogram<u64>, min: Nanos, max: Nanos, sum_ns: u128) -> Summary {
        let count = hist.len();
        if count == 0 {
            return Summary::default();
        }
        let q = |p: f64| Nanos::from_ns(hist.value_at_quantile(p).clamp(min.as_ns(), max.as_ns()));
        Summary {
            count,
            min,
            max,
            mean_ns: sum_ns as f64 / count as f64,
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
        }
    }

    /// The mean rounded to whole nanoseconds.
    pub fn mean(&self) -> Nanos {
        Nanos::from_ns(self.mean_ns.round() as u64)
    }
}

/// Running exact extremes and sum, updated without allocating.
#[derive(Debug, Clone, Copy)]
pub struct Extremes {
    /// Smallest so far (`Nanos::MAX` when empty).
    pub min: Nanos,
    /// Largest so far.
    pub max: Nanos,
    /// Sum of all values.
    pub sum_ns: u128,
}

impl Default for Extremes {
    fn default() -> Self {
        Extremes {
            min: Nanos::MAX,
            max: Nanos::ZERO,
            sum_ns: 0,
        }
    }
}

impl Extremes {
    /// Adds a value.
    #[inline]
    pub fn record(&mut self, v: Nanos) {
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum_ns += u128::from(v.as_ns());
    }

    /// The summary with `hist`.
    pub fn summary(&self, hist: &Histogram<u64>) -> Summary {
        Summary::new(hist, self.min, self.max, self.sum_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_one_to_a_thousand() {
        let mut h = new_histogram();
        let mut e = Extremes::default();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
            e.record(Nanos::from_ns(v));
        }
        let s = e.summary(&h);
        assert_eq!((s.count, s.min.as_ns(), s.max.as_ns()), (1000, 1, 1000));
        assert_eq!(s.mean_ns, 500.5);
        assert_eq!(s.p50.as_ns(), 500);
        assert_eq!(s.p90.as_ns(), 900);
        assert_eq!(s.p99.as_ns(), 990);
        assert_eq!(s.p999.as_ns(), 999);
        assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999);
    }

    #[test]
    fn empty_summary_is_zero() {
        let s = Extremes::default().summary(&new_histogram());
        assert_eq!(s.count, 0);
        assert_eq!(s.max, Nanos::ZERO);
    }

    #[test]
    fn zero_and_huge_values_are_recordable() {
        let mut h = new_histogram();
        h.record(0).unwrap();
        h.saturating_record(u64::MAX);
        assert_eq!(h.len(), 2);
    }
}
