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
//! | `<processor id>` k-th in `<processors>` | processor k-1 (`processors` = their count) |
//! | `EDF`, `RM`, `FP`, `EDZL` on m > 1 | `gedf`, `gfp:rm`, `gfp:given`, `edzl` |
//! | `P_EDF`, `P_RM` on m > 1 | `pedf`, `pfp:rm`, each task's `cpu` where SimSo places it ([`packing`]) |
//! | `Fixed_PEDF` and task data field `cpu` (a processor's `id`) | `pedf`, the task's `cpu` |
//!
//! Refused before parsing, at its file:line:col: a document nested more
//! than [`MAX_DEPTH`] elements deep, an element with more than
//! [`MAX_ATTRIBUTES`] attributes, more than [`MAX_ELEMENTS`] elements (see
//! [`shape`]).
//!
//! Refused, each at its file:line:col: on more than one processor, a
//! scheduler class other than those above (by name), a scheduler file
//! (`className`), `P_EDF` when its packing fails, `Fixed_PEDF` without a
//! `cpu` naming a processor id for every task, non-zero
//! `migration_overhead`; `task_type` other than `Periodic` and `periodic="no"`, `followed_by`,
//! an execution-time model other than `wcet`, non-zero scheduler or
//! processor overheads, processor speed other than 1. Noted: SimSo's
//! `duration`, `cycles_per_ms` other than 10⁶, `abort_on_miss` (SimSo
//! aborts late jobs unless it is "no"), the scheduler class, scheduler data
//! fields rtlab does not use. Ignored as SimSo ignores them under the `wcet`
//! model: `ACET`, `et_stddev`, caches, `instructions`, `mix`, `base_cpi`,
//! `preemption_cost`, `stack`, `list_activation_dates` of a periodic task.

mod millis;
pub mod packing;
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

/// A scheduler both tools have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimsoScheduler {
    /// Preemptive EDF on one processor: SimSo's `EDF_mono`, rtlab's `edf`.
    Edf,
    /// Preemptive fixed priority on one processor: `RM_mono` for rate
    /// monotonic (equal periods: SimSo takes the task listed first, rtlab
    /// the shorter deadline, then the one listed first), `FP` with the task
    /// data field `priority` set to rtlab's levels otherwise.
    FixedPriority(PriorityAssignment),
    /// Global EDF: SimSo's `EDF`, rtlab's `gedf` (equal deadlines: SimSo
    /// keeps the running job, gedf runs the task declared first).
    GlobalEdf,
    /// Global fixed priority: `RM` for rate monotonic, `FP` with the
    /// `priority` field otherwise; rtlab's `gfp:rm|dm|given`.
    GlobalFixedPriority(PriorityAssignment),
    /// Global EDF until zero laxity: SimSo's `EDZL`, rtlab's `edzl`.
    Edzl,
    /// Partitioned EDF, rtlab's `pedf`: SimSo's `P_EDF` when the tasks sit
    /// where its packing puts them ([`packing::p_edf`]), else `Fixed_PEDF`
    /// with each task's processor in the task data field `cpu`.
    PartitionedEdf,
    /// Partitioned rate monotonic, rtlab's `pfp:rm`: SimSo's `P_RM`, which
    /// places the tasks itself ([`packing::p_rm`]).
    PartitionedRm,
}

impl SimsoScheduler {
    /// rtlab's `--scheduler` text (`edf`, `fp:rm`, `gedf`, `pedf`, ...).
    pub fn rtlab_spec(self) -> String {
        match self {
            SimsoScheduler::Edf => "edf".to_string(),
            SimsoScheduler::FixedPriority(a) => format!("fp:{a}"),
            SimsoScheduler::GlobalEdf => "gedf".to_string(),
            SimsoScheduler::GlobalFixedPriority(a) => format!("gfp:{a}"),
            SimsoScheduler::Edzl => "edzl".to_string(),
            SimsoScheduler::PartitionedEdf => "pedf".to_string(),
            SimsoScheduler::PartitionedRm => "pfp:rm".to_string(),
        }
    }

    /// True for the schedulers of one processor (`edf`, `fp:*`).
    pub fn is_uniprocessor(self) -> bool {
        matches!(self, SimsoScheduler::Edf | SimsoScheduler::FixedPriority(_))
    }

    /// True for `pedf` and `pfp:rm`.
    pub fn is_partitioned(self) -> bool {
        matches!(
            self,
            SimsoScheduler::PartitionedEdf | SimsoScheduler::PartitionedRm
        )
    }

    /// SimSo's scheduler class, without [`CLASS_PREFIX`] (`PartitionedEdf`:
    /// `P_EDF`; the writer picks `Fixed_PEDF` for other assignments).
    pub fn simso_class(self) -> &'static str {
        match self {
            SimsoScheduler::Edf => "EDF_mono",
            SimsoScheduler::FixedPriority(PriorityAssignment::RateMonotonic) => "RM_mono",
            SimsoScheduler::FixedPriority(_) => "FP",
            SimsoScheduler::GlobalEdf => "EDF",
            SimsoScheduler::GlobalFixedPriority(PriorityAssignment::RateMonotonic) => "RM",
            SimsoScheduler::GlobalFixedPriority(_) => "FP",
            SimsoScheduler::Edzl => "EDZL",
            SimsoScheduler::PartitionedEdf => "P_EDF",
            SimsoScheduler::PartitionedRm => "P_RM",
        }
    }
}

/// The `--scheduler` values a SimSo export takes, for messages.
pub const EXPORT_SCHEDULERS: &str =
    "edf, fp:rm, fp:dm, fp:given (one processor); gedf, gfp:rm, gfp:dm, gfp:given, edzl, pedf, pfp:rm";

impl std::str::FromStr for SimsoScheduler {
    type Err = String;

    /// One of [`EXPORT_SCHEDULERS`].
    fn from_str(s: &str) -> Result<Self, String> {
        let fp = |rest: &str| {
            rest.parse::<PriorityAssignment>()
                .ok()
                .filter(|a| *a != PriorityAssignment::Audsley)
        };
        let scheduler = match s.split_once(':') {
            None => match s {
                "edf" => Some(SimsoScheduler::Edf),
                "gedf" => Some(SimsoScheduler::GlobalEdf),
                "edzl" => Some(SimsoScheduler::Edzl),
                "pedf" => Some(SimsoScheduler::PartitionedEdf),
                _ => None,
            },
            Some(("fp", rest)) => fp(rest).map(SimsoScheduler::FixedPriority),
            Some(("gfp", rest)) => fp(rest).map(SimsoScheduler::GlobalFixedPriority),
            Some(("pfp", "rm")) => Some(SimsoScheduler::PartitionedRm),
            Some(("pfp", "dm" | "given")) => {
                return Err(format!(
                    "no SimSo scheduler for `{s}`: SimSo's one partitioned fixed-priority \
                     scheduler is P_RM (pfp:rm)"
                ))
            }
            Some(_) => None,
        };
        scheduler.ok_or_else(|| {
            format!("no SimSo scheduler for `{s}`: a SimSo export takes {EXPORT_SCHEDULERS}")
        })
    }
}

/// The rtlab `--scheduler` for a SimSo class name (without the prefix) on
/// one processor.
fn scheduler_for_class(class: &str) -> Option<&'static str> {
    match class {
        "EDF_mono" | "EDF" => Some("edf"),
        "RM_mono" | "RM" => Some("fp:rm"),
        "FP" => Some("fp:given"),
        _ => None,
    }
}

/// How SimSo's multiprocessor scheduler class (without the prefix) maps to
/// rtlab's, on more than one processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MultiClass {
    /// A global scheduler: rtlab's spec.
    Global(&'static str),
    /// `P_EDF`: SimSo places the tasks (first fit, decreasing utilization).
    PEdf,
    /// `P_RM`: SimSo places the tasks (least-loaded processor, file order).
    PRm,
    /// `Fixed_PEDF`: each task's processor in its data field `cpu`.
    FixedPedf,
}

/// The SimSo classes rtlab reads on several processors, for messages.
pub const MULTI_CLASSES: &str = "EDF, RM, FP, EDZL (global), P_EDF, P_RM, Fixed_PEDF (partitioned)";

pub(crate) fn multi_class(class: &str) -> Option<MultiClass> {
    match class {
        "EDF" => Some(MultiClass::Global("gedf")),
        "RM" => Some(MultiClass::Global("gfp:rm")),
        "FP" => Some(MultiClass::Global("gfp:given")),
        "EDZL" => Some(MultiClass::Global("edzl")),
        "P_EDF" => Some(MultiClass::PEdf),
        "P_RM" => Some(MultiClass::PRm),
        "Fixed_PEDF" => Some(MultiClass::FixedPedf),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
