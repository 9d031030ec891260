//! SimSo configurations (MaximeCheramy/simso, `simso/configuration/parser.py`
//! and `GenerateConfiguration.py`) in and out.
//!
//! What maps to what (a SimSo time is milliseconds in the file, cycles in the
//! simulation; see [`millis`] for the exact conversion):
//!
//! | SimSo | rtlab |
//! | --- | --- |
//! | `<task name period deadline WCET activationDate>` | `name`, T, D, C, offset |
//! | task data field `priority` (larger is more urgent, `FP`) | `priority` |
//! | `<simulation name>` (ignored by SimSo) | the set's name |
//! | `<sched class="simso.schedulers.EDF_mono">` | `edf` (see [`SimsoScheduler`]) |
//!
//! Refused before parsing, at its file:line:col: a document nested more
//! than [`MAX_DEPTH`] elements deep, an element with more than
//! [`MAX_ATTRIBUTES`] attributes, more than [`MAX_ELEMENTS`] elements (see
//! [`shape`]).
//!
//! Refused, each at its file:line:col: a second `<processor>` (rtlab simulates
//! one), `task_type` other than `Periodic` and `periodic="no"`, `followed_by`,
//! an execution-time model other than `wcet`, non-zero scheduler or
//! processor overheads, processor speed other than 1. Noted: SimSo's
//! `duration`, `cycles_per_ms` other than 10⁶, `abort_on_miss` (SimSo
//! aborts late jobs unless it is "no"), the scheduler class, scheduler data
//! fields rtlab does not use. Ignored as SimSo ignores them under the `wcet`
//! model: `ACET`, `et_stddev`, caches, `instructions`, `mix`, `base_cpi`,
//! `preemption_cost`, `stack`, `list_activation_dates` of a periodic task.

mod millis;
mod read;
mod shape;
mod write;

pub use millis::{format_ms, parse_ms, simso_cycles, MillisError, CYCLES_PER_MS};
pub use read::parse_str;
pub use shape::{MAX_ATTRIBUTES, MAX_DEPTH, MAX_ELEMENTS};
pub use write::{to_xml_string, ExportError, SimsoExport};

use crate::policy::PriorityAssignment;

/// The Python package prefix of SimSo's built-in schedulers.
pub const CLASS_PREFIX: &str = "simso.schedulers.";

/// True when `text` is XML (its first character after a byte-order mark
/// and blanks is `<`): no TOML or JSON task set starts so.
pub fn looks_like_xml(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('<')
}

/// A uniprocessor scheduler both tools have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimsoScheduler {
    /// Preemptive EDF: SimSo's `EDF_mono`, rtlab's `edf`.
    Edf,
    /// Preemptive fixed priority: `RM_mono` for rate monotonic (equal
    /// periods: SimSo takes the task listed first, rtlab the shorter
    /// deadline, then the one listed first), `FP` with the task data field
    /// `priority` set to rtlab's levels otherwise.
    FixedPriority(PriorityAssignment),
}

impl SimsoScheduler {
    /// rtlab's `--scheduler` text (`edf`, `fp:rm`, `fp:dm`, `fp:given`).
    pub fn rtlab_spec(self) -> String {
        match self {
            SimsoScheduler::Edf => "edf".to_string(),
            SimsoScheduler::FixedPriority(a) => format!("fp:{a}"),
        }
    }

    /// SimSo's scheduler class, without [`CLASS_PREFIX`].
    pub fn simso_class(self) -> &'static str {
        match self {
            SimsoScheduler::Edf => "EDF_mono",
            SimsoScheduler::FixedPriority(PriorityAssignment::RateMonotonic) => "RM_mono",
            SimsoScheduler::FixedPriority(_) => "FP",
        }
    }
}

impl std::str::FromStr for SimsoScheduler {
    type Err = String;

    /// `edf`, `fp:rm`, `fp:dm` or `fp:given`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "edf" => Ok(SimsoScheduler::Edf),
            "fp:rm" | "fp:dm" | "fp:given" => Ok(SimsoScheduler::FixedPriority(
                s[3..].parse().map_err(|e: String| e)?,
            )),
            _ => Err(format!(
                "no SimSo scheduler for `{s}`: a SimSo export takes edf, fp:rm, fp:dm or fp:given"
            )),
        }
    }
}

/// The rtlab `--scheduler` for a SimSo class name (without the prefix).
fn scheduler_for_class(class: &str) -> Option<&'static str> {
    match class {
        "EDF_mono" | "EDF" => Some("edf"),
        "RM_mono" | "RM" => Some("fp:rm"),
        "FP" => Some("fp:given"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
