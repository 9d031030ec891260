//! `rtlab demo`: a short tour of what rtlab does, on real files: a task set
//! from the literature, generated sets written and read back, and analysis.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use clap::Args;
use rtlab_model::generate::{generate_sets, GeneratorConfig};
use rtlab_model::{file, Nanos};

use rtlab_model::policy::RunPolicy;
use rtlab_probe::latency::SeriesTap;
use rtlab_report::html::render_html;
use rtlab_report::sources::{sample_row, GanttRows};
use rtlab_report::view::RunView;
use rtlab_rt::executor::{self, JobSink, RunConfig};
use rtlab_sim::{simulate, SchedulerSpec, SimConfig, Simulator};

use rtlab_report::taskset_text::{describe_taskset, generated_sets_table};
use rtlab_report::{demo_text, table};

use crate::set_files::{write_sets, OutputFormat};

use super::analyze::{self, AnalyzeArgs, PolicyArg};
use super::latency::{self, LatencyArgs};
use super::sweep::{self, SweepArgs};

/// `rtlab demo`
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the generated files (default: a fresh folder under the system temp dir, removed after).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed for the generated task sets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where to write the HTML report of what the demo ran.
    #[arg(long, value_name = "FILE", default_value = "rtlab-demo-report.html")]
    pub report: PathBuf,
}

/// Runs the tour.
pub fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    tell("== 1. A task set from the literature: the avionics set of Arakawa et al. 1993 (rtlab taskset show builtin:avionics)\n");
    let avionics = file::load("builtin:avionics")?;
    outln!("{}", describe_taskset(&avionics.set, &avionics.origin));

    tell(&format!("== 2. Random task sets: 5 tasks, U = 0.7, RandFixedSum, log-uniform periods 10 ms..1 s, seed {}", args.seed));
    outln!(
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
    outln!("{}\n", generated_sets_table(&sets, &paths));

    tell("== 3. Reading them back: every file validates and equals what was generated\n");
    for (set, path) in sets.iter().zip(&paths) {
        let spec = path.to_str().context("temp path is not UTF-8")?;
        let loaded = file::load(spec)?;
        let same = if &loaded.set == set {
            "identical"
        } else {
            "DIFFERENT"
        };
        outln!(
            "   {}: valid, {} tasks, U = {:.4}, {same}",
            path.display(),
            loaded.set.tasks.len(),
            loaded.set.utilization()
        );
    }
    if temporary {
        std::fs::remove_dir_all(&dir).ok();
    }

    tell(
        "\n== 4. Analysis: the avionics set under rate-monotonic priorities, exact response times,",
    );
    tell("   and breakdown utilization ideal and with the RT Mach overheads at 8 ms and 16 ms ticks (Arakawa et al. 1993)");
    tell("   (rtlab analyze builtin:avionics --policy rm --overheads builtin:rtmach --tick 8ms,16ms --breakdown)\n");
    let mut runs = Vec::new();
    let analysis = analyze::run(&AnalyzeArgs {
        file: "builtin:avionics".to_string(),
        policy: vec![PolicyArg::Rm],
        overheads: Some("builtin:rtmach".to_string()),
        tick: vec![Nanos::from_ms(8), Nanos::from_ms(16)],
        threads: None,
        locking: Vec::new(),
        breakdown: true,
        cpus: None,
        test: Vec::new(),
        json: false,
        save: Default::default(),
    })?;
    runs.push(RunView::unsaved("analyze", analysis).with_command(
        "rtlab analyze builtin:avionics --policy rm --overheads builtin:rtmach --tick 8ms,16ms --breakdown",
    ));

    tell("\n== 5. Simulation: deadline misses in 1 s of the four periodic-task scenarios of Soyer 2024");
    tell("   (rtlab sim builtin:lf-scenario-N --scheduler S --duration 1s)\n");
    outln!("{}", scenario_table()?);
    for scheduler in ["fp:dm", "edf"] {
        runs.push(simulated_run(
            "builtin:lf-scenario-4",
            scheduler,
            Nanos::from_ms(200),
        )?);
    }
    tell("   Soyer 2024: FIFO by declaration order misses in scenarios 1-3, DM meets them;");
    tell("   scenario 4 misses under DM and not under EDF.");

    tell("\n== 6. The same on real threads, pinned to one CPU, 500 ms each");
    tell("   (rtlab run builtin:lf-scenario-N --policy P --duration 500ms; rtlab compare ... for side by side)\n");
    for warning in platform_warnings() {
        tell(&format!("   platform (rtlab doctor): {warning}"));
    }
    outln!();
    if rtlab_host::policy::has_cap_sys_nice() {
        outln!("{}", real_scenario_table(&mut runs)?);
        tell("   Each real run carries a disturbance verdict (host steal, interrupts, other threads, memory");
        tell("   pressure); a disturbed run is rerun once, and the cell says `disturbed` when the rerun was too");
        tell("   (guide: how-to/trust-a-real-result.md; --isolate shields the CPU).");
        tell("   A miss count is jobs past their deadline; scenario 4 (U = 0.92) exceeds what SCHED_DEADLINE");
        tell("   admits on one CPU here (0.95 minus the fair server's 0.05): add --no-rt-throttling to run it.");
    } else {
        tell("   skipped: SCHED_FIFO and SCHED_DEADLINE need root or CAP_SYS_NICE");
    }
    tell("\n== 7. Schedulability ratio: 5-task sets, 100 per step, U = 0.6..1.0, four tests");
    tell(&format!("   ({SWEEP})\n"));
    let sweep = sweep::run(&parse_args::<SweepArgs>(SWEEP)?)?;
    runs.push(RunView::unsaved("sweep", sweep).with_command(SWEEP));

    let latency_line = if rtlab_host::policy::has_cap_sys_nice() {
        LATENCY_FIFO
    } else {
        LATENCY_OTHER
    };
    tell("\n== 8. Wake-up latency: two timer threads, 1000 loops of 1 ms each (cyclictest's measurement)");
    tell(&format!("   ({latency_line})\n"));
    runs.push(latency_run(latency_line)?);

    let host = host_metadata();
    for run in &mut runs {
        run.host = host.clone();
    }
    let html = render_html(&runs);
    rtlab_model::file::write_output(&args.report, &html)
        .with_context(|| format!("--report: cannot write {}", args.report.display()))?;
    tell(&format!(
        "\n== Report: {} ({} KiB, {} runs: analysis, 2 simulations, {} real-thread runs, a sweep, a latency run;",
        args.report.display(),
        html.len().div_ceil(1024),
        runs.len(),
        runs.iter().filter(|r| r.kind == "run").count()
    ));
    tell("   summaries, Gantt charts, response times, ratio curves, the latency histogram): open it in a browser");
    tell("\n== Next: rtlab taskset list, rtlab analyze --help, rtlab sim --help, rtlab run --help, rtlab latency --help");
    Ok(ExitCode::SUCCESS)
}

/// A line of the tour, wrapped to the terminal.
fn tell(line: &str) {
    outln!("{}", table::fit_text(line));
}

/// The items `rtlab doctor` warns about, one line each (`key: summary`):
/// what makes real-thread numbers on this machine noisier than they could be.
fn platform_warnings() -> Vec<String> {
    let report = rtlab_host::platform::probe(&rtlab_host::kernel_state::StateDir::from_env());
    report
        .lines()
        .into_iter()
        .filter(|l| l.level == rtlab_host::platform::Level::Warn)
        .map(|l| format!("{}: {}", l.key, l.summary))
        .collect()
}

/// The host metadata a saved run carries (`rtlab_host::platform::host_metadata`,
/// what `rtlab doctor` reads), as the report's.
fn host_metadata() -> serde_json::Value {
    serde_json::to_value(rtlab_host::platform::host_metadata()).unwrap_or_default()
}

/// Deadline misses per scheduler (rows) and lf-scenario (columns), simulated.
fn scenario_table() -> anyhow::Result<String> {
    let schedulers = ["fifo", "fp:dm", "edf"];
    let mut rows = Vec::new();
    for scheduler in schedulers {
        let spec: SchedulerSpec = scheduler.parse()?;
        let mut row = vec![scheduler.to_string()];
        for n in 1..=4 {
            let set = file::load(&format!("builtin:lf-scenario-{n}"))?.set;
            let report = simulate(&set, &spec, &SimConfig::new(Nanos::from_secs(1)))?;
            row.push(format!("{} misses", report.deadline_misses));
        }
        rows.push(row);
    }
    Ok(demo_text::scenario_table("scheduler", &rows))
}

/// The demo's sweep, as its command line.
const SWEEP: &str = "rtlab sweep --tasks 5 --from 0.6 --to 1.0 --step 0.1 --sets 100 --seed 1 --test rm:liu-layland,rm:hyperbolic,rm:rta,edf:edf-demand";

/// The demo's latency run with real-time privileges, and without.
const LATENCY_FIFO: &str = "rtlab latency -t 2 -p 99 -i 1ms -m -a --loops 1000";
const LATENCY_OTHER: &str = "rtlab latency -t 2 --policy other -i 1ms --loops 1000";

/// A command's arguments from its command line (`rtlab CMD ...`).
fn parse_args<A: clap::Args>(line: &str) -> anyhow::Result<A> {
    #[derive(clap::Parser)]
    struct Line<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    let words = line.split_whitespace().skip(1);
    Ok(<Line<A> as clap::Parser>::try_parse_from(words)?.args)
}

/// `rtlab sim FILE --scheduler S --duration D` with its first jobs, as a
/// run for the report.
fn simulated_run(taskset: &str, scheduler: &str, duration: Nanos) -> anyhow::Result<RunView> {
    let set = file::load(taskset)?.set;
    let spec: SchedulerSpec = scheduler.parse()?;
    let mut sim = Simulator::new(&set, &spec, SimConfig::new(duration))?;
    let gantt = GanttRows::new();
    let kept = gantt.clone();
    sim.on_job(move |job| kept.push(job));
    sim.run();
    let report = sim.report();
    let mut run = RunView::unsaved("sim", serde_json::to_value(&report)?).with_command(&format!(
        "rtlab sim {taskset} --scheduler {scheduler} --duration {duration}"
    ));
    run.jobs = gantt.rows(&set);
    Ok(run)
}

/// `rtlab latency ...` with its samples (through a --series file), as a
/// run for the report; the cyclictest lines are printed.
fn latency_run(line: &str) -> anyhow::Result<RunView> {
    let args = parse_args::<LatencyArgs>(line)?;
    let samples = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&samples);
    let tap: SeriesTap = Box::new(move |thread, point| {
        kept.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(sample_row(thread, &point));
    });
    let (_, doc) = latency::measure_with_tap(&args, Some(tap))?;
    let mut run = RunView::unsaved("latency", doc).with_command(line);
    run.samples = std::mem::take(&mut *samples.lock().unwrap_or_else(PoisonError::into_inner));
    Ok(run)
}

/// Deadline misses per policy (rows) and lf-scenario (columns), on real
/// threads; a refused run shows why in a word. The runs of scenario 4 go
/// into `runs` with their first jobs, for the report.
fn real_scenario_table(runs: &mut Vec<RunView>) -> anyhow::Result<String> {
    let mut rows = Vec::new();
    let interrupt = rtlab_host::interrupt::install_interrupt_flag();
    crate::setup::restore_left_state_first();
    for policy in [
        RunPolicy::FifoOrder,
        RunPolicy::DeadlineMonotonic,
        RunPolicy::Edf,
    ] {
        let mut row = vec![policy.name().to_string()];
        for n in 1..=4 {
            let set = file::load(&format!("builtin:lf-scenario-{n}"))?.set;
            let cfg = RunConfig::new(Nanos::from_ms(500), policy);
            let mut gantt = GanttRows::new();
            let run_once = |gantt: &GanttRows| {
                let sinks: Vec<Box<dyn JobSink + Send>> = vec![Box::new(gantt.clone())];
                executor::run_recording(&set, &cfg, interrupt, sinks)
            };
            let mut ran = run_once(&gantt);
            // A disturbed run is run once more before it is shown: the
            // machine, not the scheduler, may have made its misses.
            let mut reran = false;
            if ran.as_ref().is_ok_and(|(r, _)| {
                r.disturbance
                    .as_ref()
                    .is_some_and(|d| d.verdict.is_disturbed())
            }) {
                gantt = GanttRows::new();
                ran = run_once(&gantt);
                reran = true;
            }
            row.push(match ran {
                Ok((r, _)) => {
                    let mark = match (&r.disturbance, reran) {
                        (Some(d), true) if d.verdict.is_disturbed() => " (disturbed twice)",
                        (Some(d), false) if d.verdict.is_disturbed() => " (disturbed)",
                        (_, true) => " (rerun: clean)",
                        _ => "",
                    };
                    let cell = format!("{} of {} jobs{mark}", r.deadline_misses, r.released);
                    if n == 4 {
                        let mut run = RunView::unsaved("run", serde_json::to_value(&r)?)
                            .with_command(&format!(
                                "rtlab run builtin:lf-scenario-4 --policy {} --duration 500ms",
                                policy.name()
                            ));
                        run.jobs = gantt.rows(&set);
                        runs.push(run);
                    }
                    cell
                }
                Err(e) if e.is_admission_refusal() => "over admission limit".into(),
                Err(e) => return Err(e.into()),
            });
        }
        rows.push(row);
    }
    Ok(demo_text::scenario_table("policy", &rows))
}
