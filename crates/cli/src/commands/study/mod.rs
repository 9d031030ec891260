//! `rtlab study ...`: the experiments that compare schedulers, one module
//! per study: `edf-vs-fps` (paper 001) and `global-vs-partitioned`.

mod edf_vs_fps;
mod global_partitioned;

use std::process::ExitCode;

use clap::Subcommand;

pub use edf_vs_fps::EdfVsFpsArgs;
pub use global_partitioned::GvpArgs;

/// `rtlab study ...`
#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Carletto & Vardanega 2017: EDF against fixed priorities (DM), changing only the scheduler.
    #[command(after_help = edf_vs_fps::EXAMPLES)]
    EdfVsFps(Box<EdfVsFpsArgs>),
    /// Global against partitioned EDF and FP on m CPUs: analysis, simulator and real threads.
    #[command(after_help = global_partitioned::GVP_EXAMPLES)]
    GlobalVsPartitioned(GvpArgs),
}

/// Runs `rtlab study ...`.
pub fn run(command: &StudyCommand) -> anyhow::Result<ExitCode> {
    match command {
        StudyCommand::EdfVsFps(args) => edf_vs_fps::run(args),
        StudyCommand::GlobalVsPartitioned(args) => global_partitioned::run(args),
    }
}
