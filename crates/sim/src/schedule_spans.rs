//! The simulated schedule of a window as the spans of a drawn Gantt chart
//! ([`ScheduleSpan`], source [`SpanSource::Sim`]): what the report draws
//! under a real run's kernel schedule (`run --kernel-trace --save`), so
//! the two can be read one above the other.

use rtlab_model::results::schedule::MAX_SCHEDULE_SPANS;
use rtlab_model::results::{ScheduleSpan, SpanKind, SpanSource};
use rtlab_model::{Nanos, TaskSet};

use crate::config::{SimConfig, TraceWindow};
use crate::error::SimError;
use crate::scheduler::SchedulerSpec;
use crate::trace::{Trace, TraceRecord, NO_CPU};

/// Simulates `set` under `spec` from 0 to `to` (ns) with `base`'s
/// settings and returns the schedule of `[from, to)`; processor `p` of
/// the simulation is named `CPU cpus[p]` (the real run's CPUs), or `CPU
/// p` past them.
pub fn simulated_spans(
    set: &TaskSet,
    spec: &SchedulerSpec,
    base: &SimConfig,
    (from, to): (u64, u64),
    cpus: &[usize],
) -> Result<Vec<ScheduleSpan>, SimError> {
    let mut config = base.clone();
    config.duration = Nanos::from_ns(to.max(1));
    config.trace = Some(TraceWindow {
        from: Nanos::from_ns(from),
        to: Nanos::from_ns(to.max(1)),
    });
    let run = crate::run(set, spec, &config, None)?;
    Ok(run.trace.map_or_else(Vec::new, |t| spans_of(&t, cpus)))
}

/// The spans of a trace's kept records, at most [`MAX_SCHEDULE_SPANS`]:
/// a job's execution on its processor's row (cut to the window), overheads as `kernel`, and
/// each miss at its deadline on the row of the processor the task last
/// ran on.
pub fn spans_of(trace: &Trace, cpus: &[usize]) -> Vec<ScheduleSpan> {
    let name = |p: u32| {
        let cpu = cpus.get(p as usize).copied().unwrap_or(p as usize);
        format!("CPU {cpu}")
    };
    let mut last_cpu = vec![0u32; trace.tasks.len()];
    let mut out = Vec::new();
    for (i, r) in trace.records.iter().enumerate() {
        let p = trace
            .record_cpus
            .get(i)
            .copied()
            .filter(|&c| c != NO_CPU)
            .unwrap_or(0);
        let span = |kind, label: String, start: Nanos, end: Nanos| ScheduleSpan {
            source: SpanSource::Sim,
            row: name(p),
            kind,
            label,
            start_ns: start.max(trace.window.from).as_ns(),
            end_ns: end.min(trace.window.to).max(start).as_ns(),
        };
        match *r {
            TraceRecord::Run {
                task, start, end, ..
            } => {
                last_cpu[task] = p;
                out.push(span(SpanKind::Job, trace.tasks[task].clone(), start, end));
            }
            TraceRecord::Kernel { start, end } => {
                out.push(span(SpanKind::Overhead, "kernel".into(), start, end));
            }
            TraceRecord::Miss { task, at, .. } => out.push(ScheduleSpan {
                row: name(last_cpu[task]),
                ..span(
                    SpanKind::Miss,
                    format!("{} missed", trace.tasks[task]),
                    at,
                    at,
                )
            }),
            TraceRecord::Release { .. } | TraceRecord::Complete { .. } => {}
        }
        if out.len() >= MAX_SCHEDULE_SPANS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimConfig;

    /// Two tasks under RM on one processor (C, T): a (1, 4), b (2, 6).
    /// 0..1 a, 1..3 b, 4..5 a, 6..8 b, 8..9 a: the window 3..9 holds
    /// a 4..5, b 6..8, a 8..9.
    #[test]
    fn a_window_of_a_hand_computed_schedule() {
        let ms = |v: u64| Nanos::from_ns(v * 1_000_000);
        let set = TaskSet::new(
            "pair",
            vec![
                rtlab_model::Task::new("a", ms(4), ms(1)),
                rtlab_model::Task::new("b", ms(6), ms(2)),
            ],
        );
        let spec: SchedulerSpec = "fp:rm".parse().unwrap();
        let spans = simulated_spans(
            &set,
            &spec,
            &SimConfig::new(Nanos::from_ns(1)),
            (3_000_000, 9_000_000),
            &[1],
        )
        .unwrap();
        let got: Vec<(&str, &str, u64, u64)> = spans
            .iter()
            .map(|s| (s.row.as_str(), s.label.as_str(), s.start_ns, s.end_ns))
            .collect();
        assert_eq!(
            got,
            vec![
                ("CPU 1", "a", 4_000_000, 5_000_000),
                ("CPU 1", "b", 6_000_000, 8_000_000),
                ("CPU 1", "a", 8_000_000, 9_000_000),
            ]
        );
        assert!(spans
            .iter()
            .all(|s| s.source == SpanSource::Sim && s.kind == SpanKind::Job));
    }
}
