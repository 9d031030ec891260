//! What to simulate besides the task set and the scheduler: duration,
//! execution-time model, deadline-miss policy, timer, overheads, locking
//! protocol, overload phases and the trace window.

use std::fmt;
use std::str::FromStr;

use rtlab_model::overheads::{Overheads, Timing};
use rtlab_model::Nanos;

pub use rtlab_model::phase::{check_phases, Phase, Scale};
pub use rtlab_model::policy::{LockingProtocol, MissRule};

use crate::error::SimError;

/// How long each job executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExecModel {
    /// Every job takes its task's WCET.
    #[default]
    Wcet,
    /// Uniform in [BCET, WCET] (integer ns) from a ChaCha8 stream per task,
    /// keyed by the seed; tasks without a BCET take their WCET.
    Uniform,
}

impl FromStr for ExecModel {
    type Err = SimError;
    fn from_str(s: &str) -> Result<ExecModel, SimError> {
        match s {
            "wcet" => Ok(ExecModel::Wcet),
            "uniform" => Ok(ExecModel::Uniform),
            _ => Err(SimError::Choice {
                setting: "exec",
                value: s.to_string(),
                accepted: "wcet or uniform",
            }),
        }
    }
}

/// How long after its arrival a job is released (made ready), given the
/// task's release jitter J (`Task::jitter`; Tindell 1994). The job's
/// deadline and response time count from its *arrival* at offset + kT, as in
/// the analysis's R = w + J.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum JitterModel {
    /// Released at arrival: J is ignored.
    #[default]
    None,
    /// Every job is released J after its arrival.
    Max,
    /// Each job's delay is uniform in [0, J] (integer ns) from a ChaCha8
    /// stream per task, keyed by the seed (apart from the execution-time
    /// streams, so turning jitter on does not change execution times).
    Uniform,
}

impl fmt::Display for JitterModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JitterModel::None => "none",
            JitterModel::Max => "max",
            JitterModel::Uniform => "uniform",
        })
    }
}

impl FromStr for JitterModel {
    type Err = SimError;
    fn from_str(s: &str) -> Result<JitterModel, SimError> {
        match s {
            "none" => Ok(JitterModel::None),
            "max" => Ok(JitterModel::Max),
            "uniform" => Ok(JitterModel::Uniform),
            _ => Err(SimError::Choice {
                setting: "jitter",
                value: s.to_string(),
                accepted: "none, max or uniform",
            }),
        }
    }
}

/// A time window of the schedule to record for `--trace` / `--gantt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceWindow {
    /// First instant recorded.
    pub from: Nanos,
    /// First instant not recorded.
    pub to: Nanos,
}

/// Everything about a run except the task set and the scheduler.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Simulated time: releases happen in `[0, duration)`, events at
    /// `duration` are still processed.
    pub duration: Nanos,
    /// Deadline-miss policy.
    pub on_miss: MissRule,
    /// Execution-time model.
    pub exec: ExecModel,
    /// Seed of the execution-time and jitter streams.
    pub seed: u64,
    /// Release-jitter model.
    pub jitter: JitterModel,
    /// Periodic timer: releases and scheduler call-backs are noticed only at
    /// multiples of it (paper 004's timer-driven scheduler). `None`: the
    /// overheads' own timer model ([`SimConfig::timing`]), tickless when
    /// they state none.
    pub tick: Option<Nanos>,
    /// Kernel costs that occupy the processor; `None` for none. Their
    /// `timing` (the overheads file's `releases`/`tick`) is the timer model
    /// unless `tick` is set.
    pub overheads: Option<Overheads>,
    /// Resource-access protocol for critical sections.
    pub protocol: LockingProtocol,
    /// Extra processor time per lock or unlock operation (DFP reads the
    /// clock; ceilings touch a stack).
    pub lock_cost: Nanos,
    /// Overload phases.
    pub phases: Vec<Phase>,
    /// Window to record for traces, if any.
    pub trace: Option<TraceWindow>,
}

impl SimConfig {
    /// The timer model of the run: paper 004's timer-driven model at `tick`
    /// when it is set (the command line's `--tick` wins), else the one the
    /// overheads state ([`Overheads::timing`]; `Unstated`, the default, is
    /// tickless). Under [`Timing::Tick`] releases and call-backs wait for
    /// the next tick and every tick costs C_timer; under [`Timing::Hrtimer`]
    /// (Linux) releases and call-backs happen at their exact instants while
    /// the periodic tick, if any, still costs C_timer every period.
    pub fn timing(&self) -> Timing {
        match (self.tick, &self.overheads) {
            (Some(t), _) => Timing::Tick(t),
            (None, Some(o)) => o.timing,
            (None, None) => Timing::Unstated,
        }
    }

    /// Defaults: continue on miss, WCET execution, seed 0, no release jitter,
    /// tickless, no overheads, no protocol, no phases, no trace.
    pub fn new(duration: Nanos) -> SimConfig {
        SimConfig {
            duration,
            on_miss: MissRule::Continue,
            exec: ExecModel::Wcet,
            seed: 0,
            jitter: JitterModel::None,
            tick: None,
            overheads: None,
            protocol: LockingProtocol::None,
            lock_cost: Nanos::ZERO,
            phases: Vec::new(),
            trace: None,
        }
    }
}
