//! One module per command; each exposes its clap arguments and a `run`.

pub mod analyze;
pub mod demo;
pub mod generate;
pub mod sim;
pub mod sweep;
pub mod taskset;
