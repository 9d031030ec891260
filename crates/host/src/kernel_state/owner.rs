//! The process that owns a recorded change, identified so that a reused pid
//! is not mistaken for it.

use std::io;

use serde::{Deserialize, Serialize};

/// A process, named by its pid and its start time.
///
/// The start time is field 22 of `/proc/PID/stat` (`starttime`, clock ticks
/// after boot): a pid can be reused after its process ended, a (pid, start
/// time) pair cannot within one boot. State files live on tmpfs (`/run`), so
/// they never outlive the boot their start times refer to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// Process id.
    pub pid: u32,
    /// `starttime` from `/proc/PID/stat`.
    pub start_time: u64,
    /// The command line, for people reading the state (`rtlab run ...`).
    #[serde(default)]
    pub command: String,
}

/// Whether an owner can still restore what it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Liveness {
    /// The process runs: its changes are its own to restore.
    Alive,
    /// No process with that pid and start time runs (or it is a zombie that
    /// can no longer act): whoever comes next restores its changes.
    Dead,
}

impl Owner {
    /// The calling process.
    pub fn current() -> io::Result<Owner> {
        let pid = std::process::id();
        let (_, start_time) = read_stat(pid)?;
        let command = std::fs::read("/proc/self/cmdline")
            .map(|raw| command_line(&raw))
            .unwrap_or_default();
        Ok(Owner {
            pid,
            start_time,
            command,
        })
    }

    /// Alive when `/proc/PID/stat` exists, shows the recorded start time,
    /// and the process is not a zombie (`Z`) or dead (`X`).
    pub fn liveness(&self) -> Liveness {
        match read_stat(self.pid) {
            Ok((state, start)) if start == self.start_time && !matches!(state, 'Z' | 'X') => {
                Liveness::Alive
            }
            _ => Liveness::Dead,
        }
    }

    /// True when both name the same process (pid and start time; the
    /// command line is for people).
    pub fn same_process(&self, other: &Owner) -> bool {
        (self.pid, self.start_time) == (other.pid, other.start_time)
    }

    /// True when [`Owner::liveness`] is [`Liveness::Alive`].
    pub fn is_alive(&self) -> bool {
        self.liveness() == Liveness::Alive
    }
}

/// True when a process with `pid` exists and is not a zombie, whatever its
/// start time: the conservative test for cpusets named after a pid that no
/// state file describes.
pub fn pid_exists(pid: u32) -> bool {
    read_stat(pid).is_ok_and(|(state, _)| !matches!(state, 'Z' | 'X'))
}

/// The state letter and start time of `pid`.
fn read_stat(pid: u32) -> io::Result<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    parse_stat(&text).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("/proc/{pid}/stat: unexpected format"),
        )
    })
}

/// Parses `pid (comm) S ppid ... starttime ...`: the command name may hold
/// spaces and parentheses, so fields are counted after the last `)`. The
/// state is field 3, the start time field 22 (proc(5)).
pub(crate) fn parse_stat(text: &str) -> Option<(char, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Fields 4..=21 come before the start time.
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

/// `/proc/PID/cmdline` (NUL-separated) as one line, at most 300 characters.
fn command_line(raw: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(raw)
        .split('\0')
        .filter(|a| !a.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(300)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let line =
            "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 3 0 987654 1000 200";
        assert_eq!(parse_stat(line), Some(('S', 987654)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) R 1 2"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not_its_owner() {
        let me = Owner::current().unwrap();
        assert_eq!(me.pid, std::process::id());
        assert!(me.is_alive());
        let impostor = Owner {
            start_time: me.start_time + 1,
            ..me.clone()
        };
        assert_eq!(impostor.liveness(), Liveness::Dead);
    }

    #[test]
    fn an_ended_process_is_dead_and_a_zombie_too() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let (_, start_time) = read_stat(pid).unwrap();
        let owner = Owner {
            pid,
            start_time,
            command: String::new(),
        };
        assert!(owner.is_alive());
        assert!(pid_exists(pid));
        child.kill().unwrap();
        // Not reaped yet: a zombie, which can restore nothing.
        for _ in 0..200 {
            if !owner.is_alive() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!owner.is_alive(), "a killed, unreaped child is a zombie");
        assert!(!pid_exists(pid));
        child.wait().unwrap();
        assert_eq!(owner.liveness(), Liveness::Dead);
    }
}
