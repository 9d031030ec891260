//! Task periods, in whole nanoseconds.
//!
//! All arithmetic on periods is integer except the logarithm of the
//! log-uniform distribution, which uses `libm` so it is bit-identical on
//! every machine.

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use super::GenerateError;
use crate::random::{below, unit_open};
use crate::Nanos;

/// The shape of a [`PeriodDistribution`], as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PeriodKind {
    /// `uniform`: [`PeriodDistribution::Uniform`].
    Uniform,
    /// `log-uniform`: [`PeriodDistribution::LogUniform`].
    #[default]
    LogUniform,
    /// `harmonic`: [`PeriodDistribution::Harmonic`].
    Harmonic,
}

impl PeriodKind {
    /// Every kind, in the order of the documentation.
    pub const ALL: [PeriodKind; 3] = [
        PeriodKind::Uniform,
        PeriodKind::LogUniform,
        PeriodKind::Harmonic,
    ];

    /// The command-line name: `uniform`, `log-uniform` or `harmonic`.
    pub const fn name(self) -> &'static str {
        match self {
            PeriodKind::Uniform => "uniform",
            PeriodKind::LogUniform => "log-uniform",
            PeriodKind::Harmonic => "harmonic",
        }
    }
}

impl fmt::Display for PeriodKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for PeriodKind {
    type Err = GenerateError;

    /// `uniform`, `log-uniform` (or `loguniform`) or `harmonic`, ASCII case ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.trim().to_ascii_lowercase();
        match name.as_str() {
            "uniform" => Ok(PeriodKind::Uniform),
            "log-uniform" | "loguniform" => Ok(PeriodKind::LogUniform),
            "harmonic" => Ok(PeriodKind::Harmonic),
            _ => Err(GenerateError::UnknownName {
                what: "period distribution",
                name: s.to_string(),
                expected: "uniform, log-uniform or harmonic",
            }),
        }
    }
}

/// How task periods are drawn. Every period lies in `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeriodDistribution {
    /// Uniform over the multiples of `granularity` in `[min, max]`: an integer
    /// `k` is drawn uniformly from `⌈min/g⌉ ..= ⌊max/g⌋` and `T = k·g`.
    ///
    /// This is "uniform in [min, max], rounded to a multiple of the
    /// granularity, kept inside the range", done exactly in integers; unlike
    /// rounding a real draw to the nearest multiple it gives the two end
    /// multiples the same weight as the others.
    Uniform {
        /// Smallest period.
        min: Nanos,
        /// Largest period.
        max: Nanos,
        /// Every period is a multiple of this.
        granularity: Nanos,
    },
    /// Log-uniform, so that each order of magnitude is equally likely
    /// (Emberson, Stafford & Davis 2010, "Techniques for the synthesis of
    /// multiprocessor tasksets", WATERS):
    ///
    /// ```text
    /// r = uniform in [ln(min), ln(max + g))
    /// T = ⌊e^r / g⌋ · g
    /// ```
    ///
    /// The `+ g` makes the top multiple `⌊max/g⌋·g` as likely as its share of
    /// the log scale. `T` is then clamped into the multiples of `g` inside
    /// `[min, max]` (which only matters when `min` is not a multiple of `g`).
    LogUniform {
        /// Smallest period.
        min: Nanos,
        /// Largest period.
        max: Nanos,
        /// Every period is a multiple of this.
        granularity: Nanos,
    },
    /// Harmonic: `T = min · 2^k` with `k` uniform in `0 ..= K`, where `K` is
    /// the largest exponent with `min · 2^K ≤ max`. Every period divides every
    /// larger one, so the hyperperiod is the largest period. There is no
    /// granularity: every period is a multiple of `min`.
    Harmonic {
        /// Smallest period (the base of the chain).
        min: Nanos,
        /// Upper limit on the periods (`min · 2^K` may be below it).
        max: Nanos,
    },
}

impl Default for PeriodDistribution {
    /// Log-uniform in [10 ms, 1 s] at 1 ms granularity: two orders of
    /// magnitude, a common choice in schedulability experiments.
    fn default() -> Self {
        PeriodDistribution::LogUniform {
            min: Nanos::from_ms(10),
            max: Nanos::from_secs(1),
            granularity: Nanos::from_ms(1),
        }
    }
}

impl PeriodDistribution {
    /// A distribution of the given kind, as a command line would assemble it
    /// from `--periods KIND --period-min .. --period-max .. --period-granularity ..`;
    /// `granularity` is ignored for [`PeriodKind::Harmonic`].
    pub fn new(kind: PeriodKind, min: Nanos, max: Nanos, granularity: Nanos) -> PeriodDistribution {
        match kind {
            PeriodKind::Uniform => PeriodDistribution::uniform(min, max, granularity),
            PeriodKind::LogUniform => PeriodDistribution::log_uniform(min, max, granularity),
            PeriodKind::Harmonic => PeriodDistribution::harmonic(min, max),
        }
    }

    /// [`PeriodDistribution::Uniform`].
    pub fn uniform(min: Nanos, max: Nanos, granularity: Nanos) -> PeriodDistribution {
        PeriodDistribution::Uniform {
            min,
            max,
            granularity,
        }
    }

    /// [`PeriodDistribution::LogUniform`].
    pub fn log_uniform(min: Nanos, max: Nanos, granularity: Nanos) -> PeriodDistribution {
        PeriodDistribution::LogUniform {
            min,
            max,
            granularity,
        }
    }

    /// [`PeriodDistribution::Harmonic`].
    pub fn harmonic(min: Nanos, max: Nanos) -> PeriodDistribution {
        PeriodDistribution::Harmonic { min, max }
    }

    /// Which kind this is.
    pub fn kind(&self) -> PeriodKind {
        match self {
            PeriodDistribution::Uniform { .. } => PeriodKind::Uniform,
            PeriodDistribution::LogUniform { .. } => PeriodKind::LogUniform,
            PeriodDistribution::Harmonic { .. } => PeriodKind::Harmonic,
        }
    }

    /// `(min, max)`.
    pub fn range(&self) -> (Nanos, Nanos) {
        match *self {
            PeriodDistribution::Uniform { min, max, .. }
            | PeriodDistribution::LogUniform { min, max, .. }
            | PeriodDistribution::Harmonic { min, max } => (min, max),
        }
    }

    /// The granularity: every period is a multiple of it (`min` for harmonic).
    pub fn granularity(&self) -> Nanos {
        match *self {
            PeriodDistribution::Uniform { granularity, .. }
            | PeriodDistribution::LogUniform { granularity, .. } => granularity,
            PeriodDistribution::Harmonic { min, .. } => min,
        }
    }

    /// Checks `0 < min ≤ max`, `granularity > 0`, and that some multiple of
    /// the granularity lies in `[min, max]`.
    pub fn validate(&self) -> Result<(), GenerateError> {
        let (min, max) = self.range();
        if min.is_zero() {
            return Err(GenerateError::invalid("period-min", "must be > 0"));
        }
        if min > max {
            return Err(GenerateError::invalid_naming(
                "period-min",
                &["period-max"],
                format!("{min} must be <= period-max {max}"),
            ));
        }
        if let PeriodDistribution::Uniform { granularity, .. }
        | PeriodDistribution::LogUniform { granularity, .. } = *self
        {
            if granularity.is_zero() {
                return Err(GenerateError::invalid("period-granularity", "must be > 0"));
            }
            let (lo, hi) = multiples(min, max, granularity);
            if lo > hi {
                return Err(GenerateError::invalid_naming(
                    "period-granularity",
                    &["period-min", "period-max"],
                    format!("{granularity} has no multiple between period-min {min} and period-max {max}"),
                ));
            }
        }
        Ok(())
    }

    /// One period, after [`validate`](Self::validate).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<Nanos, GenerateError> {
        self.validate()?;
        Ok(self.draw(rng))
    }

    /// One period; the distribution must be valid. Consumes one random word
    /// (log-uniform), or one or more (uniform and harmonic, by rejection).
    pub(crate) fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        PeriodPlan::new(self).draw(rng)
    }
}

/// A valid [`PeriodDistribution`] with what every draw recomputes done once
/// (the multiples' range, the logarithms of the log-uniform bounds); its
/// draws are bit-for-bit those of the distribution.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PeriodPlan {
    /// k uniform in `lo..=hi`, period k·g.
    Uniform { lo: u64, hi: u64, g: u64 },
    /// `k = ⌊exp(ln_min + r (ln_top − ln_min)) / g⌋` clamped to `lo..=hi`.
    LogUniform {
        lo: u64,
        hi: u64,
        g: u64,
        ln_min: f64,
        ln_top: f64,
    },
    /// `min · 2^k`, k uniform in `0..=top`.
    Harmonic { min: u64, top: u32 },
}

impl PeriodPlan {
    /// The plan of a valid distribution.
    pub(crate) fn new(distribution: &PeriodDistribution) -> PeriodPlan {
        match *distribution {
            PeriodDistribution::Uniform {
                min,
                max,
                granularity,
            } => {
                let (lo, hi) = multiples(min, max, granularity);
                PeriodPlan::Uniform {
                    lo,
                    hi,
                    g: granularity.as_ns(),
                }
            }
            PeriodDistribution::LogUniform {
                min,
                max,
                granularity,
            } => {
                let g = granularity.as_ns() as f64;
                let (lo, hi) = multiples(min, max, granularity);
                PeriodPlan::LogUniform {
                    lo,
                    hi,
                    g: granularity.as_ns(),
                    ln_min: libm::log(min.as_ns() as f64),
                    ln_top: libm::log(max.as_ns() as f64 + g),
                }
            }
            PeriodDistribution::Harmonic { min, max } => PeriodPlan::Harmonic {
                min: min.as_ns(),
                top: harmonic_top_exponent(min, max),
            },
        }
    }

    /// One period (see [`PeriodDistribution::draw`]).
    pub(crate) fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        match *self {
            PeriodPlan::Uniform { lo, hi, g } => Nanos::from_ns((lo + below(rng, hi - lo + 1)) * g),
            PeriodPlan::LogUniform {
                lo,
                hi,
                g,
                ln_min,
                ln_top,
            } => {
                let r = ln_min + unit_open(rng) * (ln_top - ln_min);
                // `as` saturates, so an out-of-range float cannot wrap.
                let k = libm::floor(libm::exp(r) / g as f64) as u64;
                Nanos::from_ns(k.clamp(lo, hi) * g)
            }
            PeriodPlan::Harmonic { min, top } => {
                let k = below(rng, u64::from(top) + 1) as u32;
                Nanos::from_ns(min << k)
            }
        }
    }
}

/// The range `⌈min/g⌉ ..= ⌊max/g⌋` of multipliers k with `k·g ∈ [min, max]`
/// (empty when the first exceeds the second).
fn multiples(min: Nanos, max: Nanos, granularity: Nanos) -> (u64, u64) {
    let g = granularity.as_ns();
    (min.as_ns().div_ceil(g), max.as_ns() / g)
}

/// The largest `K` with `min · 2^K ≤ max` (`0 < min ≤ max`).
fn harmonic_top_exponent(min: Nanos, max: Nanos) -> u32 {
    let (min, max) = (min.as_ns(), max.as_ns());
    // min · 2^K ≤ max  ⇔  2^K ≤ ⌊max / min⌋  ⇔  K ≤ log2⌊max / min⌋.
    (max / min).ilog2()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::stream_rng;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    #[test]
    fn uniform_periods_are_multiples_inside_the_range() {
        let mut rng = stream_rng(1, 0);
        let dist = PeriodDistribution::uniform(Nanos::from_us(2500), ms(40), ms(1));
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let t = dist.sample(&mut rng).unwrap();
            assert!((ms(3)..=ms(40)).contains(&t), "{t}");
            assert_eq!(t.as_ns() % 1_000_000, 0);
            seen.insert(t);
        }
        // 38 multiples (3..=40 ms), each with probability 1/38: all appear.
        assert_eq!(seen.len(), 38);
    }

    #[test]
    fn log_uniform_periods_are_multiples_and_spread_over_decades() {
        let mut rng = stream_rng(2, 0);
        let dist = PeriodDistribution::log_uniform(ms(10), Nanos::from_secs(1), ms(1));
        let draws = 20_000;
        let mut below_100ms = 0;
        for _ in 0..draws {
            let t = dist.sample(&mut rng).unwrap();
            assert!((ms(10)..=Nanos::from_secs(1)).contains(&t), "{t}");
            assert_eq!(t.as_ns() % 1_000_000, 0);
            below_100ms += u32::from(t < ms(100));
        }
        // Each decade is equally likely: P(T < 100 ms) = P(r < ln 0.1s) =
        // ln(100/10) / ln(1001/10) ≈ 0.4999; a proportion with SE ≈ 0.0035.
        let p = f64::from(below_100ms) / f64::from(draws);
        let expected = libm::log(10.0) / libm::log(100.1);
        assert!((p - expected).abs() < 5.0 * 0.0036, "{p}");
    }

    #[test]
    fn log_uniform_clamps_when_min_is_not_a_multiple() {
        let mut rng = stream_rng(3, 0);
        let dist =
            PeriodDistribution::log_uniform(Nanos::from_us(1500), Nanos::from_us(4500), ms(1));
        for _ in 0..500 {
            let t = dist.draw(&mut rng);
            assert!([ms(2), ms(3), ms(4)].contains(&t), "{t}");
        }
    }

    #[test]
    fn harmonic_periods_divide_each_other() {
        let mut rng = stream_rng(4, 0);
        let dist = PeriodDistribution::harmonic(ms(5), ms(100));
        let periods: Vec<Nanos> = (0..200).map(|_| dist.sample(&mut rng).unwrap()).collect();
        for a in &periods {
            assert!((ms(5)..=ms(100)).contains(a));
            for b in &periods {
                let (small, large) = if a <= b { (a, b) } else { (b, a) };
                assert_eq!(
                    large.as_ns() % small.as_ns(),
                    0,
                    "{small} does not divide {large}"
                );
            }
        }
        // 5, 10, 20, 40, 80 ms are all reachable.
        let distinct: std::collections::BTreeSet<_> = periods.into_iter().collect();
        assert_eq!(
            distinct.into_iter().collect::<Vec<_>>(),
            [5, 10, 20, 40, 80].map(ms)
        );
        assert_eq!(harmonic_top_exponent(ms(5), ms(5)), 0);
        assert_eq!(harmonic_top_exponent(Nanos::from_ns(1), Nanos::MAX), 63);
    }

    #[test]
    fn invalid_ranges_are_refused_by_flag_name() {
        let err = |d: PeriodDistribution| d.validate().unwrap_err().to_string();
        assert_eq!(
            err(PeriodDistribution::uniform(Nanos::ZERO, ms(5), ms(1))),
            "period-min must be > 0"
        );
        assert_eq!(
            err(PeriodDistribution::log_uniform(ms(50), ms(5), ms(1))),
            "period-min 50ms must be <= period-max 5ms"
        );
        assert_eq!(
            err(PeriodDistribution::uniform(ms(1), ms(5), Nanos::ZERO)),
            "period-granularity must be > 0"
        );
        assert_eq!(
            err(PeriodDistribution::uniform(ms(11), ms(19), ms(10))),
            "period-granularity 10ms has no multiple between period-min 11ms and period-max 19ms"
        );
        assert_eq!(
            err(PeriodDistribution::harmonic(ms(2), ms(1))),
            "period-min 2ms must be <= period-max 1ms"
        );
    }

    #[test]
    fn kinds_parse_and_build() {
        for kind in PeriodKind::ALL {
            assert_eq!(kind.name().parse::<PeriodKind>(), Ok(kind));
            assert_eq!(kind.to_string(), kind.name());
            assert_eq!(
                PeriodDistribution::new(kind, ms(1), ms(2), ms(1)).kind(),
                kind
            );
        }
        assert_eq!("LogUniform".parse(), Ok(PeriodKind::LogUniform));
        assert_eq!(
            "poisson".parse::<PeriodKind>().unwrap_err().to_string(),
            "unknown period distribution `poisson` (expected uniform, log-uniform or harmonic)"
        );
        assert_eq!(
            PeriodDistribution::harmonic(ms(3), ms(9)).granularity(),
            ms(3)
        );
    }
}
