//! rtlab's view of and hold on the Linux host: what a real-time run asks
//! of the kernel, what it changes and how it puts it back.
//!
//! * [`policy`]: SCHED_OTHER / FIFO / RR / DEADLINE, affinity, `mlockall`,
//!   `/dev/cpu_dma_latency`, RT-throttling settings.
//! * [`kernel_state`]: kernel settings recorded in `/run/rtlab` before they
//!   are changed and restored after, also after a SIGKILL.
//! * [`cpuset`]: the exclusive cpuset that confines SCHED_DEADLINE threads
//!   to one CPU.
//! * [`disturbance`]: the disturbance account of a real run's measured
//!   window (host steal, interrupts, other threads, pressure).
//! * [`shield`]: `--isolate`, every movable thread and interrupt moved off
//!   the measured CPUs for a run, through the ledger.
//! * [`recover`]: what every measuring command does first (restore what
//!   dead rtlab processes left changed).
//! * [`platform`]: the platform's real-time state (`rtlab doctor`).
//! * [`interrupt`]: the stop signals (a clean stop, kernel restored).
//! * [`cpu_lock`]: the per-CPU measurement lock (one measurement per CPU).
//! * [`usage`]: `getrusage` (context switches, peak memory).
//! * [`error`]: [`HostError`], what the host refused, in words that say
//!   what to do about it.
//!
//! No `unsafe` here: system calls go through `rtlab_sys`.

#![forbid(unsafe_code)]

// The Linux host (sched policies, cpusets, /proc and /sys): on another
// system this crate is empty and says so once.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "rtlab-host drives the Linux kernel and builds on Linux only; the library crates \
     (model, analysis, sim, store) and the Python package do not depend on it"
);

#[cfg(target_os = "linux")]
pub mod cpu_lock;
#[cfg(target_os = "linux")]
pub mod cpuset;
#[cfg(target_os = "linux")]
pub mod disturbance;
#[cfg(target_os = "linux")]
pub mod dl_bandwidth;
#[cfg(target_os = "linux")]
pub mod error;
#[cfg(target_os = "linux")]
pub mod interrupt;
#[cfg(target_os = "linux")]
pub mod kernel_state;
#[cfg(target_os = "linux")]
pub mod platform;
#[cfg(target_os = "linux")]
pub mod policy;
#[cfg(target_os = "linux")]
pub mod recover;
#[cfg(target_os = "linux")]
pub mod shield;
#[cfg(target_os = "linux")]
pub mod usage;

#[cfg(target_os = "linux")]
pub use error::HostError;
#[cfg(target_os = "linux")]
pub use policy::{Policy, RtThrottling};
