//! Document values as a reader wants them in the report: times in their
//! unit (`25 ms`, `42.13 us`) instead of `_ns` integers, fractions of a
//! CPU as percentages, floats to 4 significant digits, keys as words.
//! The JSON documents keep their exact values; only the page is rounded.

use serde_json::Value;

/// Significant digits a float shows at most.
pub const SIGNIFICANT_DIGITS: i32 = 4;

/// A key as a column or row label: `deadline_ns` -> `deadline`,
/// `context_switches_per_s` -> `context switches per s`, `peak_rss_bytes`
/// -> `peak rss`.
pub fn label(key: &str) -> String {
    let base = key
        .strip_suffix("_ns")
        .or_else(|| key.strip_suffix("_us"))
        .or_else(|| key.strip_suffix("_bytes"))
        .unwrap_or(key);
    base.replace('_', " ")
}

/// Keys a reader looks for first, in this order: what it is, then whether
/// it met its deadlines, then how much ran.
const LEADING_KEYS: [&str; 24] = [
    "name",
    "task",
    "thread",
    "test",
    "policy",
    "scheduler",
    "taskset",
    "origin",
    "kind",
    "schedulable",
    "verdict",
    "deadline_misses",
    "misses",
    "first_miss_ns",
    "released",
    "completed",
    "jobs",
    "loops",
    "sets",
    "utilization",
    "duration_ns",
    "ended_ns",
    "processors",
    "cpu",
];

/// Whether `key` is a verdict (deadline misses, schedulable): a table
/// shows it even when every value is zero or none.
pub fn is_verdict(key: &str) -> bool {
    ["schedulable", "verdict", "deadline_misses", "misses"].contains(&key)
}

/// Keys a reader needs last: run bookkeeping and what rarely happens.
const TRAILING_KEYS: [&str; 14] = [
    "aborted",
    "skipped",
    "unfinished",
    "start_deadline_misses",
    "voluntary_switches",
    "jobs_dropped",
    "lock_errors",
    "lost_tasks",
    "lost_threads",
    "series_dropped",
    "events",
    "seed",
    "peak_rss_bytes",
    "interrupted",
];

/// A statistic's place among a measure's (`min_response_ns`,
/// `mean_response_ns`, ..., `max_response_ns`): min, mean or average,
/// the percentiles rising, max; `None` for a key that is no statistic.
fn statistic(key: &str) -> Option<(usize, String)> {
    let base = key
        .strip_suffix("_ns")
        .or_else(|| key.strip_suffix("_us"))
        .unwrap_or(key);
    let words: Vec<&str> = base.split('_').collect();
    let rank = |w: &str| -> Option<usize> {
        match w {
            "min" => Some(0),
            "mean" | "avg" => Some(1),
            // The last sample: after the distribution it is one draw of.
            "act" => Some(10_001),
            "max" => Some(10_000),
            p if p.len() > 1 && p.starts_with('p') => {
                let digits = &p[1..];
                // p50 < p90 < p99 < p999: the digits read as 0.50, 0.90,
                // 0.99, 0.999 of the distribution.
                let fraction: f64 = format!("0.{digits}").parse().ok()?;
                Some(3 + (fraction * 9_000.0) as usize)
            }
            _ => None,
        }
    };
    let (i, r) = words
        .iter()
        .enumerate()
        .find_map(|(i, w)| Some((i, rank(w)?)))?;
    let mut measure: Vec<&str> = words.clone();
    measure.remove(i);
    Some((r, measure.join("_")))
}

/// The order a reader takes a document's keys in (the documents sort them
/// alphabetically, which puts `aborted` first and `p999` before `p99`):
/// [`LEADING_KEYS`] first, in their order; then each measure's statistics
/// together, from min through the percentiles to max; then the rest in
/// natural order (numbers by value); [`TRAILING_KEYS`] last. Sorts `keys`
/// in place, stably.
pub fn reading_order<K: AsRef<str>>(keys: &mut [K]) {
    keys.sort_by_key(|k| reading_rank(k.as_ref()));
}

/// The sort key of [`reading_order`].
fn reading_rank(key: &str) -> (usize, String, usize, Vec<NaturalPart>) {
    let last = key.rsplit(['.', ' ']).next().unwrap_or(key);
    if let Some(i) = LEADING_KEYS.iter().position(|k| *k == key) {
        return (i, String::new(), 0, Vec::new());
    }
    if let Some(i) = TRAILING_KEYS.iter().position(|k| *k == last) {
        return (
            usize::MAX - TRAILING_KEYS.len() + i,
            String::new(),
            0,
            Vec::new(),
        );
    }
    match statistic(key) {
        Some((rank, measure)) => {
            // Response times first, then how late, then lags and waits.
            let order = ["response", "lateness", "lag", "latency", "blocked"];
            let m = order
                .iter()
                .position(|o| *o == measure)
                .unwrap_or(order.len());
            (
                LEADING_KEYS.len(),
                format!("{m}{measure}"),
                rank,
                Vec::new(),
            )
        }
        None => (LEADING_KEYS.len() + 1, String::new(), 0, natural(key)),
    }
}

/// A piece of a key for natural ordering: text, or a number by value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum NaturalPart {
    Number(u64),
    Text(String),
}

/// `key` as text and numbers, so `t2` comes before `t10`.
fn natural(key: &str) -> Vec<NaturalPart> {
    let mut out = Vec::new();
    let mut rest = key;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits > 0 {
            out.push(NaturalPart::Number(
                rest[..digits].parse().unwrap_or(u64::MAX),
            ));
            rest = &rest[digits..];
        } else {
            let text = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            out.push(NaturalPart::Text(rest[..text].to_string()));
            rest = &rest[text..];
        }
    }
    out
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
            } else if key.ends_with("_bytes") {
                bytes(f)
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

/// A size in bytes in binary units with four significant digits:
/// 68694016 -> `65.51 MiB`.
pub fn bytes(b: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut unit = 0;
    while v.abs() >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{} {}", significant(v), units[unit])
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
        assert_eq!(
            value("peak_rss_bytes", &json!(68_694_016)).unwrap(),
            "65.51 MiB"
        );
        assert_eq!(label("peak_rss_bytes"), "peak rss");
        assert_eq!(label("wcrt_ns"), "wcrt");
    }

    /// Issue 36: `p999` came before `p99` and `aborted` first.
    #[test]
    fn keys_are_in_reading_order_not_alphabetical() {
        let mut keys = vec![
            "aborted",
            "avg_ns",
            "cpu",
            "max_ns",
            "min_ns",
            "name",
            "p50_ns",
            "p999_ns",
            "p99_ns",
            "p90_ns",
            "peak_rss_bytes",
            "released",
            "t10",
            "t2",
            "deadline_misses",
        ];
        reading_order(&mut keys);
        assert_eq!(
            keys,
            [
                "name",
                "deadline_misses",
                "released",
                "cpu",
                "min_ns",
                "avg_ns",
                "p50_ns",
                "p90_ns",
                "p99_ns",
                "p999_ns",
                "max_ns",
                "t2",
                "t10",
                "aborted",
                "peak_rss_bytes",
            ]
        );
        // Each measure's statistics together, min to max.
        let mut keys = vec![
            "max_lag_ns",
            "max_response_ns",
            "mean_lag_ns",
            "mean_response_ns",
            "min_response_ns",
        ];
        reading_order(&mut keys);
        assert_eq!(
            keys,
            [
                "min_response_ns",
                "mean_response_ns",
                "max_response_ns",
                "mean_lag_ns",
                "max_lag_ns"
            ]
        );
    }
}
