//! The flags of real runs (`rtlab run`, `rtlab compare`, and the series of
//! `breakdown` and `study --real`) and the executor's configuration from
//! them: the policy, the CPUs and the placement of a multiprocessor run,
//! the miss rule, the lock protocol, the phases. Every error is a usage
//! error naming its flag.

use clap::Args;
use rtlab_model::policy::{RealScheduler, Scope};
use rtlab_model::policy::{RunPolicy, RUN_POLICIES};
use rtlab_model::{printable, Nanos, TaskSet};
use rtlab_rt::executor::placement::{self, Placement};
use rtlab_rt::executor::{
    self, check_protocol, LockingProtocol, MissRule, RunConfig, LOCK_PROTOCOLS, OVERRUN_RULES,
};
use rtlab_rt::lag::ControllerKind;

use crate::flags::parse_nanos;
use crate::kernel_trace::KernelTraceFlags;
use crate::setup::CpuLockFlags;
use crate::usage::usage;

/// Flags of the experiments that make many real runs in a row, one set after
/// another on one CPU (`rtlab breakdown`, `rtlab study edf-vs-fps --real`).
#[derive(Debug, Clone, Args)]
pub struct RealSeriesFlags {
    /// Pause between two real runs (lets RT throttling and SCHED_DEADLINE bandwidth recover).
    #[arg(long, default_value = "250ms", value_parser = parse_nanos)]
    pub cooldown: Nanos,
    /// The CPU every real task thread is pinned to (default: 1, or the first allowed CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Switch RT throttling and SCHED_DEADLINE admission control off for each real run
    /// (sched_rt_runtime_us = -1, restored afterwards), so loads above 0.90-0.95 are run and
    /// 0.95 does not cap the measurement.
    #[arg(long)]
    pub no_rt_throttling: bool,
}

impl RealSeriesFlags {
    /// `--cpu`, or the default CPU ([`executor::default_cpu`]).
    pub fn cpu(&self) -> usize {
        self.cpu.unwrap_or_else(executor::default_cpu)
    }
}

/// Flags shared by `rtlab run` and `rtlab compare`.
#[derive(Debug, Clone, Args)]
pub struct RunFlags {
    /// A task-set file (.toml or .json) or `builtin:NAME`.
    pub taskset: String,
    /// other, fifo-order, rm, dm, given, rr or edf (`sim`'s spellings are accepted too:
    /// `--scheduler fp:rm` is `--policy rm`).
    #[arg(long, short = 'P', alias = "scheduler", short_alias = 's')]
    pub policy: String,
    /// How long to run (releases at or after it are not made).
    #[arg(long, short = 'd', default_value = "10s", value_parser = parse_nanos)]
    pub duration: Nanos,
    /// The CPU every task thread is pinned to (default: 1, or the first allowed CPU).
    #[arg(long, conflicts_with = "no_pin")]
    pub cpu: Option<usize>,
    /// Let the threads run on any CPU (global scheduling; for edf, global EDF).
    #[arg(long)]
    pub no_pin: bool,
    /// Run on these CPUs (`0,1`, `0-3`) under a multiprocessor policy: linux-dl, pedf, cedf,
    /// gfp[:rm|dm|given], pfp[:rm|dm|given] (default with those: every CPU this process may
    /// use). The guide: "Multiprocessor on real threads".
    #[arg(long, value_name = "LIST", conflicts_with_all = ["cpu", "no_pin"])]
    pub cpus: Option<String>,
    /// With pedf or pfp: place the tasks with this heuristic (ff, bf, wf, nf, optionally
    /// -decreasing-util or -decreasing-density; as `rtlab partition`) instead of the file's
    /// `cpu` fields.
    #[arg(long, value_name = "HEURISTIC")]
    pub partition: Option<String>,
    /// A late job delays the next (continue) or releases during it are skipped (skip).
    #[arg(long, default_value = "continue")]
    pub on_miss: String,
    /// Wait for releases with a lag controller: robust (the default) or paper (Soyer 2024's
    /// Algorithm 2, for reproduction); the guide: "The lag controllers".
    #[arg(long, value_name = "KIND", num_args = 0..=1, require_equals = true,
          default_missing_value = "robust", value_parser = parse_controller)]
    pub lag_controller: Option<ControllerKind>,
    /// SCHED_DEADLINE budget over C (default: max(5% of C, 100us)).
    #[arg(long, value_parser = parse_nanos)]
    pub edf_margin: Option<Nanos>,
    /// Hard SCHED_DEADLINE budgets: no SCHED_FLAG_RECLAIM (GRUB), a job past C + margin is
    /// throttled until its next period (the guide: "Budgets and reclaiming").
    #[arg(long)]
    pub no_edf_reclaim: bool,
    /// Do not lock memory (mlockall) for the run.
    #[arg(long)]
    pub no_mlock: bool,
    /// Switch RT throttling and SCHED_DEADLINE admission control off for the run
    /// (sched_rt_runtime_us = -1, restored afterwards); needed for EDF sets above ~0.90.
    #[arg(long)]
    pub no_rt_throttling: bool,
    /// Mutex protocol of the tasks' critical sections: none (plain), pip (PTHREAD_PRIO_INHERIT:
    /// priority, or under edf deadline, inheritance) or ipcp (PTHREAD_PRIO_PROTECT, ceiling =
    /// highest priority of the resource's users; not with edf or other). The guide: "Critical
    /// sections on real threads".
    #[arg(long, default_value = "none")]
    pub protocol: String,
    /// Phase START..END:xFACTOR or START..END:UTIL% (repeatable), read as `rtlab sim --phase`:
    /// jobs released in it run C scaled (the guide: "Phases and modes on real threads").
    #[arg(long = "phase")]
    pub phases: Vec<String>,
    /// A named overload profile: hartstone-extended (48% for 30 s, 120% for 15 s, 48% to 120 s).
    #[arg(long)]
    pub overload: Option<String>,
    #[command(flatten)]
    pub cpu_lock: CpuLockFlags,
    #[command(flatten)]
    pub kernel: KernelTraceFlags,
    #[command(flatten)]
    pub isolate: crate::setup::IsolateFlags,
    /// Run N times and print the median and spread of each figure, with each run's disturbance
    /// verdict (guide: how-to/trust-a-real-result.md); --json then prints every run and the
    /// spreads.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
}

/// `0,1` or `0-3,6`: a usage error naming `--cpus` otherwise.
fn parse_cpu_list(text: &str) -> anyhow::Result<Vec<usize>> {
    let bad = |why: &str| usage(format!("--cpus `{}`: {why}", printable(text)));
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let number = |s: &str| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|&c| c < 4096)
                .ok_or_else(|| bad("give CPU numbers such as 0,1 or 0-3"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if a > b {
                    return Err(bad("a range goes upwards (0-3)"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(number(part)?),
        }
    }
    Ok(cpus)
}

impl RunFlags {
    /// `--policy`, parsed once (a usage error naming the flag otherwise).
    pub fn scheduler(&self) -> anyhow::Result<RealScheduler> {
        self.policy.parse::<RealScheduler>().map_err(|why| {
            if self.policy.trim() == "gedf" {
                return usage(format!("--policy `gedf`: {why}"));
            }
            usage(format!(
                "--policy `{}`: use {RUN_POLICIES}, or on --cpus linux-dl, pedf, cedf, gfp[:rm|dm|given], pfp[:rm|dm|given]",
                printable(&self.policy)
            ))
        })
    }

    /// With a multiprocessor `scheduler`: the run's CPUs (`--cpus`, or
    /// every CPU this process may use). `None` for the one-CPU policies,
    /// which refuse `--cpus` and `--partition`.
    pub fn multiprocessor(&self, scheduler: RealScheduler) -> anyhow::Result<Option<Vec<usize>>> {
        if scheduler.scope == Scope::Uni {
            if self.cpus.is_some() {
                return Err(usage(format!(
                    "--cpus runs a multiprocessor policy (linux-dl, pedf, cedf, gfp[:ORDER], pfp[:ORDER]), not --policy {}; \
                     for one CPU use --cpu N",
                    printable(&self.policy)
                )));
            }
            if self.partition.is_some() {
                return Err(usage(format!(
                    "--partition places tasks for pedf or pfp[:ORDER] on --cpus, not --policy {}",
                    printable(&self.policy)
                )));
            }
            return Ok(None);
        }
        if self.partition.is_some() && scheduler.scope != Scope::Partitioned {
            return Err(usage(format!(
                "--partition places tasks for pedf or pfp[:ORDER], not --policy {}",
                printable(&self.policy)
            )));
        }
        let cpus = match &self.cpus {
            Some(list) => parse_cpu_list(list)?,
            None => rtlab_host::policy::allowed_cpus()?,
        };
        Ok(Some(cpus))
    }

    /// `set` placed for the multiprocessor run of `cfg` (its processors the
    /// run's CPUs, each task's `cpu` from the file or `--partition` under
    /// pedf/pfp, clusters under cedf), with `cfg.placement` filled in.
    /// Unchanged on one CPU.
    pub fn place(&self, set: TaskSet, cfg: &mut RunConfig) -> anyhow::Result<TaskSet> {
        let Some(cpus) = cfg.placement.as_ref().map(|p| p.cpus.clone()) else {
            return Ok(set);
        };
        let (policy, scope) = (cfg.policy, cfg.scheduler().scope);
        let m = cpus.len() as u32;
        let mut set = set.with_processors(m).map_err(|e| {
            usage(format!(
                "--cpus {}: {}",
                placement::list(&cpus),
                printable(&e.message)
            ))
        })?;
        let name = cfg.scheduler();
        cfg.placement = Some(match scope {
            Scope::Global => {
                if let Some(t) = set.tasks.iter().find(|t| t.cpu.is_some()) {
                    return Err(usage(format!(
                        "--policy {name}: task `{}` has a fixed cpu, which a global scheduler ignores; \
                         use pedf or pfp, or remove the cpu fields",
                        printable(&t.name)
                    )));
                }
                Placement::global(cpus, set.tasks.len())
            }
            Scope::Partitioned => {
                if let Some(h) = &self.partition {
                    let test = match policy {
                        RunPolicy::Edf => "edf:edf-demand".to_string(),
                        fixed => format!("{fixed}:rta"),
                    };
                    set = crate::placement::partitioned(&set, h, &test, "nothing was run")?;
                }
                Placement::partitioned(cpus, &set).ok_or_else(|| {
                    usage(format!(
                        "--policy {name} needs every task's cpu (in the file) or --partition HEURISTIC"
                    ))
                })?
            }
            Scope::Clustered => {
                let groups = rtlab_sim::multi::clusters(&set)
                    .map_err(|why| usage(format!("--policy {name}: {why}")))?;
                let mut task_cluster = vec![0; set.tasks.len()];
                for (k, (_, tasks)) in groups.iter().enumerate() {
                    for &i in tasks {
                        task_cluster[i] = k;
                    }
                }
                let clusters: Vec<Vec<u32>> = groups.into_iter().map(|(c, _)| c).collect();
                Placement::clustered(cpus, &clusters, task_cluster)
            }
            Scope::Uni => return Ok(set),
        });
        Ok(set)
    }

    /// `--repeat`: at least 1, a usage error otherwise.
    pub fn repeats(&self) -> anyhow::Result<u32> {
        if self.repeat == 0 {
            return Err(usage("--repeat 0: give at least 1 (the number of runs)"));
        }
        Ok(self.repeat)
    }

    /// The executor configuration; errors are usage errors naming the flag.
    /// A multiprocessor run's placement is filled in by [`RunFlags::place`].
    pub fn config(&self) -> anyhow::Result<RunConfig> {
        let scheduler = self.scheduler()?;
        let multi = self.multiprocessor(scheduler)?;
        let policy = scheduler.policy;
        // As `sim -d 0s`: a run of no time is a usage error.
        if self.duration == Nanos::ZERO {
            return Err(usage("invalid --duration 0s: must be more than 0"));
        }
        let mut cfg = RunConfig::new(self.duration, policy);
        cfg.cpu = if self.no_pin || multi.is_some() {
            None
        } else {
            Some(self.cpu.unwrap_or_else(executor::default_cpu))
        };
        cfg.on_miss = self
            .on_miss
            .parse::<MissRule>()
            .ok()
            .filter(|&r| r != MissRule::Abort)
            .ok_or_else(|| {
                usage(format!(
                    "--on-miss `{}`: use {OVERRUN_RULES}",
                    printable(&self.on_miss)
                ))
            })?;
        cfg.lag_controller = self.lag_controller;
        cfg.kernel_trace = self.kernel.request();
        if let Some(cpus) = &multi {
            // The scope and CPUs, no domains yet ([`RunFlags::place`]).
            cfg.placement = Some(Placement {
                scope: scheduler.scope,
                cpus: cpus.clone(),
                domains: Vec::new(),
                task_domain: Vec::new(),
            });
            if self.protocol != "none" {
                return Err(usage(format!(
                    "--protocol {} on --cpus: locking across CPUs (MrsP, FMLP) is not implemented; \
                     run critical sections on one CPU",
                    printable(&self.protocol)
                )));
            }
        }
        if let (Some(margin), false) = (self.edf_margin, policy.is_deadline()) {
            return Err(usage(format!(
                "--edf-margin {margin} applies to --policy edf (SCHED_DEADLINE budgets), not --policy {policy}"
            )));
        }
        cfg.edf_margin = self.edf_margin;
        if self.no_edf_reclaim && !policy.is_deadline() {
            return Err(usage(format!(
                "--no-edf-reclaim applies to --policy edf (SCHED_DEADLINE budgets), not --policy {policy}"
            )));
        }
        cfg.edf_reclaim = !self.no_edf_reclaim;
        cfg.mlock = !self.no_mlock;
        cfg.no_rt_throttling = self.no_rt_throttling;
        cfg.protocol = self.protocol.parse::<LockingProtocol>().map_err(|_| {
            usage(format!(
                "--protocol `{}`: use {LOCK_PROTOCOLS}",
                printable(&self.protocol)
            ))
        })?;
        check_protocol(cfg.protocol, policy).map_err(|why| {
            usage(format!(
                "--protocol {} with --policy {policy}: {why}",
                cfg.protocol
            ))
        })?;
        cfg.phases =
            crate::flags::phase_flags(&self.phases, self.overload.as_deref(), self.duration)?;
        Ok(cfg)
    }
}

/// `--lag-controller=KIND`.
fn parse_controller(text: &str) -> Result<ControllerKind, String> {
    text.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_take_numbers_and_upward_ranges() {
        assert_eq!(parse_cpu_list("0,1").unwrap(), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        for bad in ["", "a", "3-1", "0,,1", "99999"] {
            let e = parse_cpu_list(bad).unwrap_err().to_string();
            assert!(e.starts_with("--cpus `"), "{bad}: {e}");
        }
    }
}
