//! `rtlab lag-study`: paper 000 section 4.1, lags of a periodic thread per
//! period x utilization, without a lag controller, with paper 000's and
//! with the robust one.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use rtlab_host::policy::allowed_cpus;
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::Nanos;
use rtlab_report::lag_study_text;
use rtlab_rt::lag_study::{StudyConfig, WaiterKind};

use crate::flags::{parse_nanos, PolicyArgs};
use crate::setup::set_up;
use crate::usage::{naming_the_flag, usage};

const EXAMPLES: &str = "Examples:\n  \
    rtlab lag-study\n  \
    rtlab lag-study --periods 1ms --utilizations 50,90 --samples 2000\n  \
    rtlab lag-study --periods 100us,1ms --controller robust --ki 0.5 --json\n  \
    rtlab lag-study --controller off,paper,robust --rounds 5 --csv lag-study.csv\n\n\
    Each cell runs one thread (SCHED_FIFO 99 pinned to the last CPU by default) that waits for\n\
    releases at fixed times k x period and then burns utilization x period of CPU time.\n\
    lag = return from wait_until - release. The default grid (42 cells, 2000 samples) takes about\n\
    6 min, with --controller off,paper,robust --rounds 5 (63 cells) about 13 min.";

/// How the cells wait (a list runs each period x utilization once per item).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ControllerChoice {
    /// Plain absolute sleep, no controller.
    Off,
    /// Soyer 2024's Algorithm 2 as written (threshold = period, no bounds).
    Paper,
    /// The robust controller: learnt threshold, bounded control, RT spin budget.
    Robust,
    /// off,robust (kept from earlier versions).
    Both,
    /// robust (kept from earlier versions).
    On,
}

impl ControllerChoice {
    fn waiters(self) -> &'static [WaiterKind] {
        match self {
            ControllerChoice::Off => &[WaiterKind::Off],
            ControllerChoice::Paper => &[WaiterKind::Paper],
            ControllerChoice::Robust | ControllerChoice::On => &[WaiterKind::Robust],
            ControllerChoice::Both => &[WaiterKind::Off, WaiterKind::Robust],
        }
    }
}

/// `rtlab lag-study`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct LagStudyArgs {
    /// Periods (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "100us,1ms,10ms", value_parser = parse_nanos)]
    pub periods: Vec<Nanos>,
    /// Utilizations in percent (comma-separated, 0..=100).
    #[arg(long, value_delimiter = ',', default_value = "0,25,50,70,80,90,95", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub utilizations: Vec<u32>,
    /// Periods measured per cell.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub samples: u64,
    /// How the cells wait, comma-separated: off, paper, robust (both = off,robust; on = robust).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "off,robust")]
    pub controller: Vec<ControllerChoice>,
    /// Gain Ki: the paper controller's integral gain; scales the robust controller's step (1 us x Ki).
    #[arg(long, default_value_t = 1.0)]
    pub ki: f64,
    /// Outlier threshold of the paper controller (default: the cell's period).
    #[arg(long, value_parser = parse_nanos)]
    pub threshold: Option<Nanos>,
    /// Run the grid this many times in turn, each cell with samples/rounds per round, and add
    /// the rounds up (spreads platform noise over all controllers; see the guide).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Pause between two cells, asleep, so that each starts with the CPU's RT-throttling and
    /// fair-server budgets replenished (0s: none).
    #[arg(long, default_value = "1s", value_parser = parse_nanos)]
    pub cooldown: Nanos,
    /// Robust controller: average busy-wait, in percent of wall time (one wait may spin twice
    /// that share of the period).
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub spin_budget: f64,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// CPU to pin the measuring thread to (default: the last allowed CPU).
    #[arg(long, conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Do not pin the measuring thread.
    #[arg(long)]
    pub no_pin: bool,
    /// Lock all memory (mlockall).
    #[arg(short = 'm', long)]
    pub mlock: bool,
    /// Write the cells as CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub csv: Option<PathBuf>,
    /// Print JSON (schema in the guide, "rtlab lag-study --json").
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub isolate: crate::setup::IsolateFlags,
}

impl LagStudyArgs {
    fn config(&self) -> anyhow::Result<StudyConfig> {
        self.policy.check()?;
        let cpu = if self.no_pin {
            None
        } else {
            match self.cpu {
                Some(c) => Some(c),
                None => allowed_cpus()?.last().copied(),
            }
        };
        let smallest = self
            .periods
            .iter()
            .copied()
            .min()
            .unwrap_or(Nanos::from_ms(1));
        Ok(StudyConfig {
            periods: self.periods.clone(),
            utilizations: self.utilizations.clone(),
            waiters: waiters(&self.controller),
            samples: self.samples,
            ki: self.ki,
            threshold: self.threshold,
            spin_share: self.spin_budget / 100.0,
            rounds: self.rounds,
            cooldown: self.cooldown,
            policy: self.policy.policy(smallest),
            cpu,
        })
    }
}

/// The waiters of the `--controller` list, in order, each once.
fn waiters(choices: &[ControllerChoice]) -> Vec<WaiterKind> {
    let mut out: Vec<WaiterKind> = Vec::new();
    for w in choices.iter().flat_map(|c| c.waiters()) {
        if !out.contains(w) {
            out.push(*w);
        }
    }
    out
}

/// Runs `rtlab lag-study`.
pub fn run(args: &LagStudyArgs) -> anyhow::Result<ExitCode> {
    let cfg = args.config()?;
    // Every check of the configuration is about its flags.
    cfg.validate().map_err(|e| usage(naming_the_flag(&e)))?;
    let throttling = RtThrottling::read().ok();
    let mut warnings = Vec::new();
    if let Some(t) = throttling {
        let risky: Vec<String> = cfg
            .cells()
            .iter()
            .filter(|c| c.waiter == cfg.waiters[0] && c.can_throttle(&t))
            .map(|c| format!("{} at {}%", c.period, c.utilization))
            .collect();
        if !risky.is_empty() && cfg.policy.is_rt() {
            warnings.push(format!(
                "warning: {} can hit RT throttling (RT threads may use {} of a CPU): expect lags of tens of ms there",
                risky.join(", "),
                t.describe_limit()
            ));
        }
    }
    let saver = args.save.begin(rtlab_store::RunKind::LagStudy, None)?;
    let stop = interrupt::install_interrupt_flag();
    let measured = crate::setup::measured_cpus(cfg.cpu.as_ref().map(std::slice::from_ref));
    args.isolate.check(&measured)?;
    let _measuring = args
        .cpu_lock
        .hold(cfg.cpu.as_ref().map(std::slice::from_ref))?;
    let guards = set_up(args.mlock, true)?;
    let _shield = args.isolate.raise(&measured)?;
    warnings.extend(guards.notes.iter().cloned());
    let progress = !args.json && std::io::stderr().is_terminal();
    if progress {
        for w in &warnings {
            eprintln!("{w}");
        }
        eprintln!(
            "# {} cells, at least {} of measurement; Ctrl-C stops and prints what was measured",
            cfg.cells().len(),
            cfg.nominal_length()
        );
    }
    let total = cfg.cells().len();
    let steps = total * cfg.rounds as usize;
    let mut done = 0;
    let window = rtlab_host::disturbance::Window::open_process(&measured);
    let cells = rtlab_study::lag_study::run_study(&cfg, stop, |round, c| {
        done += 1;
        if progress {
            eprintln!(
                "# [{done}/{steps}] {}",
                lag_study_text::progress(round, cfg.rounds, &lag_study_text::cell_document(c))
            );
        }
    })?;
    let disturbance = window.close(&[]);
    let interrupted = cells.len() < total || cells.iter().any(|c| c.samples < cfg.samples);
    let mut doc = lag_study_text::document(&cfg, throttling, interrupted, &warnings, &cells);
    doc.disturbance = Some(disturbance);
    if let Some(path) = &args.csv {
        rtlab_model::file::write_output(path, lag_study_text::csv(&doc.cells))
            .with_context(|| format!("writing {}", path.display()))?;
        crate::wrote::wrote(path, "one row per cell, CSV");
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!(
            "{}",
            lag_study_text::human(&doc, cfg.policy, total, progress)
        );
    }
    if let Some(saver) = saver {
        saver.finish(&serde_json::to_value(&doc)?, interrupted)?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use rtlab_rt::lag_study::PAPER_UTILIZATIONS;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: LagStudyArgs,
    }

    fn parse(line: &str) -> Result<LagStudyArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("lag-study").chain(line.split_whitespace()))
            .map(|c| c.args)
    }

    #[test]
    fn defaults_are_the_papers_grid_and_flags_restrict_it() {
        let a = parse("").unwrap();
        assert_eq!(
            a.periods,
            vec![Nanos::from_us(100), Nanos::from_ms(1), Nanos::from_ms(10)]
        );
        assert_eq!(a.utilizations, PAPER_UTILIZATIONS.to_vec());
        assert_eq!(a.config().unwrap().cells().len(), 42);
        assert_eq!(
            a.config().unwrap().waiters,
            vec![WaiterKind::Off, WaiterKind::Robust]
        );
        let a = parse("--periods 1ms --utilizations 50,90 --samples 2000").unwrap();
        assert_eq!(a.config().unwrap().cells().len(), 4);
        let a = parse("--periods 1ms --utilizations 50 --spin-budget 2.5").unwrap();
        assert_eq!(a.config().unwrap().spin_share, 0.025);
        assert!(parse("--spin-budget 150")
            .unwrap()
            .config()
            .unwrap()
            .validate()
            .is_err());
        for (line, needle) in [
            ("--utilizations 120", "120"),
            ("--periods 1", "missing unit"),
            ("--controller maybe", "maybe"),
            ("--controller off,", "value is required"),
        ] {
            let e = parse(line).unwrap_err().to_string();
            let first = e.lines().next().unwrap();
            assert!(
                first.starts_with("error: ") && first.contains(needle),
                "{first}"
            );
        }
    }

    #[test]
    fn the_controller_list_picks_the_waiters_in_order() {
        use WaiterKind::{Off, Paper, Robust};
        for (line, expected) in [
            ("--controller off,paper,robust", vec![Off, Paper, Robust]),
            ("--controller paper", vec![Paper]),
            ("--controller robust,off", vec![Robust, Off]),
            ("--controller both", vec![Off, Robust]),
            ("--controller on", vec![Robust]),
            ("--controller off", vec![Off]),
            ("--controller both,paper,off", vec![Off, Robust, Paper]),
        ] {
            assert_eq!(
                parse(line).unwrap().config().unwrap().waiters,
                expected,
                "{line}"
            );
        }
    }

    #[test]
    fn a_tiny_study_gives_the_documented_json_fields() {
        let a = parse(
            "--periods 500us --utilizations 0,50 --samples 50 --policy other --no-pin --cooldown 0s",
        )
        .unwrap();
        let cfg = a.config().unwrap();
        static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let cells = rtlab_study::lag_study::run_study(&cfg, &STOP, |_, _| {}).unwrap();
        assert_eq!(cells.len(), 4);
        let j = serde_json::to_value(lag_study_text::cell_document(&cells[1])).unwrap();
        for key in [
            "period_ns",
            "utilization",
            "controller",
            "samples",
            "below_10us",
            "below_20us",
            "mean_lag_ns",
            "max_lag_ns",
            "busy_wait_share",
            "controller_kind",
            "p99_lag_ns",
            "p999_lag_ns",
            "final_threshold_ns",
            "p99_worse_than_off",
            "max_worse_than_off",
        ] {
            assert!(!j[key].is_null(), "missing {key}");
        }
        assert_eq!(j["samples"], 50);
        assert_eq!(j["controller"], true);
        assert_eq!(j["controller_kind"], "robust");
        assert!(lag_study_text::cell_document(&cells[0])
            .p99_worse_than_off
            .is_none());
        let docs: Vec<_> = cells.iter().map(lag_study_text::cell_document).collect();
        let table = lag_study_text::describe(&docs);
        assert!(table.contains("<10us %") && table.contains("worse than off"));
        assert!(table.contains("robust") && table.contains("p99.9 us"));
        let csv = lag_study_text::csv(&docs);
        assert_eq!(csv.lines().count(), 5);
        let columns = csv.lines().next().unwrap().split(',').count();
        assert!(csv.lines().all(|l| l.split(',').count() == columns));
    }
}
