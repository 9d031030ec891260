//! `rtlab lag-study`: paper 000 section 4.1, lags of a periodic thread per
//! period x utilization, with and without the lag controller.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use rtlab_model::Nanos;
use rtlab_rt::lag_study::{self, CellResult, StudyConfig};
use rtlab_rt::policy::allowed_cpus;
use rtlab_rt::{interrupt, RtThrottling};
use serde_json::{json, Value};

use super::latency::{parse_nanos, set_up, PolicyArgs};
use crate::table;
use crate::usage::usage;

const EXAMPLES: &str = "Examples:\n  \
    rtlab lag-study\n  \
    rtlab lag-study --periods 1ms --utilizations 50,90 --samples 2000\n  \
    rtlab lag-study --periods 100us,1ms --controller on --ki 0.5 --csv cells.csv --json\n\n\
    Each cell runs one thread (SCHED_FIFO 99 pinned to the last CPU by default) that waits for\n\
    releases at fixed times k x period and then burns utilization x period of CPU time.\n\
    lag = return from wait_until - release. The full grid (42 cells, 2000 samples) takes about 5 min.";

/// Which controller settings to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ControllerChoice {
    /// Each cell without, then with the lag controller.
    Both,
    /// With the controller only.
    On,
    /// Without it only.
    Off,
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
    /// Run the cells without and/or with the lag controller.
    #[arg(long, value_enum, default_value_t = ControllerChoice::Both)]
    pub controller: ControllerChoice,
    /// Integral gain Ki of the controller.
    #[arg(long, default_value_t = 1.0)]
    pub ki: f64,
    /// Outlier threshold of the controller (default: the cell's period).
    #[arg(long, value_parser = parse_nanos)]
    pub threshold: Option<Nanos>,
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
    /// Print JSON (schema in README, "rtlab lag-study --json").
    #[arg(long)]
    pub json: bool,
}

impl LagStudyArgs {
    fn config(&self) -> anyhow::Result<StudyConfig> {
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
            controller: match self.controller {
                ControllerChoice::Both => vec![false, true],
                ControllerChoice::On => vec![true],
                ControllerChoice::Off => vec![false],
            },
            samples: self.samples,
            ki: self.ki,
            threshold: self.threshold,
            policy: self.policy.policy(smallest),
            cpu,
        })
    }
}

/// Runs `rtlab lag-study`.
pub fn run(args: &LagStudyArgs) -> anyhow::Result<ExitCode> {
    let cfg = args.config()?;
    // Every check of the configuration is about its flags.
    cfg.validate().map_err(usage)?;
    let throttling = RtThrottling::read().ok();
    let mut warnings = Vec::new();
    if let Some(t) = throttling {
        let risky: Vec<String> = cfg
            .cells()
            .iter()
            .filter(|c| c.controller == cfg.controller[0] && c.can_throttle(&t))
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
    let stop = interrupt::install_interrupt_flag();
    let guards = set_up(args.mlock, true)?;
    warnings.extend(guards.notes.iter().cloned());
    let progress = !args.json && std::io::stderr().is_terminal();
    if progress {
        for w in &warnings {
            eprintln!("{w}");
        }
        eprintln!(
            "# {} cells, at least {} of measurement; Ctrl-C stops and prints the cells done",
            cfg.cells().len(),
            cfg.nominal_length()
        );
    }
    let total = cfg.cells().len();
    let mut done = 0;
    let cells = lag_study::run_study(&cfg, stop, |c| {
        done += 1;
        if progress {
            eprintln!(
                "# [{done}/{total}] {} {}% {}: mean lag {}",
                c.cell.period,
                c.cell.utilization,
                if c.cell.controller {
                    "controller"
                } else {
                    "plain"
                },
                c.lag.mean()
            );
        }
    })?;
    let interrupted = cells.len() < total;
    if let Some(path) = &args.csv {
        std::fs::write(path, csv(&cells)).with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        let doc = json!({
            "config": {
                "samples": cfg.samples,
                "ki": cfg.ki,
                "threshold_ns": cfg.threshold.map(Nanos::as_ns),
                "policy": cfg.policy.short_name(),
                "priority": cfg.policy.priority(),
                "cpu": cfg.cpu,
            },
            "rt_throttling": throttling.map(|t| json!({"runtime_us": t.runtime_us, "period_us": t.period_us})),
            "interrupted": interrupted,
            "warnings": warnings,
            "cells": cells.iter().map(cell_json).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        if !progress {
            for w in &warnings {
                println!("# {w}");
            }
        }
        println!(
            "# lag study: {} samples per cell, {}, {}, Ki {}",
            cfg.samples,
            cfg.policy,
            cfg.cpu
                .map_or("unpinned".into(), |c| format!("pinned to CPU {c}")),
            cfg.ki
        );
        if interrupted {
            println!("# interrupted: {} of {total} cells", cells.len());
        }
        println!("{}", describe(&cells));
    }
    Ok(ExitCode::SUCCESS)
}

fn pct(f: f64) -> String {
    format!("{:.1}", 100.0 * f)
}

fn us(n: Nanos) -> String {
    format!("{:.1}", n.as_ns() as f64 / 1000.0)
}

/// The table: one row per cell; `!` marks cells that can hit RT throttling.
pub fn describe(cells: &[CellResult]) -> String {
    let header = [
        "period",
        "U%",
        "controller",
        "samples",
        "<10us %",
        "<20us %",
        "mean lag us",
        "p99 us",
        "max lag us",
        "busy-wait %",
        "control us",
        "",
    ];
    let mut t = table::new(&header, &header[1..11]);
    for c in cells {
        t.add_row(vec![
            c.cell.period.to_string(),
            c.cell.utilization.to_string(),
            if c.cell.controller { "on" } else { "off" }.to_string(),
            c.samples.to_string(),
            pct(c.below_10us),
            pct(c.below_20us),
            us(c.lag.mean()),
            us(c.lag.p99),
            us(c.lag.max),
            pct(c.busy_wait_share),
            us(c.final_control),
            if c.throttle_risk { "!" } else { "" }.to_string(),
        ]);
    }
    let mut out = table::render(&t);
    if cells.iter().any(|c| c.throttle_risk) {
        out += "\n! can hit RT throttling";
    }
    out
}

fn cell_json(c: &CellResult) -> Value {
    json!({
        "period_ns": c.cell.period.as_ns(),
        "utilization": f64::from(c.cell.utilization) / 100.0,
        "controller": c.cell.controller,
        "samples": c.samples,
        "below_10us": c.below_10us,
        "below_20us": c.below_20us,
        "mean_lag_ns": c.lag.mean().as_ns(),
        "p50_lag_ns": c.lag.p50.as_ns(),
        "p99_lag_ns": c.lag.p99.as_ns(),
        "max_lag_ns": c.lag.max.as_ns(),
        "busy_wait_share": c.busy_wait_share,
        "busy_wait_ns": c.busy_wait.as_ns(),
        "final_control_ns": c.final_control.as_ns(),
        "throttle_risk": c.throttle_risk,
        "wall_ns": c.wall.as_ns(),
    })
}

/// CSV with the JSON cell fields.
pub fn csv(cells: &[CellResult]) -> String {
    let mut out = String::from(
        "period_ns,utilization,controller,samples,below_10us,below_20us,mean_lag_ns,p99_lag_ns,max_lag_ns,busy_wait_share,final_control_ns,throttle_risk\n",
    );
    for c in cells {
        out += &format!(
            "{},{},{},{},{:.6},{:.6},{},{},{},{:.6},{},{}\n",
            c.cell.period.as_ns(),
            f64::from(c.cell.utilization) / 100.0,
            c.cell.controller,
            c.samples,
            c.below_10us,
            c.below_20us,
            c.lag.mean().as_ns(),
            c.lag.p99.as_ns(),
            c.lag.max.as_ns(),
            c.busy_wait_share,
            c.final_control.as_ns(),
            c.throttle_risk,
        );
    }
    out
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
        let a = parse("--periods 1ms --utilizations 50,90 --samples 2000").unwrap();
        assert_eq!(a.config().unwrap().cells().len(), 4);
        for (line, needle) in [
            ("--utilizations 120", "120"),
            ("--periods 1", "missing unit"),
            ("--controller maybe", "maybe"),
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
    fn a_tiny_study_gives_the_documented_json_fields() {
        let a = parse("--periods 500us --utilizations 0,50 --samples 50 --policy other --no-pin")
            .unwrap();
        let cfg = a.config().unwrap();
        static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let cells = lag_study::run_study(&cfg, &STOP, |_| {}).unwrap();
        assert_eq!(cells.len(), 4);
        let j = cell_json(&cells[1]);
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
        ] {
            assert!(!j[key].is_null(), "missing {key}");
        }
        assert_eq!(j["samples"], 50);
        assert_eq!(j["controller"], true);
        assert!(describe(&cells).contains("<10us %"));
        assert_eq!(csv(&cells).lines().count(), 5);
    }
}
