//! `rtlab study edf-vs-fps`: paper 001's EDF-versus-FPS study (crate
//! `rtlab-study`): the highest schedulable utilization per task-set type in
//! the simulator and, with `--real`, on real threads (SCHED_DEADLINE for
//! EDF, SCHED_FIFO at deadline-monotonic priorities for FPS, pinned to one
//! CPU, through `rtlab-rt`'s executor) side by side with the simulation of
//! the same sets.
//!
//! JSON document: `{"study": "edf-vs-fps", "utilization": {"simulated":
//! SECTION, "real": null | {"cpu", "rt_throttling", "no_rt_throttling",
//! "skipped_types", "interrupted", "simulated": SECTION, "measured":
//! SECTION}}}`, a SECTION being `rtlab_study::utilization::UtilizationSection`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use clap::{Args, Subcommand};
use rtlab_model::{printable, Nanos, TaskSet};
use rtlab_report::study_text;
use rtlab_report::table;
use rtlab_report::view::RunView;
use rtlab_rt::executor::{self, JobRecord, JobSink, RunConfig, RunPolicy};
use rtlab_rt::{interrupt, RtError, RtThrottling};
use rtlab_sim::Scale;
use rtlab_study::locking::{self, LockingConfig, LockingSection};
use rtlab_study::overload::{self, OverloadConfig, OverloadSection, Profile};
use rtlab_study::runner::{RunCounts, RunSpec, SimRunner, StudyRunner, StudyScheduler, TaskCounts};
use rtlab_study::utilization::{
    self, LoadSteps, RunRefusal, SetType, TypeResult, UtilizationConfig, UtilizationSection,
    SET_TYPES,
};
use serde::Serialize;

use crate::flags::parse_nanos;
use crate::save::SaveFlags;
use crate::setup::{pause, restore_left_state_first, say};
use crate::usage::usage;

/// `rtlab study ...`
#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Paper 001: EDF against fixed priorities (DM), changing only the scheduler.
    #[command(after_help = EXAMPLES)]
    EdfVsFps(EdfVsFpsArgs),
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
    /// Pause between two real runs (lets RT throttling and SCHED_DEADLINE bandwidth recover).
    #[arg(long, default_value = "250ms", value_parser = parse_nanos)]
    pub cooldown: Nanos,
    /// The CPU every real task thread is pinned to (default: 1, or the first allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Switch RT throttling and SCHED_DEADLINE admission control off for each real run
    /// (sched_rt_runtime_us = -1, restored afterwards), so loads above 0.90-0.95 are run.
    #[arg(long)]
    pub no_rt_throttling: bool,
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
    /// Overload on real threads (--real --no-rt-throttling): length of every run (permanent
    /// profile only).
    #[arg(long, default_value = "2s", value_parser = parse_nanos)]
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

/// The whole document.
#[derive(Debug, Serialize)]
struct StudyDocument {
    study: &'static str,
    utilization: Option<UtilizationPart>,
    overload: Option<OverloadPart>,
    locking: Option<LockingSection>,
}

#[derive(Debug, Serialize)]
struct OverloadPart {
    simulated: OverloadSection,
    real: Option<RealOverload>,
}

/// The permanent-overload runs on real threads, beside the simulation of
/// the same runs (or why they were not made).
#[derive(Debug, Serialize)]
struct RealOverload {
    /// Why they were not made, or why they stopped.
    note: Option<String>,
    simulated: Option<OverloadSection>,
    measured: Option<OverloadSection>,
}

#[derive(Debug, Serialize)]
struct UtilizationPart {
    simulated: UtilizationSection,
    real: Option<RealPart>,
}

/// The real-thread search beside the simulation of the same sets.
#[derive(Debug, Serialize)]
struct RealPart {
    cpu: usize,
    rt_throttling: String,
    no_rt_throttling: bool,
    /// Types not run on real threads, with why.
    skipped_types: Vec<String>,
    interrupted: bool,
    simulated: UtilizationSection,
    measured: UtilizationSection,
}

/// Runs `rtlab study ...`.
pub fn run(command: &StudyCommand) -> anyhow::Result<ExitCode> {
    match command {
        StudyCommand::EdfVsFps(args) => edf_vs_fps(args),
    }
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
    if args.real && rtlab_rt::sys::resource::geteuid() != 0 {
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
            match real_part(args, &types, real_loads) {
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
        let simulated =
            overload::run(&mut SimRunner, &overload_config).map_err(|e| overload_error(e, args))?;
        let real = args.real.then(|| real_overload(args, &overload_config));
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
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", describe(&doc));
    }
    let document = serde_json::to_value(&doc)?;
    if let Some(path) = &args.csv {
        write_csv(path, &doc)?;
    }
    if let Some(dir) = &args.plot {
        write_plots(dir, &document)?;
    }
    let interrupted = doc
        .utilization
        .as_ref()
        .and_then(|u| u.real.as_ref())
        .is_some_and(|r| r.interrupted);
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

/// Permanent overload on real threads (EDF = SCHED_DEADLINE, FPS =
/// SCHED_FIFO DM; transient bursts and the hybrid have no Linux
/// counterpart), beside the simulation of the same runs. Loads above 0.90
/// need SCHED_DEADLINE admission and RT throttling off, so without
/// `--no-rt-throttling` nothing is run and the note says why. A failure is
/// kept as the note: nothing simulated is lost.
fn real_overload(args: &EdfVsFpsArgs, base: &OverloadConfig) -> RealOverload {
    if !args.no_rt_throttling {
        return RealOverload {
            note: Some(
                "not run: loads of 100 % and more on real threads need SCHED_DEADLINE admission \
                 control and RT throttling off (add --no-rt-throttling)"
                    .into(),
            ),
            simulated: None,
            measured: None,
        };
    }
    let config = OverloadConfig {
        duration: args.real_overload_duration,
        profiles: vec![Profile::Permanent],
        schedulers: vec![StudyScheduler::Edf, StudyScheduler::Fps],
        recovery_resolution: None,
        ..base.clone()
    };
    let simulated = match overload::run(&mut SimRunner, &config) {
        Ok(s) => s,
        Err(e) => {
            return RealOverload {
                note: Some(e.to_string()),
                simulated: None,
                measured: None,
            }
        }
    };
    restore_left_state_first();
    let flag = interrupt::install_interrupt_flag();
    let mut runner = RealRunner {
        cpu: args.cpu.unwrap_or_else(executor::default_cpu),
        no_rt_throttling: true,
        cooldown: args.cooldown,
        flag,
        first: true,
    };
    match overload::run(&mut runner, &config) {
        Ok(measured) => RealOverload {
            note: None,
            simulated: Some(simulated),
            measured: Some(measured),
        },
        Err(e) => RealOverload {
            note: Some(e.to_string()),
            simulated: Some(simulated),
            measured: None,
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
fn real_part(args: &EdfVsFpsArgs, types: &[SetType], loads: LoadSteps) -> anyhow::Result<RealPart> {
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
    let cpu = args.cpu.unwrap_or_else(executor::default_cpu);
    let throttling = RtThrottling::read().ok();
    restore_left_state_first();
    let flag = interrupt::install_interrupt_flag();
    let mut runner = RealRunner {
        cpu,
        no_rt_throttling: args.no_rt_throttling,
        cooldown: args.cooldown,
        flag,
        first: true,
    };
    let measured = utilization::run(&config, &mut runner).map_err(section_error)?;
    let interrupted = flag.load(Ordering::Relaxed);
    if interrupted {
        say("interrupted: the searches after the interrupt were cut short (marked refused: interrupted)");
    }
    Ok(RealPart {
        cpu,
        rt_throttling: throttling.map_or("unknown".into(), |t| t.describe_limit()),
        no_rt_throttling: args.no_rt_throttling,
        skipped_types,
        interrupted,
        simulated,
        measured,
    })
}

/// Runs sets on real threads through the executor: EDF as SCHED_DEADLINE
/// (runtime C plus the executor's margin, deadline D, period T), FPS as
/// SCHED_FIFO at deadline-monotonic priorities; pinned to one CPU; a late
/// job runs on (continue). No hybrid, no overload phases.
struct RealRunner {
    cpu: usize,
    no_rt_throttling: bool,
    cooldown: Nanos,
    flag: &'static AtomicBool,
    first: bool,
}

/// Why a real run was not made.
#[derive(Debug)]
enum RealError {
    /// SCHED_DEADLINE admission refused the set (its bandwidth is above
    /// what the kernel admits: 0.90 of a CPU on Linux 6.12+).
    Refused(String),
    /// Ctrl-C.
    Interrupted,
    /// Anything else: fatal.
    Failed(String),
}

impl std::fmt::Display for RealError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RealError::Refused(why) => write!(f, "refused: {why}"),
            RealError::Interrupted => f.write_str("interrupted"),
            RealError::Failed(why) => f.write_str(why),
        }
    }
}

impl RunRefusal for RealError {
    fn refusal(&self) -> Option<String> {
        match self {
            RealError::Refused(_) | RealError::Interrupted => Some(self.to_string()),
            RealError::Failed(_) => None,
        }
    }
}

/// Counts, per task, the jobs that completed by their deadline (the
/// executor's writer thread calls it, off the real-time path).
struct OnTime(Arc<Mutex<Vec<u64>>>);

impl JobSink for OnTime {
    fn job(&mut self, job: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        if job.finish.is_some_and(|f| f <= job.deadline) {
            let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(c) = counts.get_mut(job.task) {
                *c += 1;
            }
        }
        Ok(())
    }
}

impl StudyRunner for RealRunner {
    type Error = RealError;

    /// No hybrid; no phases but one that covers the whole run (a permanent
    /// overload), which is the set with every C scaled as the simulator
    /// scales it.
    fn supports(&self, scheduler: StudyScheduler, spec: &RunSpec) -> bool {
        scheduler != StudyScheduler::Hybrid && whole_run_scale(spec).is_some()
    }

    fn run(
        &mut self,
        set: &TaskSet,
        scheduler: StudyScheduler,
        spec: &RunSpec,
    ) -> Result<RunCounts, RealError> {
        if !self.supports(scheduler, spec) {
            return Err(RealError::Failed(format!(
                "real threads cannot run {} with overload phases or the hybrid",
                scheduler.name()
            )));
        }
        let scaled;
        let set = match whole_run_scale(spec) {
            Some(Some(scale)) => {
                scaled = scale_like_the_simulator(set, scale);
                &scaled
            }
            _ => set,
        };
        let spec = &RunSpec {
            duration: spec.duration,
            phases: Vec::new(),
        };
        if !std::mem::take(&mut self.first) {
            pause(self.cooldown, self.flag);
        }
        if self.flag.load(Ordering::Relaxed) {
            return Err(RealError::Interrupted);
        }
        let policy = match scheduler {
            StudyScheduler::Edf => RunPolicy::Edf,
            _ => RunPolicy::DeadlineMonotonic,
        };
        let mut cfg = RunConfig::new(spec.duration, policy);
        cfg.cpu = Some(self.cpu);
        cfg.no_rt_throttling = self.no_rt_throttling;
        let on_time = Arc::new(Mutex::new(vec![0u64; set.tasks.len()]));
        let sinks: Vec<Box<dyn JobSink>> = vec![Box::new(OnTime(Arc::clone(&on_time)))];
        let report = match executor::run_recording(set, &cfg, self.flag, sinks) {
            Ok((report, _)) => report,
            Err(e @ (RtError::DeadlineAdmission { .. } | RtError::DeadlineOverLimit { .. })) => {
                say(&format!(
                    "{} at U {:.1}% under {}: refused by SCHED_DEADLINE admission",
                    set.name,
                    set.utilization() * 100.0,
                    scheduler.name()
                ));
                return Err(RealError::Refused(e.to_string()));
            }
            Err(e) => return Err(RealError::Failed(e.to_string())),
        };
        if report.interrupted {
            return Err(RealError::Interrupted);
        }
        if !report.lost_tasks.is_empty() {
            return Err(RealError::Failed(format!(
                "the threads of {} did not report back in time",
                report.lost_tasks.join(", ")
            )));
        }
        if report.jobs_dropped > 0 {
            return Err(RealError::Failed(format!(
                "{} job records were dropped, so the regular completions cannot be counted",
                report.jobs_dropped
            )));
        }
        say(&format!(
            "{} at U {:.1}% under {}: {} misses of {} jobs",
            set.name,
            set.utilization() * 100.0,
            scheduler.name(),
            report.deadline_misses,
            report.released
        ));
        let on_time = on_time.lock().unwrap_or_else(PoisonError::into_inner);
        let tasks = report
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| TaskCounts {
                name: t.metrics.name.clone(),
                released: t.metrics.released,
                regular_completions: on_time.get(i).copied().unwrap_or(0),
                deadline_misses: t.metrics.misses,
                preemptions: t.metrics.preemptions,
            })
            .collect();
        Ok(RunCounts { tasks })
    }
}

/// `Some(None)`: no phase; `Some(Some(scale))`: one phase over the whole
/// run that only scales execution times; `None`: anything else (real
/// threads cannot change a set in the middle of a run).
fn whole_run_scale(spec: &RunSpec) -> Option<Option<Scale>> {
    match spec.phases.as_slice() {
        [] => Some(None),
        [p] if p.start == Nanos::ZERO
            && p.end >= spec.duration
            && p.tasks.is_empty()
            && p.suspended.is_empty() =>
        {
            Some(Some(p.scale))
        }
        _ => None,
    }
}

/// `set` with every C scaled as the simulator scales a job in a phase:
/// `ceil(C * num / den)`, where a target utilization `L` is `num = L` over
/// `den` = the set's utilization (both in ppm).
fn scale_like_the_simulator(set: &TaskSet, scale: Scale) -> TaskSet {
    let (num, den) = match scale {
        Scale::Factor { num, den } => (num, den.max(1)),
        Scale::UtilizationPpm(ppm) => (ppm, (set.utilization() * 1e6).round().max(1.0) as u64),
    };
    let mut out = set.clone();
    for t in &mut out.tasks {
        let c = (u128::from(t.wcet.as_ns()) * u128::from(num)).div_ceil(u128::from(den));
        t.wcet = Nanos::from_ns(u64::try_from(c).unwrap_or(u64::MAX));
    }
    out
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}%"))
}

fn pp(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:+.2}"))
}

fn section_title(s: &UtilizationSection, world: &str) -> String {
    format!(
        "{world}: {} sets x {} tasks per type, seed {}, loads {}%..{}% step {}%, runs {}\n",
        s.sets,
        s.tasks,
        s.seed,
        s.loads.from_ppm as f64 / 1e4,
        s.loads.to_ppm as f64 / 1e4,
        s.loads.step_ppm as f64 / 1e4,
        s.duration_ns
            .map_or(s.duration_rule.clone(), |d| Nanos::from_ns(d).to_string()),
    )
}

/// RC, DM, PR of EDF, then of FPS; empty when no set was counted.
fn counts_cells(r: &TypeResult) -> Vec<String> {
    [(&r.edf, r.edf_counted_sets), (&r.fps, r.fps_counted_sets)]
        .into_iter()
        .flat_map(|(c, counted)| {
            [c.regular_completions, c.deadline_misses, c.preemptions].map(|n| {
                if counted > 0 {
                    n.to_string()
                } else {
                    String::new()
                }
            })
        })
        .collect()
}

/// The table rows of one section's types, each labelled with `world`.
fn add_rows(t: &mut comfy_table::Table, world: &str, types: &[TypeResult]) {
    for r in types {
        let mut row = vec![
            r.name.clone(),
            world.to_string(),
            pct(r.mean_hsu_edf),
            pct(r.mean_hsu_fps),
            pp(r.delta_hsu_pp),
            pct(r.max_cpu_load),
        ];
        row.extend(
            counts_cells(r)
                .into_iter()
                .map(|c| if c.is_empty() { "-".into() } else { c }),
        );
        row.push(format!(
            "{}{}",
            r.sets_capped,
            if r.sets_refused > 0 {
                format!(" ({} refused)", r.sets_refused)
            } else {
                String::new()
            }
        ));
        t.add_row(row);
    }
}

const HEADER: [&str; 13] = [
    "type", "world", "HSU EDF", "HSU FPS", "delta", "max load", "EDF RC", "EDF DM", "EDF PR",
    "FPS RC", "FPS DM", "FPS PR", "capped",
];

fn new_table() -> comfy_table::Table {
    table::new(&HEADER, &HEADER[2..])
}

/// The human summary: each section that ran.
fn describe(doc: &StudyDocument) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &doc.utilization {
        parts.push(describe_utilization(u));
    }
    if let Some(o) = &doc.overload {
        let mut text =
            String::from("EDF vs FPS (paper 001): overload, transient (a burst) and permanent\n");
        text.push_str(&study_text::overload_table(&o.simulated, "simulated"));
        if let Some(real) = &o.real {
            for (world, section) in [
                ("simulated like the real runs", &real.simulated),
                (
                    "real threads (EDF = SCHED_DEADLINE, FPS = SCHED_FIFO DM)",
                    &real.measured,
                ),
            ] {
                if let Some(section) = section {
                    text.push('\n');
                    text.push_str(&study_text::overload_table(section, world));
                }
            }
            if let Some(note) = &real.note {
                text.push_str(&format!("real threads: {note}\n"));
            }
        }
        parts.push(text);
    }
    if let Some(l) = &doc.locking {
        let mut text = String::from(
            "EDF vs FPS (paper 001): locking, IPCP under FPS against DFP under EDF (simulated: \
             Linux has no DFP)\n",
        );
        text.push_str(&study_text::locking_table(l));
        parts.push(text);
    }
    parts.join("\n")
}

/// The utilization section's tables.
fn describe_utilization(part: &UtilizationPart) -> String {
    let sim = &part.simulated;
    let mut out = String::from(
        "EDF vs FPS (paper 001): highest schedulable utilization (HSU) per task-set type\n",
    );
    out.push_str(&section_title(sim, "simulated"));
    let mut t = new_table();
    add_rows(&mut t, "sim", &sim.types);
    out.push_str(&table::render(&t));
    out.push_str(
        "\nHSU: mean over sets of the last load without a miss; delta: mean of HSU(EDF) - HSU(FPS), \
         percentage points; max load: highest HSU of either; RC/DM/PR: regular completions, \
         deadline misses, preemptions summed over sets, each at its decisive load (the first load at \
         which EDF or FPS missed, else the last both ran; `-`: no set ran there); capped: sets where \
         neither missed up to the last load.\n",
    );
    if let Some(real) = &part.real {
        out.push('\n');
        out.push_str(&section_title(&real.measured, "real threads"));
        out.push_str(&format!(
            "CPU {}, RT throttling {}{}; EDF = SCHED_DEADLINE, FPS = SCHED_FIFO at DM priorities; \
             beside the simulation of the same sets and loads\n",
            real.cpu,
            real.rt_throttling,
            if real.no_rt_throttling {
                " (switched off for each run)"
            } else {
                ""
            }
        ));
        let mut t = new_table();
        for (s, m) in real.simulated.types.iter().zip(&real.measured.types) {
            add_rows(&mut t, "sim", std::slice::from_ref(s));
            add_rows(&mut t, "real", std::slice::from_ref(m));
        }
        out.push_str(&table::render(&t));
        out.push('\n');
        for skipped in &real.skipped_types {
            out.push_str(&format!("not run on real threads: {skipped}\n"));
        }
        let refusals: Vec<String> = real
            .measured
            .types
            .iter()
            .flat_map(|r| &r.sets)
            .flat_map(|s| {
                [("edf", &s.edf), ("fps", &s.fps)]
                    .into_iter()
                    .filter_map(move |(name, search)| {
                        let why = search.refused.as_ref()?;
                        let at = search.hsu_ppm.map_or(String::from("the first load"), |h| {
                            format!("the load after {}%", h as f64 / 1e4)
                        });
                        Some(format!("{} {name}: {at}: {why}", s.name))
                    })
            })
            .collect();
        for r in &refusals {
            out.push_str(&format!("search ended: {r}\n"));
        }
        if !refusals.is_empty() && !real.no_rt_throttling {
            out.push_str(
                "note: SCHED_DEADLINE admits at most 0.90 of a CPU on Linux 6.12+ (0.95 RT limit minus \
                 the fair server's 0.05), so EDF loads above that are refused; --no-rt-throttling lifts \
                 the admission limit\n",
            );
        }
        if !real.no_rt_throttling {
            out.push_str(
                "note: SCHED_FIFO threads are throttled to 950 ms per second (RT throttling): FPS \
                 above 95 % misses for that reason too; --no-rt-throttling lifts it\n",
            );
        }
        if real.interrupted {
            out.push_str("note: interrupted: later searches were cut short\n");
        }
    }
    out
}

/// The utilization section's CSV: one row per type and world.
fn csv_text(part: &UtilizationPart) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "world",
        "type",
        "deadlines",
        "periods",
        "sets",
        "mean_hsu_edf",
        "mean_hsu_fps",
        "delta_hsu_pp",
        "max_cpu_load",
        "edf_rc",
        "edf_dm",
        "edf_pr",
        "fps_rc",
        "fps_dm",
        "fps_pr",
        "sets_capped",
        "sets_refused",
    ]);
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let mut sections = vec![("sim", &part.simulated)];
    if let Some(real) = &part.real {
        sections.push(("real-sim", &real.simulated));
        sections.push(("real", &real.measured));
    }
    for (world, s) in sections {
        for r in &s.types {
            let mut row = vec![
                world.to_string(),
                r.name.clone(),
                r.set_type.deadlines.name().to_string(),
                r.set_type.periods.name().to_string(),
                r.sets.len().to_string(),
                opt(r.mean_hsu_edf),
                opt(r.mean_hsu_fps),
                opt(r.delta_hsu_pp),
                opt(r.max_cpu_load),
            ];
            row.extend(counts_cells(r));
            row.extend([r.sets_capped.to_string(), r.sets_refused.to_string()]);
            let _ = w.write_record(row);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The CSV of each section that ran, named after it.
fn section_csvs(doc: &StudyDocument) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(u) = &doc.utilization {
        out.push(("utilization.csv", csv_text(u)));
    }
    if let Some(o) = &doc.overload {
        let mut worlds = vec![("sim", &o.simulated)];
        if let Some(real) = &o.real {
            if let Some(s) = &real.simulated {
                worlds.push(("real-sim", s));
            }
            if let Some(m) = &real.measured {
                worlds.push(("real", m));
            }
        }
        out.push(("overload.csv", study_text::overload_csv(&worlds)));
    }
    if let Some(l) = &doc.locking {
        out.push(("locking.csv", study_text::locking_csv(l)));
    }
    out
}

/// `--csv DIR` writes one file per section; `--csv FILE` the first
/// section's (utilization, else overload, else locking).
fn write_csv(path: &Path, doc: &StudyDocument) -> anyhow::Result<()> {
    let as_dir = path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/');
    let csvs = section_csvs(doc);
    if as_dir {
        std::fs::create_dir_all(path)
            .with_context(|| format!("--csv: cannot create {}", path.display()))?;
        for (name, text) in csvs {
            let file = path.join(name);
            std::fs::write(&file, text)
                .with_context(|| format!("--csv: cannot write {}", file.display()))?;
        }
        Ok(())
    } else {
        let text = csvs.into_iter().next().map(|(_, t)| t).unwrap_or_default();
        std::fs::write(path, text)
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
        std::fs::write(&path, svg)
            .with_context(|| format!("--plot: cannot write {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real permanent overload runs the set scaled as the simulator
    /// scales jobs in a whole-run phase: simulating both gives the same
    /// counts, job for job.
    #[test]
    fn a_whole_run_phase_is_the_scaled_set() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "pair",
            vec![
                rtlab_model::Task::new("a", ms(10), ms(3)),
                rtlab_model::Task::new("b", ms(15), ms(4)),
            ],
        );
        let duration = ms(300);
        for level in [900_000, 1_200_000, 1_500_000] {
            let phases = overload::profile::phases(
                Profile::Permanent,
                level,
                (Nanos::ZERO, Nanos::ZERO),
                duration,
            );
            let spec = RunSpec { duration, phases };
            let Some(Some(scale)) = whole_run_scale(&spec) else {
                panic!("a permanent profile is one whole-run phase");
            };
            let scaled = scale_like_the_simulator(&set, scale);
            for scheduler in [StudyScheduler::Edf, StudyScheduler::Fps] {
                let phased = SimRunner.run(&set, scheduler, &spec).unwrap();
                let plain = SimRunner
                    .run(
                        &scaled,
                        scheduler,
                        &RunSpec {
                            duration,
                            phases: Vec::new(),
                        },
                    )
                    .unwrap();
                assert_eq!(phased, plain, "{level} {scheduler:?}");
            }
        }
        // A burst in the middle of the run is not something real threads can do.
        let burst = RunSpec {
            duration,
            phases: overload::profile::phases(
                Profile::Transient,
                1_200_000,
                (ms(100), ms(200)),
                duration,
            ),
        };
        assert_eq!(whole_run_scale(&burst), None);
    }

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
