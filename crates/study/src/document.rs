//! The study's whole result as one serialisable document: what `rtlab
//! study edf-vs-fps` prints with `--json`, saves with `--save`, and what
//! the text tables, the CSV files and the report's figures are made from.
//!
//! `{"study": "edf-vs-fps", "utilization": null | {"simulated": SECTION,
//! "real": null | {"cpu", "rt_throttling", "no_rt_throttling",
//! "skipped_types", "interrupted", "simulated": SECTION, "measured":
//! SECTION}}, "overload": null | {"simulated": OVERLOAD, "real": null |
//! {"note", "simulated", "measured"}}, "locking": null | LOCKING}`; a
//! section that did not run is `null`.

use std::str::FromStr;

use serde::Serialize;

use crate::locking::LockingSection;
use crate::overload::OverloadSection;
use crate::utilization::UtilizationSection;

/// The whole document.
#[derive(Debug, Serialize)]
pub struct StudyDocument {
    /// Always `"edf-vs-fps"`.
    pub study: &'static str,
    /// Highest schedulable utilization per task-set type.
    pub utilization: Option<UtilizationPart>,
    /// Transient and permanent overload.
    pub overload: Option<OverloadPart>,
    /// IPCP under FPS against DFP under EDF (simulated only).
    pub locking: Option<LockingSection>,
    /// A stop signal cut the real runs short; absent when none did.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// The overload section in the simulator and, with `--real`, on real
/// threads.
#[derive(Debug, Serialize)]
pub struct OverloadPart {
    /// Every profile and level in the simulator.
    pub simulated: OverloadSection,
    /// With `--real`: the permanent overload on real threads.
    pub real: Option<RealOverload>,
}

/// The permanent-overload runs on real threads, beside the simulation of
/// the same runs (or why they were not made).
#[derive(Debug, Serialize)]
pub struct RealOverload {
    /// Why they were not made, or why they stopped.
    pub note: Option<String>,
    /// The simulation of exactly the real runs (permanent, EDF and FPS).
    pub simulated: Option<OverloadSection>,
    /// The real runs.
    pub measured: Option<OverloadSection>,
    /// The kernel's account of each real run, in run order
    /// (`--kernel-trace`; absent without it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_traces: Vec<crate::real::KernelTraceOfRun>,
}

/// The utilization section in the simulator and, with `--real`, on real
/// threads.
#[derive(Debug, Serialize)]
pub struct UtilizationPart {
    /// Every type in the simulator.
    pub simulated: UtilizationSection,
    /// With `--real`: the search on real threads.
    pub real: Option<RealPart>,
}

/// The real-thread search beside the simulation of the same sets.
#[derive(Debug, Serialize)]
pub struct RealPart {
    /// The CPU the threads were pinned to.
    pub cpu: usize,
    /// The RT throttling limit before the runs, in words.
    pub rt_throttling: String,
    /// Whether throttling and SCHED_DEADLINE admission were lifted per run.
    pub no_rt_throttling: bool,
    /// Types not run on real threads, with why.
    pub skipped_types: Vec<String>,
    /// A stop signal cut the searches short.
    pub interrupted: bool,
    /// The simulation of the same sets, loads and run length.
    pub simulated: UtilizationSection,
    /// The real runs.
    pub measured: UtilizationSection,
    /// The kernel's account of each real run, in run order
    /// (`--kernel-trace`; absent without it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_traces: Vec<crate::real::KernelTraceOfRun>,
}

/// A section of the study (Carletto & Vardanega 2017's questions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Highest schedulable utilization per task-set type.
    Utilization,
    /// Transient and permanent overload.
    Overload,
    /// IPCP against DFP.
    Locking,
}

impl FromStr for Section {
    type Err = String;

    /// `utilization`, `overload` or `locking`.
    fn from_str(text: &str) -> Result<Section, String> {
        match text.trim() {
            "utilization" => Ok(Section::Utilization),
            "overload" => Ok(Section::Overload),
            "locking" => Ok(Section::Locking),
            other => Err(format!(
                "`{}`: use utilization, overload or locking",
                rtlab_model::printable(other)
            )),
        }
    }
}
