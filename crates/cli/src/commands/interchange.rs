//! `rtlab taskset export | import`: task sets in the formats of the tools
//! rtlab's users come from. One `--format` value per tool; the conversions
//! themselves live in `rtlab_model` (`simso`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use rtlab_model::simso::{self, SimsoScheduler};
use rtlab_model::{file, printable, Nanos, TaskSet};

use crate::set_files::OutputFormat;
use crate::usage::usage;

/// A foreign task-set format `rtlab taskset export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A SimSo configuration (XML), uniprocessor.
    Simso,
}

/// `rtlab taskset export`
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A task-set file or `builtin:NAME`.
    pub taskset: String,
    /// The tool to write for.
    #[arg(long)]
    pub format: ExportFormat,
    /// SimSo: the scheduler (edf = EDF_mono, fp:rm = RM_mono, fp:dm and fp:given = FP with rtlab's priorities).
    #[arg(short = 's', long, default_value = "edf")]
    pub scheduler: String,
    /// SimSo: the simulated time (default: one hyperperiod, if at most 100 s).
    #[arg(short = 'd', long, value_parser = crate::flags::parse_nanos)]
    pub duration: Option<Nanos>,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `rtlab taskset import`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A file of another tool (a SimSo configuration, recognised by its content) or any task-set file.
    pub file: String,
    /// The rtlab format to write.
    #[arg(long, default_value = "toml")]
    pub to: OutputFormat,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `rtlab taskset export`.
pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let set = file::load(&args.taskset)?.set;
    let text = match args.format {
        ExportFormat::Simso => simso_text(&set, args)?,
    };
    write_out(args.out.as_ref(), &text)
}

fn simso_text(set: &TaskSet, args: &ExportArgs) -> anyhow::Result<String> {
    let scheduler: SimsoScheduler = args
        .scheduler
        .parse()
        .map_err(|e| usage(format!("--scheduler: {e}")))?;
    let duration = crate::flags::duration_or_hyperperiod(args.duration, set)?;
    let out = simso::to_xml_string(set, scheduler, duration)?;
    for note in &out.notes {
        eprintln!("note: {}", printable(note));
    }
    Ok(out.xml)
}

/// Runs `rtlab taskset import`: the set in rtlab's own format, the notes
/// of the conversion on standard error.
pub fn import(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let loaded = file::load(&args.file)?;
    for note in &loaded.notes {
        eprintln!("{note}");
    }
    write_out(args.out.as_ref(), &args.to.render(&loaded.set))
}

fn write_out(out: Option<&PathBuf>, text: &str) -> anyhow::Result<ExitCode> {
    match out {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("--out {}: cannot write", path.display()))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
