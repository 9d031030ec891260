//! `rtlab taskset gen`: random task sets, byte-identical for the same flags.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use rtlab_model::generate::{
    generate_sets, DeadlineModel, GeneratorConfig, PeriodDistribution, PeriodKind,
    UtilizationMethod,
};
use rtlab_model::schema::GeneratedSetDocument;
use rtlab_model::Nanos;

use crate::set_files::{write_sets, OutputFormat};
use crate::usage::{generator_usage, usage};
use rtlab_report::taskset_text::generated_sets_table;

/// `rtlab taskset gen`
#[derive(Debug, Args)]
pub struct GenArgs {
    /// Tasks per set.
    #[arg(short = 'n', long, default_value_t = 10)]
    pub tasks: usize,
    /// Total utilization of each set (may exceed 1 for multiprocessor studies).
    #[arg(short = 'u', long, default_value_t = 0.75)]
    pub utilization: f64,
    /// How many sets.
    #[arg(long, default_value_t = 1)]
    pub count: u64,
    /// Seed of the stream: the same flags and seed give the same bytes on every machine.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Utilization algorithm: uunifast, uunifast-discard or randfixedsum.
    #[arg(long, default_value = "randfixedsum")]
    pub method: UtilizationMethod,
    /// Largest utilization of one task, in (0, 1].
    #[arg(long, default_value_t = 1.0)]
    pub max_task_utilization: f64,
    /// Period distribution: uniform, log-uniform or harmonic.
    #[arg(long, default_value = "log-uniform")]
    pub periods: PeriodKind,
    /// Smallest period.
    #[arg(long, default_value = "10ms")]
    pub period_min: Nanos,
    /// Largest period.
    #[arg(long, default_value = "1s")]
    pub period_max: Nanos,
    /// Periods are multiples of this (uniform and log-uniform).
    #[arg(long, default_value = "1ms")]
    pub period_granularity: Nanos,
    /// Deadlines: `implicit` (D = T), or `constrained[:LO..HI]` for D = C + x (T - C), x uniform in [LO, HI] (default 0..1).
    #[arg(long, default_value = "implicit")]
    pub deadlines: DeadlineModel,
    /// Sets are named PREFIX-0000, PREFIX-0001, ...
    #[arg(long, default_value = "gen")]
    pub prefix: String,
    /// Write one file per set into this folder (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// File format of the sets written.
    #[arg(long, value_enum, default_value_t = OutputFormat::Toml)]
    pub format: OutputFormat,
    /// With --out: print the list of sets written as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl GenArgs {
    /// The generator configuration these flags describe.
    pub fn config(&self) -> GeneratorConfig {
        let periods = PeriodDistribution::new(
            self.periods,
            self.period_min,
            self.period_max,
            self.period_granularity,
        );
        GeneratorConfig {
            tasks: self.tasks,
            utilization: self.utilization,
            method: self.method,
            max_task_utilization: self.max_task_utilization,
            periods,
            deadlines: self.deadlines,
            seed: self.seed,
            name_prefix: self.prefix.clone(),
        }
    }
}

/// Runs `rtlab taskset gen`.
pub fn run(args: &GenArgs) -> anyhow::Result<ExitCode> {
    let Some(out) = &args.out else {
        if args.count != 1 {
            return Err(usage(format!(
                "--count {} needs --out DIR (one file per set)",
                args.count
            )));
        }
        if args.json {
            return Err(usage("--json lists the files written with --out; to print the set itself as JSON use --format json"));
        }
        // The generator's settings are flags: its refusals are usage errors.
        let sets = generate_sets(&args.config(), 1).map_err(generator_usage)?;
        out!("{}", args.format.render(&sets[0]));
        return Ok(ExitCode::SUCCESS);
    };
    let sets = generate_sets(&args.config(), args.count).map_err(generator_usage)?;
    let written = write_sets(&sets, out, args.format)?;
    if args.json {
        let list: Vec<_> = sets
            .iter()
            .zip(&written)
            .map(|(set, path)| GeneratedSetDocument {
                name: set.name.clone(),
                file: path.display().to_string(),
                tasks: set.tasks.len(),
                utilization: set.utilization(),
                hyperperiod_ns: set.hyperperiod().ok().map(Nanos::as_ns),
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        outln!("{}", generated_sets_table(&sets, &written));
        outln!("\nwrote {} sets to {}", sets.len(), out.display());
    }
    Ok(ExitCode::SUCCESS)
}
