//! `--dispatcher` and `--tick`: a scheduler of the simulator's registry on
//! real threads through rtlab's user-space dispatcher
//! (`rtlab_rt::dispatcher`), shared by `run`, `compare`, `hartstone`,
//! `study` and `breakdown`.

use clap::Args;
use rtlab_model::policy::LockingProtocol;
use rtlab_model::{printable, Nanos};
use rtlab_rt::dispatcher::DispatchConfig;
use rtlab_sim::SchedulerSpec;

use crate::flags::parse_nanos;
use crate::usage::usage;

/// The dispatcher's flags.
#[derive(Debug, Clone, Default, Args)]
pub struct DispatcherFlags {
    /// Run the scheduler named by --scheduler/-s (any uniprocessor scheduler of `rtlab sim`:
    /// edf, fp:ORDER, fifo, np-edf, rr:Q, ipi, multiburst, hybrid; on --cpus pedf or pfp:ORDER,
    /// one dispatcher per CPU, or gedf, gfp:ORDER or edzl, one dispatcher for all of them) on real
    /// threads through rtlab's user-space dispatcher instead of a Linux policy: a SCHED_FIFO 99
    /// thread runs the simulator's scheduler and raises the chosen thread (guide:
    /// explanation/dispatcher.md).
    #[arg(long)]
    pub dispatcher: bool,
    /// With --dispatcher: decide only at multiples of this tick (the ticked kernel of Golchin
    /// 2017: releases and burst ends wait for the next tick) instead of at each event.
    #[arg(long, value_parser = parse_nanos, requires = "dispatcher", value_name = "PERIOD")]
    pub tick: Option<Nanos>,
    /// How late a dispatcher may wake before the watchdog ends the run (default 500ms).
    #[arg(long, value_parser = parse_nanos, requires = "dispatcher", hide = true)]
    pub dispatcher_watchdog: Option<Nanos>,
    /// Test hook: the dispatcher hangs from this time on (the watchdog's tests).
    #[arg(long, value_parser = parse_nanos, requires = "dispatcher", hide = true)]
    pub dispatcher_hang_at: Option<Nanos>,
}

impl DispatcherFlags {
    /// `--dispatcher` where it applies only with `flag` (`given`): a usage
    /// error naming both otherwise.
    pub fn needs(&self, given: bool, flag: &str) -> anyhow::Result<()> {
        if self.dispatcher && !given {
            return Err(usage(format!(
                "--dispatcher runs the real runs through rtlab's dispatcher: add {flag}"
            )));
        }
        Ok(())
    }

    /// The dispatcher's configuration for `scheduler` (the `-s` text) and
    /// `protocol` (`--protocol`: none, ipcp or dfp), or `None` without
    /// `--dispatcher`. Usage errors name the flag.
    pub fn config(
        &self,
        scheduler: &str,
        protocol: &str,
    ) -> anyhow::Result<Option<DispatchConfig>> {
        if !self.dispatcher {
            return Ok(None);
        }
        let spec: SchedulerSpec = scheduler.parse().map_err(|e: rtlab_sim::SimError| {
            usage(format!(
                "--scheduler `{}` with --dispatcher: {}",
                printable(scheduler),
                printable(&e.to_string())
            ))
        })?;
        let mut d = DispatchConfig::new(spec);
        d.tick = self.tick;
        if self.tick.is_some_and(|t| t.is_zero()) {
            return Err(usage(
                "invalid --tick 0s: must be more than 0 (without --tick the dispatcher is tickless)",
            ));
        }
        d.protocol = protocol
            .parse::<LockingProtocol>()
            .ok()
            .filter(|&p| rtlab_rt::dispatcher::engine::applies(p))
            .ok_or_else(|| {
                usage(format!(
                    "--protocol `{}` with --dispatcher: use none, ipcp (fixed-priority schedulers) or dfp (EDF schedulers); the dispatcher does not apply pip, srp or npp",
                    printable(protocol)
                ))
            })?;
        if let Some(w) = self.dispatcher_watchdog {
            d.watchdog = w;
        }
        d.hang_at = self.dispatcher_hang_at;
        Ok(Some(d))
    }
}
