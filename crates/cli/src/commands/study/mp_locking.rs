//! `rtlab study mp-locking`: argument parsing and wiring for the
//! multiprocessor locking study (`rtlab_study::mp_locking`; its text,
//! CSV and plots are `rtlab_report::mp_locking_text`'s).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_model::mp_locking::MpProtocol;
use rtlab_model::{printable, Nanos};

use crate::flags::parse_nanos;
use crate::usage::usage;

pub const EXAMPLES: &str = "Examples:\n  \
    rtlab study mp-locking --lengths 100us,1600us --resources 1,8 --plot out/ --csv out/mp-locking.csv\n  \
    rtlab study mp-locking --protocols mpcp,msrp --lengths 50us,500us --resources 2,8 --json\n\n\
    Random sets (RandFixedSum, per-task U <= 0.8, periods 10-100 ms log-uniform, implicit deadlines)\n\
    at one total utilization; the same sets get sections of each length (series 1) and sections on\n\
    each number of resources (series 2); each protocol decides them by its analysis and by a\n\
    simulated run. The guide: explanation/multiprocessor-locking.md.";

/// `rtlab study mp-locking`
#[derive(Debug, Args)]
pub struct MpLockingArgs {
    /// Processors m (2 to 64).
    #[arg(long, default_value_t = 4)]
    pub cpus: u32,
    /// Tasks per set (at least 2).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(2..=200))]
    pub tasks: u64,
    /// Total utilization of every set (at most --cpus).
    #[arg(long, default_value_t = 2.4)]
    pub utilization: f64,
    /// Random sets per point.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub sets: u64,
    /// Seed of the generators (the same seed gives the same document).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The protocols, comma separated (default: all six).
    #[arg(long, value_delimiter = ',')]
    pub protocols: Vec<MpProtocol>,
    /// Series 1: critical-section lengths, comma separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_nanos, default_value = "25us,100us,400us,800us,1600us,3200us")]
    pub lengths: Vec<Nanos>,
    /// Series 1: resources shared.
    #[arg(long, default_value_t = 2)]
    pub fixed_resources: u32,
    /// Series 2: numbers of shared resources, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    pub resources: Vec<u32>,
    /// Series 2: the critical-section length.
    #[arg(long, default_value = "200us", value_parser = parse_nanos)]
    pub fixed_length: Nanos,
    /// Probability that a task uses each resource.
    #[arg(long, default_value_t = 0.4)]
    pub sharing: f64,
    /// Critical sections per job on each resource a task uses.
    #[arg(long, default_value_t = 1)]
    pub requests: u32,
    /// How the partitioned protocols place a set (ff, bf, wf, nf, with -decreasing...).
    #[arg(long, default_value = "wf-decreasing", value_name = "HEURISTIC")]
    pub partition: String,
    /// Length of every simulated run.
    #[arg(long, default_value = "500ms", value_parser = parse_nanos)]
    pub duration: Nanos,
    /// Print the JSON document instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Write the counts as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the four SVG plots (each series, analysed and simulated) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// Runs `rtlab study mp-locking`.
pub fn run(args: &MpLockingArgs) -> anyhow::Result<ExitCode> {
    use rtlab_study::mp_locking::{self as mpl, MpLockingConfig};
    let heuristic =
        rtlab_analysis::partition::Heuristic::from_name(&args.partition).ok_or_else(|| {
            usage(format!(
                "--partition `{}`: use {}",
                printable(&args.partition),
                rtlab_analysis::partition::Heuristic::names()
            ))
        })?;
    let config = MpLockingConfig {
        cpus: args.cpus,
        tasks: args.tasks as usize,
        utilization: args.utilization,
        sets: args.sets,
        seed: args.seed,
        protocols: if args.protocols.is_empty() {
            MpProtocol::ALL.to_vec()
        } else {
            args.protocols.clone()
        },
        lengths: args.lengths.clone(),
        fixed_resources: args.fixed_resources,
        resources: args.resources.clone(),
        fixed_length: args.fixed_length,
        sharing: args.sharing,
        requests: args.requests,
        heuristic,
        duration: args.duration,
    };
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--plot: cannot create {}", dir.display()))?;
    }
    let doc = mpl::run(&config).map_err(|e| usage(format!("rtlab study mp-locking: {e}")))?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", rtlab_report::mp_locking_text::study_text(&doc));
    }
    if let Some(path) = &args.csv {
        rtlab_model::file::write_output(path, rtlab_report::mp_locking_text::study_csv(&doc))
            .with_context(|| format!("--csv: cannot write {}", path.display()))?;
        crate::wrote::wrote(path.display().to_string(), "the study's counts, CSV");
    }
    if let Some(dir) = &args.plot {
        for (name, svg) in rtlab_report::mp_locking_text::study_plots(&doc)? {
            let path = dir.join(name);
            rtlab_model::file::write_output(&path, svg)
                .with_context(|| format!("--plot: cannot write {}", path.display()))?;
            crate::wrote::wrote(path.display().to_string(), "plot, SVG");
        }
    }
    Ok(ExitCode::SUCCESS)
}
