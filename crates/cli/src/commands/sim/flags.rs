//! `rtlab sim`'s flags as the user wrote them: `--window`, and the
//! simulator's errors told in the words of the flags that caused them.

use rtlab_model::phase::PhaseError;
use rtlab_model::{printable, Nanos};
use rtlab_sim::{SimError, TraceWindow};

use crate::flags::{parse_nanos, phase_usage};
use crate::usage::usage;

/// `--window FROM..TO` within a run of `duration`: one that starts after
/// the run is refused (the chart would be empty), one that ends after it is
/// cut at its end, with a note.
pub(super) fn window(text: &str, duration: Nanos) -> anyhow::Result<TraceWindow> {
    let (from, to) = text.split_once("..").ok_or_else(|| {
        usage(format!(
            "--window `{text}`: write FROM..TO, e.g. 0ms..100ms"
        ))
    })?;
    let parse = |t: &str| parse_nanos(t).map_err(|e| usage(format!("--window `{text}`: {e}")));
    let (from, to) = (parse(from)?, parse(to)?);
    if from >= to {
        return Err(usage(format!("--window `{text}`: FROM must be before TO")));
    }
    if from >= duration {
        return Err(usage(format!(
            "--window {from}..{to} starts at or after the end of the run (--duration {duration}): the chart would be empty"
        )));
    }
    if to > duration {
        eprintln!("note: --window {from}..{to} ends after the run: the chart stops at {duration}");
    }
    Ok(TraceWindow {
        from,
        to: to.min(duration),
    })
}

/// A simulator error as the user sees it: one about `--scheduler` (a spec
/// that does not parse, or one that does not fit the set: fp:given without
/// priorities, ...) or another flag (a protocol the scheduler cannot run,
/// --tick 0) is a usage error naming the flag; the library's messages do
/// not know the flags.
pub(super) fn flag_error(e: SimError) -> anyhow::Error {
    match e {
        SimError::Spec { spec, why } => usage(format!(
            "--scheduler `{}`: {}",
            printable(&spec),
            printable(&why)
        )),
        SimError::Setup { scheduler, why } => usage(format!(
            "--scheduler {}: {}",
            printable(&scheduler),
            printable(&why)
        )),
        SimError::Choice {
            setting,
            value,
            accepted,
        } => usage(format!(
            "--{setting} `{}`: use {accepted}",
            printable(&value)
        )),
        SimError::Setting { setting, message } => {
            usage(format!("--{setting} {}", printable(&message)))
        }
        SimError::PhaseAfterEnd {
            phase,
            start,
            duration,
        } => phase_usage(PhaseError::AfterEnd {
            phase,
            start,
            duration,
        }),
        SimError::PhasesOverlap { phase, other } => {
            phase_usage(PhaseError::Overlap { phase, other })
        }
        SimError::Config(_) => usage(e),
        other => other.into(),
    }
}

/// [`flag_error`], blaming phases from the file's modes alone (`modes_of`) on the file.
pub(super) fn phases_error(e: SimError, modes_of: Option<&str>) -> anyhow::Error {
    match (e, modes_of) {
        (
            SimError::Setting {
                setting: "phase",
                message,
            },
            Some(file),
        ) => usage(format!(
            "{}: the file's modes run as phases, and {}",
            printable(file),
            printable(&message)
        )),
        (e, _) => flag_error(e),
    }
}
