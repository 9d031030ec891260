//! `rtlab report`: one self-contained HTML file of stored runs, with their
//! summaries and plots (drawn by `rtlab-report`).

use std::borrow::Cow;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_model::file::thousands;
use rtlab_report::html::render_html_loading;
use rtlab_report::view::{
    RunView, MAX_REPORT_JOB_ROWS, MAX_REPORT_JSON_BYTES, MAX_REPORT_SAMPLE_ROWS,
};
use rtlab_store::Store;

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
    let (store, mut runs) = stored_runs(args)?;
    let stored = runs.len();
    for path in &args.from_json {
        runs.extend(read_runs(path)?);
    }
    // Stored runs' rows are read one run at a time, as its section is drawn.
    let mut index = 0;
    let html = render_html_loading(&runs, |run| {
        index += 1;
        match &store {
            Some(store) if index <= stored => Ok(Cow::Owned(RunView {
                jobs: store.jobs(run.id)?,
                samples: store.samples(run.id)?,
                schedule: store.schedule(run.id)?,
                ..run.clone()
            })),
            _ => Ok::<_, anyhow::Error>(Cow::Borrowed(run)),
        }
    })?;
    rtlab_model::file::write_output(&args.out, &html)
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

/// The store and the runs named by id, then the last N, without their
/// rows (read as each run's section is drawn). A run with more rows than
/// the report reads is refused before anything is drawn.
fn stored_runs(args: &ReportArgs) -> anyhow::Result<(Option<Store>, Vec<RunView>)> {
    if args.ids.is_empty() && args.last.is_none() {
        return Ok((None, Vec::new()));
    }
    let store = args.store.open_read_only()?;
    let mut ids = args.ids.clone();
    if let Some(n) = args.last {
        ids.extend(store.last(n)?);
    }
    let counts = store.list()?;
    let runs = ids
        .iter()
        .map(|&id| {
            let run = store.get(id)?;
            if let Some(summary) = counts.iter().find(|r| r.id == id) {
                check_rows(id, "job", summary.jobs, MAX_REPORT_JOB_ROWS)?;
                check_rows(id, "sample", summary.samples, MAX_REPORT_SAMPLE_ROWS)?;
            }
            Ok(RunView::from_stored(run, Vec::new(), Vec::new()))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok((Some(store), runs))
}

/// Refuses a run of more than `max` rows of a kind, in words.
fn check_rows(id: i64, kind: &str, rows: u64, max: u64) -> anyhow::Result<()> {
    anyhow::ensure!(
        rows <= max,
        "run {id} has {} {kind} rows; the report draws runs of at most {} (memory stays under 1 GiB); export its rows with `rtlab results export {id} --format csv`",
        thousands(rows as usize),
        thousands(max as usize)
    );
    Ok(())
}

/// One run or a list of runs (or an export of `rtlab results export
/// --format json`) from a JSON file of at most
/// [`MAX_REPORT_JSON_BYTES`] (a larger file, or `/dev/zero`, is refused
/// once that much is read); an error names file:line:col.
fn read_runs(path: &PathBuf) -> anyhow::Result<Vec<RunView>> {
    use std::io::Read as _;
    let cannot = || format!("--from-json: cannot read {}", path.display());
    let mut text = String::new();
    std::fs::File::open(path)
        .with_context(cannot)?
        .take(MAX_REPORT_JSON_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(cannot)?;
    anyhow::ensure!(
        text.len() as u64 <= MAX_REPORT_JSON_BYTES,
        "{}: larger than the limit of {} MiB for --from-json files",
        cannot(),
        MAX_REPORT_JSON_BYTES >> 20
    );
    // Syntax errors first, with their position; then the shape.
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))?;
    rtlab_report::view::runs_from_json(value)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
