//! Operating-system overheads as linear functions of the number of threads.
//!
//! Arakawa, Katcher, Strosnider and Tokuda (*Modeling and Validation of the
//! Real-Time Mach Scheduler*, SIGMETRICS 1993, paper 004 in `shared/papers`)
//! characterise a scheduler by five costs, each measured in its worst case and
//! found to be linear in the number `n` of threads in the system, `a*n + b`:
//!
//! | field        | paper          | what it is                                                        |
//! | ------------ | -------------- | ----------------------------------------------------------------- |
//! | `timer`      | C_timer        | one timer interrupt (tick) with nothing to schedule               |
//! | `preempt`    | C_preempt      | releasing a higher-priority job and switching to it               |
//! | `exit`       | C_exit         | a job completing and the next one being dispatched                |
//! | `nonpreempt` | C_nonpreempt   | releasing a lower-priority job (no switch), blocking the running one |
//! | `system`     | C_system       | the longest non-preemptible kernel section (default: `exit`, as in §3) |
//! | `schedule`   | —              | one scheduler invocation (simulator; default 0)                   |
//! | `release`    | —              | one job release handled by the kernel (simulator; default 0)      |
//! | `wake`       | —              | a scheduler that sleeps on one timer waking for releases: once per instant with releases, however many (simulator; default 0) |
//! | `migration`  | —              | a job resuming on another CPU (multiprocessor simulator; default 0) |
//! | `[dispatcher]` | —            | rtlab's user-space dispatcher: `decision` (a wake-up that decides, with its priority changes), `latency` (a decision to the chosen thread running) and `wake` (how late its timer wakes it for releases; optional, default 0); optional, written by `rtlab characterize --dispatcher` |
//!
//! # Representation
//!
//! Each cost is a [`LinearCost`] held **exactly in integer picoseconds**, both
//! the slope (`per_thread`, picoseconds per thread) and the intercept
//! (`base`). Measured slopes are often fractions of a nanosecond per thread,
//! which whole nanoseconds could not hold. [`LinearCost::at`] evaluates the
//! cost for `n` threads and rounds *up* to whole nanoseconds, so the analysis
//! that uses it stays on the safe side.
//!
//! # File format (TOML)
//!
//! ```toml
//! name = "rtmach"                       # optional
//! source = "paper 004, section 4"       # optional, free text
//!
//! timer = "7.92us"                      # a constant cost: a duration string
//!
//! [preempt]                             # or a table: per_thread * n + base
//! per_thread = "0.79us"
//! base = "30.1us"
//!
//! [exit]
//! per_thread = "0.74us"
//! base = "28.8us"
//!
//! [nonpreempt]
//! per_thread = "0.39us"
//! base = "7.12us"
//!
//! # system, schedule, release, wake and migration are optional (see the table above)
//!
//! # optional: how the platform times releases (see "Timer model" below)
//! releases = "hrtimer"                  # or "tick"
//! tick = "4ms"                          # the periodic tick's period
//! ```
//!
//! # Timer model
//!
//! `releases` and `tick` say how the kernel notices job releases, so that a
//! file describes the platform whole ([`Timing`]):
//!
//! | `releases` | `tick`   | model                                                                 |
//! | ---------- | -------- | --------------------------------------------------------------------- |
//! | absent     | absent   | unstated: the command line decides (`--tick`; tickless without it)     |
//! | `"tick"`   | required | paper 004: a release is noticed only at the next tick; C_timer per tick |
//! | `"hrtimer"`| optional | Linux: every release fires its own high-resolution timer (no wait for a tick); with `tick`, the periodic tick still costs C_timer every `tick` |
//!
//! `tick` without `releases` is an error (which model is meant?), and so is
//! `releases = "tick"` without `tick`.
//!
//! # Throttling (Linux's bandwidth limits)
//!
//! An optional `[throttling]` table states the two servers with which Linux
//! takes the CPU from real-time threads ([`Throttling`]); absent, nothing
//! interferes (the model before these keys existed):
//!
//! ```toml
//! [throttling]
//! rt_runtime = "950ms"              # /proc/sys/kernel/sched_rt_runtime_us
//! rt_period = "1s"                  # /proc/sys/kernel/sched_rt_period_us
//! fair_server_runtime = "50ms"      # /sys/kernel/debug/sched/fair_server/cpuN/runtime
//! fair_server_period = "1s"         # /sys/kernel/debug/sched/fair_server/cpuN/period
//! ```
//!
//! - **RT throttling**: SCHED_FIFO/SCHED_RR threads may run at most
//!   `rt_runtime` in each `rt_period` of the kernel's period timer; past it
//!   they wait for the next period (the rest of that period is a blackout).
//! - **The fair server** (Linux 6.12+): a deferred SCHED_DEADLINE server of
//!   `fair_server_runtime` per `fair_server_period` that runs SCHED_OTHER
//!   work which real-time threads starve, preempting them.
//!
//! Each pair is given whole or not at all, with `0 < runtime <= period`.
//! How the analysis and the simulator use them is documented in
//! `rtlab_analysis::throttling` and `rtlab_sim::kernel_servers`.
//!
//! Durations are strings with a unit, `ps`, `ns`, `us` (or `µs`), `ms` or
//! `s`, down to one picosecond (`"0.79us"`, `"12.5ns"`). `timer`, `preempt`,
//! `exit` and `nonpreempt` are required; unknown keys are errors. Errors read
//! `file:line:col: what is wrong`, and nothing here panics on any input.
//!
//! `builtin:rtmach` is the profile of paper 004 (§4, measured on a
//! DECstation 5000/200): C_timer = 7.92 us, C_preempt = 0.79n + 30.1 us,
//! C_exit = 0.74n + 28.8 us, C_nonpreempt = 0.39n + 7.12 us, and
//! C_system = C_exit.

use crate::file::line_column;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::text::printable;
use crate::time::Nanos;

/// The prefix that names a built-in overheads profile instead of a file.
pub const BUILTIN_PREFIX: &str = "builtin:";

/// The names of the built-in profiles.
pub const BUILTIN_NAMES: [&str; 2] = ["rtmach", "zero"];

const PS_PER_NS: u64 = 1_000;

/// A cost `per_thread * n + base`, in integer picoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct LinearCost {
    /// Slope: picoseconds per thread in the system.
    pub per_thread_ps: u64,
    /// Intercept: picoseconds.
    pub base_ps: u64,
}

impl LinearCost {
    /// No cost.
    pub const ZERO: LinearCost = LinearCost {
        per_thread_ps: 0,
        base_ps: 0,
    };

    /// A cost `per_thread_ps * n + base_ps` picoseconds.
    pub const fn from_ps(per_thread_ps: u64, base_ps: u64) -> LinearCost {
        LinearCost {
            per_thread_ps,
            base_ps,
        }
    }

    /// A cost that does not depend on the number of threads.
    pub const fn constant(base: Nanos) -> LinearCost {
        LinearCost {
            per_thread_ps: 0,
            base_ps: base.as_ns().saturating_mul(PS_PER_NS),
        }
    }

    /// The cost with `threads` threads in the system, rounded up to whole
    /// nanoseconds (saturating at [`Nanos::MAX`]).
    pub fn at(&self, threads: usize) -> Nanos {
        let ps = (threads as u128) * u128::from(self.per_thread_ps) + u128::from(self.base_ps);
        let ns = ps.div_ceil(u128::from(PS_PER_NS));
        Nanos::from_ns(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// True when the cost is zero for any number of threads.
    pub const fn is_zero(&self) -> bool {
        self.per_thread_ps == 0 && self.base_ps == 0
    }
}

impl fmt::Display for LinearCost {
    /// `0.79us*n + 30.1us`, or just `7.92us` for a constant.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = if self.per_thread_ps == 0 {
            format_ps(self.base_ps)
        } else {
            format!(
                "{}*n + {}",
                format_ps(self.per_thread_ps),
                format_ps(self.base_ps)
            )
        };
        f.pad(&text)
    }
}

/// The scheduler and kernel costs that overhead-aware analysis and the
/// simulator charge (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overheads {
    /// A name for reports (`rtmach`, the file stem, ...).
    pub name: String,
    /// Where the figures come from (free text, may be empty).
    pub source: String,
    /// C_timer: one timer interrupt.
    pub timer: LinearCost,
    /// C_preempt: release of a higher-priority job and the context switch.
    pub preempt: LinearCost,
    /// C_exit: job completion and dispatch of the next job.
    pub exit: LinearCost,
    /// C_nonpreempt: release of a lower-priority job (blocking).
    pub nonpreempt: LinearCost,
    /// C_system: the longest non-preemptible kernel section (blocking).
    pub system: LinearCost,
    /// One scheduler invocation (used by the simulator).
    pub schedule: LinearCost,
    /// One job release handled by the kernel (used by the simulator),
    /// charged per release: Linux times each sleeping thread with its own
    /// high-resolution timer.
    pub release: LinearCost,
    /// A scheduler that sleeps on one timer waking for releases (rtlab's
    /// dispatcher): charged once at an instant with releases, however
    /// many coincide (used by the simulator; the analyses count it per
    /// release, a safe bound). Default 0.
    pub wake: LinearCost,
    /// A job resuming on another processor than the one it last ran on
    /// (cache refill, run-queue transfer): charged on the destination
    /// processor by the multiprocessor simulator. Default 0.
    pub migration: LinearCost,
    /// How the platform times releases (the file's `releases` and `tick`).
    pub timing: Timing,
    /// Linux's RT throttling and fair server (the file's `[throttling]`
    /// table); [`Throttling::NONE`] when absent.
    pub throttling: Throttling,
    /// What rtlab's user-space dispatcher costs (the file's `[dispatcher]`
    /// table); `None` when absent.
    pub dispatcher: Option<DispatcherModel>,
}

/// What rtlab's user-space dispatcher (`rtlab run --dispatcher`) costs on
/// this platform, each a function of the number of task threads: the
/// file's `[dispatcher]` table, learnt by `rtlab characterize
/// --dispatcher`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DispatcherModel {
    /// One turn that decides: the wake-up, the scheduler's hooks and
    /// `pick`, raising and lowering threads.
    pub decision: LinearCost,
    /// From a decision to the chosen thread running.
    pub latency: LinearCost,
    /// How late its timer wakes it for releases (0 in files written
    /// before it was learnt).
    pub wake: LinearCost,
}

impl Overheads {
    /// These costs with the dispatcher's added, as the simulator charges
    /// them (`rtlab sim --dispatcher`): every switch to another job, after
    /// a preemption (`preempt`) or a completion (`exit`), also costs a
    /// decision and the dispatch latency, and an instant with releases the
    /// dispatcher's wake-up for them (`wake`). A turn that keeps the running job
    /// is not charged (as the simulator's `schedule` it would come before
    /// the job's burst resumes, so a burst end sooner than it would never
    /// let the job run). Unchanged without a `[dispatcher]` table.
    pub fn with_dispatcher(&self) -> Overheads {
        let Some(d) = self.dispatcher else {
            return self.clone();
        };
        let add = |a: LinearCost, b: LinearCost| LinearCost {
            per_thread_ps: a.per_thread_ps.saturating_add(b.per_thread_ps),
            base_ps: a.base_ps.saturating_add(b.base_ps),
        };
        let switch = add(d.decision, d.latency);
        Overheads {
            preempt: add(self.preempt, switch),
            exit: add(self.exit, switch),
            wake: add(self.wake, d.wake),
            ..self.clone()
        }
    }
}

/// A budget of `runtime` in every `period` (`0 < runtime <= period`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reservation {
    /// The budget per period.
    pub runtime: Nanos,
    /// The period.
    pub period: Nanos,
}

impl Reservation {
    /// `runtime` per `period`, or why not (`0 < runtime <= period`).
    pub fn new(runtime: Nanos, period: Nanos) -> Result<Reservation, String> {
        if runtime.is_zero() || runtime > period {
            return Err(format!(
                "runtime {runtime} must be above 0 and at most the period {period}"
            ));
        }
        Ok(Reservation { runtime, period })
    }

    /// `period - runtime`: the time per period the budget leaves out.
    pub fn gap(self) -> Nanos {
        self.period - self.runtime
    }
}

impl fmt::Display for Reservation {
    /// `950ms per 1s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!("{} per {}", self.runtime, self.period))
    }
}

/// Linux's two bandwidth limits on real-time threads (module docs,
/// "Throttling"): `None` for a limit the file does not state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Throttling {
    /// RT throttling: SCHED_FIFO/RR may run `runtime` per `period`.
    pub rt: Option<Reservation>,
    /// The fair server: SCHED_OTHER work gets `runtime` per `period` from a
    /// deferred deadline server when real-time threads starve it.
    pub fair_server: Option<Reservation>,
}

impl Throttling {
    /// No limit stated: nothing interferes.
    pub const NONE: Throttling = Throttling {
        rt: None,
        fair_server: None,
    };

    /// True when neither limit is stated.
    pub fn is_none(&self) -> bool {
        self.rt.is_none() && self.fair_server.is_none()
    }
}

impl fmt::Display for Throttling {
    /// `rt 950ms per 1s, fair server 50ms per 1s` (`none` when empty).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = [("rt", self.rt), ("fair server", self.fair_server)]
            .into_iter()
            .filter_map(|(name, r)| r.map(|r| format!("{name} {r}")))
            .collect();
        let text = if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        };
        f.pad(&text)
    }
}

/// How the platform notices job releases and whether a periodic tick runs
/// (module documentation, "Timer model").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Timing {
    /// The file does not say; the command line decides.
    #[default]
    Unstated,
    /// Paper 004's timer-driven scheduler: releases are noticed at the next
    /// tick of this period, and every tick costs C_timer.
    Tick(Nanos),
    /// Linux: releases come from one-shot high-resolution timers at their
    /// exact instants; `tick`, when given, is the periodic tick that still
    /// interrupts every `tick` and costs C_timer.
    Hrtimer {
        /// The periodic tick (`None`: no periodic tick, fully tickless).
        tick: Option<Nanos>,
    },
}

impl Timing {
    /// The periodic tick's period, in either model.
    pub fn tick(self) -> Option<Nanos> {
        match self {
            Timing::Unstated => None,
            Timing::Tick(t) => Some(t),
            Timing::Hrtimer { tick } => tick,
        }
    }
}

impl Overheads {
    /// No overheads at all (`builtin:zero`): analysis with it equals the
    /// ideal analysis.
    pub fn zero() -> Overheads {
        Overheads {
            name: "zero".into(),
            source: "no overheads".into(),
            timer: LinearCost::ZERO,
            preempt: LinearCost::ZERO,
            exit: LinearCost::ZERO,
            nonpreempt: LinearCost::ZERO,
            system: LinearCost::ZERO,
            schedule: LinearCost::ZERO,
            release: LinearCost::ZERO,
            wake: LinearCost::ZERO,
            migration: LinearCost::ZERO,
            dispatcher: None,
            timing: Timing::Unstated,
            throttling: Throttling::NONE,
        }
    }

    /// Paper 004's RT Mach figures (MK75 on a DECstation 5000/200), §4.
    pub fn rtmach() -> Overheads {
        let exit = LinearCost::from_ps(740_000, 28_800_000);
        Overheads {
            name: "rtmach".into(),
            source: "Arakawa et al., SIGMETRICS 1993, section 4".into(),
            timer: LinearCost::from_ps(0, 7_920_000),
            preempt: LinearCost::from_ps(790_000, 30_100_000),
            exit,
            nonpreempt: LinearCost::from_ps(390_000, 7_120_000),
            system: exit,
            schedule: LinearCost::ZERO,
            release: LinearCost::ZERO,
            wake: LinearCost::ZERO,
            migration: LinearCost::ZERO,
            dispatcher: None,
            timing: Timing::Unstated,
            throttling: Throttling::NONE,
        }
    }

    /// A built-in profile by name (`rtmach`, `zero`).
    pub fn builtin(name: &str) -> Result<Overheads, OverheadsError> {
        match name {
            "rtmach" => Ok(Overheads::rtmach()),
            "zero" => Ok(Overheads::zero()),
            _ => Err(OverheadsError::UnknownBuiltin(name.to_string())),
        }
    }

    /// Loads `builtin:NAME` or an overheads file (TOML, module docs).
    pub fn load(spec: &str) -> Result<Overheads, OverheadsError> {
        if let Some(name) = spec.strip_prefix(BUILTIN_PREFIX) {
            return Overheads::builtin(name);
        }
        let text = crate::file::read_text(std::path::Path::new(spec)).map_err(|reason| {
            OverheadsError::Read {
                path: spec.to_string(),
                reason,
            }
        })?;
        let stem = std::path::Path::new(spec)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("overheads");
        Overheads::parse_toml(&text, spec, stem)
    }

    /// Parses the TOML format; `origin` names the text in error messages and
    /// `default_name` is used when the document has no `name`.
    pub fn parse_toml(
        text: &str,
        origin: &str,
        default_name: &str,
    ) -> Result<Overheads, OverheadsError> {
        let doc: OverheadsDocument = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let (line, column) = line_column(text, offset);
            OverheadsError::Syntax {
                origin: origin.to_string(),
                line,
                column,
                message: e.message().lines().collect::<Vec<_>>().join("; "),
            }
        })?;
        let timing = match (doc.releases.as_deref(), doc.tick) {
            (None, None) => Timing::Unstated,
            (None, Some(_)) => return Err(syntax_at(text, origin, "tick", "`tick` needs `releases = \"tick\"` (Arakawa et al. 1993's timer-driven model) or `releases = \"hrtimer\"` (Linux)")),
            (Some("tick"), Some(tick)) => Timing::Tick(tick.0),
            (Some("tick"), None) => return Err(syntax_at(text, origin, "releases", "`releases = \"tick\"` needs `tick`, the tick's period (e.g. tick = \"4ms\")")),
            (Some("hrtimer"), tick) => Timing::Hrtimer { tick: tick.map(|t| t.0) },
            (Some(other), _) => return Err(syntax_at(text, origin, "releases", &format!("unknown release timing `{}` (use \"tick\" or \"hrtimer\")", printable(other)))),
        };
        let throttling = match doc.throttling {
            None => Throttling::NONE,
            Some(t) => Throttling {
                rt: reservation(text, origin, "rt", t.rt_runtime, t.rt_period)?,
                fair_server: reservation(
                    text,
                    origin,
                    "fair_server",
                    t.fair_server_runtime,
                    t.fair_server_period,
                )?,
            },
        };
        Ok(Overheads {
            timing,
            throttling,
            name: doc.name.unwrap_or_else(|| default_name.to_string()),
            source: doc.source.unwrap_or_default(),
            timer: doc.timer.0,
            preempt: doc.preempt.0,
            exit: doc.exit.0,
            nonpreempt: doc.nonpreempt.0,
            system: doc.system.map_or(doc.exit.0, |c| c.0),
            schedule: doc.schedule.map_or(LinearCost::ZERO, |c| c.0),
            release: doc.release.map_or(LinearCost::ZERO, |c| c.0),
            wake: doc.wake.map_or(LinearCost::ZERO, |c| c.0),
            migration: doc.migration.map_or(LinearCost::ZERO, |c| c.0),
            dispatcher: doc.dispatcher.map(|d| DispatcherModel {
                decision: d.decision.0,
                latency: d.latency.0,
                wake: d.wake.map_or(LinearCost::ZERO, |c| c.0),
            }),
        })
    }

    /// The document in the file format (round-trips through
    /// [`Overheads::parse_toml`]).
    pub fn to_toml_string(&self) -> String {
        let mut out = String::new();
        let quote = |s: &str| toml_quote(s);
        out.push_str(&format!("name = {}\n", quote(&self.name)));
        if !self.source.is_empty() {
            out.push_str(&format!("source = {}\n", quote(&self.source)));
        }
        let costs = [
            ("timer", &self.timer),
            ("preempt", &self.preempt),
            ("exit", &self.exit),
            ("nonpreempt", &self.nonpreempt),
            ("system", &self.system),
            ("schedule", &self.schedule),
            ("release", &self.release),
            ("wake", &self.wake),
            ("migration", &self.migration),
        ];
        // `migration` and `wake` are optional, and absent from files
        // written before them: written only when set.
        let write_costs = |out: &mut String, costs: &[(&str, &LinearCost)]| {
            for &(key, cost) in costs {
                if matches!(key, "migration" | "wake") && cost.is_zero() {
                    continue;
                }
                out.push_str(&format!(
                    "{key} = {{ per_thread = \"{}\", base = \"{}\" }}\n",
                    format_ps(cost.per_thread_ps),
                    format_ps(cost.base_ps)
                ));
            }
        };
        write_costs(&mut out, &costs);
        match self.timing {
            Timing::Unstated => {}
            Timing::Tick(tick) => {
                out.push_str(&format!("releases = \"tick\"\ntick = \"{tick}\"\n"))
            }
            Timing::Hrtimer { tick } => {
                out.push_str("releases = \"hrtimer\"\n");
                if let Some(tick) = tick {
                    out.push_str(&format!("tick = \"{tick}\"\n"));
                }
            }
        }
        if let Some(d) = &self.dispatcher {
            out.push_str("\n[dispatcher]\n");
            write_costs(
                &mut out,
                &[
                    ("decision", &d.decision),
                    ("latency", &d.latency),
                    ("wake", &d.wake),
                ],
            );
        }
        if !self.throttling.is_none() {
            out.push_str("\n[throttling]\n");
            for (key, r) in [
                ("rt", self.throttling.rt),
                ("fair_server", self.throttling.fair_server),
            ] {
                if let Some(r) = r {
                    out.push_str(&format!(
                        "{key}_runtime = \"{}\"\n{key}_period = \"{}\"\n",
                        r.runtime, r.period
                    ));
                }
            }
        }
        out
    }
}

/// The `[throttling]` pair `{key}_runtime`, `{key}_period`: both or neither,
/// `0 < runtime <= period`; errors at the first line setting either key.
fn reservation(
    text: &str,
    origin: &str,
    key: &str,
    runtime: Option<PositiveDuration>,
    period: Option<PositiveDuration>,
) -> Result<Option<Reservation>, OverheadsError> {
    let runtime_key = format!("{key}_runtime");
    let period_key = format!("{key}_period");
    match (runtime, period) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(syntax_at(
            text,
            origin,
            &runtime_key,
            &format!("`{runtime_key}` needs `{period_key}`"),
        )),
        (None, Some(_)) => Err(syntax_at(
            text,
            origin,
            &period_key,
            &format!("`{period_key}` needs `{runtime_key}`"),
        )),
        (Some(runtime), Some(period)) => {
            Reservation::new(runtime.0, period.0)
                .map(Some)
                .map_err(|why| {
                    syntax_at(
                        text,
                        origin,
                        &runtime_key,
                        &format!("`{runtime_key}`: {why}"),
                    )
                })
        }
    }
}

/// A [`OverheadsError::Syntax`] at the first line that sets `key` (1:1 when
/// none does).
fn syntax_at(text: &str, origin: &str, key: &str, message: &str) -> OverheadsError {
    let line = text
        .lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |i| i + 1);
    let column = text
        .lines()
        .nth(line - 1)
        .map_or(1, |l| l.len() - l.trim_start().len() + 1);
    OverheadsError::Syntax {
        origin: origin.to_string(),
        line,
        column,
        message: message.to_string(),
    }
}

fn toml_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Why an overheads profile could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OverheadsError {
    /// The file could not be read.
    #[error("{}: cannot read: {reason}", printable(.path))]
    Read {
        /// The path as given.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The text is not a well-formed overheads document.
    #[error("{}:{line}:{column}: {}", printable(.origin), printable(.message))]
    Syntax {
        /// The file as named by the user.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column in characters.
        column: usize,
        /// What is wrong, in one line.
        message: String,
    },
    /// `builtin:NAME` with an unknown name.
    #[error(
        "unknown built-in overheads profile `{}` (known: builtin:rtmach, builtin:zero)",
        printable(.0)
    )]
    UnknownBuiltin(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverheadsDocument {
    name: Option<String>,
    source: Option<String>,
    timer: CostEntry,
    preempt: CostEntry,
    exit: CostEntry,
    nonpreempt: CostEntry,
    system: Option<CostEntry>,
    schedule: Option<CostEntry>,
    release: Option<CostEntry>,
    wake: Option<CostEntry>,
    migration: Option<CostEntry>,
    releases: Option<String>,
    tick: Option<TickEntry>,
    throttling: Option<ThrottlingDocument>,
    dispatcher: Option<DispatcherDocument>,
}

/// The `[dispatcher]` table (module docs).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DispatcherDocument {
    decision: CostEntry,
    latency: CostEntry,
    wake: Option<CostEntry>,
}

/// The `[throttling]` table (module docs, "Throttling").
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThrottlingDocument {
    rt_runtime: Option<PositiveDuration>,
    rt_period: Option<PositiveDuration>,
    fair_server_runtime: Option<PositiveDuration>,
    fair_server_period: Option<PositiveDuration>,
}

/// The `tick` key: a positive duration string.
struct TickEntry(Nanos);

/// A `[throttling]` duration: a positive whole number of nanoseconds.
struct PositiveDuration(Nanos);

impl<'de> Deserialize<'de> for PositiveDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PositiveDuration, D::Error> {
        let text = String::deserialize(deserializer)?;
        let ps = parse_picos(&text).map_err(de::Error::custom)?;
        if ps == 0 || ps % PS_PER_NS != 0 {
            return Err(de::Error::custom(format!(
                "`{}` must be a positive whole number of nanoseconds",
                printable(&text)
            )));
        }
        Ok(PositiveDuration(Nanos::from_ns(ps / PS_PER_NS)))
    }
}

impl<'de> Deserialize<'de> for TickEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TickEntry, D::Error> {
        let text = String::deserialize(deserializer)?;
        let ps = parse_picos(&text).map_err(de::Error::custom)?;
        if ps == 0 || ps % PS_PER_NS != 0 {
            return Err(de::Error::custom(format!(
                "tick `{}` must be a positive whole number of nanoseconds",
                printable(&text)
            )));
        }
        Ok(TickEntry(Nanos::from_ns(ps / PS_PER_NS)))
    }
}

/// A cost as written: a duration string (constant) or a table
/// `{ per_thread = "...", base = "..." }` (both optional, default 0).
struct CostEntry(LinearCost);

impl<'de> Deserialize<'de> for CostEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CostEntry, D::Error> {
        struct CostVisitor;

        impl<'de> Visitor<'de> for CostVisitor {
            type Value = CostEntry;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a duration string such as \"7.92us\" or a table { per_thread = \"0.79us\", base = \"30.1us\" }",
                )
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<CostEntry, E> {
                let base_ps = parse_picos(v).map_err(E::custom)?;
                Ok(CostEntry(LinearCost::from_ps(0, base_ps)))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CostEntry, A::Error> {
                let mut cost = LinearCost::ZERO;
                let mut seen = (false, false);
                while let Some(key) = map.next_key::<String>()? {
                    let value: String = map.next_value()?;
                    let ps = parse_picos(&value).map_err(de::Error::custom)?;
                    match key.as_str() {
                        "per_thread" if !seen.0 => {
                            seen.0 = true;
                            cost.per_thread_ps = ps;
                        }
                        "base" if !seen.1 => {
                            seen.1 = true;
                            cost.base_ps = ps;
                        }
                        "per_thread" | "base" => {
                            return Err(de::Error::custom(format!("duplicate key `{key}`")))
                        }
                        other => {
                            return Err(de::Error::unknown_field(other, &["per_thread", "base"]))
                        }
                    }
                }
                Ok(CostEntry(cost))
            }
        }

        deserializer.deserialize_any(CostVisitor)
    }
}

/// Picoseconds in each unit, largest first.
const PS_UNITS: [(&str, u64); 6] = [
    ("s", 1_000_000_000_000),
    ("ms", 1_000_000_000),
    ("us", 1_000_000),
    ("µs", 1_000_000),
    ("ns", 1_000),
    ("ps", 1),
];

/// Parses a duration string down to one picosecond: `"0.79us"` -> 790_000.
pub fn parse_picos(input: &str) -> Result<u64, String> {
    let text = input.trim();
    let bad = |why: &str| format!("invalid duration `{text}`: {why}");
    if text.is_empty() {
        return Err("empty duration (write e.g. \"30.1us\")".into());
    }
    if text.starts_with('-') {
        return Err(bad("durations cannot be negative"));
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = (text[..split].trim(), text[split..].trim());
    if unit.is_empty() {
        if !number.is_empty() && number.bytes().all(|b| b == b'0') {
            return Ok(0);
        }
        return Err(bad(
            "missing unit (use ps, ns, us, ms or s, e.g. \"30.1us\")",
        ));
    }
    let scale = PS_UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, s)| *s)
        .ok_or_else(|| bad(&format!("unknown unit `{unit}` (use ps, ns, us, ms or s)")))?;
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) {
        return Err(bad("expected a decimal number before the unit"));
    }
    let too_large = || bad("too large");
    let whole_ps = if whole.is_empty() {
        0
    } else {
        whole
            .parse::<u64>()
            .map_err(|_| too_large())?
            .checked_mul(scale)
            .ok_or_else(too_large)?
    };
    let frac = frac.trim_end_matches('0');
    let scale_digits = scale.ilog10() as usize;
    if frac.len() > scale_digits {
        return Err(bad("finer than 1 ps"));
    }
    let frac_ps = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<scale_digits$}")
            .parse::<u64>()
            .map_err(|_| too_large())?
    };
    whole_ps.checked_add(frac_ps).ok_or_else(too_large)
}

/// The shortest exact human form of a picosecond count (`790000` -> `0.79us`).
pub fn format_ps(ps: u64) -> String {
    let (unit, scale) = match ps {
        p if p >= 1_000_000_000_000 => ("s", 1_000_000_000_000u64),
        p if p >= 1_000_000_000 => ("ms", 1_000_000_000),
        p if p >= 1_000_000 => ("us", 1_000_000),
        p if p >= 1_000 => ("ns", 1_000),
        0 => return "0ns".into(),
        _ => ("ps", 1),
    };
    // Values under 1us print in us when they are a "nice" fraction of it,
    // as slopes usually are (0.79us rather than 790ns).
    let (unit, scale) = if ps < 1_000_000 && ps.is_multiple_of(10_000) {
        ("us", 1_000_000)
    } else {
        (unit, scale)
    };
    let whole = ps / scale;
    let frac = ps % scale;
    if frac == 0 {
        format!("{whole}{unit}")
    } else {
        let digits = scale.ilog10() as usize;
        let frac = format!("{frac:0digits$}");
        format!("{whole}.{}{unit}", frac.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTMACH_TOML: &str = r#"
name = "rtmach"
timer = "7.92us"

[preempt]
per_thread = "0.79us"
base = "30.1us"

[exit]
per_thread = "0.74us"
base = "28.8us"

[nonpreempt]
per_thread = "0.39us"
base = "7.12us"
"#;

    #[test]
    fn rtmach_matches_the_papers_ten_thread_figures() {
        // Paper 004, section 4: "for 10 threads, C_timer = 7.92, C_preempt = 38,
        // C_exit = 36.2 and C_nonpreempt = 11.02 microseconds".
        let o = Overheads::load("builtin:rtmach").unwrap();
        assert_eq!(o.timer.at(10), Nanos::from_ns(7_920));
        assert_eq!(o.preempt.at(10), Nanos::from_ns(38_000));
        assert_eq!(o.exit.at(10), Nanos::from_ns(36_200));
        assert_eq!(o.nonpreempt.at(10), Nanos::from_ns(11_020));
        assert_eq!(o.system, o.exit);
    }

    #[test]
    fn the_documented_file_parses_to_the_builtin() {
        let parsed = Overheads::parse_toml(RTMACH_TOML, "rtmach.toml", "x").unwrap();
        let builtin = Overheads::rtmach();
        assert_eq!(parsed.timer, builtin.timer);
        assert_eq!(parsed.preempt, builtin.preempt);
        assert_eq!(parsed.exit, builtin.exit);
        assert_eq!(parsed.nonpreempt, builtin.nonpreempt);
        assert_eq!(parsed.system, builtin.system);
    }

    #[test]
    fn round_trips_through_toml() {
        let mut o = Overheads::rtmach();
        o.schedule = LinearCost::from_ps(12_500, 1_000_001);
        o.wake = LinearCost::from_ps(0, 50_000_000);
        let back = Overheads::parse_toml(&o.to_toml_string(), "x", "x").unwrap();
        assert_eq!(back, o);
    }

    #[test]
    fn the_dispatcher_table_is_optional_round_trips_and_adds_to_every_switch() {
        let plain = Overheads::parse_toml(RTMACH_TOML, "rtmach.toml", "rtmach").unwrap();
        assert_eq!(plain.dispatcher, None);
        assert_eq!(plain.with_dispatcher(), plain);
        assert!(!plain.to_toml_string().contains("[dispatcher]"));
        assert!(!plain.to_toml_string().contains("wake"));
        let text = format!(
            "{RTMACH_TOML}\n[dispatcher]\ndecision = {{ per_thread = \"0.1us\", base = \"4us\" }}\nlatency = \"6us\"\nwake = \"50us\"\n"
        );
        let o = Overheads::parse_toml(&text, "d.toml", "d").unwrap();
        let d = o.dispatcher.unwrap();
        assert_eq!(d.decision.at(10), Nanos::from_us(5));
        assert_eq!(d.latency.at(10), Nanos::from_us(6));
        let again = Overheads::parse_toml(&o.to_toml_string(), "again.toml", "d").unwrap();
        assert_eq!(again, o);
        // preempt (0.79n + 30.1 us) and exit (0.74n + 28.8 us) gain 11 us at n = 10.
        let with = o.with_dispatcher();
        assert_eq!(with.preempt.at(10), o.preempt.at(10) + Nanos::from_us(11));
        assert_eq!(with.exit.at(10), o.exit.at(10) + Nanos::from_us(11));
        assert_eq!(with.schedule, o.schedule);
        // The wake-up is once per instant with releases; a table without
        // it (files written before it was learnt) adds none.
        assert_eq!(with.wake.at(10), Nanos::from_us(50));
        let old = format!("{RTMACH_TOML}\n[dispatcher]\ndecision = \"4us\"\nlatency = \"6us\"\n");
        let old = Overheads::parse_toml(&old, "old.toml", "o").unwrap();
        assert!(old.with_dispatcher().wake.is_zero());
        // A table missing a key names the line.
        let bad = format!("{RTMACH_TOML}\n[dispatcher]\ndecision = \"4us\"\n");
        let e = Overheads::parse_toml(&bad, "bad.toml", "b")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("bad.toml:"), "{e}");
    }

    #[test]
    fn migration_is_optional_and_written_only_when_set() {
        let plain = Overheads::parse_toml(RTMACH_TOML, "x", "x").unwrap();
        assert!(plain.migration.is_zero());
        assert!(!plain.to_toml_string().contains("migration"));
        let text = format!("{RTMACH_TOML}\n[migration]\nper_thread = \"0us\"\nbase = \"2us\"\n");
        let o = Overheads::parse_toml(&text, "x", "x").unwrap();
        assert_eq!(o.migration.at(4), Nanos::from_us(2));
        let back = Overheads::parse_toml(&o.to_toml_string(), "x", "x").unwrap();
        assert_eq!(back, o);
    }

    #[test]
    fn timing_keys_round_trip_and_are_checked() {
        const COSTS: &str =
            "timer = \"1us\"\npreempt = \"1us\"\nexit = \"1us\"\nnonpreempt = \"1us\"\n";
        let parse = |extra: &str| Overheads::parse_toml(&format!("{COSTS}{extra}"), "o.toml", "o");
        assert_eq!(parse("").unwrap().timing, Timing::Unstated);
        assert_eq!(
            parse("releases = \"tick\"\ntick = \"4ms\"\n")
                .unwrap()
                .timing,
            Timing::Tick(Nanos::from_ms(4))
        );
        assert_eq!(
            parse("releases = \"hrtimer\"\ntick = \"4ms\"\n")
                .unwrap()
                .timing,
            Timing::Hrtimer {
                tick: Some(Nanos::from_ms(4))
            }
        );
        assert_eq!(
            parse("releases = \"hrtimer\"\n").unwrap().timing,
            Timing::Hrtimer { tick: None }
        );
        for timing in [
            Timing::Tick(Nanos::from_us(3_333)),
            Timing::Hrtimer {
                tick: Some(Nanos::from_ns(4_000_001)),
            },
            Timing::Hrtimer { tick: None },
        ] {
            let mut o = Overheads::rtmach();
            o.timing = timing;
            assert_eq!(
                Overheads::parse_toml(&o.to_toml_string(), "x", "x").unwrap(),
                o
            );
        }
        let msg = parse("tick = \"4ms\"\n").unwrap_err().to_string();
        assert!(
            msg.starts_with("o.toml:5:1: `tick` needs `releases"),
            "{msg}"
        );
        let msg = parse("releases = \"tick\"\n").unwrap_err().to_string();
        assert!(
            msg.starts_with("o.toml:5:1: `releases = \"tick\"` needs `tick`"),
            "{msg}"
        );
        let msg = parse("releases = \"hz\"\n").unwrap_err().to_string();
        assert!(
            msg.starts_with("o.toml:5:1: unknown release timing `hz`"),
            "{msg}"
        );
        let msg = parse("releases = \"tick\"\ntick = \"0ms\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("o.toml:6:8: tick `0ms` must be a positive"),
            "{msg}"
        );
    }

    #[test]
    fn throttling_is_optional_round_trips_and_is_checked() {
        const COSTS: &str =
            "timer = \"1us\"\npreempt = \"1us\"\nexit = \"1us\"\nnonpreempt = \"1us\"\n";
        let parse = |extra: &str| Overheads::parse_toml(&format!("{COSTS}{extra}"), "o.toml", "o");
        let plain = parse("").unwrap();
        assert_eq!(plain.throttling, Throttling::NONE);
        assert!(!plain.to_toml_string().contains("throttling"));
        let linux = parse(
            "[throttling]\nrt_runtime = \"950ms\"\nrt_period = \"1s\"\n\
             fair_server_runtime = \"50ms\"\nfair_server_period = \"1s\"\n",
        )
        .unwrap();
        let ms = Nanos::from_ms;
        assert_eq!(
            linux.throttling,
            Throttling {
                rt: Some(Reservation::new(ms(950), ms(1000)).unwrap()),
                fair_server: Some(Reservation::new(ms(50), ms(1000)).unwrap()),
            }
        );
        assert_eq!(
            linux.throttling.to_string(),
            "rt 950ms per 1s, fair server 50ms per 1s"
        );
        assert_eq!(
            Overheads::parse_toml(&linux.to_toml_string(), "x", "x").unwrap(),
            linux
        );
        let only_rt = parse("[throttling]\nrt_runtime = \"950ms\"\nrt_period = \"1s\"\n").unwrap();
        assert_eq!(only_rt.throttling.fair_server, None);
        assert_eq!(
            Overheads::parse_toml(&only_rt.to_toml_string(), "x", "x").unwrap(),
            only_rt
        );
        let err = |extra: &str| parse(extra).unwrap_err().to_string();
        let msg = err("[throttling]\nrt_runtime = \"950ms\"\n");
        assert!(
            msg.starts_with("o.toml:6:1: `rt_runtime` needs `rt_period`"),
            "{msg}"
        );
        let msg = err("[throttling]\nfair_server_period = \"1s\"\n");
        assert!(
            msg.starts_with("o.toml:6:1: `fair_server_period` needs `fair_server_runtime`"),
            "{msg}"
        );
        let msg = err("[throttling]\nrt_runtime = \"2s\"\nrt_period = \"1s\"\n");
        assert!(
            msg.starts_with(
                "o.toml:6:1: `rt_runtime`: runtime 2s must be above 0 and at most the period 1s"
            ),
            "{msg}"
        );
        let msg = err("[throttling]\nrt_runtime = \"0ms\"\nrt_period = \"1s\"\n");
        assert!(
            msg.starts_with("o.toml:6:14: `0ms` must be a positive"),
            "{msg}"
        );
        let msg = err("[throttling]\nrt_budget = \"1ms\"\n");
        assert!(
            msg.starts_with("o.toml:6:1: unknown field `rt_budget`"),
            "{msg}"
        );
    }

    #[test]
    fn fractional_nanosecond_slopes_round_up() {
        let c = LinearCost::from_ps(parse_picos("12.5ns").unwrap(), 0);
        assert_eq!(c.at(1), Nanos::from_ns(13));
        assert_eq!(c.at(2), Nanos::from_ns(25));
        assert_eq!(
            LinearCost::constant(Nanos::from_us(3)).at(99),
            Nanos::from_us(3)
        );
    }

    /// Found by the `overheads` fuzz target: a unit holding a carriage
    /// return came back raw inside the message, which then spanned lines.
    #[test]
    fn overheads_errors_stay_one_line_whatever_the_input() {
        let text = "timer = \"7.92 \u{35e}\\r_th\"\n";
        let message = Overheads::parse_toml(text, "o\n.toml", "o")
            .unwrap_err()
            .to_string();
        assert!(!message.contains(['\n', '\r']), "{message:?}");
        assert!(
            message.starts_with("o\\n.toml:1:9: invalid duration"),
            "{message}"
        );
        let message = Overheads::load("builtin:a\u{7}").unwrap_err().to_string();
        assert!(!message.contains('\u{7}'), "{message:?}");
    }

    #[test]
    fn errors_name_line_and_column() {
        let text =
            "timer = \"7.92us\"\npreempt = \"30.1xs\"\nexit = \"1us\"\nnonpreempt = \"1us\"\n";
        let err = Overheads::parse_toml(text, "o.toml", "o").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("o.toml:2:11: invalid duration `30.1xs`: unknown unit `xs`"),
            "{msg}"
        );

        let text = "timer = \"7.92us\"\npreempt = \"1us\"\nexit = \"1us\"\nnonpreempt = \"1us\"\nbogus = 1\n";
        let msg = Overheads::parse_toml(text, "o.toml", "o")
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("o.toml:5:1: unknown field `bogus`"),
            "{msg}"
        );

        let text = "timer = \"7.92us\"\n";
        let msg = Overheads::parse_toml(text, "o.toml", "o")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("missing field `preempt`"), "{msg}");

        let text = "timer = 7\npreempt = \"1us\"\nexit = \"1us\"\nnonpreempt = \"1us\"\n";
        let msg = Overheads::parse_toml(text, "o.toml", "o")
            .unwrap_err()
            .to_string();
        assert!(msg.starts_with("o.toml:1:9: "), "{msg}");

        let text = "timer = \"1us\"\npreempt = { per_thread = \"1us\", slope = \"2us\" }\nexit = \"1us\"\nnonpreempt = \"1us\"\n";
        let msg = Overheads::parse_toml(text, "o.toml", "o")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("unknown field `slope`"), "{msg}");
    }

    #[test]
    fn unknown_builtin_and_missing_file() {
        assert_eq!(
            Overheads::load("builtin:nope").unwrap_err(),
            OverheadsError::UnknownBuiltin("nope".into())
        );
        assert!(matches!(
            Overheads::load("/nonexistent/overheads.toml").unwrap_err(),
            OverheadsError::Read { .. }
        ));
    }

    #[test]
    fn picosecond_parser() {
        assert_eq!(parse_picos("0.79us"), Ok(790_000));
        assert_eq!(parse_picos("30.1us"), Ok(30_100_000));
        assert_eq!(parse_picos("7ps"), Ok(7));
        assert_eq!(parse_picos("1s"), Ok(1_000_000_000_000));
        assert_eq!(parse_picos("0"), Ok(0));
        assert!(parse_picos("1.0001ns").is_err());
        assert!(parse_picos("-1us").is_err());
        assert!(parse_picos("1").is_err());
        assert!(parse_picos("99999999999s").is_err());
        assert_eq!(format_ps(790_000), "0.79us");
        assert_eq!(format_ps(30_100_000), "30.1us");
        assert_eq!(format_ps(12_500), "12.5ns");
        assert_eq!(format_ps(7), "7ps");
    }
}
