//! `--plot FILE.svg`: the one plot a user wants from a command (latency:
//! the histogram; sweep: the ratio curves; sim and run: the Gantt chart),
//! drawn by `rtlab-report`.

use std::path::Path;

use anyhow::Context;
use rtlab_report::figures::main_plot;
use rtlab_report::view::RunView;

/// Draws `run`'s main plot into `path`.
pub fn write(path: &Path, run: &RunView) -> anyhow::Result<()> {
    let figure =
        main_plot(run).with_context(|| format!("--plot: `rtlab {}` has no plot", run.kind))?;
    let svg = figure
        .svg
        .map_err(|why| anyhow::anyhow!("--plot: {}: {why}", figure.title))?;
    rtlab_model::file::write_output(path, svg)
        .with_context(|| format!("--plot: cannot write {}", path.display()))?;
    crate::wrote::wrote(path, &format!("{}, SVG", figure.title));
    Ok(())
}
