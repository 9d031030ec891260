//! The kernel's schedule as the spans of a drawn Gantt chart
//! ([`ScheduleSpan`], source [`SpanSource::Real`]) for one window of the
//! run: per traced CPU a row `CPU c` with the set's jobs (by task) and
//! other threads (by name and policy; idle left blank), a row `CPU c
//! interrupts`, a row `TASK throttled` per task that was, and each missed
//! job as a mark at its deadline labelled with the largest cause of its
//! lateness. The same rows as the Perfetto export ([`crate::perfetto`]),
//! cut to the window and bounded by [`MAX_SCHEDULE_SPANS`].

use rtlab_model::results::schedule::MAX_SCHEDULE_SPANS;
use rtlab_model::results::{ScheduleSpan, SpanKind, SpanSource};

use crate::causes::{policy_of_prio, SetThreads};
use crate::decode::SOFTIRQ_NAMES;
use crate::schedule::{Interruption, Schedule, ThreadSpan, ThreadState};

/// A missed job to mark: its task (index in the set), its deadline
/// (absolute ns, the trace clock) and the largest cause of its lateness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissMark {
    /// Task index.
    pub task: usize,
    /// Deadline, absolute ns.
    pub deadline: u64,
    /// The largest cause (`JobKernel::main_cause`).
    pub cause: String,
}

/// How a thread is named on a row: the set's task name, else `comm
/// (policy)`, else `pid N`.
pub fn holder_name(s: &Schedule, set: &SetThreads, pid: i32) -> (String, bool) {
    if let Some((task, _)) = set.tasks.iter().find(|(_, t)| *t == Some(pid)) {
        return (task.clone(), true);
    }
    let name = s.threads.get(&pid).map_or_else(
        || format!("pid {pid}"),
        |i| format!("{} ({})", i.comm.as_string(), policy_of_prio(i.prio)),
    );
    (name, false)
}

/// An interrupt's name: `irq N HANDLER` or `softirq NAME`.
pub fn interruption_name(
    what: Interruption,
    irq_names: &std::collections::BTreeMap<i32, String>,
) -> String {
    match what {
        Interruption::Irq(n) => format!("irq {n} {}", irq_names.get(&n).map_or("", String::as_str)),
        Interruption::Softirq(v) => {
            format!("softirq {}", SOFTIRQ_NAMES.get(v as usize).unwrap_or(&"?"))
        }
    }
}

/// Task `i`'s throttled spans: ready after a switch-out (not a wake-up)
/// while its CPU stayed idle or ran only lower classes (kernel priority
/// >= 100: SCHED_OTHER), so nothing of its class or above held it back.
pub fn throttled<'a>(
    s: &'a Schedule,
    set: &'a SetThreads,
) -> impl Iterator<Item = (usize, ThreadSpan)> + 'a {
    set.tasks.iter().enumerate().flat_map(move |(i, (_, tid))| {
        tid.and_then(|t| s.spans.get(&t))
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(move |sp| {
                sp.state == (ThreadState::Ready { switched_out: true })
                    && s.occupants(sp.cpu, sp.start, sp.end).all(|(o, _)| {
                        o.pid == 0 || s.threads.get(&o.pid).is_some_and(|t| t.prio >= 100)
                    })
            })
            .map(move |sp| (i, *sp))
    })
}

/// The spans of `s` within `[from, to)` (ns since the run's start, which
/// is absolute `origin`), at most [`MAX_SCHEDULE_SPANS`]: occupancy of
/// each CPU first, then interrupts, throttled spans and the misses
/// (a window too busy for the bound loses its last kinds first).
pub fn real_spans(
    s: &Schedule,
    set: &SetThreads,
    irq_names: &std::collections::BTreeMap<i32, String>,
    misses: &[MissMark],
    origin: u64,
    (from, to): (u64, u64),
) -> Vec<ScheduleSpan> {
    let (a, b) = (origin + from, origin + to);
    let cut = |start: u64, end: u64| {
        let (start, end) = (start.max(a), end.min(b));
        (end > start).then(|| (start - origin, end - origin))
    };
    let span = |row: String, kind, label, (start_ns, end_ns)| ScheduleSpan {
        source: SpanSource::Real,
        row,
        kind,
        label,
        start_ns,
        end_ns,
    };
    let mut out = Vec::new();
    for (&cpu, c) in &s.cpus {
        for o in c.occupancy.iter().filter(|o| o.pid != 0) {
            if let Some(t) = cut(o.start, o.end) {
                let (name, of_set) = holder_name(s, set, o.pid);
                let kind = if of_set {
                    SpanKind::Job
                } else {
                    SpanKind::Other
                };
                out.push(span(format!("CPU {cpu}"), kind, name, t));
            }
        }
    }
    for (&cpu, c) in &s.cpus {
        for i in &c.interrupts {
            if let Some(t) = cut(i.start, i.end) {
                let name = interruption_name(i.what, irq_names);
                out.push(span(
                    format!("CPU {cpu} interrupts"),
                    SpanKind::Irq,
                    name,
                    t,
                ));
            }
        }
    }
    for (i, sp) in throttled(s, set) {
        if let Some(t) = cut(sp.start, sp.end) {
            let task = set.tasks[i].0.clone();
            out.push(span(
                format!("{task} throttled"),
                SpanKind::Throttled,
                task,
                t,
            ));
        }
    }
    for m in misses.iter().filter(|m| (a..b).contains(&m.deadline)) {
        let Some((task, tid)) = set.tasks.get(m.task) else {
            continue;
        };
        // On the CPU it last ran on or was queued on before its deadline.
        let cpu = tid
            .and_then(|t| s.spans.get(&t))
            .and_then(|spans| spans.iter().rev().find(|sp| sp.start <= m.deadline))
            .map(|sp| sp.cpu)
            .or_else(|| s.cpus.keys().next().copied())
            .unwrap_or(0);
        let at = m.deadline - origin;
        out.push(span(
            format!("CPU {cpu}"),
            SpanKind::Miss,
            format!("{task} missed: {}", m.cause),
            (at, at),
        ));
    }
    out.truncate(MAX_SCHEDULE_SPANS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::causes::ThreadClass;
    use crate::decode::{Comm, Event, Kind};

    fn switch(ts: u64, prev: (i32, &str, i32, i64), next: (i32, &str, i32)) -> Event {
        Event {
            ts,
            cpu: 1,
            pid: prev.0,
            kind: Kind::Switch {
                prev_pid: prev.0,
                prev_comm: Comm::new(prev.1.as_bytes()),
                prev_prio: prev.2,
                prev_state: prev.3,
                next_pid: next.0,
                next_comm: Comm::new(next.1.as_bytes()),
                next_prio: next.2,
            },
        }
    }

    /// CPU 1, run start at 1 000 000 ns: t1 (pid 10, deadline) runs 0..2 ms,
    /// kworker (pid 99, SCHED_OTHER) 2..3 ms, t1 is switched out runnable
    /// at 3 ms with the CPU idle until 5 ms (throttled), t1 again 5..6 ms,
    /// an IRQ 19 at 5.5..5.6 ms; t1 missed at its deadline 5.8 ms by
    /// throttling. Window 1..6 ms.
    #[test]
    fn rows_of_a_hand_made_schedule_are_cut_to_the_window() {
        let o = 1_000_000;
        let ms = |x: f64| o + (x * 1e6) as u64;
        let events = vec![
            switch(ms(0.0), (0, "swapper/1", 120, 0), (10, "t1", -1)),
            switch(ms(2.0), (10, "t1", -1, 1), (99, "kworker/1:1", 120)),
            Event {
                ts: ms(2.5),
                cpu: 1,
                pid: 99,
                kind: Kind::Waking {
                    pid: 10,
                    target_cpu: 1,
                },
            },
            switch(ms(3.0), (99, "kworker/1:1", 120, 1), (10, "t1", -1)),
            switch(ms(3.0) + 1, (10, "t1", -1, 0), (0, "swapper/1", 120)),
            switch(ms(5.0), (0, "swapper/1", 120, 0), (10, "t1", -1)),
            Event {
                ts: ms(5.5),
                cpu: 1,
                pid: 10,
                kind: Kind::IrqEntry { irq: 19 },
            },
            Event {
                ts: ms(5.6),
                cpu: 1,
                pid: 10,
                kind: Kind::IrqExit { irq: 19 },
            },
            switch(ms(6.0), (10, "t1", -1, 1), (0, "swapper/1", 120)),
            switch(ms(7.0), (0, "swapper/1", 120, 0), (0, "swapper/1", 120)),
        ];
        let s = Schedule::build(&events, &[10]);
        let set = SetThreads {
            tasks: vec![("t1".into(), Some(10))],
            class: ThreadClass::Deadline,
            own_cpu: Vec::new(),
            irq_in_task_time: true,
        };
        let irqs = [(19, "virtio0".to_string())].into_iter().collect();
        let misses = [MissMark {
            task: 0,
            deadline: ms(5.8),
            cause: "throttled".into(),
        }];
        let got = real_spans(&s, &set, &irqs, &misses, o, (1_000_000, 6_000_000));
        let row = |row: &str, kind, label: &str, start_ns, end_ns| ScheduleSpan {
            source: SpanSource::Real,
            row: row.into(),
            kind,
            label: label.into(),
            start_ns,
            end_ns,
        };
        assert_eq!(
            got,
            vec![
                row("CPU 1", SpanKind::Job, "t1", 1_000_000, 2_000_000),
                row(
                    "CPU 1",
                    SpanKind::Other,
                    "kworker/1:1 (other)",
                    2_000_000,
                    3_000_000
                ),
                row("CPU 1", SpanKind::Job, "t1", 3_000_000, 3_000_001),
                row("CPU 1", SpanKind::Job, "t1", 5_000_000, 6_000_000),
                row(
                    "CPU 1 interrupts",
                    SpanKind::Irq,
                    "irq 19 virtio0",
                    5_500_000,
                    5_600_000
                ),
                row(
                    "t1 throttled",
                    SpanKind::Throttled,
                    "t1",
                    3_000_001,
                    5_000_000
                ),
                row(
                    "CPU 1",
                    SpanKind::Miss,
                    "t1 missed: throttled",
                    5_800_000,
                    5_800_000
                ),
            ]
        );
    }
}
