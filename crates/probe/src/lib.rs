//! rtlab's measuring tools: what the platform does to a real-time thread.
//!
//! * [`latency`]: the latency probe (cyclictest's measurement), and
//!   [`cyclictest_json`]: its results in cyclictest's `--json` layout.
//! * [`characterize`]: the platform's costs (timer, tick, context switch,
//!   preemption) measured and fitted (`rtlab characterize`).
//!
//! No `unsafe` here: system calls go through `rtlab_sys`.

#![forbid(unsafe_code)]

pub mod characterize;
pub mod cyclictest_json;
pub mod latency;
