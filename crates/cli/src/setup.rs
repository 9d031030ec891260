//! What measuring commands do around a real-time run: restore what
//! killed rtlab runs left, lock memory, hold `/dev/cpu_dma_latency`, start
//! a load, and tell the user on standard error. Shared by `latency`,
//! `lag-study`, `load`, `run`, `compare` and `doctor`, so no command
//! imports another's helpers.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use rtlab_host::cpu_lock::{self, CpuLock, WhenBusy};
use rtlab_host::kernel_state::{self, StateDir};
use rtlab_host::policy::{self, hold_dma_latency_zero, lock_memory};
use rtlab_rt::load::{Load, LoadSpec};

/// Holds what a measuring command sets up around its run, released on drop.
pub struct RunGuards {
    _mlock: Option<policy::MemoryLock>,
    _dma: Option<policy::DmaLatencyGuard>,
    /// Things worth telling the user.
    pub notes: Vec<String>,
}

/// Locks memory (an error when asked and refused) and holds
/// /dev/cpu_dma_latency at 0 (a note when refused).
pub fn set_up(mlock: bool, dma_latency: bool) -> anyhow::Result<RunGuards> {
    restore_left_state_first();
    let mlock = if mlock { Some(lock_memory()?) } else { None };
    let mut notes = Vec::new();
    let dma = if dma_latency {
        match hold_dma_latency_zero() {
            Ok(g) => Some(g),
            Err(e) => {
                notes.push(format!("warning: {e}"));
                None
            }
        }
    } else {
        None
    };
    Ok(RunGuards {
        _mlock: mlock,
        _dma: dma,
        notes,
    })
}

/// Starts `spec` and lets it settle for 200 ms before the measurement.
pub fn start_load(spec: LoadSpec) -> anyhow::Result<Load> {
    let load = Load::start(spec).with_context(|| format!("starting load {spec}"))?;
    if spec != LoadSpec::None {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    Ok(load)
}

/// What measuring commands do first: restore what rtlab runs that ended
/// without cleaning up left changed, one line each on standard error; when
/// that is not allowed (not root), one warning naming them.
pub fn restore_left_state_first() {
    match rtlab_host::recover::recover_left_state() {
        Ok(recoveries) => {
            for r in recoveries {
                say(&r.line());
            }
        }
        Err(e) => {
            let dead = kernel_state::dead_owners(&StateDir::from_env());
            if !dead.is_empty() {
                let pids: Vec<String> = dead.iter().map(|o| o.pid.to_string()).collect();
                say(&format!(
                    "warning: rtlab pid {} ended and left kernel settings changed, which cannot be restored now ({e}); \
                     `sudo rtlab doctor --restore` restores them",
                    pids.join(", ")
                ));
            }
        }
    }
}

/// `--no-wait`, on every command that measures on real threads.
#[derive(Debug, Clone, Default, Args)]
pub struct CpuLockFlags {
    /// Refuse (exit 1) instead of waiting when another rtlab measures on the same CPU
    /// (the guide: "One measurement per CPU").
    #[arg(long)]
    pub no_wait: bool,
}

impl CpuLockFlags {
    /// Holds the per-CPU measurement lock of `cpus` (every allowed CPU when
    /// `None`: unpinned threads may run anywhere) for the measurement,
    /// saying on standard error whom it waits for.
    pub fn hold(&self, cpus: Option<&[usize]>) -> anyhow::Result<CpuLock> {
        let all;
        let cpus = match cpus {
            Some(c) => c,
            None => {
                all = rtlab_host::policy::allowed_cpus()?;
                &all
            }
        };
        let when_busy = if self.no_wait {
            WhenBusy::Refuse
        } else {
            WhenBusy::Wait
        };
        Ok(cpu_lock::lock_cpus(
            &StateDir::from_env(),
            cpus,
            when_busy,
            |holder| {
                say(&format!(
                    "waiting for CPU {}: {holder} is measuring on it (Ctrl-C stops, --no-wait refuses)",
                    holder.cpu
                ))
            },
        )?)
    }
}

/// Prints a line on standard error, ignoring a failed write (the terminal
/// may be gone after SIGHUP).
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The CPUs a measurement uses: `pinned`, or every CPU this process may
/// use (unpinned threads may run anywhere).
pub fn measured_cpus(pinned: Option<&[usize]>) -> Vec<usize> {
    match pinned {
        Some(c) => c.to_vec(),
        None => rtlab_host::policy::allowed_cpus().unwrap_or_default(),
    }
}

/// `--isolate`, on every command that measures on real threads.
#[derive(Debug, Clone, Default, Args)]
pub struct IsolateFlags {
    /// Shield the measured CPUs for the measurement: every thread and interrupt that may move is
    /// moved off them (as `cset shield`), and put back afterwards, also after a kill (guide:
    /// how-to/trust-a-real-result.md). Needs root and a cgroup-v1 cpuset hierarchy.
    #[arg(long)]
    pub isolate: bool,
}

impl IsolateFlags {
    /// Refuses a shield of `cpus` that cannot be raised (not root, the
    /// measured CPUs are every CPU, another tool's cpusets, cgroup v2),
    /// before the command waits for its CPUs or changes anything.
    pub fn check(&self, cpus: &[usize]) -> anyhow::Result<()> {
        if self.isolate {
            rtlab_host::shield::ShieldPlan::new(cpus)?;
        }
        Ok(())
    }

    /// Raises the shield of `cpus` when asked (after the measurement lock
    /// is held), saying on standard error what it moved.
    pub fn raise(&self, cpus: &[usize]) -> anyhow::Result<Option<rtlab_host::shield::Shield>> {
        if !self.isolate {
            return Ok(None);
        }
        let shield = rtlab_host::shield::Shield::raise(cpus)?;
        say(&shield.line());
        Ok(Some(shield))
    }
}
