//! The platform's real-time state, as `rtlab doctor` prints it: what a
//! user needs to know before measuring, each item with what it means for
//! measurements.
//!
//! Every item is read from the kernel (procfs, sysfs, the kernel log, the
//! build configuration); where something cannot be read the item says so
//! ([`Level::Unknown`], `value: null` or `None` fields) instead of
//! guessing. Kernel defaults, where rtlab relies on one (the fair server's
//! 50 ms per second), are named as defaults.

mod cpus;
mod host;
mod kernel;
mod leftover;
mod metadata;
mod scheduler;
mod sources;

use serde::Serialize;

pub use cpus::{Clocksource, CpuFrequency, IdleState, IdleStates, Isolation, Smt};
pub use host::{Privileges, Virtualization};
pub use kernel::{KernelInfo, Preempt, Preemption};
pub use leftover::{Leftover, LeftoverRecord, StrayCpuset};
pub use metadata::{host_metadata, HostMetadata};
pub use scheduler::{Admission, FairServer, FairServerCpu, Throttling};

use crate::kernel_state::StateDir;

/// How an item bears on measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// As a real-time measurement wants it.
    Ok,
    /// Worth knowing; not wrong.
    Note,
    /// Will make measurements worse or misleading; the advice says what to do.
    Warn,
    /// Could not be read.
    Unknown,
}

/// One item: a one-line summary, what it means for measurements, and the
/// values read (`None` when nothing could be read).
#[derive(Debug, Clone, Serialize)]
pub struct Item<T> {
    /// How it bears on measurements.
    pub level: Level,
    /// One line for people.
    pub summary: String,
    /// What it means for measurements, and what to do (one line).
    pub advice: Option<String>,
    /// The values read.
    pub value: Option<T>,
}

impl<T> Item<T> {
    fn unreadable(why: String) -> Item<T> {
        Item {
            level: Level::Unknown,
            summary: format!("cannot be read: {why}"),
            advice: None,
            value: None,
        }
    }
}

/// The platform's real-time state, item by item (the JSON of
/// `rtlab doctor --json`).
#[derive(Debug, Clone, Serialize)]
pub struct PlatformReport {
    /// Release, version, tick.
    pub kernel: Item<KernelInfo>,
    /// Preemption model and mode in force.
    pub preemption: Item<Preemption>,
    /// RT throttling.
    pub rt_throttling: Item<Throttling>,
    /// The fair server's reservation.
    pub fair_server: Item<FairServer>,
    /// SCHED_DEADLINE admission limit.
    pub deadline_admission: Item<Admission>,
    /// isolcpus / nohz_full / irqaffinity.
    pub isolation: Item<Isolation>,
    /// Frequency governors.
    pub cpu_frequency: Item<Vec<CpuFrequency>>,
    /// Idle states and `/dev/cpu_dma_latency`.
    pub idle_states: Item<IdleStates>,
    /// Simultaneous multithreading.
    pub smt: Item<Smt>,
    /// Virtual machine or not.
    pub virtualization: Item<Virtualization>,
    /// The clock source.
    pub clocksource: Item<Clocksource>,
    /// Root, capabilities, limits.
    pub privileges: Item<Privileges>,
    /// What rtlab processes left changed.
    pub leftover_state: Item<Leftover>,
}

/// An item without its typed value, for rendering.
#[derive(Debug, Clone, Copy)]
pub struct ItemLine<'a> {
    /// The JSON key, e.g. `rt_throttling`.
    pub key: &'static str,
    /// Its level.
    pub level: Level,
    /// Its summary.
    pub summary: &'a str,
    /// Its advice.
    pub advice: Option<&'a str>,
}

impl PlatformReport {
    /// Every item in report order, as (key, level, summary, advice).
    pub fn lines(&self) -> Vec<ItemLine<'_>> {
        fn line<'a, T>(key: &'static str, i: &'a Item<T>) -> ItemLine<'a> {
            ItemLine {
                key,
                level: i.level,
                summary: &i.summary,
                advice: i.advice.as_deref(),
            }
        }
        vec![
            line("kernel", &self.kernel),
            line("preemption", &self.preemption),
            line("rt_throttling", &self.rt_throttling),
            line("fair_server", &self.fair_server),
            line("deadline_admission", &self.deadline_admission),
            line("isolation", &self.isolation),
            line("cpu_frequency", &self.cpu_frequency),
            line("idle_states", &self.idle_states),
            line("smt", &self.smt),
            line("virtualization", &self.virtualization),
            line("clocksource", &self.clocksource),
            line("privileges", &self.privileges),
            line("leftover_state", &self.leftover_state),
        ]
    }
}

/// Reads everything from this machine; the leftover state from `dir`.
pub fn probe(dir: &StateDir) -> PlatformReport {
    let ks = kernel::KernelSources::read();
    let release = ks.release.clone();
    let throttling = crate::policy::RtThrottling::read().map_err(|e| e.to_string());
    let fair = scheduler::read_fair_server();
    let dma = crate::policy::read_dma_latency()
        .map_err(|e| format!("{}: {e}", crate::policy::DMA_LATENCY));
    PlatformReport {
        kernel: kernel::kernel_item(&ks),
        preemption: kernel::preemption_item(&ks),
        rt_throttling: scheduler::throttling_item(throttling.clone()),
        fair_server: scheduler::fair_server_item(&release, &fair),
        deadline_admission: scheduler::admission_item(&release, &throttling, &fair),
        isolation: cpus::isolation_item(&ks.cmdline),
        cpu_frequency: cpus::frequency_item(),
        idle_states: cpus::idle_item(dma),
        smt: cpus::smt_item(),
        virtualization: host::virtualization_item(&ks.log),
        clocksource: cpus::clocksource_item(),
        privileges: host::privileges_item(),
        leftover_state: leftover::leftover_item(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_reported_with_a_summary_and_the_json_has_every_key() {
        let tmp = tempfile::tempdir().unwrap();
        let report = probe(&StateDir::new(tmp.path()));
        let lines = report.lines();
        assert_eq!(lines.len(), 13);
        assert!(lines
            .iter()
            .all(|l| !l.summary.is_empty() && !l.summary.contains('\n')));
        let json = serde_json::to_value(&report).unwrap();
        for l in &lines {
            let item = &json[l.key];
            assert!(item.is_object(), "{}", l.key);
            for field in ["level", "summary", "advice", "value"] {
                assert!(item.get(field).is_some(), "{}.{field}", l.key);
            }
        }
        assert!(report.kernel.summary.starts_with("Linux "));
        assert_eq!(report.leftover_state.level, Level::Ok);
    }
}
