//! The simulated schedule of a window as the spans of a drawn Gantt chart
//! ([`ScheduleSpan`], source [`SpanSource::Sim`]): what the report draws
//! under a real run's kernel schedule (`run --kernel-trace --save`), so
//! the two can be read one above the other ([`simulated_spans`]), and the
//! simulator's own Gantt chart of a window, `rtlab sim --gantt`
//! ([`gantt_window`]). The simulator keeps the data; `rtlab-report` draws.

use rtlab_model::results::schedule::MAX_SCHEDULE_SPANS;
use rtlab_model::results::{ScheduleSpan, ScheduleWindow, SpanKind, SpanSource};
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

/// The Gantt chart of a trace's window: on one processor a row per task
/// (its jobs' execution, its releases and misses) and a `kernel` row for
/// the overheads, if any; on several a row per processor (`cpu 0`, ...:
/// the jobs it ran, its migration costs as overheads, the migrations that
/// resumed a job there), each miss on the row of the processor its task
/// last ran on. `None` when the window held more records than a trace
/// keeps ([`crate::trace::MAX_KEPT_RECORDS`]): the chart would be partial.
pub fn gantt_window(trace: &Trace) -> Option<ScheduleWindow> {
    if trace.dropped > 0 {
        return None;
    }
    let (from, to) = (trace.window.from, trace.window.to);
    let span = |row: String, kind, label: String, start: Nanos, end: Nanos| ScheduleSpan {
        source: SpanSource::Sim,
        row,
        kind,
        label,
        start_ns: start.max(from).as_ns(),
        end_ns: end.min(to).max(start).as_ns(),
    };
    let mut spans = Vec::with_capacity(trace.records.len());
    if !trace.per_processor {
        for r in &trace.records {
            let name = |task: usize| trace.tasks[task].clone();
            spans.push(match *r {
                TraceRecord::Run {
                    task, start, end, ..
                } => span(name(task), SpanKind::Job, name(task), start, end),
                TraceRecord::Kernel { start, end } => span(
                    "kernel".into(),
                    SpanKind::Overhead,
                    "kernel".into(),
                    start,
                    end,
                ),
                TraceRecord::Release { task, at, .. } => {
                    span(name(task), SpanKind::Release, name(task), at, at)
                }
                TraceRecord::Miss { task, job, at } => span(
                    name(task),
                    SpanKind::Miss,
                    format!("{}#{job} missed", name(task)),
                    at,
                    at,
                ),
                TraceRecord::Complete { .. } => continue,
            });
        }
        let mut rows = trace.tasks.clone();
        if spans.iter().any(|s| s.kind == SpanKind::Overhead) {
            rows.push("kernel".into());
        }
        return Some(ScheduleWindow {
            rows,
            spans,
            from_ns: from.as_ns(),
            to_ns: to.as_ns(),
        });
    }
    let cpu = |p: u32| format!("cpu {p}");
    let mut last_cpu = vec![0u32; trace.tasks.len()];
    for (r, &p) in trace.records.iter().zip(&trace.record_cpus) {
        match *r {
            TraceRecord::Run {
                task, start, end, ..
            } => {
                last_cpu[task] = p;
                let name = trace.tasks[task].clone();
                spans.push(span(cpu(p), SpanKind::Job, name, start, end));
            }
            TraceRecord::Kernel { start, end } => {
                spans.push(span(
                    cpu(p),
                    SpanKind::Overhead,
                    "migration".into(),
                    start,
                    end,
                ));
            }
            TraceRecord::Miss { task, job, at } => spans.push(span(
                cpu(last_cpu[task]),
                SpanKind::Miss,
                format!("{}#{job} missed", trace.tasks[task]),
                at,
                at,
            )),
            TraceRecord::Release { .. } | TraceRecord::Complete { .. } => {}
        }
    }
    for m in &trace.migrations {
        spans.push(span(
            cpu(m.to),
            SpanKind::Migration,
            format!("{}#{} from cpu {}", trace.tasks[m.task], m.job, m.from),
            m.at,
            m.at,
        ));
    }
    Some(ScheduleWindow {
        rows: (0..trace.processors).map(cpu).collect(),
        spans,
        from_ns: from.as_ns(),
        to_ns: to.as_ns(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimConfig;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ns(v * 1_000_000)
    }

    /// Two tasks (C, T): a (1, 4), b (2, 6).
    fn pair() -> TaskSet {
        TaskSet::new(
            "pair",
            vec![
                rtlab_model::Task::new("a", ms(4), ms(1)),
                rtlab_model::Task::new("b", ms(6), ms(2)),
            ],
        )
    }

    /// Two tasks under RM on one processor (C, T): a (1, 4), b (2, 6).
    /// 0..1 a, 1..3 b, 4..5 a, 6..8 b, 8..9 a: the window 3..9 holds
    /// a 4..5, b 6..8, a 8..9.
    #[test]
    fn a_window_of_a_hand_computed_schedule() {
        let set = pair();
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

    /// The same pair from 0 to 9 ms as `sim --gantt` draws it: a row per
    /// task, the jobs where they ran, each release on its task's row.
    #[test]
    fn the_gantt_window_of_one_processor_has_a_row_per_task() {
        let set = pair();
        let mut config = SimConfig::new(ms(9));
        config.trace = Some(TraceWindow {
            from: Nanos::ZERO,
            to: ms(9),
        });
        let run = crate::run(&set, &"fp:rm".parse().unwrap(), &config, None).unwrap();
        let window = gantt_window(run.trace.as_ref().unwrap()).unwrap();
        assert_eq!(window.rows, ["a", "b"]);
        assert_eq!((window.from_ns, window.to_ns), (0, 9_000_000));
        let of = |kind| -> Vec<(&str, u64, u64)> {
            let mut v: Vec<_> = window
                .spans
                .iter()
                .filter(|s| s.kind == kind)
                .map(|s| (s.row.as_str(), s.start_ns / 1_000_000, s.end_ns / 1_000_000))
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(
            of(SpanKind::Job),
            [
                ("a", 0, 1),
                ("a", 4, 5),
                ("a", 8, 9),
                ("b", 1, 3),
                ("b", 6, 8)
            ]
        );
        assert_eq!(
            of(SpanKind::Release),
            [
                ("a", 0, 0),
                ("a", 4, 4),
                ("a", 8, 8),
                ("b", 0, 0),
                ("b", 6, 6)
            ]
        );
        assert!(of(SpanKind::Miss).is_empty());
    }
}
