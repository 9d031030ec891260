//! `rtlab drift`: periodic loops with the same period, sleeping relative
//! and absolute, and how far apart they drift (seed 003's `delay` versus
//! `delay until`). The loops are `rtlab_rt::drift`, the page is
//! `rtlab_report::drift`; this module parses and wires.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_host::interrupt;
use rtlab_model::Nanos;
use rtlab_report::drift as page;
use rtlab_rt::drift::{self, DriftConfig, SleepKind};
use rtlab_rt::load::LoadSpec;

use crate::flags::{parse_load, parse_nanos, parse_run_length, PolicyArgs};
use crate::setup::{set_up, start_load};
use crate::usage::{naming_the_flag, usage};

const EXAMPLES: &str = "Examples:\n  \
    rtlab drift --period 10ms --duration 60s --cpu 0 --csv drift.csv --plot drift.svg\n  \
    rtlab drift --period 10ms --duration 60s --cpu 0 --load hackbench --policy other\n  \
    rtlab drift --kinds absolute,relative --period 100ms --work 2ms --duration 30s --json\n\n\
    Kinds: absolute (clock_nanosleep TIMER_ABSTIME to start + k x period: Ada's delay until),\n\
    relative (a relative sleep of the period: Ada's delay, cyclictest -r), compensated (a relative\n\
    sleep of what is left to the next grid point: delay Next - Clock). Lag = wake-up - (start + n x\n\
    period); drift = the least-squares slope of the lag, per hour. Ctrl-C stops early.";

/// `rtlab drift`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct DriftArgs {
    /// The period of every loop.
    #[arg(short = 'T', long, default_value = "10ms", value_parser = parse_nanos)]
    pub period: Nanos,
    /// How long the loops run; a bare number is seconds, `m`, `h`, `d` after it minutes, hours, days.
    #[arg(short = 'D', long, default_value = "60s", value_parser = parse_run_length)]
    pub duration: Nanos,
    /// The loops, one thread each: absolute, relative, compensated (comma-separated).
    #[arg(long, default_value = "absolute,relative,compensated", value_delimiter = ',', value_parser = parse_kind)]
    pub kinds: Vec<SleepKind>,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Pin every loop to this CPU (default: unpinned).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// CPU time each loop burns after each wake-up (its body; the report's Put_Line).
    #[arg(long, default_value = "0ns", value_parser = parse_nanos)]
    pub work: Nanos,
    /// Window of the time series (CSV rows, plot points); raised to duration / 20000.
    #[arg(long, default_value = "1s", value_parser = parse_nanos)]
    pub every: Nanos,
    /// Background load during the run: none, cpu:N, hackbench[:GROUPS[:pipe|socket]].
    #[arg(long, default_value = "none", value_parser = parse_load)]
    pub load: LoadSpec,
    /// Lock all memory (mlockall).
    #[arg(short = 'm', long)]
    pub mlock: bool,
    /// Do not hold /dev/cpu_dma_latency at 0 during the run.
    #[arg(long)]
    pub no_dma_latency: bool,
    /// Write the time series as CSV: time_s, each loop's lag, each loop's offset behind the absolute one.
    #[arg(long, value_name = "FILE.csv")]
    pub csv: Option<PathBuf>,
    /// Draw each loop's lag against time as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Print JSON (schema in the guide, "rtlab drift").
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub isolate: crate::setup::IsolateFlags,
}

fn parse_kind(s: &str) -> Result<SleepKind, String> {
    SleepKind::parse(s.trim())
        .ok_or_else(|| format!("`{s}`: use absolute, relative or compensated"))
}

/// The loops' configuration from the flags (every error names its flag).
fn config(args: &DriftArgs) -> anyhow::Result<DriftConfig> {
    args.policy.check()?;
    let cfg = DriftConfig {
        period: args.period,
        duration: args.duration,
        kinds: args.kinds.clone(),
        policy: args.policy.policy(args.period),
        cpu: args.cpu,
        work: args.work,
        every: args.every,
    };
    cfg.validate().map_err(|e| usage(naming_the_flag(&e)))?;
    if let Some(cpu) = args.cpu {
        crate::flags::parse_cpus(&cpu.to_string()).map_err(|e| usage(format!("--cpu: {e}")))?;
    }
    Ok(cfg)
}

/// Runs `rtlab drift`.
pub fn run(args: &DriftArgs) -> anyhow::Result<ExitCode> {
    let cfg = config(args)?;
    let stop = interrupt::install_interrupt_flag();
    let pinned = args.cpu.map(|c| vec![c]);
    let measured = crate::setup::measured_cpus(pinned.as_deref());
    args.isolate.check(&measured)?;
    let _measuring = args.cpu_lock.hold(pinned.as_deref())?;
    let guards = set_up(args.mlock, !args.no_dma_latency)?;
    let _shield = args.isolate.raise(&measured)?;
    let load = start_load(args.load)?;
    let progress = (!args.json)
        .then(|| Some(crate::progress::RunProgress::timed(cfg.duration)?.follow(cfg.duration)))
        .flatten();
    let window = rtlab_host::disturbance::Window::open_process(&measured);
    let result = drift::run_drift(&cfg, stop);
    let disturbance = window.close(&[]);
    if let Some(progress) = progress {
        progress.finish();
    }
    load.stop();
    let report = result?;
    let load_name = args.load.to_string();
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&page::document(&report, &load_name, &disturbance))?
        );
    } else {
        for note in &guards.notes {
            outln!("# {note}");
        }
        out!("{}", page::text(&report, &load_name, &disturbance));
    }
    if let Some(path) = &args.csv {
        let text = page::csv(&report).context("--csv")?;
        rtlab_model::file::write_output(path, text)
            .with_context(|| format!("--csv: cannot write {}", path.display()))?;
        crate::wrote::wrote(path, "lag per window, CSV");
    }
    if let Some(path) = &args.plot {
        let svg = page::plot(&report).map_err(|e| anyhow::anyhow!("--plot: {e}"))?;
        rtlab_model::file::write_output(path, svg)
            .with_context(|| format!("--plot: cannot write {}", path.display()))?;
        crate::wrote::wrote(path, "lag against time, SVG");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: DriftArgs,
    }

    fn parse(line: &str) -> Result<DriftArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("drift").chain(line.split_whitespace())).map(|c| c.args)
    }

    #[test]
    fn flags_make_the_configuration() {
        let a =
            parse("--period 100ms -D 30s --kinds absolute,relative --work 2ms --cpu 0").unwrap();
        let c = config(&a).unwrap();
        assert_eq!(c.period, Nanos::from_ms(100));
        assert_eq!(c.duration, Nanos::from_secs(30));
        assert_eq!(c.kinds, vec![SleepKind::Absolute, SleepKind::Relative]);
        assert_eq!(c.work, Nanos::from_ms(2));
        assert_eq!(c.cpu, Some(0));
        let d = config(&parse("").unwrap()).unwrap();
        assert_eq!(d.kinds, SleepKind::ALL.to_vec());
        assert_eq!(d.duration, Nanos::from_secs(60));
    }

    #[test]
    fn bad_flags_name_themselves() {
        assert!(parse("--kinds sideways")
            .unwrap_err()
            .to_string()
            .contains("use absolute, relative or compensated"));
        for (line, needle) in [
            ("--period 10us", "invalid --period 10us"),
            (
                "--kinds relative,relative",
                "invalid --kinds relative,relative",
            ),
            ("--work 10ms", "invalid --work 10ms"),
            ("--every 1ms", "invalid --every 1ms"),
            (
                "--policy deadline",
                "invalid --policy deadline: a SCHED_DEADLINE thread",
            ),
            ("--policy other -p 5", "--priority 5 does not apply"),
            ("--cpu 4095", "--cpu"),
        ] {
            let e = config(&parse(line).unwrap()).unwrap_err().to_string();
            assert!(e.contains(needle), "{line}: {e}");
        }
    }
}
