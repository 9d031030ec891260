//! The host: virtualization and this process's privileges.

use serde::Serialize;

use super::sources::read;
use super::{Item, Level};

/// Whether rtlab runs in a virtual machine.
#[derive(Debug, Clone, Serialize)]
pub struct Virtualization {
    /// True with the `hypervisor` CPU flag (x86) or a hypervisor named elsewhere.
    pub virtual_machine: bool,
    /// The hypervisor, when named: kernel log `Hypervisor detected: X`,
    /// `/sys/hypervisor/type`, or DMI.
    pub hypervisor: Option<String>,
    /// What the conclusion rests on.
    pub evidence: Vec<String>,
}

pub(crate) fn virtualization_item(log: &Result<String, String>) -> Item<Virtualization> {
    let mut evidence = Vec::new();
    let flag = read("/proc/cpuinfo").is_ok_and(|c| {
        c.lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
    });
    if flag {
        evidence.push("`hypervisor` flag in /proc/cpuinfo".to_string());
    }
    let mut hypervisor = None;
    if let Ok(log) = log {
        if let Some(h) = log
            .lines()
            .find_map(|l| l.split("Hypervisor detected: ").nth(1))
        {
            hypervisor = Some(h.trim().to_string());
            evidence.push(format!("kernel log: \"Hypervisor detected: {}\"", h.trim()));
        }
    }
    if let Ok(t) = read("/sys/hypervisor/type") {
        evidence.push(format!("/sys/hypervisor/type: {t}"));
        hypervisor.get_or_insert(t);
    }
    if let (Ok(vendor), Ok(product)) = (
        read("/sys/class/dmi/id/sys_vendor"),
        read("/sys/class/dmi/id/product_name"),
    ) {
        let dmi = format!("{vendor} {product}");
        let known = [
            "QEMU",
            "KVM",
            "VMware",
            "VirtualBox",
            "Xen",
            "Microsoft Corporation Virtual",
            "Amazon EC2",
            "Google Compute",
        ];
        if known.iter().any(|k| dmi.contains(k)) {
            evidence.push(format!("DMI: {dmi}"));
            hypervisor.get_or_insert(dmi);
        }
    }
    let vm = flag || hypervisor.is_some();
    let value = Virtualization {
        virtual_machine: vm,
        hypervisor: hypervisor.clone(),
        evidence: evidence.clone(),
    };
    if vm {
        Item {
            level: Level::Warn,
            summary: format!(
                "a virtual machine{} ({})",
                hypervisor.map_or(String::new(), |h| format!(" on {h}")),
                evidence.join("; ")
            ),
            advice: Some(
                "the host can preempt a vCPU for ms: expect outliers; compare side by side, final numbers on bare metal"
                    .into(),
            ),
            value: Some(value),
        }
    } else {
        Item {
            level: Level::Ok,
            summary: "no sign of a hypervisor (no `hypervisor` CPU flag, none named by the kernel or DMI)".into(),
            advice: None,
            value: Some(value),
        }
    }
}

/// What this process may do.
#[derive(Debug, Clone, Serialize)]
pub struct Privileges {
    /// Effective user id 0.
    pub root: bool,
    /// CAP_SYS_NICE in the effective set (real-time policies).
    pub cap_sys_nice: bool,
    /// RLIMIT_RTPRIO soft limit (`None`: unlimited).
    pub rtprio_limit: Option<u64>,
    /// RLIMIT_MEMLOCK soft limit in bytes (`None`: unlimited).
    pub memlock_limit_bytes: Option<u64>,
}

fn soft_limit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let limit = rtlab_sys::resource::getrlimit(resource).ok()?;
    (limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

pub(crate) fn privileges_item() -> Item<Privileges> {
    let root = rtlab_sys::resource::geteuid() == 0;
    let value = Privileges {
        root,
        cap_sys_nice: crate::policy::has_cap_sys_nice(),
        rtprio_limit: soft_limit(libc::RLIMIT_RTPRIO),
        memlock_limit_bytes: soft_limit(libc::RLIMIT_MEMLOCK),
    };
    let memlock = value
        .memlock_limit_bytes
        .map_or("unlimited".to_string(), |b| format!("{} KiB", b / 1024));
    if root || value.cap_sys_nice {
        Item {
            level: Level::Ok,
            summary: format!(
                "{} (RLIMIT_MEMLOCK {memlock})",
                if root { "root" } else { "CAP_SYS_NICE" }
            ),
            advice: None,
            value: Some(value),
        }
    } else {
        Item {
            level: Level::Warn,
            summary: format!(
                "not root, no CAP_SYS_NICE; RLIMIT_RTPRIO {}, RLIMIT_MEMLOCK {memlock}",
                value.rtprio_limit.map_or("unlimited".into(), |r| r.to_string())
            ),
            advice: Some(
                "RT policies, kernel settings and --mlock need root (or CAP_SYS_NICE / RLIMIT_RTPRIO, \
                 CAP_IPC_LOCK / RLIMIT_MEMLOCK)"
                    .into(),
            ),
            value: Some(value),
        }
    }
}
