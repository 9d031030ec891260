//! `rtlab compare --with rt-app`: the same task set under rt-app and
//! under `rtlab run`, same policy and pinning, side by side (the runs and
//! the comparison are `rtlab_rt::rtapp`).

use std::process::ExitCode;

use rtlab_host::interrupt;
use rtlab_model::{file, printable};
use rtlab_rt::rtapp::{self, RtAppComparison};
use rtlab_rt::RtError;

use crate::real_run::{execute, RunFlags};
use crate::setup::{restore_left_state_first, say};
use crate::usage::{naming_the_flag, usage};

/// Runs rt-app, then `rtlab run` (rt-app first: a SCHED_DEADLINE set's
/// bandwidth comes back only some time after its threads exit, and
/// `rtlab run` waits for it, rt-app does not).
pub fn run(flags: &RunFlags, calibration: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let cfg = flags.config()?;
    let calibration = calibration
        .map(|text| crate::flags::parse_calibration(text, "--rtapp-calibration"))
        .transpose()?;
    if !rtapp::runner::whole_seconds(cfg.duration) {
        return Err(usage(format!(
            "--duration {}: rt-app runs for whole seconds (e.g. -d 10s)",
            cfg.duration
        )));
    }
    let Some(binary) = rtapp::find_rtapp() else {
        anyhow::bail!("{}", rtapp::INSTALL_HINT);
    };
    let loaded = file::load(&flags.taskset)?;
    let flag = interrupt::install_interrupt_flag();
    let _measuring = flags
        .cpu_lock
        .hold(cfg.cpu.as_ref().map(std::slice::from_ref))?;
    restore_left_state_first();
    say(&format!(
        "running {} under rt-app ({}) for {}",
        printable(&loaded.set.name),
        binary.display(),
        cfg.duration
    ));
    let theirs =
        rtapp::runner::run(&loaded.set, &cfg, &binary, calibration, flag).map_err(|e| match e {
            RtError::Setting { .. } => anyhow::anyhow!(naming_the_flag(&e)),
            other => anyhow::Error::from(other).context(format!("rt-app --policy {}", cfg.policy)),
        })?;
    if theirs.interrupted {
        say("rt-app was stopped before its end: what it logged until then follows");
    }
    say("running it under rtlab run");
    let crate::real_run::Executed {
        set,
        origin,
        report: ours,
        ..
    } = execute(flags, &[], Vec::new(), None)?;
    let comparison = RtAppComparison::new(&set, ours, theirs);
    if json {
        outln!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        out!(
            "{}",
            rtlab_report::compare_text::describe_rtapp(&comparison, &origin)
        );
    }
    Ok(ExitCode::SUCCESS)
}
