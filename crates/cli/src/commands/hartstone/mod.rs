//! `rtlab hartstone`: the Hartstone PH tests 1-4 and the extended Hartstone
//! (paper 002 chapter 4) in the simulator (`--scheduler`) and on real
//! threads (`--policy`), ranked side by side. The benchmark is library code
//! (`rtlab_model::hartstone`, `rtlab_sim::hartstone`, `rtlab_rt::hartstone`);
//! this is flags and printing.
//!
//! The document (`--json`, its schema) is
//! [`rtlab_model::hartstone::document::HartstoneDocument`]; the text and CSV
//! are `rtlab_report::hartstone_text`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rtlab_model::hartstone::document::HartstoneDocument as Document;
use rtlab_model::hartstone::{
    self, extended_profile, ExtendedProfile, HartstoneTest, TestConfig, DEFAULT_MAX_ITERATIONS,
};
use rtlab_model::policy::{RunPolicy, RUN_POLICIES};
use rtlab_model::{printable, Nanos};
use rtlab_report::hartstone_text::{csv, human};
use rtlab_rt::work::FixedWork;
use rtlab_sim::{MissRule, SchedulerSpec};
use rtlab_study::hartstone::{rankings, simulated_extended_ticked, simulated_series_ticked};

mod dispatched;
mod real;

use crate::flags::parse_nanos;
use crate::setup::say;
use crate::usage::usage;

/// Length of one iteration by default: the original Hartstone's experiment
/// (Weiderman & Kamenoff 1992 run each experiment for 10 s; Golchin 2017 does
/// not state its window).
pub const DEFAULT_ITERATION: &str = "10s";

/// Examples shown by `rtlab hartstone --help`.
pub const EXAMPLES: &str = "Examples:\n  \
    rtlab hartstone --test all --scheduler edf,fp:rm,rr:2ms,ipi,multiburst\n  \
    rtlab hartstone --test all --extended --scheduler edf,fp:rm,rr:2ms,ipi,multiburst\n  \
    rtlab hartstone --test 4 --policy rm,edf,rr --iteration-duration 2s\n  \
    rtlab hartstone --test 1,3 --scheduler edf,multiburst --json --plot hartstone.svg\n  \
    rtlab hartstone --test 1 --dispatcher -s rr:2ms,edf,ipi,multiburst --iteration-duration 1s --max-iterations 2\n  \
    rtlab hartstone --test 2 --dispatcher -s edf,ipi --tick 4ms --iteration-duration 1s --max-iterations 2\n\n\
    With --dispatcher each --scheduler runs on real threads through rtlab's dispatcher beside its\n\
    simulated series (with --tick both are ticked).";

/// Arguments of `rtlab hartstone`.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct HartstoneArgs {
    /// Tests to run: 1, 2, 3, 4 (comma-separated) or all.
    #[arg(long, default_value = "all")]
    pub test: String,
    /// Simulator schedulers, comma-separated (any `rtlab sim --scheduler`).
    #[arg(long, short = 's', value_delimiter = ',')]
    pub scheduler: Vec<String>,
    /// Real-thread policies, comma-separated: rm, edf (SCHED_DEADLINE), rr, fifo-order, other, dm.
    #[arg(long, short = 'P', value_delimiter = ',')]
    pub policy: Vec<String>,
    /// The extended Hartstone (120 s: 48 %, 120 % in [30, 45) s, 48 %) instead of the PH series;
    /// with --policy on real threads too (RT throttling and admission off for those runs).
    #[arg(long)]
    pub extended: bool,
    /// Length of the extended Hartstone run (default 120s, Golchin 2017's); the overload keeps its
    /// place, [1/4, 3/8) of it (e.g. 12s: overload in [3, 4.5) s).
    #[arg(long, value_parser = parse_nanos, default_value = "120s")]
    pub extended_length: Nanos,
    /// Execution time of one kilo-whet (default 1.25ms, Golchin 2017's busy wait).
    #[arg(long, value_parser = parse_nanos, conflicts_with = "calibrate")]
    pub kilo_whet: Option<Nanos>,
    /// Measure the kilo-whet on this machine (rtlab_rt::work::FixedWork, median of 7 passes).
    #[arg(long)]
    pub calibrate: bool,
    /// Length of each iteration (default 10s, the original Hartstone's experiment).
    #[arg(long, value_parser = parse_nanos, default_value = DEFAULT_ITERATION)]
    pub iteration_duration: Nanos,
    /// Iterations per test at most, when no miss ends it first.
    #[arg(long, default_value_t = DEFAULT_MAX_ITERATIONS)]
    pub max_iterations: u32,
    /// Deadline-miss rule: skip (Hartstone's count) or continue.
    #[arg(long, default_value = "skip")]
    pub on_miss: String,
    /// The CPU the real task threads are pinned to (default: 1, or the first allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Hard SCHED_DEADLINE budgets for --policy edf: no SCHED_FLAG_RECLAIM (GRUB), a job past
    /// C + margin is throttled (the guide: "Budgets and reclaiming").
    #[arg(long)]
    pub no_edf_reclaim: bool,
    /// Print the JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write one row per scheduler and test as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Draw iterations (extended: misses) per test and scheduler as SVG bars.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
    #[command(flatten)]
    pub dispatch: crate::dispatcher_flags::DispatcherFlags,
    #[command(flatten)]
    pub isolate: crate::setup::IsolateFlags,
    /// Let a real iteration's miss end the series at once; by default it is run once more first
    /// and ends the series only when the rerun misses too (guide: how-to/trust-a-real-result.md).
    #[arg(long)]
    pub no_confirm: bool,
}

fn parse_tests(text: &str) -> anyhow::Result<Vec<HartstoneTest>> {
    if text.trim() == "all" {
        return Ok(HartstoneTest::ALL.to_vec());
    }
    let mut tests = Vec::new();
    for part in text.split(',') {
        let test: HartstoneTest = part
            .parse()
            .map_err(|e: String| usage(format!("--test: {}", printable(&e))))?;
        if !tests.contains(&test) {
            tests.push(test);
        }
    }
    tests.sort();
    Ok(tests)
}

/// Runs `rtlab hartstone`.
pub fn run(args: &HartstoneArgs) -> anyhow::Result<std::process::ExitCode> {
    let tests = parse_tests(&args.test)?;
    if args.dispatch.dispatcher && args.scheduler.is_empty() {
        return Err(usage(
            "--dispatcher runs the --scheduler list on real threads: give --scheduler LIST",
        ));
    }
    if args.scheduler.is_empty() && args.policy.is_empty() {
        return Err(usage(
            "give --scheduler LIST (simulator), --policy LIST (real threads) or both",
        ));
    }
    let shortest_extended = Nanos::from_ns(hartstone::MIN_WINDOW.as_ns().saturating_mul(8));
    if args.extended && args.extended_length < shortest_extended {
        return Err(usage(format!(
            "--extended-length {}: use at least {shortest_extended} (the overload, 1/8 of the run, must hold a period of the baseline's longest task, {})",
            args.extended_length,
            hartstone::MIN_WINDOW
        )));
    }
    if args.iteration_duration < hartstone::MIN_WINDOW {
        return Err(usage(format!(
            "--iteration-duration {}: use at least {} (the baseline's longest period; in a shorter window no deadline of task 1 falls, so its misses would go uncounted)",
            args.iteration_duration,
            hartstone::MIN_WINDOW
        )));
    }
    if args.max_iterations == 0 {
        return Err(usage("--max-iterations must be at least 1"));
    }
    let specs: Vec<SchedulerSpec> = args
        .scheduler
        .iter()
        .map(|s| {
            s.parse::<SchedulerSpec>().map_err(|e| {
                usage(format!(
                    "--scheduler `{}`: {}",
                    printable(s),
                    printable(&e.to_string())
                ))
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let policies: Vec<RunPolicy> = args
        .policy
        .iter()
        .map(|p| {
            p.parse::<RunPolicy>()
                .map_err(|_| usage(format!("--policy `{}`: use {RUN_POLICIES}", printable(p))))
        })
        .collect::<anyhow::Result<_>>()?;
    if args.no_edf_reclaim && !policies.contains(&RunPolicy::Edf) {
        return Err(usage(
            "--no-edf-reclaim applies to --policy edf (SCHED_DEADLINE budgets)",
        ));
    }
    let sim_on_miss: MissRule = args.on_miss.parse().map_err(|_| {
        usage(format!(
            "--on-miss `{}`: use skip or continue",
            printable(&args.on_miss)
        ))
    })?;
    if sim_on_miss == MissRule::Abort {
        return Err(usage(
            "--on-miss abort: real threads cannot abort a job; use skip or continue",
        ));
    }
    let real_on_miss = sim_on_miss;
    // Refused before any real-time work (the calibration included).
    args.kernel.needs(
        !policies.is_empty() || args.dispatch.dispatcher,
        "--policy LIST or --dispatcher",
    )?;
    let dispatch = args
        .dispatch
        .config(args.scheduler.first().map_or("edf", String::as_str), "none")?;
    let (kilo_whet, kilo_whet_from) = match (args.kilo_whet, args.calibrate) {
        (Some(kw), _) if kw.is_zero() => return Err(usage("--kilo-whet must be longer than 0")),
        (Some(kw), _) => (kw, "flag"),
        (None, true) => {
            let work = FixedWork::calibrate(7);
            say(&format!(
                "calibrated: one kilo-whet (1/1000 of a Whetstone pass) takes {} of CPU time here",
                work.kilo_whet
            ));
            (work.kilo_whet, "calibrated")
        }
        (None, false) => (rtlab_model::catalog::DEFAULT_KILO_WHET, "default"),
    };
    // Refuse a kilo-whet that makes no pool (every test's baseline) now.
    for &test in &tests {
        if args.extended {
            extended_profile(test, kilo_whet)
                .map_err(|e| usage(format!("--kilo-whet {kilo_whet}: {e}")))?;
        } else {
            hartstone::pool(test, 0, kilo_whet)
                .map_err(|e| usage(format!("--kilo-whet {kilo_whet}: {e}")))?;
        }
    }
    let saver_flags = &args.save;
    let mut doc = Document {
        extended: args.extended,
        tests: tests.clone(),
        kilo_whet_ns: kilo_whet.as_ns(),
        kilo_whet_from,
        iteration_duration_ns: args.iteration_duration.as_ns(),
        max_iterations: args.max_iterations,
        on_miss: sim_on_miss.name().to_string(),
        runs: Vec::new(),
        extended_runs: Vec::new(),
        rankings: Vec::new(),
        extended_length_ns: args.extended.then_some(args.extended_length.as_ns()),
        notes: Vec::new(),
        interrupted: false,
    };
    let configs: Vec<TestConfig> = tests
        .iter()
        .map(|&test| TestConfig {
            test,
            kilo_whet,
            window: args.iteration_duration,
            max_iterations: args.max_iterations,
            confirm: !args.no_confirm,
        })
        .collect();
    let profiles: Vec<ExtendedProfile> = if args.extended {
        tests
            .iter()
            .map(|&test| extended_profile(test, kilo_whet))
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let sim_error = |name: &String, e: rtlab_sim::SimError| {
        usage(format!(
            "--scheduler {}: {}",
            printable(name),
            printable(&e.to_string())
        ))
    };
    let tick = args.dispatch.tick;
    if let Some(d) = &dispatch {
        // The dispatcher's refusals (a global scheduler, a tick shorter
        // than a decision, no real-time rights) before any run.
        dispatched::check(args, d, &specs, tests[0], kilo_whet)?;
    }
    for (spec, name) in specs.iter().zip(&args.scheduler) {
        if args.extended {
            let length = args.extended_length;
            let run = simulated_extended_ticked(name, spec, sim_on_miss, &profiles, length, tick)
                .map_err(|e| sim_error(name, e))?;
            doc.extended_runs.push(run);
        } else {
            let run = simulated_series_ticked(name, spec, sim_on_miss, &configs, tick)
                .map_err(|e| sim_error(name, e))?;
            doc.runs.push(run);
        }
    }
    let mut interrupted = false;
    if !policies.is_empty() {
        interrupted = if args.extended {
            real::run_real_extended(
                args,
                &profiles,
                &policies,
                real_on_miss,
                sim_on_miss,
                &mut doc,
            )?
        } else {
            real::run_real(
                args,
                &configs,
                &policies,
                real_on_miss,
                sim_on_miss,
                kilo_whet,
                &mut doc,
            )?
        };
    }
    if let (Some(d), false) = (&dispatch, interrupted) {
        let named: Vec<(String, SchedulerSpec)> = args
            .scheduler
            .iter()
            .cloned()
            .zip(specs.iter().cloned())
            .collect();
        let (on_miss, sim) = (real_on_miss, sim_on_miss);
        interrupted =
            dispatched::run(args, d, &named, &configs, &profiles, on_miss, sim, &mut doc)?;
    }
    doc.rankings = rankings(&doc, &tests);
    doc.interrupted = interrupted;
    if let Some(path) = &args.csv {
        rtlab_model::file::write_output(path, csv(&doc))
            .with_context(|| format!("--csv: cannot write {}", path.display()))?;
        crate::wrote::wrote(path, "one row per test and scheduler, CSV");
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", human(&doc));
    }
    let value = serde_json::to_value(&doc)?;
    if let Some(path) = &args.plot {
        let run = rtlab_report::view::RunView::unsaved("hartstone", value.clone());
        crate::plot_file::write(path, &run)?;
    }
    crate::save::save_document(
        saver_flags,
        rtlab_store::RunKind::Hartstone,
        None,
        &value,
        interrupted,
    )?;
    Ok(std::process::ExitCode::SUCCESS)
}
