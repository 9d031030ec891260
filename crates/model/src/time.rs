//! Integer-nanosecond time.
//!
//! Every time in rtlab (period, deadline, execution time, instant on a
//! timeline) is a [`Nanos`]: an unsigned 64-bit count of nanoseconds, which
//! covers about 584 years. There is no floating point here; floats appear only
//! in utilizations and statistics (DESIGN.md, "Time").
//!
//! Human durations are parsed and printed exactly: `25ms`, `1.18ms`, `2500us`,
//! `40000000ns`, `1s`, `62.5ms`. A value finer than one nanosecond is an error
//! rather than being rounded, so `parse(display(x)) == x` for every `x`.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::str::FromStr;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::text::printable;

/// A duration or an instant, in whole nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(u64);

/// Nanoseconds in each unit accepted by the parser, largest first.
const UNITS: [(&str, u64); 5] = [
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("µs", 1_000),
    ("ns", 1),
];

impl Nanos {
    /// Zero nanoseconds.
    pub const ZERO: Nanos = Nanos(0);
    /// The largest representable time (about 584 years).
    pub const MAX: Nanos = Nanos(u64::MAX);

    /// `ns` nanoseconds.
    #[inline]
    pub const fn from_ns(ns: u64) -> Nanos {
        Nanos(ns)
    }

    /// `us` microseconds. Panics (at compile time in a const context) on overflow.
    #[inline]
    pub const fn from_us(us: u64) -> Nanos {
        match us.checked_mul(1_000) {
            Some(ns) => Nanos(ns),
            None => panic!("Nanos::from_us overflows u64"),
        }
    }

    /// `ms` milliseconds. Panics (at compile time in a const context) on overflow.
    #[inline]
    pub const fn from_ms(ms: u64) -> Nanos {
        match ms.checked_mul(1_000_000) {
            Some(ns) => Nanos(ns),
            None => panic!("Nanos::from_ms overflows u64"),
        }
    }

    /// `s` seconds. Panics (at compile time in a const context) on overflow.
    #[inline]
    pub const fn from_secs(s: u64) -> Nanos {
        match s.checked_mul(1_000_000_000) {
            Some(ns) => Nanos(ns),
            None => panic!("Nanos::from_secs overflows u64"),
        }
    }

    /// The count of nanoseconds.
    #[inline]
    pub const fn as_ns(self) -> u64 {
        self.0
    }

    /// This time in seconds, as a float (for statistics and reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// This time in milliseconds, as a float (for statistics and reports only).
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// True for zero.
    #[inline]
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// `self + rhs`, or `None` on overflow.
    #[inline]
    pub const fn checked_add(self, rhs: Nanos) -> Option<Nanos> {
        match self.0.checked_add(rhs.0) {
            Some(ns) => Some(Nanos(ns)),
            None => None,
        }
    }

    /// `self - rhs`, or `None` when `rhs > self`.
    #[inline]
    pub const fn checked_sub(self, rhs: Nanos) -> Option<Nanos> {
        match self.0.checked_sub(rhs.0) {
            Some(ns) => Some(Nanos(ns)),
            None => None,
        }
    }

    /// `self * k`, or `None` on overflow.
    #[inline]
    pub const fn checked_mul(self, k: u64) -> Option<Nanos> {
        match self.0.checked_mul(k) {
            Some(ns) => Some(Nanos(ns)),
            None => None,
        }
    }

    /// `self - rhs`, or zero when `rhs > self`.
    #[inline]
    pub const fn saturating_sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }

    /// `self + rhs`, or [`Nanos::MAX`] on overflow.
    #[inline]
    pub const fn saturating_add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }

    /// Ceiling of `self / rhs` as a count (`rhs` must not be zero).
    ///
    /// This is the `⌈t / T⌉` of response-time analysis.
    #[inline]
    pub const fn div_ceil(self, rhs: Nanos) -> u64 {
        self.0.div_ceil(rhs.0)
    }

    /// Floor of `self / rhs` as a count (`rhs` must not be zero).
    #[inline]
    pub const fn div_floor(self, rhs: Nanos) -> u64 {
        self.0 / rhs.0
    }

    /// Greatest common divisor (Euclid); `gcd(0, x) = x`.
    pub const fn gcd(self, other: Nanos) -> Nanos {
        let (mut a, mut b) = (self.0, other.0);
        while b != 0 {
            let r = a % b;
            a = b;
            b = r;
        }
        Nanos(a)
    }

    /// Least common multiple, `a / gcd(a, b) * b`, or `None` when it does not
    /// fit in 64 bits. `lcm(0, x) = 0`.
    pub const fn checked_lcm(self, other: Nanos) -> Option<Nanos> {
        if self.0 == 0 || other.0 == 0 {
            return Some(Nanos(0));
        }
        let g = self.gcd(other).0;
        match (self.0 / g).checked_mul(other.0) {
            Some(ns) => Some(Nanos(ns)),
            None => None,
        }
    }
}

/// The hyperperiod (least common multiple) of `periods`.
///
/// Returns [`TimeError::HyperperiodOverflow`] instead of wrapping when the
/// hyperperiod exceeds 2^64 ns, which happens quickly with co-prime periods in
/// nanoseconds (e.g. random periods at 1 ns granularity). An empty list has
/// hyperperiod zero.
pub fn hyperperiod<I: IntoIterator<Item = Nanos>>(periods: I) -> Result<Nanos, TimeError> {
    let mut acc: Option<Nanos> = None;
    for p in periods {
        acc = Some(match acc {
            None => p,
            Some(a) => a
                .checked_lcm(p)
                .ok_or(TimeError::HyperperiodOverflow { so_far: a, next: p })?,
        });
    }
    Ok(acc.unwrap_or(Nanos::ZERO))
}

/// Lateness `finish - deadline` in signed nanoseconds (Buttazzo, *Hard
/// Real-Time Computing Systems*, 3rd ed., §1.2.1: L = f - d, negative for a
/// job that finished early). Exact whenever the difference fits an `i64`
/// (within ±2^63 - 1 ns, about 292 years either way); beyond, saturated to
/// `i64::MIN` (finished more than 292 years before its deadline, possible
/// only with a relative deadline that long) or `i64::MAX`. Never wraps.
pub fn lateness_ns(finish: Nanos, deadline: Nanos) -> i64 {
    let difference = i128::from(finish.0) - i128::from(deadline.0);
    i64::try_from(difference).unwrap_or(if difference < 0 { i64::MIN } else { i64::MAX })
}

/// Arithmetic on times that did not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// The least common multiple of the periods exceeds 2^64 ns.
    #[error(
        "hyperperiod overflows 64-bit nanoseconds (about 584 years): lcm({so_far}, {next}) does not fit"
    )]
    HyperperiodOverflow {
        /// The lcm of the periods before `next`.
        so_far: Nanos,
        /// The period that made it overflow.
        next: Nanos,
    },
}

impl Add for Nanos {
    type Output = Nanos;
    /// Panics on overflow, like [`std::time::Duration`]; use
    /// [`Nanos::checked_add`] where the operands come from user input.
    #[inline]
    fn add(self, rhs: Nanos) -> Nanos {
        self.checked_add(rhs).expect("overflow when adding Nanos")
    }
}

impl AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, rhs: Nanos) {
        *self = *self + rhs;
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    /// Panics when `rhs > self`; use [`Nanos::checked_sub`] or
    /// [`Nanos::saturating_sub`] where that can happen.
    #[inline]
    fn sub(self, rhs: Nanos) -> Nanos {
        self.checked_sub(rhs)
            .expect("overflow when subtracting Nanos")
    }
}

impl std::iter::Sum for Nanos {
    fn sum<I: Iterator<Item = Nanos>>(iter: I) -> Nanos {
        iter.fold(Nanos::ZERO, |a, b| a + b)
    }
}

impl From<Nanos> for std::time::Duration {
    fn from(n: Nanos) -> Self {
        std::time::Duration::from_nanos(n.0)
    }
}

impl fmt::Display for Nanos {
    /// The shortest exact form in the largest unit not above the value:
    /// `1180000ns` prints as `1.18ms`, `2500us` as `2.5ms`, `0` as `0ns`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        let (unit, scale) = match ns {
            n if n >= 1_000_000_000 => ("s", 1_000_000_000),
            n if n >= 1_000_000 => ("ms", 1_000_000),
            n if n >= 1_000 => ("us", 1_000),
            _ => ("ns", 1),
        };
        let whole = ns / scale;
        let frac = ns % scale;
        let text = if frac == 0 {
            format!("{whole}{unit}")
        } else {
            let digits = scale.ilog10() as usize;
            let frac = format!("{frac:0digits$}");
            format!("{whole}.{}{unit}", frac.trim_end_matches('0'))
        };
        f.pad(&text)
    }
}

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DurationParseError {
    /// Nothing to parse.
    #[error("empty duration (write e.g. \"25ms\")")]
    Empty,
    /// A leading minus sign.
    #[error("invalid duration `{}`: durations cannot be negative", printable(.0))]
    Negative(String),
    /// A number without a unit.
    #[error("invalid duration `{}`: missing unit (use ns, us, ms or s, e.g. \"25ms\")", printable(.0))]
    MissingUnit(String),
    /// A unit that is not ns, us, µs, ms or s.
    #[error("invalid duration `{}`: unknown unit `{}` (use ns, us, ms or s)", printable(.text), printable(.unit))]
    UnknownUnit {
        /// The whole input.
        text: String,
        /// The unit as written.
        unit: String,
    },
    /// The number part is not a plain decimal.
    #[error("invalid duration `{}`: expected a decimal number before the unit", printable(.0))]
    BadNumber(String),
    /// More decimals than whole nanoseconds allow.
    #[error("invalid duration `{}`: finer than 1 ns (times are whole nanoseconds)", printable(.0))]
    TooPrecise(String),
    /// Above 2^64 ns.
    #[error("invalid duration `{}`: too large (at most about 584 years)", printable(.0))]
    Overflow(String),
}

impl FromStr for Nanos {
    type Err = DurationParseError;

    /// Parses `<decimal><unit>`, with optional spaces between them; the unit
    /// is one of `ns`, `us` (or `µs`), `ms`, `s`. Plain `0` is accepted.
    fn from_str(input: &str) -> Result<Nanos, DurationParseError> {
        let text = input.trim();
        if text.is_empty() {
            return Err(DurationParseError::Empty);
        }
        if text.starts_with('-') {
            return Err(DurationParseError::Negative(text.to_string()));
        }
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+'))
            .unwrap_or(text.len());
        let (number, unit) = (text[..split].trim(), text[split..].trim());
        let number = number.strip_prefix('+').unwrap_or(number);
        if unit.is_empty() {
            if !number.is_empty() && number.bytes().all(|b| b == b'0') {
                return Ok(Nanos::ZERO);
            }
            return Err(DurationParseError::MissingUnit(text.to_string()));
        }
        let scale = UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, scale)| *scale)
            .ok_or_else(|| DurationParseError::UnknownUnit {
                text: text.to_string(),
                unit: unit.to_string(),
            })?;
        let (whole, frac) = match number.split_once('.') {
            Some((w, f)) => (w, f),
            None => (number, ""),
        };
        let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && frac.is_empty()) || !digits_ok(whole) || !digits_ok(frac) {
            return Err(DurationParseError::BadNumber(text.to_string()));
        }
        let overflow = || DurationParseError::Overflow(text.to_string());
        let whole_ns = if whole.is_empty() {
            0
        } else {
            whole
                .parse::<u64>()
                .map_err(|_| overflow())?
                .checked_mul(scale)
                .ok_or_else(overflow)?
        };
        // The fraction is exact only if its digits fit in the unit's scale.
        let frac = frac.trim_end_matches('0');
        let scale_digits = scale.ilog10() as usize;
        if frac.len() > scale_digits {
            return Err(DurationParseError::TooPrecise(text.to_string()));
        }
        let frac_ns = if frac.is_empty() {
            0
        } else {
            let padded = format!("{frac:0<scale_digits$}");
            padded.parse::<u64>().map_err(|_| overflow())?
        };
        whole_ns
            .checked_add(frac_ns)
            .map(Nanos)
            .ok_or_else(overflow)
    }
}

impl Serialize for Nanos {
    /// Serialized as the human string (`"1.18ms"`), the form task files use.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Nanos, D::Error> {
        struct DurationVisitor;

        impl Visitor<'_> for DurationVisitor {
            type Value = Nanos;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string with a unit, e.g. \"25ms\"")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Nanos, E> {
                v.parse().map_err(E::custom)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Nanos, E> {
                Err(number_without_unit(v))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Nanos, E> {
                Err(number_without_unit(v))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Nanos, E> {
                Err(number_without_unit(v))
            }
        }

        fn number_without_unit<E: de::Error>(v: impl fmt::Display) -> E {
            E::custom(format!(
                "invalid duration {v}: a duration needs a unit, e.g. \"10ms\" ({v} as nanoseconds is \"{v}ns\")"
            ))
        }

        deserializer.deserialize_any(DurationVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24: T = D = 1e19 ns and a job finished 23 us after release
    /// reported a lateness of i64::MAX (late by 292 years) for a job that
    /// was early.
    #[test]
    fn lateness_is_exact_when_it_fits_and_saturates_on_the_right_side() {
        let us = Nanos::from_us;
        assert_eq!(lateness_ns(us(23), us(10)), 13_000);
        assert_eq!(lateness_ns(us(10), us(23)), -13_000);
        let max = i64::MAX as u64;
        assert_eq!(lateness_ns(us(0), Nanos::from_ns(max)), -i64::MAX);
        assert_eq!(lateness_ns(us(0), Nanos::from_ns(max + 1)), i64::MIN);
        assert_eq!(
            lateness_ns(us(23), Nanos::from_ns(10_000_000_000_000_000_000)),
            i64::MIN
        );
        assert_eq!(lateness_ns(Nanos::MAX, us(0)), i64::MAX);
        assert_eq!(lateness_ns(Nanos::MAX, Nanos::MAX), 0);
    }
    use proptest::prelude::*;

    fn p(s: &str) -> Nanos {
        s.parse().unwrap()
    }

    #[test]
    fn parses_the_documented_examples() {
        assert_eq!(p("25ms"), Nanos::from_ms(25));
        assert_eq!(p("1.18ms"), Nanos::from_us(1180));
        assert_eq!(p("2500us"), Nanos::from_us(2500));
        assert_eq!(p("40000000ns"), Nanos::from_ms(40));
        assert_eq!(p("1s"), Nanos::from_secs(1));
        assert_eq!(p("62.5ms"), Nanos::from_us(62_500));
        assert_eq!(p("3 µs"), Nanos::from_ns(3000));
        assert_eq!(p(".5s"), Nanos::from_ms(500));
        assert_eq!(p("0"), Nanos::ZERO);
        assert_eq!(p("1.000000001s"), Nanos::from_ns(1_000_000_001));
    }

    #[test]
    fn prints_shortest_exact_form() {
        assert_eq!(Nanos::from_us(1180).to_string(), "1.18ms");
        assert_eq!(Nanos::from_us(2500).to_string(), "2.5ms");
        assert_eq!(Nanos::from_ms(40).to_string(), "40ms");
        assert_eq!(Nanos::from_secs(1).to_string(), "1s");
        assert_eq!(Nanos::from_ns(1_000_001).to_string(), "1.000001ms");
        assert_eq!(Nanos::ZERO.to_string(), "0ns");
        assert_eq!(Nanos::from_ns(999).to_string(), "999ns");
        assert_eq!(format!("{:>8}", Nanos::from_ms(5)), "     5ms");
    }

    #[test]
    fn refuses_malformed_durations_with_reasons() {
        use DurationParseError::*;
        let e = |s: &str| s.parse::<Nanos>().unwrap_err();
        assert_eq!(e(""), Empty);
        assert_eq!(e("-5ms"), Negative("-5ms".into()));
        assert_eq!(e("25"), MissingUnit("25".into()));
        assert!(matches!(e("25xs"), UnknownUnit { .. }));
        assert!(matches!(e("1.2.3ms"), BadNumber(_)));
        assert!(matches!(e("ms"), BadNumber(_)));
        assert_eq!(e("1.5ns"), TooPrecise("1.5ns".into()));
        assert_eq!(e("1.0000000001s"), TooPrecise("1.0000000001s".into()));
        assert_eq!(
            e("18446744073709551616ns"),
            Overflow("18446744073709551616ns".into())
        );
        assert_eq!(e("18446744074s"), Overflow("18446744074s".into()));
    }

    #[test]
    fn lcm_and_hyperperiod() {
        let ms = Nanos::from_ms;
        assert_eq!(ms(4).gcd(ms(6)), ms(2));
        assert_eq!(ms(4).checked_lcm(ms(6)), Some(ms(12)));
        assert_eq!(hyperperiod([ms(25), ms(50), ms(40)]), Ok(ms(200)));
        assert_eq!(hyperperiod([]), Ok(Nanos::ZERO));
        // Large co-prime periods overflow instead of wrapping.
        let primes = [4_294_967_291u64, 4_294_967_279, 4_294_967_231];
        let err = hyperperiod(primes.map(Nanos::from_ns)).unwrap_err();
        assert!(matches!(err, TimeError::HyperperiodOverflow { .. }));
    }

    /// Found by the `duration` fuzz target: the error quoted the input raw,
    /// so a newline or a carriage return in it broke the one-line promise.
    #[test]
    fn duration_errors_stay_one_line_whatever_the_input() {
        for input in [
            "00\n\0\0\0",
            "1\rxs",
            "-\n5ms",
            "1.5\u{202e}s",
            "12\u{1b}[31m",
            "1x\ny",
        ] {
            let message = input.parse::<Nanos>().unwrap_err().to_string();
            assert!(
                !message.contains(['\n', '\r', '\u{1b}', '\u{202e}']),
                "{message:?}"
            );
        }
        assert_eq!(
            "00\n\0".parse::<Nanos>().unwrap_err().to_string(),
            "invalid duration `00\\n\\u{0}`: unknown unit `\\u{0}` (use ns, us, ms or s)"
        );
    }

    #[test]
    fn serde_rejects_numbers_without_unit() {
        #[derive(Deserialize)]
        struct W {
            #[allow(dead_code)]
            t: Nanos,
        }
        let err = serde_json::from_str::<W>(r#"{"t": 25}"#).err().unwrap();
        // Never a guess at the unit: 25 as milliseconds would be a
        // million times longer than 25 as nanoseconds.
        assert!(
            err.to_string()
                .contains("needs a unit, e.g. \"10ms\" (25 as nanoseconds is \"25ns\")"),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn display_round_trips(ns in any::<u64>()) {
            let n = Nanos::from_ns(ns);
            prop_assert_eq!(n.to_string().parse::<Nanos>(), Ok(n));
        }

        #[test]
        fn lcm_is_a_common_multiple(a in 1u64..1_000_000, b in 1u64..1_000_000) {
            let l = Nanos::from_ns(a).checked_lcm(Nanos::from_ns(b)).unwrap().as_ns();
            prop_assert_eq!(l % a, 0);
            prop_assert_eq!(l % b, 0);
            prop_assert_eq!(l, a / Nanos::from_ns(a).gcd(Nanos::from_ns(b)).as_ns() * b);
        }
    }
}
