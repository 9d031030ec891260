//! `rtlab report`: one self-contained HTML file of stored runs, with their
//! summaries and plots (drawn by `rtlab-report`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_report::html::render_html;
use rtlab_report::view::RunView;

use crate::save::StoreArg;
use crate::usage::usage;

/// Arguments of `rtlab report`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    rtlab report --last 4 --out report.html\n  \
    rtlab report 1 2 --out two-runs.html\n  \
    rtlab report --from-json runs.json --out report.html")]
pub struct ReportArgs {
    /// Stored runs by id (`rtlab results list` shows them), in this order.
    #[arg(value_name = "ID")]
    pub ids: Vec<i64>,
    /// The last N saved runs too, oldest first.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    #[command(flatten)]
    pub store: StoreArg,
    /// Runs as JSON files, each one stored run or a list of them (the shape `rtlab-report` reads: id, created, rtlab_version, command, kind, taskset, host, document, status, jobs, samples).
    #[arg(long = "from-json", value_name = "FILE", num_args = 1..)]
    pub from_json: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, value_name = "FILE", default_value = "rtlab-report.html")]
    pub out: PathBuf,
}

/// Runs `rtlab report`.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    if args.ids.is_empty() && args.last.is_none() && args.from_json.is_empty() {
        return Err(usage(
            "rtlab report: name the runs: IDs, --last N or --from-json FILE",
        ));
    }
    if args.last == Some(0) {
        return Err(usage("--last 0 names no run: use --last 1 or more"));
    }
    let mut runs = stored_runs(args)?;
    for path in &args.from_json {
        runs.extend(read_runs(path)?);
    }
    let html = render_html(&runs);
    std::fs::write(&args.out, &html)
        .with_context(|| format!("--out: cannot write {}", args.out.display()))?;
    outln!(
        "report: {} run{} ({} KiB) written to {}",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        html.len().div_ceil(1024),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The runs named by id, then the last N, read back from the store with
/// their rows.
fn stored_runs(args: &ReportArgs) -> anyhow::Result<Vec<RunView>> {
    if args.ids.is_empty() && args.last.is_none() {
        return Ok(Vec::new());
    }
    let store = args.store.open()?;
    let mut ids = args.ids.clone();
    if let Some(n) = args.last {
        ids.extend(store.last(n)?);
    }
    ids.iter()
        .map(|&id| {
            let run = store.get(id)?;
            Ok(RunView::from_stored(
                run,
                store.jobs(id)?,
                store.samples(id)?,
            ))
        })
        .collect()
}

/// One run or a list of runs from a JSON file; an error names
/// file:line:col.
fn read_runs(path: &PathBuf) -> anyhow::Result<Vec<RunView>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--from-json: cannot read {}", path.display()))?;
    // Syntax errors first, with their position; then the shape.
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))?;
    let runs = match value {
        serde_json::Value::Array(_) => serde_json::from_value::<Vec<RunView>>(value),
        other => serde_json::from_value::<RunView>(other).map(|r| vec![r]),
    }
    .map_err(|e| anyhow::anyhow!("{}: not a stored run: {e}", path.display()))?;
    Ok(runs)
}
