//! A drawn schedule: what held each processor over a window, as spans on
//! named rows. A real run with `--kernel-trace` keeps the kernel's
//! schedule of its CPUs ([`SpanSource::Real`]) beside the simulator's
//! schedule of the same set under the matching scheduler for the same
//! window ([`SpanSource::Sim`]); the report draws one above the other.
//!
//! Times are nanoseconds since the run's start, like every job row.

use serde::{Deserialize, Serialize};

/// Spans kept per source at most: a window of a busy CPU holds a few
/// thousand switches, so 20 000 keep the store's row bounded (about 80
/// bytes a span) whatever the run.
pub const MAX_SCHEDULE_SPANS: usize = 20_000;

/// The window drawn: at most this long (100 ms), from the run's start or
/// ending a little after the first miss.
pub const SCHEDULE_WINDOW_NS: u64 = 100_000_000;

/// Which schedule a span belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpanSource {
    /// The kernel's, from the trace of the real run.
    Real,
    /// The simulator's.
    Sim,
}

/// What a span shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpanKind {
    /// A job of the set ran (label: the task).
    Job,
    /// Another thread held the CPU (label: its name and policy).
    Other,
    /// An interrupt handler or softirq (label: which).
    Irq,
    /// A task of the set was throttled: runnable, switched out, its CPU
    /// idle or running a lower class (label: the task).
    Throttled,
    /// Scheduling overheads in the simulator.
    Overhead,
    /// A deadline miss, at the deadline (`start == end`; label: the task
    /// and the largest cause of its lateness).
    Miss,
    /// A job's release (`start == end`; label: the task): the simulator's
    /// Gantt chart of one processor marks them on the task's row.
    Release,
    /// A job resuming on another processor (`start == end`, on the row of
    /// the processor it resumes on; label: `task#job from cpu N`).
    Migration,
}

impl SpanSource {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SpanSource::Real => "real",
            SpanSource::Sim => "sim",
        }
    }

    /// From the stored name.
    pub fn parse(s: &str) -> Option<SpanSource> {
        [SpanSource::Real, SpanSource::Sim]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

impl SpanKind {
    /// Every kind, in legend order.
    pub const ALL: [SpanKind; 8] = [
        SpanKind::Job,
        SpanKind::Other,
        SpanKind::Irq,
        SpanKind::Throttled,
        SpanKind::Overhead,
        SpanKind::Miss,
        SpanKind::Release,
        SpanKind::Migration,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SpanKind::Job => "job",
            SpanKind::Other => "other",
            SpanKind::Irq => "irq",
            SpanKind::Throttled => "throttled",
            SpanKind::Overhead => "overhead",
            SpanKind::Miss => "miss",
            SpanKind::Release => "release",
            SpanKind::Migration => "migration",
        }
    }

    /// From the stored name.
    pub fn parse(s: &str) -> Option<SpanKind> {
        SpanKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One span of a drawn schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleSpan {
    /// Real or simulated.
    pub source: SpanSource,
    /// The row: `CPU 1`, `CPU 1 interrupts`, `t1 throttled`, ...
    pub row: String,
    /// What it shows.
    pub kind: SpanKind,
    /// The task, thread or interrupt; for a miss, the task and its cause.
    pub label: String,
    /// From (ns since the run's start).
    pub start_ns: u64,
    /// To (ns since the run's start).
    pub end_ns: u64,
}

/// A window of a schedule to draw: its rows in order (a row may hold no
/// span), its spans, and the window itself (ns since the run's start).
/// The simulator fills one for `rtlab sim --gantt`; the report draws it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScheduleWindow {
    /// The rows, top to bottom: a task's (`t1`) or a processor's (`cpu 0`).
    pub rows: Vec<String>,
    /// What happened on them.
    pub spans: Vec<ScheduleSpan>,
    /// From.
    pub from_ns: u64,
    /// To.
    pub to_ns: u64,
}

/// The window to draw of a run that ended at `ended_ns` with its first
/// miss's deadline at `first_miss_ns`: the first [`SCHEDULE_WINDOW_NS`],
/// or, when the first miss falls later, the window that ends a fifth of
/// its length after that miss.
pub fn schedule_window(ended_ns: u64, first_miss_ns: Option<u64>) -> (u64, u64) {
    let len = SCHEDULE_WINDOW_NS.min(ended_ns);
    let end = first_miss_ns
        .map_or(len, |m| m.saturating_add(len / 5).max(len))
        .min(ended_ns);
    (end.saturating_sub(len), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_start_or_ends_after_the_first_miss() {
        assert_eq!(schedule_window(10_000_000_000, None), (0, 100_000_000));
        assert_eq!(schedule_window(50_000_000, None), (0, 50_000_000));
        // A miss in the first window: the first window.
        assert_eq!(
            schedule_window(1_000_000_000, Some(30_000_000)),
            (0, 100_000_000)
        );
        // A later miss: 80 ms before it, 20 ms after.
        assert_eq!(
            schedule_window(1_000_000_000, Some(500_000_000)),
            (420_000_000, 520_000_000)
        );
        // Near the end: cut at the end.
        assert_eq!(
            schedule_window(1_000_000_000, Some(990_000_000)),
            (900_000_000, 1_000_000_000)
        );
    }

    #[test]
    fn names_round_trip() {
        for k in SpanKind::ALL {
            assert_eq!(SpanKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(SpanSource::parse("sim"), Some(SpanSource::Sim));
        assert_eq!(SpanSource::parse("x"), None);
    }
}
