//! The locking section on real threads through rtlab's dispatcher: Linux
//! has no Deadline Floor Protocol, but the dispatcher applies the
//! simulator's: every lock and unlock of the protected procedure is a
//! step the task thread posts and waits at, and the dispatcher takes or
//! releases the resource (IPCP: the holder at the resource's ceiling
//! priority; DFP: the holder's deadline at now + the floor), then decides
//! again. So the real runs pay what the model charges as `c` and `c + r`
//! for real: one wake-up and one decision of the dispatcher per operation.
//!
//! Each (length, protocol) of the simulated section runs once on real
//! threads for the section's duration; the rows hold the real misses and
//! responses beside the simulated ones, the operations the dispatcher
//! handled and what its decisions cost.

use std::sync::atomic::AtomicBool;

use rtlab_model::TaskSet;
use rtlab_rt::dispatcher::{run_dispatched, DispatchConfig};
use rtlab_rt::executor::RunConfig;
use rtlab_rt::RtError;
use serde::Serialize;

use super::{LockingArm, LockingConfig, LockingSection};

/// One real run: one length, one protocol.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DispatchedLockingRow {
    /// The procedure's length.
    pub length_ns: u64,
    /// The protocol (the dispatcher applies it).
    pub protocol: LockingArm,
    /// The scheduler the dispatcher ran (`fp:dm` or `edf`).
    pub scheduler: String,
    /// Jobs released on real threads.
    pub released: u64,
    /// Deadline misses on real threads.
    pub misses: u64,
    /// Deadline misses in the simulated section's run.
    pub sim_misses: u64,
    /// Per task: longest response on real threads and in the simulator.
    pub max_response_ns: Vec<(String, Option<u64>, Option<u64>)>,
    /// Lock and unlock operations the dispatcher handled.
    pub operations: u64,
    /// The dispatcher's decision cost (median, ns): what one operation
    /// costs the processor, against the model's `c` or `c + r`.
    pub decision_p50_ns: u64,
    /// Its dispatch latency (median and p99.9, ns).
    pub dispatch_latency_p50_ns: u64,
    /// See `dispatch_latency_p50_ns`.
    pub dispatch_latency_p999_ns: u64,
    /// The dispatcher's share of the CPU over the run.
    pub dispatcher_cpu_share: f64,
}

/// The real part of the locking section.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DispatchedLocking {
    /// The CPU the runs were pinned to.
    pub cpu: usize,
    /// Per length and protocol, in the simulated section's order.
    pub rows: Vec<DispatchedLockingRow>,
    /// A stop signal cut the runs short.
    pub interrupted: bool,
}

/// Runs every (length, protocol) of `section` (made from `config`) on real
/// threads through the dispatcher with the executor settings of `base`
/// (its CPU, duration per run taken from `config`), stopping at
/// `interrupt`.
pub fn run(
    config: &LockingConfig,
    section: &LockingSection,
    base: &RunConfig,
    interrupt: &AtomicBool,
) -> Result<DispatchedLocking, RtError> {
    let mut out = DispatchedLocking {
        cpu: base.cpu.unwrap_or_else(rtlab_rt::executor::default_cpu),
        rows: Vec::new(),
        interrupted: false,
    };
    for &length in &config.lengths {
        let set = TaskSet::new(
            format!("locking-{length}"),
            config.tasks.iter().map(|t| t.task(length)).collect(),
        );
        for protocol in LockingArm::ALL {
            if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
                out.interrupted = true;
                return Ok(out);
            }
            let mut d = DispatchConfig::new(protocol.scheduler());
            d.protocol = protocol.sim_protocol();
            let mut cfg = base.clone();
            cfg.duration = config.duration;
            let (report, _, _) = run_dispatched(&set, &cfg, &d, interrupt, Vec::new())?;
            let sim = section
                .rows
                .iter()
                .find(|r| r.length_ns == length.as_ns() && r.protocol == protocol);
            let costs = report.dispatcher.clone().unwrap_or_default();
            out.rows.push(DispatchedLockingRow {
                length_ns: length.as_ns(),
                protocol,
                scheduler: protocol.scheduler().to_string(),
                released: report.released,
                misses: report.deadline_misses,
                sim_misses: sim.map_or(0, |r| r.misses),
                max_response_ns: report
                    .tasks
                    .iter()
                    .map(|t| {
                        let simulated = section
                            .task_rows
                            .iter()
                            .find(|r| {
                                r.length_ns == length.as_ns()
                                    && r.protocol == protocol
                                    && r.task == t.name
                            })
                            .and_then(|r| r.max_response_ns);
                        (t.name.clone(), t.max_response_ns, simulated)
                    })
                    .collect(),
                operations: costs.lock_operations,
                decision_p50_ns: costs.decision_cost.p50_ns,
                dispatch_latency_p50_ns: costs.dispatch_latency.p50_ns,
                dispatch_latency_p999_ns: costs.dispatch_latency.p999_ns,
                dispatcher_cpu_share: costs.cpu_share,
            });
            if report.interrupted {
                out.interrupted = true;
                return Ok(out);
            }
        }
    }
    Ok(out)
}
