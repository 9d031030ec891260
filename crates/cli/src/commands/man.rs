//! `rtlab man --out DIR`: one man page per command (`rtlab.1`,
//! `rtlab-sim.1`, `rtlab-taskset-gen.1`, ...), generated from the same
//! command-line definition as `--help` (clap_mangen).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

/// Arguments of `rtlab man`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    rtlab man --out man\n\n\
    Install: sudo rtlab man --out /usr/local/share/man/man1 (then `man rtlab-sim`),\n\
    or rtlab man --out ~/.local/share/man/man1 with that directory's parent in MANPATH.")]
pub struct ManArgs {
    /// Directory to write the pages into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Writes every page (`rtlab.1`, `rtlab-sim.1`, `rtlab-taskset-gen.1`, ...:
/// clap_mangen names each by its display name) and says how many.
pub fn run(args: &ManArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("--out {}: cannot create it", args.out.display()))?;
    let written = write_pages(&crate::command(), &args.out)
        .with_context(|| format!("--out {}: cannot write the pages", args.out.display()))?;
    eprintln!(
        "wrote {written} man pages (section 1) in {}",
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The page of `cmd` and those of its subcommands, hidden commands and
/// clap's `help` left out; how many.
fn write_pages(cmd: &clap::Command, dir: &std::path::Path) -> std::io::Result<usize> {
    // Each page through the one output-file writer: a page replaced whole,
    // a device or pipe of that name written in place, never replaced.
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = rtlab_model::file::OutputFile::create(dir.join(man.get_filename()))?;
    man.render(&mut page)?;
    page.commit()?;
    let mut written = 1;
    for sub in cmd.get_subcommands() {
        if !sub.is_hide_set() && sub.get_name() != "help" {
            written += write_pages(sub, dir)?;
        }
    }
    Ok(written)
}
