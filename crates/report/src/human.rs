//! Document values as a reader wants them in the report: times in their
//! unit (`25 ms`, `42.13 us`) instead of `_ns` integers, fractions of a
//! CPU as percentages, floats to 4 significant digits, keys as words.
//! The JSON documents keep their exact values; only the page is rounded.

use serde_json::Value;

/// Significant digits a float shows at most.
pub const SIGNIFICANT_DIGITS: i32 = 4;

/// A key as a column or row label: `deadline_ns` -> `deadline`,
/// `context_switches_per_s` -> `context switches per s`.
pub fn label(key: &str) -> String {
    let base = key
        .strip_suffix("_ns")
        .or_else(|| key.strip_suffix("_us"))
        .unwrap_or(key);
    base.replace('_', " ")
}

/// True for keys whose numbers are times (`_ns` or `_us`).
pub fn is_time(key: &str) -> bool {
    key.ends_with("_ns") || key.ends_with("_us")
}

/// True for keys whose numbers are fractions shown as percentages
/// (utilizations, breakdown utilizations, acceptance ratios, shares).
pub fn is_fraction(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    last.contains("utilization")
        || last.contains("breakdown")
        || last == "ratio"
        || last.ends_with("share")
        || last == "limit"
}

/// The value of `key` as text: see the module doc. `None` for objects and
/// arrays of non-scalars (they get tables of their own).
pub fn value(key: &str, v: &Value) -> Option<String> {
    match v {
        Value::Array(items) if !items.is_empty() => {
            let parts: Option<Vec<String>> = items.iter().map(|i| scalar(key, i)).collect();
            parts.map(|p| p.join(" / "))
        }
        Value::Array(_) => Some("—".into()),
        Value::Object(_) => None,
        other => scalar(key, other),
    }
}

fn scalar(key: &str, v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => "—".into(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::String(s) if s.is_empty() => "—".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => {
            let f = n.as_f64()?;
            if key.ends_with("_ns") {
                duration_ns(f)
            } else if key.ends_with("_us") {
                duration_ns(f * 1e3)
            } else if is_fraction(key) && n.is_f64() {
                percent(f)
            } else if n.is_f64() {
                significant(f)
            } else {
                n.to_string()
            }
        }
        _ => return None,
    })
}

/// `ns` in the largest unit that keeps it at 1 or more: `1.5 s`,
/// `25 ms`, `42.13 us`, `800 ns`.
pub fn duration_ns(ns: f64) -> String {
    let (scaled, unit) = match ns.abs() {
        a if a >= 1e9 => (ns / 1e9, "s"),
        a if a >= 1e6 => (ns / 1e6, "ms"),
        a if a >= 1e3 => (ns / 1e3, "us"),
        _ => (ns, "ns"),
    };
    format!("{} {unit}", significant(scaled))
}

/// A fraction as a percentage: 0.8300932 -> `83.01 %`.
pub fn percent(fraction: f64) -> String {
    format!("{} %", significant(fraction * 100.0))
}

/// `f` to [`SIGNIFICANT_DIGITS`] significant digits, trailing zeros
/// dropped; magnitudes of 10^4 and more as whole numbers.
pub fn significant(f: f64) -> String {
    if !f.is_finite() {
        return f.to_string();
    }
    if f == 0.0 {
        return "0".into();
    }
    let magnitude = f.abs().log10().floor() as i32;
    let decimals = (SIGNIFICANT_DIGITS - 1 - magnitude).max(0) as usize;
    let text = format!("{f:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    if text == "-0" {
        "0".into()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_take_their_unit_and_four_significant_digits() {
        assert_eq!(value("deadline_ns", &json!(25_000_000)).unwrap(), "25 ms");
        assert_eq!(
            value("max_response_delta_ns", &json!(42_127)).unwrap(),
            "42.13 us"
        );
        assert_eq!(value("duration_ns", &json!(1_000_000_000)).unwrap(), "1 s");
        assert_eq!(value("x_ns", &json!(800)).unwrap(), "800 ns");
        assert_eq!(value("period_us", &json!(1500)).unwrap(), "1.5 ms");
        assert_eq!(
            value("mean_response_ns", &json!([3_019_079, 3_000_000])).unwrap(),
            "3.019 ms / 3 ms"
        );
    }

    #[test]
    fn fractions_are_percentages_and_floats_are_rounded() {
        assert_eq!(
            value("utilization", &json!(0.8300932203389833)).unwrap(),
            "83.01 %"
        );
        assert_eq!(
            value("breakdown", &json!(0.9223256786949156)).unwrap(),
            "92.23 %"
        );
        assert_eq!(value("ratio", &json!(1.0)).unwrap(), "100 %");
        assert_eq!(
            value("context_switches_per_s", &json!(242.0)).unwrap(),
            "242"
        );
        assert_eq!(value("x", &json!(0.000123456)).unwrap(), "0.0001235");
        assert_eq!(value("x", &json!(123456.7)).unwrap(), "123457");
        assert_eq!(value("jobs", &json!(220)).unwrap(), "220");
        assert_eq!(value("first_miss_ns", &json!(null)).unwrap(), "—");
        assert_eq!(label("context_switches_per_s"), "context switches per s");
        assert_eq!(label("wcrt_ns"), "wcrt");
    }
}
