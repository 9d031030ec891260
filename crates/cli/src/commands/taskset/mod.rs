//! `rtlab taskset list | show | validate | gen | export | import`; `gen`
//! is [`generate`], `export` and `import` are [`interchange`].

pub mod generate;
pub mod interchange;

use std::process::ExitCode;

use clap::{Args, Subcommand};
use rtlab_model::file::{self, LoadError, LocatedDiagnostic};
use rtlab_model::schema::{
    CatalogRow, CriticalSectionDocument, DiagnosticDocument, ParameterDocument, TaskDocument,
    TasksetDocument, ValidationDocument,
};
use rtlab_model::{catalog, printable, Nanos, Severity, TaskSet};

use rtlab_report::table;
use rtlab_report::taskset_text::{self, describe_taskset};

/// `rtlab taskset ...`
#[derive(Debug, Subcommand)]
pub enum TasksetCommand {
    /// List the built-in task sets (usable anywhere a file is, as `builtin:NAME`).
    #[command(after_help = "Examples:\n  rtlab taskset list\n  rtlab taskset list --json")]
    List(ListArgs),
    /// Show a task set: its tasks, utilization, density and hyperperiod.
    #[command(after_help = "Examples:\n  rtlab taskset show builtin:avionics\n  \
                            rtlab taskset show 'builtin:hartstone-ph?kilo-whet=1ms' --json\n  \
                            rtlab taskset show my-set.toml")]
    Show(ShowArgs),
    /// Check task-set files; print every problem as `file:line:col: message`.
    #[command(after_help = "Exits 1 when any file is invalid.\n\nExamples:\n  \
                            rtlab taskset validate my-set.toml\n  rtlab taskset validate sets/*.toml --json")]
    Validate(ValidateArgs),
    /// Generate random task sets (UUniFast, UUniFast-discard, RandFixedSum), deterministic per seed.
    #[command(after_help = GEN_EXAMPLES)]
    Gen(generate::GenArgs),
    /// Write a task set for another tool (SimSo XML, rt-app JSON).
    #[command(after_help = EXPORT_EXAMPLES)]
    Export(interchange::ExportArgs),
    /// Read another tool's task set (a SimSo configuration, an rt-app workload) and write it as an rtlab file.
    #[command(after_help = IMPORT_EXAMPLES)]
    Import(interchange::ImportArgs),
}

const EXPORT_EXAMPLES: &str = "Examples:\n  \
    rtlab taskset export builtin:lf-scenario-4 --format simso --scheduler edf --out lf.xml\n  \
    rtlab taskset export builtin:avionics --format simso -s fp:rm -d 2s\n  \
    rtlab taskset export builtin:avionics --format simso --cpus 2 -s gedf -d 1s\n  \
    rtlab taskset export builtin:avionics --format simso --cpus 2 -s pedf --partition wf-decreasing -d 1s\n  \
    rtlab taskset export builtin:hartstone-ph --format rt-app --cpus 2 -d 10s\n  \
    rtlab taskset export builtin:hartstone-ph --format rt-app --policy rm -d 10s\n  \
    rtlab taskset export builtin:lf-scenario-4 --format rt-app --policy edf --calibration 20\n\n\
    rt-app's times are whole microseconds and its duration whole seconds: finer values are\n\
    refused, never rounded. The guide \"Other tools' formats\" lists what maps to what.";

const IMPORT_EXAMPLES: &str = "A SimSo configuration (root <simulation>) and an rt-app workload (a JSON \
    object with a `tasks` object) are recognised by their content wherever a task-set file is \
    accepted (`rtlab sim conf.xml ...`, `rtlab analyze workload.json ...`). What rtlab cannot \
    model is refused at its place, as file:line:col.\n\nExamples:\n  \
    rtlab taskset export builtin:lf-scenario-4 --format simso --out lf.xml && rtlab taskset import lf.xml\n  \
    rtlab taskset export builtin:avionics --format simso -d 2s --out a.xml && rtlab taskset import a.xml --to json --out a.json\n  \
    rtlab taskset export builtin:hartstone-ph --format rt-app --out w.json && rtlab taskset import w.json --format rt-app --out set.toml";

const GEN_EXAMPLES: &str = "Examples:\n  \
    rtlab taskset gen --tasks 8 --utilization 0.7 --count 100 --seed 1 --out sets/\n  \
    rtlab taskset gen -n 5 -u 0.9 --periods log-uniform --period-min 1ms --period-max 1s --period-granularity 1ms\n  \
    rtlab taskset gen -n 10 -u 0.8 --method randfixedsum --deadlines constrained:0.5..1 --count 20 --out sets/";

/// `rtlab taskset list`
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON: a list of {name, tasks, utilization, summary, source, parameters}.
    #[arg(long)]
    pub json: bool,
}

/// `rtlab taskset show`
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A task-set file (.toml or .json) or `builtin:NAME`.
    pub taskset: String,
    /// Print JSON (schema in the guide, "rtlab taskset show --json").
    #[arg(long)]
    pub json: bool,
}

/// `rtlab taskset validate`
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Task-set files (.toml or .json) or `builtin:NAME`.
    #[arg(required = true)]
    pub tasksets: Vec<String>,
    /// Print JSON: a list of {file, valid, errors, notes}.
    #[arg(long)]
    pub json: bool,
}

/// Runs one `taskset` subcommand.
pub fn run(command: TasksetCommand) -> anyhow::Result<ExitCode> {
    match command {
        TasksetCommand::List(args) => list(&args),
        TasksetCommand::Show(args) => show(&args),
        TasksetCommand::Validate(args) => validate(&args),
        TasksetCommand::Gen(args) => generate::run(&args),
        TasksetCommand::Export(args) => interchange::export(&args),
        TasksetCommand::Import(args) => interchange::import(&args),
    }
}

fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let mut rows = Vec::new();
    for entry in catalog::entries() {
        let set = catalog::build(entry.name)?;
        rows.push((entry, set));
    }
    if args.json {
        let out: Vec<CatalogRow> = rows
            .iter()
            .map(|(entry, set)| CatalogRow {
                name: entry.name,
                tasks: set.tasks.len(),
                utilization: set.utilization(),
                summary: entry.summary,
                source: entry.source,
                parameters: entry
                    .parameters
                    .iter()
                    .map(|p| ParameterDocument {
                        name: p.name,
                        default: p.default,
                        meaning: p.meaning,
                    })
                    .collect(),
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    let table_rows: Vec<_> = rows
        .iter()
        .map(|(entry, set)| {
            (
                format!("builtin:{}", entry.name),
                set.tasks.len(),
                set.utilization(),
                entry.summary,
                entry.source,
            )
        })
        .collect();
    outln!("{}", taskset_text::catalog_table(&table_rows));
    for (entry, _) in &rows {
        for p in entry.parameters {
            outln!(
                "{}",
                table::fit_text(&format!(
                    "\nbuiltin:{} takes ?{}=VALUE (default {}): {}; e.g. builtin:{}?{}=1ms",
                    entry.name, p.name, p.default, p.meaning, entry.name, p.name
                ))
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The `show --json` document (schema in the guide).
pub fn taskset_json(set: &TaskSet, origin: &str, notes: &[LocatedDiagnostic]) -> TasksetDocument {
    let ns = |n: Nanos| n.as_ns();
    TasksetDocument {
        name: set.name.clone(),
        origin: origin.to_string(),
        task_count: set.tasks.len(),
        utilization: set.utilization(),
        density: set.density(),
        hyperperiod_ns: set.hyperperiod().ok().map(ns),
        deadlines: set.deadline_kind(),
        processors: (set.processors() != 1).then_some(set.processors()),
        clusters: set.platform.clusters.clone(),
        tasks: set
            .tasks
            .iter()
            .map(|t| TaskDocument {
                name: t.name.clone(),
                period_ns: ns(t.period),
                deadline_ns: ns(t.deadline),
                wcet_ns: ns(t.wcet),
                bcet_ns: t.bcet.map(ns),
                offset_ns: ns(t.offset),
                jitter_ns: ns(t.jitter),
                priority: t.priority,
                cpu: t.cpu,
                utilization: t.utilization(),
                critical_sections: t
                    .critical_sections
                    .iter()
                    .map(|cs| CriticalSectionDocument {
                        resource: cs.resource.clone(),
                        start_ns: ns(cs.start),
                        length_ns: ns(cs.length),
                    })
                    .collect(),
            })
            .collect(),
        notes: notes.iter().map(|n| n.to_string()).collect(),
    }
}

fn show(args: &ShowArgs) -> anyhow::Result<ExitCode> {
    let loaded = file::load(&args.taskset)?;
    if args.json {
        let doc = taskset_json(&loaded.set, &loaded.origin, &loaded.notes);
        outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", describe_taskset(&loaded.set, &loaded.origin));
    for note in &loaded.notes {
        outln!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

fn validate(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let mut all_valid = true;
    let mut reports = Vec::new();
    for spec in &args.tasksets {
        let (summary, errors, unlisted, notes) = match file::load(spec) {
            Ok(loaded) => (
                Some(format!(
                    "{} tasks, U = {:.4}",
                    loaded.set.tasks.len(),
                    loaded.set.utilization()
                )),
                Vec::new(),
                0,
                loaded.notes,
            ),
            Err(LoadError::Invalid { errors, unlisted }) => (None, errors, unlisted, Vec::new()),
            Err(LoadError::Syntax(d)) => (None, vec![d], 0, Vec::new()),
            Err(other) => (
                None,
                vec![plain_error(spec, other.to_string())],
                0,
                Vec::new(),
            ),
        };
        all_valid &= errors.is_empty();
        reports.push((spec, summary, errors, unlisted, notes));
    }
    if args.json {
        let as_json = |d: &LocatedDiagnostic| DiagnosticDocument {
            line: d.line,
            column: d.column,
            message: d.message.clone(),
            text: d.to_string(),
        };
        let out: Vec<ValidationDocument> = reports
            .iter()
            .map(|(spec, _, errors, unlisted, notes)| ValidationDocument {
                file: spec.to_string(),
                valid: errors.is_empty(),
                errors: errors.iter().map(as_json).collect(),
                notes: notes.iter().map(as_json).collect(),
                unlisted_errors: *unlisted,
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for (spec, summary, errors, unlisted, notes) in &reports {
            for line in errors.iter().chain(notes) {
                outln!("{line}");
            }
            if *unlisted > 0 {
                outln!(
                    "{}: and {} more errors",
                    printable(spec),
                    rtlab_model::file::thousands(*unlisted)
                );
            }
            if let Some(summary) = summary {
                outln!("{}: ok ({summary})", printable(spec));
            }
        }
    }
    Ok(if all_valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// An error without a place in the file (unreadable file, unknown builtin).
fn plain_error(spec: &str, message: String) -> LocatedDiagnostic {
    // Read errors already start with the path; keep the line as it is.
    let message = message
        .strip_prefix(&format!("{spec}: "))
        .map(str::to_string)
        .unwrap_or(message);
    LocatedDiagnostic {
        origin: spec.to_string(),
        line: 1,
        column: 1,
        severity: Severity::Error,
        message,
    }
}
