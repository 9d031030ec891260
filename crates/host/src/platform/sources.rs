//! Reading the kernel's files, with the reason when one cannot be read.

use std::io::Read;
use std::path::Path;

/// A file's contents, trimmed, or `path: reason`.
pub(crate) fn read(path: impl AsRef<Path>) -> Result<String, String> {
    let path = path.as_ref();
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The kernel's build configuration: `/proc/config.gz`, else
/// `/boot/config-<release>`; `Err` lists why neither could be read.
pub(crate) fn kernel_config(release: &str) -> Result<(String, String), String> {
    let gz = Path::new("/proc/config.gz");
    let from_gz = std::fs::File::open(gz)
        .and_then(|f| {
            let mut text = String::new();
            flate2::read::GzDecoder::new(f).read_to_string(&mut text)?;
            Ok(text)
        })
        .map_err(|e| format!("{}: {e}", gz.display()));
    match from_gz {
        Ok(text) => Ok((text, gz.display().to_string())),
        Err(gz_err) => {
            let boot = format!("/boot/config-{release}");
            std::fs::read_to_string(&boot)
                .map(|t| (t, boot.clone()))
                .map_err(|e| format!("{gz_err}; {boot}: {e}"))
        }
    }
}

/// The kernel log ring buffer (`dmesg`), which needs CAP_SYSLOG unless
/// `kernel.dmesg_restrict` is 0.
pub(crate) fn kernel_log() -> Result<String, String> {
    use rtlab_sys::log::{kernel_log_size, read_kernel_log};
    let explain = |e: std::io::Error| {
        format!("the kernel log: {e} (needs CAP_SYSLOG or kernel.dmesg_restrict = 0)")
    };
    let size = kernel_log_size().map_err(explain)?;
    if size == 0 {
        return Err(explain(std::io::Error::last_os_error()));
    }
    let mut buf = vec![0u8; size];
    let n = read_kernel_log(&mut buf).map_err(explain)?;
    buf.truncate(n);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `key=value` of the last `key=` parameter on a kernel command line
/// (`key` alone gives an empty value); parameters after ` -- ` go to init
/// and are skipped.
pub(crate) fn cmdline_param(cmdline: &str, key: &str) -> Option<String> {
    let kernel_part = cmdline.split(" -- ").next().unwrap_or("");
    kernel_part
        .split_whitespace()
        .rev()
        .find_map(|p| match p.split_once('=') {
            Some((k, v)) if k == key => Some(v.to_string()),
            None if p == key => Some(String::new()),
            _ => None,
        })
}

/// `CONFIG_NAME`'s value in a kernel configuration (`y`, `m`, a number),
/// `None` when unset.
pub(crate) fn config_value<'a>(config: &'a str, name: &str) -> Option<&'a str> {
    config.lines().find_map(|l| {
        l.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('='))
            .map(|v| v.trim_matches('"'))
    })
}

/// The CPUs listed in `/sys/devices/system/cpu/online` (`0-3,8`).
pub(crate) fn online_cpus() -> Vec<usize> {
    read("/sys/devices/system/cpu/online")
        .ok()
        .map(|l| parse_cpu_list(&l))
        .unwrap_or_default()
}

/// Expands a kernel CPU list such as `0-2,5` (an empty list is empty).
pub(crate) fn parse_cpu_list(list: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    cpus.extend(a..=b);
                }
            }
            None => cpus.extend(part.trim().parse::<usize>()),
        }
    }
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_parameters_stop_at_the_init_arguments() {
        let line = "console=ttyS0 isolcpus=1 quiet preempt=full nohz_full=1-3 -- --preempt=none isolcpus=9";
        assert_eq!(cmdline_param(line, "isolcpus").as_deref(), Some("1"));
        assert_eq!(cmdline_param(line, "preempt").as_deref(), Some("full"));
        assert_eq!(cmdline_param(line, "quiet").as_deref(), Some(""));
        assert_eq!(cmdline_param(line, "irqaffinity"), None);
        assert_eq!(cmdline_param("a=1 a=2", "a").as_deref(), Some("2"));
    }

    #[test]
    fn config_values_and_cpu_lists() {
        let config =
            "CONFIG_HZ_250=y\nCONFIG_HZ=250\n# CONFIG_PREEMPT is not set\nCONFIG_X=\"s\"\n";
        assert_eq!(config_value(config, "CONFIG_HZ"), Some("250"));
        assert_eq!(config_value(config, "CONFIG_PREEMPT"), None);
        assert_eq!(config_value(config, "CONFIG_X"), Some("s"));
        assert_eq!(parse_cpu_list("0-2,5"), [0, 1, 2, 5]);
        assert!(parse_cpu_list("").is_empty());
    }
}
