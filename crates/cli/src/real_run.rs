//! A task set on real threads with every job streamed to its sinks: the
//! part `rtlab run` and `rtlab compare` share (crate `rtlab-rt`, module
//! `executor`).

use std::fs::File;
use std::io::BufWriter;

use anyhow::Context;
use clap::Args;
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::file::OutputFile;
use rtlab_model::policy::{RunPolicy, RUN_POLICIES};
use rtlab_model::{file, printable, Nanos, TaskSet};
use rtlab_rt::executor::placement::{self, Placement, Scope};
use rtlab_rt::executor::{
    self, JobSink, LockProtocol, Overrun, RunConfig, RunReport, LOCK_PROTOCOLS, OVERRUN_RULES,
};
use rtlab_rt::lag::ControllerKind;
use rtlab_rt::RtError;

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
    /// Run on these CPUs (`0,1`, `0-3`) under a multiprocessor policy: gedf, pedf, cedf,
    /// gfp[:rm|dm|given], pfp[:rm|dm|given] (default with those: every CPU this process may
    /// use). README: "Multiprocessor on real threads".
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
    /// Wait for releases with a lag controller: robust (the default) or paper (paper 000's
    /// Algorithm 2, for reproduction); README: "The lag controllers".
    #[arg(long, value_name = "KIND", num_args = 0..=1, require_equals = true,
          default_missing_value = "robust", value_parser = parse_controller)]
    pub lag_controller: Option<ControllerKind>,
    /// SCHED_DEADLINE budget over C (default: max(5% of C, 100us)).
    #[arg(long, value_parser = parse_nanos)]
    pub edf_margin: Option<Nanos>,
    /// Hard SCHED_DEADLINE budgets: no SCHED_FLAG_RECLAIM (GRUB), a job past C + margin is
    /// throttled until its next period (README: "Budgets and reclaiming").
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
    /// highest priority of the resource's users; not with edf or other). README: "Critical
    /// sections on real threads".
    #[arg(long, default_value = "none")]
    pub protocol: String,
    /// Phase START..END:xFACTOR or START..END:UTIL% (repeatable), read as `rtlab sim --phase`:
    /// jobs released in it run C scaled (README: "Phases and modes on real threads").
    #[arg(long = "phase")]
    pub phases: Vec<String>,
    /// A named overload profile: hartstone-extended (48% for 30 s, 120% for 15 s, 48% to 120 s).
    #[arg(long)]
    pub overload: Option<String>,
    #[command(flatten)]
    pub cpu_lock: CpuLockFlags,
    #[command(flatten)]
    pub kernel: KernelTraceFlags,
    /// Print tables in full width; by default they are fitted to the terminal (long cells wrap).
    #[arg(long)]
    pub wide: bool,
}

/// A multiprocessor `--policy`: the thread policy and how the CPUs are
/// shared (`gedf` is SCHED_DEADLINE over one domain of every CPU, `pfp:rm`
/// SCHED_FIFO with RM priorities pinned per CPU, ...).
fn multiprocessor_policy(name: &str) -> Option<(RunPolicy, Scope)> {
    let (head, order) = match name.split_once(':') {
        Some((h, o)) => (h, Some(o)),
        None => (name, None),
    };
    let fixed = |scope| {
        let policy = match order.unwrap_or("dm") {
            "rm" => RunPolicy::RateMonotonic,
            "dm" => RunPolicy::DeadlineMonotonic,
            "given" => RunPolicy::Given,
            _ => return None,
        };
        Some((policy, scope))
    };
    match (head, order) {
        ("gedf", None) => Some((RunPolicy::Edf, Scope::Global)),
        ("pedf", None) => Some((RunPolicy::Edf, Scope::Partitioned)),
        ("cedf", None) => Some((RunPolicy::Edf, Scope::Clustered)),
        ("gfp", _) => fixed(Scope::Global),
        ("pfp", _) => fixed(Scope::Partitioned),
        _ => None,
    }
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
    /// With a multiprocessor `--policy`: the run's CPUs (`--cpus`, or
    /// every CPU this process may use) and the scope. `None` for the
    /// one-CPU policies, which refuse `--cpus` and `--partition`.
    pub fn multiprocessor(&self) -> anyhow::Result<Option<(RunPolicy, Scope, Vec<usize>)>> {
        let Some((policy, scope)) = multiprocessor_policy(self.policy.trim()) else {
            if self.cpus.is_some() {
                return Err(usage(format!(
                    "--cpus runs a multiprocessor policy (gedf, pedf, cedf, gfp[:ORDER], pfp[:ORDER]), not --policy {}; \
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
        };
        if self.partition.is_some() && scope != Scope::Partitioned {
            return Err(usage(format!(
                "--partition places tasks for pedf or pfp[:ORDER], not --policy {}",
                printable(&self.policy)
            )));
        }
        let cpus = match &self.cpus {
            Some(list) => parse_cpu_list(list)?,
            None => rtlab_host::policy::allowed_cpus()?,
        };
        Ok(Some((policy, scope, cpus)))
    }

    /// `set` placed for the multiprocessor run of `cfg` (its processors the
    /// run's CPUs, each task's `cpu` from the file or `--partition` under
    /// pedf/pfp, clusters under cedf), with `cfg.placement` filled in.
    /// Unchanged on one CPU.
    pub fn place(&self, set: TaskSet, cfg: &mut RunConfig) -> anyhow::Result<TaskSet> {
        let Some((policy, scope, cpus)) = self.multiprocessor()? else {
            return Ok(set);
        };
        let m = cpus.len() as u32;
        let mut set = set.with_processors(m).map_err(|e| {
            usage(format!(
                "--cpus {}: {}",
                placement::list(&cpus),
                printable(&e.message)
            ))
        })?;
        let name = cfg.policy_name();
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
        });
        Ok(set)
    }

    /// The executor configuration; errors are usage errors naming the flag.
    /// A multiprocessor run's placement is filled in by [`RunFlags::place`].
    pub fn config(&self) -> anyhow::Result<RunConfig> {
        let multi = self.multiprocessor()?;
        let policy: RunPolicy = match &multi {
            Some((policy, _, _)) => Ok(*policy),
            None => crate::flags::policy_spelling(&self.policy).parse(),
        }
        .map_err(|_: String| {
            usage(format!(
                "--policy `{}`: use {RUN_POLICIES}, or on --cpus gedf, pedf, cedf, gfp[:rm|dm|given], pfp[:rm|dm|given]",
                printable(&self.policy)
            ))
        })?;
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
        cfg.on_miss = self.on_miss.parse::<Overrun>().map_err(|_| {
            usage(format!(
                "--on-miss `{}`: use {OVERRUN_RULES}",
                printable(&self.on_miss)
            ))
        })?;
        cfg.lag_controller = self.lag_controller;
        cfg.kernel_trace = self.kernel.request();
        if let Some((_, scope, cpus)) = &multi {
            // The name needs the scope: a placement with no domains yet.
            cfg.placement = Some(Placement {
                scope: *scope,
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
        cfg.protocol = self.protocol.parse::<LockProtocol>().map_err(|why| {
            if why.starts_with("unknown") {
                usage(format!(
                    "--protocol `{}`: use {LOCK_PROTOCOLS}",
                    printable(&self.protocol)
                ))
            } else {
                usage(format!("--protocol {}: {why}", printable(&self.protocol)))
            }
        })?;
        cfg.protocol.check_policy(policy).map_err(|why| {
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

pub type OpenJobFile = fn(BufWriter<File>, &TaskSet) -> std::io::Result<Box<dyn JobSink>>;

/// A job file to stream the run into: the flag that asked for it, its
/// path, and how to open the format on the file.
pub struct JobFile<'a> {
    /// `jobs` or `trace`.
    pub flag: &'static str,
    /// Where.
    pub path: &'a str,
    /// The format.
    pub open: OpenJobFile,
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
    more_sinks: Vec<Box<dyn JobSink>>,
    saver: Option<&Saver>,
) -> anyhow::Result<Executed> {
    let mut cfg = flags.config()?;
    let mut loaded = file::load(&flags.taskset)?;
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
            RtError::Setting { .. } => anyhow::anyhow!(naming_the_flag(&e)),
            other => other.into(),
        };
        e.context(format!("rtlab run --policy {}", cfg.policy_name()))
    };
    // What would be refused is refused before waiting for the CPU.
    executor::check(&loaded.set, &cfg).map_err(refused)?;
    flags.kernel.check()?;
    let flag = interrupt::install_interrupt_flag();
    // A multiprocessor run measures on every CPU it uses: it takes the
    // lock of each.
    let run_cpus = match &cfg.placement {
        Some(p) => Some(p.cpus.clone()),
        None => cfg.cpu.map(|c| vec![c]),
    };
    let _measuring = flags.cpu_lock.hold(run_cpus.as_deref())?;
    let traced = cfg.kernel_trace.is_some();
    // With a kernel trace the executor keeps every job for the attribution,
    // and the job rows, which gain its columns, are written after the run.
    // Each file is written beside its path and put there once complete
    // (`OutputFile`): `pending` is in the order of `files`.
    let mut sinks = Vec::with_capacity(files.len());
    let mut pending = Vec::with_capacity(files.len());
    for f in files {
        if traced && f.flag == "jobs" {
            pending.push(None);
            continue;
        }
        let created = OutputFile::create(f.path)
            .and_then(|out| {
                let (out, place) = out.into_parts();
                pending.push(Some(place));
                (f.open)(BufWriter::new(out), &loaded.set)
            })
            .with_context(|| format!("--{}: cannot create {}", f.flag, f.path))?;
        sinks.push(created);
    }
    if let Some(saver) = saver {
        sinks.push(saver.job_sink(&loaded.set));
    }
    // In-memory sinks (the --plot Gantt rows) cannot fail: their results
    // are not reported.
    sinks.extend(more_sinks);
    restore_left_state_first();
    // On a terminal, a progress line fed by one more sink (its result is
    // not reported: counting cannot fail).
    let progress = crate::progress::RunProgress::start(cfg.duration).map(|(line, sink)| {
        sinks.push(Box::new(sink));
        line.follow(cfg.duration)
    });
    let ran = executor::run_traced(&loaded.set, &cfg, flag, sinks);
    if let Some(line) = progress {
        line.finish();
    }
    let (report, written, account) = match ran {
        Ok(done) => done,
        Err(e) => {
            // Refused before the first release: no file is made (dropping
            // `pending` removes the partial ones; a device is untouched).
            drop(pending);
            return Err(refused(e));
        }
    };
    // The sinks' results in the order of `files` (the jobs file, written
    // below when traced, takes its place).
    let mut results = written.into_iter();
    let mut written: Vec<anyhow::Result<()>> = Vec::with_capacity(files.len() + 1);
    for (f, place) in files.iter().zip(pending) {
        let Some(place) = place else {
            written.push(Ok(()));
            continue;
        };
        let result = results.next().unwrap_or(Ok(()));
        // A file whose writer failed stays out (its partial removed).
        let result = result.and_then(|()| place.commit());
        written.push(result.with_context(|| format!("--{}: cannot write {}", f.flag, f.path)));
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
            let on_miss = match cfg.on_miss {
                Overrun::Skip => rtlab_sim::OnMiss::Skip,
                Overrun::Continue => rtlab_sim::OnMiss::Continue,
            };
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
            match (f.flag, analysis) {
                ("jobs", _) => {
                    written[i] = kernel_trace::write_jobs_csv(
                        f.path,
                        &loaded.set,
                        &account.jobs,
                        analysis,
                        &report,
                    );
                }
                ("trace", Some(a)) => {
                    if let Err(e) = kernel_trace::write_schedule(f.path, a, &report) {
                        if written[i].is_ok() {
                            written[i] = Err(e);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for (f, result) in files.iter().zip(&written) {
        if traced && f.flag == "jobs" {
            continue;
        }
        if result.is_ok() {
            let what = match f.flag {
                "trace" => "Chrome trace of every job, open in Perfetto or chrome://tracing",
                _ => "one record per job",
            };
            crate::wrote::wrote(f.path, what);
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
    fn multiprocessor_policies_map_to_a_thread_policy_and_a_scope() {
        assert_eq!(
            multiprocessor_policy("gedf"),
            Some((RunPolicy::Edf, Scope::Global))
        );
        assert_eq!(
            multiprocessor_policy("pedf"),
            Some((RunPolicy::Edf, Scope::Partitioned))
        );
        assert_eq!(
            multiprocessor_policy("cedf"),
            Some((RunPolicy::Edf, Scope::Clustered))
        );
        assert_eq!(
            multiprocessor_policy("gfp"),
            Some((RunPolicy::DeadlineMonotonic, Scope::Global))
        );
        assert_eq!(
            multiprocessor_policy("pfp:rm"),
            Some((RunPolicy::RateMonotonic, Scope::Partitioned))
        );
        assert_eq!(
            multiprocessor_policy("gfp:given"),
            Some((RunPolicy::Given, Scope::Global))
        );
        for not in ["edf", "rm", "pfp:edf", "gedf:rm", "linux-dl"] {
            assert_eq!(multiprocessor_policy(not), None, "{not}");
        }
    }

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
