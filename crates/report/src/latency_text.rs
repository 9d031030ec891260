//! `rtlab latency` (the cyclictest measurement) as a document and text:
//! [`LatencyDocument`] is `--json`, [`describe`] the human output, which
//! reads the document and the few things about the run it does not hold
//! ([`TextContext`]).
//!
//! Fields are declared in **alphabetical order**: these documents used to
//! be `serde_json::Value` objects, which sort their keys (the workspace does
//! not enable serde_json's `preserve_order`), and the documented output must
//! not change by a byte (`rtlab_model::schema::keys_in_sorted_order` checks
//! it in the tests below, `crates/cli/tests/json_pins.rs` against the binary).

use rtlab_host::RtThrottling;
use rtlab_model::schema::{LoadDocument, RtThrottlingDocument};
use rtlab_model::Nanos;
use rtlab_probe::latency::{self, Affinity, ProbeConfig, ProbeReport, ThreadReport, TimerMode};
use serde::Serialize;

use crate::table;

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
    /// What else ran on the measured CPUs, and the verdict
    /// (`rtlab_host::disturbance`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<rtlab_model::disturbance::DisturbanceAccount>,
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

/// What the text of a measurement shows that its [`LatencyDocument`] does
/// not hold.
#[derive(Debug, Clone, Copy)]
pub struct TextContext<'a> {
    /// Thread 0's policy as the run set it (`SCHED_FIFO 99`, ...).
    pub policy: &'a str,
    /// The RT throttling limit in words, when readable.
    pub throttling_limit: Option<&'a str>,
    /// cyclictest's summary line of each thread, in order.
    pub cyclictest_lines: &'a [String],
    /// Whether the worst wake-ups were asked for (`--outliers` above 0).
    pub outliers_asked: bool,
}

/// Microseconds (the tables' unit, cyclictest's) to four significant
/// digits.
fn us(ns: u64) -> String {
    crate::human::significant(ns as f64 / 1000.0)
}

/// Signed microseconds to four significant digits.
fn signed_us(ns: i64) -> String {
    crate::human::significant(ns as f64 / 1000.0)
}

/// The human output: cyclictest lines, then percentile tables and outliers.
pub fn describe(doc: &LatencyDocument, context: TextContext<'_>) -> String {
    let cfg = &doc.config;
    let ns = Nanos::from_ns;
    let mut out = String::new();
    out += &format!(
        "# rtlab latency: {} thread(s), {}, interval {} (+{} per thread), {}{}, load {}\n",
        cfg.threads,
        context.policy,
        ns(cfg.interval_ns),
        ns(cfg.distance_ns),
        match (cfg.duration_ns.map(ns), cfg.loops) {
            (Some(d), Some(l)) => format!("{d} or {l} loops"),
            (Some(d), None) => d.to_string(),
            (None, Some(l)) => format!("{l} loops"),
            (None, None) => String::new(),
        },
        if cfg.mlock { ", mlock" } else { "" },
        doc.load.spec,
    );
    if let Some(limit) = context.throttling_limit {
        out += &format!("# RT throttling: {limit}\n");
    }
    for note in &doc.notes {
        out += &format!("# {note}\n");
    }
    if doc.interrupted {
        out += "# interrupted: results so far\n";
    }
    if cfg.timer == Some("relative") {
        out += "# relative timers (cyclictest -r): latency = wake-up - (clock read before the sleep + interval), each sleep's own overshoot\n";
    }
    for line in context.cyclictest_lines {
        out += line;
        out.push('\n');
    }
    for t in &doc.threads {
        if let Some(drift) = t.drift_ns {
            out += &format!(
                "# T:{} fell behind the absolute grid by {} in {} loops ({}/loop): the lateness relative timers accumulate\n",
                t.thread,
                ns(drift),
                t.loops,
                ns(drift / t.loops.max(1)),
            );
        }
    }
    out.push('\n');
    let mut lat = table::new(
        &[
            "T", "tid", "cpu", "loops", "min", "avg", "p50", "p90", "p99", "p99.9", "max", "missed",
        ],
        &[
            "T", "tid", "cpu", "loops", "min", "avg", "p50", "p90", "p99", "p99.9", "max", "missed",
        ],
    );
    for t in &doc.threads {
        lat.add_row(vec![
            t.thread.to_string(),
            t.tid.to_string(),
            t.cpu.map_or("-".into(), |c| c.to_string()),
            t.loops.to_string(),
            us(t.min_ns),
            us(t.avg_ns),
            us(t.p50_ns),
            us(t.p90_ns),
            us(t.p99_ns),
            us(t.p999_ns),
            us(t.max_ns),
            t.missed_periods.to_string(),
        ]);
    }
    out += "wake-up latency (us)\n";
    out += &table::render(&lat);
    out += "\n\n";
    let mut jit = table::new(
        &[
            "T", "min", "max", "|avg|", "|p50|", "|p90|", "|p99|", "|p99.9|", "|max|",
        ],
        &[
            "T", "min", "max", "|avg|", "|p50|", "|p90|", "|p99|", "|p99.9|", "|max|",
        ],
    );
    for t in &doc.threads {
        let j = &t.jitter;
        jit.add_row(vec![
            t.thread.to_string(),
            signed_us(j.min_ns),
            signed_us(j.max_ns),
            us(j.avg_abs_ns),
            us(j.p50_abs_ns),
            us(j.p90_abs_ns),
            us(j.p99_abs_ns),
            us(j.p999_abs_ns),
            us(j.max_abs_ns),
        ]);
    }
    out += "period jitter: actual period - interval (us)\n";
    out += &table::render(&jit);
    out += "\n";
    if context.outliers_asked {
        let mut worst = table::new(
            &["T", "loop", "at", "latency (us)"],
            &["T", "loop", "at", "latency (us)"],
        );
        for t in &doc.threads {
            for o in &t.outliers {
                worst.add_row(vec![
                    t.thread.to_string(),
                    o.loop_index.to_string(),
                    ns(o.time_ns).to_string(),
                    us(o.latency_ns),
                ]);
            }
        }
        out += "\nworst wake-ups (at: from the start of the run)\n";
        out += &table::render(&worst);
        out += "\n";
    }
    let load = &doc.load;
    if load.threads > 0 {
        out += &format!(
            "\nload {}: {} threads, {} messages, {} spin rounds in {:.1} s\n",
            load.spec,
            load.threads,
            load.messages,
            load.spin_rounds,
            std::time::Duration::from_nanos(load.elapsed_ns).as_secs_f64()
        );
    }
    for i in &doc.lost_threads {
        out += &format!(
            "error: thread {i} did not finish within the grace period after the run; its samples are lost\n"
        );
    }
    table::fit_text(&out)
}

/// One finished measurement and what surrounded it: what [`describe`] and
/// [`report_json`] both render.
#[derive(Clone, Copy)]
pub struct Measured<'a> {
    /// The probe's configuration.
    pub cfg: &'a ProbeConfig,
    /// What it measured.
    pub report: &'a ProbeReport,
    /// The background load's statistics.
    pub load: &'a LoadDocument,
    /// Whether memory was locked.
    pub mlock: bool,
    /// RT throttling as read after the run (None when unreadable).
    pub throttling: Option<RtThrottling>,
    /// Notes of the settings held for the run (e.g. DMA latency refused).
    pub notes: &'a [String],
    /// Whether the worst wake-ups were asked for (`--outliers` above 0).
    pub outliers_asked: bool,
}

/// The human output: cyclictest lines, then percentile tables and outliers
/// ([`describe`] of the measurement's [`document`]).
pub fn describe_measured(measured: Measured<'_>) -> String {
    let policy = measured.cfg.policy_of(0).to_string();
    let throttling_limit = measured.throttling.map(|t| t.describe_limit());
    let cyclictest_lines: Vec<String> = measured
        .report
        .threads
        .iter()
        .map(latency::cyclictest_line)
        .collect();
    describe(
        &document(measured),
        TextContext {
            policy: &policy,
            throttling_limit: throttling_limit.as_deref(),
            cyclictest_lines: &cyclictest_lines,
            outliers_asked: measured.outliers_asked,
        },
    )
}

/// A measuring thread's report as its document.
fn thread_document(t: &ThreadReport) -> LatencyThreadDocument {
    let ns = |n: Nanos| n.as_ns();
    let l = &t.latency;
    let j = &t.jitter;
    LatencyThreadDocument {
        thread: t.index,
        tid: t.tid,
        cpu: t.cpu,
        drift_ns: t.drift.map(Nanos::as_ns),
        policy: t.policy.short_name(),
        priority: t.policy.priority(),
        interval_ns: ns(t.interval),
        loops: t.loops,
        requested_loops: t.requested_loops,
        min_ns: ns(l.min),
        avg_ns: ns(l.mean()),
        max_ns: ns(l.max),
        act_ns: ns(t.last),
        p50_ns: ns(l.p50),
        p90_ns: ns(l.p90),
        p99_ns: ns(l.p99),
        p999_ns: ns(l.p999),
        missed_periods: t.missed_periods,
        histogram_overflows: t.overflows,
        series_dropped: t.series_dropped,
        jitter: JitterDocument {
            min_ns: t.jitter_min_ns,
            max_ns: t.jitter_max_ns,
            avg_abs_ns: ns(j.mean()),
            p50_abs_ns: ns(j.p50),
            p90_abs_ns: ns(j.p90),
            p99_abs_ns: ns(j.p99),
            p999_abs_ns: ns(j.p999),
            max_abs_ns: ns(j.max),
        },
        outliers: t
            .outliers
            .iter()
            .map(|o| OutlierDocument {
                loop_index: o.loop_index,
                time_ns: ns(o.at),
                latency_ns: ns(o.latency),
            })
            .collect(),
        histogram_us: t
            .buckets_us
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(us, &n)| [us as u64, n])
            .collect(),
    }
}

/// The measurement as its document (`--json`).
pub fn document(m: Measured<'_>) -> LatencyDocument {
    let cfg = m.cfg;
    LatencyDocument {
        config: LatencyConfigDocument {
            threads: cfg.threads,
            timer: (cfg.timer == TimerMode::Relative).then_some(cfg.timer.name()),
            interval_ns: cfg.interval.as_ns(),
            distance_ns: cfg.distance.as_ns(),
            policy: cfg.policy.short_name(),
            priority: cfg.policy.priority(),
            duration_ns: cfg.duration.map(Nanos::as_ns),
            loops: cfg.loops,
            mlock: m.mlock,
            affinity: match &cfg.affinity {
                Affinity::Unpinned => None,
                Affinity::RoundRobin(c) => Some(c.clone()),
            },
        },
        rt_throttling: m.throttling.map(RtThrottlingDocument::from),
        load: m.load.clone(),
        interrupted: m.report.interrupted,
        lost_threads: m.report.lost_threads.clone(),
        wall_ns: m.report.wall.as_ns(),
        peak_rss_bytes: rtlab_host::usage::peak_rss_bytes(),
        notes: m.notes.to_vec(),
        threads: m.report.threads.iter().map(thread_document).collect(),
        disturbance: None,
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
            disturbance: None,
        };
        assert!(keys_in_sorted_order(&doc));
        let text = serde_json::to_string(&doc).unwrap();
        assert!(text.contains(r#""loop":3"#), "{text}");
    }

    #[test]
    fn other_policy_run_prints_cyclictest_lines_and_json() {
        // `rtlab latency --policy other --loops 50 --interval 500us -t 2`.
        let cfg = ProbeConfig {
            threads: 2,
            interval: Nanos::from_us(500),
            policy: rtlab_host::Policy::Other { nice: 0 },
            loops: Some(50),
            duration: None,
            ..ProbeConfig::default()
        };
        static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let report = latency::run_probe(&cfg, &STOP).unwrap();
        let load = rtlab_rt::load::LoadStats::default().document(rtlab_rt::load::LoadSpec::None);
        let measured = Measured {
            cfg: &cfg,
            report: &report,
            load: &load,
            mlock: false,
            throttling: None,
            notes: &[],
            outliers_asked: false,
        };
        let text = describe_measured(measured);
        assert!(text.contains("T: 0 ("), "{text}");
        assert!(text.contains("I:500 C:     50 Min:"), "{text}");
        let doc = document(measured);
        let doc = serde_json::to_value(doc).unwrap();
        let t0 = &doc["threads"][0];
        for key in [
            "tid",
            "policy",
            "priority",
            "interval_ns",
            "loops",
            "min_ns",
            "avg_ns",
            "max_ns",
            "p50_ns",
            "p99_ns",
            "p999_ns",
        ] {
            assert!(!t0[key].is_null(), "missing {key}");
        }
        assert_eq!(t0["loops"], 50);
        assert_eq!(t0["policy"], "other");
        // histogram_us: non-empty [us, count] buckets in order, counting
        // every loop that did not overflow.
        let buckets = t0["histogram_us"].as_array().unwrap();
        let counted: u64 = buckets.iter().map(|b| b[1].as_u64().unwrap()).sum();
        assert_eq!(counted + t0["histogram_overflows"].as_u64().unwrap(), 50);
        assert!(buckets.iter().all(|b| b[1].as_u64().unwrap() > 0));
        assert!(buckets
            .windows(2)
            .all(|w| w[0][0].as_u64() < w[1][0].as_u64()));
    }
}
