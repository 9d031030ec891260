//! SimSo's times: floating-point milliseconds in the file, whole cycles in
//! the simulation (`parser.py` reads `float(attr)`, `Task.py` holds
//! `int(ms * cycles_per_ms)` cycles: truncation).
//!
//! rtlab reads the decimal text exactly (integer arithmetic, no float) and
//! rounds it to the nearest nanosecond, halves up. It writes a time of `n`
//! ns as the shortest decimal whose IEEE double `f` gives
//! `trunc(f × 10⁶) = n`, so SimSo at `cycles_per_ms = 1000000` (one cycle
//! per nanosecond) simulates exactly `n` cycles and rtlab reads back `n`.

/// SimSo cycles per millisecond that rtlab writes: one cycle per nanosecond.
pub const CYCLES_PER_MS: u64 = 1_000_000;

/// Most significant digits read from one number (a double needs 17).
const MAX_DIGITS: usize = 36;

/// Why a millisecond value could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MillisError {
    /// Not a decimal number.
    NotANumber,
    /// Below zero.
    Negative,
    /// More than 2^64 ns, or more digits than any double has.
    OutOfRange,
}

/// The nanoseconds in `text` milliseconds (`2.5`, `10`, `1e-3`, ` 7 `),
/// rounded to the nearest nanosecond, halves up.
pub fn parse_ms(text: &str) -> Result<u64, MillisError> {
    let text = text.trim();
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => {
            let exp: i32 = body[i + 1..].parse().map_err(|_| MillisError::NotANumber)?;
            (&body[..i], exp)
        }
        None => (body, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return Err(MillisError::NotANumber);
    }
    let digits: String = format!("{whole}{fraction}")
        .trim_start_matches('0')
        .to_string();
    if digits.is_empty() {
        return Ok(0);
    }
    if negative {
        return Err(MillisError::Negative);
    }
    // value = digits × 10^(exponent − len(fraction)) ms
    //       = digits × 10^(scale) ns, scale = exponent − len(fraction) + 6.
    let scale = i64::from(exponent) - fraction.len() as i64 + 6;
    // Digits below a tenth of a nanosecond's place can only matter through
    // rounding; keep the first MAX_DIGITS and let the rest decide nothing
    // (a double's shortest text never has more than 17).
    let (kept, dropped) = digits.split_at(digits.len().min(MAX_DIGITS));
    let scale = scale + dropped.len() as i64;
    let mut value: u128 = kept.parse().map_err(|_| MillisError::OutOfRange)?;
    if scale >= 0 {
        let factor = 10u128
            .checked_pow(u32::try_from(scale).map_err(|_| MillisError::OutOfRange)?)
            .ok_or(MillisError::OutOfRange)?;
        value = value.checked_mul(factor).ok_or(MillisError::OutOfRange)?;
    } else {
        let shift = u32::try_from(-scale).map_err(|_| MillisError::OutOfRange)?;
        value = match 10u128.checked_pow(shift) {
            Some(divisor) => (value + divisor / 2) / divisor,
            None => 0,
        };
    }
    u64::try_from(value).map_err(|_| MillisError::OutOfRange)
}

/// The text SimSo reads as exactly `ns` cycles at [`CYCLES_PER_MS`], which
/// [`parse_ms`] reads back as `ns`; `None` when no double does both (times
/// above about 2^30 ms, 12 days).
pub fn format_ms(ns: u64) -> Option<String> {
    if ns > 1 << 53 {
        return None;
    }
    let mut f = ns as f64 / CYCLES_PER_MS as f64;
    for _ in 0..4 {
        let text = format!("{f}");
        if simso_cycles(f) == ns && parse_ms(&text) == Ok(ns) {
            return Some(text);
        }
        // The next double up: SimSo truncates, so a value just below the
        // whole cycle count loses a cycle.
        f = f64::from_bits(f.to_bits() + 1);
    }
    None
}

/// SimSo's cycle count of a time `ms` at [`CYCLES_PER_MS`]:
/// `int(ms * cycles_per_ms)` in Python, a truncation.
pub fn simso_cycles(ms: f64) -> u64 {
    (ms * CYCLES_PER_MS as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_python_float_text_exactly() {
        assert_eq!(parse_ms("2.5"), Ok(2_500_000));
        assert_eq!(parse_ms(" 7 "), Ok(7_000_000));
        assert_eq!(parse_ms("1e-3"), Ok(1_000));
        assert_eq!(parse_ms("0.0000015"), Ok(2), "half a nanosecond rounds up");
        assert_eq!(parse_ms("0.0000014999"), Ok(1));
        assert_eq!(parse_ms(".5"), Ok(500_000));
        assert_eq!(parse_ms("3."), Ok(3_000_000));
        assert_eq!(parse_ms("2.5000010000000004"), Ok(2_500_001));
        assert_eq!(parse_ms("-0"), Ok(0));
        assert_eq!(parse_ms("-1"), Err(MillisError::Negative));
        for bad in ["", ".", "x", "1.2.3", "inf", "nan", "1e", "1_0", "0x10"] {
            assert_eq!(parse_ms(bad), Err(MillisError::NotANumber), "{bad}");
        }
        assert_eq!(parse_ms("1e30"), Err(MillisError::OutOfRange));
        assert_eq!(parse_ms("1e-300"), Ok(0));
    }

    #[test]
    fn writes_what_simso_truncates_to_the_same_nanosecond() {
        for ns in [
            0,
            1,
            999,
            1_000_000,
            2_500_001,
            4_350_000,
            123_456_789,
            1 << 40,
        ] {
            let text = format_ms(ns).unwrap();
            let f: f64 = text.parse().unwrap();
            assert_eq!(simso_cycles(f), ns, "{text}");
            assert_eq!(parse_ms(&text), Ok(ns), "{text}");
        }
        // A value whose nearest double lands just below the whole cycle.
        let needs_nudge = (1..200_000u64)
            .find(|&ns| simso_cycles(ns as f64 / 1e6) != ns)
            .expect("some nanosecond count truncates one cycle low");
        let text = format_ms(needs_nudge).unwrap();
        assert_ne!(text, format!("{}", needs_nudge as f64 / 1e6));
        assert_eq!(format_ms((1 << 53) + 1), None);
    }

    proptest::proptest! {
        #[test]
        fn every_time_under_a_day_writes_exactly(ns in 0u64..86_400_000_000_000) {
            let text = format_ms(ns).unwrap();
            proptest::prop_assert_eq!(simso_cycles(text.parse().unwrap()), ns);
            proptest::prop_assert_eq!(parse_ms(&text), Ok(ns));
        }
    }
}
