//! rtlab's real-time runtime: task sets on real threads.
//!
//! * [`executor`]: task sets on real threads (`rtlab run`), every job recorded.
//! * [`lag`]: `wait_until` with the lag controllers: paper 000's Algorithm 2
//!   and the robust default (learnt threshold, anti-windup, RT spin budget).
//! * [`work`]: CPU-time burn and the calibrated kilo-whet.
//! * [`drift`]: relative versus absolute sleeps (`rtlab drift`, seed 003).
//! * [`load`]: background load (hackbench, CPU spinners).
//! * [`rtapp`]: rt-app side by side with rtlab (export, run, compare).
//! * [`stream`]: pre-faulted record rings from real-time threads to a
//!   writer thread (`--jobs`, `--trace`, `--series` files).
//! * [`stats`]: summaries of latency samples (HDR histograms).
//! * [`schema`]: the `latency`, `load` and `lag-study` JSON documents.
//! * [`lag_study`]: one cell of paper 000 section 4.1's timer-utilization
//!   study measured on a real-time thread (the study itself: `rtlab_study`).
//! * [`runner`]: real threads as the experiments' `Runner`.
//! * [`error`]: [`RtError`], why a run failed.
//!
//! The host it runs on (policies, kernel settings, signals) is `rtlab_host`;
//! system calls and clocks are `rtlab_sys`, the only crate with `unsafe`.

#![forbid(unsafe_code)]

pub mod dispatcher;
pub mod drift;
pub mod error;
pub mod executor;
pub mod lag;
pub mod lag_study;
pub mod load;
pub mod rtapp;
pub mod runner;
pub mod stats;
pub mod stream;
pub mod work;

pub use error::RtError;
pub use lag::{LagController, Waiter, Wake};
