//! Background load: what a measurement runs *under*.
//!
//! * `hackbench[:GROUPS[:pipe|socket]]`: like rt-tests' hackbench in thread
//!   mode, each group has 20 sender and 20 receiver threads; every sender
//!   writes 100-byte messages to every receiver of its group over a pipe or a
//!   Unix socketpair, and the receivers read them. This is scheduler and
//!   system-call load (wake-ups, context switches), not just CPU.
//! * `cpu:N`: `N` threads spinning on arithmetic at SCHED_OTHER.
//! * `none`.
//!
//! A load starts with [`Load::start`] and stops with [`Load::stop`] (or
//! when dropped). Stopping is bounded: every thread checks the stop flag
//! between messages; senders exit and close their ends, so receivers see
//! end-of-file; a receiver that exits first makes its senders' writes fail
//! (Rust ignores SIGPIPE), so nobody blocks forever.

use std::fmt;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::RtError;

/// Threads of each kind per hackbench group (hackbench's `-f` default).
pub const HACKBENCH_FDS: usize = 20;
/// Bytes per hackbench message (hackbench's `-s` default).
pub const HACKBENCH_MESSAGE: usize = 100;

/// Which load to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadSpec {
    /// No load.
    None,
    /// `n` spinning threads.
    Cpu(usize),
    /// hackbench with `groups` groups of 20 senders and 20 receivers.
    Hackbench {
        /// Groups.
        groups: usize,
        /// Pipes (true) or Unix socketpairs (false, hackbench's default).
        pipes: bool,
    },
}

impl fmt::Display for LoadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadSpec::None => write!(f, "none"),
            LoadSpec::Cpu(n) => write!(f, "cpu:{n}"),
            LoadSpec::Hackbench { groups, pipes } => {
                write!(
                    f,
                    "hackbench:{groups}:{}",
                    if *pipes { "pipe" } else { "socket" }
                )
            }
        }
    }
}

/// Why a load description was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid load `{0}`: use none, cpu:N (N spinning threads, 1..=256) or hackbench[:GROUPS[:pipe|socket]] (GROUPS 1..=20)")]
pub struct LoadParseError(pub String);

impl FromStr for LoadSpec {
    type Err = LoadParseError;

    fn from_str(s: &str) -> Result<LoadSpec, LoadParseError> {
        let bad = || LoadParseError(s.to_string());
        let parts: Vec<&str> = s.trim().split(':').collect();
        match parts.as_slice() {
            ["none"] => Ok(LoadSpec::None),
            ["cpu", n] => match n.parse::<usize>() {
                Ok(n) if (1..=256).contains(&n) => Ok(LoadSpec::Cpu(n)),
                _ => Err(bad()),
            },
            ["hackbench", rest @ ..] if rest.len() <= 2 => {
                let groups = match rest.first() {
                    None => 1,
                    Some(g) => match g.parse::<usize>() {
                        Ok(g) if (1..=20).contains(&g) => g,
                        _ => return Err(bad()),
                    },
                };
                let pipes = match rest.get(1) {
                    None | Some(&"socket") => false,
                    Some(&"pipe") => true,
                    Some(_) => return Err(bad()),
                };
                Ok(LoadSpec::Hackbench { groups, pipes })
            }
            _ => Err(bad()),
        }
    }
}

/// What a load did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadStats {
    /// Threads it ran.
    pub threads: usize,
    /// Messages received (hackbench).
    pub messages: u64,
    /// Spin rounds of 1024 iterations (cpu).
    pub spin_rounds: u64,
    /// How long it ran.
    pub elapsed: Duration,
}

impl LoadStats {
    /// The document of these statistics of `spec` (`rtlab load --json`, the
    /// `load` of `rtlab latency --json`).
    pub fn document(&self, spec: LoadSpec) -> rtlab_model::schema::LoadDocument {
        rtlab_model::schema::LoadDocument {
            spec: spec.to_string(),
            threads: self.threads,
            messages: self.messages,
            spin_rounds: self.spin_rounds,
            elapsed_ns: u64::try_from(self.elapsed.as_nanos()).unwrap_or(u64::MAX),
        }
    }
}

/// A running load; stops when [`Load::stop`] is called or when dropped.
#[derive(Debug)]
pub struct Load {
    spec: LoadSpec,
    stop: Arc<AtomicBool>,
    messages: Arc<AtomicU64>,
    spins: Arc<AtomicU64>,
    handles: Vec<JoinHandle<()>>,
    started: Instant,
}

impl Load {
    /// Starts `spec`'s threads and returns at once.
    pub fn start(spec: LoadSpec) -> Result<Load, RtError> {
        let mut load = Load {
            spec,
            stop: Arc::new(AtomicBool::new(false)),
            messages: Arc::new(AtomicU64::new(0)),
            spins: Arc::new(AtomicU64::new(0)),
            handles: Vec::new(),
            started: Instant::now(),
        };
        let started = match spec {
            LoadSpec::None => Ok(()),
            LoadSpec::Cpu(n) => (0..n).try_for_each(|i| load.spawn_spinner(i)),
            LoadSpec::Hackbench { groups, pipes } => {
                (0..groups).try_for_each(|g| load.spawn_group(g, pipes))
            }
        };
        // On a failure, dropping `load` stops what did start.
        started.map(|()| load)
    }

    /// The running spec.
    pub fn spec(&self) -> LoadSpec {
        self.spec
    }

    /// Threads running.
    pub fn threads(&self) -> usize {
        self.handles.len()
    }

    /// Stops every thread, waits for them, and reports.
    pub fn stop(mut self) -> LoadStats {
        self.halt()
    }

    fn halt(&mut self) -> LoadStats {
        self.stop.store(true, Ordering::Relaxed);
        let threads = self.handles.len();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
        LoadStats {
            threads,
            messages: self.messages.load(Ordering::Relaxed),
            spin_rounds: self.spins.load(Ordering::Relaxed),
            elapsed: self.started.elapsed(),
        }
    }

    fn spawn(&mut self, name: String, body: impl FnOnce() + Send + 'static) -> Result<(), RtError> {
        let handle = std::thread::Builder::new()
            .name(name.clone())
            .stack_size(64 * 1024)
            .spawn(body)
            .map_err(|source| RtError::spawn(name, source))?;
        self.handles.push(handle);
        Ok(())
    }

    fn spawn_spinner(&mut self, i: usize) -> Result<(), RtError> {
        let (stop, spins) = (self.stop.clone(), self.spins.clone());
        self.spawn(format!("rtlab-load-cpu-{i}"), move || {
            let mut x = 1u64;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..1024 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                spins.fetch_add(1, Ordering::Relaxed);
            }
        })
    }

    fn spawn_group(&mut self, group: usize, pipes: bool) -> Result<(), RtError> {
        let mut writers: Vec<Arc<dyn SharedWriter>> = Vec::with_capacity(HACKBENCH_FDS);
        for r in 0..HACKBENCH_FDS {
            let (reader, writer): (Box<dyn Read + Send>, Arc<dyn SharedWriter>) = if pipes {
                let (rd, wr) = std::io::pipe().map_err(RtError::os("pipe"))?;
                (Box::new(rd), Arc::new(std::sync::Mutex::new(wr)))
            } else {
                let (a, b) = UnixStream::pair().map_err(RtError::os("socketpair"))?;
                (Box::new(a), Arc::new(std::sync::Mutex::new(b)))
            };
            writers.push(writer);
            let (stop, messages) = (self.stop.clone(), self.messages.clone());
            self.spawn(format!("rtlab-hb-{group}-r{r}"), move || {
                receive(reader, &stop, &messages)
            })?;
        }
        for s in 0..HACKBENCH_FDS {
            let (stop, targets) = (self.stop.clone(), writers.clone());
            self.spawn(format!("rtlab-hb-{group}-s{s}"), move || {
                send(&targets, &stop)
            })?;
        }
        Ok(())
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        if !self.handles.is_empty() {
            self.halt();
        }
    }
}

/// A write end shared by the senders of a group; the message is written
/// whole under the lock so receivers read whole messages.
trait SharedWriter: Send + Sync {
    fn write_message(&self, msg: &[u8]) -> std::io::Result<()>;
}

impl<W: Write + Send> SharedWriter for std::sync::Mutex<W> {
    fn write_message(&self, msg: &[u8]) -> std::io::Result<()> {
        let mut w = self.lock().map_err(|_| std::io::ErrorKind::Other)?;
        w.write_all(msg)
    }
}

fn send(targets: &[Arc<dyn SharedWriter>], stop: &AtomicBool) {
    // Receivers may go first at the end of a run: their pipes must then fail
    // the write with EPIPE, not end the whole process.
    rtlab_host::interrupt::block_sigpipe_in_this_thread();
    let msg = [0u8; HACKBENCH_MESSAGE];
    while !stop.load(Ordering::Relaxed) {
        for t in targets {
            if t.write_message(&msg).is_err() {
                return;
            }
        }
    }
}

fn receive(mut reader: Box<dyn Read + Send>, stop: &AtomicBool, messages: &AtomicU64) {
    let mut buf = [0u8; HACKBENCH_MESSAGE];
    while !stop.load(Ordering::Relaxed) {
        match reader.read_exact(&mut buf) {
            Ok(()) => {
                messages.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => return,
        }
    }
    // Dropping the read end makes blocked senders' writes fail.
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_load_specs() {
        assert_eq!("none".parse(), Ok(LoadSpec::None));
        assert_eq!("cpu:2".parse(), Ok(LoadSpec::Cpu(2)));
        assert_eq!(
            "hackbench".parse(),
            Ok(LoadSpec::Hackbench {
                groups: 1,
                pipes: false
            })
        );
        assert_eq!(
            "hackbench:3:pipe".parse(),
            Ok(LoadSpec::Hackbench {
                groups: 3,
                pipes: true
            })
        );
        for bad in [
            "cpu",
            "cpu:0",
            "cpu:x",
            "hackbench:0",
            "hackbench:1:tcp",
            "spin",
        ] {
            let e = bad.parse::<LoadSpec>().unwrap_err();
            assert!(e.to_string().contains("cpu:N"), "{e}");
        }
        for s in ["none", "cpu:3", "hackbench:2:pipe", "hackbench:1:socket"] {
            assert_eq!(s.parse::<LoadSpec>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn cpu_load_runs_and_stops() {
        let load = Load::start(LoadSpec::Cpu(2)).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let stats = load.stop();
        assert_eq!(stats.threads, 2);
        assert!(stats.spin_rounds > 0);
    }

    #[test]
    fn hackbench_passes_messages_and_always_stops() {
        for pipes in [true, false] {
            let load = Load::start(LoadSpec::Hackbench { groups: 1, pipes }).unwrap();
            assert_eq!(load.threads(), 2 * HACKBENCH_FDS);
            std::thread::sleep(Duration::from_millis(50));
            let t0 = Instant::now();
            let stats = load.stop();
            assert!(stats.messages > 0, "no message passed (pipes: {pipes})");
            assert!(t0.elapsed() < Duration::from_secs(5));
        }
    }

    #[test]
    fn dropping_a_load_stops_it() {
        let load = Load::start(LoadSpec::Hackbench {
            groups: 1,
            pipes: true,
        })
        .unwrap();
        drop(load);
        assert_eq!(Load::start(LoadSpec::None).unwrap().stop().threads, 0);
    }
}
