//! The files `rtlab study edf-vs-fps` writes: `--csv` (one per section)
//! and `--plot` (one SVG per figure).

use std::path::Path;

use anyhow::Context;
use rtlab_report::study_text;
use rtlab_report::view::RunView;
use rtlab_study::document::StudyDocument;

/// `--csv DIR` writes one file per section; `--csv FILE` the first
/// section's (utilization, else overload, else locking).
pub(super) fn write_csv(path: &Path, doc: &StudyDocument) -> anyhow::Result<()> {
    let as_dir = path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/');
    let csvs = study_text::section_csvs(doc);
    if as_dir {
        std::fs::create_dir_all(path)
            .with_context(|| format!("--csv: cannot create {}", path.display()))?;
        for (name, text) in csvs {
            let file = path.join(name);
            rtlab_model::file::write_output(&file, text)
                .with_context(|| format!("--csv: cannot write {}", file.display()))?;
        }
        Ok(())
    } else {
        let text = csvs.into_iter().next().map(|(_, t)| t).unwrap_or_default();
        rtlab_model::file::write_output(path, text)
            .with_context(|| format!("--csv: cannot write {}", path.display()))
    }
}

/// One SVG per figure of the study's report view, named after it.
pub(super) fn write_plots(dir: &Path, document: &serde_json::Value) -> anyhow::Result<()> {
    let run = RunView::unsaved("study", document.clone());
    for (name, svg) in rtlab_report::figures::named_svgs(&run) {
        let svg = svg.map_err(|why| anyhow::anyhow!("--plot: {why}"))?;
        let path = dir.join(name);
        rtlab_model::file::write_output(&path, svg)
            .with_context(|| format!("--plot: cannot write {}", path.display()))?;
    }
    Ok(())
}
