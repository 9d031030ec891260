//! What `rtlab characterize` writes besides the overheads file: the `--json`
//! document, the `--csv` rows, and the `source` line of the file.

use serde::Serialize;

use super::fit::{Fits, Statistic};
use super::{Characterization, CharacterizeConfig, ScenarioPoint};
use rtlab_host::platform::HostMetadata;
use rtlab_model::disturbance::DisturbanceAccount;

/// The `--json` document of `rtlab characterize`.
#[derive(Debug, Clone, Serialize)]
pub struct CharacterizeDocument {
    /// The machine.
    pub host: HostMetadata,
    /// What was asked for.
    pub config: ConfigDocument,
    /// Everything measured (per scenario and n: count, min, median, p99,
    /// p99.9, max in ns; the tick; the ping-pong).
    pub measured: Characterization,
    /// The lines fitted to `config.stat`, with R².
    pub fits: Fits,
    /// The overheads file (as `--out` writes it), when every cost was
    /// measured.
    pub overheads_toml: Option<String>,
    /// Notes on the fit (clamped slopes or intercepts) and the run.
    pub notes: Vec<String>,
    /// What else ran on the measured CPU while the costs were measured,
    /// and its verdict (`rtlab_host::disturbance`): costs measured
    /// `disturbed` hold the disturbance's time, not only the kernel's.
    pub disturbance: DisturbanceAccount,
    /// The costs from kernel timestamps (`--kernel-trace` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_trace: Option<super::kernel::KernelCharacterization>,
}

/// The overheads file's text for a profile measured under `disturbance`:
/// the profile as `Overheads::to_toml_string` writes it, with a closing
/// comment naming the disturbance when the verdict is `disturbed` (so the
/// file says it wherever it goes; TOML readers skip it).
pub fn overheads_file(toml: String, disturbance: &DisturbanceAccount) -> String {
    if !disturbance.verdict.is_disturbed() {
        return toml;
    }
    let summary: String = disturbance
        .verdict
        .summary
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("{toml}# measured {summary}\n")
}

/// The settings of the run.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigDocument {
    /// The CPU.
    pub cpu: usize,
    /// The thread counts n.
    pub threads: Vec<usize>,
    /// Samples per scenario and n.
    pub samples: usize,
    /// The statistic fitted.
    pub stat: Statistic,
    /// The profile's name.
    pub name: String,
}

impl ConfigDocument {
    /// The document of `cfg`, fitted to `stat`, named `name`.
    pub fn new(cfg: &CharacterizeConfig, stat: Statistic, name: &str) -> ConfigDocument {
        ConfigDocument {
            cpu: cfg.cpu,
            threads: cfg.threads.clone(),
            samples: cfg.samples,
            stat,
            name: name.to_string(),
        }
    }
}

/// The `--csv` file: one row per scenario and n,
/// `scenario,n,count,min_ns,median_ns,p99_ns,p999_ns,max_ns,invalid`
/// (`timer` and `pingpong` have n = 1 and 2).
pub fn csv(c: &Characterization) -> String {
    let mut out = String::from("scenario,n,count,min_ns,median_ns,p99_ns,p999_ns,max_ns,invalid\n");
    let mut row = |name: &str, n: usize, s: &super::fit::CostStats, invalid: u64| {
        out.push_str(&format!(
            "{name},{n},{},{},{},{},{},{},{invalid}\n",
            s.count, s.min_ns, s.median_ns, s.p99_ns, s.p999_ns, s.max_ns
        ));
    };
    if let Some(s) = &c.timer.stats {
        row("timer", 1, s, 0);
    }
    if let Some(p) = &c.pingpong {
        row("pingpong", 2, &p.stats, 0);
    }
    let scenarios: [(&str, &[ScenarioPoint]); 3] = [
        ("preempt", &c.preempt),
        ("exit", &c.exit),
        ("nonpreempt", &c.nonpreempt),
    ];
    for (name, points) in scenarios {
        for p in points {
            row(name, p.n, &p.stats, p.invalid);
        }
    }
    out
}

/// The overheads file's `source`: what was measured where and when, e.g.
/// `rtlab characterize on vm1 (Linux 6.18.0, Intel Xeon), 2026-11-23T08:00:00Z,
/// CPU 1, p999 of 1000 samples per n, n = 2,4,8`.
pub fn source_line(
    hostname: &str,
    host: &HostMetadata,
    date: &str,
    c: &Characterization,
    stat: Statistic,
    threads: &[usize],
) -> String {
    let ns: Vec<String> = threads.iter().map(usize::to_string).collect();
    let cpu_model = host.cpu_model.as_deref().unwrap_or("unknown CPU");
    format!(
        "rtlab characterize on {hostname} (Linux {}, {cpu_model}), {date}, CPU {}, {stat} of {} samples per n, n = {}{}",
        host.kernel_release,
        c.cpu,
        c.samples,
        ns.join(","),
        if c.interrupted { ", interrupted" } else { "" }
    )
}

/// This machine's host name (`/proc/sys/kernel/hostname`), or `unknown host`.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown host".into())
}

/// The time now in UTC, RFC 3339 to the second.
pub fn now_utc() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::disturbance::{Verdict, VerdictKind};

    #[test]
    fn a_disturbed_profile_says_so_in_a_closing_comment() {
        let toml = "name = \"here\"\n".to_string();
        let clean = DisturbanceAccount::default();
        assert_eq!(overheads_file(toml.clone(), &clean), toml);
        let disturbed = DisturbanceAccount {
            verdict: Verdict {
                kind: VerdictKind::Disturbed,
                reasons: vec![],
                summary: "disturbed: CPU 1: 38 ms stolen\nby the host".into(),
            },
            ..DisturbanceAccount::default()
        };
        let file = overheads_file(toml, &disturbed);
        assert_eq!(
            file,
            "name = \"here\"\n# measured disturbed: CPU 1: 38 ms stolen by the host\n"
        );
        // The comment leaves the profile as analyze reads it.
        let rtmach = rtlab_model::overheads::Overheads::rtmach();
        let path =
            std::env::temp_dir().join(format!("rtlab-disturbed-{}.toml", std::process::id()));
        std::fs::write(&path, overheads_file(rtmach.to_toml_string(), &disturbed)).unwrap();
        let read = rtlab_model::overheads::Overheads::load(path.to_str().unwrap());
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read.unwrap().to_toml_string(), rtmach.to_toml_string());
    }
}
