//! One module per command; each exposes its clap arguments and a `run`.

pub mod demo;
pub mod generate;
pub mod taskset;
