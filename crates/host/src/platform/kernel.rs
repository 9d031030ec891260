//! The kernel: release, tick, and the preemption model in force.

use serde::Serialize;

use super::sources::{cmdline_param, config_value};
use super::{Item, Level};

/// The running kernel.
#[derive(Debug, Clone, Serialize)]
pub struct KernelInfo {
    /// `uname -r`.
    pub release: String,
    /// `uname -v`.
    pub version: String,
    /// The architecture rtlab was built for.
    pub machine: String,
    /// `CONFIG_HZ`, when the configuration is readable.
    pub hz: Option<u32>,
    /// `periodic`, `idle` (NO_HZ_IDLE) or `full` (NO_HZ_FULL built in).
    pub tickless: Option<String>,
    /// Where the configuration was read, when it was.
    pub config_source: Option<String>,
}

/// A preemption model (how the kernel was built) or mode (what is in force).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Preempt {
    /// No kernel preemption (servers).
    None,
    /// Preemption only at explicit points (desktops).
    Voluntary,
    /// Kernel code preemptible outside critical sections (low latency).
    Full,
    /// Like full for real-time threads; fair-class preemption waits for the tick.
    Lazy,
    /// PREEMPT_DYNAMIC: one of none, voluntary, full, lazy, chosen at boot
    /// (`preempt=`) or at run time (debugfs).
    Dynamic,
    /// PREEMPT_RT: almost everything preemptible, interrupts in threads.
    Rt,
}

impl Preempt {
    fn from_name(name: &str) -> Option<Preempt> {
        match name.trim() {
            "none" => Some(Preempt::None),
            "voluntary" => Some(Preempt::Voluntary),
            "full" => Some(Preempt::Full),
            "lazy" => Some(Preempt::Lazy),
            "rt" => Some(Preempt::Rt),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Preempt::None => "none",
            Preempt::Voluntary => "voluntary",
            Preempt::Full => "full",
            Preempt::Lazy => "lazy",
            Preempt::Dynamic => "dynamic",
            Preempt::Rt => "PREEMPT_RT",
        }
    }
}

/// The preemption model and the mode in force.
#[derive(Debug, Clone, Serialize)]
pub struct Preemption {
    /// How the kernel was built (`None`: could not be told).
    pub model: Option<Preempt>,
    /// Where the model was read.
    pub model_source: String,
    /// The mode in force: for `dynamic` the one chosen, else the model.
    pub mode: Option<Preempt>,
    /// Where the mode was read, or why it could not be.
    pub mode_source: String,
}

/// What the kernel readers need: `uname -v`, the configuration, the
/// command line, the kernel log, debugfs's `sched/preempt`.
pub(crate) struct KernelSources {
    pub release: String,
    pub version: String,
    pub config: Result<(String, String), String>,
    pub cmdline: Result<String, String>,
    pub log: Result<String, String>,
    pub debugfs_preempt: Result<String, String>,
    pub realtime: Option<String>,
}

impl KernelSources {
    /// Reads every source from this machine.
    pub(crate) fn read() -> KernelSources {
        use super::sources;
        let release = sources::read("/proc/sys/kernel/osrelease").unwrap_or_default();
        KernelSources {
            version: sources::read("/proc/sys/kernel/version").unwrap_or_default(),
            config: sources::kernel_config(&release),
            cmdline: sources::read("/proc/cmdline"),
            log: sources::kernel_log(),
            debugfs_preempt: sources::read("/sys/kernel/debug/sched/preempt"),
            realtime: sources::read("/sys/kernel/realtime").ok(),
            release,
        }
    }
}

pub(crate) fn kernel_item(s: &KernelSources) -> Item<KernelInfo> {
    let config = s.config.as_ref().ok();
    let hz = config.and_then(|(c, _)| config_value(c, "CONFIG_HZ")?.parse().ok());
    let tickless = config.map(|(c, _)| {
        if config_value(c, "CONFIG_NO_HZ_FULL") == Some("y") {
            "full"
        } else if config_value(c, "CONFIG_NO_HZ_IDLE") == Some("y") {
            "idle"
        } else {
            "periodic"
        }
        .to_string()
    });
    let info = KernelInfo {
        release: s.release.clone(),
        version: s.version.clone(),
        machine: std::env::consts::ARCH.to_string(),
        hz,
        tickless: tickless.clone(),
        config_source: config.map(|(_, src)| src.clone()),
    };
    let mut summary = format!("Linux {} {} ({})", s.release, info.machine, s.version);
    let advice = match (hz, &tickless) {
        (Some(hz), Some(t)) => {
            summary += &format!(
                ", HZ={hz} (tick {} us), tick {}",
                1_000_000 / hz.max(1),
                match t.as_str() {
                    "full" => "stopped on nohz_full CPUs (NO_HZ_FULL)",
                    "idle" => "stopped on idle CPUs (NO_HZ_IDLE)",
                    _ => "periodic",
                }
            );
            None
        }
        _ => Some(format!(
            "the kernel configuration is unreadable ({}): tick rate unknown",
            s.config.as_ref().err().map_or("", |e| e.as_str())
        )),
    };
    Item {
        level: if advice.is_some() {
            Level::Unknown
        } else {
            Level::Ok
        },
        summary,
        advice,
        value: Some(info),
    }
}

/// The model from `uname -v` (PREEMPT_RT, PREEMPT_DYNAMIC, PREEMPT), from
/// `/sys/kernel/realtime`, else from the configuration.
fn model(s: &KernelSources) -> (Option<Preempt>, String) {
    let words: Vec<&str> = s.version.split_whitespace().collect();
    let version_says = if words.contains(&"PREEMPT_RT") {
        Some(Preempt::Rt)
    } else if words.contains(&"PREEMPT_DYNAMIC") {
        Some(Preempt::Dynamic)
    } else if words.contains(&"PREEMPT_LAZY") {
        Some(Preempt::Lazy)
    } else if words.contains(&"PREEMPT") {
        Some(Preempt::Full)
    } else {
        None
    };
    if let Some(m) = version_says {
        return (m.into(), "uname -v".into());
    }
    if s.realtime.as_deref() == Some("1") {
        return (Some(Preempt::Rt), "/sys/kernel/realtime".into());
    }
    match &s.config {
        Ok((config, source)) => {
            let on = |name| config_value(config, name) == Some("y");
            let m = if on("CONFIG_PREEMPT_RT") {
                Preempt::Rt
            } else if on("CONFIG_PREEMPT_DYNAMIC") {
                Preempt::Dynamic
            } else if on("CONFIG_PREEMPT_LAZY") {
                Preempt::Lazy
            } else if on("CONFIG_PREEMPT") {
                Preempt::Full
            } else if on("CONFIG_PREEMPT_VOLUNTARY") {
                Preempt::Voluntary
            } else {
                Preempt::None
            };
            (Some(m), source.clone())
        }
        Err(e) => (
            None,
            format!(
                "uname -v names no PREEMPT flag (so none or voluntary) and the configuration is unreadable: {e}"
            ),
        ),
    }
}

/// The mode in force under PREEMPT_DYNAMIC, from the most to the least
/// direct source: debugfs `sched/preempt` (`none voluntary (full) lazy`),
/// the kernel log's last `Dynamic Preempt: X` (printed at boot and at each
/// change), the command line's `preempt=`, the configuration's default.
fn dynamic_mode(s: &KernelSources) -> (Option<Preempt>, String) {
    let mut unread = Vec::new();
    match &s.debugfs_preempt {
        Ok(text) => {
            if let Some(m) = parse_debugfs_preempt(text) {
                return (Some(m), "/sys/kernel/debug/sched/preempt".into());
            }
        }
        Err(e) => unread.push(e.clone()),
    }
    match &s.log {
        Ok(log) => {
            if let Some(m) = last_dynamic_preempt(log) {
                return (
                    Some(m),
                    format!("kernel log: \"Dynamic Preempt: {}\"", m.name()),
                );
            }
            unread.push("the kernel log has no \"Dynamic Preempt\" line".into());
        }
        Err(e) => unread.push(e.clone()),
    }
    let unread = unread.join("; ");
    if let Ok(cmdline) = &s.cmdline {
        if let Some(m) = cmdline_param(cmdline, "preempt").and_then(|v| Preempt::from_name(&v)) {
            return (
                Some(m),
                format!(
                    "at boot, from the command line `preempt={}` (may have been changed since; unread: {unread})",
                    m.name()
                ),
            );
        }
    }
    if let Ok((config, source)) = &s.config {
        let on = |name| config_value(config, name) == Some("y");
        let m = if on("CONFIG_PREEMPT_NONE") {
            Some(Preempt::None)
        } else if on("CONFIG_PREEMPT_VOLUNTARY") {
            Some(Preempt::Voluntary)
        } else if on("CONFIG_PREEMPT_LAZY") {
            Some(Preempt::Lazy)
        } else if on("CONFIG_PREEMPT") {
            Some(Preempt::Full)
        } else {
            None
        };
        if let Some(m) = m {
            return (
                Some(m),
                format!(
                    "at boot, the default of {source} with no `preempt=` on the command line (may have been changed since; unread: {unread})"
                ),
            );
        }
    }
    (None, format!("cannot be read: {unread}"))
}

/// The mode in parentheses of debugfs's `none voluntary (full) lazy`.
pub(crate) fn parse_debugfs_preempt(text: &str) -> Option<Preempt> {
    let start = text.find('(')? + 1;
    let end = start + text[start..].find(')')?;
    Preempt::from_name(&text[start..end])
}

/// The mode named by the last `Dynamic Preempt: X` line of a kernel log.
pub(crate) fn last_dynamic_preempt(log: &str) -> Option<Preempt> {
    log.lines()
        .rev()
        .filter_map(|l| l.split("Dynamic Preempt: ").nth(1))
        .find_map(Preempt::from_name)
}

pub(crate) fn preemption_item(s: &KernelSources) -> Item<Preemption> {
    let (model, model_source) = model(s);
    let (mode, mode_source) = match model {
        Some(Preempt::Dynamic) => dynamic_mode(s),
        Some(m) => (Some(m), "the model".to_string()),
        None => (None, "unknown model".to_string()),
    };
    let built = match model {
        Some(Preempt::Dynamic) => "PREEMPT_DYNAMIC".to_string(),
        Some(m) => format!("built {}", m.name()),
        None => "model unknown".to_string(),
    };
    let summary = match (model, mode) {
        (Some(Preempt::Dynamic), Some(m)) => {
            format!("{built}, mode {} ({mode_source})", m.name())
        }
        (Some(Preempt::Dynamic), None) => format!("{built}, mode unknown: {mode_source}"),
        (Some(_), _) => format!("{built} ({model_source})"),
        (None, _) => format!("{built}: {model_source}"),
    };
    let dynamic = model == Some(Preempt::Dynamic);
    let (level, advice) = match mode {
        Some(Preempt::None | Preempt::Voluntary) => (
            Level::Warn,
            Some(format!(
                "kernel code runs on to its next preemption point before a woken RT thread: expect ms-scale \
                 latency under load; {}",
                if dynamic {
                    "boot with `preempt=full` (or use PREEMPT_RT)"
                } else {
                    "use a PREEMPT or PREEMPT_RT kernel"
                }
            )),
        ),
        Some(Preempt::Full | Preempt::Lazy) => (
            Level::Ok,
            Some(
                "RT threads preempt kernel code outside non-preemptible sections; PREEMPT_RT gives the lowest worst case"
                    .into(),
            ),
        ),
        Some(Preempt::Rt) => (Level::Ok, None),
        _ => (Level::Unknown, None),
    };
    Item {
        level,
        summary,
        advice,
        value: Some(Preemption {
            model,
            model_source,
            mode,
            mode_source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(version: &str) -> KernelSources {
        KernelSources {
            release: "6.18.0".into(),
            version: version.into(),
            config: Err("no config".into()),
            cmdline: Ok("quiet".into()),
            log: Err("no log".into()),
            debugfs_preempt: Err("/sys/kernel/debug/sched/preempt: Permission denied".into()),
            realtime: None,
        }
    }

    #[test]
    fn the_debugfs_mode_is_the_one_in_parentheses() {
        assert_eq!(
            parse_debugfs_preempt("none voluntary (full) lazy"),
            Some(Preempt::Full)
        );
        assert_eq!(
            parse_debugfs_preempt("(none) voluntary full"),
            Some(Preempt::None)
        );
        assert_eq!(parse_debugfs_preempt("none voluntary full"), None);
    }

    #[test]
    fn the_last_dynamic_preempt_line_of_the_log_wins() {
        let log = "<6>[    0.13] Dynamic Preempt: none\n<6>[   99.0] Dynamic Preempt: full\n";
        assert_eq!(last_dynamic_preempt(log), Some(Preempt::Full));
        assert_eq!(last_dynamic_preempt("nothing here"), None);
    }

    #[test]
    fn models_from_uname() {
        for (version, model) in [
            ("#1 SMP PREEMPT_RT Fri", Preempt::Rt),
            ("#1 SMP PREEMPT_DYNAMIC @0", Preempt::Dynamic),
            ("#1 SMP PREEMPT Tue", Preempt::Full),
        ] {
            assert_eq!(model_of(version), Some(model), "{version}");
        }
        // Neither flag and no configuration: say so rather than guess.
        let item = preemption_item(&sources("#1 SMP Tue"));
        assert_eq!(item.level, Level::Unknown);
        assert!(
            item.summary.contains("none or voluntary"),
            "{}",
            item.summary
        );
    }

    fn model_of(version: &str) -> Option<Preempt> {
        model(&sources(version)).0
    }

    #[test]
    fn the_dynamic_mode_falls_back_from_debugfs_to_log_to_command_line_to_config() {
        let mut s = sources("#1 SMP PREEMPT_DYNAMIC");
        s.config = Ok((
            "CONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_DYNAMIC=y\n".into(),
            "/proc/config.gz".into(),
        ));
        let item = preemption_item(&s);
        assert_eq!(item.value.as_ref().unwrap().mode, Some(Preempt::None));
        assert!(
            item.summary.contains("default of /proc/config.gz"),
            "{}",
            item.summary
        );
        assert_eq!(item.level, Level::Warn);
        assert!(item.advice.unwrap().contains("preempt=full"));

        s.cmdline = Ok("quiet preempt=full".into());
        let v = preemption_item(&s).value.unwrap();
        assert_eq!(v.mode, Some(Preempt::Full));
        assert!(v.mode_source.contains("command line"), "{}", v.mode_source);

        s.log = Ok("[0.1] Dynamic Preempt: voluntary\n".into());
        assert_eq!(
            preemption_item(&s).value.unwrap().mode,
            Some(Preempt::Voluntary)
        );

        s.debugfs_preempt = Ok("none voluntary full (lazy)".into());
        let item = preemption_item(&s);
        assert_eq!(item.value.unwrap().mode, Some(Preempt::Lazy));
        assert_eq!(item.level, Level::Ok);
    }

    #[test]
    fn tick_from_the_configuration() {
        let mut s = sources("#1 SMP PREEMPT_DYNAMIC");
        s.config = Ok((
            "CONFIG_HZ=250\nCONFIG_NO_HZ_IDLE=y\n".into(),
            "/proc/config.gz".into(),
        ));
        let item = kernel_item(&s);
        let v = item.value.unwrap();
        assert_eq!((v.hz, v.tickless.as_deref()), (Some(250), Some("idle")));
        assert!(
            item.summary.contains("HZ=250 (tick 4000 us)"),
            "{}",
            item.summary
        );
    }
}
