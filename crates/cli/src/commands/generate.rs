//! placeholder
use std::process::ExitCode;
#[derive(Debug, clap::Args)]
pub struct GenArgs {}
pub fn run(_args: &GenArgs) -> anyhow::Result<ExitCode> { anyhow::bail!("not yet") }
