//! Observed priority inversion, read from a simulator trace.
//!
//! A job `J` of task `i` suffers priority inversion while, between its
//! release and its completion (or the end of the trace), a job `K` of
//! another task that is *less urgent* than `J` executes:
//!
//! * under fixed priorities, `K`'s task has a lower priority level;
//! * under EDF, `K`'s absolute deadline is strictly later than `J`'s.
//!
//! On one processor a less urgent job runs while `J` waits only because a
//! locking protocol lets it finish a critical section (blocking), so this is
//! the blocking the job actually suffered. The processor time of lock
//! operations and other overheads ([`TraceRecord::Kernel`]) is not counted.
//! The worst over a task's jobs is what the analysis's blocking bound `B_i`
//! bounds (`rtlab_analysis::blocking`).
//!
//! A job's release is taken as `offset + k · T` (its arrival), so the trace
//! must come from a run without release jitter or overload phases.

use std::collections::BTreeMap;

use rtlab_model::{Nanos, Task};
use rtlab_sim::TraceRecord;

/// Which of two jobs is the more urgent.
#[derive(Clone, Copy, Debug)]
pub enum Urgency<'a> {
    /// Fixed priorities: one level per task, larger is more urgent.
    Levels(&'a [u32]),
    /// EDF: the earlier absolute deadline is more urgent.
    Deadlines,
}

/// Per task (in `tasks` order), the longest inversion one of its jobs
/// suffered in `records` (a trace window ending at `end`).
pub fn worst_inversion(
    records: &[TraceRecord],
    tasks: &[Task],
    end: Nanos,
    urgency: Urgency<'_>,
) -> Vec<Nanos> {
    let release = |task: usize, job: u64| {
        let t = &tasks[task];
        t.offset
            .saturating_add(t.period.checked_mul(job).unwrap_or(Nanos::MAX))
    };
    let deadline = |task: usize, job: u64| release(task, job).saturating_add(tasks[task].deadline);
    let less_urgent = |other: (usize, u64), than: (usize, u64)| match urgency {
        Urgency::Levels(levels) => levels[other.0] < levels[than.0],
        Urgency::Deadlines => deadline(other.0, other.1) > deadline(than.0, than.1),
    };
    // Every job seen, with its completion if it completed.
    let mut jobs: BTreeMap<(usize, u64), Option<Nanos>> = BTreeMap::new();
    // Execution intervals; on one processor they are disjoint, and the
    // trace lists them in time order.
    let mut runs: Vec<(Nanos, Nanos, usize, u64)> = Vec::new();
    for record in records {
        match *record {
            TraceRecord::Run {
                task,
                job,
                start,
                end,
            } => {
                runs.push((start, end, task, job));
                jobs.entry((task, job)).or_insert(None);
            }
            TraceRecord::Release { task, job, .. } => {
                jobs.entry((task, job)).or_insert(None);
            }
            TraceRecord::Complete { task, job, at } => {
                jobs.insert((task, job), Some(at));
            }
            TraceRecord::Kernel { .. } | TraceRecord::Miss { .. } => {}
        }
    }
    let mut worst = vec![Nanos::ZERO; tasks.len()];
    for (&(task, job), &completion) in &jobs {
        let (from, to) = (release(task, job), completion.unwrap_or(end));
        let first = runs.partition_point(|r| r.1 <= from);
        let inversion = runs[first..]
            .iter()
            .take_while(|r| r.0 < to)
            .filter(|r| r.2 != task && less_urgent((r.2, r.3), (task, job)))
            .fold(Nanos::ZERO, |sum, r| {
                sum.saturating_add(r.1.min(to).saturating_sub(r.0.max(from)))
            });
        worst[task] = worst[task].max(inversion);
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn run(task: usize, job: u64, start: u64, end: u64) -> TraceRecord {
        TraceRecord::Run {
            task,
            job,
            start: ms(start),
            end: ms(end),
        }
    }

    #[test]
    fn only_less_urgent_work_inside_the_job_window_counts() {
        // H (T 10, offset 1) and L (T 20): L runs 0-3 and 5-6, H 3-5 and
        // completes at 5, a second H job runs 11-12.
        let tasks = [
            Task::new("H", ms(10), ms(2)).with_offset(ms(1)),
            Task::new("L", ms(20), ms(4)),
        ];
        let records = [
            run(1, 0, 0, 3),
            run(0, 0, 3, 5),
            TraceRecord::Complete {
                task: 0,
                job: 0,
                at: ms(5),
            },
            run(1, 0, 5, 6),
            run(0, 1, 11, 12),
            TraceRecord::Complete {
                task: 0,
                job: 1,
                at: ms(12),
            },
        ];
        // Fixed priorities, H above L: H#0's window [1, 5) holds L's 1-3.
        let fp = worst_inversion(&records, &tasks, ms(20), Urgency::Levels(&[2, 1]));
        assert_eq!(fp, vec![ms(2), ms(0)]);
        // EDF: H#0 has deadline 11, L#0 20: the same 2 ms for H; H#1
        // (deadline 21) is less urgent than the unfinished L#0, whose window
        // [0, 20) holds its 11-12.
        let edf = worst_inversion(&records, &tasks, ms(20), Urgency::Deadlines);
        assert_eq!(edf, vec![ms(2), ms(1)]);
        // With L more urgent than H (levels reversed) H suffers nothing and
        // L's window [0, 20) (never completed) holds H's 3 ms.
        let reversed = worst_inversion(&records, &tasks, ms(20), Urgency::Levels(&[1, 2]));
        assert_eq!(reversed, vec![ms(0), ms(3)]);
    }
}
