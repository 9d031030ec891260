//! A task set on real threads with every job streamed to its sinks: the
//! part `rtlab run` and `rtlab compare` share (crate `rtlab-rt`, module
//! `executor`).

use std::fs::File;
use std::io::BufWriter;

use anyhow::Context;
use clap::Args;
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::policy::{RealScheduler, Scope};
use rtlab_model::policy::{RunPolicy, RUN_POLICIES};
use rtlab_model::{file, printable, Nanos, TaskSet};
use rtlab_rt::executor::placement::{self, Placement};
use rtlab_rt::executor::{
    self, check_protocol, JobSink, LockingProtocol, MissRule, RunConfig, RunReport, LOCK_PROTOCOLS,
    OVERRUN_RULES,
};
use rtlab_rt::lag::ControllerKind;
use rtlab_rt::RtError;

use crate::dispatcher_flags::DispatcherFlags;
use crate::flags::parse_nanos;
use crate::kernel_trace::{self, KernelTraceFlags};
use crate::save::Saver;
use crate::setup::{restore_left_state_first, say, CpuLockFlags};
use crate::usage::{naming_the_flag, usage};

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
    pub dispatch: DispatcherFlags,
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
    /// Print tables in full width; by default they are fitted to the terminal (long cells wrap).
    #[arg(long)]
    pub wide: bool,
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
        if self.dispatch.dispatcher {
            return self.dispatched_scheduler();
        }
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

    /// With `--dispatcher`: the threads' policy (SCHED_FIFO, the
    /// dispatcher's) and where the dispatchers run: one CPU, or on `--cpus`
    /// (or under pedf and pfp:ORDER every allowed CPU) one per CPU over the
    /// tasks placed there; a global scheduler is the dispatcher's refusal
    /// to make.
    fn dispatched_scheduler(&self) -> anyhow::Result<RealScheduler> {
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
        let name = match self.dispatch.dispatcher {
            true => self.policy.trim().to_string(),
            false => cfg.scheduler().to_string(),
        };
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
                    let test = match (self.dispatch.dispatcher, policy) {
                        (true, _) => dispatched_partition_test(&self.policy),
                        (false, RunPolicy::Edf) => "edf:edf-demand".to_string(),
                        (false, fixed) => format!("{fixed}:rta"),
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
        if self.dispatch.dispatcher {
            return self.dispatched_config(scheduler, multi);
        }
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

impl RunFlags {
    /// The executor's settings of a run by the dispatcher (the thread
    /// policy is the dispatcher's): what applies to a Linux policy only is
    /// refused naming the flag.
    fn dispatched_config(
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
fn dispatched_partition_test(scheduler: &str) -> String {
    let name = scheduler.trim();
    for prefix in ["pfp:", "fp:"] {
        if let Some(order) = name.strip_prefix(prefix) {
            return format!("{order}:rta");
        }
    }
    "edf:edf-demand".to_string()
}

/// Which job file: the format, and the flag that asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobFileKind {
    /// `--jobs`: one CSV row per job (with a kernel trace, written after
    /// the run with the kernel's columns).
    Jobs,
    /// `--trace`: the Chrome trace of every job (with a kernel trace, the
    /// kernel's schedule is added after the run).
    Trace,
}

impl JobFileKind {
    /// The flag's name, without dashes.
    pub fn flag(self) -> &'static str {
        match self {
            JobFileKind::Jobs => "jobs",
            JobFileKind::Trace => "trace",
        }
    }

    /// What the file holds, for the line that says it was written.
    fn what(self) -> &'static str {
        match self {
            JobFileKind::Jobs => "one record per job",
            JobFileKind::Trace => "Chrome trace of every job, open in Perfetto or chrome://tracing",
        }
    }

    /// Opens the format on a created file (writes its opening).
    fn open(self, out: BufWriter<File>, set: &TaskSet) -> std::io::Result<Box<dyn JobSink + Send>> {
        Ok(match self {
            JobFileKind::Jobs => Box::new(executor::JobsCsv::new(out, set)?),
            JobFileKind::Trace => Box::new(executor::ChromeTrace::new(out, set)?),
        })
    }
}

/// A job file to stream the run into.
pub struct JobFile<'a> {
    /// Which one.
    pub kind: JobFileKind,
    /// Where.
    pub path: &'a str,
}

/// `--lag-controller=KIND`.
fn parse_controller(text: &str) -> Result<ControllerKind, String> {
    text.parse()
}

/// Loads the set, warns about RT throttling, creates the job files, runs
/// the set (streaming every job into the files), and says so on stderr
/// when a stop signal cut the run short or job records were dropped (a
/// lost thread is [`lost_threads`]' error, for after the output). Every job also goes to `saver` when one is given, and to
/// `more_sinks`. Returns the report and, per job file (then for the
/// saver), how writing it went.
/// The figures of one run that `--repeat` gives the median and spread of:
/// per task its misses, largest and mean response, largest lag; the
/// run's misses and context switches.
pub fn repeat_figures(r: &RunReport) -> Vec<(String, Option<f64>)> {
    let ns = |v: Option<u64>| v.map(|v| v as f64);
    let mut out = vec![
        (
            "deadline misses".to_string(),
            Some(r.deadline_misses as f64),
        ),
        (
            "context switches".to_string(),
            Some(r.context_switches as f64),
        ),
    ];
    for t in &r.tasks {
        let name = printable(&t.name);
        out.push((format!("{name} misses"), Some(t.misses as f64)));
        out.push((format!("{name} R max"), ns(t.max_response_ns)));
        out.push((format!("{name} R mean"), ns(t.mean_response_ns)));
        out.push((format!("{name} lag max"), ns(t.max_lag_ns)));
    }
    out
}

/// Whether a `--repeat` figure is a time (ns).
pub fn repeat_figure_is_time(name: &str) -> bool {
    name.ends_with(" R max") || name.ends_with(" R mean") || name.ends_with(" lag max")
}

/// What [`execute`] leaves for the command's output.
pub struct Executed {
    /// The set as run (placed).
    pub set: TaskSet,
    /// Where it came from (file or built-in).
    pub origin: String,
    /// The report.
    pub report: RunReport,
    /// Per job file (then for the saver), how writing it went.
    pub written: Vec<anyhow::Result<()>>,
    /// With `--kernel-trace`: the drawn window of the kernel's schedule and
    /// the simulator's (also saved with the run); empty otherwise.
    pub schedule: Vec<rtlab_model::results::ScheduleSpan>,
}

pub fn execute(
    flags: &RunFlags,
    files: &[JobFile<'_>],
    more_sinks: Vec<Box<dyn JobSink + Send>>,
    saver: Option<&Saver>,
) -> anyhow::Result<Executed> {
    let cfg = flags.config()?;
    let loaded = file::load(&flags.taskset)?;
    execute_loaded(flags, cfg, loaded, files, more_sinks, saver)
}

/// [`execute`] of a set already loaded under the configuration `cfg`
/// (`flags.config()`, not yet placed), for a command that needs the set
/// before the run (`compare` loads it once).
pub fn execute_loaded(
    flags: &RunFlags,
    mut cfg: RunConfig,
    mut loaded: file::LoadedTaskSet,
    files: &[JobFile<'_>],
    more_sinks: Vec<Box<dyn JobSink + Send>>,
    saver: Option<&Saver>,
) -> anyhow::Result<Executed> {
    flags.repeats()?;
    let dispatch = flags.dispatch()?;
    crate::flags::add_modes(
        &mut cfg.phases,
        &loaded.modes,
        loaded.set.tasks.len(),
        cfg.duration,
    )?;
    loaded.set = flags.place(loaded.set, &mut cfg)?;
    for warning in warnings(&loaded.set, &cfg) {
        eprintln!("warning: {warning}");
    }
    let refused = |e: RtError| {
        let e = match e {
            // The dispatcher's refusals of its flags (-s, --tick,
            // --protocol) are usage errors.
            RtError::Setting { .. } if dispatch.is_some() => usage(naming_the_flag(&e)),
            RtError::Setting { .. } => anyhow::anyhow!(naming_the_flag(&e)),
            other => other.into(),
        };
        e.context(match &dispatch {
            Some(d) => format!("rtlab run --dispatcher -s {}", d.scheduler),
            None => format!("rtlab run --policy {}", cfg.scheduler()),
        })
    };
    // What would be refused is refused before waiting for the CPU.
    match &dispatch {
        Some(d) => rtlab_rt::dispatcher::check(&loaded.set, &cfg, d),
        None => executor::check(&loaded.set, &cfg),
    }
    .map_err(refused)?;
    flags.kernel.check()?;
    let flag = interrupt::install_interrupt_flag();
    // A multiprocessor run measures on every CPU it uses: it takes the
    // lock of each.
    let run_cpus = match &cfg.placement {
        Some(p) => Some(p.cpus.clone()),
        None => cfg.cpu.map(|c| vec![c]),
    };
    let measured = run_cpus
        .clone()
        .unwrap_or_else(|| rtlab_host::policy::allowed_cpus().unwrap_or_default());
    flags.isolate.check(&measured)?;
    let lock_wait = std::time::Instant::now();
    let _measuring = flags.cpu_lock.hold(run_cpus.as_deref())?;
    let lock_wait = lock_wait.elapsed();
    if let Some(saver) = saver {
        // The machine as the measurement finds it, not as it was before
        // the wait for the lock.
        saver.measurement_starts();
    }
    let traced = cfg.kernel_trace.is_some();
    // With a kernel trace the executor keeps every job for the attribution,
    // and the job rows, which gain its columns, are written after the run.
    let mut sinks = Vec::with_capacity(files.len());
    for f in files {
        if traced && f.kind == JobFileKind::Jobs {
            continue;
        }
        let created = File::create(f.path)
            .and_then(|out| f.kind.open(BufWriter::new(out), &loaded.set))
            .with_context(|| format!("--{}: cannot create {}", f.kind.flag(), f.path))?;
        sinks.push(created);
    }
    if let Some(saver) = saver {
        sinks.push(saver.job_sink(&loaded.set));
    }
    // In-memory sinks (the --plot Gantt rows) cannot fail: their results
    // are not reported.
    sinks.extend(more_sinks);
    restore_left_state_first();
    let shield = flags.isolate.raise(&measured)?;
    // On a terminal, a progress line fed by one more sink (its result is
    // not reported: counting cannot fail).
    let progress = crate::progress::RunProgress::start(cfg.duration).map(|(line, sink)| {
        sinks.push(Box::new(sink));
        line.follow(cfg.duration)
    });
    let ran = match &dispatch {
        Some(d) => rtlab_rt::dispatcher::run_traced(&loaded.set, &cfg, d, flag, sinks),
        None => executor::run_traced(&loaded.set, &cfg, flag, sinks),
    };
    if let Some(line) = progress {
        line.finish();
    }
    drop(shield);
    let (mut report, written, account) = match ran {
        Ok(done) => done,
        Err(e) => {
            // Refused before the first release: leave no empty files behind.
            for f in files {
                let _ = std::fs::remove_file(f.path);
            }
            return Err(refused(e));
        }
    };
    if let Some(d) = report.disturbance.as_mut() {
        d.lock_wait_ns = Some(u64::try_from(lock_wait.as_nanos()).unwrap_or(u64::MAX));
    }
    // The sinks' results in the order of `files` (the jobs file, written
    // below when traced, takes its place).
    let mut results = written.into_iter();
    let mut written: Vec<anyhow::Result<()>> = Vec::with_capacity(files.len() + 1);
    for f in files {
        if traced && f.kind == JobFileKind::Jobs {
            written.push(Ok(()));
            continue;
        }
        let result = results.next().unwrap_or(Ok(()));
        written
            .push(result.with_context(|| format!("--{}: cannot write {}", f.kind.flag(), f.path)));
    }
    written.extend(results.map(|r| r.context("--save: cannot spool the jobs")));
    let mut schedule = Vec::new();
    if let Some(account) = account {
        // A trace that cannot be read does not lose the run: its results
        // and job rows are kept without the kernel's columns.
        let analysis = match &account.traced {
            Ok(t) => {
                kernel_trace::said(t, &flags.kernel);
                Some(&t.analysis)
            }
            Err(e) => {
                say(&format!(
                    "warning: the kernel trace could not be analysed: {e:#}"
                ));
                None
            }
        };
        if let Some(a) = analysis {
            let on_miss = cfg.on_miss;
            schedule = kernel_trace::schedule_spans(
                a,
                &loaded.set,
                &account.jobs,
                &report,
                on_miss,
                &cfg.phases,
            );
            if let Some(saver) = saver {
                saver.schedule(schedule.clone());
            }
        }
        for (i, f) in files.iter().enumerate() {
            match (f.kind, analysis) {
                (JobFileKind::Jobs, _) => {
                    written[i] = kernel_trace::write_jobs_csv(
                        f.path,
                        &loaded.set,
                        &account.jobs,
                        analysis,
                        &report,
                    );
                }
                (JobFileKind::Trace, Some(a)) => {
                    if let Err(e) = kernel_trace::write_schedule(f.path, a, &report) {
                        if written[i].is_ok() {
                            written[i] = Err(e);
                        }
                    }
                }
                (JobFileKind::Trace, None) => {}
            }
        }
    }
    for (f, result) in files.iter().zip(&written) {
        if traced && f.kind == JobFileKind::Jobs {
            continue;
        }
        if result.is_ok() {
            crate::wrote::wrote(f.path, f.kind.what());
        }
    }
    let reported = files.len() + usize::from(saver.is_some());
    written.truncate(reported);
    written.resize_with(reported, || Ok(()));
    if report.jobs_dropped > 0 {
        say(&format!(
            "warning: {} job records were dropped from the job files because the writer fell behind (the summary still counts every job)",
            report.jobs_dropped
        ));
    }
    if report.interrupted {
        say(&format!(
            "interrupted{} after {}: what was recorded until then follows",
            interrupt::signal_name().map_or(String::new(), |s| format!(" by {s}")),
            Nanos::from_ns(report.ended_ns)
        ));
    }
    Ok(Executed {
        set: loaded.set,
        origin: loaded.origin,
        report,
        written,
        schedule,
    })
}

/// A run whose threads did not all report back is a failed run (exit 1),
/// said after what was measured is printed and saved.
pub fn lost_threads(report: &RunReport) -> anyhow::Result<()> {
    if report.lost_tasks.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "the threads of {} did not report back in time (stopped, or starved past the end of the run); \
         their jobs are missing from the summary",
        report.lost_tasks.iter().map(|t| printable(t).into_owned()).collect::<Vec<_>>().join(", ")
    )
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

/// What the user should know before the numbers: RT throttling that the
/// set's load can hit, and SCHED_DEADLINE deadlines clamped to the period.
fn warnings(set: &TaskSet, cfg: &RunConfig) -> Vec<String> {
    let mut out = Vec::new();
    let u = set.utilization();
    if cfg.policy.is_fifo_or_rr() && cfg.cpu.is_some() && !cfg.no_rt_throttling {
        if let Ok(t) = RtThrottling::read() {
            if t.can_throttle(u) {
                out.push(format!(
                    "the set needs {:.1}% of CPU {} but RT throttling lets SCHED_FIFO/RR threads use {}; \
                     the kernel will stop them for the rest of each throttling period (raise \
                     /proc/sys/kernel/sched_rt_runtime_us, or write -1 there, to change it)",
                    u * 100.0,
                    cfg.cpu.unwrap_or(0),
                    t.describe_limit()
                ));
            }
        }
    }
    if cfg.policy.is_deadline() {
        for t in set.tasks.iter().filter(|t| t.deadline > t.period) {
            out.push(format!(
                "task `{}`: SCHED_DEADLINE needs deadline <= period, so it runs with deadline {} (its D {} is still what misses are judged by)",
                printable(&t.name), t.period, t.deadline
            ));
        }
    }
    out
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
