//! cyclictest's `--json=FILE` document (rt-tests 2.x: `rt_write_json` in
//! `src/lib/rt-utils.c` writes the header, cyclictest's `write_stats` the
//! threads), so scripts that read cyclictest's JSON read rtlab's.
//!
//! ```json
//! {"file_version": 1, "cmdline:": "...", "rt_test_version:": "2.40",
//!  "start_time": "Mon, 23 Nov 2026 08:00:49 +0000", "end_time": "...",
//!  "return_code": 0,
//!  "sysinfo": {"sysname": "Linux", "nodename": "vm", "release": "6.18.44",
//!              "version": "#1 SMP PREEMPT_DYNAMIC ...", "machine": "x86_64", "realtime": 0},
//!  "num_threads": 2, "resolution_in_ns": 0,
//!  "thread": {"0": {"histogram": {"7": 1, "8": 2}, "cycles": 1000, "min": 7, "max": 699,
//!                   "avg": 21.67, "cpu": 0, "node": 0}}}
//! ```
//!
//! The two keys with a trailing colon are cyclictest's own spelling. Times
//! are whole microseconds (rounded down) but `avg`, which has two decimals;
//! `histogram` holds the non-empty 1 µs buckets (cyclictest fills it only
//! with `-h`; rtlab always has one). `cpu` is the pinned CPU, -1 when the
//! thread is not pinned (cyclictest prints the CPU it last ran on), and
//! `node` its NUMA node (-1 unpinned). `resolution_in_ns` is 0, as in
//! cyclictest without `-R`.

use std::time::SystemTime;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::latency::ThreadReport;
use rtlab_model::Nanos;

/// The rt-tests version whose layout this is (captured with cyclictest 2.40).
pub const RT_TESTS_VERSION: &str = "2.40";

/// What the run was, beyond its measurements.
#[derive(Debug, Clone)]
pub struct CyclictestRun {
    /// The command line as typed (cyclictest joins its argv with spaces).
    pub cmdline: String,
    /// When the measurement started.
    pub started: SystemTime,
    /// When it ended.
    pub ended: SystemTime,
    /// The exit status the run ends with.
    pub return_code: i32,
}

/// The whole document, in cyclictest's key order.
#[derive(Debug, serde::Serialize)]
pub struct CyclictestDocument {
    /// Always 1.
    pub file_version: u32,
    /// The command line.
    #[serde(rename = "cmdline:")]
    pub cmdline: String,
    /// [`RT_TESTS_VERSION`].
    #[serde(rename = "rt_test_version:")]
    pub rt_test_version: &'static str,
    /// `Mon, 23 Nov 2026 08:00:49 +0000` (UTC).
    pub start_time: String,
    /// The same for the end.
    pub end_time: String,
    /// The exit status.
    pub return_code: i32,
    /// The host, as `uname` tells it.
    pub sysinfo: SysInfo,
    /// Measuring threads.
    pub num_threads: usize,
    /// 0 (cyclictest's `-R` clock-resolution check is not run).
    pub resolution_in_ns: u64,
    /// Per thread, keyed `"0"`, `"1"`, ... in thread order.
    pub thread: Threads,
}

/// `uname`'s fields and whether the kernel is PREEMPT_RT.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SysInfo {
    /// `Linux`.
    pub sysname: String,
    /// The host name.
    pub nodename: String,
    /// `uname -r`.
    pub release: String,
    /// `uname -v`.
    pub version: String,
    /// `uname -m`.
    pub machine: String,
    /// 1 when `/sys/kernel/realtime` reads 1 (a PREEMPT_RT kernel).
    pub realtime: u8,
}

impl SysInfo {
    /// This machine's, from `/proc/sys/kernel` and `/sys/kernel/realtime`
    /// (empty strings where a file cannot be read).
    pub fn read() -> SysInfo {
        let kernel = |name: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
                .map(|s| s.trim_end().to_string())
                .unwrap_or_default()
        };
        SysInfo {
            sysname: kernel("ostype"),
            nodename: kernel("hostname"),
            release: kernel("osrelease"),
            version: kernel("version"),
            machine: std::env::consts::ARCH.to_string(),
            realtime: u8::from(
                std::fs::read_to_string("/sys/kernel/realtime").is_ok_and(|s| s.starts_with('1')),
            ),
        }
    }
}

/// One thread's entry.
#[derive(Debug, serde::Serialize)]
pub struct ThreadEntry {
    /// Non-empty 1 µs buckets, `"us": count`, in latency order.
    pub histogram: Buckets,
    /// Loops measured.
    pub cycles: u64,
    /// Smallest latency, µs (rounded down).
    pub min: u64,
    /// Largest latency, µs (rounded down).
    pub max: u64,
    /// Mean latency, µs, two decimals.
    pub avg: f64,
    /// Pinned CPU, -1 when unpinned.
    pub cpu: i64,
    /// NUMA node of that CPU, -1 when unpinned or unknown.
    pub node: i64,
}

/// `{"us": count, ...}` with numeric keys in increasing order.
#[derive(Debug)]
pub struct Buckets(pub Vec<(u64, u64)>);

impl Serialize for Buckets {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (us, count) in &self.0 {
            map.serialize_entry(&us.to_string(), count)?;
        }
        map.end()
    }
}

/// `{"0": {...}, "1": {...}}` in thread order (not sorted as text).
#[derive(Debug)]
pub struct Threads(pub Vec<(usize, ThreadEntry)>);

impl Serialize for Threads {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (index, entry) in &self.0 {
            map.serialize_entry(&index.to_string(), entry)?;
        }
        map.end()
    }
}

/// `time` as cyclictest's `%a, %d %b %Y %T %z`, in UTC.
pub fn timestamp(time: SystemTime) -> String {
    httpdate::fmt_http_date(time).replace(" GMT", " +0000")
}

/// The NUMA node of `cpu`: the `nodeN` entry of its sysfs folder.
fn numa_node(cpu: usize) -> Option<i64> {
    std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .ok()?
        .filter_map(Result::ok)
        .find_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
}

/// One thread's entry from what it measured.
pub fn thread_entry(t: &ThreadReport) -> ThreadEntry {
    // A thread that measured nothing reports zeros, as cyclictest does.
    let measured = t.loops > 0;
    let us = |n: Nanos| if measured { n.as_ns() / 1000 } else { 0 };
    let mean_ns = if measured { t.latency.mean_ns } else { 0.0 };
    ThreadEntry {
        histogram: Buckets(
            t.buckets_us
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(us, &n)| (us as u64, n))
                .collect(),
        ),
        cycles: t.loops,
        min: us(t.latency.min),
        max: us(t.latency.max),
        avg: (mean_ns / 10.0).round() / 100.0,
        cpu: t.cpu.map_or(-1, |c| c as i64),
        node: t.cpu.and_then(numa_node).unwrap_or(-1),
    }
}

/// The document for `threads` measured in `run` on a host described by `sysinfo`.
pub fn document(
    threads: &[ThreadReport],
    run: &CyclictestRun,
    sysinfo: SysInfo,
) -> CyclictestDocument {
    CyclictestDocument {
        file_version: 1,
        cmdline: run.cmdline.clone(),
        rt_test_version: RT_TESTS_VERSION,
        start_time: timestamp(run.started),
        end_time: timestamp(run.ended),
        return_code: run.return_code,
        sysinfo,
        num_threads: threads.len(),
        resolution_in_ns: 0,
        thread: Threads(threads.iter().map(|t| (t.index, thread_entry(t))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn timestamps_read_like_cyclictests() {
        // 2026-11-23 08:00:49 UTC, a Monday.
        let t = UNIX_EPOCH + Duration::from_secs(1_795_420_849);
        assert_eq!(timestamp(t), "Mon, 23 Nov 2026 08:00:49 +0000");
    }

    #[test]
    fn maps_keep_numeric_order() {
        let buckets = Buckets(vec![(7, 1), (10, 2), (100, 3)]);
        assert_eq!(
            serde_json::to_string(&buckets).unwrap(),
            r#"{"7":1,"10":2,"100":3}"#
        );
    }

    #[test]
    fn sysinfo_names_this_kernel() {
        let info = SysInfo::read();
        assert_eq!(info.sysname, "Linux");
        assert!(!info.release.is_empty());
        assert_eq!(info.machine, std::env::consts::ARCH);
    }
}
