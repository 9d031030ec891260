//! Scheduler limits: RT throttling, the fair server, SCHED_DEADLINE admission.

use serde::Serialize;

use super::sources::{online_cpus, read};
use super::{Item, Level};
use crate::policy::RtThrottling;

/// `sched_rt_runtime_us` / `sched_rt_period_us`.
#[derive(Debug, Clone, Serialize)]
pub struct Throttling {
    /// µs of each period FIFO/RR threads may use per CPU; -1 = unlimited.
    pub runtime_us: i64,
    /// The period, µs.
    pub period_us: u64,
    /// runtime / period, `None` when unlimited.
    pub limit: Option<f64>,
}

/// The fair server (`dl_server`, Linux 6.12+) of one CPU.
#[derive(Debug, Clone, Serialize)]
pub struct FairServerCpu {
    /// The CPU.
    pub cpu: usize,
    /// Runtime per period, ns.
    pub runtime_ns: u64,
    /// Period, ns.
    pub period_ns: u64,
}

/// The fair server's reservation, as read from debugfs.
#[derive(Debug, Clone, Serialize)]
pub struct FairServer {
    /// Per CPU.
    pub cpus: Vec<FairServerCpu>,
}

/// SCHED_DEADLINE admission control.
#[derive(Debug, Clone, Serialize)]
pub struct Admission {
    /// The share of each CPU admitted to deadline tasks and the fair server
    /// together (`None`: unlimited).
    pub limit_per_cpu: Option<f64>,
    /// The fair server's share of each CPU.
    pub fair_server_share: f64,
    /// `read` (debugfs), `kernel default` (unreadable, Linux 6.12+) or `none`.
    pub fair_server_share_source: String,
    /// What is left for deadline tasks per CPU.
    pub left_for_tasks: Option<f64>,
}

/// Linux 6.12's default reservation: 50 ms every 1 s.
const FAIR_SERVER_DEFAULT: f64 = 0.05;

pub(crate) fn throttling_item(t: Result<RtThrottling, String>) -> Item<Throttling> {
    let t = match t {
        Ok(t) => t,
        Err(e) => return Item::unreadable(e),
    };
    let value = Throttling {
        runtime_us: t.runtime_us,
        period_us: t.period_us,
        limit: t.limit(),
    };
    match t.limit() {
        Some(l) => Item {
            level: Level::Ok,
            summary: t.describe_limit(),
            advice: Some(format!(
                "FIFO/RR threads get at most {:.0}% of each CPU per {} ms, then wait out the period; \
                 `rtlab run --no-rt-throttling` lifts it for one run",
                l * 100.0,
                t.period_us / 1000
            )),
            value: Some(value),
        },
        None => Item {
            level: Level::Warn,
            summary: "off (sched_rt_runtime_us = -1)".into(),
            advice: Some(
                "a runaway SCHED_FIFO thread can hang its CPU; unless a run is going on, see leftover_state \
                 (the usual value is 950000)"
                    .into(),
            ),
            value: Some(value),
        },
    }
}

fn kernel_at_least(release: &str, major: u32, minor: u32) -> bool {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
}

/// Reads `/sys/kernel/debug/sched/fair_server/cpuN/{runtime,period}`.
pub(crate) fn read_fair_server() -> Result<FairServer, String> {
    let base = "/sys/kernel/debug/sched/fair_server";
    let mut cpus = Vec::new();
    for cpu in online_cpus() {
        let field = |f: &str| -> Result<u64, String> {
            read(format!("{base}/cpu{cpu}/{f}"))?
                .parse()
                .map_err(|_| format!("{base}/cpu{cpu}/{f}: not a number"))
        };
        cpus.push(FairServerCpu {
            cpu,
            runtime_ns: field("runtime")?,
            period_ns: field("period")?,
        });
    }
    if cpus.is_empty() {
        return Err(format!("{base}: no CPU listed"));
    }
    Ok(FairServer { cpus })
}

/// The largest fair-server share of a CPU, when read.
fn share(fs: &FairServer) -> f64 {
    fs.cpus
        .iter()
        .map(|c| c.runtime_ns as f64 / c.period_ns.max(1) as f64)
        .fold(0.0, f64::max)
}

pub(crate) fn fair_server_item(release: &str, fs: &Result<FairServer, String>) -> Item<FairServer> {
    if !kernel_at_least(release, 6, 12) {
        return Item {
            level: Level::Ok,
            summary: format!("none (Linux {release} predates the fair server of 6.12)"),
            advice: None,
            value: None,
        };
    }
    match fs {
        Ok(fs) => {
            let c = &fs.cpus[0];
            let uniform = fs
                .cpus
                .iter()
                .all(|o| (o.runtime_ns, o.period_ns) == (c.runtime_ns, c.period_ns));
            Item {
                level: Level::Ok,
                summary: format!(
                    "{} us every {} us{} ({:.3} of a CPU)",
                    c.runtime_ns / 1000,
                    c.period_ns / 1000,
                    if uniform { " on every CPU" } else { " on CPU 0 (others differ)" },
                    share(fs)
                ),
                advice: Some(
                    "SCHED_OTHER keeps this share under RT load; SCHED_DEADLINE admission counts it".into(),
                ),
                value: Some(fs.clone()),
            }
        }
        Err(e) => Item {
            level: Level::Unknown,
            summary: format!("cannot be read: {e} (debugfs not mounted or not readable)"),
            advice: Some(
                "Linux 6.12+ reserves by default 50 ms per 1 s of each CPU for SCHED_OTHER, counted by \
                 deadline admission; rtlab assumes that default"
                    .into(),
            ),
            value: None,
        },
    }
}

pub(crate) fn admission_item(
    release: &str,
    t: &Result<RtThrottling, String>,
    fs: &Result<FairServer, String>,
) -> Item<Admission> {
    let t = match t {
        Ok(t) => t,
        Err(e) => return Item::unreadable(e.clone()),
    };
    let (fair, source) = if !kernel_at_least(release, 6, 12) {
        (0.0, "none")
    } else {
        match fs {
            Ok(fs) => (share(fs), "read"),
            Err(_) => (FAIR_SERVER_DEFAULT, "kernel default"),
        }
    };
    let limit = t.limit();
    let left = limit.map(|l| ((l - fair).max(0.0) * 1e6).round() / 1e6);
    let value = Admission {
        limit_per_cpu: limit,
        fair_server_share: fair,
        fair_server_share_source: source.into(),
        left_for_tasks: left,
    };
    match (limit, left) {
        (Some(l), Some(left)) => Item {
            level: Level::Ok,
            summary: format!(
                "{l:.3} of each CPU (sched_rt_runtime_us / sched_rt_period_us){}",
                if fair > 0.0 {
                    format!(
                        ", minus {fair:.3} for the fair server ({source}): {left:.3} left for deadline tasks"
                    )
                } else {
                    String::new()
                }
            ),
            advice: Some(format!(
                "a SCHED_DEADLINE set needs sum runtime/period <= {left:.3} per CPU, else sched_setattr fails (EBUSY)"
            )),
            value: Some(value),
        },
        _ => Item {
            level: Level::Warn,
            summary: "off: sched_rt_runtime_us = -1 admits any bandwidth".into(),
            advice: Some(
                "overloaded SCHED_DEADLINE sets are admitted and miss deadlines instead of being refused".into(),
            ),
            value: Some(value),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(runtime_us: i64) -> Result<RtThrottling, String> {
        Ok(RtThrottling {
            runtime_us,
            period_us: 1_000_000,
        })
    }

    #[test]
    fn admission_subtracts_the_fair_server_and_says_where_its_share_came_from() {
        let unread = Err("debugfs: Permission denied".to_string());
        let item = admission_item("6.18.4", &t(950_000), &unread);
        let v = item.value.unwrap();
        assert_eq!(v.limit_per_cpu, Some(0.95));
        assert!((v.left_for_tasks.unwrap() - 0.90).abs() < 1e-9);
        assert_eq!(v.fair_server_share_source, "kernel default");
        assert!(item.summary.contains("0.900 left"), "{}", item.summary);

        let read = Ok(FairServer {
            cpus: vec![FairServerCpu {
                cpu: 0,
                runtime_ns: 100_000_000,
                period_ns: 1_000_000_000,
            }],
        });
        let v = admission_item("6.18.4", &t(950_000), &read).value.unwrap();
        assert!((v.left_for_tasks.unwrap() - 0.85).abs() < 1e-9);
        assert_eq!(v.fair_server_share_source, "read");

        let old = admission_item("6.6.1", &t(950_000), &unread).value.unwrap();
        assert_eq!(old.fair_server_share, 0.0);

        let off = admission_item("6.18.4", &t(-1), &unread);
        assert_eq!(off.level, Level::Warn);
    }

    #[test]
    fn an_unreadable_fair_server_is_unknown_not_guessed() {
        let item = fair_server_item(
            "6.18.4",
            &Err("/sys/kernel/debug: Permission denied".into()),
        );
        assert_eq!(item.level, Level::Unknown);
        assert!(item.value.is_none());
        assert!(
            item.summary.starts_with("cannot be read"),
            "{}",
            item.summary
        );
        assert_eq!(throttling_item(t(-1)).level, Level::Warn);
        assert_eq!(throttling_item(t(950_000)).level, Level::Ok);
    }
}
