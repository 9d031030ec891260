//! Flags and value parsers shared by several commands (durations, loads,
//! CPU lists, the measuring threads' policy), so no command imports
//! another's.

use clap::{Args, ValueEnum};
use rtlab_host::policy;
use rtlab_host::Policy;
use rtlab_model::phase::{check_phases, Mode, Phase, PhaseError};
use rtlab_model::{printable, Nanos};
use rtlab_rt::load::LoadSpec;
use rtlab_rt::rtapp::Calibration;

use crate::usage::usage;

/// Parses a human duration (`1ms`, `250us`) for clap.
pub fn parse_nanos(s: &str) -> Result<Nanos, String> {
    s.parse::<Nanos>().map_err(|e| e.to_string())
}

/// The simulated time: `--duration` when given, else one hyperperiod of
/// `set` when it is at most 100 s; a usage error otherwise.
pub fn duration_or_hyperperiod(
    duration: Option<Nanos>,
    set: &rtlab_model::TaskSet,
) -> anyhow::Result<Nanos> {
    match duration {
        Some(d) => Ok(d),
        None => match set.hyperperiod() {
            Ok(h) if h <= Nanos::from_secs(100) && !h.is_zero() => Ok(h),
            _ => Err(usage(format!(
                "--duration is needed: the hyperperiod of `{}` is over 100 s (write e.g. --duration 10s)",
                rtlab_model::printable(&set.name)
            ))),
        },
    }
}

/// Parses an interval as cyclictest does (`-i 1000`: a bare whole number is
/// microseconds) or as a duration with a unit (`1ms`, `250us`).
pub fn parse_us_or_duration(s: &str) -> Result<Nanos, String> {
    match s.trim().parse::<u64>() {
        Ok(us) => us
            .checked_mul(1_000)
            .map(Nanos::from_ns)
            .ok_or_else(|| format!("{s} microseconds is too long")),
        Err(_) => parse_nanos(s),
    }
}

/// Parses a run length as cyclictest's `-D` does (a bare whole number is
/// seconds; `m`, `h`, `d` after it are minutes, hours, days) or as a
/// duration with a unit (`10s`, `500ms`).
pub fn parse_run_length(s: &str) -> Result<Nanos, String> {
    let text = s.trim();
    let (number, unit_secs) = match text.char_indices().last() {
        Some((i, 'm')) => (&text[..i], 60),
        Some((i, 'h')) => (&text[..i], 3_600),
        Some((i, 'd')) => (&text[..i], 86_400),
        _ => (text, 1),
    };
    match number.parse::<u64>() {
        Ok(n) => n
            .checked_mul(unit_secs)
            .and_then(|secs| secs.checked_mul(1_000_000_000))
            .map(Nanos::from_ns)
            .ok_or_else(|| format!("`{s}` is too long")),
        Err(_) => parse_nanos(s).map_err(|e| {
            format!("{e}; a bare number is seconds, or minutes, hours, days with m, h, d")
        }),
    }
}

/// Parses a thread count, 1..=1024; `cpus` (what `-t` alone means, as in
/// cyclictest) is one thread per CPU this process may use.
pub fn parse_thread_count(s: &str) -> Result<u64, String> {
    let n = if s == "cpus" {
        std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
    } else {
        s.parse::<u64>()
            .map_err(|_| format!("`{s}` is not a whole number of threads"))?
    };
    if (1..=1024).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{n} is not in 1..=1024"))
    }
}

/// Parses a load description for clap.
pub fn parse_load(s: &str) -> Result<LoadSpec, String> {
    s.parse::<LoadSpec>().map_err(|e| e.to_string())
}

/// Parses `all`, `1`, `0,1`, `0-3` into CPUs, checked against the allowed
/// set (a usage error otherwise).
pub fn parse_cpus(text: &str) -> anyhow::Result<Vec<usize>> {
    let allowed = policy::allowed_cpus()?;
    if text == "all" {
        return Ok(allowed);
    }
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let bad = || {
            usage(format!(
                "invalid --affinity `{text}`: write CPU numbers like `1`, `0,1` or `0-3`"
            ))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            ),
            None => {
                let c: usize = part.trim().parse().map_err(|_| bad())?;
                (c, c)
            }
        };
        if lo > hi {
            return Err(bad());
        }
        // Checked before it is expanded: `0-18446744073709551615` is
        // refused at CPU 2, not allocated (issue 24).
        if let Some(c) = (lo..=hi).find(|c| !allowed.contains(c)) {
            return Err(usage(format!("invalid --affinity `{text}`: CPU {c} is not available (this process may use CPUs {allowed:?})")));
        }
        cpus.extend(lo..=hi);
    }
    Ok(cpus)
}

/// The scheduling policy of a measuring thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PolicyName {
    /// SCHED_OTHER (with --nice).
    Other,
    /// SCHED_FIFO (with --priority).
    Fifo,
    /// SCHED_RR (with --priority).
    Rr,
    /// SCHED_DEADLINE (with --runtime; deadline = period = interval).
    Deadline,
}

/// Policy flags shared by the measuring commands.
#[derive(Debug, Clone, Args)]
pub struct PolicyArgs {
    /// Scheduling policy of the measuring threads.
    #[arg(long, value_enum, default_value_t = PolicyName::Fifo)]
    pub policy: PolicyName,
    /// Real-time priority for fifo/rr, 1..=99 (99 is highest) [default: 99].
    #[arg(short = 'p', long, value_parser = clap::value_parser!(u8).range(1..=99))]
    pub priority: Option<u8>,
    /// Nice value for --policy other, -20..=19 [default: 0].
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
    pub nice: Option<i32>,
    /// Runtime per period for --policy deadline (default: a tenth of the interval).
    #[arg(long, value_parser = parse_nanos)]
    pub runtime: Option<Nanos>,
}

impl PolicyArgs {
    /// Refuses a flag that the chosen policy would ignore (`--policy other
    /// -p 50` measured SCHED_OTHER without a word): a usage error naming
    /// both flags.
    pub fn check(&self) -> anyhow::Result<()> {
        let policy = self
            .policy
            .to_possible_value()
            .map(|v| v.get_name().to_string());
        let policy = policy.unwrap_or_default();
        let ignored = match self.policy {
            PolicyName::Fifo | PolicyName::Rr => [
                self.nice.map(|n| format!("--nice {n}")),
                self.runtime.map(|r| format!("--runtime {r}")),
            ],
            PolicyName::Other => [
                self.priority.map(|p| format!("--priority {p}")),
                self.runtime.map(|r| format!("--runtime {r}")),
            ],
            PolicyName::Deadline => [
                self.priority.map(|p| format!("--priority {p}")),
                self.nice.map(|n| format!("--nice {n}")),
            ],
        };
        match ignored.into_iter().flatten().next() {
            Some(flag) => Err(usage(format!(
                "{flag} does not apply to --policy {policy} (--priority is for fifo and rr, \
                 --nice for other, --runtime for deadline)"
            ))),
            None => Ok(()),
        }
    }

    /// The policy for a loop of period `period`.
    pub fn policy(&self, period: Nanos) -> Policy {
        match self.policy {
            PolicyName::Other => Policy::Other {
                nice: self.nice.unwrap_or(0),
            },
            PolicyName::Fifo => Policy::Fifo {
                priority: self.priority.unwrap_or(99),
            },
            PolicyName::Rr => Policy::RoundRobin {
                priority: self.priority.unwrap_or(99),
            },
            PolicyName::Deadline => Policy::Deadline {
                runtime: self
                    .runtime
                    .unwrap_or(Nanos::from_ns((period.as_ns() / 10).max(1024))),
                deadline: period,
                period,
            },
        }
    }
}

/// `set` on the `--cpus M` processors the user asked for (unchanged
/// without the flag); a refused count is a usage error naming the flag.
pub fn on_cpus(
    set: rtlab_model::TaskSet,
    cpus: Option<u32>,
) -> anyhow::Result<rtlab_model::TaskSet> {
    match cpus {
        Some(m) => set.with_processors(m).map_err(|e| {
            usage(format!(
                "--cpus {m}: {}",
                rtlab_model::printable(&e.message)
            ))
        }),
        None => Ok(set),
    }
}

/// `CPUn` or a whole number of ns per loop (`flag` names it in the error).
pub fn parse_calibration(text: &str, flag: &str) -> anyhow::Result<Calibration> {
    if let Some(cpu) = text.strip_prefix("CPU").and_then(|n| n.parse().ok()) {
        return Ok(Calibration::Cpu(cpu));
    }
    match text.parse::<u64>() {
        Ok(ns) if ns > 0 => Ok(Calibration::NsPerLoop(ns)),
        _ => Err(usage(format!(
            "{flag} `{}`: use CPUn (e.g. CPU1) or a number of ns per loop (e.g. 20)",
            rtlab_model::printable(text)
        ))),
    }
}

/// How long the extended Hartstone profile (`--overload hartstone-extended`) lasts.
pub const HARTSTONE_EXTENDED_LENGTH: Nanos = Nanos::from_secs(120);

/// The phases `--phase` (repeatable) and `--overload` ask for in a run of
/// `duration`, as `rtlab sim`, `run` and `compare` read them: errors are
/// usage errors naming `--phase` or `--overload`; what is accepted but
/// changed (a profile or a phase cut at the end of the run) is said on
/// standard error.
pub fn phase_flags(
    texts: &[String],
    overload: Option<&str>,
    duration: Nanos,
) -> anyhow::Result<Vec<Phase>> {
    let mut phases = Vec::new();
    match overload {
        None => {}
        Some("hartstone-extended") => {
            if duration < HARTSTONE_EXTENDED_LENGTH {
                eprintln!(
                    "note: --overload hartstone-extended lasts {HARTSTONE_EXTENDED_LENGTH}; this run stops at {duration}"
                );
            }
            phases.extend(
                Phase::extended_hartstone()
                    .into_iter()
                    .filter(|p| p.start < duration),
            );
        }
        Some(other) => {
            return Err(usage(format!(
                "--overload `{}`: the known profile is hartstone-extended",
                printable(other)
            )))
        }
    }
    for text in texts {
        let phase = Phase::parse(text).map_err(phase_usage)?;
        if phase.end > duration && phase.start < duration {
            eprintln!("note: --phase {phase} ends after the run (--duration {duration}): it applies until then");
        }
        phases.push(phase);
    }
    check_phases(&phases, duration).map_err(phase_usage)?;
    Ok(phases)
}

/// Adds a task-set file's modes ([`Mode::phases`]) to the phases of a run
/// of `duration` over a set of `tasks` tasks; a mode that starts at or
/// after the end, or one that overlaps a `--phase`, is a usage error.
pub fn add_modes(
    phases: &mut Vec<Phase>,
    modes: &[Mode],
    tasks: usize,
    duration: Nanos,
) -> anyhow::Result<()> {
    if modes.is_empty() {
        return Ok(());
    }
    let of_modes = Mode::phases(modes, tasks, duration).map_err(|e| match e {
        PhaseError::ModeAfterEnd {
            mode,
            start,
            duration,
        } => usage(format!(
            "mode `{mode}` of the task-set file starts at {start}, at or after the end of the run (--duration {duration})"
        )),
        other => phase_usage(other),
    })?;
    for p in phases.iter() {
        if let Some(m) = of_modes
            .iter()
            .position(|q| q.start < p.end && p.start < q.end)
        {
            return Err(usage(format!(
                "--phase {p} overlaps mode `{}` of the task-set file ({}..{}): a phase and a mode must not overlap",
                printable(&modes[m].name),
                of_modes[m].start,
                of_modes[m].end
            )));
        }
    }
    phases.extend(of_modes);
    Ok(())
}

/// A phase error as a usage error naming `--phase` (and `--duration`).
pub fn phase_usage(e: PhaseError) -> anyhow::Error {
    match e {
        PhaseError::AfterEnd {
            phase,
            start,
            duration,
        } => usage(format!(
            "--phase {phase} starts at {start}, at or after the end of the run (--duration {duration})"
        )),
        PhaseError::Overlap { phase, other } => usage(format!(
            "--phase {phase} overlaps --phase {other}: phases must not overlap"
        )),
        other => usage(format!("--{}", printable(&other.to_string()))),
    }
}
