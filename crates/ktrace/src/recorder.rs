//! Recording: a private tracefs instance for the run's CPUs, streamed to a
//! file by a reader thread kept off those CPUs.
//!
//! 1. **Where.** tracefs at `/sys/kernel/tracing` (mounted there when it is
//!    not: `mount -t tracefs nodev /sys/kernel/tracing`; left mounted, as
//!    systemd mounts it at boot). Root is required.
//! 2. **Instance.** `instances/rtlab-PID` (`rtlab-PID-N` for a later
//!    recording of the same process), created through the kernel-state
//!    ledger ([`rtlab_host::kernel_state`]) so that a killed rtlab leaves
//!    nothing: the next measuring command or `rtlab doctor --restore`
//!    removes it. Its own buffers, clock (`mono`: CLOCK_MONOTONIC, the
//!    executor's clock), `tracing_cpumask` (the run's CPUs) and events
//!    ([`crate::decode::EVENTS`]); the global trace is untouched.
//! 3. **Streaming.** One reader thread, pinned to the CPUs the run does not
//!    measure when there are any, polls every CPU's `trace_pipe_raw`
//!    (non-blocking, one page per read) every [`POLL`], and appends each
//!    page to the trace file as `u32 cpu, u32 length, page`. Memory: one
//!    page and one write buffer, whatever the run's length.
//! 4. **Losses are counted, never silent.** The kernel's per-CPU `stats`
//!    (`overrun`: events overwritten before they were read, `dropped
//!    events`), pages flagged as following lost events, and pages the disk
//!    refused (a full disk: the recording goes on reading, so the kernel's
//!    buffers do not fill, and counts them).
//!
//! The trace file starts with `rtlab-ktrace 1\n`, a u32 length and a JSON
//! header ([`TraceHeader`]: page size, CPUs, the `format` files), then the
//! pages. [`crate::Trace::load`] reads it back.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rtlab_host::kernel_state::{ledger, SettingGuard};
use rtlab_model::file::{OutputFile, PendingOutput};
use serde::{Deserialize, Serialize};

use crate::decode::EVENTS;
use crate::error::TraceError;

/// Where tracefs is mounted on current systems.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The trace file's first bytes.
pub const MAGIC: &[u8] = b"rtlab-ktrace 1\n";

/// How often the reader looks for new pages.
pub const POLL: Duration = Duration::from_millis(20);

/// Per-CPU buffer of the instance, KiB: at 20 ms polls it holds a burst
/// of ~100k events per CPU before the kernel overwrites any.
pub const BUFFER_KB: u32 = 8192;

/// What the trace file says about itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TraceHeader {
    /// Bytes per page (`buffer_subbuf_size_kb` * 1024, or 4096).
    pub page_size: usize,
    /// The traced CPUs.
    pub cpus: Vec<usize>,
    /// The `format` file of each enabled event.
    pub formats: Vec<String>,
    /// The trace clock (`mono`).
    pub clock: String,
}

/// What the recording lost or could not keep.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Losses {
    /// Events the kernel overwrote before the reader took them (per-CPU
    /// `stats` `overrun`, summed).
    pub overrun: u64,
    /// Events the kernel dropped (`dropped events`, summed).
    pub dropped: u64,
    /// Pages the trace file could not take (a full disk, an I/O error).
    pub pages_unwritten: u64,
}

impl Losses {
    /// True when nothing was lost.
    pub fn is_none(&self) -> bool {
        self.overrun == 0 && self.dropped == 0 && self.pages_unwritten == 0
    }
}

/// Checks, without changing anything, that a trace can be recorded here:
/// root, and tracefs mounted or mountable. The error is one line saying
/// what is missing and how to get it.
pub fn check_available() -> Result<PathBuf, TraceError> {
    if rtlab_sys::resource::geteuid() != 0 {
        return Err(TraceError::Unavailable(
            "--kernel-trace needs root (tracefs instances are root-only): run rtlab with sudo"
                .into(),
        ));
    }
    let root = Path::new(TRACEFS);
    if root.join("instances").is_dir() {
        return Ok(root.to_path_buf());
    }
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .output();
    if root.join("instances").is_dir() {
        return Ok(root.to_path_buf());
    }
    let why = match mounted {
        Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
        Err(e) => e.to_string(),
    };
    Err(TraceError::Unavailable(format!(
        "--kernel-trace needs tracefs at {TRACEFS} (mounting it failed: {why}); the kernel needs \
         CONFIG_FTRACE and CONFIG_TRACING, then `mount -t tracefs nodev {TRACEFS}`"
    )))
}

/// A recording in progress. [`Recording::finish`] ends it; dropping it
/// instead stops the reader and removes the instance.
pub struct Recording {
    instance: PathBuf,
    guard: Option<SettingGuard>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<ReaderEnd>>,
    /// The file being written (a kept file's `.partial`, or the temporary).
    file: PathBuf,
    /// `--kernel-trace=FILE`: what puts the written file at FILE, and FILE.
    kept: Option<(PendingOutput, PathBuf)>,
    /// Holds a temporary trace file (no `--kernel-trace FILE`) until drop.
    _temporary: Option<tempfile::TempPath>,
    cpus: Vec<usize>,
    steal_before: u64,
}

/// What the reader thread did.
#[derive(Debug, Default)]
struct ReaderEnd {
    pages: u64,
    pages_unwritten: u64,
    first_write_error: Option<String>,
}

/// What a finished recording gives: the trace file and what was lost.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The trace file (temporary unless kept: read it before dropping the
    /// [`Recording`]'s result holder, see [`crate::session`]).
    pub file: PathBuf,
    /// Pages written.
    pub pages: u64,
    /// What was lost.
    pub losses: Losses,
    /// The first write error, when pages were lost to the disk.
    pub write_error: Option<String>,
    /// Host steal time on the traced CPUs over the recording (`/proc/stat`),
    /// ns (USER_HZ taken as 100).
    pub steal_ns: u64,
}

impl Recording {
    /// Starts recording `cpus` into `keep` (or a temporary file), the
    /// reader pinned to `reader_cpus` when that is not empty.
    pub fn start(
        cpus: &[usize],
        reader_cpus: &[usize],
        keep: Option<&Path>,
    ) -> Result<Recording, TraceError> {
        Recording::start_with(cpus, reader_cpus, keep, &[])
    }

    /// [`Recording::start`] with `extra` events enabled besides
    /// [`EVENTS`] (`SYSTEM/NAME`, e.g. [`crate::decode::TIMER_EVENTS`]);
    /// an extra event the kernel does not have is left out, as the
    /// optional ones of [`EVENTS`] are.
    pub fn start_with(
        cpus: &[usize],
        reader_cpus: &[usize],
        keep: Option<&Path>,
        extra: &[&str],
    ) -> Result<Recording, TraceError> {
        let root = check_available()?;
        // The kept file is checked before the kernel is touched: it is
        // written beside its path and put there when the recording ends
        // (`OutputFile`); it is read back, so it must be a regular file.
        let kept = match keep {
            Some(path) => {
                let cannot = |source| TraceError::Io {
                    what: format!("--kernel-trace: cannot create {}", path.display()),
                    source,
                };
                let out = OutputFile::create(path).map_err(cannot)?;
                let Some(partial) = out.partial_path().map(Path::to_path_buf) else {
                    return Err(TraceError::Unavailable(format!(
                        "--kernel-trace={}: not a regular file; the raw trace is kept in a regular \
                         file (rtlab reads it back)",
                        path.display()
                    )));
                };
                let (file, pending) = out.into_parts();
                Some((file, partial, pending, path.to_path_buf()))
            }
            None => None,
        };
        static RECORDINGS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = RECORDINGS.fetch_add(1, Ordering::SeqCst);
        let name = match n {
            0 => format!("rtlab-{}", std::process::id()),
            n => format!("rtlab-{}-{n}", std::process::id()),
        };
        let instance = root.join("instances").join(name);
        let guard = ledger()
            .and_then(|l| l.create_trace_instance(&instance))
            .map_err(|e| TraceError::Unavailable(format!("--kernel-trace: {e}")))?;
        let set = |name: &str, value: &str| -> Result<(), TraceError> {
            fs::write(instance.join(name), value).map_err(|source| TraceError::Io {
                what: format!("write `{value}` to {}", instance.join(name).display()),
                source,
            })
        };
        set("tracing_on", "0")?;
        set("trace_clock", "mono")?;
        set("buffer_size_kb", &BUFFER_KB.to_string())?;
        set("tracing_cpumask", &cpu_mask(cpus))?;
        let mut formats = Vec::new();
        let extra = extra.iter().filter(|e| !EVENTS.contains(e));
        for (i, event) in EVENTS.iter().chain(extra).enumerate() {
            let dir = instance.join("events").join(event);
            let enabled = fs::write(dir.join("enable"), "1");
            match (enabled, i < 2) {
                (Ok(()), _) => {}
                (Err(source), true) => {
                    return Err(TraceError::Io {
                        what: format!("enable {event} in {}", instance.display()),
                        source,
                    })
                }
                (Err(_), false) => continue,
            }
            if let Ok(text) = fs::read_to_string(dir.join("format")) {
                formats.push(text);
            }
        }
        let page_size = fs::read_to_string(instance.join("buffer_subbuf_size_kb"))
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .map_or(4096, |kb| kb * 1024);
        let mut pipes = Vec::new();
        for &cpu in cpus {
            let path = instance.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            let pipe = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
                .map_err(|source| TraceError::Io {
                    what: format!("open {}", path.display()),
                    source,
                })?;
            pipes.push((cpu as u32, pipe));
        }
        let (mut out, file, temporary, kept) = match kept {
            Some((out, partial, pending, path)) => (out, partial, None, Some((pending, path))),
            None => {
                let t = tempfile::Builder::new()
                    .prefix("rtlab-ktrace-")
                    .tempfile()
                    .map_err(|source| TraceError::Io {
                        what: "create a temporary trace file".into(),
                        source,
                    })?
                    .into_temp_path();
                let out = File::create(&t).map_err(|source| TraceError::Io {
                    what: format!("--kernel-trace: cannot create {}", t.display()),
                    source,
                })?;
                (out, t.to_path_buf(), Some(t), None)
            }
        };
        let header = TraceHeader {
            page_size,
            cpus: cpus.to_vec(),
            formats,
            clock: "mono".into(),
        };
        write_header(&mut out, &header).map_err(|source| TraceError::Io {
            what: format!("write {}", file.display()),
            source,
        })?;
        let steal_before = steal_ticks(cpus);
        set("tracing_on", "1")?;
        let stop = Arc::new(AtomicBool::new(false));
        let reader_stop = stop.clone();
        let reader_cpus = reader_cpus.to_vec();
        let reader = std::thread::Builder::new()
            .name("rtlab-ktrace".into())
            .spawn(move || {
                if !reader_cpus.is_empty() {
                    let _ = rtlab_host::policy::set_current_thread_affinity(&reader_cpus);
                }
                read_pages(pipes, out, page_size, &reader_stop)
            })
            .map_err(|source| TraceError::Io {
                what: "start the trace reader thread".into(),
                source,
            })?;
        Ok(Recording {
            instance,
            guard: Some(guard),
            stop,
            reader: Some(reader),
            file,
            kept,
            _temporary: temporary,
            cpus: cpus.to_vec(),
            steal_before,
        })
    }

    /// Stops tracing, drains the buffers to the file, reads the kernel's
    /// loss counters and removes the instance.
    pub fn finish(mut self) -> (Recorded, Option<tempfile::TempPath>) {
        let _ = fs::write(self.instance.join("tracing_on"), "0");
        let steal_after = steal_ticks(&self.cpus);
        self.stop.store(true, Ordering::SeqCst);
        let end = self
            .reader
            .take()
            .and_then(|r| r.join().ok())
            .unwrap_or_default();
        let mut losses = Losses {
            pages_unwritten: end.pages_unwritten,
            ..Losses::default()
        };
        for cpu in &self.cpus {
            let stats = fs::read_to_string(self.instance.join(format!("per_cpu/cpu{cpu}/stats")))
                .unwrap_or_default();
            losses.overrun += stat(&stats, "overrun");
            losses.dropped += stat(&stats, "dropped events");
        }
        if let Some(g) = self.guard.take() {
            let _ = g.restore();
        }
        let mut write_error = end.first_write_error;
        let mut file = self.file.clone();
        if let Some((pending, path)) = self.kept.take() {
            match pending.commit() {
                Ok(()) => file = path,
                Err(e) => {
                    write_error.get_or_insert(format!("{}: {e}", path.display()));
                }
            }
        }
        let recorded = Recorded {
            file,
            pages: end.pages,
            losses,
            write_error,
            steal_ns: steal_after.saturating_sub(self.steal_before) * 10_000_000,
        };
        (recorded, self._temporary.take())
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        // The guard (if still here) removes the instance when it drops.
    }
}

/// `tracing_cpumask` for `cpus`: hex, in comma-separated 32-bit groups.
pub fn cpu_mask(cpus: &[usize]) -> String {
    let words = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut w = vec![0u32; words];
    for &c in cpus {
        w[c / 32] |= 1 << (c % 32);
    }
    w.iter()
        .rev()
        .map(|x| format!("{x:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn write_header(out: &mut File, header: &TraceHeader) -> io::Result<()> {
    let json = serde_json::to_vec(header)?;
    out.write_all(MAGIC)?;
    out.write_all(&(json.len() as u32).to_le_bytes())?;
    out.write_all(&json)
}

/// The reader loop: every CPU's pages until empty, then a [`POLL`] sleep;
/// after the stop, a last drain.
fn read_pages(
    mut pipes: Vec<(u32, File)>,
    out: File,
    page_size: usize,
    stop: &AtomicBool,
) -> ReaderEnd {
    let mut out = BufWriter::with_capacity(256 * 1024, out);
    let mut page = vec![0u8; page_size];
    let mut end = ReaderEnd::default();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let mut any = false;
        for (cpu, pipe) in pipes.iter_mut() {
            loop {
                match pipe.read(&mut page) {
                    Ok(0) => break,
                    Ok(n) => {
                        any = true;
                        end.pages += 1;
                        let written = out
                            .write_all(&cpu.to_le_bytes())
                            .and_then(|_| out.write_all(&(n as u32).to_le_bytes()))
                            .and_then(|_| out.write_all(&page[..n]));
                        if let Err(e) = written {
                            end.pages_unwritten += 1;
                            end.first_write_error.get_or_insert_with(|| e.to_string());
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        }
        if stopping && !any {
            break;
        }
        if !any {
            std::thread::sleep(POLL);
        }
    }
    if let Err(e) = out.flush() {
        end.first_write_error.get_or_insert_with(|| e.to_string());
        end.pages_unwritten += 1;
    }
    end
}

/// `name: N` from a per-CPU `stats` file (0 when absent).
fn stat(stats: &str, name: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
        .unwrap_or(0)
}

/// The steal ticks of `cpus` in `/proc/stat` (the 8th number of `cpuN`).
fn steal_ticks(cpus: &[usize]) -> u64 {
    let text = fs::read_to_string("/proc/stat").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let cpu: usize = words.next()?.strip_prefix("cpu")?.parse().ok()?;
            cpus.contains(&cpu)
                .then(|| words.nth(7)?.parse::<u64>().ok())
                .flatten()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_masks_are_hex_words_highest_first() {
        assert_eq!(cpu_mask(&[1]), "00000002");
        assert_eq!(cpu_mask(&[0, 3]), "00000009");
        assert_eq!(cpu_mask(&[33]), "00000002,00000000");
    }

    #[test]
    fn stats_lines_are_read_by_name() {
        let s = "entries: 5\noverrun: 7\ncommit overrun: 0\ndropped events: 2\n";
        assert_eq!(stat(s, "overrun"), 7);
        assert_eq!(stat(s, "dropped events"), 2);
        assert_eq!(stat(s, "read events"), 0);
    }
}
