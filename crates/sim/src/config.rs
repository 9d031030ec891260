//! What to simulate besides the task set and the scheduler: duration,
//! execution-time model, deadline-miss policy, timer, overheads, locking
//! protocol, overload phases and the trace window.

use std::fmt;
use std::str::FromStr;

use rtlab_model::overheads::{Overheads, Timing};
use rtlab_model::{Nanos, Task};

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
            _ => Err(SimError::Choice {
                setting: "protocol",
                value: s.to_string(),
                accepted: "none, npp, pip, ipcp (fixed priority), srp or dfp (EDF)",
            }),
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an overload phase changes execution times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Multiply every execution time by `num / den`.
    Factor {
        /// Numerator.
        num: u64,
        /// Denominator (> 0).
        den: u64,
    },
    /// Scale execution times so that the base set's utilization becomes this
    /// many parts per million (480000 for 48 %).
    UtilizationPpm(u64),
}

/// A window of simulated time `[start, end)` in which jobs released are
/// scaled, extra tasks are released and chosen tasks of the set are
/// suspended (overload phases, paper 001 and the extended Hartstone of
/// paper 002).
///
/// Replacing a task for the phase (another period or execution time) is
/// suspending it and adding its replacement as a phase task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// First instant of the phase.
    pub start: Nanos,
    /// First instant after it.
    pub end: Nanos,
    /// How execution times of jobs released in it change.
    pub scale: Scale,
    /// Tasks that exist only during the phase (first release at
    /// `start + offset`, none at or after `end`).
    pub tasks: Vec<Task>,
    /// Indices (declaration order) of the set's tasks that release no job
    /// in `[start, end)`: a release `r` of task `i` (period `T`) that falls
    /// in it moves to `r + ceil((end - r) / T) * T`, its first period
    /// boundary at or after `end`. A job released before `start` runs on.
    pub suspended: Vec<usize>,
}

impl Phase {
    /// Parses `START..END:xFACTOR` (`30s..45s:x2.5`) or `START..END:PCT%`
    /// (`30s..45s:120%`, a target utilization of the base set).
    pub fn parse(text: &str) -> Result<Phase, SimError> {
        let bad = |why: &str| {
            SimError::Setting {
                setting: "phase",
                message: format!(
                    "`{text}`: {why} (write START..END:xFACTOR or START..END:UTIL%, e.g. 30s..45s:120%)"
                ),
            }
        };
        let (range, scale) = text.split_once(':').ok_or_else(|| bad("missing `:`"))?;
        let (start, end) = range.split_once("..").ok_or_else(|| bad("missing `..`"))?;
        let start: Nanos = start.parse().map_err(|e| bad(&format!("{e}")))?;
        let end: Nanos = end.parse().map_err(|e| bad(&format!("{e}")))?;
        if end <= start {
            return Err(bad("the end must be after the start"));
        }
        let scale = scale.trim();
        let scale = if let Some(pct) = scale.strip_suffix('%') {
            Scale::UtilizationPpm(parse_fixed(pct, 4).ok_or_else(|| bad("bad percentage"))?)
        } else if let Some(factor) = scale.strip_prefix('x') {
            let num = parse_fixed(factor, 6).ok_or_else(|| bad("bad factor"))?;
            if num == 0 {
                return Err(bad("the factor must be greater than 0"));
            }
            Scale::Factor {
                num,
                den: 1_000_000,
            }
        } else {
            return Err(bad("the scale must be xFACTOR or UTIL%"));
        };
        Ok(Phase {
            start,
            end,
            scale,
            tasks: Vec::new(),
            suspended: Vec::new(),
        })
    }

    /// The extended Hartstone profile of paper 002 (§4.2): 48 % load for
    /// 30 s, 120 % for 15 s, back to 48 % until 120 s.
    pub fn extended_hartstone() -> Vec<Phase> {
        let s = Nanos::from_secs;
        let phase = |a, b, ppm| Phase {
            start: s(a),
            end: s(b),
            scale: Scale::UtilizationPpm(ppm),
            tasks: Vec::new(),
            suspended: Vec::new(),
        };
        vec![
            phase(0, 30, 480_000),
            phase(30, 45, 1_200_000),
            phase(45, 120, 480_000),
        ]
    }
}

impl Scale {
    /// Execution times unchanged (x1).
    pub const UNCHANGED: Scale = Scale::Factor { num: 1, den: 1 };
}

impl fmt::Display for Scale {
    /// As written on the command line: `x2.5` or `120%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scale::Factor { num, den } => {
                write!(f, "x{}", num / den.max(1))?;
                write_fraction(f, num % den.max(1), den.max(1))
            }
            Scale::UtilizationPpm(ppm) => {
                write!(f, "{}", ppm / 10_000)?;
                write_fraction(f, ppm % 10_000, 10_000)?;
                f.write_str("%")
            }
        }
    }
}

/// Writes `.DIGITS` of `rem / den` (nothing when it is 0), at most 9 digits.
fn write_fraction(f: &mut fmt::Formatter<'_>, mut rem: u64, den: u64) -> fmt::Result {
    if rem == 0 {
        return Ok(());
    }
    f.write_str(".")?;
    for _ in 0..9 {
        if rem == 0 {
            break;
        }
        let scaled = u128::from(rem) * 10;
        write!(f, "{}", scaled / u128::from(den))?;
        rem = (scaled % u128::from(den)) as u64;
    }
    Ok(())
}

impl fmt::Display for Phase {
    /// `START..END:SCALE`, as [`Phase::parse`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}:{}", self.start, self.end, self.scale)
    }
}

/// Refuses phases that could not mean what they say: two that overlap (which
/// scale applies?) and one that starts at or after the end of the run (it
/// would change nothing). A phase may end after the run; it applies until
/// the run stops.
pub fn check_phases(phases: &[Phase], duration: Nanos) -> Result<(), SimError> {
    if let Some(p) = phases.iter().find(|p| p.start >= duration) {
        return Err(SimError::PhaseAfterEnd {
            phase: p.to_string(),
            start: p.start,
            duration,
        });
    }
    let mut by_start: Vec<&Phase> = phases.iter().collect();
    by_start.sort_by_key(|p| (p.start, p.end));
    for pair in by_start.windows(2) {
        if pair[1].start < pair[0].end {
            return Err(SimError::PhasesOverlap {
                phase: pair[1].to_string(),
                other: pair[0].to_string(),
            });
        }
    }
    Ok(())
}

/// `"2.5"` with `digits` decimals -> 2.5 * 10^digits, exactly.
fn parse_fixed(text: &str, digits: u32) -> Option<u64> {
    let text = text.trim();
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && frac.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > digits as usize
    {
        return None;
    }
    let scale = 10u64.pow(digits);
    let whole = if whole.is_empty() {
        0
    } else {
        whole.parse::<u64>().ok()?
    };
    let frac = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<width$}", width = digits as usize)
            .parse::<u64>()
            .ok()?
    };
    whole.checked_mul(scale)?.checked_add(frac)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_parse() {
        let p = Phase::parse("30s..45s:120%").unwrap();
        assert_eq!(p.start, Nanos::from_secs(30));
        assert_eq!(p.scale, Scale::UtilizationPpm(1_200_000));
        let p = Phase::parse("1ms..2ms:x2.5").unwrap();
        assert_eq!(
            p.scale,
            Scale::Factor {
                num: 2_500_000,
                den: 1_000_000
            }
        );
        for bad in [
            "1ms..2ms",
            "2ms..1ms:x2",
            "1ms..2ms:x0",
            "1ms..2ms:y",
            "a..2ms:x1",
        ] {
            let e = Phase::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("phase `{bad}`: ")), "{e}");
        }
        assert_eq!(Phase::extended_hartstone().len(), 3);
    }

    #[test]
    fn phases_print_as_they_are_written() {
        for text in [
            "30s..45s:120%",
            "1ms..2ms:x2.5",
            "0ns..1ms:x0.000001",
            "1s..2s:48.25%",
        ] {
            assert_eq!(Phase::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn overlapping_phases_and_phases_after_the_run_are_refused() {
        let p = |t: &str| Phase::parse(t).unwrap();
        let ms = Nanos::from_ms;
        assert!(check_phases(&Phase::extended_hartstone(), Nanos::from_secs(60)).is_ok());
        assert!(check_phases(&[p("0ms..10ms:x2"), p("10ms..20ms:x3")], ms(15)).is_ok());
        assert_eq!(
            check_phases(&[p("20ms..40ms:x2"), p("10ms..21ms:x3")], ms(100))
                .unwrap_err()
                .to_string(),
            "phase 20ms..40ms:x2 overlaps phase 10ms..21ms:x3: phases must not overlap"
        );
        assert_eq!(
            check_phases(&[p("100ms..200ms:x2")], ms(100))
                .unwrap_err()
                .to_string(),
            "phase 100ms..200ms:x2 starts at 100ms, at or after the end of the run (100ms long)"
        );
    }
}
