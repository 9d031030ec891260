//! Shared resources on m processors: the multiprocessor locking protocols
//! in the simulator, one module per protocol and paper.
//!
//! | module | protocol | scheduler | a waiting job | the holder |
//! | --- | --- | --- | --- | --- |
//! | [`mpcp`] | MPCP, Rajkumar 1990 | `pfp:*` | suspends, queue by priority | boosted above every task of its processor by the resource's remote ceiling |
//! | [`dpcp`] | DPCP, Rajkumar, Sha & Lehoczky 1988 | `pfp:*` | suspends while an agent runs the section on the synchronization processor | the agent, above every task there, at the resource's ceiling |
//! | [`fmlp_plus`] | partitioned FMLP+, Brandenburg 2014 | `pfp:*` | suspends, FIFO | boosted, boosted jobs in request order |
//! | [`mrsp`] | MrsP, Burns & Wellings 2013 | `pfp:*` | spins at the resource's local ceiling, FIFO | at the ceiling; preempted, it runs in a spinning waiter's place |
//! | [`msrp`] | MSRP, Gai, Lipari & Di Natale 2001 | `pfp:*` | spins non-preemptively, FIFO | non-preemptive |
//! | [`omlp`] | global OMLP, Brandenburg & Anderson 2010 | `gedf`, `cedf` | suspends: FIFO of m, then by priority | inherits the highest waiting priority |
//!
//! Locking couples the processors of a partitioned schedule (a job waits
//! for a job of another processor), so these runs cannot be independent
//! uniprocessor runs: one engine ([`engine::LockingSim`]) runs every
//! processor at once, each task pinned to its processor (its `cpu`), each
//! processor scheduling the jobs placed on it by an effective priority
//! that the protocol decides (an agent or a helping holder is placed on
//! another processor than its task's). Under the OMLP the processors of a
//! cluster share one ready set (global EDF inside the cluster).
//!
//! Local resources (used on one processor) follow the immediate priority
//! ceiling protocol of their processor under the partitioned protocols;
//! under the OMLP every resource is the protocol's. What a protocol cannot
//! do is refused before the run ([`check`]): nested sections on global
//! resources, a resource across clusters under the OMLP.
//!
//! Every job record carries the job's remote blocking (its waiting for
//! global resources: suspended, spinning, or its agent delayed beyond the
//! section's length) and local blocking (ready while its processor served
//! lower-priority work or an agent); under the OMLP both are the paper's
//! s-oblivious pi-blocking (pending, not scheduled, among the m
//! highest-priority pending jobs of its cluster), remote while it waits
//! for a resource. `rtlab_analysis::mp_locking` bounds the same
//! quantities, and `tests/mp_locking_soundness.rs` checks every job
//! against the bounds.
//!
//! Modelled: releases with offsets and jitter, execution-time draws, the
//! `--on-miss` rules. Not modelled (refused): overheads, ticks, lock
//! costs, overload phases.
//!
//! Events at one instant follow the uniprocessor engine's order
//! ([`crate::queue`]): completions and lock operations of running jobs,
//! deadlines, releases; then every processor picks. A lock operation at
//! the instant a job is dispatched is done before it runs; requests made
//! at one instant enter FIFO queues in processor order.

pub mod dpcp;
pub(crate) mod engine;
pub mod fmlp_plus;
pub mod mpcp;
pub mod mrsp;
pub mod msrp;
pub mod omlp;

use rtlab_model::mp_locking::{self, MpProtocol, MpScheduling, Places};
use rtlab_model::results::JobSink;
use rtlab_model::TaskSet;

use crate::config::SimConfig;
use crate::error::SimError;
use crate::multi::MultiRun;
use crate::registry::SchedulerSpec;

/// Refuses what `protocol` cannot run under `spec` for `set`, in words
/// (the CLI places findings about the file at file:line:col first).
pub fn check(
    set: &TaskSet,
    spec: &SchedulerSpec,
    config: &SimConfig,
    protocol: MpProtocol,
) -> Result<Vec<u32>, SimError> {
    let m = set.processors();
    if m == 0 || m > rtlab_model::MAX_PROCESSORS {
        return Err(SimError::Setting {
            setting: "cpus",
            message: format!(
                "{m}: the number of processors must be 1 to {}",
                rtlab_model::MAX_PROCESSORS
            ),
        });
    }
    let setting = |message: String| SimError::Setting {
        setting: "locking",
        message,
    };
    let wrong_scheduler = || {
        setting(format!(
            "{protocol} ({}) runs under {}; {spec} is not one",
            protocol.paper(),
            protocol.schedulers()
        ))
    };
    let groups: Vec<u32> = match (protocol.scheduling(), spec) {
        (MpScheduling::PartitionedFixedPriority, SchedulerSpec::Pfp(_)) => {
            set.assignment().ok_or_else(|| {
                SimError::Setup {
            scheduler: spec.to_string(),
            why:
                "needs every task's processor: give `cpu` in the task file or --partition HEURISTIC"
                    .into(),
        }
            })?
        }
        (MpScheduling::GlobalEdf, SchedulerSpec::Gedf) => {
            if let Some(t) = set.tasks.iter().find(|t| t.cpu.is_some()) {
                return Err(SimError::Setup {
                    scheduler: spec.to_string(),
                    why: format!(
                        "is global, but task `{}` is fixed to a processor (`cpu`): drop the `cpu` fields or use cedf",
                        t.name
                    ),
                });
            }
            vec![0; set.tasks.len()]
        }
        (MpScheduling::GlobalEdf, SchedulerSpec::Cedf) => {
            let groups = crate::multi::clusters(set).map_err(|why| SimError::Setup {
                scheduler: spec.to_string(),
                why,
            })?;
            let mut of = vec![0u32; set.tasks.len()];
            for (k, (_, tasks)) in groups.iter().enumerate() {
                for &i in tasks {
                    of[i] = k as u32;
                }
            }
            of
        }
        _ => return Err(wrong_scheduler()),
    };
    let places = match protocol {
        MpProtocol::Omlp => Places::Clusters,
        _ => Places::Processors,
    };
    if let Some(d) = mp_locking::check(set, &groups, protocol, places).first() {
        return Err(setting(d.message.clone()));
    }
    let o = config.overheads.as_ref();
    let costs = o.is_some_and(|o| {
        [
            o.timer,
            o.preempt,
            o.exit,
            o.nonpreempt,
            o.schedule,
            o.release,
            o.migration,
        ]
        .iter()
        .any(|c| !c.is_zero())
    });
    if costs || config.timing().tick().is_some() {
        return Err(SimError::Setting {
            setting: "overheads",
            message: format!(
                "{protocol} runs model no overheads and no tick: leave out --overheads and --tick"
            ),
        });
    }
    if !config.lock_cost.is_zero() {
        return Err(SimError::Setting {
            setting: "lock-cost",
            message: format!("{protocol} runs model no lock cost: leave it 0"),
        });
    }
    if !config.phases.is_empty() {
        return Err(SimError::Setting {
            setting: "phase",
            message: format!("overload phases are not modelled under {protocol}"),
        });
    }
    Ok(groups)
}

/// Runs `set` under `spec` with `protocol` managing its resources (see the
/// module docs), sending every job record to `sink`; [`crate::multi::run`]
/// calls it for a [`LockingProtocol::Multiprocessor`](crate::LockingProtocol)
/// once the set and the duration passed its checks.
pub(crate) fn run(
    set: &TaskSet,
    spec: &SchedulerSpec,
    config: &SimConfig,
    protocol: MpProtocol,
    sink: Option<Box<dyn JobSink>>,
) -> Result<MultiRun, SimError> {
    let groups = check(set, spec, config, protocol)?;
    let mut sim = engine::LockingSim::new(set, spec, config.clone(), protocol, &groups)?;
    if let Some(sink) = sink {
        sim.on_job(sink);
    }
    sim.run();
    let report = sim.report();
    Ok(MultiRun {
        report,
        stopped: sim.stopped(),
        trace: sim.take_trace(),
        jobs_written: sim.finish_jobs(),
    })
}
