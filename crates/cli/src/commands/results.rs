//! `rtlab results`: list, show, diff, export and remove the runs saved
//! with `--save` (crate `rtlab-store`).

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use rtlab_report::results_text;
use rtlab_store::{diff, Store, StoreError};

use crate::save::StoreArg;
use crate::usage::usage;

/// `rtlab results ...`
#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// Every saved run: id, time, command, status, row counts.
    #[command(after_help = "Example:\n  rtlab results list --json")]
    List {
        #[command(flatten)]
        store: StoreArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One run: its command, host, task set and document.
    #[command(after_help = "Example:\n  rtlab results show 1")]
    Show {
        /// The run's id.
        id: i64,
        #[command(flatten)]
        store: StoreArg,
        /// Print the stored run as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Two runs' documents side by side: every field (per task) that differs.
    #[command(after_help = "Example:\n  rtlab results diff 1 2")]
    Diff {
        /// The first run.
        a: i64,
        /// The second run.
        b: i64,
        #[command(flatten)]
        store: StoreArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// A run with its rows, as JSON (everything) or CSV (its job rows, else its samples).
    #[command(
        after_help = "Examples:\n  rtlab results export 1 --format json > run1.json\n  rtlab results export 1 --format csv > run1-jobs.csv"
    )]
    Export {
        /// The run's id.
        id: i64,
        /// json or csv.
        #[arg(long, default_value = "json")]
        format: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Delete a run and its rows.
    #[command(after_help = "Example:\n  rtlab results rm 2")]
    Rm {
        /// The run's id.
        id: i64,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// Runs `rtlab results ...`.
pub fn run(command: &ResultsCommand) -> anyhow::Result<ExitCode> {
    match command {
        // Reading commands open the store read-only: they create nothing.
        ResultsCommand::List { store, json } => match store.open_read_only() {
            Err(StoreError::Missing { path }) => list_none(&path, *json)?,
            opened => list(&opened?, *json)?,
        },
        ResultsCommand::Show { id, store, json } => show(&store.open_read_only()?, *id, *json)?,
        ResultsCommand::Diff { a, b, store, json } => {
            diff_runs(&store.open_read_only()?, *a, *b, *json)?
        }
        ResultsCommand::Export { id, format, store } => {
            let format = match format.as_str() {
                "json" | "csv" => format.as_str(),
                other => return Err(usage(format!("--format `{other}`: write json or csv"))),
            };
            export(&store.open_read_only()?, *id, format)?;
        }
        ResultsCommand::Rm { id, store } => {
            let store = store.open()?;
            store.remove(*id)?;
            crate::setup::say(&format!("removed run {id} from {}", store.path().display()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `results list` of a store that is not there: no run, said as for an
/// empty store (and nothing created).
fn list_none(path: &std::path::Path, json: bool) -> anyhow::Result<()> {
    if json {
        outln!("[]");
    } else {
        outln!("no saved runs in {} (save one with --save)", path.display());
    }
    Ok(())
}

fn list(store: &Store, json: bool) -> anyhow::Result<()> {
    let runs = store.list()?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(());
    }
    if runs.is_empty() {
        outln!(
            "no saved runs in {} (save one with --save)",
            store.path().display()
        );
        return Ok(());
    }
    outln!("{}", results_text::list(&runs));
    Ok(())
}

fn show(store: &Store, id: i64, json: bool) -> anyhow::Result<()> {
    let run = store.get(id)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&run)?);
        return Ok(());
    }
    let summary = store.list()?.into_iter().find(|r| r.id == id);
    out!("{}", results_text::show(&run, summary.as_ref()));
    Ok(())
}

fn diff_runs(store: &Store, a: i64, b: i64, json: bool) -> anyhow::Result<()> {
    let (ra, rb) = (store.get(a)?, store.get(b)?);
    let lines = diff(&ra.document, &rb.document);
    if json {
        outln!("{}", serde_json::to_string_pretty(&lines)?);
        return Ok(());
    }
    out!("{}", results_text::diff(&ra, &rb, &lines));
    Ok(())
}

/// `export --format json|csv` to standard output. JSON is written whole or
/// not at all: a row that cannot be read half-way would leave a document
/// that does not parse, so it is built in memory first.
fn export(store: &Store, id: i64, format: &str) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(crate::output::Stdout);
    if format == "csv" {
        let rows = store.export_csv(id, &mut out)?;
        anyhow::ensure!(
            rows > 0,
            "run {id} has no job or sample rows; export it with --format json"
        );
    } else {
        let mut document = Vec::new();
        store.export_json(id, &mut document)?;
        out.write_all(&document)?;
    }
    out.flush()?;
    Ok(())
}
