//! `rtlab hartstone --policy`: the series on real threads, one policy after
//! the other, each beside its simulator counterpart (the series themselves
//! are `rtlab_study::hartstone`'s).

use std::io::Write;
use std::time::Instant;

use rtlab_model::hartstone::document::HartstoneDocument as Document;
use rtlab_model::hartstone::{self, overload_iteration, ExtendedProfile, TestConfig};
use rtlab_model::policy::RunPolicy;
use rtlab_model::Nanos;
use rtlab_report::hartstone_text::traced_line;
use rtlab_rt::executor::{self, rr_timeslice, RunConfig};
use rtlab_rt::runner::{RealRunError, RealRunner};
use rtlab_sim::MissRule;
use rtlab_study::hartstone::{real_extended, real_series, RealSeriesError};

use crate::setup::{restore_left_state_first, say};
use crate::usage::naming_the_flag;

use super::HartstoneArgs;

/// The PH series on real threads, one policy after the other, each beside
/// its simulator counterpart. Says up front how long it can take (each test
/// stops at the latest at the first pool above U = 1) and prints one line
/// per iteration on stderr. Returns true when Ctrl-C cut it short.
pub fn run_real(
    args: &HartstoneArgs,
    configs: &[TestConfig],
    policies: &[RunPolicy],
    on_miss: MissRule,
    sim_on_miss: MissRule,
    kilo_whet: Nanos,
    doc: &mut Document,
) -> anyhow::Result<bool> {
    let bound: u64 = configs
        .iter()
        .map(|c| {
            u64::from(
                overload_iteration(c.test, kilo_whet, args.max_iterations)
                    .map_or(args.max_iterations, |k| k + 1),
            )
        })
        .sum();
    let most = Nanos::from_ns(
        args.iteration_duration
            .as_ns()
            .saturating_mul(bound)
            .saturating_mul(policies.len() as u64),
    );
    say(&format!(
        "real threads: at most {bound} iterations of {} per policy (each test ends at its first miss, at the latest at its first pool above U = 1), {} policies: up to {most} in all",
        args.iteration_duration,
        policies.len()
    ));
    let interrupt = rtlab_host::interrupt::install_interrupt_flag();
    let cpu = args.cpu.unwrap_or_else(executor::default_cpu);
    args.isolate.check(&[cpu])?;
    let _measuring = args.cpu_lock.hold(Some(&[cpu]))?;
    restore_left_state_first();
    let _shield = args.isolate.raise(&[cpu])?;
    let mut base = RunConfig::new(args.iteration_duration, policies[0]);
    base.on_miss = on_miss;
    base.cpu = Some(cpu);
    base.edf_reclaim = !args.no_edf_reclaim;
    base.kernel_trace = args.kernel.request_per_run();
    let mut runner = RealRunner::new(base, interrupt);
    let timeslice = rr_timeslice();
    let started = Instant::now();
    let mut progress = |policy, test, r: &rtlab_model::hartstone::IterationRecord| {
        say(&format!(
            "[{:>5.0}s] real {policy} {test} iteration {}: U = {:.3}, {} misses, {} context switches{}{}",
            started.elapsed().as_secs_f64(),
            r.iteration,
            r.utilization,
            r.result.misses,
            r.result.context_switches,
            traced_line(r.result.kernel_trace.as_ref()),
            rtlab_report::disturbance_text::iteration_note(&r.result),
        ));
        let _ = std::io::stderr().flush();
    };
    let cut = real_series(
        doc,
        &mut runner,
        policies,
        configs,
        sim_on_miss,
        timeslice,
        &mut progress,
    )
    .map_err(|e| real_error("rtlab hartstone --policy", e))?;
    if cut {
        say("interrupted: the tests finished so far follow");
    }
    Ok(cut)
}

/// A real series' error as the command reports it, naming the flag of a
/// setting the kernel refused.
fn real_error(command: &str, e: RealSeriesError) -> anyhow::Error {
    let (policy, e) = match e {
        RealSeriesError::Run(policy, e) => (policy, e),
        RealSeriesError::Sim(e) => return e.into(),
    };
    let message = match &e {
        RealRunError::Rt(rt @ rtlab_rt::RtError::Setting { .. }) => naming_the_flag(rt),
        other => other.to_string(),
    };
    anyhow::anyhow!("{command} {policy}: {message}")
}

/// The extended Hartstone on real threads, one policy after the other, each
/// beside its simulator counterpart (the same phase, the same length). RT
/// throttling and SCHED_DEADLINE admission are switched off for each run
/// (the 120 % needs more than either leaves; the note in the output says
/// so). Returns true when Ctrl-C cut it short.
pub fn run_real_extended(
    args: &HartstoneArgs,
    profiles: &[ExtendedProfile],
    policies: &[RunPolicy],
    on_miss: MissRule,
    sim_on_miss: MissRule,
    doc: &mut Document,
) -> anyhow::Result<bool> {
    let length = args.extended_length;
    let (from, to) = hartstone::ExtendedProfile::overload_window(length);
    let note = format!(
        "real threads: RT throttling and SCHED_DEADLINE admission switched off for each run (sched_rt_runtime_us = -1, restored after): the 120 % overload in [{from}, {to}) needs more of the CPU than SCHED_FIFO/RR throttling (0.95) or SCHED_DEADLINE admission (0.90) leave, and the benchmark compares schedulers, not the throttle"
    );
    say(&format!("note: {note}"));
    doc.notes.push(note);
    say(&format!(
        "real threads: {} runs of {length} ({} tests x {} policies)",
        profiles.len() * policies.len(),
        profiles.len(),
        policies.len()
    ));
    let interrupt = rtlab_host::interrupt::install_interrupt_flag();
    let cpu = args.cpu.unwrap_or_else(executor::default_cpu);
    args.isolate.check(&[cpu])?;
    let _measuring = args.cpu_lock.hold(Some(&[cpu]))?;
    restore_left_state_first();
    let _shield = args.isolate.raise(&[cpu])?;
    let timeslice = rr_timeslice();
    let started = Instant::now();
    let mut config = RunConfig::new(length, policies[0]);
    config.on_miss = on_miss;
    config.cpu = Some(cpu);
    config.no_rt_throttling = true;
    config.kernel_trace = args.kernel.request_per_run();
    let mut runner = RealRunner::new(config, interrupt);
    let mut progress = |policy, r: &rtlab_model::hartstone::ExtendedResult| {
        say(&format!(
            "[{:>5.0}s] real {policy} {}: {} misses of {} jobs, {:.1} context switches/s{}",
            started.elapsed().as_secs_f64(),
            r.test,
            r.misses,
            r.jobs,
            r.context_switches_per_s,
            traced_line(r.kernel_trace.as_ref()),
        ));
    };
    let cut = real_extended(
        doc,
        &mut runner,
        policies,
        profiles,
        length,
        sim_on_miss,
        timeslice,
        &mut progress,
    )
    .map_err(|e| real_error("rtlab hartstone --extended --policy", e))?;
    if cut {
        say("interrupted: the tests finished so far follow");
    }
    Ok(cut)
}
