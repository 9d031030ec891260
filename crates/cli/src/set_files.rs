//! Writing generated task sets to files (`rtlab taskset gen --out`, the
//! demo).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::ValueEnum;
use rtlab_model::{file, TaskSet};

/// The file format of generated sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// TOML task-set files.
    Toml,
    /// JSON task-set files.
    Json,
}

impl OutputFormat {
    /// The file name extension.
    pub fn extension(self) -> &'static str {
        match self {
            OutputFormat::Toml => "toml",
            OutputFormat::Json => "json",
        }
    }

    /// The set as this format's text.
    pub fn render(self, set: &TaskSet) -> String {
        match self {
            OutputFormat::Toml => file::to_toml_string(set),
            OutputFormat::Json => file::to_json_string(set) + "\n",
        }
    }
}

/// Writes each set to `dir/NAME.EXT`, returning the paths in order.
pub fn write_sets(
    sets: &[TaskSet],
    dir: &Path,
    format: OutputFormat,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--out {}: cannot create the folder", dir.display()))?;
    sets.iter()
        .map(|set| {
            let path = dir.join(format!("{}.{}", set.name, format.extension()));
            rtlab_model::file::write_output(&path, format.render(set))
                .with_context(|| format!("{}: cannot write", path.display()))?;
            Ok(path)
        })
        .collect()
}
