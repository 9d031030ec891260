//! Locking: IPCP under FPS against the Deadline Floor Protocol under EDF,
//! with a protected procedure of growing length (paper 001, Carletto &
//! Vardanega, Ada-Europe 2017, "Locking Policy"). Simulator only: Linux
//! has no DFP.
//!
//! Paper 001's claims: DFP "presents a logarithmic converging progression
//! as the computation time of the protected procedure increases", and "DFP
//! incurs more cumulative overhead than IPCP, due to the need to read the
//! clock in checking absolute deadlines".
//!
//! # The experiment
//!
//! Every task of a fixed set ([`default_tasks`]) calls one protected
//! procedure (resource `procedure`) once per job: a job executes `compute`
//! of its own work with the procedure's section of length `ℓ` starting
//! `section_at` into it, so `C = compute + ℓ`. For each `ℓ` (default 0.1 ms
//! doubling to 3.2 ms) the set runs in the simulator for `duration` twice:
//!
//! * **IPCP** under FPS (`fp:dm`, `Protocol::Ipcp`): locking raises the
//!   job to the ceiling priority, unlocking restores it; each operation
//!   costs `c` = `priority_change_cost`;
//! * **DFP** under EDF (`edf`, `Protocol::Dfp`): locking reads the clock to
//!   set the job's absolute deadline to `now + floor` (the floor is the
//!   shortest relative deadline of the procedure's users), unlocking
//!   restores it; each operation costs `c + r` (`r` = `clock_read_cost`).
//!
//! The simulator charges one cost per lock or unlock operation
//! (`SimConfig::lock_cost`), as processor time during which no job runs;
//! nothing else is charged. So DFP's clock read is charged on the unlock as
//! well as on the lock: an upper bound for a runtime that reads the clock
//! only to lock. Cumulative overhead is then `overhead = ops · cost` with
//! `ops` = lock and unlock operations performed (two per completed job).
//!
//! # What is reported
//!
//! Per `ℓ` and protocol ([`LockingRow`], per task [`LockingTaskRow`]):
//! misses, the blocking bound of the analysis (`rtlab_analysis::blocking`:
//! IPCP `B_i = max { ℓ_k : k lower priority, ceiling >= P_i }`, DFP
//! Baruah's `B(D_i)`), the worst observed inversion per task from the
//! simulator's trace ([`inversion`]), the cumulative overhead
//! (`SimReport::overhead_ns`), operations, overhead per second and as a
//! share of the busy processor time. Per `ℓ` ([`OverheadComparison`]):
//! DFP's overhead against IPCP's (difference and ratio; the model predicts
//! `(c + r) / c` while both run the same operations). Per protocol
//! ([`OverheadGrowth`]): the least-squares line of overhead against
//! `log2 ℓ` (the slope is the growth per doubling of `ℓ`; a logarithmic
//! progression is a straight line here) and the relative change over the
//! last doubling (convergence: it tends to 0).

pub mod inversion;

use rtlab_analysis::blocking::{fixed_priority, EdfBlocking, LockingProtocol};
use rtlab_analysis::priority::assign;
use rtlab_model::policy::PriorityAssignment;
use rtlab_model::{CriticalSection, Nanos, Task, TaskSet};
use rtlab_sim::{SchedulerSpec, SimConfig, SimError, Simulator, TraceWindow};
use serde::Serialize;

use crate::overload::fit::least_squares;
use inversion::{worst_inversion, Urgency};

/// The shared resource's name.
pub const RESOURCE: &str = "procedure";

/// One task of the locking set, without the procedure's length.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SharedTask {
    /// Name.
    pub name: String,
    /// Period.
    pub period_ns: u64,
    /// Relative deadline.
    pub deadline_ns: u64,
    /// First release.
    pub offset_ns: u64,
    /// Execution time outside the procedure.
    pub compute_ns: u64,
    /// Execution time before the procedure is called (at most `compute`).
    pub section_at_ns: u64,
}

impl SharedTask {
    /// The task with a procedure call of length `length` (`C = compute +
    /// length`; no section when `length` is 0).
    pub fn task(&self, length: Nanos) -> Task {
        let ns = Nanos::from_ns;
        let mut task = Task::new(
            self.name.clone(),
            ns(self.period_ns),
            ns(self.compute_ns).saturating_add(length),
        )
        .with_deadline(ns(self.deadline_ns))
        .with_offset(ns(self.offset_ns));
        if !length.is_zero() {
            task.critical_sections = vec![CriticalSection {
                resource: RESOURCE.into(),
                start: ns(self.section_at_ns),
                length,
            }];
        }
        task
    }
}

/// The default set: four tasks, periods 10, 15, 35 and 80 ms (not
/// harmonic, so over the run a lower-priority job is inside the procedure
/// at many different points when a more urgent one arrives; the
/// hyperperiod is 1.68 s), constrained deadlines 8, 13, 30 and 80 ms,
/// staggered first releases 0, 1, 2 and 3 ms, 8 % of the processor each
/// outside the procedure (compute 0.8, 1.2, 2.8 and 6.4 ms), each calling
/// the procedure halfway through its own work.
/// `U = 0.32 + ℓ · (1/10 + 1/15 + 1/35 + 1/80) ms⁻¹ ≈ 0.32 + 0.2077 ℓ/ms`:
/// 0.34 at ℓ = 0.1 ms, 0.985 at ℓ = 3.2 ms. Deadline-monotonic priorities
/// are a > b > c > d, and the procedure's ceiling (IPCP) is a's priority,
/// its floor (DFP) a's 8 ms.
pub fn default_tasks() -> Vec<SharedTask> {
    let us = |v: u64| v * 1_000;
    [
        ("a", 10_000, 8_000, 0, 800),
        ("b", 15_000, 13_000, 1_000, 1_200),
        ("c", 35_000, 30_000, 2_000, 2_800),
        ("d", 80_000, 80_000, 3_000, 6_400),
    ]
    .into_iter()
    .map(|(name, t, d, o, c)| SharedTask {
        name: name.into(),
        period_ns: us(t),
        deadline_ns: us(d),
        offset_ns: us(o),
        compute_ns: us(c),
        section_at_ns: us(c) / 2,
    })
    .collect()
}

/// What the locking section runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockingConfig {
    /// The tasks sharing the procedure.
    pub tasks: Vec<SharedTask>,
    /// Lengths `ℓ` of the procedure, each above 0.
    pub lengths: Vec<Nanos>,
    /// `c`: raising or restoring a priority (IPCP), or a deadline (DFP),
    /// per lock or unlock operation.
    pub priority_change_cost: Nanos,
    /// `r`: reading the clock, which DFP adds to each operation.
    pub clock_read_cost: Nanos,
    /// Length of each run.
    pub duration: Nanos,
}

impl Default for LockingConfig {
    /// [`default_tasks`]; ℓ = 0.1, 0.2, 0.4, 0.8, 1.6, 3.2 ms; c = 2 µs,
    /// r = 1 µs (model inputs, not measurements: set them from the target's
    /// costs); 2 s runs (more than the 1.68 s hyperperiod).
    fn default() -> Self {
        LockingConfig {
            tasks: default_tasks(),
            lengths: (0..6).map(|k| Nanos::from_us(100 << k)).collect(),
            priority_change_cost: Nanos::from_us(2),
            clock_read_cost: Nanos::from_us(1),
            duration: Nanos::from_secs(2),
        }
    }
}

/// The two arms of the study: a protocol with the scheduler it runs under
/// (the protocol itself is the model's [`LockingProtocol`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LockingArm {
    /// Immediate priority ceiling under FPS (`fp:dm`).
    Ipcp,
    /// Deadline floor under EDF (`edf`).
    Dfp,
}

impl LockingArm {
    /// `ipcp` or `dfp`.
    pub fn name(self) -> &'static str {
        match self {
            LockingArm::Ipcp => "ipcp",
            LockingArm::Dfp => "dfp",
        }
    }

    /// The simulator scheduler it runs under.
    pub fn scheduler(self) -> SchedulerSpec {
        match self {
            LockingArm::Ipcp => SchedulerSpec::Fp(PriorityAssignment::DeadlineMonotonic),
            LockingArm::Dfp => SchedulerSpec::Edf,
        }
    }

    fn sim_protocol(self) -> LockingProtocol {
        match self {
            LockingArm::Ipcp => LockingProtocol::Ipcp,
            LockingArm::Dfp => LockingProtocol::Dfp,
        }
    }

    /// Cost per lock or unlock operation: `c`, or `c + r` for DFP.
    pub fn operation_cost(self, config: &LockingConfig) -> Nanos {
        match self {
            LockingArm::Ipcp => config.priority_change_cost,
            LockingArm::Dfp => config
                .priority_change_cost
                .saturating_add(config.clock_read_cost),
        }
    }

    /// Both, IPCP first.
    pub const ALL: [LockingArm; 2] = [LockingArm::Ipcp, LockingArm::Dfp];
}

/// Why the section could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockingError {
    /// A setting that cannot mean anything.
    #[error("locking: {setting}: {message}")]
    Config {
        /// The setting.
        setting: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The simulator refused a run.
    #[error("locking: {protocol} with a {length} procedure: {source}")]
    Sim {
        /// The protocol.
        protocol: &'static str,
        /// The procedure's length.
        length: Nanos,
        /// Why.
        source: SimError,
    },
}

/// One run: one length, one protocol.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockingRow {
    /// The procedure's length `ℓ`.
    pub length_ns: u64,
    /// The protocol.
    pub protocol: LockingArm,
    /// The simulator scheduler (`fp:dm` or `edf`).
    pub scheduler: String,
    /// The set's utilization at this length (costs not included).
    pub utilization: f64,
    /// Cost charged per lock or unlock operation.
    pub operation_cost_ns: u64,
    /// Jobs released.
    pub released: u64,
    /// Deadline misses.
    pub misses: u64,
    /// Lock and unlock operations performed (`overhead / cost`; `None` when
    /// the cost is 0).
    pub operations: Option<u64>,
    /// Cumulative overhead: processor time of lock operations.
    pub overhead_ns: u64,
    /// `overhead_ns` per simulated second.
    pub overhead_ns_per_s: f64,
    /// `overhead / (overhead + execution)`: the share of the busy processor
    /// time spent in lock operations.
    pub overhead_share: f64,
    /// The largest blocking bound of the analysis over the tasks.
    pub max_blocking_bound_ns: u64,
    /// The largest observed inversion over the tasks.
    pub max_observed_inversion_ns: u64,
    /// False when the trace kept only part of the run (the observed
    /// inversion then covers that part).
    pub trace_complete: bool,
}

/// One task in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockingTaskRow {
    /// The procedure's length.
    pub length_ns: u64,
    /// The protocol.
    pub protocol: LockingArm,
    /// Task name.
    pub task: String,
    /// Jobs released.
    pub released: u64,
    /// Deadline misses.
    pub misses: u64,
    /// Longest response time of a completed job.
    pub max_response_ns: Option<u64>,
    /// The analysis's blocking bound `B_i` (lock costs not included).
    pub blocking_bound_ns: u64,
    /// The longest inversion one of its jobs suffered ([`inversion`]).
    pub observed_inversion_ns: u64,
}

/// DFP's cumulative overhead against IPCP's at one length.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverheadComparison {
    /// The procedure's length.
    pub length_ns: u64,
    /// IPCP's overhead.
    pub ipcp_overhead_ns: u64,
    /// DFP's overhead.
    pub dfp_overhead_ns: u64,
    /// DFP's minus IPCP's (negative when DFP cost less).
    pub dfp_minus_ipcp_ns: i64,
    /// DFP's over IPCP's; `None` when IPCP's is 0.
    pub dfp_over_ipcp: Option<f64>,
}

/// How one protocol's overhead grows with the procedure's length.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverheadGrowth {
    /// The protocol.
    pub protocol: LockingArm,
    /// Least-squares slope of overhead (ns) against `log2 ℓ`: the growth
    /// per doubling of `ℓ`; `None` with fewer than two lengths.
    pub slope_ns_per_doubling: Option<f64>,
    /// R² of that line (`None`: overhead the same at every length).
    pub r_squared: Option<f64>,
    /// `(overhead(last) - overhead(second last)) / overhead(second last)`,
    /// lengths in the configured order: near 0 when it has converged.
    pub last_step_change: Option<f64>,
}

/// The locking section's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockingSection {
    /// The resource the tasks share.
    pub resource: &'static str,
    /// The tasks.
    pub tasks: Vec<SharedTask>,
    /// Length of each run.
    pub duration_ns: u64,
    /// `c`.
    pub priority_change_cost_ns: u64,
    /// `r`.
    pub clock_read_cost_ns: u64,
    /// Per length and protocol, lengths in the configured order.
    pub rows: Vec<LockingRow>,
    /// The same per task.
    pub task_rows: Vec<LockingTaskRow>,
    /// Per length.
    pub comparisons: Vec<OverheadComparison>,
    /// Per protocol.
    pub growth: Vec<OverheadGrowth>,
}

/// Runs the locking section in the simulator.
pub fn run(config: &LockingConfig) -> Result<LockingSection, LockingError> {
    check(config)?;
    let mut section = LockingSection {
        resource: RESOURCE,
        tasks: config.tasks.clone(),
        duration_ns: config.duration.as_ns(),
        priority_change_cost_ns: config.priority_change_cost.as_ns(),
        clock_read_cost_ns: config.clock_read_cost.as_ns(),
        rows: Vec::new(),
        task_rows: Vec::new(),
        comparisons: Vec::new(),
        growth: Vec::new(),
    };
    for &length in &config.lengths {
        let set = TaskSet::new(
            format!("locking-{length}"),
            config.tasks.iter().map(|t| t.task(length)).collect(),
        );
        if let Some(e) = set.errors().first() {
            return Err(LockingError::Config {
                setting: "lengths",
                message: format!("with a {length} procedure: {}", e.message),
            });
        }
        for protocol in LockingArm::ALL {
            let (row, tasks) = run_protocol(&set, length, protocol, config)?;
            section.rows.push(row);
            section.task_rows.extend(tasks);
        }
        let overhead = |p| {
            section
                .rows
                .iter()
                .rev()
                .find(|r| r.protocol == p)
                .map_or(0, |r| r.overhead_ns)
        };
        let (ipcp, dfp) = (overhead(LockingArm::Ipcp), overhead(LockingArm::Dfp));
        section.comparisons.push(OverheadComparison {
            length_ns: length.as_ns(),
            ipcp_overhead_ns: ipcp,
            dfp_overhead_ns: dfp,
            dfp_minus_ipcp_ns: dfp as i64 - ipcp as i64,
            dfp_over_ipcp: (ipcp > 0).then(|| dfp as f64 / ipcp as f64),
        });
    }
    section.growth = LockingArm::ALL
        .iter()
        .map(|&p| growth(&section.rows, p))
        .collect();
    Ok(section)
}

/// Refuses settings that cannot mean anything.
fn check(config: &LockingConfig) -> Result<(), LockingError> {
    let bad = |setting, message: &str| {
        Err(LockingError::Config {
            setting,
            message: message.into(),
        })
    };
    if config.tasks.is_empty() {
        return bad("tasks", "give at least one task");
    }
    if let Some(t) = config.tasks.iter().find(|t| t.section_at_ns > t.compute_ns) {
        return Err(LockingError::Config {
            setting: "tasks",
            message: format!(
                "task `{}` calls the procedure after its own work ends (section_at {} > compute {})",
                t.name,
                Nanos::from_ns(t.section_at_ns),
                Nanos::from_ns(t.compute_ns)
            ),
        });
    }
    if config.lengths.is_empty() || config.lengths.iter().any(|l| l.is_zero()) {
        return bad(
            "lengths",
            "give at least one procedure length, each above 0 (e.g. 100us,200us,400us)",
        );
    }
    if config.duration.is_zero() {
        return bad("duration", "must be longer than 0");
    }
    Ok(())
}

/// One simulated run of `set` under `protocol`, with its trace read for
/// the observed inversion.
fn run_protocol(
    set: &TaskSet,
    length: Nanos,
    protocol: LockingArm,
    config: &LockingConfig,
) -> Result<(LockingRow, Vec<LockingTaskRow>), LockingError> {
    let sim_error = |source| LockingError::Sim {
        protocol: protocol.name(),
        length,
        source,
    };
    let cost = protocol.operation_cost(config);
    let mut sim_config = SimConfig::new(config.duration);
    sim_config.protocol = protocol.sim_protocol();
    sim_config.lock_cost = cost;
    sim_config.trace = Some(TraceWindow {
        from: Nanos::ZERO,
        to: config.duration,
    });
    let mut sim = Simulator::new(set, &protocol.scheduler(), sim_config).map_err(sim_error)?;
    sim.run();
    let report = sim.report();
    let priorities =
        assign(set, PriorityAssignment::DeadlineMonotonic).map_err(|e| LockingError::Config {
            setting: "tasks",
            message: e.to_string(),
        })?;
    let (bounds, urgency): (Vec<u64>, Urgency<'_>) = match protocol {
        LockingArm::Ipcp => (
            fixed_priority(set, &priorities, LockingProtocol::Ipcp)
                .into_iter()
                .map(Nanos::as_ns)
                .collect(),
            Urgency::Levels(&priorities.0),
        ),
        LockingArm::Dfp => {
            let b = EdfBlocking::of(set);
            (
                set.tasks.iter().map(|t| b.at(t.deadline.as_ns())).collect(),
                Urgency::Deadlines,
            )
        }
    };
    let (observed, trace_complete) = match sim.trace() {
        Some(trace) => (
            worst_inversion(&trace.records, &set.tasks, config.duration, urgency),
            trace.dropped == 0,
        ),
        None => (vec![Nanos::ZERO; set.tasks.len()], false),
    };
    let busy = report.duration_ns.saturating_sub(report.idle_ns);
    let row = LockingRow {
        length_ns: length.as_ns(),
        protocol,
        scheduler: report.scheduler.clone(),
        utilization: set.utilization(),
        operation_cost_ns: cost.as_ns(),
        released: report.released,
        misses: report.deadline_misses,
        operations: (!cost.is_zero()).then(|| report.overhead_ns / cost.as_ns()),
        overhead_ns: report.overhead_ns,
        overhead_ns_per_s: report.overhead_ns as f64 / config.duration.as_secs_f64(),
        overhead_share: if busy == 0 {
            0.0
        } else {
            report.overhead_ns as f64 / busy as f64
        },
        max_blocking_bound_ns: bounds.iter().copied().max().unwrap_or(0),
        max_observed_inversion_ns: observed.iter().map(|n| n.as_ns()).max().unwrap_or(0),
        trace_complete,
    };
    let tasks = report
        .tasks
        .iter()
        .zip(bounds.iter().zip(&observed))
        .map(|(t, (&bound, inversion))| LockingTaskRow {
            length_ns: length.as_ns(),
            protocol,
            task: t.name.clone(),
            released: t.released,
            misses: t.misses,
            max_response_ns: t.max_response_ns,
            blocking_bound_ns: bound,
            observed_inversion_ns: inversion.as_ns(),
        })
        .collect();
    Ok((row, tasks))
}

/// The growth of `protocol`'s overhead with `log2 ℓ`.
fn growth(rows: &[LockingRow], protocol: LockingArm) -> OverheadGrowth {
    let points: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.protocol == protocol)
        .map(|r| ((r.length_ns as f64).log2(), r.overhead_ns as f64))
        .collect();
    let line = least_squares(&points);
    let last_step_change = match points.as_slice() {
        [.., (_, before), (_, last)] if *before > 0.0 => Some((last - before) / before),
        _ => None,
    };
    OverheadGrowth {
        protocol,
        slope_ns_per_doubling: line.map(|l| l.slope),
        r_squared: line.and_then(|l| l.r_squared),
        last_step_change,
    }
}

#[cfg(test)]
mod tests;
