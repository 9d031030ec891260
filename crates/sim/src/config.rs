//! What to simulate besides the task set and the scheduler: duration,
//! execution-time model, deadline-miss policy, timer, overheads, locking
//! protocol, overload phases and the trace window.

use std::fmt;
use std::str::FromStr;

use rtlab_model::overheads::{Overheads, Timing};
use rtlab_model::Nanos;

pub use rtlab_model::phase::{check_phases, Phase, Scale};

use crate::error::SimError;

/// What happens to a job that misses its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnMiss {
    /// It keeps running to completion; later jobs of its task queue behind it.
    #[default]
    Continue,
    /// It is removed at its deadline (counted as missed and aborted).
    Abort,
    /// It runs to completion, and releases of its task that fall while it is
    /// late are skipped: the next release is the first period boundary after
    /// its completion, as Hartstone counts (paper 002 §4.2).
    Skip,
}

impl OnMiss {
    /// `continue`, `abort` or `skip`.
    pub fn name(self) -> &'static str {
        match self {
            OnMiss::Continue => "continue",
            OnMiss::Abort => "abort",
            OnMiss::Skip => "skip",
        }
    }
}

impl FromStr for OnMiss {
    type Err = SimError;
    fn from_str(s: &str) -> Result<OnMiss, SimError> {
        match s {
            "continue" => Ok(OnMiss::Continue),
            "abort" => Ok(OnMiss::Abort),
            "skip" => Ok(OnMiss::Skip),
            _ => Err(SimError::Choice {
                setting: "on-miss",
                value: s.to_string(),
                accepted: "continue, abort or skip",
            }),
        }
    }
}

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

/// A resource-access protocol for the tasks' critical sections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Plain locks: a job that finds a lock taken waits; priority inversion
    /// is unbounded.
    #[default]
    None,
    /// Non-preemptive critical sections (Mok 1983): a job holding a lock is
    /// not preempted.
    Npp,
    /// Priority inheritance (Sha, Rajkumar & Lehoczky 1990): a holder runs at
    /// the highest priority of the jobs it blocks, transitively.
    Pip,
    /// Immediate priority ceiling (a.k.a. highest locker): a holder runs at
    /// the ceiling of its locks, the highest priority of their users.
    Ipcp,
    /// Stack resource policy (Baker 1991): a job may start only if its
    /// preemption level exceeds the ceiling of every lock held.
    Srp,
    /// Deadline floor (Burns, Gutierrez, Aldea & Gonzalez Harbour 2015;
    /// paper 001): a holder's absolute deadline drops to now plus the
    /// floor of the lock, the shortest relative deadline of its users.
    Dfp,
    /// A multiprocessor locking protocol (MPCP, DPCP, FMLP+, MrsP, MSRP
    /// under `pfp:*`; the OMLP under `gedf`, `cedf`): see
    /// [`crate::mp_locking`].
    Multiprocessor(rtlab_model::mp_locking::MpProtocol),
}

impl Protocol {
    /// The flag value.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::None => "none",
            Protocol::Npp => "npp",
            Protocol::Pip => "pip",
            Protocol::Ipcp => "ipcp",
            Protocol::Srp => "srp",
            Protocol::Dfp => "dfp",
            Protocol::Multiprocessor(p) => p.name(),
        }
    }
}

impl FromStr for Protocol {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Protocol, SimError> {
        match s {
            "none" => Ok(Protocol::None),
            "npp" => Ok(Protocol::Npp),
            "pip" => Ok(Protocol::Pip),
            "ipcp" => Ok(Protocol::Ipcp),
            "srp" => Ok(Protocol::Srp),
            "dfp" => Ok(Protocol::Dfp),
            _ => match rtlab_model::mp_locking::MpProtocol::from_name(s) {
                Some(p) => Ok(Protocol::Multiprocessor(p)),
                None => Err(SimError::Choice {
                    setting: "protocol",
                    value: s.to_string(),
                    accepted: "none, npp, pip, ipcp (fixed priority), srp or dfp (EDF); on m processors mpcp, dpcp, fmlp+, mrsp, msrp (pfp:*) or omlp (gedf, cedf)",
                }),
            },
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
    pub on_miss: OnMiss,
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
    pub protocol: Protocol,
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
            on_miss: OnMiss::Continue,
            exec: ExecModel::Wcet,
            seed: 0,
            jitter: JitterModel::None,
            tick: None,
            overheads: None,
            protocol: Protocol::None,
            lock_cost: Nanos::ZERO,
            phases: Vec::new(),
            trace: None,
        }
    }
}
