//! The CPUs: isolation, frequency, idle states, SMT, the clock source.

use serde::Serialize;

use super::sources::{cmdline_param, online_cpus, read};
use super::{Item, Level};

/// CPU isolation from the kernel command line and sysfs.
#[derive(Debug, Clone, Serialize)]
pub struct Isolation {
    /// `isolcpus=` on the command line.
    pub isolcpus: Option<String>,
    /// `nohz_full=` on the command line.
    pub nohz_full: Option<String>,
    /// `irqaffinity=` on the command line.
    pub irqaffinity: Option<String>,
    /// `rcu_nocbs=` on the command line.
    pub rcu_nocbs: Option<String>,
    /// `/sys/devices/system/cpu/isolated` (empty: none).
    pub isolated: Option<String>,
    /// `/proc/irq/default_smp_affinity` (a hexadecimal CPU mask).
    pub default_irq_affinity: Option<String>,
}

pub(crate) fn isolation_item(cmdline: &Result<String, String>) -> Item<Isolation> {
    let cmdline = match cmdline {
        Ok(c) => c,
        Err(e) => return Item::unreadable(e.clone()),
    };
    let param = |k| cmdline_param(cmdline, k);
    let value = Isolation {
        isolcpus: param("isolcpus"),
        nohz_full: param("nohz_full"),
        irqaffinity: param("irqaffinity"),
        rcu_nocbs: param("rcu_nocbs"),
        isolated: read("/sys/devices/system/cpu/isolated").ok(),
        default_irq_affinity: read("/proc/irq/default_smp_affinity").ok(),
    };
    let mut parts = Vec::new();
    for (name, v) in [
        ("isolcpus", &value.isolcpus),
        ("nohz_full", &value.nohz_full),
        ("irqaffinity", &value.irqaffinity),
        ("rcu_nocbs", &value.rcu_nocbs),
    ] {
        if let Some(v) = v {
            parts.push(format!("{name}={v}"));
        }
    }
    let isolated = value.isolated.as_deref().unwrap_or("");
    let irq = value
        .default_irq_affinity
        .as_deref()
        .map_or(String::new(), |m| {
            format!("; interrupts default to CPU mask {m}")
        });
    if parts.is_empty() && isolated.is_empty() {
        Item {
            level: Level::Note,
            summary: format!("none (no isolcpus, nohz_full or irqaffinity on the command line){irq}"),
            advice: Some(
                "measured threads share CPUs with housekeeping and interrupts; for the lowest latency boot with \
                 `isolcpus=1 nohz_full=1 irqaffinity=0`"
                    .into(),
            ),
            value: Some(value),
        }
    } else {
        Item {
            level: Level::Ok,
            summary: format!(
                "{}{}{irq}",
                parts.join(" "),
                if isolated.is_empty() {
                    String::new()
                } else {
                    format!("; isolated CPUs {isolated}")
                }
            ),
            advice: Some(
                "run measurements on the isolated CPUs (`--cpu N`, `--affinity N`)".into(),
            ),
            value: Some(value),
        }
    }
}

/// One CPU's frequency scaling.
#[derive(Debug, Clone, Serialize)]
pub struct CpuFrequency {
    /// The CPU.
    pub cpu: usize,
    /// `scaling_driver`.
    pub driver: Option<String>,
    /// `scaling_governor`.
    pub governor: Option<String>,
    /// `scaling_min_freq`, kHz.
    pub min_khz: Option<u64>,
    /// `scaling_max_freq`, kHz.
    pub max_khz: Option<u64>,
}

pub(crate) fn frequency_item() -> Item<Vec<CpuFrequency>> {
    let cpus: Vec<CpuFrequency> = online_cpus()
        .into_iter()
        .filter_map(|cpu| {
            let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
            if !std::path::Path::new(&dir).exists() {
                return None;
            }
            let num = |f: &str| read(format!("{dir}/{f}")).ok()?.parse().ok();
            Some(CpuFrequency {
                cpu,
                driver: read(format!("{dir}/scaling_driver")).ok(),
                governor: read(format!("{dir}/scaling_governor")).ok(),
                min_khz: num("scaling_min_freq"),
                max_khz: num("scaling_max_freq"),
            })
        })
        .collect();
    if cpus.is_empty() {
        return Item {
            level: Level::Note,
            summary: "not exposed: no cpufreq policy (usual in a VM, where the host sets the frequency)".into(),
            advice: Some(
                "the frequency is not controlled here; the host's power management shows up as noise".into(),
            ),
            value: Some(cpus),
        };
    }
    let mut governors: Vec<String> = cpus
        .iter()
        .map(|c| c.governor.clone().unwrap_or_else(|| "unreadable".into()))
        .collect();
    governors.dedup();
    let summary = format!(
        "governor {} (driver {})",
        governors.join(", "),
        cpus[0].driver.as_deref().unwrap_or("unknown")
    );
    let slow: Vec<&String> = governors.iter().filter(|g| *g != "performance").collect();
    let (level, advice) = if slow.is_empty() {
        (Level::Ok, None)
    } else {
        (
            Level::Warn,
            Some(format!(
                "governor {}: latencies will vary; use performance (`cpupower frequency-set -g performance`)",
                slow.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            )),
        )
    };
    Item {
        level,
        summary,
        advice,
        value: Some(cpus),
    }
}

/// One idle state of one CPU.
#[derive(Debug, Clone, Serialize)]
pub struct IdleState {
    /// The CPU.
    pub cpu: usize,
    /// E.g. `C6`.
    pub name: String,
    /// Exit latency, µs.
    pub exit_latency_us: Option<u64>,
    /// Disabled by the user.
    pub disabled: bool,
}

/// The cpuidle driver, its states, and `/dev/cpu_dma_latency`.
#[derive(Debug, Clone, Serialize)]
pub struct IdleStates {
    /// `current_driver` (`none`: no driver, idle CPUs halt).
    pub driver: Option<String>,
    /// `current_governor_ro` / `current_governor`.
    pub governor: Option<String>,
    /// Every state of every online CPU.
    pub states: Vec<IdleState>,
    /// The latency limit `/dev/cpu_dma_latency` reads now (µs; 2000000000:
    /// no request), `None` when unreadable (it needs root).
    pub dma_latency_us: Option<i32>,
}

/// `/dev/cpu_dma_latency` with no request in force.
const NO_DMA_REQUEST: i32 = 2_000_000_000;

pub(crate) fn idle_item(dma: Result<i32, String>) -> Item<IdleStates> {
    let base = "/sys/devices/system/cpu/cpuidle";
    let driver = read(format!("{base}/current_driver")).ok();
    let governor = read(format!("{base}/current_governor_ro"))
        .or_else(|_| read(format!("{base}/current_governor")))
        .ok();
    let mut states = Vec::new();
    for cpu in online_cpus() {
        for k in 0.. {
            let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}");
            let Ok(name) = read(format!("{dir}/name")) else {
                break;
            };
            states.push(IdleState {
                cpu,
                name,
                exit_latency_us: read(format!("{dir}/latency"))
                    .ok()
                    .and_then(|l| l.parse().ok()),
                disabled: read(format!("{dir}/disable")).is_ok_and(|d| d == "1"),
            });
        }
    }
    let dma_text = match &dma {
        Ok(NO_DMA_REQUEST) => "; /dev/cpu_dma_latency: no request".to_string(),
        Ok(v) => format!(
            "; /dev/cpu_dma_latency held at {v} us by some process (the kernel releases it when its holder closes it, even if killed)"
        ),
        Err(e) => format!("; /dev/cpu_dma_latency unreadable ({e})"),
    };
    let deepest = states
        .iter()
        .filter(|s| !s.disabled)
        .filter_map(|s| s.exit_latency_us.map(|l| (l, s.name.clone())))
        .max();
    let value = IdleStates {
        driver: driver.clone(),
        governor: governor.clone(),
        states,
        dma_latency_us: dma.ok(),
    };
    let (level, summary, advice) = match (&driver, deepest) {
        (Some(d), _) if d == "none" => (
            Level::Note,
            format!("no cpuidle driver: an idle CPU halts (HLT){dma_text}"),
            Some(
                "no idle state to limit; in a VM a halted vCPU exits to the host, adding wake-up latency".to_string(),
            ),
        ),
        (_, Some((latency, name))) if latency >= 10 => (
            Level::Warn,
            format!(
                "driver {}, governor {}, deepest enabled state {name} ({latency} us exit latency){dma_text}",
                driver.as_deref().unwrap_or("unknown"),
                governor.as_deref().unwrap_or("unknown")
            ),
            Some(format!(
                "waking from {name} adds up to {latency} us; rtlab latency/lag-study hold /dev/cpu_dma_latency at 0, \
                 for rtlab run use `cpupower idle-set -D 10`"
            )),
        ),
        (Some(d), _) => (
            Level::Ok,
            format!(
                "driver {d}, governor {}, no state deeper than 10 us{dma_text}",
                governor.as_deref().unwrap_or("unknown")
            ),
            None,
        ),
        (None, _) => (
            Level::Unknown,
            format!("cannot read {base}/current_driver{dma_text}"),
            None,
        ),
    };
    Item {
        level,
        summary,
        advice,
        value: Some(value),
    }
}

/// Simultaneous multithreading.
#[derive(Debug, Clone, Serialize)]
pub struct Smt {
    /// `/sys/devices/system/cpu/smt/control`: on, off, forceoff, notsupported, notimplemented.
    pub control: Option<String>,
    /// `/sys/devices/system/cpu/smt/active`.
    pub active: Option<bool>,
}

pub(crate) fn smt_item() -> Item<Smt> {
    let control = read("/sys/devices/system/cpu/smt/control");
    let active = read("/sys/devices/system/cpu/smt/active")
        .ok()
        .map(|a| a == "1");
    let value = Smt {
        control: control.clone().ok(),
        active,
    };
    match (control.as_deref(), active) {
        (Err(e), _) => Item {
            level: Level::Unknown,
            summary: format!("cannot be read: {e}"),
            advice: None,
            value: Some(value),
        },
        (Ok(_), Some(true)) => Item {
            level: Level::Warn,
            summary: "on: CPUs share cores with siblings".into(),
            advice: Some(
                "a busy sibling slows the measured thread: keep it idle or \
                 `echo off > /sys/devices/system/cpu/smt/control`"
                    .into(),
            ),
            value: Some(value),
        },
        (Ok(c), _) => Item {
            level: Level::Ok,
            summary: format!("{c}: no sibling shares a core"),
            advice: None,
            value: Some(value),
        },
    }
}

/// The clock source behind `clock_gettime`.
#[derive(Debug, Clone, Serialize)]
pub struct Clocksource {
    /// E.g. `tsc`.
    pub current: String,
    /// The others the kernel could use.
    pub available: Vec<String>,
}

pub(crate) fn clocksource_item() -> Item<Clocksource> {
    let base = "/sys/devices/system/clocksource/clocksource0";
    let current = match read(format!("{base}/current_clocksource")) {
        Ok(c) => c,
        Err(e) => return Item::unreadable(e),
    };
    let available = read(format!("{base}/available_clocksource"))
        .map(|a| a.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let slow = matches!(
        current.as_str(),
        "hpet" | "acpi_pm" | "jiffies" | "refined-jiffies"
    );
    Item {
        level: if slow { Level::Warn } else { Level::Ok },
        summary: current.clone(),
        advice: slow.then(|| {
            format!(
                "{current} reads take a microsecond or more, inflating every measured latency (TSC judged unstable?)"
            )
        }),
        value: Some(Clocksource { current, available }),
    }
}
