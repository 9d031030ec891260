//! One module per command; each exposes its clap arguments and a `run`.

pub mod analyze;
pub mod breakdown;
pub mod characterize;
pub mod compare;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod drift;
pub mod hartstone;
pub mod lag_study;
pub mod latency;
pub mod load;
pub mod man;
pub mod partition;
pub mod report;
pub mod results;
pub mod run;
pub mod sim;
pub mod study;
pub mod sweep;
pub mod taskset;
