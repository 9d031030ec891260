//! placeholder
use std::process::ExitCode;
#[derive(Debug, clap::Args)]
pub struct DemoArgs {}
pub fn run(_args: &DemoArgs) -> anyhow::Result<ExitCode> { Ok(ExitCode::SUCCESS) }
