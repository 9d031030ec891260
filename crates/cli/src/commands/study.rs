//! `rtlab study edf-vs-fps`: argument parsing and wiring for paper 001's
//! EDF-versus-FPS study. The sections are `rtlab-study`'s (the real-thread
//! runner too, `rtlab_study::real`), the document is
//! `rtlab_study::document::StudyDocument`, its tables and CSV are
//! `rtlab_report::study_text`'s and its figures the report's.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::Context;
use clap::{Args, Subcommand};
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::{printable, Nanos};
use rtlab_report::study_text;
use rtlab_report::view::RunView;
use rtlab_rt::executor::KernelTrace;
use rtlab_sim::runner::SimRunner;
use rtlab_study::document::{OverloadPart, RealOverload, RealPart, StudyDocument, UtilizationPart};
use rtlab_study::locking::{self, LockingConfig};
use rtlab_study::overload::{self, OverloadConfig, Profile};
use rtlab_study::runner::{EDF, FPS};
use rtlab_study::utilization::{self, LoadSteps, SetType, UtilizationConfig, SET_TYPES};

use crate::flags::parse_nanos;
use crate::save::SaveFlags;
use crate::setup::{restore_left_state_first, say};
use crate::usage::usage;

/// `rtlab study ...`
#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Paper 001: EDF against fixed priorities (DM), changing only the scheduler.
    #[command(after_help = EXAMPLES)]
    EdfVsFps(Box<EdfVsFpsArgs>),
    /// Global against partitioned EDF and FP on m CPUs: analysis, simulator and real threads.
    #[command(after_help = GVP_EXAMPLES)]
    GlobalVsPartitioned(GvpArgs),
}

const GVP_EXAMPLES: &str = "Examples:\n  \
    rtlab study global-vs-partitioned --cpus 2 --sets 5 --from 0.6 --to 2.0 --step 0.2\n  \
    rtlab study global-vs-partitioned --cpus 0,1 --sets 2 --tasks 4 --from 1.0 --to 1.4 --step 0.4 --duration 300ms --real\n\n\
    Random sets (UUniFast-discard, per-task U <= 0.8, periods 10-100ms, implicit deadlines) at rising\n\
    total utilization on m processors, under gedf, pedf, gfp:dm and pfp:dm: proven by the analysis,\n\
    met in the simulator (gedf as linux-dl), met on real threads (--real, root; SCHED_DEADLINE over\n\
    every CPU, exclusive cpusets per CPU, SCHED_FIFO floating or pinned), and the highest schedulable\n\
    utilization of each. With --real on 2 CPUs: Dhall's example (builtin:dhall-linux) under gedf and\n\
    pedf. README: \"Multiprocessor on real threads\".";

/// `rtlab study global-vs-partitioned`
#[derive(Debug, Args)]
pub struct GvpArgs {
    /// The CPUs: a count m (simulation and analysis only, or real on CPUs 0..m-1) or a list `0,1`.
    #[arg(long, default_value = "2")]
    pub cpus: String,
    /// Random task sets per utilization level.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub sets: u64,
    /// Tasks per set (at least 2).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u64).range(2..=200))]
    pub tasks: u64,
    /// First total utilization.
    #[arg(long, default_value_t = 0.6)]
    pub from: f64,
    /// Last total utilization (levels above m are left out).
    #[arg(long, default_value_t = 2.0)]
    pub to: f64,
    /// Step between levels.
    #[arg(long, default_value_t = 0.2)]
    pub step: f64,
    /// Seed of the generator (the same seed gives the same document without --real).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Length of each simulated and real run.
    #[arg(long, default_value = "1s", value_parser = parse_nanos)]
    pub duration: Nanos,
    /// Run every set on real threads too (root).
    #[arg(long)]
    pub real: bool,
    /// Lift RT throttling and SCHED_DEADLINE admission for the real runs.
    #[arg(long, requires = "real")]
    pub no_rt_throttling: bool,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
    /// Print the JSON document instead of the tables.
    #[arg(long)]
    pub json: bool,
}

const EXAMPLES: &str = "Examples:\n  \
    rtlab study edf-vs-fps --types implicit/mid\n  \
    rtlab study edf-vs-fps --types implicit/mid,constrained/mid --from 80 --step 2 --json\n  \
    rtlab study edf-vs-fps --types implicit/mid --from 90 --step 5 --csv out/ --plot out/\n  \
    rtlab study edf-vs-fps --types implicit/mid --from 90 --step 5 --real --real-step 10 --real-duration 500ms --cooldown 100ms\n\n\
    Highest schedulable utilization: random sets per type (deadlines constrained|implicit x periods\n\
    short-mid 1-100ms | mid 10-100ms | all 1ms-1s), every C scaled from --from to --to by --step until\n\
    the first miss, EDF and FPS (DM) separately. README: \"The EDF-versus-FPS study\".";

/// `rtlab study edf-vs-fps`
#[derive(Debug, Args)]
pub struct EdfVsFpsArgs {
    /// Random task sets per type.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub sets: u64,
    /// Tasks per set (at least 2).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(2..=1_000))]
    pub tasks: u64,
    /// Seed of the generators (the same seed gives the same sets and the same document).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// First load (utilization) tried, percent.
    #[arg(long, default_value = "50", value_parser = parse_percent)]
    pub from: u64,
    /// Load increment, percent.
    #[arg(long, default_value = "1", value_parser = parse_percent)]
    pub step: u64,
    /// Last load tried, percent.
    #[arg(long, default_value = "120", value_parser = parse_percent)]
    pub to: u64,
    /// Length of every simulated run (default: 5 x the set's longest period).
    #[arg(long, value_parser = parse_nanos)]
    pub duration: Option<Nanos>,
    /// The task-set types, comma separated (default: all six): constrained/short-mid,
    /// constrained/mid, constrained/all, implicit/short-mid, implicit/mid, implicit/all.
    #[arg(long, value_delimiter = ',', value_parser = parse_type)]
    pub types: Vec<SetType>,
    /// Also run the search on real threads (root): EDF under SCHED_DEADLINE, FPS under
    /// SCHED_FIFO at DM priorities, pinned to one CPU, beside the simulation of the same sets.
    #[arg(long)]
    pub real: bool,
    /// Sets per type on real threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000))]
    pub real_sets: u64,
    /// First load on real threads, percent.
    #[arg(long, default_value = "80", value_parser = parse_percent)]
    pub real_from: u64,
    /// Load increment on real threads, percent.
    #[arg(long, default_value = "5", value_parser = parse_percent)]
    pub real_step: u64,
    /// Last load on real threads, percent.
    #[arg(long, default_value = "110", value_parser = parse_percent)]
    pub real_to: u64,
    /// Length of every real run; types whose longest period exceeds half of it are skipped on
    /// real threads (with the default 1s: the `all` types).
    #[arg(long, default_value = "1s", value_parser = parse_nanos)]
    pub real_duration: Nanos,
    #[command(flatten)]
    pub real_series: crate::real_run::RealSeriesFlags,
    /// Print the JSON document instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Write one CSV row per type and world: a directory (an existing one, or a path ending in
    /// `/`, created; gets utilization.csv) or a file.
    #[arg(long, value_name = "DIR|FILE")]
    pub csv: Option<PathBuf>,
    /// Write the SVG plots (schedulable sets against load, one per type) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// The sections to run, comma separated (default: all three): utilization, overload,
    /// locking.
    #[arg(long, value_delimiter = ',', value_parser = parse_section)]
    pub sections: Vec<Section>,
    /// Overload: the load levels, percent, comma separated (default 100,110,...,150).
    #[arg(long, value_delimiter = ',', value_parser = parse_percent)]
    pub overload_levels: Vec<u64>,
    /// Overload: length of every simulated run (the transient burst is 2s..3s).
    #[arg(long, default_value = "10s", value_parser = parse_nanos)]
    pub overload_duration: Nanos,
    /// Overload on real threads (--real): length of every run, transient (the burst 2s..3s, then
    /// recovery) and permanent; RT throttling and admission are switched off for these runs.
    #[arg(long, default_value = "5s", value_parser = parse_nanos)]
    pub real_overload_duration: Nanos,
    /// Locking: processor time of one lock or unlock under IPCP (raising or restoring a
    /// priority); DFP pays it plus --clock-read-cost.
    #[arg(long, default_value = "2us", value_parser = parse_nanos)]
    pub lock_cost: Nanos,
    /// Locking: the clock read DFP adds to every lock and unlock (now + floor).
    #[arg(long, default_value = "1us", value_parser = parse_nanos)]
    pub clock_read_cost: Nanos,
    #[command(flatten)]
    pub save: SaveFlags,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
}

/// A section of the study (paper 001's questions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Highest schedulable utilization per task-set type.
    Utilization,
    /// Transient and permanent overload.
    Overload,
    /// IPCP against DFP.
    Locking,
}

fn parse_section(text: &str) -> Result<Section, String> {
    match text.trim() {
        "utilization" => Ok(Section::Utilization),
        "overload" => Ok(Section::Overload),
        "locking" => Ok(Section::Locking),
        other => Err(format!(
            "`{}`: use utilization, overload or locking",
            printable(other)
        )),
    }
}

/// `50`, `50%` or `50.5`: a load in percent, held in ppm.
fn parse_percent(text: &str) -> Result<u64, String> {
    let number = text.trim().trim_end_matches('%');
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage like 50 or 50%"))?;
    if !(value > 0.0 && value <= 1000.0) {
        return Err(format!(
            "`{text}`: use a percentage above 0 and at most 1000"
        ));
    }
    let ppm = (value * 1e4).round() as u64;
    if ppm == 0 {
        return Err(format!("`{text}`: the smallest load is 0.0001%"));
    }
    Ok(ppm)
}

/// `implicit/mid`, ...
fn parse_type(text: &str) -> Result<SetType, String> {
    SET_TYPES
        .into_iter()
        .find(|t| t.name() == text.trim())
        .ok_or_else(|| {
            let names: Vec<String> = SET_TYPES.iter().map(|t| t.name()).collect();
            format!("`{}`: use {}", printable(text), names.join(", "))
        })
}

/// Runs `rtlab study ...`.
pub fn run(command: &StudyCommand) -> anyhow::Result<ExitCode> {
    match command {
        StudyCommand::EdfVsFps(args) => edf_vs_fps(args),
        StudyCommand::GlobalVsPartitioned(args) => global_vs_partitioned(args),
    }
}

fn global_vs_partitioned(args: &GvpArgs) -> anyhow::Result<ExitCode> {
    args.kernel.needs(args.real, "--real")?;
    use rtlab_study::global_partitioned::{self as gvp, GvpConfig};
    let cpus: Vec<usize> = match args.cpus.trim().parse::<usize>() {
        Ok(m) if !args.cpus.contains(',') => (0..m).collect(),
        _ => args
            .cpus
            .split(',')
            .map(|c| c.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                usage(format!(
                    "--cpus `{}`: give a count (2) or a list (0,1)",
                    printable(&args.cpus)
                ))
            })?,
    };
    if cpus.is_empty() || cpus.len() > 64 {
        return Err(usage(format!(
            "--cpus `{}`: use 1 to 64 CPUs",
            printable(&args.cpus)
        )));
    }
    for (flag, v) in [
        ("--from", args.from),
        ("--to", args.to),
        ("--step", args.step),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(usage(format!("{flag} {v}: give a utilization above 0")));
        }
    }
    if args.to < args.from {
        return Err(usage(format!(
            "--to {} is below --from {}",
            args.to, args.from
        )));
    }
    if args.duration == Nanos::ZERO {
        return Err(usage("invalid --duration 0s: must be more than 0"));
    }
    let _measuring = if args.real {
        if rtlab_sys::resource::geteuid() != 0 {
            anyhow::bail!(
                "--real runs SCHED_DEADLINE and SCHED_FIFO threads on several CPUs and makes exclusive cpusets: \
                 it needs root (run it with sudo, or without --real)"
            );
        }
        let online = rtlab_host::platform::online_cpus();
        let allowed = rtlab_host::policy::allowed_cpus()?;
        rtlab_rt::executor::placement::check_cpus(&cpus, &online, &allowed)
            .map_err(|e| anyhow::anyhow!(crate::usage::naming_the_flag(&e)))?;
        interrupt::install_interrupt_flag();
        let lock = args.cpu_lock.hold(Some(&cpus))?;
        restore_left_state_first();
        Some(lock)
    } else {
        None
    };
    let config = GvpConfig {
        cpus,
        tasks: args.tasks as usize,
        sets: args.sets,
        from: args.from,
        to: args.to,
        step: args.step,
        seed: args.seed,
        duration: args.duration,
        real: args.real,
        no_rt_throttling: args.no_rt_throttling,
        kernel_trace: args.kernel.request_per_run(),
    };
    let flag = interrupt::install_interrupt_flag();
    let doc = gvp::run(&config, flag, &|line| say(line)).map_err(|e| match e {
        gvp::GvpError::Setting(why) => usage(why),
        other => anyhow::Error::from(other).context("rtlab study global-vs-partitioned"),
    })?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", rtlab_report::global_partitioned::describe(&doc));
        out!(
            "{}",
            rtlab_report::kernel_trace::runs_text(&doc.kernel_traces)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The loads; `to` below `from` is a usage error naming both flags.
fn loads(from: u64, step: u64, to: u64, names: [&str; 2]) -> anyhow::Result<LoadSteps> {
    if to < from {
        return Err(usage(format!(
            "{} {}% is below {} {}%",
            names[1],
            to as f64 / 1e4,
            names[0],
            from as f64 / 1e4
        )));
    }
    Ok(LoadSteps {
        from_ppm: from,
        step_ppm: step,
        to_ppm: to,
    })
}

fn edf_vs_fps(args: &EdfVsFpsArgs) -> anyhow::Result<ExitCode> {
    args.kernel.needs(args.real, "--real")?;
    let trace = args.kernel.request_per_run();
    // Both real parts (the utilization sweep and the overload) measure on
    // one CPU: held from the first to the last.
    let _measuring = if args.real {
        interrupt::install_interrupt_flag();
        let cpu = args.real_series.cpu();
        Some(args.cpu_lock.hold(Some(&[cpu]))?)
    } else {
        None
    };
    let types = if args.types.is_empty() {
        SET_TYPES.to_vec()
    } else {
        args.types.clone()
    };
    let config = UtilizationConfig {
        sets: args.sets,
        tasks: args.tasks as usize,
        seed: args.seed,
        loads: loads(args.from, args.step, args.to, ["--from", "--to"])?,
        duration: args.duration,
        types: types.clone(),
    };
    let real_loads = loads(
        args.real_from,
        args.real_step,
        args.real_to,
        ["--real-from", "--real-to"],
    )?;
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--plot: cannot create {}", dir.display()))?;
    }
    if args.real && rtlab_sys::resource::geteuid() != 0 {
        anyhow::bail!(
            "--real runs SCHED_DEADLINE and SCHED_FIFO threads pinned to one CPU and changes kernel \
             settings for it: it needs root (run it with sudo, or without --real)"
        );
    }
    let sections = if args.sections.is_empty() {
        vec![Section::Utilization, Section::Overload, Section::Locking]
    } else {
        args.sections.clone()
    };
    let overload_config = overload_config(args);
    let locking_config = LockingConfig {
        priority_change_cost: args.lock_cost,
        clock_read_cost: args.clock_read_cost,
        ..LockingConfig::default()
    };
    if sections.contains(&Section::Overload) {
        overload::check(&overload_config).map_err(|e| overload_error(e, args))?;
    }
    let saver = args.save.begin(rtlab_store::RunKind::Study, None)?;
    let mut failure = None;
    let utilization = if sections.contains(&Section::Utilization) {
        let simulated = utilization::simulate(&config).map_err(section_error)?;
        // A real run that fails loses nothing simulated: the document is
        // printed without it, then the error.
        let real = if args.real {
            match real_part(args, &types, real_loads, trace.clone()) {
                Ok(real) => Some(real),
                Err(e) => {
                    failure = Some(e);
                    None
                }
            }
        } else {
            None
        };
        Some(UtilizationPart { simulated, real })
    } else {
        None
    };
    let overload = if sections.contains(&Section::Overload) {
        let simulated = overload::run(&mut SimRunner::new(), &overload_config)
            .map_err(|e| overload_error(e, args))?;
        let real = args
            .real
            .then(|| real_overload(args, &overload_config, trace.clone()));
        Some(OverloadPart { simulated, real })
    } else {
        None
    };
    let locking = if sections.contains(&Section::Locking) {
        Some(locking::run(&locking_config).map_err(|e| usage(e.to_string()))?)
    } else {
        None
    };
    let doc = StudyDocument {
        study: "edf-vs-fps",
        utilization,
        overload,
        locking,
        // Real runs check the flag, so it says whether one was cut short.
        interrupted: args.real && interrupt::interrupted(),
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", study_text::describe(&doc));
        for part in doc.utilization.iter().flat_map(|u| &u.real) {
            out!(
                "{}",
                rtlab_report::kernel_trace::runs_text(&part.kernel_traces)
            );
        }
        for part in doc.overload.iter().flat_map(|o| &o.real) {
            out!(
                "{}",
                rtlab_report::kernel_trace::runs_text(&part.kernel_traces)
            );
        }
    }
    let document = serde_json::to_value(&doc)?;
    if let Some(path) = &args.csv {
        write_csv(path, &doc)?;
    }
    if let Some(dir) = &args.plot {
        write_plots(dir, &document)?;
    }
    let interrupted = doc.interrupted;
    if let Some(saver) = saver {
        saver.finish(&document, interrupted || failure.is_some())?;
    }
    match failure {
        Some(e) => Err(e.context("rtlab study edf-vs-fps --real")),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The overload section's settings: the library's defaults (one generated
/// set of 10 tasks at 80 %, periods 10-100 ms) with the seed, levels and
/// run length of the command line.
fn overload_config(args: &EdfVsFpsArgs) -> OverloadConfig {
    let mut config = OverloadConfig {
        duration: args.overload_duration,
        ..OverloadConfig::default()
    };
    if let overload::BaseSet::Generated(g) = &mut config.base {
        g.seed = args.seed;
    }
    if !args.overload_levels.is_empty() {
        config.levels_ppm = args.overload_levels.clone();
    }
    config
}

/// Transient and permanent overload on real threads (EDF = SCHED_DEADLINE,
/// FPS = SCHED_FIFO DM; the hybrid has no Linux counterpart), beside the
/// simulation of the same runs. Loads of 100 % and more need SCHED_DEADLINE
/// admission control (0.90 here) and RT throttling (0.95) off, so each real
/// run switches them off (restored after it) and the note says so. A
/// failure is kept as the note: nothing simulated is lost.
fn real_overload(
    args: &EdfVsFpsArgs,
    base: &OverloadConfig,
    trace: Option<KernelTrace>,
) -> RealOverload {
    let why = format!(
        "RT throttling and SCHED_DEADLINE admission switched off for each run (sched_rt_runtime_us = -1, restored after): loads of 100 % and more need more of the CPU than SCHED_DEADLINE admission (0.90) or SCHED_FIFO throttling (0.95) leave{}",
        if args.real_series.no_rt_throttling { "" } else { " (as --no-rt-throttling would)" }
    );
    say(&format!("note: real overload runs: {why}"));
    let config = OverloadConfig {
        duration: args.real_overload_duration,
        profiles: Profile::ALL.to_vec(),
        schedulers: vec![EDF, FPS],
        recovery_resolution: None,
        ..base.clone()
    };
    let simulated = match overload::run(&mut SimRunner::new(), &config) {
        Ok(s) => s,
        Err(e) => {
            return RealOverload {
                note: Some(e.to_string()),
                simulated: None,
                measured: None,
                kernel_traces: Vec::new(),
            }
        }
    };
    let flag = interrupt::install_interrupt_flag();
    let cpu = args.real_series.cpu();
    restore_left_state_first();
    let (mut runner, traced) =
        rtlab_study::real::runner(cpu, true, args.real_series.cooldown, flag, say, trace);
    let ran = overload::run(&mut runner, &config);
    let kernel_traces = traced.take();
    match ran {
        Ok(measured) => RealOverload {
            note: Some(why),
            simulated: Some(simulated),
            measured: Some(measured),
            kernel_traces,
        },
        Err(e) => RealOverload {
            note: Some(format!("{e} ({why})")),
            simulated: Some(simulated),
            measured: None,
            kernel_traces,
        },
    }
}

/// A bad overload setting is a usage error naming its flag; anything else
/// fails.
fn overload_error(e: overload::OverloadError, args: &EdfVsFpsArgs) -> anyhow::Error {
    match e {
        overload::OverloadError::Config {
            setting: "burst" | "duration",
            message,
        } => usage(format!(
            "--overload-duration {}: {message} (the transient burst is 2s..3s)",
            args.overload_duration
        )),
        overload::OverloadError::Config {
            setting: "levels",
            message,
        } => usage(format!("--overload-levels: {message}")),
        other => anyhow::anyhow!("{other}"),
    }
}

/// A bad setting is a usage error naming the flag; anything else fails.
fn section_error(e: utilization::UtilizationError) -> anyhow::Error {
    match e {
        utilization::UtilizationError::Setting(m) => usage(m),
        other => anyhow::anyhow!("{other}"),
    }
}

/// The search on real threads, and the simulation of the same sets with the
/// same loads and run length.
fn real_part(
    args: &EdfVsFpsArgs,
    types: &[SetType],
    loads: LoadSteps,
    trace: Option<KernelTrace>,
) -> anyhow::Result<RealPart> {
    let mut skipped_types = Vec::new();
    let runnable: Vec<SetType> = types
        .iter()
        .copied()
        .filter(|t| {
            let longest = t.periods.range().1;
            let fits = longest.as_ns().saturating_mul(2) <= args.real_duration.as_ns();
            if !fits {
                skipped_types.push(format!(
                    "{}: periods up to {longest} need runs of at least {} (--real-duration {})",
                    t.name(),
                    Nanos::from_ns(longest.as_ns() * 2),
                    args.real_duration
                ));
            }
            fits
        })
        .collect();
    let config = UtilizationConfig {
        sets: args.real_sets,
        tasks: args.tasks as usize,
        seed: args.seed,
        loads,
        duration: Some(args.real_duration),
        types: runnable,
    };
    let simulated = utilization::simulate(&config).map_err(section_error)?;
    let cpu = args.real_series.cpu();
    let throttling = RtThrottling::read().ok();
    let flag = interrupt::install_interrupt_flag();
    restore_left_state_first();
    let (mut runner, traced) = rtlab_study::real::runner(
        cpu,
        args.real_series.no_rt_throttling,
        args.real_series.cooldown,
        flag,
        say,
        trace,
    );
    let measured = utilization::run(&config, &mut runner).map_err(section_error)?;
    let interrupted = flag.load(Ordering::Relaxed);
    if interrupted {
        say("interrupted: the searches after the interrupt were cut short (marked refused: interrupted)");
    }
    Ok(RealPart {
        cpu,
        rt_throttling: throttling.map_or("unknown".into(), |t| t.describe_limit()),
        no_rt_throttling: args.real_series.no_rt_throttling,
        skipped_types,
        interrupted,
        simulated,
        measured,
        kernel_traces: traced.take(),
    })
}

/// `--csv DIR` writes one file per section; `--csv FILE` the first
/// section's (utilization, else overload, else locking).
fn write_csv(path: &Path, doc: &StudyDocument) -> anyhow::Result<()> {
    let as_dir = path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/');
    let csvs = study_text::section_csvs(doc);
    if as_dir {
        std::fs::create_dir_all(path)
            .with_context(|| format!("--csv: cannot create {}", path.display()))?;
        for (name, text) in csvs {
            let file = path.join(name);
            rtlab_model::file::write_output(&file, text)
                .with_context(|| format!("--csv: cannot write {}", file.display()))?;
        }
        Ok(())
    } else {
        let text = csvs.into_iter().next().map(|(_, t)| t).unwrap_or_default();
        rtlab_model::file::write_output(path, text)
            .with_context(|| format!("--csv: cannot write {}", path.display()))
    }
}

/// One SVG per figure of the study's report view, named after it.
fn write_plots(dir: &Path, document: &serde_json::Value) -> anyhow::Result<()> {
    let run = RunView::unsaved("study", document.clone());
    for figure in rtlab_report::figures::figures(&run) {
        let svg = figure
            .svg
            .map_err(|why| anyhow::anyhow!("--plot: {}: {why}", figure.title))?;
        let name: String = figure
            .title
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        let path = dir.join(format!("{name}.svg"));
        rtlab_model::file::write_output(&path, svg)
            .with_context(|| format!("--plot: cannot write {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_to_ppm() {
        assert_eq!(parse_percent("50"), Ok(500_000));
        assert_eq!(parse_percent("50%"), Ok(500_000));
        assert_eq!(parse_percent("0.5"), Ok(5_000));
        for bad in ["0", "-1", "x", "", "2000"] {
            assert!(parse_percent(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_type("implicit/mid"), Ok(SET_TYPES[4]));
        assert!(parse_type("implicit/long")
            .unwrap_err()
            .contains("implicit/mid"));
    }
}
