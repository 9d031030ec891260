//! Global against partitioned scheduling on m processors
//! (`rtlab study global-vs-partitioned`): random sets at rising total
//! utilization, each decided three ways under global EDF, partitioned
//! EDF, global FP and partitioned FP:
//!
//! - **analysis**: a sufficient test proves it (gedf: any of Goossens,
//!   Funk & Baruah 2003, Baker 2003, Bertogna, Cirinei & Lipari 2009,
//!   Bertogna & Cirinei 2007's RTA; gfp: the DM RTA or its limited
//!   carry-in form, Guan et al. 2009; pedf/pfp: worst fit in decreasing
//!   utilization with the exact uniprocessor test per processor: worst
//!   fit spreads the load, so a processor stays under SCHED_DEADLINE's
//!   0.90 per CPU where first fit would fill one to 1.0 and be refused);
//! - **simulated**: the matching simulated scheduler (`linux-dl` for
//!   SCHED_DEADLINE's global EDF, `pedf`, `gfp:dm`, `pfp:dm` on the
//!   partition found) meets every deadline for the run's duration;
//! - **real** (optional): the same set on real threads on the given CPUs
//!   (SCHED_DEADLINE over every CPU, exclusive cpusets per CPU, SCHED_FIFO
//!   floating or pinned) misses no deadline. A set the kernel refuses
//!   (admission) counts as not schedulable and is counted apart.
//!
//! The highest schedulable utilization of a method is the highest level
//! below which every set at every level was schedulable by it (the first
//! failing level stops it), as Dhall and Liu's and Baker's experiments
//! report it.
//!
//! Partitioned sets the heuristic cannot place are unschedulable in every
//! column (there is nothing to run). Sets are UUniFast-discard (Davis &
//! Burns 2009) with per-task utilization at most 0.8, uniform periods in
//! [10, 100] ms at 1 ms, implicit deadlines: short enough for real runs of
//! a second, and every task admissible on one SCHED_DEADLINE CPU (0.90).

use std::sync::atomic::AtomicBool;

use rtlab_analysis::multiprocessor::{decide, MultiprocessorTest};
use rtlab_analysis::partition::{partition, Heuristic};
use rtlab_analysis::sweep::SweepTest;
use rtlab_model::generate::{generate_set, GeneratorConfig, PeriodDistribution, UtilizationMethod};
use rtlab_model::policy::{ModelScheduler, RealScheduler, RunPolicy, Scope};
use rtlab_model::runner::{RunCounts, RunSpec, Runner};
use rtlab_model::{Nanos, TaskSet};
use rtlab_rt::executor::{KernelTrace, Placement, RunConfig};
use rtlab_rt::runner::{RealRunError, RealRunner};
use rtlab_sim::runner::SimRunner;
use serde::Serialize;

use crate::real::KernelTraceOfRun;

/// The study's four arms, a closed set (its matches are exhaustive); each
/// is named by the real scheduler it runs ([`Method::scheduler`]), and
/// every name, policy, placement and model comes from that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Global EDF as SCHED_DEADLINE runs it on one root domain (`linux-dl`).
    LinuxDl,
    /// Partitioned EDF (one root domain per CPU, `pedf`).
    Pedf,
    /// Global fixed priority, DM (SCHED_FIFO floating, `gfp:dm`).
    Gfp,
    /// Partitioned fixed priority, DM (SCHED_FIFO pinned, `pfp:dm`).
    Pfp,
}

impl Serialize for Method {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.scheduler().serialize(s)
    }
}

impl Method {
    /// Every method, in report order.
    pub const ALL: [Method; 4] = [Method::LinuxDl, Method::Pedf, Method::Gfp, Method::Pfp];

    /// The real scheduler it runs: `linux-dl`, `pedf`, `gfp:dm`, `pfp:dm`.
    pub fn scheduler(self) -> RealScheduler {
        let (policy, scope) = match self {
            Method::LinuxDl => (RunPolicy::Edf, Scope::Global),
            Method::Pedf => (RunPolicy::Edf, Scope::Partitioned),
            Method::Gfp => (RunPolicy::DeadlineMonotonic, Scope::Global),
            Method::Pfp => (RunPolicy::DeadlineMonotonic, Scope::Partitioned),
        };
        RealScheduler { policy, scope }
    }

    /// Its name, the real scheduler's.
    pub fn name(self) -> String {
        self.scheduler().to_string()
    }

    /// The simulator's scheduler that models the real run.
    pub fn simulated(self) -> ModelScheduler {
        // Every arm has a model (a test checks it).
        self.scheduler()
            .model_scheduler(Nanos::ZERO)
            .unwrap_or(ModelScheduler::LinuxDl)
    }

    /// The analysis tests, in the analysis's spelling `SCHEDULER:TEST`
    /// with the scheduler as the simulator names it; a set is proven when
    /// any of them proves it.
    pub fn tests(self) -> &'static [&'static str] {
        match self {
            Method::LinuxDl => &["gedf:gfb", "gedf:bak", "gedf:bcl", "gedf:rta"],
            Method::Pedf => &["pedf:wf-decreasing"],
            Method::Gfp => &["gfp:dm:rta", "gfp:dm:rta-lc"],
            Method::Pfp => &["pfp:dm:wf-decreasing"],
        }
    }

    fn partitioned_test(self) -> Option<&'static str> {
        match self {
            Method::Pedf => Some("edf:edf-demand"),
            Method::Pfp => Some("dm:rta"),
            Method::LinuxDl | Method::Gfp => None,
        }
    }

    fn run_policy(self) -> RunPolicy {
        self.scheduler().policy
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct GvpConfig {
    /// The real CPUs (m = their number; the simulation and analysis use m).
    pub cpus: Vec<usize>,
    /// Tasks per set.
    pub tasks: usize,
    /// Sets per utilization level.
    pub sets: u64,
    /// Total utilization levels: from, to (inclusive), step.
    pub from: f64,
    /// Last level.
    pub to: f64,
    /// Step between levels.
    pub step: f64,
    /// Generator seed.
    pub seed: u64,
    /// Simulated (and real) duration of each run.
    pub duration: Nanos,
    /// Run on real threads too.
    pub real: bool,
    /// Lift RT throttling and SCHED_DEADLINE admission for the real runs.
    pub no_rt_throttling: bool,
    /// Record the kernel's schedule of each real run (`--kernel-trace`).
    pub kernel_trace: Option<KernelTrace>,
}

/// One method at one level: how many of the sets each way proved or met.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Proven by the analysis.
    pub analysis: u64,
    /// Met every deadline in the simulator.
    pub simulated: u64,
    /// Met every deadline on real threads (null without `--real`).
    pub real: Option<u64>,
    /// Real runs the kernel refused (admission), null without `--real`.
    pub refused: Option<u64>,
    /// Sets real and simulated runs agreed on (misses or not).
    pub agree: Option<u64>,
}

/// One utilization level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Level {
    /// Total utilization of each set.
    pub utilization: f64,
    /// Per method, in [`Method::ALL`] order.
    pub methods: Vec<(Method, Counts)>,
}

/// The highest schedulable utilization of one method, each way.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Highest {
    /// The method.
    pub method: Method,
    /// Highest level before the first level with a set the analysis could not prove.
    pub analysis: Option<f64>,
    /// The same for the simulator.
    pub simulated: Option<f64>,
    /// The same on real threads.
    pub real: Option<f64>,
}

/// Dhall's example on real threads, beside the simulator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DhallRun {
    /// `gedf` or `pedf`.
    pub method: Method,
    /// Real deadline misses.
    pub real_misses: u64,
    /// Simulated deadline misses.
    pub simulated_misses: u64,
}

/// The study's document (`--json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GvpDocument {
    /// Processors.
    pub m: usize,
    /// The real CPUs.
    pub cpus: Vec<usize>,
    /// Tasks per set.
    pub tasks: usize,
    /// Sets per level.
    pub sets: u64,
    /// Seed.
    pub seed: u64,
    /// Duration of each run (ns).
    pub duration_ns: u64,
    /// The levels.
    pub levels: Vec<Level>,
    /// The highest schedulable utilization per method.
    pub highest: Vec<Highest>,
    /// `builtin:dhall-linux` under gedf and pedf (with real runs only).
    pub dhall: Vec<DhallRun>,
    /// The kernel's account of each real run, in run order
    /// (`--kernel-trace`; absent without it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_traces: Vec<KernelTraceOfRun>,
    /// A stop signal cut the real runs short: the levels end where it came.
    pub interrupted: bool,
}

/// Why the study stopped.
#[derive(Debug, thiserror::Error)]
pub enum GvpError {
    /// A setting is out of range.
    #[error("invalid {0}")]
    Setting(String),
    /// A real run failed for another reason than admission.
    #[error(transparent)]
    Real(#[from] RealRunError),
    /// The simulator refused a set (a bug if it happens).
    #[error("simulation: {0}")]
    Sim(String),
}

/// The utilization levels from..=to by step (to within a millionth).
pub fn levels(config: &GvpConfig) -> Vec<f64> {
    let mut out = Vec::new();
    let mut k = 0u32;
    loop {
        let u = config.from + f64::from(k) * config.step;
        if u > config.to + 1e-6 || k > 10_000 {
            break;
        }
        out.push((u * 1e6).round() / 1e6);
        k += 1;
    }
    out
}

/// Set `index` of level `u`.
fn set_at(config: &GvpConfig, u: f64, level: usize, index: u64) -> Result<TaskSet, GvpError> {
    let generator = GeneratorConfig {
        tasks: config.tasks,
        utilization: u,
        method: UtilizationMethod::UUniFastDiscard,
        max_task_utilization: 0.8,
        periods: PeriodDistribution::uniform(
            Nanos::from_ms(10),
            Nanos::from_ms(100),
            Nanos::from_ms(1),
        ),
        seed: config.seed.wrapping_add(level as u64 * 1_000_003),
        name_prefix: format!("gvp-u{u}"),
        ..GeneratorConfig::default()
    };
    let set = generate_set(&generator, index).map_err(|e| GvpError::Setting(e.to_string()))?;
    set.with_processors(config.cpus.len() as u32)
        .map_err(|e| GvpError::Setting(e.message))
}

/// The set placed for `method`: with each task's `cpu` for a partitioned
/// method (`None` when the heuristic places it nowhere).
fn placed(set: &TaskSet, method: Method) -> Option<TaskSet> {
    let Some(test) = method.partitioned_test() else {
        return Some(set.clone());
    };
    let test = SweepTest::parse(test).ok()?;
    let heuristic = Heuristic::from_name("wf-decreasing")?;
    let p = partition(
        set,
        set.processors(),
        heuristic,
        test,
        &rtlab_analysis::suite::Options::default(),
    )
    .ok()?;
    p.fits().then(|| TaskSet {
        platform: set.platform.clone(),
        ..p.apply(set)
    })
}

fn proven(set: &TaskSet, method: Method) -> bool {
    method.tests().iter().any(|name| {
        MultiprocessorTest::from_name(name)
            .map(|t| decide(set, set.processors(), t) == Some(true))
            .unwrap_or(false)
    })
}

/// Simulated misses of `set` (already placed) under `method`, through the
/// experiments' one [`Runner`] (the simulator's, a late job running on).
pub fn simulated_misses(set: &TaskSet, method: Method, duration: Nanos) -> Result<u64, GvpError> {
    let counts = SimRunner::new()
        .run(set, &run_spec(method, duration))
        .map_err(|e| GvpError::Sim(e.to_string()))?;
    Ok(counts.deadline_misses())
}

/// What a run of `method` is asked: its model scheduler, no phases.
fn run_spec(method: Method, duration: Nanos) -> RunSpec {
    RunSpec {
        scheduler: method.simulated(),
        duration,
        phases: Vec::new(),
    }
}

/// The real run's configuration of `set` (placed) under `method` on `cpus`.
pub fn real_config(
    set: &TaskSet,
    method: Method,
    cpus: &[usize],
    duration: Nanos,
    no_rt_throttling: bool,
) -> RunConfig {
    let mut cfg = RunConfig::new(duration, method.run_policy());
    cfg.cpu = None;
    cfg.no_rt_throttling = no_rt_throttling;
    cfg.placement = Some(match method {
        Method::LinuxDl | Method::Gfp => Placement::global(cpus.to_vec(), set.tasks.len()),
        Method::Pedf | Method::Pfp => Placement::partitioned(cpus.to_vec(), set)
            .unwrap_or_else(|| Placement::global(cpus.to_vec(), set.tasks.len())),
    });
    cfg
}

/// Real misses, or `None` when the kernel refused the set (admission);
/// a traced run's summary joins `traced`.
fn real_misses(
    set: &TaskSet,
    method: Method,
    config: &GvpConfig,
    interrupt: &AtomicBool,
    traced: &mut Vec<KernelTraceOfRun>,
) -> Result<Option<u64>, GvpError> {
    let (duration, no_rt_throttling) = (config.duration, config.no_rt_throttling);
    let mut runner = real_runner(set, method, config, duration, no_rt_throttling, interrupt);
    match runner.run(set, &run_spec(method, duration)) {
        Ok(counts) => {
            traced.extend(trace_of(set, method, &counts));
            Ok(Some(counts.deadline_misses()))
        }
        Err(e) if runner.refusal(&e).is_some() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The experiments' real [`Runner`] for `set` (placed) under `method` on
/// the study's CPUs, its Linux policy pinned (the multiprocessor model
/// schedulers have no uniprocessor policy of their own).
fn real_runner<'a>(
    set: &TaskSet,
    method: Method,
    config: &GvpConfig,
    duration: Nanos,
    no_rt_throttling: bool,
    interrupt: &'a AtomicBool,
) -> RealRunner<'a> {
    let mut cfg = real_config(set, method, &config.cpus, duration, no_rt_throttling);
    cfg.kernel_trace = config.kernel_trace.clone();
    let mut runner = RealRunner::new(cfg, interrupt);
    runner.policy = Some(method.run_policy());
    runner
}

/// A traced run's record (none untraced).
fn trace_of(set: &TaskSet, method: Method, counts: &RunCounts) -> Option<KernelTraceOfRun> {
    Some(KernelTraceOfRun {
        set: set.name.clone(),
        utilization: set.utilization(),
        scheduler: method.name(),
        misses: counts.deadline_misses(),
        kernel_trace: counts.kernel_trace.clone()?,
    })
}

/// Runs the study; `progress` hears one line per level.
pub fn run(
    config: &GvpConfig,
    interrupt: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<GvpDocument, GvpError> {
    if config.cpus.is_empty() || config.tasks < 2 || config.sets == 0 {
        return Err(GvpError::Setting(
            "study: give CPUs, at least 2 tasks and 1 set".into(),
        ));
    }
    if !(config.step > 0.0 && config.from > 0.0 && config.to >= config.from) {
        return Err(GvpError::Setting(
            "utilization levels: from > 0, to >= from, step > 0".into(),
        ));
    }
    let m = config.cpus.len();
    let mut levels_out = Vec::new();
    let mut traced = Vec::new();
    let stopped = || interrupt.load(std::sync::atomic::Ordering::Relaxed);
    for (l, u) in levels(config).into_iter().enumerate() {
        if u > m as f64 || stopped() {
            break;
        }
        let mut methods: Vec<(Method, Counts)> = Method::ALL
            .iter()
            .map(|&k| {
                let counts = Counts {
                    real: config.real.then_some(0),
                    refused: config.real.then_some(0),
                    agree: config.real.then_some(0),
                    ..Counts::default()
                };
                (k, counts)
            })
            .collect();
        for index in 0..config.sets {
            if stopped() {
                break;
            }
            let set = set_at(config, u, l, index)?;
            for (method, counts) in &mut methods {
                let Some(placed) = placed(&set, *method) else {
                    // Nothing to run: every column says no, and real and
                    // simulated agree.
                    if let Some(a) = counts.agree.as_mut() {
                        *a += 1;
                    }
                    continue;
                };
                counts.analysis += u64::from(proven(&placed, *method));
                let sim = simulated_misses(&placed, *method, config.duration)?;
                counts.simulated += u64::from(sim == 0);
                if config.real {
                    match real_misses(&placed, *method, config, interrupt, &mut traced)? {
                        Some(real) => {
                            *counts.real.get_or_insert(0) += u64::from(real == 0);
                            *counts.agree.get_or_insert(0) += u64::from((real == 0) == (sim == 0));
                        }
                        None => *counts.refused.get_or_insert(0) += 1,
                    }
                }
            }
        }
        progress(&format!(
            "U = {u:.2}: {}",
            methods
                .iter()
                .map(|(k, c)| format!("{} {}/{}", k.name(), c.simulated, config.sets))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        levels_out.push(Level {
            utilization: u,
            methods,
        });
    }
    let highest = Method::ALL
        .iter()
        .enumerate()
        .map(|(k, &method)| {
            let last = |pick: &dyn Fn(&Counts) -> Option<u64>| {
                let mut best = None;
                for level in &levels_out {
                    if pick(&level.methods[k].1) != Some(config.sets) {
                        break;
                    }
                    best = Some(level.utilization);
                }
                best
            };
            Highest {
                method,
                analysis: last(&|c| Some(c.analysis)),
                simulated: last(&|c| Some(c.simulated)),
                real: if config.real { last(&|c| c.real) } else { None },
            }
        })
        .collect();
    let mut dhall = Vec::new();
    if config.real && m == 2 && !stopped() {
        let set = rtlab_model::file::load("builtin:dhall-linux")
            .map_err(|e| GvpError::Setting(e.to_string()))?
            .set;
        for method in [Method::LinuxDl, Method::Pedf] {
            let Some(placed) = placed(&set, method) else {
                continue;
            };
            let duration = config.duration.max(Nanos::from_secs(1));
            let simulated_misses = simulated_misses(&placed, method, duration)?;
            let real = real_runner(&placed, method, config, duration, false, interrupt)
                .run(&placed, &run_spec(method, duration))?;
            traced.extend(trace_of(&placed, method, &real));
            dhall.push(DhallRun {
                method,
                real_misses: real.deadline_misses(),
                simulated_misses,
            });
        }
    }
    Ok(GvpDocument {
        m,
        cpus: config.cpus.clone(),
        tasks: config.tasks,
        sets: config.sets,
        seed: config.seed,
        duration_ns: config.duration.as_ns(),
        levels: levels_out,
        highest,
        dhall,
        kernel_traces: traced,
        interrupted: stopped(),
    })
}

#[cfg(test)]
mod tests {
    /// Every arm has a simulator model, analysis tests that parse, and the
    /// real scheduler's name.
    #[test]
    fn every_method_is_named_modelled_and_tested_by_its_real_scheduler() {
        let names: Vec<String> = Method::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names, ["linux-dl", "pedf", "gfp:dm", "pfp:dm"]);
        for m in Method::ALL {
            assert_eq!(
                m.scheduler().model_scheduler(Nanos::ZERO),
                Some(m.simulated()),
                "{m:?}"
            );
            for test in m.tests() {
                assert!(MultiprocessorTest::from_name(test).is_ok(), "{test}");
            }
        }
    }

    use super::*;

    fn config() -> GvpConfig {
        GvpConfig {
            cpus: vec![0, 1],
            tasks: 4,
            sets: 3,
            from: 0.5,
            to: 2.0,
            step: 0.5,
            seed: 7,
            duration: Nanos::from_ms(300),
            real: false,
            no_rt_throttling: false,
            kernel_trace: None,
        }
    }

    #[test]
    fn levels_stop_at_m_and_analysis_never_proves_what_the_simulator_misses() {
        let doc = run(&config(), &AtomicBool::new(false), &|_| {}).unwrap();
        let us: Vec<f64> = doc.levels.iter().map(|l| l.utilization).collect();
        assert_eq!(us, vec![0.5, 1.0, 1.5, 2.0]);
        for level in &doc.levels {
            for (method, c) in &level.methods {
                // Every test is sufficient: a proven set meets its deadlines.
                assert!(
                    c.analysis <= c.simulated,
                    "{method:?} at {}",
                    level.utilization
                );
                assert!(c.simulated <= 3);
                assert_eq!(c.real, None);
            }
        }
        // At U = 0.5 on 2 processors everything fits and is proven.
        assert!(doc.levels[0].methods.iter().all(|(_, c)| c.analysis == 3));
        for h in &doc.highest {
            assert!(h.analysis <= h.simulated, "{h:?}");
            assert!(h.simulated >= Some(0.5));
        }
        // Deterministic: the same seed gives the same document.
        assert_eq!(
            doc,
            run(&config(), &AtomicBool::new(false), &|_| {}).unwrap()
        );
    }

    #[test]
    fn dhall_linux_misses_under_simulated_gedf_and_meets_under_pedf() {
        let set = rtlab_model::file::load("builtin:dhall-linux").unwrap().set;
        let d = Nanos::from_secs(1);
        assert!(
            simulated_misses(&placed(&set, Method::LinuxDl).unwrap(), Method::LinuxDl, d).unwrap()
                > 0
        );
        let p = placed(&set, Method::Pedf).unwrap();
        assert_eq!(simulated_misses(&p, Method::Pedf, d).unwrap(), 0);
        // The heavy task alone on a processor, under one CPU's admission.
        let heavy_cpu = p.tasks[2].cpu;
        assert!(p.tasks[..2].iter().all(|t| t.cpu != heavy_cpu));
    }
}
