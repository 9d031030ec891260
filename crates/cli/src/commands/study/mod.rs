//! `rtlab study ...`: the experiments that compare schedulers, one module
//! per study: `edf-vs-fps` (paper 001), `global-vs-partitioned` and
//! `mp-locking`.

mod edf_vs_fps;
mod files;
mod global_partitioned;
mod mp_locking;

use std::process::ExitCode;

use clap::Subcommand;

pub use edf_vs_fps::EdfVsFpsArgs;
pub use global_partitioned::GvpArgs;
pub use mp_locking::MpLockingArgs;

/// `rtlab study ...`
#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Carletto & Vardanega 2017: EDF against fixed priorities (DM), changing only the scheduler.
    #[command(after_help = edf_vs_fps::EXAMPLES)]
    EdfVsFps(Box<EdfVsFpsArgs>),
    /// Global against partitioned EDF and FP on m CPUs: analysis, simulator and real threads.
    #[command(after_help = global_partitioned::GVP_EXAMPLES)]
    GlobalVsPartitioned(GvpArgs),
    /// Paper 001's locking question on m CPUs: MPCP, DPCP, FMLP+, MrsP, MSRP and the OMLP against
    /// critical-section length and the number of shared resources, analysed and simulated.
    #[command(after_help = mp_locking::EXAMPLES)]
    MpLocking(MpLockingArgs),
}

/// Runs `rtlab study ...`.
pub fn run(command: &StudyCommand) -> anyhow::Result<ExitCode> {
    match command {
        StudyCommand::EdfVsFps(args) => edf_vs_fps::run(args),
        StudyCommand::GlobalVsPartitioned(args) => global_partitioned::run(args),
        StudyCommand::MpLocking(args) => mp_locking::run(args),
    }
}
