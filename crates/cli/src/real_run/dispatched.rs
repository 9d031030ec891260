//! The flags of a real run by rtlab's dispatcher (`--dispatcher -s NAME`):
//! the scheduler's scope, the executor's settings where the thread policy
//! is the dispatcher's, and how a run the watchdog ended is reported.

use rtlab_model::policy::{RealScheduler, RunPolicy, Scope};
use rtlab_model::{printable, Nanos};
use rtlab_rt::executor::placement::Placement;
use rtlab_rt::executor::{self, RunConfig, RunReport};

use super::RunFlags;
use crate::usage::usage;

impl RunFlags {
    /// With `--dispatcher`: the threads' policy (SCHED_FIFO, the
    /// dispatcher's) and where the dispatchers run: one CPU, or on `--cpus`
    /// (or under pedf and pfp:ORDER every allowed CPU) one per CPU over the
    /// tasks placed there; a global scheduler is the dispatcher's refusal
    /// to make.
    pub(super) fn dispatched_scheduler(&self) -> anyhow::Result<RealScheduler> {
        let name = self.policy.trim();
        let partitioned = name == "pedf" || name.starts_with("pfp");
        let global = ["gedf", "gfp", "edzl", "linux-dl", "gllf", "cedf"]
            .iter()
            .any(|g| name == *g || name.starts_with(&format!("{g}:")));
        let scope = if global {
            Scope::Global
        } else if partitioned || self.cpus.is_some() {
            Scope::Partitioned
        } else {
            if self.partition.is_some() {
                return Err(usage(
                    "--partition places tasks on --cpus; with --dispatcher give --cpus LIST",
                ));
            }
            Scope::Uni
        };
        Ok(RealScheduler {
            policy: RunPolicy::FifoOrder,
            scope,
        })
    }

    /// The dispatcher's configuration, `None` without `--dispatcher`.
    pub fn dispatch(&self) -> anyhow::Result<Option<rtlab_rt::dispatcher::DispatchConfig>> {
        self.dispatch.config(&self.policy, &self.protocol)
    }

    /// The executor's settings of a run by the dispatcher (the thread
    /// policy is the dispatcher's): what applies to a Linux policy only is
    /// refused naming the flag.
    pub(super) fn dispatched_config(
        &self,
        scheduler: RealScheduler,
        multi: Option<Vec<usize>>,
    ) -> anyhow::Result<RunConfig> {
        self.dispatch()?;
        if self.duration == Nanos::ZERO {
            return Err(usage("invalid --duration 0s: must be more than 0"));
        }
        let not_here = |flag: &str, why: &str| {
            usage(format!(
                "{flag} {why}; with --dispatcher the scheduler is -s {}",
                printable(&self.policy)
            ))
        };
        if self.no_pin {
            return Err(not_here("--no-pin", "lets Linux place the threads"));
        }
        if self.edf_margin.is_some() || self.no_edf_reclaim {
            return Err(not_here(
                if self.no_edf_reclaim {
                    "--no-edf-reclaim"
                } else {
                    "--edf-margin"
                },
                "applies to SCHED_DEADLINE (--policy edf)",
            ));
        }
        if self.lag_controller.is_some() {
            return Err(not_here(
                "--lag-controller",
                "applies to threads that wait for their own releases",
            ));
        }
        let mut cfg = RunConfig::new(self.duration, scheduler.policy);
        cfg.cpu = match multi {
            Some(_) => None,
            None => Some(self.cpu.unwrap_or_else(executor::default_cpu)),
        };
        if let Some(cpus) = &multi {
            cfg.placement = Some(Placement {
                scope: scheduler.scope,
                cpus: cpus.clone(),
                domains: Vec::new(),
                task_domain: Vec::new(),
            });
        }
        cfg.on_miss = self.miss_rule()?;
        cfg.kernel_trace = self.kernel.request();
        cfg.mlock = !self.no_mlock;
        cfg.no_rt_throttling = self.no_rt_throttling;
        cfg.phases =
            crate::flags::phase_flags(&self.phases, self.overload.as_deref(), self.duration)?;
        Ok(cfg)
    }
}

/// The test `--partition` admits each CPU with under `--dispatcher -s
/// NAME`: fixed priorities' response times, else EDF's demand.
pub(super) fn partition_test(scheduler: &str) -> String {
    let name = scheduler.trim();
    for prefix in ["pfp:", "fp:"] {
        if let Some(order) = name.strip_prefix(prefix) {
            return format!("{order}:rta");
        }
    }
    "edf:edf-demand".to_string()
}

/// A run the dispatcher's watchdog ended (a stalled or dead dispatcher)
/// is a failed run (exit 1): one line, said after what was recorded until
/// then is printed and saved.
pub fn watchdog_ended(report: &RunReport) -> anyhow::Result<()> {
    match report.dispatcher.as_ref().and_then(|c| c.watchdog.as_ref()) {
        Some(why) => anyhow::bail!("{why}"),
        None => Ok(()),
    }
}

/// True when the run is partial: a stop signal or the watchdog ended it.
pub fn partial(report: &RunReport) -> bool {
    report.interrupted
        || report
            .dispatcher
            .as_ref()
            .is_some_and(|c| c.watchdog.is_some())
}
