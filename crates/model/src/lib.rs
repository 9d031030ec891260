//! The rtlab task model.
//!
//! Everything else in rtlab (analysis, simulation, real-thread runs, reports)
//! stands on the types here:
//!
//! - [`time`]: integer-nanosecond time ([`Nanos`]), human durations, hyperperiods;
//! - [`task`]: [`Task`], [`TaskSet`] and their validation;
//! - [`platform`]: the processors a set runs on ([`Platform`]: `processors`,
//!   `clusters`) and the tasks' fixed `cpu`;
//! - [`file`]: task-set files in TOML or JSON, with `file:line:col` errors;
//! - [`simso`]: SimSo XML configurations in and out;
//! - [`catalog`]: the built-in task sets from the papers (`builtin:NAME`);
//! - [`generate`]: random task sets (UUniFast, RandFixedSum, ...), deterministic per seed;
//! - [`hartstone`]: the Hartstone PH pools, the stop-at-first-miss driver and the extended profile (paper 002 ch. 4);
//! - [`phase`]: phases of a run (overloads, mode changes) and their one interpretation ([`phase::PhasePlan`]);
//! - [`disturbance`]: what else ran on a real run's CPUs, and its verdict (clean or disturbed);
//! - [`kernel_trace`]: the summary of a real run's kernel trace (losses, misses by cause);
//! - [`text`]: names made safe to print ([`printable`]);
//! - [`policy`]: priority assignments (RM, DM, given, OPA) and the simulator
//!   scheduler that models a real-thread policy;
//! - [`results`]: the job record, per-task summary and comparison that the
//!   simulator and the real-thread executor share.

#![forbid(unsafe_code)]

pub mod cancel;
pub mod catalog;
pub mod disturbance;
pub mod file;
pub mod generate;
pub mod hartstone;
pub mod kernel_trace;
pub mod overheads;
pub mod phase;
pub mod platform;
pub mod policy;
pub mod random;
pub mod results;
pub mod runner;
pub mod schema;
pub mod simso;
pub mod task;
pub mod text;
pub mod time;

pub use platform::{Platform, MAX_PROCESSORS};
pub use task::{
    lock_steps, CriticalSection, Diagnostic, FieldPath, LockStep, PathSegment, Severity, Task,
    TaskSet, MAX_NAME_BYTES,
};
pub use text::{csv_cell, printable};
pub use time::{hyperperiod, lateness_ns, DurationParseError, Nanos, TimeError};
