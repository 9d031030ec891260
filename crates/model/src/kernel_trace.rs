//! The summary of a real run's kernel trace (`--kernel-trace`): what was
//! recorded and lost, the kernel's preemption counts of the set's threads,
//! and the run's misses by cause. Plain data: `rtlab_ktrace` decodes the
//! trace and computes it ([`TraceSummary`] from its `Analysis::summary`);
//! every real-run record carries it as a [`KernelTraceSummary`] (the
//! `kernel_trace` object of `run --json`, `compare.real`, each Hartstone
//! iteration, breakdown step and study run).
//!
//! **Field order**: the fields are declared in alphabetical order, which is
//! the order the JSON has always had (the summary used to travel as a
//! `serde_json::Value`, whose objects sort their keys): the typed records
//! print the same bytes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One line of "misses by cause".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissCause {
    /// The cause label (`set:T1`, `irq`, `thread:cc1(other)`,
    /// `throttled:rt`, `host-stall`, `execution`, ...).
    pub cause: String,
    /// Lateness charged to it over all missed jobs, ns.
    pub lateness_ns: u64,
    /// Missed jobs whose largest share of lateness it is.
    pub misses: u64,
}

/// The `kernel_trace` object of a real run's JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Per task (by name) that missed: its missed jobs whose largest share
    /// of lateness came from outside the set (another thread, an
    /// interrupt, the host: `rtlab_ktrace::causes::outside_the_set`), the
    /// jobs a disturbance made late; absent when there is none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub disturbed_misses: BTreeMap<String, u64>,
    /// Events decoded.
    pub events: u64,
    /// The kept trace file (`--kernel-trace FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Switches the kernel did not record (away from idle, on the
    /// Firecracker guest), put back from the thread each event was
    /// recorded in.
    pub inferred_switches: u64,
    /// Jobs the trace did not cover.
    pub jobs_untraced: u64,
    /// Preemptions of the set's threads as the kernel counted them
    /// (switched out runnable).
    pub kernel_preemptions: u64,
    /// Switches out of the set's threads within jobs.
    pub kernel_switches: u64,
    /// Events the kernel dropped.
    pub lost_dropped: u64,
    /// Events the kernel overwrote before they were read.
    pub lost_overrun: u64,
    /// Misses by cause, most lateness first.
    pub misses_by_cause: Vec<MissCause>,
    /// Pages read from the kernel.
    pub pages: u64,
    /// Pages flagged as following lost events.
    pub pages_after_loss: u64,
    /// Pages the trace file could not take (full disk).
    pub pages_unwritten: u64,
    /// Host steal time on the traced CPUs (`/proc/stat`), ns.
    pub steal_ns: u64,
    /// Decoding stopped at the event limit.
    pub truncated: bool,
}

impl TraceSummary {
    /// Events lost in the kernel (overwritten plus dropped).
    pub fn lost(&self) -> u64 {
        self.lost_overrun + self.lost_dropped
    }
}

/// A real run's kernel trace as its record keeps it: the summary, or why
/// the trace could not be read (`{"error": "..."}`: the run's own results
/// stand either way).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KernelTraceSummary {
    /// The trace was read.
    Read(TraceSummary),
    /// It could not be.
    Unread {
        /// Why, in words.
        error: String,
    },
}

impl KernelTraceSummary {
    /// The summary, when the trace was read.
    pub fn summary(&self) -> Option<&TraceSummary> {
        match self {
            KernelTraceSummary::Read(s) => Some(s),
            KernelTraceSummary::Unread { .. } => None,
        }
    }
}

impl From<TraceSummary> for KernelTraceSummary {
    fn from(s: TraceSummary) -> Self {
        KernelTraceSummary::Read(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed summary prints the bytes the untyped one did: the keys of
    /// a `serde_json::Value` object, which are sorted.
    #[test]
    fn the_json_keeps_the_sorted_keys_of_the_untyped_summary() {
        let s = TraceSummary {
            disturbed_misses: [("t1".to_string(), 2)].into(),
            events: 553,
            file: Some("run.ktrace".into()),
            misses_by_cause: vec![MissCause {
                cause: "set:t1".into(),
                lateness_ns: 6_973_762,
                misses: 6,
            }],
            pages: 25,
            ..TraceSummary::default()
        };
        let typed = serde_json::to_string_pretty(&KernelTraceSummary::from(s.clone())).unwrap();
        let untyped = serde_json::to_string_pretty(&serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(typed, untyped);
        let without_file = TraceSummary { file: None, ..s };
        let v = serde_json::to_value(&without_file).unwrap();
        assert!(v.get("file").is_none());
        assert_eq!(
            serde_json::from_value::<KernelTraceSummary>(v).unwrap(),
            KernelTraceSummary::Read(without_file)
        );
    }

    #[test]
    fn an_unread_trace_is_its_error() {
        let e = KernelTraceSummary::Unread {
            error: "no pages".into(),
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v, serde_json::json!({"error": "no pages"}));
        assert_eq!(serde_json::from_value::<KernelTraceSummary>(v).unwrap(), e);
        assert!(e.summary().is_none());
    }
}
