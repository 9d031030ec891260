//! `rtlab study edf-vs-fps`: argument parsing and wiring for paper 001's
//! EDF-versus-FPS study. The sections are `rtlab-study`'s (the real-thread
//! runner and the real parts too, `rtlab_study::real`,
//! `rtlab_study::real_parts`), the document is
//! `rtlab_study::document::StudyDocument`, its tables and CSV are
//! `rtlab_report::study_text`'s and its figures the report's.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_host::interrupt;
use rtlab_model::Nanos;
use rtlab_report::study_text;
use rtlab_report::view::RunView;
use rtlab_sim::runner::SimRunner;
use rtlab_study::document::{OverloadPart, Section, StudyDocument, UtilizationPart};
use rtlab_study::locking::{self, LockingConfig};
use rtlab_study::overload::{self, OverloadConfig};
use rtlab_study::real_parts::RealSeries;
use rtlab_study::utilization::{self, load_ppm, LoadSteps, SetType, UtilizationConfig, SET_TYPES};

use crate::flags::parse_nanos;
use crate::save::SaveFlags;
use crate::setup::{restore_left_state_first, say};
use crate::usage::usage;

pub const EXAMPLES: &str = "Examples:\n  \
    rtlab study edf-vs-fps --types implicit/mid\n  \
    rtlab study edf-vs-fps --types implicit/mid,constrained/mid --from 80 --step 2 --json\n  \
    rtlab study edf-vs-fps --types implicit/mid --from 90 --step 5 --csv out/ --plot out/\n  \
    rtlab study edf-vs-fps --types implicit/mid --from 90 --step 5 --real --real-step 10 --real-duration 500ms --cooldown 100ms\n\n\
    Highest schedulable utilization: random sets per type (deadlines constrained|implicit x periods\n\
    short-mid 1-100ms | mid 10-100ms | all 1ms-1s), every C scaled from --from to --to by --step until\n\
    the first miss, EDF and FPS (DM) separately. The guide: \"The EDF-versus-FPS study\".";

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
    #[arg(long, default_value = "50", value_parser = load_ppm)]
    pub from: u64,
    /// Load increment, percent.
    #[arg(long, default_value = "1", value_parser = load_ppm)]
    pub step: u64,
    /// Last load tried, percent.
    #[arg(long, default_value = "120", value_parser = load_ppm)]
    pub to: u64,
    /// Length of every simulated run (default: 5 x the set's longest period).
    #[arg(long, value_parser = parse_nanos)]
    pub duration: Option<Nanos>,
    /// The task-set types, comma separated (default: all six): constrained/short-mid,
    /// constrained/mid, constrained/all, implicit/short-mid, implicit/mid, implicit/all.
    #[arg(long, value_delimiter = ',')]
    pub types: Vec<SetType>,
    /// Also run the search on real threads (root): EDF under SCHED_DEADLINE, FPS under
    /// SCHED_FIFO at DM priorities, pinned to one CPU, beside the simulation of the same sets.
    #[arg(long)]
    pub real: bool,
    /// Sets per type on real threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000))]
    pub real_sets: u64,
    /// First load on real threads, percent.
    #[arg(long, default_value = "80", value_parser = load_ppm)]
    pub real_from: u64,
    /// Load increment on real threads, percent.
    #[arg(long, default_value = "5", value_parser = load_ppm)]
    pub real_step: u64,
    /// Last load on real threads, percent.
    #[arg(long, default_value = "110", value_parser = load_ppm)]
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
    #[arg(long, value_delimiter = ',')]
    pub sections: Vec<Section>,
    /// Overload: the load levels, percent, comma separated (default 100,110,...,150).
    #[arg(long, value_delimiter = ',', value_parser = load_ppm)]
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
    pub isolate: crate::setup::IsolateFlags,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
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

/// Runs `rtlab study edf-vs-fps`.
pub fn run(args: &EdfVsFpsArgs) -> anyhow::Result<ExitCode> {
    args.kernel.needs(args.real, "--real")?;
    let trace = args.kernel.request_per_run();
    // Both real parts (the utilization sweep and the overload) measure on
    // one CPU: held from the first to the last.
    let _measuring = if args.real {
        interrupt::install_interrupt_flag();
        let cpu = args.real_series.cpu();
        args.isolate.check(&[cpu])?;
        let lock = args.cpu_lock.hold(Some(&[cpu]))?;
        restore_left_state_first();
        Some((lock, args.isolate.raise(&[cpu])?))
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
            restore_left_state_first();
            let parts = rtlab_study::real_parts::utilization_part(
                &types,
                (args.real_sets, args.tasks as usize, args.seed),
                real_loads,
                args.real_duration,
                real_series(args),
                interrupt::install_interrupt_flag(),
                say,
                trace.clone(),
            );
            match parts.map_err(section_error) {
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
        let real = args.real.then(|| {
            restore_left_state_first();
            rtlab_study::real_parts::overload_part(
                &overload_config,
                args.real_overload_duration,
                real_series(args),
                interrupt::install_interrupt_flag(),
                say,
                trace.clone(),
            )
        });
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

/// How the real runs are made: `--cpu`, `--no-rt-throttling`, `--cooldown`.
fn real_series(args: &EdfVsFpsArgs) -> RealSeries {
    RealSeries {
        cpu: args.real_series.cpu(),
        no_rt_throttling: args.real_series.no_rt_throttling,
        cooldown: args.real_series.cooldown,
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
    for (name, svg) in rtlab_report::figures::named_svgs(&run) {
        let svg = svg.map_err(|why| anyhow::anyhow!("--plot: {why}"))?;
        let path = dir.join(name);
        rtlab_model::file::write_output(&path, svg)
            .with_context(|| format!("--plot: cannot write {}", path.display()))?;
    }
    Ok(())
}
