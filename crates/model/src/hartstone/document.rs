//! The document of `rtlab hartstone` (`--json`, and what `--save`, `--plot`
//! and `rtlab report` read back): the PH series or the extended runs of each
//! simulated scheduler and real policy, and the ranking per test. Plain
//! data: the runs fill it, `rtlab_report::hartstone_text` prints it as text
//! and CSV. Fields serialize in declaration order.
//!
//! # JSON schema
//!
//! ```text
//! {
//!   "extended": false, "tests": [1, 2, 3, 4],
//!   "kilo_whet_ns": 1250000, "kilo_whet_from": "default",   // or "flag", "calibrated"
//!   "iteration_duration_ns": 10000000000, "max_iterations": 200, "on_miss": "skip",
//!   "runs": [                                   // PH series, one per scheduler / policy
//!     { "world": "sim", "scheduler": "edf", "label": "sim edf",
//!       "tests": [ { "test": 1, "iterations_completed": 30, "utilization_reached": 0.995,
//!                    "context_switches_per_s": 120.5, "preemptions": 12,
//!                    "ending_miss": { "iteration": 30, "task": "t5-272hz", "at_ns": 3676470 },
//!                    "end": "miss",
//!                    "iterations": [ { "iteration": 0, "utilization": 0.4, "tasks": 5,
//!                                      "misses": 0, "first_miss": null, "context_switches": 620,
//!                                      "preemptions": 0, "jobs": 620, "duration_ns": ... } ] } ] } ],
//!   "extended_runs": [                          // --extended: one per scheduler
//!     { "world": "sim", "scheduler": "edf", "label": "sim edf",
//!       "results": [ { "test": 1, "normal": "task 5 at 64 Hz", "overload": "task 5 at 352 Hz",
//!                      "misses": 812, "context_switches": 19800,
//!                      "context_switches_per_s": 165.0, "preemptions": 10, "jobs": 15601 } ] } ],
//!   "rankings": [ { "test": 1, "world": "sim", "order": ["sim edf", "sim multiburst"] } ],
//!   "extended_length_ns": 120000000000,         // --extended only
//!   "notes": ["real threads: RT throttling ... switched off ..."]   // when set
//! }
//! ```
//!
//! `--csv FILE`: `world,scheduler,test,iterations,utilization_reached,cs_per_s,preemptions,ending_task,ending_at_ns`
//! (extended: `world,scheduler,test,misses,cs_per_s,preemptions,jobs`).

use serde::Serialize;

use super::{ExtendedResult, HartstoneTest, TestOutcome};

/// One scheduler's or policy's PH series.
#[derive(Debug, Serialize)]
pub struct SeriesRun {
    /// `sim` or `real`.
    pub world: &'static str,
    /// The scheduler (`--scheduler`) or policy (`--policy`) as named.
    pub scheduler: String,
    /// `WORLD SCHEDULER`, the name in tables, rankings and plots.
    pub label: String,
    /// One outcome per test run.
    pub tests: Vec<TestOutcome>,
}

/// One scheduler's extended Hartstone.
#[derive(Debug, Serialize)]
pub struct ExtendedRun {
    /// `sim` or `real`.
    pub world: &'static str,
    /// The scheduler or policy as named.
    pub scheduler: String,
    /// `WORLD SCHEDULER`.
    pub label: String,
    /// One result per test run.
    pub results: Vec<ExtendedResult>,
}

/// The labels of one test and world, best first.
#[derive(Debug, Serialize)]
pub struct Ranking {
    /// The test.
    pub test: HartstoneTest,
    /// `sim` or `real`.
    pub world: &'static str,
    /// Labels, best first.
    pub order: Vec<String>,
}

/// `rtlab hartstone --json`.
#[derive(Debug, Serialize)]
pub struct HartstoneDocument {
    /// The extended Hartstone instead of the PH series.
    pub extended: bool,
    /// The tests run, in order.
    pub tests: Vec<HartstoneTest>,
    /// One kilo-whet's execution time.
    pub kilo_whet_ns: u64,
    /// Where it came from: `default`, `flag` or `calibrated`.
    pub kilo_whet_from: &'static str,
    /// Length of one PH iteration.
    pub iteration_duration_ns: u64,
    /// Iterations per test at most.
    pub max_iterations: u32,
    /// The deadline-miss rule (`skip`, `continue`).
    pub on_miss: String,
    /// The PH series, one per scheduler and policy.
    pub runs: Vec<SeriesRun>,
    /// The extended runs, one per scheduler and policy.
    pub extended_runs: Vec<ExtendedRun>,
    /// Per test and world, the labels best first.
    pub rankings: Vec<Ranking>,
    /// Length of the extended run (only with `extended`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extended_length_ns: Option<u64>,
    /// What was changed on the machine for the real runs, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A stop signal cut the real-thread series short (README: "Kernel
    /// settings and interrupted runs"); absent when it did not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}
