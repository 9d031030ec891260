//! `rtlab completions SHELL`: a completion script for a shell, generated
//! from the same command-line definition as `--help` (clap_complete), on
//! standard output.

use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

/// Arguments of `rtlab completions`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    rtlab completions bash > rtlab.bash\n  \
    rtlab completions zsh > _rtlab\n\n\
    Install for bash: rtlab completions bash > ~/.local/share/bash-completion/completions/rtlab\n\
    (zsh: into a directory of $fpath as _rtlab; fish: ~/.config/fish/completions/rtlab.fish).")]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the script.
pub fn run(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = crate::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "rtlab", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}
