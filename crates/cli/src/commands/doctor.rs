//! `rtlab doctor`: the platform's real-time state before measuring (crate
//! `rtlab-rt`, module `platform`), and `--restore` for what interrupted runs
//! left changed (module `kernel_state`). Also the one place where measuring
//! commands restore such leftovers first.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;
use rtlab_host::kernel_state::{Recovery, StateDir};
use rtlab_host::platform::{self, PlatformReport};
use serde::Serialize;

const EXAMPLES: &str = "Examples:\n  \
    rtlab doctor\n  \
    rtlab doctor --json\n  \
    rtlab doctor --restore\n\n\
    Each item says what it means for measurements; `cannot be read` is said, never guessed.\n\
    --restore (as root) puts back the kernel settings that rtlab runs ended by SIGKILL (or a crash) left\n\
    changed, as recorded in /run/rtlab; settings of rtlab runs still going are never touched.\n\
    The --json schema is in the guide (\"rtlab doctor\").";

/// `rtlab doctor`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct DoctorArgs {
    /// First restore what rtlab runs that ended without cleaning up left changed (needs root).
    #[arg(long)]
    pub restore: bool,
    /// Print JSON (schema in the guide, "rtlab doctor").
    #[arg(long)]
    pub json: bool,
    /// The CPU whose shield (`--isolate` of a run measured there) doctor describes (default: 1,
    /// or the first allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
}

/// `rtlab doctor --json`: every item of the report, and what `--restore` did.
#[derive(Serialize)]
struct DoctorJson<'a> {
    #[serde(flatten)]
    report: &'a PlatformReport,
    /// One entry per process whose leftovers were restored (empty without --restore).
    restored: &'a [Recovery],
    /// What `--isolate` would do on `--cpu`: `{"cpu", "would_move": [..lines]}` or `{"cpu",
    /// "refused": why}`.
    shield: serde_json::Value,
}

/// Runs `rtlab doctor`.
pub fn run(args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let recoveries = if args.restore {
        rtlab_host::recover::recover_left_state().map_err(|e| {
            anyhow::anyhow!(
                "cannot restore what earlier rtlab runs left: {e} (restoring kernel settings needs root)"
            )
        })?
    } else {
        Vec::new()
    };
    let report = platform::probe(&StateDir::from_env());
    let cpu = args.cpu.unwrap_or_else(rtlab_rt::executor::default_cpu);
    let plan = rtlab_host::shield::ShieldPlan::new(&[cpu]);
    let shield = match &plan {
        Ok(p) => serde_json::json!({
            "cpu": cpu,
            "threads_movable": p.movable.len(),
            "threads_pinned": p.pinned.len(),
            "irqs": p.irqs.len(),
            "would_move": p.describe(),
        }),
        Err(e) => serde_json::json!({ "cpu": cpu, "refused": e.to_string() }),
    };
    let mut out = crate::output::Stdout;
    if args.json {
        let doc = DoctorJson {
            report: &report,
            restored: &recoveries,
            shield,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        if args.restore {
            if recoveries.is_empty() {
                writeln!(
                    out,
                    "nothing to restore: no rtlab run that ended left a kernel setting changed"
                )?;
            }
            for r in &recoveries {
                writeln!(out, "{}", r.line())?;
            }
            writeln!(out)?;
        }
        write!(
            out,
            "{}",
            rtlab_report::doctor_text::describe(&report, std::io::stdout().is_terminal())
        )?;
        writeln!(
            out,
            "\nA shield of CPU {cpu} (--isolate on a run measured there):"
        )?;
        match &plan {
            Ok(p) => {
                for line in p.describe() {
                    // Long lists of names wrap between words.
                    write!(
                        out,
                        "{}",
                        rtlab_report::table::fit_text(&format!("  {line}\n"))
                    )?;
                }
            }
            Err(e) => writeln!(out, "  refused: {e}")?,
        }
    }
    Ok(if recoveries.iter().all(Recovery::complete) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
