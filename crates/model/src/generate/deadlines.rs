//! Relative deadlines.

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use super::GenerateError;
use crate::random::unit_open;
use crate::Nanos;

/// How relative deadlines are drawn from each task's C and T.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum DeadlineModel {
    /// D = T. Consumes no random numbers.
    #[default]
    Implicit,
    /// Constrained deadlines between C and T:
    ///
    /// ```text
    /// D = C + round(x · (T − C)),   x uniform in [x_min, x_max] ⊆ [0, 1]
    /// ```
    ///
    /// so C ≤ D ≤ T always. With x in [0, 1] this is D uniform in [C, T],
    /// the usual construction in constrained-deadline experiments; `x_min > 0`
    /// keeps deadlines away from C. Consumes one random word per task.
    Constrained {
        /// Lower end of x (0 allows D = C).
        x_min: f64,
        /// Upper end of x (1 allows D = T).
        x_max: f64,
    },
}

impl DeadlineModel {
    /// [`DeadlineModel::Constrained`] with `x` in `[x_min, x_max]`.
    pub fn constrained(x_min: f64, x_max: f64) -> DeadlineModel {
        DeadlineModel::Constrained { x_min, x_max }
    }

    /// Checks `0 ≤ x_min ≤ x_max ≤ 1`.
    pub fn validate(&self) -> Result<(), GenerateError> {
        match *self {
            DeadlineModel::Implicit => Ok(()),
            DeadlineModel::Constrained { x_min, x_max } => {
                // Written so that NaN fails too.
                if 0.0 <= x_min && x_min <= x_max && x_max <= 1.0 {
                    Ok(())
                } else {
                    Err(GenerateError::invalid(
                        "deadlines",
                        format!("constrained range must satisfy 0 <= x_min <= x_max <= 1 (got {x_min}..{x_max})"),
                    ))
                }
            }
        }
    }

    /// The random part of one task's deadline: x of
    /// [`DeadlineModel::Constrained`] (one random word), nothing for
    /// [`DeadlineModel::Implicit`]. The model must be valid.
    pub(crate) fn draw_fraction<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<f64> {
        match *self {
            DeadlineModel::Implicit => None,
            DeadlineModel::Constrained { x_min, x_max } => {
                Some(x_min + (x_max - x_min) * unit_open(rng))
            }
        }
    }

    /// [`DeadlineModel::deadline`] of a fresh [`DeadlineModel::draw_fraction`].
    #[cfg(test)]
    fn draw<R: Rng + ?Sized>(&self, period: Nanos, wcet: Nanos, rng: &mut R) -> Nanos {
        DeadlineModel::deadline(self.draw_fraction(rng), period, wcet)
    }

    /// The deadline of a task with this period and wcet (`wcet ≤ period`)
    /// from its [`DeadlineModel::draw_fraction`]: T without one, else
    /// C + round(x · (T − C)).
    pub(crate) fn deadline(fraction: Option<f64>, period: Nanos, wcet: Nanos) -> Nanos {
        match fraction {
            None => period,
            Some(x) => {
                let slack = period.saturating_sub(wcet);
                let extra = libm::round(x * slack.as_ns() as f64) as u64;
                // extra ≤ slack in exact arithmetic; min() guards rounding.
                wcet + Nanos::from_ns(extra.min(slack.as_ns()))
            }
        }
    }
}

impl fmt::Display for DeadlineModel {
    /// `implicit` or `constrained:X_MIN..X_MAX`, which [`FromStr`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeadlineModel::Implicit => f.pad("implicit"),
            DeadlineModel::Constrained { x_min, x_max } => {
                f.pad(&format!("constrained:{x_min}..{x_max}"))
            }
        }
    }
}

impl FromStr for DeadlineModel {
    type Err = GenerateError;

    /// `implicit`; `constrained` (x in [0, 1]); or `constrained:X_MIN..X_MAX`
    /// such as `constrained:0.5..1`. The result is validated.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        let (name, range) = match text.split_once(':') {
            Some((name, range)) => (name, Some(range)),
            None => (text, None),
        };
        let unknown = || GenerateError::UnknownName {
            what: "deadline model",
            name: s.to_string(),
            expected: "implicit, constrained or constrained:X_MIN..X_MAX",
        };
        let model = match (name.to_ascii_lowercase().as_str(), range) {
            ("implicit", None) => DeadlineModel::Implicit,
            ("constrained", None) => DeadlineModel::constrained(0.0, 1.0),
            ("constrained", Some(range)) => {
                let (lo, hi) = range.split_once("..").ok_or_else(unknown)?;
                let number = |v: &str| v.trim().parse::<f64>().map_err(|_| unknown());
                DeadlineModel::constrained(number(lo)?, number(hi)?)
            }
            _ => return Err(unknown()),
        };
        model.validate()?;
        Ok(model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::stream_rng;

    #[test]
    fn constrained_deadlines_lie_between_c_and_t() {
        let mut rng = stream_rng(1, 0);
        let model = DeadlineModel::constrained(0.0, 1.0);
        for (t, c) in [
            (10_000_000, 3_000_000),
            (7, 7),
            (7, 1),
            (1_000, 999),
            (u64::MAX / 2, 1),
        ] {
            let (t, c) = (Nanos::from_ns(t), Nanos::from_ns(c));
            for _ in 0..200 {
                let d = model.draw(t, c, &mut rng);
                assert!(c <= d && d <= t, "C={c} D={d} T={t}");
            }
        }
    }

    #[test]
    fn range_ends_pin_the_deadline() {
        let mut rng = stream_rng(2, 0);
        let (t, c) = (Nanos::from_ms(10), Nanos::from_ms(2));
        assert_eq!(DeadlineModel::constrained(0.0, 0.0).draw(t, c, &mut rng), c);
        assert_eq!(DeadlineModel::constrained(1.0, 1.0).draw(t, c, &mut rng), t);
        assert_eq!(
            DeadlineModel::constrained(0.5, 0.5).draw(t, c, &mut rng),
            Nanos::from_ms(6)
        );
        assert_eq!(DeadlineModel::Implicit.draw(t, c, &mut rng), t);
        for _ in 0..200 {
            let d = DeadlineModel::constrained(0.25, 0.75).draw(t, c, &mut rng);
            assert!((Nanos::from_ms(4)..=Nanos::from_ms(8)).contains(&d), "{d}");
        }
    }

    #[test]
    fn parses_and_prints() {
        assert_eq!("implicit".parse(), Ok(DeadlineModel::Implicit));
        assert_eq!(
            "constrained".parse(),
            Ok(DeadlineModel::constrained(0.0, 1.0))
        );
        assert_eq!(
            "constrained:0.5..1".parse(),
            Ok(DeadlineModel::constrained(0.5, 1.0))
        );
        let m = DeadlineModel::constrained(0.25, 0.75);
        assert_eq!(m.to_string().parse(), Ok(m));
        assert_eq!(DeadlineModel::Implicit.to_string(), "implicit");
        assert_eq!(
            "constrained:0.5..2"
                .parse::<DeadlineModel>()
                .unwrap_err()
                .to_string(),
            "deadlines constrained range must satisfy 0 <= x_min <= x_max <= 1 (got 0.5..2)"
        );
        assert_eq!(
            "arbitrary".parse::<DeadlineModel>().unwrap_err().to_string(),
            "unknown deadline model `arbitrary` (expected implicit, constrained or constrained:X_MIN..X_MAX)"
        );
        assert!("constrained:0.5".parse::<DeadlineModel>().is_err());
        assert!(DeadlineModel::constrained(f64::NAN, 1.0)
            .validate()
            .is_err());
        assert!(DeadlineModel::constrained(0.8, 0.2).validate().is_err());
    }
}
