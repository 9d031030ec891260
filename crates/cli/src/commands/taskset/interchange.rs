//! `rtlab taskset export | import`: task sets in the formats of the tools
//! rtlab's users come from. One `--format` value per tool; the conversions
//! themselves are library code (SimSo: `rtlab_model::simso`; rt-app:
//! `rtlab_rt::rtapp` and the model's file loader, which also recognises
//! both formats by content wherever a task-set file is read).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use rtlab_model::policy::{RunPolicy, RUN_POLICIES};
use rtlab_model::simso::{self, SimsoScheduler};
use rtlab_model::{file, printable, Nanos, TaskSet};
use rtlab_rt::executor;
use rtlab_rt::rtapp::{self, ExportOptions};
use rtlab_sim::SchedulerSpec;

use crate::flags::{parse_calibration, parse_nanos};
use crate::set_files::OutputFormat;
use crate::usage::usage;

/// rt-app's default workload duration when `--duration` is not given.
const RTAPP_DEFAULT_DURATION: Nanos = Nanos::from_secs(10);

/// A foreign task-set format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A SimSo configuration (XML), on one processor or several.
    Simso,
    /// rt-app's JSON workload (scheduler-tools/rt-app).
    #[value(name = "rt-app")]
    RtApp,
}

/// `rtlab taskset export`
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A task-set file or `builtin:NAME`.
    pub taskset: String,
    /// The tool to write for.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// SimSo: the scheduler. One processor: edf = EDF_mono, fp:rm = RM_mono, fp:dm and fp:given =
    /// FP with rtlab's priorities. Several: gedf = EDF, gfp:rm = RM, gfp:dm|given = FP, edzl =
    /// EDZL, pedf = P_EDF (or Fixed_PEDF for the tasks' own `cpu`), pfp:rm = P_RM.
    #[arg(short = 's', long, default_value = "edf")]
    pub scheduler: String,
    /// The processor count (1 to 1024; default: the file's `processors`, else 1). SimSo: one
    /// <processor> each; rt-app: each thread's `cpus`, from the tasks' `cpu` fields.
    #[arg(long, value_name = "M")]
    pub cpus: Option<u32>,
    /// SimSo, pedf or pfp:rm: place the tasks with this heuristic (as `rtlab sim --partition`:
    /// ff, bf, wf, nf, with -decreasing-util or -decreasing-density) instead of their `cpu` fields.
    #[arg(long, value_name = "HEURISTIC")]
    pub partition: Option<String>,
    /// The duration: SimSo's simulated time (default: one hyperperiod, if at most 100 s);
    /// rt-app's workload duration (whole seconds, default 10s).
    #[arg(short = 'd', long, value_parser = parse_nanos)]
    pub duration: Option<Nanos>,
    /// rt-app: the policy the threads get, as `rtlab run --policy` maps it: other,
    /// fifo-order, rm, dm, given, rr or edf.
    #[arg(long, short = 'P', default_value = "rm")]
    pub policy: String,
    /// rt-app, one processor: the CPU the threads are pinned to (default: 1, or the first allowed
    /// CPU). On several processors each thread's `cpus` is its task's `cpu` (processor k is CPU
    /// k), or all of them.
    #[arg(long, conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// rt-app: do not pin the threads (no `cpus`).
    #[arg(long)]
    pub no_pin: bool,
    /// rt-app: SCHED_DEADLINE budget over C (default: max(5% of C, 100us)), as `rtlab run`.
    #[arg(long, value_parser = parse_nanos)]
    pub edf_margin: Option<Nanos>,
    /// rt-app: its calibration, `CPUn` (measure on CPU n at start; default: the pinned CPU)
    /// or a number of ns per loop.
    #[arg(long)]
    pub calibration: Option<String>,
    /// rt-app: write `lock_pages: false`.
    #[arg(long)]
    pub no_mlock: bool,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `rtlab taskset import`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A file of another tool (a SimSo configuration or an rt-app workload, recognised by
    /// its content) or any task-set file.
    pub file: String,
    /// The format the file must be in (default: recognised by content).
    #[arg(long, value_enum)]
    pub format: Option<ExportFormat>,
    /// The rtlab format to write (default: JSON when --out ends in .json, else TOML).
    #[arg(long)]
    pub to: Option<OutputFormat>,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `rtlab taskset export`.
pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let mut loaded = file::load(&args.taskset)?;
    loaded.set = crate::flags::on_cpus(loaded.set, args.cpus)?;
    let text = match args.format {
        ExportFormat::Simso => simso_text(&loaded.set, args)?,
        ExportFormat::RtApp => rtapp_text(&loaded.set, &loaded.origin, args)?,
    };
    write_out(args.out.as_ref(), &text)
}

fn simso_text(set: &TaskSet, args: &ExportArgs) -> anyhow::Result<String> {
    let scheduler: SimsoScheduler = args
        .scheduler
        .parse()
        .map_err(|e| usage(format!("--scheduler: {e}")))?;
    let placed;
    let set = match &args.partition {
        Some(heuristic) => {
            if !scheduler.is_partitioned() {
                return Err(usage(format!(
                    "--partition places tasks for pedf or pfp:rm, not {}",
                    scheduler.rtlab_spec()
                )));
            }
            let spec = SchedulerSpec::from(scheduler);
            placed = crate::placement::for_scheduler(set, &spec, heuristic, "nothing was done")?;
            &placed
        }
        None => set,
    };
    let duration = crate::flags::duration_or_hyperperiod(args.duration, set)?;
    let out = simso::to_xml_string(set, scheduler, duration).map_err(|e| match e.flag() {
        Some(flag) => usage(format!("{flag}: {e}")),
        None => e.into(),
    })?;
    for note in &out.notes {
        eprintln!("note: {}", printable(note));
    }
    Ok(out.xml)
}

fn rtapp_text(set: &TaskSet, origin: &str, args: &ExportArgs) -> anyhow::Result<String> {
    if args.partition.is_some() {
        return Err(usage(
            "--partition is for SimSo exports; give an rt-app export's tasks `cpu` fields \
             (`rtlab partition FILE --out`)",
        ));
    }
    let policy: RunPolicy = args.policy.parse().map_err(|_| {
        usage(format!(
            "--policy `{}`: use {RUN_POLICIES}",
            printable(&args.policy)
        ))
    })?;
    let duration = args.duration.unwrap_or(RTAPP_DEFAULT_DURATION);
    if !rtapp::runner::whole_seconds(duration) {
        return Err(usage(format!(
            "--duration {duration}: rt-app's duration is a whole number of seconds"
        )));
    }
    if let (Some(cpu), m @ 2..) = (args.cpu, set.processors()) {
        return Err(usage(format!(
            "--cpu {cpu} pins a one-processor set; this one has {m} processors, whose threads get \
             `cpus` from their tasks' `cpu` (processor k is CPU k; all {m} for a task without one)"
        )));
    }
    let cpu = (!args.no_pin).then(|| args.cpu.unwrap_or_else(executor::default_cpu));
    let mut options = ExportOptions::new(cpu, duration);
    if let Some(text) = &args.calibration {
        options.calibration = parse_calibration(text, "--calibration")?;
    }
    options.lock_pages = !args.no_mlock;
    let exported = rtapp::export(set, policy, args.edf_margin, &options)
        .with_context(|| format!("{}: cannot export to rt-app", printable(origin)))?;
    for warning in &exported.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(exported.document.to_json_string())
}

/// Runs `rtlab taskset import`: the set in rtlab's own format, the notes
/// of the conversion on standard error.
pub fn import(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    if let Some(format) = args.format {
        let text = file::read_text(Path::new(&args.file)).map_err(|reason| {
            anyhow::anyhow!("{}: cannot read: {reason}", printable(&args.file))
        })?;
        let (matches, what) = match format {
            ExportFormat::Simso => (
                simso::looks_like_xml(&text),
                "a SimSo configuration (XML with a <simulation> root)",
            ),
            ExportFormat::RtApp => (
                file::is_rtapp_workload(&text),
                "an rt-app workload (a JSON object with a `tasks` object of threads)",
            ),
        };
        if !matches {
            anyhow::bail!("{}: not {what}", printable(&args.file));
        }
    }
    let loaded = file::load(&args.file)?;
    for note in &loaded.notes {
        eprintln!("{note}");
    }
    let to = args.to.unwrap_or_else(|| match &args.out {
        Some(path) if file::Format::from_path(path) == file::Format::Json => OutputFormat::Json,
        _ => OutputFormat::Toml,
    });
    write_out(args.out.as_ref(), &to.render(&loaded.set))
}

fn write_out(out: Option<&PathBuf>, text: &str) -> anyhow::Result<ExitCode> {
    match out {
        Some(path) => rtlab_model::file::write_output(path, text)
            .with_context(|| format!("--out {}: cannot write", path.display()))?,
        None => out!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
