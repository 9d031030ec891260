//! The JSON documents of `rtlab latency --json` and `rtlab load --json`
//! (README, "JSON outputs"), as plain structs that
//! serialize with serde.
//!
//! Fields are declared in **alphabetical order**: these documents used to
//! be `serde_json::Value` objects, which sort their keys (the workspace does
//! not enable serde_json's `preserve_order`), and the documented output must
//! not change by a byte (`rtlab_model::schema::keys_in_sorted_order` checks
//! it in the tests below, `crates/cli/tests/json_pins.rs` against the binary).

use serde::Serialize;

pub use rtlab_model::schema::RtThrottlingDocument;

/// `rtlab latency --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyDocument {
    /// The measurement's settings.
    pub config: LatencyConfigDocument,
    /// Whether Ctrl-C ended it early.
    pub interrupted: bool,
    /// The background load's statistics.
    pub load: LoadDocument,
    /// Threads that could not be started or reported.
    pub lost_threads: Vec<usize>,
    /// Platform notes (what was set and restored).
    pub notes: Vec<String>,
    /// The process's peak resident set, when known.
    pub peak_rss_bytes: Option<u64>,
    /// The RT throttling limits, when readable.
    pub rt_throttling: Option<RtThrottlingDocument>,
    /// One entry per measuring thread.
    pub threads: Vec<LatencyThreadDocument>,
    /// Wall time of the whole measurement.
    pub wall_ns: u64,
}

/// The `config` of a [`LatencyDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyConfigDocument {
    /// CPUs the threads are pinned to round robin (`None`: unpinned).
    pub affinity: Option<Vec<usize>>,
    /// Extra interval of each further thread.
    pub distance_ns: u64,
    /// The duration asked for, if any.
    pub duration_ns: Option<u64>,
    /// The first thread's interval.
    pub interval_ns: u64,
    /// The loops asked for, if any.
    pub loops: Option<u64>,
    /// Whether memory was locked.
    pub mlock: bool,
    /// The threads' policy (`fifo`, `rr`, `other`, ...).
    pub policy: &'static str,
    /// Their priority.
    pub priority: u8,
    /// Number of measuring threads.
    pub threads: usize,
    /// `relative` with `--relative` (cyclictest `-r`); absent for the
    /// default absolute timers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<&'static str>,
}

/// One measuring thread of a [`LatencyDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyThreadDocument {
    /// The last wake-up latency.
    pub act_ns: u64,
    /// The mean latency.
    pub avg_ns: u64,
    /// The CPU it was pinned to, if any.
    pub cpu: Option<usize>,
    /// Relative timers only: how far the last wake-up was behind the grid
    /// `start + loops * interval` (absent for absolute timers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift_ns: Option<u64>,
    /// Samples beyond the histogram's last bucket.
    pub histogram_overflows: u64,
    /// `[microseconds, count]` for each non-empty bucket.
    pub histogram_us: Vec<[u64; 2]>,
    /// Its interval.
    pub interval_ns: u64,
    /// Its wake-up jitter.
    pub jitter: JitterDocument,
    /// Loops measured.
    pub loops: u64,
    /// The largest latency.
    pub max_ns: u64,
    /// The smallest latency.
    pub min_ns: u64,
    /// Periods skipped after late wake-ups.
    pub missed_periods: u64,
    /// The worst wake-ups kept.
    pub outliers: Vec<OutlierDocument>,
    /// Latency percentiles.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Its policy.
    pub policy: &'static str,
    /// Its priority.
    pub priority: u8,
    /// Loops asked for (0: until the duration ends).
    pub requested_loops: u64,
    /// Samples the `--series` ring could not keep.
    pub series_dropped: u64,
    /// Its index (`T: N` in the cyclictest line).
    pub thread: usize,
    /// Its kernel thread id.
    pub tid: i32,
}

/// The `jitter` of a [`LatencyThreadDocument`]: signed extremes and
/// percentiles of the absolute jitter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JitterDocument {
    /// Mean absolute jitter.
    pub avg_abs_ns: u64,
    /// Largest absolute jitter.
    pub max_abs_ns: u64,
    /// Largest signed jitter.
    pub max_ns: i64,
    /// Smallest signed jitter.
    pub min_ns: i64,
    /// Median absolute jitter.
    pub p50_abs_ns: u64,
    /// 90th percentile.
    pub p90_abs_ns: u64,
    /// 99.9th percentile.
    pub p999_abs_ns: u64,
    /// 99th percentile.
    pub p99_abs_ns: u64,
}

/// One outlier of a [`LatencyThreadDocument`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutlierDocument {
    /// Its wake-up latency.
    pub latency_ns: u64,
    /// Its loop number.
    #[serde(rename = "loop")]
    pub loop_index: u64,
    /// When it happened, from the start.
    pub time_ns: u64,
}

/// `rtlab load --json`, and the `load` of a [`LatencyDocument`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadDocument {
    /// How long it ran.
    pub elapsed_ns: u64,
    /// Messages passed.
    pub messages: u64,
    /// The load as given (`hackbench:2:pipe`, ...).
    pub spec: String,
    /// Spin rounds done.
    pub spin_rounds: u64,
    /// Load threads.
    pub threads: usize,
}

impl LoadDocument {
    /// The document of `spec`'s statistics.
    pub fn new(spec: crate::load::LoadSpec, stats: &crate::load::LoadStats) -> LoadDocument {
        LoadDocument {
            spec: spec.to_string(),
            threads: stats.threads,
            messages: stats.messages,
            spin_rounds: stats.spin_rounds,
            elapsed_ns: u64::try_from(stats.elapsed.as_nanos()).unwrap_or(u64::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::schema::keys_in_sorted_order;

    #[test]
    fn latency_document_keeps_sorted_keys() {
        let thread = LatencyThreadDocument {
            act_ns: 1,
            avg_ns: 1,
            cpu: Some(0),
            drift_ns: Some(7),
            histogram_overflows: 0,
            histogram_us: vec![[3, 4]],
            interval_ns: 1000,
            jitter: JitterDocument {
                avg_abs_ns: 1,
                max_abs_ns: 2,
                max_ns: 2,
                min_ns: -1,
                p50_abs_ns: 1,
                p90_abs_ns: 1,
                p999_abs_ns: 2,
                p99_abs_ns: 2,
            },
            loops: 10,
            max_ns: 5,
            min_ns: 1,
            missed_periods: 0,
            outliers: vec![OutlierDocument {
                latency_ns: 5,
                loop_index: 3,
                time_ns: 3000,
            }],
            p50_ns: 1,
            p90_ns: 2,
            p999_ns: 5,
            p99_ns: 4,
            policy: "fifo",
            priority: 80,
            requested_loops: 10,
            series_dropped: 0,
            thread: 0,
            tid: 42,
        };
        let doc = LatencyDocument {
            config: LatencyConfigDocument {
                affinity: Some(vec![0, 1]),
                distance_ns: 500,
                duration_ns: None,
                interval_ns: 1000,
                loops: Some(10),
                mlock: true,
                policy: "fifo",
                priority: 80,
                threads: 1,
                timer: Some("relative"),
            },
            interrupted: false,
            load: LoadDocument {
                elapsed_ns: 1,
                messages: 2,
                spec: "none".into(),
                spin_rounds: 0,
                threads: 0,
            },
            lost_threads: vec![],
            notes: vec![],
            peak_rss_bytes: Some(1),
            rt_throttling: Some(RtThrottlingDocument {
                period_us: 1_000_000,
                runtime_us: 950_000,
            }),
            threads: vec![thread],
            wall_ns: 1,
        };
        assert!(keys_in_sorted_order(&doc));
        let text = serde_json::to_string(&doc).unwrap();
        assert!(text.contains(r#""loop":3"#), "{text}");
    }
}
