//! The text of a `kernel_trace` summary (the object `--kernel-trace` puts
//! in a real run's JSON: events, losses, the kernel's preemption counts,
//! misses by cause): the full block under a run's report, and one short
//! line per run of the commands that make many (`hartstone`, `breakdown`,
//! the studies' real runs, `latency`).

use rtlab_model::kernel_trace::{KernelTraceSummary, TraceSummary};
use rtlab_model::Nanos;

/// The "misses by cause" lines of a run's text output (starting with a
/// blank line; nothing without a summary).
pub fn describe(summary: Option<&KernelTraceSummary>) -> String {
    let k = match summary {
        None => return String::new(),
        Some(KernelTraceSummary::Unread { error }) => {
            return format!("\nkernel trace: could not be read: {error}\n")
        }
        Some(KernelTraceSummary::Read(k)) => k,
    };
    let mut out = format!(
        "\nkernel trace: {} events, {} lost, {} preemptions and {} switches of the set's threads within jobs, host steal {}\n",
        k.events,
        k.lost(),
        k.kernel_preemptions,
        k.kernel_switches,
        Nanos::from_ns(k.steal_ns),
    );
    if k.inferred_switches > 0 {
        out.push_str(&format!(
            "  ({} switches the kernel did not record, away from idle, were put back from the thread each event was recorded in)\n",
            k.inferred_switches
        ));
    }
    if k.misses_by_cause.is_empty() {
        return out;
    }
    out.push_str(
        "misses by cause (lateness charged; misses = jobs where it is the largest share):\n",
    );
    for l in &k.misses_by_cause {
        out.push_str(&format!(
            "  {:<32} {:>6} misses  {:>12}\n",
            l.cause,
            l.misses,
            Nanos::from_ns(l.lateness_ns).to_string(),
        ));
    }
    out
}

/// One line for a run among many: `misses by cause: throttled:deadline 2,
/// set:T1 1` (the causes that were the largest share of a miss's
/// lateness; `none` without misses), and the events lost when any were.
pub fn misses_line(k: &KernelTraceSummary) -> String {
    let k = match k {
        KernelTraceSummary::Unread { error } => {
            return format!("kernel trace could not be read: {error}")
        }
        KernelTraceSummary::Read(k) => k,
    };
    let causes: Vec<String> = k
        .misses_by_cause
        .iter()
        .filter(|l| l.misses > 0)
        .map(|l| format!("{} {}", l.cause, l.misses))
        .collect();
    let mut line = format!(
        "misses by cause: {}",
        if causes.is_empty() {
            "none".to_string()
        } else {
            causes.join(", ")
        }
    );
    if k.lost() > 0 {
        line.push_str(&format!(" ({} kernel events lost)", k.lost()));
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
pub fn events_line(k: &KernelTraceSummary) -> String {
    let k: &TraceSummary = match k {
        KernelTraceSummary::Unread { error } => {
            return format!("kernel trace could not be read: {error}")
        }
        KernelTraceSummary::Read(k) => k,
    };
    format!(
        "kernel trace: {} events, {} lost (overrun {}, dropped {}), {} pages after a loss, host steal {}{}",
        k.events,
        k.lost(),
        k.lost_overrun,
        k.lost_dropped,
        k.pages_after_loss,
        Nanos::from_ns(k.steal_ns),
        k.file.as_deref().map_or(String::new(), |f| format!(", kept in {f}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::kernel_trace::MissCause;

    fn cause(cause: &str, misses: u64, lateness_ns: u64) -> MissCause {
        MissCause {
            cause: cause.into(),
            misses,
            lateness_ns,
        }
    }

    #[test]
    fn the_short_line_names_each_cause_with_its_misses() {
        let k = KernelTraceSummary::Read(TraceSummary {
            events: 10,
            misses_by_cause: vec![
                cause("throttled:deadline", 2, 5),
                cause("set:T1", 1, 1),
                cause("irq", 0, 1),
            ],
            ..TraceSummary::default()
        });
        assert_eq!(
            misses_line(&k),
            "misses by cause: throttled:deadline 2, set:T1 1"
        );
        let none = KernelTraceSummary::Read(TraceSummary {
            events: 3,
            lost_overrun: 1,
            lost_dropped: 2,
            ..TraceSummary::default()
        });
        assert_eq!(
            misses_line(&none),
            "misses by cause: none (3 kernel events lost)"
        );
        assert!(describe(None).is_empty());
        assert!(describe(Some(&k)).contains("throttled:deadline"));
        let unread = KernelTraceSummary::Unread {
            error: "no pages".into(),
        };
        assert_eq!(
            describe(Some(&unread)),
            "\nkernel trace: could not be read: no pages\n"
        );
        assert_eq!(
            misses_line(&unread),
            "kernel trace could not be read: no pages"
        );
    }
}
