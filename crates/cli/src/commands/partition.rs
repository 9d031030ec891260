//! `rtlab partition`: place a task set's tasks on `M` processors with a
//! bin-packing heuristic, each processor admitted by a uniprocessor test
//! (`rtlab_analysis::partition`), and print or write the assignment.
//!
//! A set that does not fit is a result, not an error: the command says
//! which task fits no processor and exits 0 (`--json` has `"fits": false`);
//! with `--out` it writes no file and exits 1 (no partition to write).

use std::path::Path;

use anyhow::Context;
use clap::Args;
use rtlab_analysis::partition::{self, Heuristic};
use rtlab_analysis::suite::Options;
use rtlab_analysis::sweep::SweepTest;
use rtlab_model::file::{self, Format};
use rtlab_model::{printable, MAX_PROCESSORS};

use crate::usage::usage;

/// Arguments of `rtlab partition`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    rtlab partition builtin:dhall --cpus 2 --heuristic ff-decreasing --test dm:rta\n  \
    rtlab partition builtin:avionics --cpus 2 --heuristic wf --test edf:edf-demand --json")]
pub struct PartitionArgs {
    /// Task-set file (TOML or JSON) or builtin:NAME.
    pub file: String,

    /// Number of processors M (default: the file's `processors`).
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PROCESSORS)))]
    pub cpus: Option<u32>,

    /// Bin-packing heuristic: ff, bf, wf or nf (first, best, worst, next
    /// fit), optionally followed by -decreasing (utilization; also
    /// -decreasing-util) or -decreasing-density.
    #[arg(long, default_value = "ff-decreasing", value_parser = parse_heuristic)]
    pub heuristic: Heuristic,

    /// The uniprocessor test admitting each processor, POLICY:TEST as in
    /// `rtlab sweep --test` (e.g. rm:rta, dm:rta, edf:edf-demand).
    #[arg(long, default_value = "edf:edf-demand", value_parser = SweepTest::parse)]
    pub test: SweepTest,

    /// Print the JSON document (the guide, `rtlab partition`) instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Write the partitioned set (every task's `cpu`, `processors = M`) to
    /// this file: TOML, or JSON when it ends in .json.
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,
}

fn parse_heuristic(text: &str) -> Result<Heuristic, String> {
    Heuristic::from_name(text)
        .ok_or_else(|| format!("unknown heuristic `{text}`: use {}", Heuristic::names()))
}

/// Runs `rtlab partition`.
pub fn run(args: &PartitionArgs) -> anyhow::Result<std::process::ExitCode> {
    // `partition` takes no overheads: an overhead-aware test would admit no
    // processor.
    if args.test.test.has_overheads() {
        let instead = if args.test.policy == rtlab_model::policy::AnalysedPolicy::Edf {
            "edf:edf-demand"
        } else {
            "rm:rta or dm:rta"
        };
        return Err(usage(format!(
            "--test {} charges scheduler overheads, and `rtlab partition` takes none: use {instead}",
            args.test.name()
        )));
    }
    let loaded = file::load(&args.file)?;
    let set = &loaded.set;
    let m = match args.cpus {
        Some(m) => m,
        None if set.processors() > 1 => set.processors(),
        None => {
            return Err(usage(
                "--cpus: give the number of processors (the file names only one)",
            ))
        }
    };
    let found = partition::partition(set, m, args.heuristic, args.test, &Options::default())?;
    let doc = found.document(set, &loaded.origin);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for note in &loaded.notes {
            eprintln!("{note}");
        }
        out!("{}", rtlab_report::partition_text::describe(&doc, m));
    }
    if let Some(out) = &args.out {
        // A partitioned set gives every task a `cpu`: a set that does not
        // fit has none to write (the result above says why).
        if let Some(task) = found.unplaced {
            anyhow::bail!(
                "--out {out}: not written: task `{}` fits no processor, so the set has no partition to write",
                printable(&set.tasks[task].name)
            );
        }
        let placed = found.apply(set);
        let text = match Format::from_path(Path::new(out)) {
            Format::Json => file::to_json_string(&placed) + "\n",
            Format::Toml => file::to_toml_string(&placed),
        };
        rtlab_model::file::write_output(out, text)
            .with_context(|| format!("--out {out}: cannot write"))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}
