//! `rtlab taskset import | export`: task sets to and from other tools'
//! formats. One `--format` per tool; the conversions are library code
//! (rt-app: `rtlab_rt::rtapp` and the model's file loader).

use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use rtlab_model::{file, printable, Nanos};
use rtlab_rt::executor::{self, RunPolicy, RUN_POLICIES};
use rtlab_rt::rtapp::{self, Calibration, ExportOptions};

use crate::flags::parse_nanos;
use crate::usage::usage;

/// The formats of other tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExchangeFormat {
    /// rt-app's JSON workload (scheduler-tools/rt-app).
    #[value(name = "rt-app")]
    RtApp,
}

/// `rtlab taskset export`
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A task-set file or `builtin:NAME`.
    pub taskset: String,
    /// The format to write.
    #[arg(long, value_enum)]
    pub format: ExchangeFormat,
    /// The policy the threads get, as `rtlab run --policy` maps it: other, fifo-order, rm,
    /// dm, given, rr or edf.
    #[arg(long, short = 'P', default_value = "rm")]
    pub policy: String,
    /// The workload's duration (rt-app: whole seconds).
    #[arg(long, short = 'd', default_value = "10s", value_parser = parse_nanos)]
    pub duration: Nanos,
    /// The CPU the threads are pinned to (default: 1, or the first allowed CPU).
    #[arg(long, conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Do not pin the threads.
    #[arg(long)]
    pub no_pin: bool,
    /// SCHED_DEADLINE budget over C (default: max(5% of C, 100us)), as `rtlab run`.
    #[arg(long, value_parser = parse_nanos)]
    pub edf_margin: Option<Nanos>,
    /// rt-app's calibration: `CPUn` (measure on CPU n at start; default: the pinned CPU)
    /// or a number of ns per loop.
    #[arg(long)]
    pub calibration: Option<String>,
    /// Write `lock_pages: false`.
    #[arg(long)]
    pub no_mlock: bool,
    /// Write here instead of standard output.
    #[arg(long, short = 'o')]
    pub out: Option<String>,
}

/// `rtlab taskset import`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A file in another tool's format (detected by content when --format is not given).
    pub file: String,
    /// The format the file must be in.
    #[arg(long, value_enum)]
    pub format: Option<ExchangeFormat>,
    /// Write the task set here (`.json`: rtlab's JSON, else TOML) instead of TOML on standard output.
    #[arg(long, short = 'o')]
    pub out: Option<String>,
}

/// Runs `rtlab taskset export`.
pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let policy: RunPolicy = args.policy.parse().map_err(|_| {
        usage(format!(
            "--policy `{}`: use {RUN_POLICIES}",
            printable(&args.policy)
        ))
    })?;
    let cpu = (!args.no_pin).then(|| args.cpu.unwrap_or_else(executor::default_cpu));
    let mut options = ExportOptions::new(cpu, args.duration);
    if !rtapp::runner::whole_seconds(args.duration) {
        return Err(usage(format!(
            "--duration {}: rt-app's duration is a whole number of seconds",
            args.duration
        )));
    }
    if let Some(text) = &args.calibration {
        options.calibration = parse_calibration(text, "--calibration")?;
    }
    options.lock_pages = !args.no_mlock;
    let loaded = file::load(&args.taskset)?;
    let exported = match args.format {
        ExchangeFormat::RtApp => rtapp::export(&loaded.set, policy, args.edf_margin, &options)
            .with_context(|| format!("{}: cannot export to rt-app", printable(&loaded.origin)))?,
    };
    for warning in &exported.warnings {
        eprintln!("warning: {warning}");
    }
    let text = exported.document.to_json_string();
    match &args.out {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("--out: cannot write {path}"))?
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `CPUn` or a whole number of ns per loop (`flag` names it in the error).
pub fn parse_calibration(text: &str, flag: &str) -> anyhow::Result<Calibration> {
    if let Some(cpu) = text.strip_prefix("CPU").and_then(|n| n.parse().ok()) {
        return Ok(Calibration::Cpu(cpu));
    }
    match text.parse::<u64>() {
        Ok(ns) if ns > 0 => Ok(Calibration::NsPerLoop(ns)),
        _ => Err(usage(format!(
            "{flag} `{}`: use CPUn (e.g. CPU1) or a number of ns per loop (e.g. 20)",
            printable(text)
        ))),
    }
}

/// Runs `rtlab taskset import`.
pub fn import(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    if let Some(ExchangeFormat::RtApp) = args.format {
        let text = file::read_text(std::path::Path::new(&args.file)).map_err(|reason| {
            anyhow::anyhow!("{}: cannot read: {reason}", printable(&args.file))
        })?;
        if !file::is_rtapp_workload(&text) {
            anyhow::bail!(
                "{}: not an rt-app workload (a JSON object with a `tasks` object of threads)",
                printable(&args.file)
            );
        }
    }
    let loaded = file::load(&args.file)?;
    for note in &loaded.notes {
        eprintln!("{note}");
    }
    let (text, json) = match &args.out {
        Some(path) if file::Format::from_path(std::path::Path::new(path)) == file::Format::Json => {
            (file::to_json_string(&loaded.set), true)
        }
        _ => (file::to_toml_string(&loaded.set), false),
    };
    match &args.out {
        Some(path) => {
            let text = if json { format!("{text}\n") } else { text };
            std::fs::write(path, text).with_context(|| format!("--out: cannot write {path}"))?
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
