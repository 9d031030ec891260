//! `rtlab compare --with rt-app`: the same task set under rt-app and
//! under `rtlab run`, same policy and pinning, side by side (the runs and
//! the comparison are `rtlab_rt::rtapp`).

use std::process::ExitCode;

use rtlab_host::interrupt;
use rtlab_model::{file, printable, Nanos};
use rtlab_report::table;
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
        out!("{}", describe(&comparison, &origin));
    }
    Ok(ExitCode::SUCCESS)
}

/// The side-by-side table, then what the columns mean.
pub fn describe(c: &RtAppComparison, origin: &str) -> String {
    let mut out = format!(
        "{} ({}): rtlab run vs rt-app under {} for {}, calibration {}{}\n\n",
        printable(&c.taskset),
        printable(origin),
        c.policy,
        Nanos::from_ns(c.rtapp.duration_ns),
        c.rtapp.calibration,
        c.rtapp
            .ns_per_loop
            .map_or(String::new(), |ns| format!(" ({ns} ns per loop)")),
    );
    let header = [
        "task",
        "C",
        "jobs rtlab",
        "jobs rt-app",
        "misses rtlab",
        "misses rt-app",
        "wake mean rtlab",
        "wake mean rt-app",
        "wake max rtlab",
        "wake max rt-app",
        "R mean rtlab",
        "R mean rt-app",
        "R max rtlab",
        "R max rt-app",
        "rt-app run mean",
        "run vs C",
    ];
    let mut t = table::new(&header, &header[1..]);
    for task in &c.tasks {
        t.add_row(vec![
            printable(&task.name).into_owned(),
            Nanos::from_ns(task.wcet_ns).to_string(),
            task.jobs.0.to_string(),
            task.jobs.1.to_string(),
            task.misses.0.to_string(),
            task.misses.1.to_string(),
            table::opt_ns(task.mean_wakeup_latency_ns.0),
            table::opt_ns(task.mean_wakeup_latency_ns.1),
            table::opt_ns(task.max_wakeup_latency_ns.0),
            table::opt_ns(task.max_wakeup_latency_ns.1),
            table::opt_ns(task.mean_response_ns.0),
            table::opt_ns(task.mean_response_ns.1),
            table::opt_ns(task.max_response_ns.0),
            table::opt_ns(task.max_response_ns.1),
            table::opt_ns(task.rtapp_mean_run_ns),
            task.rtapp_run_overshoot_pct
                .map_or("-".to_string(), |p| format!("{p:+.1}%")),
        ]);
    }
    out.push_str(&table::render(&t));
    out.push_str(
        "\n\nwake: rtlab's lag (start - release) vs rt-app's wu_lat (timer wake-up); R: release to the \
         end of the job (rt-app: timer period - slack, whole us); run vs C: rt-app's mean wall-clock \
         time in `run` over the requested C (its calibrated loop's error, plus preemption for lower \
         priorities); rtlab executes exactly C of CPU time per job\n",
    );
    out
}
