//! `rtlab hartstone --dispatcher -s LIST`: each scheduler's PH series (or
//! extended run) on real threads through rtlab's dispatcher, beside its
//! simulated series at the same tick (the series themselves are
//! `rtlab_study::hartstone`'s).

use std::time::Instant;

use rtlab_model::hartstone::document::HartstoneDocument as Document;
use rtlab_model::hartstone::{self, ExtendedProfile, HartstoneTest, TestConfig};
use rtlab_model::policy::RunPolicy;
use rtlab_model::Nanos;
use rtlab_report::hartstone_text::traced_line;
use rtlab_rt::dispatcher::DispatchConfig;
use rtlab_rt::executor::{self, RunConfig};
use rtlab_rt::runner::RealRunner;
use rtlab_sim::{MissRule, SchedulerSpec};
use rtlab_study::hartstone::{dispatched_extended, dispatched_series};

use super::real::{iteration_line, real_error};
use super::HartstoneArgs;
use crate::setup::{restore_left_state_first, say};
use crate::usage::{naming_the_flag, usage};

/// The dispatcher's refusals of each scheduler (a global scheduler, a tick
/// shorter than a decision, no real-time rights), before any run.
pub(super) fn check(
    args: &HartstoneArgs,
    d: &DispatchConfig,
    specs: &[SchedulerSpec],
    first: HartstoneTest,
    kilo_whet: Nanos,
) -> anyhow::Result<()> {
    let base = hartstone::pool(first, 0, kilo_whet)
        .map_err(|e| usage(format!("--kilo-whet {kilo_whet}: {e}")))?;
    let mut cfg = RunConfig::new(args.iteration_duration, RunPolicy::FifoOrder);
    cfg.cpu = Some(args.cpu.unwrap_or_else(executor::default_cpu));
    for spec in specs {
        let mut d = d.clone();
        d.scheduler = spec.clone();
        rtlab_rt::dispatcher::check(&base, &cfg, &d).map_err(|e| match e {
            rtlab_rt::RtError::Setting { .. } => usage(format!(
                "--dispatcher --scheduler {spec}: {}",
                naming_the_flag(&e)
            )),
            other => anyhow::Error::from(other)
                .context(format!("rtlab hartstone --dispatcher --scheduler {spec}")),
        })?;
    }
    Ok(())
}

/// The PH series or the extended Hartstone on real threads through
/// rtlab's dispatcher, one scheduler after the other, each beside its
/// simulated series (the same tick). One line per iteration (or run) on
/// stderr with the dispatcher's costs. Returns true when Ctrl-C cut it
/// short.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    args: &HartstoneArgs,
    d: &DispatchConfig,
    schedulers: &[(String, SchedulerSpec)],
    configs: &[TestConfig],
    profiles: &[ExtendedProfile],
    on_miss: MissRule,
    sim_on_miss: MissRule,
    doc: &mut Document,
) -> anyhow::Result<bool> {
    let interrupt = rtlab_host::interrupt::install_interrupt_flag();
    let cpu = args.cpu.unwrap_or_else(executor::default_cpu);
    args.isolate.check(&[cpu])?;
    let _measuring = args.cpu_lock.hold(Some(&[cpu]))?;
    restore_left_state_first();
    let _shield = args.isolate.raise(&[cpu])?;
    let length = if args.extended {
        args.extended_length
    } else {
        args.iteration_duration
    };
    let mut config = RunConfig::new(length, RunPolicy::FifoOrder);
    config.on_miss = on_miss;
    config.cpu = Some(cpu);
    config.kernel_trace = args.kernel.request_per_run();
    if args.extended {
        // As the Linux policies' extended runs: the 120 % overload needs
        // more of the CPU than RT throttling leaves.
        config.no_rt_throttling = true;
    }
    let mut runner = RealRunner::new(config, interrupt);
    runner.dispatcher = Some(d.clone());
    let started = Instant::now();
    let cut = if args.extended {
        say(&format!(
            "real threads through the dispatcher: {} runs of {length} (RT throttling off for each)",
            profiles.len() * schedulers.len()
        ));
        dispatched_extended(
            doc,
            &mut runner,
            schedulers,
            profiles,
            length,
            sim_on_miss,
            &mut |name, r| {
                say(&format!(
                    "[{:>5.0}s] dispatcher {name} {}: {} misses of {} jobs, {:.1} context switches/s{}",
                    started.elapsed().as_secs_f64(),
                    r.test,
                    r.misses,
                    r.jobs,
                    r.context_switches_per_s,
                    traced_line(r.kernel_trace.as_ref()),
                ));
            },
        )
    } else {
        dispatched_series(
            doc,
            &mut runner,
            schedulers,
            configs,
            sim_on_miss,
            &mut |name, test, r| iteration_line(&started, &format!("dispatcher {name}"), test, r),
        )
    }
    .map_err(|e| real_error("rtlab hartstone --dispatcher --scheduler", e))?;
    if cut {
        say("interrupted: the tests finished so far follow");
    }
    Ok(cut)
}
