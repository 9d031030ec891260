//! The text of a `kernel_trace` summary (the object `--kernel-trace` puts
//! in a real run's JSON: events, losses, the kernel's preemption counts,
//! misses by cause): the full block under a run's report, and one short
//! line per run of the commands that make many (`hartstone`, `breakdown`,
//! the studies' real runs, `latency`).

use rtlab_model::Nanos;
use serde_json::Value;

fn count(k: &Value, field: &str) -> u64 {
    k[field].as_u64().unwrap_or(0)
}

/// Events lost in the kernel (overwritten plus dropped).
fn lost(k: &Value) -> u64 {
    count(k, "lost_overrun") + count(k, "lost_dropped")
}

/// The "misses by cause" lines of a run's text output (starting with a
/// blank line; nothing without a summary).
pub fn describe(summary: Option<&Value>) -> String {
    let Some(k) = summary else {
        return String::new();
    };
    if let Some(e) = k["error"].as_str() {
        return format!("\nkernel trace: could not be read: {e}\n");
    }
    let mut out = format!(
        "\nkernel trace: {} events, {} lost, {} preemptions and {} switches of the set's threads within jobs, host steal {}\n",
        k["events"],
        lost(k),
        k["kernel_preemptions"],
        k["kernel_switches"],
        Nanos::from_ns(count(k, "steal_ns")),
    );
    let inferred = count(k, "inferred_switches");
    if inferred > 0 {
        out.push_str(&format!(
            "  ({inferred} switches the kernel did not record, away from idle, were put back from the thread each event was recorded in)\n"
        ));
    }
    let lines = k["misses_by_cause"].as_array().cloned().unwrap_or_default();
    if lines.is_empty() {
        return out;
    }
    out.push_str(
        "misses by cause (lateness charged; misses = jobs where it is the largest share):\n",
    );
    for l in lines {
        out.push_str(&format!(
            "  {:<32} {:>6} misses  {:>12}\n",
            l["cause"].as_str().unwrap_or("?"),
            l["misses"],
            Nanos::from_ns(l["lateness_ns"].as_u64().unwrap_or(0)).to_string(),
        ));
    }
    out
}

/// One line for a run among many: `misses by cause: throttled:deadline 2,
/// set:T1 1` (the causes that were the largest share of a miss's
/// lateness; `none` without misses), and the events lost when any were.
pub fn misses_line(k: &Value) -> String {
    if let Some(e) = k["error"].as_str() {
        return format!("kernel trace could not be read: {e}");
    }
    let causes: Vec<String> = k["misses_by_cause"]
        .as_array()
        .map(|lines| {
            lines
                .iter()
                .filter(|l| l["misses"].as_u64().unwrap_or(0) > 0)
                .map(|l| {
                    format!(
                        "{} {}",
                        l["cause"].as_str().unwrap_or("?"),
                        l["misses"].as_u64().unwrap_or(0)
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut line = format!(
        "misses by cause: {}",
        if causes.is_empty() {
            "none".to_string()
        } else {
            causes.join(", ")
        }
    );
    if lost(k) > 0 {
        line.push_str(&format!(" ({} kernel events lost)", lost(k)));
    }
    line
}

/// A study's traced real runs, one line each: `kernel trace, SET (U
/// 0.600) under gedf, 0 misses: misses by cause: none` (nothing without
/// runs).
pub fn runs_text(runs: &[rtlab_study::real::KernelTraceOfRun]) -> String {
    runs.iter()
        .map(|r| {
            format!(
                "kernel trace, {} (U {:.3}) under {}, {} misses: {}\n",
                rtlab_model::printable(&r.set),
                r.utilization,
                r.scheduler,
                r.misses,
                misses_line(&r.kernel_trace)
            )
        })
        .collect()
}

/// One line for a trace without jobs (`latency`): events recorded and lost.
pub fn events_line(k: &Value) -> String {
    if let Some(e) = k["error"].as_str() {
        return format!("kernel trace could not be read: {e}");
    }
    format!(
        "kernel trace: {} events, {} lost (overrun {}, dropped {}), {} pages after a loss, host steal {}{}",
        k["events"],
        lost(k),
        count(k, "lost_overrun"),
        count(k, "lost_dropped"),
        count(k, "pages_after_loss"),
        Nanos::from_ns(count(k, "steal_ns")),
        k["file"].as_str().map_or(String::new(), |f| format!(", kept in {f}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_short_line_names_each_cause_with_its_misses() {
        let k = json!({
            "events": 10, "lost_overrun": 0, "lost_dropped": 0,
            "misses_by_cause": [
                {"cause": "throttled:deadline", "misses": 2, "lateness_ns": 5},
                {"cause": "set:T1", "misses": 1, "lateness_ns": 1},
                {"cause": "irq", "misses": 0, "lateness_ns": 1}
            ]
        });
        assert_eq!(
            misses_line(&k),
            "misses by cause: throttled:deadline 2, set:T1 1"
        );
        let none =
            json!({"events": 3, "lost_overrun": 1, "lost_dropped": 2, "misses_by_cause": []});
        assert_eq!(
            misses_line(&none),
            "misses by cause: none (3 kernel events lost)"
        );
        assert!(describe(None).is_empty());
        assert!(describe(Some(&k)).contains("throttled:deadline"));
    }
}
