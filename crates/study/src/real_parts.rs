//! The parts of the EDF-versus-FPS study (paper 001) made on real threads,
//! each beside the simulation of exactly the same runs: the utilization
//! search ([`utilization_part`]) and transient and permanent overload
//! ([`overload_part`]). Both pin every run to one CPU ([`RealSeries`]).

use std::sync::atomic::{AtomicBool, Ordering};

use rtlab_host::RtThrottling;
use rtlab_model::Nanos;
use rtlab_rt::executor::KernelTrace;
use rtlab_sim::runner::SimRunner;

use crate::document::{RealOverload, RealPart};
use crate::overload::{self, OverloadConfig, Profile};
use crate::runner::{EDF, FPS};
use crate::utilization::{self, LoadSteps, SetType, UtilizationConfig, UtilizationError};

/// How the real runs of a series are made: the CPU they are pinned to,
/// whether each lifts RT throttling and SCHED_DEADLINE admission, and the
/// pause between two.
#[derive(Debug, Clone, Copy)]
pub struct RealSeries {
    /// The CPU every task thread is pinned to.
    pub cpu: usize,
    /// Lift RT throttling and admission control for each run.
    pub no_rt_throttling: bool,
    /// Pause between two runs.
    pub cooldown: Nanos,
}

/// The utilization search of paper 001 on real threads: `sets` sets of
/// `tasks` tasks per type of `types` (those whose longest period fits
/// twice in `duration`; the others are listed as skipped), at `loads`.
#[allow(clippy::too_many_arguments)]
pub fn utilization_part(
    types: &[SetType],
    (sets, tasks, seed): (u64, usize, u64),
    loads: LoadSteps,
    duration: Nanos,
    series: RealSeries,
    flag: &'static AtomicBool,
    say: fn(&str),
    trace: Option<KernelTrace>,
) -> Result<RealPart, UtilizationError> {
    let mut skipped_types = Vec::new();
    let runnable: Vec<SetType> = types
        .iter()
        .copied()
        .filter(|t| {
            let longest = t.periods.range().1;
            let fits = longest.as_ns().saturating_mul(2) <= duration.as_ns();
            if !fits {
                skipped_types.push(format!(
                    "{}: periods up to {longest} need runs of at least {} (--real-duration {})",
                    t.name(),
                    Nanos::from_ns(longest.as_ns() * 2),
                    duration
                ));
            }
            fits
        })
        .collect();
    let config = UtilizationConfig {
        sets,
        tasks,
        seed,
        loads,
        duration: Some(duration),
        types: runnable,
    };
    let simulated = utilization::simulate(&config)?;
    let cpu = series.cpu;
    let throttling = RtThrottling::read().ok();
    let (mut runner, traced) = crate::real::runner(
        cpu,
        series.no_rt_throttling,
        series.cooldown,
        flag,
        say,
        trace,
    );
    let measured = utilization::run(&config, &mut runner)?;
    let interrupted = flag.load(Ordering::Relaxed);
    if interrupted {
        say("interrupted: the searches after the interrupt were cut short (marked refused: interrupted)");
    }
    Ok(RealPart {
        cpu,
        rt_throttling: throttling.map_or("unknown".into(), |t| t.describe_limit()),
        no_rt_throttling: series.no_rt_throttling,
        skipped_types,
        interrupted,
        simulated,
        measured,
        kernel_traces: traced.take(),
    })
}

/// Transient and permanent overload on real threads (EDF = SCHED_DEADLINE,
/// FPS = SCHED_FIFO DM; the hybrid has no Linux counterpart), beside the
/// simulation of the same runs. Loads of 100 % and more need SCHED_DEADLINE
/// admission control (0.90 here) and RT throttling (0.95) off, so each real
/// run switches them off (restored after it) and the note says so. A
/// failure is kept as the note: nothing simulated is lost. (Called from a
/// thread whose stop signal sets `flag`.)
pub fn overload_part(
    base: &OverloadConfig,
    duration: Nanos,
    series: RealSeries,
    flag: &'static AtomicBool,
    say: fn(&str),
    trace: Option<KernelTrace>,
) -> RealOverload {
    let why = format!(
        "RT throttling and SCHED_DEADLINE admission switched off for each run (sched_rt_runtime_us = -1, restored after): loads of 100 % and more need more of the CPU than SCHED_DEADLINE admission (0.90) or SCHED_FIFO throttling (0.95) leave{}",
        if series.no_rt_throttling { "" } else { " (as --no-rt-throttling would)" }
    );
    say(&format!("note: real overload runs: {why}"));
    let config = OverloadConfig {
        duration,
        profiles: Profile::ALL.to_vec(),
        schedulers: vec![EDF, FPS],
        recovery_resolution: None,
        ..base.clone()
    };
    let simulated = match overload::run(&mut SimRunner::new(), &config) {
        Ok(s) => s,
        Err(e) => {
            return RealOverload {
                note: Some(e.to_string()),
                simulated: None,
                measured: None,
                kernel_traces: Vec::new(),
            }
        }
    };
    let (mut runner, traced) =
        crate::real::runner(series.cpu, true, series.cooldown, flag, say, trace);
    let ran = overload::run(&mut runner, &config);
    let kernel_traces = traced.take();
    match ran {
        Ok(measured) => RealOverload {
            note: Some(why),
            simulated: Some(simulated),
            measured: Some(measured),
            kernel_traces,
        },
        Err(e) => RealOverload {
            note: Some(format!("{e} ({why})")),
            simulated: Some(simulated),
            measured: None,
            kernel_traces,
        },
    }
}
