//! rtlab's Linux real-time runtime: the only crate with `unsafe` and system
//! calls.
//!
//! * [`clock`]: `CLOCK_MONOTONIC`, absolute sleeps, thread CPU time, and the
//!   [`Clock`] / [`Sleeper`] traits with a [`ScriptedClock`] for tests.
//! * [`lag`]: `wait_until` with the lag controllers: paper 000's Algorithm 2
//!   and the robust default (learnt threshold, anti-windup, RT spin budget).
//! * [`policy`]: SCHED_OTHER / FIFO / RR / DEADLINE, affinity, `mlockall`,
//!   `/dev/cpu_dma_latency`, RT-throttling settings.
//! * [`work`]: CPU-time burn and the calibrated kilo-whet.
//! * [`latency`]: the latency probe (cyclictest's measurement), and
//!   [`cyclictest_json`]: its results in cyclictest's `--json` layout.
//! * [`drift`]: relative versus absolute sleeps (`rtlab drift`, seed 003).
//! * [`load`]: background load (hackbench, CPU spinners).
//! * [`lag_study`]: paper 000 section 4.1, the timer-utilization study.
//! * [`executor`]: task sets on real threads (`rtlab run`), every job recorded.
//! * [`hartstone`]: the Hartstone benchmark's real-thread iteration runner.
//! * [`cpu_lock`]: the per-CPU measurement lock (one measurement per CPU).
//! * [`kernel_state`]: kernel settings recorded in `/run/rtlab` before they
//!   are changed and restored after, also after a SIGKILL.
//! * [`platform`]: the platform's real-time state (`rtlab doctor`).
//! * [`stream`]: pre-faulted record rings from real-time threads to a
//!   writer thread (`--jobs`, `--trace`, `--series` files).
//! * [`timespec`]: the one conversion between [`Nanos`] and `timespec`.
//! * [`usage`]: `getrusage` (context switches, peak memory).
//!
//! * [`sys`]: every raw `libc` call, each wrapped once in a safe function.
//!
//! `unsafe` lives in [`sys`] only (the rest of the crate denies
//! `unsafe_code`); every `unsafe` block there is a single call with a
//! `SAFETY` comment.
//!
//! [`Nanos`]: rtlab_model::Nanos

#![deny(unsafe_code)]

pub mod characterize;
pub mod clock;
pub mod cpu_lock;
pub mod cyclictest_json;
pub mod drift;
pub mod error;
pub mod executor;
pub mod hartstone;
pub mod interrupt;
pub mod kernel_state;
pub mod lag;
pub mod lag_study;
pub mod latency;
pub mod load;
pub mod platform;
pub mod policy;
pub mod rtapp;
pub mod schema;
pub mod stats;
pub mod stream;
#[allow(unsafe_code)]
pub mod sys;
pub mod timespec;
pub mod usage;
pub mod work;

pub use clock::{Clock, MonotonicClock, ScriptedClock, Sleeper};
pub use error::RtError;
pub use lag::{LagController, Waiter, Wake};
pub use policy::{Policy, RtThrottling};
