//! `rtlab`: the real-time scheduling lab. This binary only parses arguments
//! and wires the library crates together; every command lives in
//! [`commands`].

#![forbid(unsafe_code)]
// Standard output goes through `output` (`outln!`, `out!`), which turns a
// closed pipe or a full disk into one error line and exit 1 once the kernel
// is restored and the run saved; `println!` would panic. Denied here, for
// the whole binary (the tests are other crates), so no command prints
// around it.
#![deny(clippy::print_stdout)]

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[macro_use]
mod output;
mod commands;
mod dispatcher_flags;
mod flags;
mod kernel_trace;
mod locking;
mod measured_overheads;
mod placement;
mod plot_file;
mod progress;
mod real_run;
mod reference;
mod save;
mod set_files;
mod setup;
mod trace_output;
mod usage;
mod wrote;

/// rtlab — measure, run, simulate and analyse periodic real-time task sets.
#[derive(Debug, Parser)]
#[command(
    name = "rtlab",
    version,
    about = "rtlab: a real-time scheduling lab — task sets, analysis, simulation and measurement on one task model",
    long_about = None,
    after_help = "Task sets are TOML or JSON files, or built-ins named `builtin:NAME` (see `rtlab taskset list`).\n\
                  Every command prints a human summary by default and a documented JSON document with --json.\n\n\
                  Examples:\n  rtlab demo\n  rtlab taskset show builtin:avionics\n  rtlab taskset gen --tasks 8 --utilization 0.7 --count 100 --seed 1 --out sets/",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print every column of every table, whatever the width; by default tables fit the
    /// terminal (or `COLUMNS`), leaving out the columns a reader needs least and saying which.
    #[arg(long, global = true)]
    wide: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Work with task sets: list the built-ins, show, validate, generate.
    #[command(subcommand)]
    Taskset(commands::taskset::TasksetCommand),
    /// A tour: a task set from the literature, random sets read back, analysis with overheads and
    /// breakdown, the Lingua Franca scenarios simulated (and, as root, run on real threads), a sweep,
    /// a latency run, and one HTML report of it all (./rtlab-demo-report.html).
    #[command(after_help = "Example:\n  rtlab demo")]
    Demo(commands::demo::DemoArgs),
    /// Schedulability analysis: bounds, exact RTA, EDF demand, overhead-aware RTA, breakdown utilization.
    Analyze(commands::analyze::AnalyzeArgs),
    /// Place tasks on M processors with a bin-packing heuristic (ff, bf, wf, nf), each admitted by a uniprocessor test.
    Partition(commands::partition::PartitionArgs),
    /// Arakawa et al. 1993's experiment: ideal, overhead-aware, simulated and measured breakdown utilization.
    Breakdown(commands::breakdown::BreakdownArgs),
    /// Experiments that compare schedulers: `edf-vs-fps` (Carletto & Vardanega 2017's study).
    #[command(subcommand)]
    Study(commands::study::StudyCommand),
    /// Schedulability-ratio sweep over random task sets (parallel, deterministic per seed).
    Sweep(commands::sweep::SweepArgs),
    /// Simulate a task set under a scheduler (FP, EDF, FIFO, NP-EDF, RR, I+PI, Multiburst, hybrid; G-EDF, EDZL, P-EDF, ... on m CPUs).
    #[command(after_help = commands::sim::examples())]
    Sim(commands::sim::SimArgs),
    /// Hartstone PH tests 1-4 and the extended Hartstone (Golchin 2017 ch. 4), simulated and on real threads.
    #[command(after_help = commands::hartstone::EXAMPLES)]
    Hartstone(commands::hartstone::HartstoneArgs),
    /// Run a task set on real threads under a Linux policy, recording every job.
    Run(commands::run::RunArgs),
    /// Run a task set on real threads and in the simulator under the matching scheduler, side by side.
    Compare(commands::compare::CompareArgs),
    /// Wake-up latency and period jitter of timer threads (cyclictest's measurement).
    Latency(commands::latency::LatencyArgs),
    /// Measure this machine's scheduling costs (Arakawa et al. 1993's C_preempt, C_exit, C_nonpreempt, C_timer) and write an overheads file.
    Characterize(commands::characterize::CharacterizeArgs),
    /// Run a background load (hackbench, CPU spinners) for a bounded time.
    Load(commands::load::LoadArgs),
    /// Soyer 2024 section 4.1: lags per period x utilization, with and without the lag controller.
    LagStudy(commands::lag_study::LagStudyArgs),
    /// The ECE Paris RTOS lab's (2018) relative versus absolute sleeps: periodic loops with one period, and how far apart they drift.
    Drift(commands::drift::DriftArgs),
    /// The platform's real-time state before measuring; --restore undoes what killed runs left.
    Doctor(commands::doctor::DoctorArgs),
    /// One self-contained HTML report (summaries and plots) of stored runs.
    Report(commands::report::ReportArgs),
    /// The results store: list, show, diff, export and remove runs saved with --save.
    #[command(subcommand)]
    Results(commands::results::ResultsCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) for rtlab.
    Completions(commands::completions::CompletionsArgs),
    /// Write rtlab's man pages (one per command) into a directory.
    Man(commands::man::ManArgs),
    /// The guide's command reference (docs/src/reference/cli.md) in
    /// Markdown, generated from this command-line definition.
    #[command(
        name = "__reference",
        hide = true,
        after_help = "Example:\n  rtlab __reference"
    )]
    Reference,
    /// Every command, one path a line (`taskset gen`, `sim`, ...): the test
    /// of the promises every command keeps (tests/promises_matrix.rs) takes
    /// its list from here, so a new command cannot escape it.
    #[command(
        name = "__commands",
        hide = true,
        after_help = "Example:\n  rtlab __commands"
    )]
    Commands,
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    rtlab_report::table::set_wide(cli.wide);
    match cli.command {
        Command::Taskset(command) => commands::taskset::run(command),
        Command::Demo(args) => commands::demo::run(&args),
        Command::Analyze(args) => commands::analyze::run(&args).map(|_| ExitCode::SUCCESS),
        Command::Partition(args) => commands::partition::run(&args),
        Command::Breakdown(args) => commands::breakdown::run(&args),
        Command::Study(command) => commands::study::run(&command),
        Command::Sweep(args) => commands::sweep::run(&args).map(|_| ExitCode::SUCCESS),
        Command::Sim(args) => commands::sim::run(&args),
        Command::Hartstone(args) => commands::hartstone::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Compare(args) => commands::compare::run(&args),
        Command::Latency(args) => commands::latency::run(&args),
        Command::Characterize(args) => commands::characterize::run(&args),
        Command::Load(args) => commands::load::run(&args),
        Command::LagStudy(args) => commands::lag_study::run(&args),
        Command::Drift(args) => commands::drift::run(&args),
        Command::Doctor(args) => commands::doctor::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Results(command) => commands::results::run(&command),
        Command::Completions(args) => commands::completions::run(&args),
        Command::Man(args) => commands::man::run(&args),
        Command::Reference => {
            out!("{}", reference::markdown(&mut command()));
            Ok(ExitCode::SUCCESS)
        }
        Command::Commands => {
            for path in leaf_commands(&Cli::command()) {
                outln!("{path}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The path of every command that runs something (`sim`, `taskset gen`,
/// and `sweep` as well as `sweep merge`: a command with subcommands that
/// does not require one runs too), without clap's `help` and hidden
/// commands.
fn leaf_commands(cmd: &clap::Command) -> Vec<String> {
    let mut out = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.has_subcommands() {
            let name = sub.get_name();
            if !sub.is_subcommand_required_set() {
                out.push(name.to_string());
            }
            out.extend(
                leaf_commands(sub)
                    .into_iter()
                    .map(|p| format!("{name} {p}")),
            );
        } else {
            out.push(sub.get_name().to_string());
        }
    }
    out
}

/// The command line as clap knows it, with every command's `after_help`
/// printed as written: clap wraps `after_help` at the terminal width, which
/// breaks long example lines in two, while the literal text of a help
/// template is never wrapped. So the text moves into the template (the
/// flags above it are still wrapped). It must hold no `{`, which templates
/// read as a tag.
///
/// Every command's usage line is also fixed to the one its `--help`
/// prints: in an error, clap would list the flags the command line used as
/// if they were required (`rtlab run --policy <POLICY> --duration
/// <DURATION> <TASKSET>` after `rtlab run x -d 1s`, where `--duration`
/// defaults to 10 s).
fn command() -> clap::Command {
    fn unwrapped(cmd: clap::Command) -> clap::Command {
        let cmd = cmd.mut_subcommands(unwrapped);
        let Some(after) = cmd.get_after_help().map(|h| h.to_string()) else {
            return cmd;
        };
        cmd.help_template(format!(
            "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{{all-args}}\n\n{after}"
        ))
    }
    fn fixed_usage(mut cmd: clap::Command) -> clap::Command {
        let usage = cmd.render_usage().to_string();
        let usage = usage.trim().trim_start_matches("Usage:").trim().to_string();
        cmd.mut_subcommands(fixed_usage).override_usage(usage)
    }
    let mut cmd = unwrapped(Cli::command());
    cmd.build();
    fixed_usage(cmd)
}

/// Whether `command` measures or changes kernel settings, and so gets the
/// stop handler (`rtlab_host::interrupt`): the first stop ends its
/// measurement, a second restores and exits. The others keep the default
/// actions, which end them at once, as the handler would (they have
/// nothing to restore), and spare them its thread, whose malloc arena
/// alone reserves 64 MiB of address space under `ulimit -v`. No wildcard:
/// a new command must choose.
fn handles_stops(command: &Command) -> bool {
    match command {
        Command::Run(_)
        | Command::Compare(_)
        | Command::Latency(_)
        | Command::Characterize(_)
        | Command::Breakdown(_)
        | Command::Hartstone(_)
        | Command::Study(_)
        | Command::LagStudy(_)
        | Command::Drift(_)
        | Command::Load(_)
        | Command::Demo(_)
        | Command::Doctor(_) => true,
        Command::Taskset(_)
        | Command::Analyze(_)
        | Command::Partition(_)
        | Command::Sweep(_)
        | Command::Sim(_)
        | Command::Report(_)
        | Command::Results(_)
        | Command::Completions(_)
        | Command::Man(_)
        | Command::Reference
        | Command::Commands => false,
    }
}

fn main() -> ExitCode {
    let matches = command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Before any other thread exists: see the module docs of
    // `rtlab_host::interrupt`. SIGPIPE stays ignored (Rust's default), so a
    // closed pipe is a write error that `output` reports.
    if handles_stops(&cli.command) {
        rtlab_host::interrupt::install_stop_handler();
    }
    let result = run(cli);
    // Restores that failed or found a setting changed by someone else.
    for notice in rtlab_host::kernel_state::take_notices() {
        setup::say(&notice);
    }
    // By now the command has restored what it changed and saved its run.
    let stdout = output::take_error().map(|e| format!("error: writing to stdout: {e}"));
    match result {
        Ok(code) => match stdout {
            Some(line) => {
                setup::say(&line);
                ExitCode::FAILURE
            }
            None => code,
        },
        Err(error) => {
            // Not eprintln!, which panics when the terminal is gone (SIGHUP).
            let line = format!("error: {}", usage::one_line(&error));
            // An error that is the failed write itself is said once.
            match stdout {
                Some(out) if line.ends_with(out.rsplit(": ").next().unwrap_or_default()) => {
                    setup::say(&out);
                    ExitCode::FAILURE
                }
                Some(out) => {
                    setup::say(&line);
                    setup::say(&out);
                    ExitCode::FAILURE
                }
                None => {
                    setup::say(&line);
                    ExitCode::from(usage::exit_status(&error))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_subcommand_has_an_example_in_its_help() {
        fn walk(cmd: &clap::Command, path: &str) {
            for sub in cmd.get_subcommands() {
                let here = format!("{path} {}", sub.get_name());
                if sub.has_subcommands() {
                    walk(sub, &here);
                    continue;
                }
                let help = sub
                    .get_after_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                assert!(
                    help.contains("Example") && help.contains("rtlab "),
                    "`{here}` has no example in its help"
                );
            }
        }
        walk(&Cli::command(), "rtlab");
    }

    #[test]
    fn errors_print_each_cause_once_on_one_line() {
        let io = std::io::Error::from_raw_os_error(11);
        let e = anyhow::Error::new(rtlab_host::HostError::Os {
            call: "clone",
            source: io,
        })
        .context("rtlab run --policy rm");
        assert_eq!(
            usage::one_line(&e),
            "rtlab run --policy rm: clone failed: Resource temporarily unavailable (os error 11)"
        );
        let e = anyhow::anyhow!("task `a\nb`").context("loading");
        assert_eq!(usage::one_line(&e), "loading: task `a\\nb`");
    }

    /// Help templates read `{` as the start of a tag and drop text after a
    /// lone one, so no after_help may hold one.
    #[test]
    fn after_help_texts_survive_the_template() {
        fn walk(cmd: &clap::Command) {
            if let Some(after) = cmd.get_after_help() {
                let text = after.to_string();
                assert!(!text.contains('{'), "`{}`: {{ in {text}", cmd.get_name());
            }
            cmd.get_subcommands().for_each(walk);
        }
        walk(&command());
        let help = command()
            .find_subcommand_mut("sim")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains("\n  rtlab sim builtin:hartstone-ph -s multiburst -d 120s --overload hartstone-extended --on-miss skip\n"), "{help}");
    }
}
