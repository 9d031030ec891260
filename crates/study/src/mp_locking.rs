//! Paper 001's locking question on multicore (Carletto & Vardanega 2017
//! compare IPCP and DFP with a protected procedure of growing length; here
//! the same question is asked of the multiprocessor protocols): how the
//! schedulable fraction of random sets falls as critical sections grow
//! longer and as more resources are shared, under MPCP, DPCP, FMLP+, MrsP,
//! MSRP (partitioned fixed priorities, RM) and the global OMLP (global
//! EDF), decided two ways:
//!
//! - **analysed**: `rtlab_analysis::mp_locking` proves the set (the
//!   partitioned protocols on the placement of `heuristic`, worst fit in
//!   decreasing utilization by default);
//! - **simulated**: the simulator runs the same set, placed the same way,
//!   under the protocol for `duration` without a deadline miss (a
//!   necessary condition: the gap between the two is the bounds'
//!   pessimism, and the protocol's real cost where both fail).
//!
//! Two series over the same base sets (the same periods and execution
//! times at every point; only the sections change, drawn by
//! [`SharingModel`] from the set's own stream):
//!
//! 1. critical-section length: every section's length is the point's
//!    (the model's range collapsed to it), `fixed_resources` resources;
//! 2. number of shared resources: sections of `fixed_length`, `r`
//!    resources at each point.
//!
//! At every point the protocol(s) with the most sets proven win the
//! analysis, and those with the most sets met win the simulation
//! ([`Point::winners`]). The simulator is driven through its one entry
//! (`rtlab_sim::run`), not through the `Runner` trait, which names no
//! locking protocol.

use rayon::prelude::*;
use rtlab_analysis::mp_locking;
use rtlab_analysis::partition::Heuristic;
use rtlab_model::generate::sections::SharingModel;
use rtlab_model::generate::{generate_set, GeneratorConfig, PeriodDistribution, UtilizationMethod};
use rtlab_model::mp_locking::{MpProtocol, MpScheduling};
use rtlab_model::policy::PriorityAssignment;
use rtlab_model::{Nanos, Platform, TaskSet};
use rtlab_sim::{LockingProtocol, SimConfig};
use serde::Serialize;

/// What the study runs.
#[derive(Debug, Clone, PartialEq)]
pub struct MpLockingConfig {
    /// Processors m.
    pub cpus: u32,
    /// Tasks per set.
    pub tasks: usize,
    /// Total utilization of every set (at most m).
    pub utilization: f64,
    /// Sets per point.
    pub sets: u64,
    /// Generator seed.
    pub seed: u64,
    /// The protocols compared.
    pub protocols: Vec<MpProtocol>,
    /// Series 1: the critical-section lengths.
    pub lengths: Vec<Nanos>,
    /// Series 1: resources shared.
    pub fixed_resources: u32,
    /// Series 2: the numbers of resources.
    pub resources: Vec<u32>,
    /// Series 2: the critical-section length.
    pub fixed_length: Nanos,
    /// Probability that a task uses a resource.
    pub sharing: f64,
    /// Sections per job on each resource a task uses.
    pub requests: u32,
    /// How the partitioned protocols place a set.
    pub heuristic: Heuristic,
    /// Length of every simulated run.
    pub duration: Nanos,
}

impl Default for MpLockingConfig {
    /// 4 processors, 8 tasks at U = 2.4, 20 sets a point, every protocol,
    /// lengths 25 µs to 3.2 ms, 1 to 8 resources (sections of 200 µs; the
    /// length series shares 2), each resource used by a task with
    /// probability 0.4 once per job, worst fit, runs of 500 ms.
    fn default() -> Self {
        let us = Nanos::from_us;
        MpLockingConfig {
            cpus: 4,
            tasks: 8,
            utilization: 2.4,
            sets: 20,
            seed: 0,
            protocols: MpProtocol::ALL.to_vec(),
            lengths: vec![us(25), us(100), us(400), us(800), us(1600), us(3200)],
            fixed_resources: 2,
            resources: vec![1, 2, 4, 8],
            fixed_length: us(200),
            sharing: 0.4,
            requests: 1,
            heuristic: Heuristic {
                fit: rtlab_analysis::partition::Fit::Worst,
                order: rtlab_analysis::partition::TaskOrder::DecreasingUtilization,
            },
            duration: Nanos::from_ms(500),
        }
    }
}

/// One protocol at one point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProtocolCount {
    /// The protocol's name.
    pub protocol: &'static str,
    /// Sets the analysis proves.
    pub analysed: u64,
    /// Sets the simulation runs without a miss.
    pub simulated: u64,
}

/// One point of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The series' variable: a length in ns, or a number of resources.
    pub x: u64,
    /// Sets at this point.
    pub sets: u64,
    /// Per protocol, in the config's order.
    pub protocols: Vec<ProtocolCount>,
    /// Sets the analysis proves when the sections block nobody: the
    /// partitioned protocols' placement under RM RTA (their ceiling), and
    /// global EDF's tests (the OMLP's).
    pub without_blocking: Baseline,
    /// The protocols with the most sets proven (none when none is).
    pub analysis_winners: Vec<&'static str>,
    /// The protocols with the most sets met in simulation.
    pub simulation_winners: Vec<&'static str>,
}

impl Point {
    fn new(x: u64, sets: u64, protocols: Vec<ProtocolCount>, without_blocking: Baseline) -> Point {
        let winners = |count: &dyn Fn(&ProtocolCount) -> u64| {
            let best = protocols.iter().map(count).max().unwrap_or(0);
            if best == 0 {
                return Vec::new();
            }
            protocols
                .iter()
                .filter(|p| count(p) == best)
                .map(|p| p.protocol)
                .collect()
        };
        Point {
            analysis_winners: winners(&|p| p.analysed),
            simulation_winners: winners(&|p| p.simulated),
            without_blocking,
            x,
            sets,
            protocols,
        }
    }
}

/// Sets proven without any blocking: what the protocols' analyses can at
/// most reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Baseline {
    /// Partitioned fixed priorities (RM, RTA) on the protocols' placement.
    pub partitioned: u64,
    /// Global EDF (any of GFB, BAK, BCL, RTA).
    pub global: u64,
}

/// The study's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MpLockingDocument {
    /// Processors.
    pub cpus: u32,
    /// Tasks per set.
    pub tasks: usize,
    /// Total utilization of every set.
    pub utilization: f64,
    /// Sets per point.
    pub sets: u64,
    /// Seed.
    pub seed: u64,
    /// Probability that a task uses a resource.
    pub sharing: f64,
    /// Sections per job per resource used.
    pub requests: u32,
    /// The partitioned protocols' placement.
    pub heuristic: String,
    /// Length of every simulated run, ns.
    pub duration_ns: u64,
    /// Resources in the length series.
    pub fixed_resources: u32,
    /// Section length in the resources series, ns.
    pub fixed_length_ns: u64,
    /// Series 1: by critical-section length (`x` in ns).
    pub by_length: Vec<Point>,
    /// Series 2: by number of resources.
    pub by_resources: Vec<Point>,
}

/// Why the study cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MpLockingError {
    /// A setting is out of range (names the setting).
    #[error("{0}")]
    Setting(String),
}

/// The base sets: `sets` random sets of `tasks` tasks at total
/// utilization `utilization` (RandFixedSum with per-task U at most 0.8,
/// log-uniform periods in [10, 100] ms at 1 ms, implicit deadlines) on
/// `cpus` processors.
fn base_sets(config: &MpLockingConfig) -> Result<Vec<TaskSet>, MpLockingError> {
    let generator = GeneratorConfig {
        tasks: config.tasks,
        utilization: config.utilization,
        method: UtilizationMethod::RandFixedSum,
        max_task_utilization: 0.8,
        periods: PeriodDistribution::log_uniform(
            Nanos::from_ms(10),
            Nanos::from_ms(100),
            Nanos::from_ms(1),
        ),
        seed: config.seed,
        name_prefix: "mp-locking".into(),
        ..GeneratorConfig::default()
    };
    (0..config.sets)
        .map(|k| {
            generate_set(&generator, k)
                .map(|s| s.on_platform(Platform::new(config.cpus)))
                .map_err(|e| MpLockingError::Setting(e.to_string()))
        })
        .collect()
}

/// Runs the study.
pub fn run(config: &MpLockingConfig) -> Result<MpLockingDocument, MpLockingError> {
    if config.cpus < 2 || config.cpus > 64 {
        return Err(MpLockingError::Setting(format!(
            "cpus {}: use 2 to 64 processors",
            config.cpus
        )));
    }
    if !(config.utilization > 0.0 && config.utilization <= f64::from(config.cpus)) {
        return Err(MpLockingError::Setting(format!(
            "utilization {}: give a total utilization above 0 and at most cpus ({})",
            config.utilization, config.cpus
        )));
    }
    if config.protocols.is_empty() || config.lengths.is_empty() || config.resources.is_empty() {
        return Err(MpLockingError::Setting(
            "give at least one protocol, one length and one number of resources".into(),
        ));
    }
    if config.duration.is_zero() {
        return Err(MpLockingError::Setting("duration must be above 0".into()));
    }
    let model = |resources: u32, length: Nanos| SharingModel {
        resources,
        sharing: config.sharing,
        requests: config.requests,
        length_min: length,
        length_max: length,
    };
    for m in config
        .lengths
        .iter()
        .map(|&l| model(config.fixed_resources, l))
        .chain(
            config
                .resources
                .iter()
                .map(|&r| model(r, config.fixed_length)),
        )
    {
        m.validate()
            .map_err(|e| MpLockingError::Setting(e.to_string()))?;
    }
    let sets = base_sets(config)?;
    let by_length = config
        .lengths
        .iter()
        .map(|&l| point(config, &sets, model(config.fixed_resources, l), l.as_ns()))
        .collect();
    let by_resources = config
        .resources
        .iter()
        .map(|&r| point(config, &sets, model(r, config.fixed_length), u64::from(r)))
        .collect();
    Ok(MpLockingDocument {
        cpus: config.cpus,
        tasks: config.tasks,
        utilization: config.utilization,
        sets: config.sets,
        seed: config.seed,
        sharing: config.sharing,
        requests: config.requests,
        heuristic: config.heuristic.name(),
        duration_ns: config.duration.as_ns(),
        fixed_resources: config.fixed_resources,
        fixed_length_ns: config.fixed_length.as_ns(),
        by_length,
        by_resources,
    })
}

/// One set's (analysed, simulated) per protocol, and its no-blocking
/// (partitioned, global) verdicts.
type SetVerdicts = (Vec<(bool, bool)>, (bool, bool));

/// Every protocol on every base set with sections drawn by `model`.
fn point(config: &MpLockingConfig, sets: &[TaskSet], model: SharingModel, x: u64) -> Point {
    let verdicts: Vec<SetVerdicts> = sets
        .par_iter()
        .enumerate()
        .map(|(k, base)| {
            let mut set = base.clone();
            model.apply(&mut set, config.seed, k as u64);
            let protocols = config
                .protocols
                .iter()
                .map(|&p| decide(config, &set, p))
                .collect();
            (protocols, ideal(config, &set))
        })
        .collect();
    let without_blocking = Baseline {
        partitioned: verdicts.iter().filter(|v| v.1 .0).count() as u64,
        global: verdicts.iter().filter(|v| v.1 .1).count() as u64,
    };
    let verdicts: Vec<Vec<(bool, bool)>> = verdicts.into_iter().map(|v| v.0).collect();
    let protocols = config
        .protocols
        .iter()
        .enumerate()
        .map(|(i, p)| ProtocolCount {
            protocol: p.name(),
            analysed: verdicts.iter().filter(|v| v[i].0).count() as u64,
            simulated: verdicts.iter().filter(|v| v[i].1).count() as u64,
        })
        .collect();
    Point::new(x, sets.len() as u64, protocols, without_blocking)
}

/// (partitioned RM RTA on the placement, global EDF's tests) proving `set`
/// with its sections blocking nobody.
fn ideal(config: &MpLockingConfig, set: &TaskSet) -> (bool, bool) {
    use rtlab_analysis::multiprocessor::{decide, GedfTest, MultiprocessorTest};
    let mut free = set.clone();
    for t in &mut free.tasks {
        t.critical_sections.clear();
    }
    let m = config.cpus;
    let partitioned =
        mp_locking::decide(&free, MpProtocol::Mpcp, m, config.heuristic) == Some(true);
    let global = [GedfTest::Gfb, GedfTest::Bak, GedfTest::Bcl, GedfTest::Rta]
        .into_iter()
        .any(|t| decide(&free, m, MultiprocessorTest::Gedf(t)) == Some(true));
    (partitioned, global)
}

/// (proven by the analysis, met in simulation) for one set.
fn decide(config: &MpLockingConfig, set: &TaskSet, protocol: MpProtocol) -> (bool, bool) {
    let rm = PriorityAssignment::RateMonotonic;
    let m = config.cpus;
    let (on, spec) = match protocol.scheduling() {
        MpScheduling::GlobalEdf => (set.clone(), "gedf"),
        MpScheduling::PartitionedFixedPriority => {
            match mp_locking::place(set, m, rm, config.heuristic)
                .ok()
                .and_then(|p| p.set().cloned())
            {
                Some(placed) => (placed, "pfp:rm"),
                None => return (false, false),
            }
        }
    };
    let analysed =
        mp_locking::analyse(&on, protocol, rm, m).is_ok_and(|o| o.schedulable == Some(true));
    let mut sim = SimConfig::new(config.duration);
    sim.protocol = LockingProtocol::Multiprocessor(protocol);
    let simulated = spec
        .parse()
        .ok()
        .and_then(|spec| rtlab_sim::run(&on, &spec, &sim, None).ok())
        .is_some_and(|run| run.report.deadline_misses == 0 && run.stopped.is_none());
    (analysed, simulated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> MpLockingConfig {
        MpLockingConfig {
            cpus: 2,
            tasks: 4,
            utilization: 1.0,
            sets: 6,
            lengths: vec![Nanos::from_us(10), Nanos::from_ms(2)],
            resources: vec![1, 4],
            fixed_length: Nanos::from_ms(1),
            duration: Nanos::from_ms(300),
            ..MpLockingConfig::default()
        }
    }

    /// Deterministic; what the analysis proves the simulation meets (a
    /// proof covers the simulated run); longer sections prove no more
    /// sets; the winners are the protocols with the most sets.
    #[test]
    fn proofs_are_met_longer_sections_cost_and_winners_lead() {
        let doc = run(&small()).unwrap();
        assert_eq!(doc, run(&small()).unwrap());
        for point in doc.by_length.iter().chain(&doc.by_resources) {
            for p in &point.protocols {
                assert!(p.analysed <= p.simulated, "{point:?}");
            }
            let best = point.protocols.iter().map(|p| p.analysed).max().unwrap();
            for w in &point.analysis_winners {
                let p = point.protocols.iter().find(|p| p.protocol == *w).unwrap();
                assert_eq!(p.analysed, best);
            }
        }
        let (short, long) = (&doc.by_length[0], &doc.by_length[1]);
        for (a, b) in short.protocols.iter().zip(&long.protocols) {
            assert!(b.analysed <= a.analysed, "{a:?} {b:?}");
        }
        assert!(
            short.protocols.iter().map(|p| p.analysed).sum::<u64>()
                > long.protocols.iter().map(|p| p.analysed).sum::<u64>(),
            "2 ms sections cost something: {doc:?}"
        );
    }

    #[test]
    fn settings_are_checked() {
        let refused = |c: MpLockingConfig| run(&c).unwrap_err().to_string();
        assert!(refused(MpLockingConfig { cpus: 1, ..small() }).starts_with("cpus 1"));
        assert!(refused(MpLockingConfig {
            utilization: 3.0,
            ..small()
        })
        .starts_with("utilization 3"));
        assert!(refused(MpLockingConfig {
            sharing: 2.0,
            ..small()
        })
        .starts_with("sharing"));
    }
}
