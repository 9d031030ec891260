//! Host metadata saved with every stored run (`rtlab ... --save`): the
//! facts about the machine a result depends on, read by the same code as
//! `rtlab doctor` ([`super::probe`]), plus the CPU model and count.

use serde::Serialize;

use super::cpus::{self, CpuFrequency, Isolation, Smt};
use super::host::{self, Virtualization};
use super::kernel::{self, KernelInfo, Preemption};
use super::scheduler::{self, Throttling};
use super::sources::{online_cpus, read};

/// The machine a run was made on. Every field that could not be read is
/// `null`; `lines` holds doctor's one-line summary of each item.
#[derive(Debug, Clone, Serialize)]
pub struct HostMetadata {
    /// `uname -r`.
    pub kernel_release: String,
    /// Release, version, machine, tick.
    pub kernel: Option<KernelInfo>,
    /// Preemption model and mode in force.
    pub preemption: Option<Preemption>,
    /// `/proc/cmdline`.
    pub kernel_cmdline: Option<String>,
    /// `model name` of `/proc/cpuinfo` (the first CPU's).
    pub cpu_model: Option<String>,
    /// Online CPUs.
    pub cpus: usize,
    /// Simultaneous multithreading.
    pub smt: Option<Smt>,
    /// Frequency driver and governor per CPU.
    pub cpu_frequency: Option<Vec<CpuFrequency>>,
    /// RT throttling.
    pub rt_throttling: Option<Throttling>,
    /// isolcpus / nohz_full / irqaffinity.
    pub isolation: Option<Isolation>,
    /// Virtual machine or not.
    pub virtualization: Option<Virtualization>,
    /// `rtlab doctor`'s summary line per item, `(key, summary)`.
    pub lines: Vec<(String, String)>,
}

/// Reads this machine's metadata.
pub fn host_metadata() -> HostMetadata {
    let ks = kernel::KernelSources::read();
    let preemption = kernel::preemption_item(&ks);
    let kernel = kernel::kernel_item(&ks);
    let throttling =
        scheduler::throttling_item(crate::policy::RtThrottling::read().map_err(|e| e.to_string()));
    let isolation = cpus::isolation_item(&ks.cmdline);
    let frequency = cpus::frequency_item();
    let smt = cpus::smt_item();
    let virtualization = host::virtualization_item(&ks.log);
    let lines = [
        ("kernel", &kernel.summary),
        ("preemption", &preemption.summary),
        ("rt_throttling", &throttling.summary),
        ("isolation", &isolation.summary),
        ("cpu_frequency", &frequency.summary),
        ("smt", &smt.summary),
        ("virtualization", &virtualization.summary),
    ]
    .into_iter()
    .map(|(k, s)| (k.to_string(), s.clone()))
    .collect();
    HostMetadata {
        kernel_release: ks.release.clone(),
        kernel: kernel.value,
        preemption: preemption.value,
        kernel_cmdline: ks.cmdline.ok(),
        cpu_model: cpu_model(),
        cpus: online_cpus().len(),
        smt: smt.value,
        cpu_frequency: frequency.value,
        rt_throttling: throttling.value,
        isolation: isolation.value,
        virtualization: virtualization.value,
        lines,
    }
}

/// The first `model name` (x86) or `Model` / `Hardware` (Arm) line of
/// `/proc/cpuinfo`.
fn cpu_model() -> Option<String> {
    let info = read("/proc/cpuinfo").ok()?;
    ["model name", "Model", "Hardware"].iter().find_map(|key| {
        info.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == *key).then(|| v.trim().to_string())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_metadata_names_this_kernel_and_its_cpus() {
        let m = host_metadata();
        assert_eq!(
            m.kernel_release,
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap()
                .trim()
        );
        assert!(m.cpus >= 1);
        assert!(m.preemption.is_some());
        assert!(m.kernel_cmdline.is_some());
        assert_eq!(m.lines.len(), 7);
        let json = serde_json::to_value(&m).unwrap();
        for key in [
            "kernel_release",
            "cpu_model",
            "cpus",
            "smt",
            "rt_throttling",
            "isolation",
            "virtualization",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
    }
}
