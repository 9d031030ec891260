//! `rtlab demo`: a short tour of what rtlab does, on real files: a task set
//! from the literature, generated sets written and read back, and analysis.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_model::generate::{generate_sets, GeneratorConfig};
use rtlab_model::{file, Nanos};

use rtlab_rt::executor::{self, RunConfig, RunPolicy};
use rtlab_rt::RtError;
use rtlab_sim::{simulate, SchedulerSpec, SimConfig};

use crate::table;

use super::analyze::{self, AnalyzeArgs, PolicyArg};
use super::generate::{summary_table, write_sets, OutputFormat};
use super::taskset::describe;

/// `rtlab demo`
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the generated files (default: a fresh folder under the system temp dir, removed after).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed for the generated task sets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs the tour.
pub fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    println!("== 1. A task set from the literature: the avionics set of paper 004 (rtlab taskset show builtin:avionics)\n");
    let avionics = file::load("builtin:avionics")?;
    println!("{}", describe(&avionics.set, &avionics.origin));

    println!("== 2. Random task sets: 5 tasks, U = 0.7, RandFixedSum, log-uniform periods 10 ms..1 s, seed {}", args.seed);
    println!(
        "   (rtlab taskset gen -n 5 -u 0.7 --count 4 --seed {} --out DIR)\n",
        args.seed
    );
    let config = GeneratorConfig {
        tasks: 5,
        utilization: 0.7,
        seed: args.seed,
        name_prefix: "demo".to_string(),
        ..GeneratorConfig::default()
    };
    let sets = generate_sets(&config, 4)?;
    let (dir, temporary) = match &args.out {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("rtlab-demo-{}", std::process::id())),
            true,
        ),
    };
    let paths = write_sets(&sets, &dir, OutputFormat::Toml)?;
    println!("{}\n", summary_table(&sets, &paths));

    println!("== 3. Reading them back: every file validates and equals what was generated\n");
    for (set, path) in sets.iter().zip(&paths) {
        let spec = path.to_str().context("temp path is not UTF-8")?;
        let loaded = file::load(spec)?;
        let same = if &loaded.set == set {
            "identical"
        } else {
            "DIFFERENT"
        };
        println!(
            "   {}: valid, {} tasks, U = {:.4}, {same}",
            path.display(),
            loaded.set.tasks.len(),
            loaded.set.utilization()
        );
    }
    if temporary {
        std::fs::remove_dir_all(&dir).ok();
    }

    println!(
        "\n== 4. Analysis: the avionics set under rate-monotonic priorities, exact response times,"
    );
    println!("   and breakdown utilization ideal and with the RT Mach overheads at 8 ms and 16 ms ticks (paper 004)");
    println!("   (rtlab analyze builtin:avionics --policy rm --overheads builtin:rtmach --tick 8ms,16ms --breakdown)\n");
    analyze::run(&AnalyzeArgs {
        file: "builtin:avionics".to_string(),
        policy: PolicyArg::Rm,
        overheads: Some("builtin:rtmach".to_string()),
        tick: vec![Nanos::from_ms(8), Nanos::from_ms(16)],
        threads: None,
        locking: None,
        breakdown: true,
        json: false,
        save: Default::default(),
    })?;

    println!("\n== 5. Simulation: deadline misses in 1 s of the four periodic-task scenarios of paper 000");
    println!("   (rtlab sim builtin:lf-scenario-N --scheduler S --duration 1s)\n");
    println!("{}", scenario_table()?);
    println!("   Paper 000: FIFO by declaration order misses in scenarios 1-3, DM meets them;");
    println!("   scenario 4 misses under DM and not under EDF.");

    println!("\n== 6. The same on real threads, pinned to one CPU, 500 ms each");
    println!("   (rtlab run builtin:lf-scenario-N --policy P --duration 500ms; rtlab compare ... for side by side)\n");
    for warning in platform_warnings() {
        println!("   platform (rtlab doctor): {warning}");
    }
    println!();
    if rtlab_rt::policy::has_cap_sys_nice() {
        println!("{}", real_scenario_table()?);
        println!("   A miss count is jobs past their deadline; scenario 4 (U = 0.92) exceeds what SCHED_DEADLINE");
        println!("   admits on one CPU here (0.95 minus the fair server's 0.05): add --no-rt-throttling to run it.");
    } else {
        println!("   skipped: SCHED_FIFO and SCHED_DEADLINE need root or CAP_SYS_NICE");
    }
    println!("\n== Next: rtlab taskset list, rtlab analyze --help, rtlab sim --help, rtlab run --help, rtlab latency --help");
    Ok(ExitCode::SUCCESS)
}

/// The items `rtlab doctor` warns about, one line each (`key: summary`):
/// what makes real-thread numbers on this machine noisier than they could be.
fn platform_warnings() -> Vec<String> {
    let report = rtlab_rt::platform::probe(&rtlab_rt::kernel_state::StateDir::from_env());
    report
        .lines()
        .into_iter()
        .filter(|l| l.level == rtlab_rt::platform::Level::Warn)
        .map(|l| format!("{}: {}", l.key, l.summary))
        .collect()
}

/// Deadline misses per scheduler (rows) and lf-scenario (columns), simulated.
fn scenario_table() -> anyhow::Result<String> {
    let schedulers = ["fifo", "fp:dm", "edf"];
    let mut t = table::new(
        &[
            "scheduler",
            "scenario 1",
            "scenario 2",
            "scenario 3",
            "scenario 4",
        ],
        &["scenario 1", "scenario 2", "scenario 3", "scenario 4"],
    );
    for scheduler in schedulers {
        let spec: SchedulerSpec = scheduler.parse()?;
        let mut row = vec![scheduler.to_string()];
        for n in 1..=4 {
            let set = file::load(&format!("builtin:lf-scenario-{n}"))?.set;
            let report = simulate(&set, &spec, &SimConfig::new(Nanos::from_secs(1)))?;
            row.push(format!("{} misses", report.deadline_misses));
        }
        t.add_row(row);
    }
    Ok(table::render(&t))
}

/// Deadline misses per policy (rows) and lf-scenario (columns), on real
/// threads; a refused run shows why in a word.
fn real_scenario_table() -> anyhow::Result<String> {
    let columns = ["scenario 1", "scenario 2", "scenario 3", "scenario 4"];
    let mut header = vec!["policy"];
    header.extend(columns);
    let mut t = table::new(&header, &columns);
    let interrupt = rtlab_rt::interrupt::install_interrupt_flag();
    super::doctor::restore_left_state_first();
    for policy in [
        RunPolicy::FifoOrder,
        RunPolicy::DeadlineMonotonic,
        RunPolicy::Edf,
    ] {
        let mut row = vec![policy.name().to_string()];
        for n in 1..=4 {
            let set = file::load(&format!("builtin:lf-scenario-{n}"))?.set;
            let cfg = RunConfig::new(Nanos::from_ms(500), policy);
            row.push(match executor::run(&set, &cfg, interrupt) {
                Ok(r) => format!("{} of {} jobs", r.deadline_misses, r.released),
                Err(RtError::DeadlineAdmission { .. } | RtError::DeadlineOverLimit { .. }) => {
                    "over admission limit".into()
                }
                Err(e) => return Err(e.into()),
            });
        }
        t.add_row(row);
    }
    Ok(table::render(&t))
}
