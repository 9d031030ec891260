//! `rtlab sweep`: schedulability ratio against utilization on random task
//! sets, for each chosen test; parallel, deterministic for a seed.
//!
//! # JSON schema (`--json`)
//!
//! ```text
//! {
//!   "tasks": 10, "sets_per_step": 1000, "seed": 0,
//!   "method": "randfixedsum", "deadlines": "implicit",
//!   "tests": ["rm:rta", "edf:edf-demand"],          // column order
//!   "timer": "hrtimer + tick 4ms",                  // only for Linux's model (overheads file)
//!   "periodic_tick_ns": 4000000,                    // only for Linux's model with a tick
//!   "sharing": { "cs_max": "100us", "cs_min": "10us",  // only with --locking: the sections
//!                "heuristic": "wf-decreasing", "requests": 1, "resources": 2, "sharing": 0.5 },
//!   "rows": [
//!     { "utilization": 0.8, "sets": 1000,
//!       "accepted": { "rm:rta": 912, "edf:edf-demand": 1000 },
//!       "ratio":    { "rm:rta": 0.912, "edf:edf-demand": 1.0 },
//!       "inconclusive": { "rm:rta": 0, "edf:edf-demand": 0 } }
//!   ]
//! }
//! ```
//!
//! `inconclusive` counts the sets on which a test gave no verdict: a
//! sufficient test that did not pass, or an exact test that gave up. The
//! table adds a column `TEST ?` with these counts for each test that has
//! any.
//!
//! `--csv FILE` writes `utilization,sets,<test>...` with the ratios.
//!
//! `--shard I/N --out FILE` runs one shard of the sweep and writes its
//! counts (`rtlab_analysis::sweep::ShardResult`); `rtlab sweep merge FILE...`
//! merges shards into exactly what the unsharded sweep prints. The sweep
//! itself is the library's (`rtlab_analysis::sweep`): this module parses
//! flags into a `SweepSpec` and prints results.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use rtlab_analysis::sweep::{self, ShardResult, SweepColumn, SweepError, SweepResult, SweepSpec};
use rtlab_model::generate::{DeadlineModel, UtilizationMethod};
use rtlab_model::Nanos;
use serde_json::Value;

use crate::setup::say;
use crate::usage::usage;
use rtlab_report::sweep_text;

mod parse;
use parse::{parse_deadlines, parse_method, parse_shard, parse_tick};

/// Arguments of `rtlab sweep`.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  \
    rtlab sweep --tasks 10 --from 0.5 --to 1.0 --step 0.05 --sets 1000 --seed 1\n  \
    rtlab sweep --tasks 5 --from 0.6 --to 1.0 --step 0.1 --sets 100 --plot ratio.svg\n  \
    rtlab sweep --test rm:hyperbolic,rm:rta,opa:rta,edf:edf-demand --deadlines constrained:0.5..1 --csv ratio.csv\n  \
    rtlab sweep --test rm:rta,rm:rta-overheads --overheads builtin:rtmach --tick 1ms --json\n  \
    rtlab sweep --tasks 10 --sets 1000 --seed 1 --shard 0/2 --out shard-0.json --threads 1\n  \
    rtlab sweep --cpus 4 --tasks 8 --from 0.4 --to 4.0 --step 0.4 --sets 200 --test gedf:gfb,gedf:bcl,gedf:rta,gfp:rta,pedf:ff-decreasing --plot mp.svg\n  \
    rtlab sweep --cpus 4 --tasks 8 --from 0.4 --to 3.2 --step 0.4 --sets 50 --locking all --resources 4 --sharing 0.3 --cs-length 50us..200us\n  \
    rtlab sweep --cpus 4 --tasks 8 --from 2.0 --to 4.0 --step 0.4 --sets 50 --test gedf:bcl,gedf:rta,gedf:sim --plot gap.svg"
)]
pub struct SweepArgs {
    /// Merge shard files (`rtlab sweep merge shard-*.json`).
    #[command(subcommand)]
    pub command: Option<SweepCommand>,

    /// Tasks per generated set.
    #[arg(long, default_value_t = SweepSpec::default().tasks)]
    pub tasks: usize,

    /// First utilization step (total utilization U of a set).
    #[arg(long, default_value_t = SweepSpec::default().from)]
    pub from: f64,

    /// Last utilization step (included).
    #[arg(long, default_value_t = SweepSpec::default().to)]
    pub to: f64,

    /// Utilization increment.
    #[arg(long, default_value_t = SweepSpec::default().step)]
    pub step: f64,

    /// Random task sets per utilization step.
    #[arg(long, default_value_t = SweepSpec::default().sets)]
    pub sets: u64,

    /// Seed: the same seed gives the same numbers on every machine.
    #[arg(long, default_value_t = SweepSpec::default().seed)]
    pub seed: u64,

    /// Utilization generator: uunifast, uunifast-discard or randfixedsum.
    #[arg(long, value_parser = parse_method)]
    pub method: Option<UtilizationMethod>,

    /// Deadlines: implicit, or constrained:X_MIN..X_MAX (D = C + x(T - C)).
    #[arg(long, value_parser = parse_deadlines)]
    pub deadlines: Option<DeadlineModel>,

    /// Tests to count, comma-separated POLICY:TEST (e.g. rm:rta,edf:edf-demand) [default:
    /// rm:liu-layland,rm:hyperbolic,rm:rta,dm:rta,edf:edf-demand]; with --cpus M > 1, multiprocessor
    /// tests [default: gedf:gfb,gedf:bcl,gedf:rta,gfp:rta,pedf:ff-decreasing]. SCHEDULER:sim
    /// simulates each set instead (edf, fp-rm, fp-dm; with --cpus gedf, gfp-rm, gfp-dm, pedf,
    /// pfp-rm, pfp-dm): synchronous release, every job at its WCET.
    #[arg(long = "test", value_delimiter = ',', value_parser = SweepColumn::parse)]
    pub tests: Option<Vec<SweepColumn>>,

    /// Overheads for rta-overheads and edf-demand-overheads (file or builtin:rtmach).
    #[arg(long, value_name = "FILE|builtin:rtmach")]
    pub overheads: Option<String>,

    /// Tick for Arakawa et al. 1993's timer-driven model in rta-overheads and
    /// edf-demand-overheads; overrides the overheads file's
    /// `releases`/`tick` (without either: tickless).
    #[arg(long, requires = "overheads", value_parser = parse_tick)]
    pub tick: Option<Nanos>,

    /// Processors M (1 to 1024): the utilization steps are the total U (up to M), the tests
    /// multiprocessor ones, the plot against U/M.
    #[arg(long, default_value_t = SweepSpec::default().cpus, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub cpus: u32,

    #[command(flatten)]
    pub locking: locking::LockingFlags,

    /// Read the sweep from a JSON spec instead of the flags above (the guide
    /// "Sweeps on a cluster"; keys tasks, from, to, step, sets, seed, method,
    /// deadlines, tests, overheads, tick, cpus, sharing, all optional).
    #[arg(
        long,
        value_name = "FILE.json",
        conflicts_with_all = [
            "tasks", "from", "to", "step", "sets", "seed", "method", "deadlines", "tests",
            "overheads", "tick", "cpus", "locking"
        ]
    )]
    pub spec: Option<PathBuf>,

    /// Run only shard I of N (0 <= I < N; samples split by global index) and
    /// write its counts to --out, for `rtlab sweep merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, requires = "out")]
    pub shard: Option<(u64, u64)>,

    /// The shard file to write (with --shard).
    #[arg(long, value_name = "FILE", requires = "shard")]
    pub out: Option<PathBuf>,

    /// Worker threads, 1 to 1024 (default: one per CPU). The numbers do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=sweep::MAX_SWEEP_THREADS as i64))]
    pub threads: Option<u16>,

    #[command(flatten)]
    pub output: OutputFlags,
}

/// `rtlab sweep merge`.
#[derive(Debug, Subcommand)]
pub enum SweepCommand {
    /// Merge shard files into the sweep they are parts of.
    Merge(MergeArgs),
}

/// Arguments of `rtlab sweep merge`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    rtlab sweep --sets 100 --shard 0/2 --out s0.json && rtlab sweep --sets 100 --shard 1/2 --out s1.json && rtlab sweep merge s0.json s1.json --json")]
pub struct MergeArgs {
    /// The shard files (`rtlab sweep --shard I/N --out FILE`), all N of one sweep, in any order.
    #[arg(required = true, value_name = "SHARD.json")]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub output: OutputFlags,
}

/// What a whole sweep prints and writes.
#[derive(Debug, Clone, Default, Args)]
pub struct OutputFlags {
    /// Also write the ratios as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Print the JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Draw the ratio against utilization, one line per test, as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
}

impl SweepArgs {
    /// The sweep to run: `--spec FILE`, else the flags.
    fn load_spec(&self) -> anyhow::Result<SweepSpec> {
        let Some(path) = &self.spec else {
            return Ok(self.spec_of_flags());
        };
        let name = rtlab_model::printable(&path.display().to_string()).to_string();
        let text = rtlab_model::file::read_text(path)
            .map_err(|reason| anyhow::anyhow!("{name}: cannot read: {reason}"))?;
        SweepSpec::from_json(&text).map_err(|e| in_file(&name, e))
    }

    /// The flags as a spec.
    pub fn spec_of_flags(&self) -> SweepSpec {
        let defaults = SweepSpec::default();
        SweepSpec {
            tasks: self.tasks,
            from: self.from,
            to: self.to,
            step: self.step,
            sets: self.sets,
            seed: self.seed,
            method: self.method.unwrap_or(defaults.method),
            deadlines: self.deadlines.unwrap_or(defaults.deadlines),
            tests: self.locking.columns(self.tests.as_deref(), self.cpus),
            overheads: self.overheads.clone(),
            tick: self.tick,
            cpus: self.cpus,
            sharing: self.locking.sharing(),
        }
    }
}

/// A library error as the command line says it: a setting is a usage
/// error naming its flag (`--sets must be at least 1`), or the key of the
/// `--spec` file (an error in a file, exit 1); the rest exit 1.
fn flag_error(error: SweepError, spec_file: Option<&Path>) -> anyhow::Error {
    match (error, spec_file) {
        (e @ SweepError::Setting(_), None) => usage(e.message_with(&|s| format!("--{s}"))),
        (e @ SweepError::Setting(_), Some(path)) => anyhow::anyhow!(
            "{}: {}",
            rtlab_model::printable(&path.display().to_string()),
            e.message_with(&|s| format!("`{s}`"))
        ),
        (other, _) => anyhow::anyhow!(other),
    }
}

/// A document error in file `name`: `name:line:column: problem`.
fn in_file(name: &str, error: SweepError) -> anyhow::Error {
    match error {
        SweepError::Document {
            line: 0, problem, ..
        } => anyhow::anyhow!("{name}: {problem}"),
        SweepError::Document {
            line,
            column,
            problem,
            ..
        } => anyhow::anyhow!("{name}:{line}:{column}: {problem}"),
        other => anyhow::anyhow!("{name}: {other}"),
    }
}

/// Runs `rtlab sweep` (or `rtlab sweep merge`).
pub fn run(args: &SweepArgs) -> anyhow::Result<Value> {
    if let Some(SweepCommand::Merge(merge)) = &args.command {
        return run_merge(merge);
    }
    let spec = args.load_spec()?;
    let refusal = |e| flag_error(e, args.spec.as_deref());
    let prepared = spec
        .prepare()
        .map_err(refusal)?
        .with_simulator(rtlab_sim::sweep_test::simulator());
    let (index, count) = args.shard.unwrap_or((0, 1));
    // One shard is computed, not the N (N comes from the user: up to 2^64 - 1).
    let shard = sweep::Shard::of(index, count, prepared.samples()).context("no such shard")?;
    if shard.is_empty() {
        say(&format!(
            "note: shard {index}/{count} holds no sample: the sweep has {} samples for {count} shards",
            prepared.samples()
        ));
    }
    let bar = ProgressBar::new(shard.len());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} sets ({per_sec}, eta {eta})")
    {
        bar.set_style(style);
    }
    let progress = |sets: u64| {
        bar.inc(sets);
        true
    };
    let result = match args.threads {
        Some(threads) => rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(threads))
            .build()
            .context("cannot start the worker threads")?
            .install(|| sweep::run_prepared_shard(&prepared, index, count, &progress)),
        None => sweep::run_prepared_shard(&prepared, index, count, &progress),
    };
    bar.finish_and_clear();
    let result = result.map_err(refusal)?;
    match (&args.out, args.shard) {
        (Some(path), Some((i, n))) => {
            write_shard(path, &result)?;
            // Not eprintln!, which panics when the terminal is gone (SIGHUP).
            let _ = writeln!(
                std::io::stderr(),
                "rtlab: wrote shard {i}/{n} (samples {}..{} of {}) to {}",
                result.shard.first,
                result.shard.end,
                prepared.samples(),
                path.display()
            );
            Ok(serde_json::to_value(&result)?)
        }
        _ => report(&sweep::merge(&[result])?, &args.output),
    }
}

/// Writes a shard file whole or not at all (`write_output`: a `.partial`
/// renamed; a device or pipe written in place, never replaced).
fn write_shard(path: &Path, shard: &ShardResult) -> anyhow::Result<()> {
    rtlab_model::file::write_output(path, shard.to_json() + "\n")
        .with_context(|| format!("--out: cannot write {}", path.display()))
}

/// `rtlab sweep merge FILE...`: reads every shard, then merges; any
/// refusal names the file and nothing is printed.
fn run_merge(args: &MergeArgs) -> anyhow::Result<Value> {
    let name = |path: &Path| rtlab_model::printable(&path.display().to_string()).to_string();
    let shards = args
        .files
        .iter()
        .map(|path| {
            let text = rtlab_model::file::read_text(path)
                .map_err(|reason| anyhow::anyhow!("{}: cannot read: {reason}", name(path)))?;
            ShardResult::from_json(&text).map_err(|e| in_file(&name(path), e))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let merged = sweep::merge(&shards).map_err(|e| match e {
        SweepError::Merge { position, problem } => match args.files.get(position) {
            Some(path) => anyhow::anyhow!("{}: {problem}", name(path)),
            None => anyhow::anyhow!("rtlab sweep merge: {problem}"),
        },
        other => anyhow::anyhow!(other),
    })?;
    report(&merged, &args.output)
}

/// Prints a whole sweep (table or `--json`) and writes `--csv`, `--plot`
/// and `--save`.
fn report(result: &SweepResult, output: &OutputFlags) -> anyhow::Result<Value> {
    if let Some(path) = &output.csv {
        rtlab_model::file::write_output(path, sweep_text::csv(result))
            .with_context(|| format!("cannot write {}", path.display()))?;
        crate::wrote::wrote(path, "acceptance ratio per utilization, CSV");
    }
    if output.json {
        outln!("{}", result.document_json());
    } else {
        out!("{}", sweep_text::describe(result));
    }
    let doc = serde_json::to_value(result.document())?;
    if let Some(path) = &output.plot {
        let run = rtlab_report::view::RunView::unsaved("sweep", doc.clone());
        crate::plot_file::write(path, &run)?;
    }
    crate::save::save_document(&output.save, rtlab_store::RunKind::Sweep, None, &doc, false)?;
    Ok(doc)
}

mod locking;

#[cfg(test)]
mod tests;
