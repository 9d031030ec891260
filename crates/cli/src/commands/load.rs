//! `rtlab load`: run a background load on its own (to pair with another
//! tool, e.g. cyclictest), bounded by a duration.

use std::process::ExitCode;

use clap::Args;
use rtlab_host::interrupt;
use rtlab_model::Nanos;
use rtlab_rt::load::LoadSpec;
use rtlab_sys::clock::monotonic_now;

use crate::flags::{parse_load, parse_nanos};
use crate::setup::start_load;
use rtlab_model::schema::LoadDocument;

const EXAMPLES: &str = "Examples:\n  \
    rtlab load hackbench --duration 30s\n  \
    rtlab load hackbench:4:pipe --duration 60s\n  \
    rtlab load cpu:2 --duration 10s --json\n\n\
    Loads: none, cpu:N (N spinning threads), hackbench[:GROUPS[:pipe|socket]] (each group: 20 sender\n\
    and 20 receiver threads passing 100-byte messages, like rt-tests' hackbench).\n\
    Measuring commands take the same descriptions with --load. Ctrl-C stops early.";

/// `rtlab load`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct LoadArgs {
    /// The load: none, cpu:N, hackbench[:GROUPS[:pipe|socket]].
    #[arg(default_value = "hackbench", value_parser = parse_load)]
    pub load: LoadSpec,
    /// How long to run it (always bounded).
    #[arg(short = 'D', long, default_value = "10s", value_parser = parse_nanos)]
    pub duration: Nanos,
    /// Print JSON: {elapsed_ns, messages, spec, spin_rounds, threads, interrupted}.
    #[arg(long)]
    pub json: bool,
}

/// Runs `rtlab load`.
pub fn run(args: &LoadArgs) -> anyhow::Result<ExitCode> {
    let stop = interrupt::install_interrupt_flag();
    let end = monotonic_now().saturating_add(args.duration);
    let load = start_load(args.load)?;
    loop {
        let now = monotonic_now();
        if now >= end || stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        std::thread::sleep((end - now).min(Nanos::from_ms(50)).into());
    }
    let stats = load.stop();
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    if args.json {
        /// `rtlab load --json`: the load's statistics and whether a stop
        /// signal ended it before `--duration`.
        #[derive(serde::Serialize)]
        struct Output {
            #[serde(flatten)]
            load: LoadDocument,
            interrupted: bool,
        }
        let doc = Output {
            load: stats.document(args.load),
            interrupted,
        };
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        if interrupted {
            outln!("interrupted: stopped before --duration");
        }
        let secs = stats.elapsed.as_secs_f64().max(1e-9);
        outln!(
            "load {}: {} threads for {:.1} s: {} messages ({:.0}/s), {} spin rounds ({:.0}/s)",
            args.load,
            stats.threads,
            secs,
            stats.messages,
            stats.messages as f64 / secs,
            stats.spin_rounds,
            stats.spin_rounds as f64 / secs,
        );
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
        args: LoadArgs,
    }

    #[test]
    fn parses_and_runs_a_short_load() {
        let cli = Cli::try_parse_from(["load", "cpu:1", "--duration", "50ms", "--json"]).unwrap();
        assert_eq!(cli.args.load, LoadSpec::Cpu(1));
        assert_eq!(run(&cli.args).unwrap(), ExitCode::SUCCESS);
        let e = Cli::try_parse_from(["load", "cpu:x"])
            .unwrap_err()
            .to_string();
        assert!(e.lines().next().unwrap().contains("invalid load"), "{e}");
        let e = Cli::try_parse_from(["load", "--duration", "10"])
            .unwrap_err()
            .to_string();
        assert!(e.lines().next().unwrap().contains("missing unit"), "{e}");
    }
}
