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

use std::collections::BTreeMap;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rtlab_analysis::overhead_rta::TimerModel;
use rtlab_analysis::schema::{linux_timer_fields, SweepDocument, SweepRowDocument};
use rtlab_analysis::suite::Options;
use rtlab_analysis::sweep::{self, Sweep, SweepTest};
use rtlab_model::generate::{DeadlineModel, GeneratorConfig, UtilizationMethod};
use rtlab_model::Nanos;
use serde_json::Value;

use crate::usage::{generator_usage, usage};
use rtlab_report::table;

/// Arguments of `rtlab sweep`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    rtlab sweep --tasks 10 --from 0.5 --to 1.0 --step 0.05 --sets 1000 --seed 1\n  \
    rtlab sweep --tasks 5 --from 0.6 --to 1.0 --step 0.1 --sets 100 --plot ratio.svg\n  \
    rtlab sweep --test rm:hyperbolic,rm:rta,opa:rta,edf:edf-demand --deadlines constrained:0.5..1 --csv ratio.csv\n  \
    rtlab sweep --test rm:rta,rm:rta-overheads --overheads builtin:rtmach --tick 1ms --json")]
pub struct SweepArgs {
    /// Tasks per generated set.
    #[arg(long, default_value_t = 10)]
    pub tasks: usize,

    /// First utilization step.
    #[arg(long, default_value_t = 0.05)]
    pub from: f64,

    /// Last utilization step (included).
    #[arg(long, default_value_t = 1.0)]
    pub to: f64,

    /// Utilization increment.
    #[arg(long, default_value_t = 0.05)]
    pub step: f64,

    /// Random task sets per utilization step.
    #[arg(long, default_value_t = 1000)]
    pub sets: u64,

    /// Seed: the same seed gives the same numbers on every machine.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Utilization generator: uunifast, uunifast-discard or randfixedsum.
    #[arg(long, value_parser = parse_method)]
    pub method: Option<UtilizationMethod>,

    /// Deadlines: implicit, or constrained:X_MIN..X_MAX (D = C + x(T - C)).
    #[arg(long, value_parser = parse_deadlines)]
    pub deadlines: Option<DeadlineModel>,

    /// Tests to count, comma-separated POLICY:TEST (e.g. rm:rta,edf:edf-demand).
    #[arg(
        long = "test",
        value_delimiter = ',',
        value_parser = SweepTest::parse,
        default_value = "rm:liu-layland,rm:hyperbolic,rm:rta,dm:rta,edf:edf-demand"
    )]
    pub tests: Vec<SweepTest>,

    /// Overheads for rta-overheads and edf-demand-overheads (file or builtin:rtmach).
    #[arg(long, value_name = "FILE|builtin:rtmach")]
    pub overheads: Option<String>,

    /// Tick for paper 004's timer-driven model in rta-overheads and
    /// edf-demand-overheads; overrides the overheads file's
    /// `releases`/`tick` (without either: tickless).
    #[arg(long, requires = "overheads", value_parser = parse_tick)]
    pub tick: Option<Nanos>,

    /// Also write the ratios as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<std::path::PathBuf>,

    /// Print the JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Draw the ratio against utilization, one line per test, as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
}

fn parse_method(text: &str) -> Result<UtilizationMethod, String> {
    text.parse().map_err(|e| format!("{e}"))
}

fn parse_deadlines(text: &str) -> Result<DeadlineModel, String> {
    text.parse().map_err(|e| format!("{e}"))
}

fn parse_tick(text: &str) -> Result<Nanos, String> {
    let tick: Nanos = text.parse().map_err(|e| format!("{e}"))?;
    if tick.is_zero() {
        return Err("a tick must be longer than 0".into());
    }
    Ok(tick)
}

/// The utilization steps `from, from + step, ..., to` (to 1e-9); errors
/// are usage errors.
fn steps(from: f64, to: f64, step: f64) -> anyhow::Result<Vec<f64>> {
    let check = |ok: bool, message: String| if ok { Ok(()) } else { Err(usage(message)) };
    check(
        from.is_finite() && to.is_finite() && step.is_finite(),
        "--from, --to and --step must be numbers".into(),
    )?;
    check(
        from > 0.0,
        format!("--from must be greater than 0 (got {from})"),
    )?;
    check(
        to >= from,
        format!("--to ({to}) must not be below --from ({from})"),
    )?;
    check(
        step > 0.0,
        format!("--step must be greater than 0 (got {step})"),
    )?;
    // Checked as a float: a tiny step makes more steps than a u64 holds.
    let steps = ((to - from) / step + 1e-9).floor() + 1.0;
    check(
        steps <= 10_000.0,
        format!("{steps:.0} utilization steps is too many; raise --step"),
    )?;
    let count = steps as u64;
    Ok((0..count)
        .map(|k| ((from + k as f64 * step) * 1e9).round() / 1e9)
        .collect())
}

/// Runs `rtlab sweep`.
pub fn run(args: &SweepArgs) -> anyhow::Result<Value> {
    if args.sets == 0 {
        return Err(usage("--sets must be at least 1"));
    }
    if args.tasks > sweep::MAX_SWEEP_TASKS {
        return Err(usage(format!(
            "--tasks {} is above the sweep's limit of {} tasks per set (its exact tests take O(n²) \
             time per set, about 4 s at 10000 tasks); analyse one large set with rtlab analyze",
            args.tasks,
            sweep::MAX_SWEEP_TASKS
        )));
    }
    if args.tests.is_empty() {
        return Err(usage("--test needs at least one POLICY:TEST"));
    }
    let utilizations = steps(args.from, args.to, args.step)?;
    let mut generator = GeneratorConfig {
        tasks: args.tasks,
        seed: args.seed,
        name_prefix: "sweep".into(),
        ..GeneratorConfig::default()
    };
    if let Some(method) = args.method {
        generator.method = method;
    }
    if let Some(deadlines) = args.deadlines {
        generator.deadlines = deadlines;
    }
    let overheads = super::analyze::load_overheads(args.overheads.as_deref())?;
    if let Some(t) = args.tests.iter().find(|t| t.test.has_overheads()) {
        if overheads.is_none() {
            return Err(usage(format!("--test {} needs --overheads", t.test)));
        }
    }
    let options = Options {
        overheads,
        timers: args.tick.map(TimerModel::Tick).into_iter().collect(),
        ..Options::default()
    };

    let bar = ProgressBar::new(args.sets * utilizations.len() as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} sets ({per_sec}, eta {eta})")
    {
        bar.set_style(style);
    }
    let result = sweep::sweep(
        &generator,
        &utilizations,
        args.sets,
        &args.tests,
        &options,
        &|| bar.inc(1),
    );
    bar.finish_and_clear();
    // The generator's settings are flags: its refusals are usage errors.
    let result = result.map_err(generator_usage)?;

    if let Some(path) = &args.csv {
        std::fs::write(path, csv(&result))
            .with_context(|| format!("cannot write {}", path.display()))?;
        crate::wrote::wrote(path, "acceptance ratio per utilization, CSV");
    }
    // The overhead-aware tests' timer model (one: sweep takes one --tick).
    let timer = args
        .tests
        .iter()
        .any(|t| t.test.has_overheads())
        .then(|| options.platforms().next().map(|p| p.timer))
        .flatten();
    let doc = json_document(args, &generator, &result, timer);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", human(args, &result, timer));
    }
    let doc = serde_json::to_value(&doc)?;
    if let Some(path) = &args.plot {
        let run = rtlab_report::view::RunView::unsaved("sweep", doc.clone());
        crate::plot_file::write(path, &run)?;
    }
    crate::save::save_document(&args.save, rtlab_store::RunKind::Sweep, None, &doc, false)?;
    Ok(doc)
}

/// `--csv`: `utilization,sets,<test>...`, numbers as Rust prints them.
fn csv(result: &Sweep) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let header = ["utilization".to_string(), "sets".to_string()];
    let names = result.tests.iter().map(SweepTest::name);
    // Writing to a Vec cannot fail.
    let _ = out.write_record(header.into_iter().chain(names));
    for row in &result.rows {
        let ratios = (0..result.tests.len()).map(|k| row.ratio(k).to_string());
        let cells = [row.utilization.to_string(), row.sets.to_string()];
        let _ = out.write_record(cells.into_iter().chain(ratios));
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn human(args: &SweepArgs, result: &Sweep, timer: Option<TimerModel>) -> String {
    let names: Vec<String> = result.tests.iter().map(SweepTest::name).collect();
    // A `TEST ?` column (sets without a verdict) for each test with any.
    let undecided: Vec<usize> = (0..names.len())
        .filter(|&k| result.rows.iter().any(|r| r.inconclusive[k] > 0))
        .collect();
    let undecided_names: Vec<String> = undecided
        .iter()
        .map(|&k| format!("{} ?", names[k]))
        .collect();
    let mut header = vec!["U"];
    header.extend(names.iter().map(String::as_str));
    header.extend(undecided_names.iter().map(String::as_str));
    let mut t = table::new(&header, &header);
    for row in &result.rows {
        let mut cells = vec![format!("{:.3}", row.utilization)];
        cells.extend((0..names.len()).map(|k| format!("{:.3}", row.ratio(k))));
        cells.extend(undecided.iter().map(|&k| row.inconclusive[k].to_string()));
        t.add_row(cells);
    }
    let note = if undecided.is_empty() {
        ""
    } else {
        "TEST ?: sets without a verdict (a sufficient test that did not pass, or an exact test that gave up)\n"
    };
    let timer = timer.map_or(String::new(), |t| format!(", overhead-aware tests {t}"));
    format!(
        "schedulability ratio: {} sets of {} tasks per step, seed {}{timer}\n{}\n{note}",
        args.sets,
        args.tasks,
        args.seed,
        table::render(&t)
    )
}

/// One value per test, keyed by the test's name (sorted, as printed).
fn by_test<T>(names: &[String], value: impl Fn(usize) -> T) -> BTreeMap<String, T> {
    names
        .iter()
        .enumerate()
        .map(|(k, name)| (name.clone(), value(k)))
        .collect()
}

fn json_document(
    args: &SweepArgs,
    generator: &GeneratorConfig,
    result: &Sweep,
    timer: Option<TimerModel>,
) -> SweepDocument {
    let (timer, periodic_tick_ns) = linux_timer_fields(timer);
    let names: Vec<String> = result.tests.iter().map(SweepTest::name).collect();
    let rows = result
        .rows
        .iter()
        .map(|row| SweepRowDocument {
            utilization: row.utilization,
            sets: row.sets,
            accepted: by_test(&names, |k| row.accepted[k]),
            ratio: by_test(&names, |k| row.ratio(k)),
            inconclusive: by_test(&names, |k| row.inconclusive[k]),
        })
        .collect();
    SweepDocument {
        tasks: args.tasks,
        sets_per_step: args.sets,
        seed: args.seed,
        method: generator.method.to_string(),
        deadlines: generator.deadlines.to_string(),
        tests: names,
        rows,
        timer,
        periodic_tick_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utilization_steps_are_exact_and_inclusive() {
        assert_eq!(
            steps(0.5, 1.0, 0.1).unwrap(),
            vec![0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
        );
        assert_eq!(steps(0.7, 0.7, 0.05).unwrap(), vec![0.7]);
        assert!(steps(0.0, 1.0, 0.1).is_err());
        assert!(steps(0.5, 0.4, 0.1).is_err());
        assert!(steps(0.5, 1.0, 0.0).is_err());
    }

    #[test]
    fn the_csv_has_a_ratio_column_per_test_in_the_documented_bytes() {
        let test = |t: &str| SweepTest::parse(t).unwrap();
        let row =
            |utilization: f64, sets: u64, accepted: Vec<u64>| rtlab_analysis::sweep::SweepRow {
                utilization,
                sets,
                inconclusive: vec![0; accepted.len()],
                accepted,
            };
        let result = Sweep {
            tests: vec![test("rm:rta"), test("edf:edf-demand")],
            rows: vec![
                row(0.5, 4, vec![4, 4]),
                row(0.95, 3, vec![1, 2]),
                row(1.0, 0, vec![0, 0]),
            ],
        };
        assert_eq!(
            csv(&result),
            "utilization,sets,rm:rta,edf:edf-demand\n\
             0.5,4,1,1\n\
             0.95,3,0.3333333333333333,0.6666666666666666\n\
             1,0,0,0\n"
        );
    }
}
