//! rtlab's view of and hold on the Linux host: what a real-time run asks
//! of the kernel, what it changes and how it puts it back.
//!
//! * [`policy`]: SCHED_OTHER / FIFO / RR / DEADLINE, affinity, `mlockall`,
//!   `/dev/cpu_dma_latency`, RT-throttling settings.
//! * [`kernel_state`]: kernel settings recorded in `/run/rtlab` before they
//!   are changed and restored after, also after a SIGKILL.
//! * [`cpuset`]: the exclusive cpuset that confines SCHED_DEADLINE threads
//!   to one CPU.
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

pub mod cpu_lock;
pub mod cpuset;
pub mod dl_bandwidth;
pub mod error;
pub mod interrupt;
pub mod kernel_state;
pub mod platform;
pub mod policy;
pub mod recover;
pub mod usage;

pub use error::HostError;
pub use policy::{Policy, RtThrottling};
