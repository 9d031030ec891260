//! The kernel's schedule rebuilt from the events: who had each CPU when,
//! when each CPU was in an interrupt or softirq, and, for the threads of
//! interest (the task set's), every span they ran or were ready.
//!
//! * A CPU's occupant changes at each `sched_switch` (`next_pid`; 0 is
//!   idle). Before its first event the occupant is unknown; from it on,
//!   the event's `common_pid` ([`Event::pid`]) says who it is.
//! * **Switches the kernel did not record.** On the Firecracker guest of
//!   issue 23 (Linux 6.18) the kernel never records the switch from idle
//!   to a thread woken by an interrupt on an idle CPU: 0 switch-ins for
//!   100 switch-outs of a thread sleeping 10 ms a hundred times on CPU 1,
//!   in rtlab's binary pages and in tracefs's own text `trace` alike.
//!   Every event carries the thread current when it was recorded
//!   (`common_pid`; for a `sched_switch`, `prev_pid`), so an event whose
//!   thread is not the CPU's occupant proves a switch was missed: it is
//!   put back at the occupant's last event on that CPU, never before the
//!   thread became ready, and counted ([`Schedule::inferred_switches`]).
//!   For idle that last event is what ended the idle period (the idle
//!   loop schedules as soon as the interrupt returns): the wake-up, or,
//!   for a thread that is not woken (a SCHED_DEADLINE thread replenished,
//!   a SCHED_FIFO thread unthrottled), the timer expiry or the
//!   rescheduling interrupt recorded for that reason
//!   ([`crate::decode::EVENTS`]).
//! * A watched thread is **ready** from its `sched_waking` (or
//!   `sched_wakeup`, whichever comes first) or from a `sched_switch` that
//!   took it off the CPU while runnable (`prev_state` 0, or only the
//!   preemption bit `TASK_REPORT_MAX` set: "R" or "R+"), until the switch
//!   that puts it back; **running** from that switch until the next one
//!   that takes it off.
//! * Interrupts: `irq_handler_entry` .. `irq_handler_exit`, and
//!   `softirq_entry` .. `softirq_exit`, per CPU.

use std::collections::{BTreeMap, BTreeSet};

use crate::decode::{Comm, Event, Kind};

/// A span a CPU was held by one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    /// From (ns).
    pub start: u64,
    /// To (ns).
    pub end: u64,
    /// The thread (0: idle).
    pub pid: i32,
}

/// What interrupted a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// A hard interrupt handler, by line.
    Irq(i32),
    /// A softirq, by vector.
    Softirq(u32),
}

/// A span a CPU spent in an interrupt handler or softirq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterruptSpan {
    /// From (ns).
    pub start: u64,
    /// To (ns).
    pub end: u64,
    /// Which.
    pub what: Interruption,
}

/// One CPU's schedule.
#[derive(Debug, Clone, Default)]
pub struct CpuSchedule {
    /// Who held it, in time order, without gaps after the first switch.
    pub occupancy: Vec<Occupancy>,
    /// Interrupt handlers and softirqs, in order of their end.
    pub interrupts: Vec<InterruptSpan>,
}

/// A watched thread's state over a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadState {
    /// On the CPU.
    Running,
    /// Runnable, not on the CPU. `switched_out`: it became ready by
    /// leaving the CPU while runnable (a preemption or throttling), not by
    /// a wake-up.
    Ready {
        /// Became ready by a switch, not a wake-up.
        switched_out: bool,
    },
}

/// A span of a watched thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadSpan {
    /// From (ns).
    pub start: u64,
    /// To (ns).
    pub end: u64,
    /// The CPU it ran on or was queued on.
    pub cpu: u32,
    /// Running or ready.
    pub state: ThreadState,
}

/// What the trace says about one thread (any thread seen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its name.
    pub comm: Comm,
    /// Its kernel priority when last seen (-1 deadline, < 100 real-time).
    pub prio: i32,
}

/// The whole schedule.
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    /// Per CPU.
    pub cpus: BTreeMap<u32, CpuSchedule>,
    /// Every thread seen in a switch or wake-up.
    pub threads: BTreeMap<i32, ThreadInfo>,
    /// The watched threads' spans, in order.
    pub spans: BTreeMap<i32, Vec<ThreadSpan>>,
    /// The watched threads' switch-outs: (time, runnable).
    pub switch_outs: BTreeMap<i32, Vec<(u64, bool)>>,
    /// The watched threads' wake-ups (`sched_waking`, else `sched_wakeup`).
    pub wakes: BTreeMap<i32, Vec<u64>>,
    /// Switches the kernel did not record, put back from the threads the
    /// events were recorded in (module docs).
    pub inferred_switches: u64,
    /// First and last event times.
    pub first: u64,
    /// Last event time.
    pub last: u64,
}

/// True when a `prev_state` means the thread is still runnable: no state
/// bit below `TASK_REPORT_MAX` (0x100 here; preemption adds that bit).
pub fn runnable(prev_state: i64) -> bool {
    prev_state & 0xff == 0
}

#[derive(Clone, Copy)]
struct Open {
    start: u64,
    cpu: u32,
    state: ThreadState,
}

impl Schedule {
    /// Rebuilds the schedule from `events` (in time order), following the
    /// threads in `watched` closely.
    pub fn build(events: &[Event], watched: &[i32]) -> Schedule {
        let watched: BTreeSet<i32> = watched.iter().copied().collect();
        let mut s = Schedule {
            first: events.first().map_or(0, |e| e.ts),
            last: events.last().map_or(0, |e| e.ts),
            ..Schedule::default()
        };
        let mut holder: BTreeMap<u32, (i32, u64)> = BTreeMap::new();
        // Per CPU: the last time an event was recorded in its occupant.
        let mut occupant_seen: BTreeMap<u32, u64> = BTreeMap::new();
        let mut in_irq: BTreeMap<u32, (u64, i32)> = BTreeMap::new();
        let mut in_softirq: BTreeMap<u32, (u64, u32)> = BTreeMap::new();
        let mut open: BTreeMap<i32, Open> = BTreeMap::new();
        for e in events {
            let current = match e.kind {
                Kind::Switch { prev_pid, .. } => prev_pid,
                _ => e.pid,
            };
            match holder.get(&e.cpu).copied() {
                None => {
                    holder.insert(e.cpu, (current, s.first));
                }
                Some((held_by, since)) if held_by != current && current >= 0 => {
                    // Not before the CPU's occupant was last seen, nor before
                    // the thread became ready (a wake-up recorded elsewhere).
                    let ready = open.get(&current).map_or(0, |o| o.start);
                    let at = occupant_seen
                        .get(&e.cpu)
                        .copied()
                        .unwrap_or(since)
                        .max(since)
                        .max(ready)
                        .min(e.ts);
                    s.inferred_switches += 1;
                    if at > since {
                        s.cpus.entry(e.cpu).or_default().occupancy.push(Occupancy {
                            start: since,
                            end: at,
                            pid: held_by,
                        });
                    }
                    holder.insert(e.cpu, (current, at));
                    if watched.contains(&held_by) {
                        close(&mut s.spans, &mut open, held_by, at);
                    }
                    if watched.contains(&current) {
                        close(&mut s.spans, &mut open, current, at);
                        open.insert(
                            current,
                            Open {
                                start: at,
                                cpu: e.cpu,
                                state: ThreadState::Running,
                            },
                        );
                    }
                }
                Some(_) => {}
            }
            occupant_seen.insert(e.cpu, e.ts);
            let cpu = s.cpus.entry(e.cpu).or_default();
            match e.kind {
                Kind::Switch {
                    prev_pid,
                    prev_prio,
                    prev_state,
                    prev_comm,
                    next_pid,
                    next_prio,
                    next_comm,
                } => {
                    let (held_by, since) =
                        holder.get(&e.cpu).copied().unwrap_or((prev_pid, s.first));
                    if e.ts > since {
                        cpu.occupancy.push(Occupancy {
                            start: since,
                            end: e.ts,
                            pid: held_by,
                        });
                    }
                    holder.insert(e.cpu, (next_pid, e.ts));
                    s.threads.insert(
                        prev_pid,
                        ThreadInfo {
                            comm: prev_comm,
                            prio: prev_prio,
                        },
                    );
                    s.threads.insert(
                        next_pid,
                        ThreadInfo {
                            comm: next_comm,
                            prio: next_prio,
                        },
                    );
                    if watched.contains(&prev_pid) {
                        let still = runnable(prev_state);
                        close(&mut s.spans, &mut open, prev_pid, e.ts);
                        if still {
                            open.insert(
                                prev_pid,
                                Open {
                                    start: e.ts,
                                    cpu: e.cpu,
                                    state: ThreadState::Ready { switched_out: true },
                                },
                            );
                        }
                        s.switch_outs
                            .entry(prev_pid)
                            .or_default()
                            .push((e.ts, still));
                    }
                    if watched.contains(&next_pid) {
                        close(&mut s.spans, &mut open, next_pid, e.ts);
                        open.insert(
                            next_pid,
                            Open {
                                start: e.ts,
                                cpu: e.cpu,
                                state: ThreadState::Running,
                            },
                        );
                    }
                }
                Kind::Waking { pid, target_cpu } | Kind::Wakeup { pid, target_cpu } => {
                    if watched.contains(&pid) && !open.contains_key(&pid) {
                        open.insert(
                            pid,
                            Open {
                                start: e.ts,
                                cpu: target_cpu.max(0) as u32,
                                state: ThreadState::Ready {
                                    switched_out: false,
                                },
                            },
                        );
                        s.wakes.entry(pid).or_default().push(e.ts);
                    }
                }
                Kind::Migrate { pid, dest_cpu } => {
                    if let Some(o) = open.get_mut(&pid) {
                        if matches!(o.state, ThreadState::Ready { .. }) {
                            // The ready span goes on, on the new CPU.
                            let (start, state) = (o.start, o.state);
                            let old = o.cpu;
                            s.spans.entry(pid).or_default().push(ThreadSpan {
                                start,
                                end: e.ts,
                                cpu: old,
                                state,
                            });
                            *o = Open {
                                start: e.ts,
                                cpu: dest_cpu.max(0) as u32,
                                state,
                            };
                        }
                    }
                }
                Kind::IrqEntry { irq } => {
                    in_irq.insert(e.cpu, (e.ts, irq));
                }
                Kind::IrqExit { .. } => {
                    if let Some((start, irq)) = in_irq.remove(&e.cpu) {
                        cpu.interrupts.push(InterruptSpan {
                            start,
                            end: e.ts,
                            what: Interruption::Irq(irq),
                        });
                    }
                }
                Kind::SoftirqEntry { vec } => {
                    in_softirq.insert(e.cpu, (e.ts, vec));
                }
                Kind::SoftirqExit { .. } => {
                    if let Some((start, vec)) = in_softirq.remove(&e.cpu) {
                        cpu.interrupts.push(InterruptSpan {
                            start,
                            end: e.ts,
                            what: Interruption::Softirq(vec),
                        });
                    }
                }
                Kind::Runtime { .. }
                | Kind::HrtimerExpire { .. }
                | Kind::Reschedule
                | Kind::HrtimerStart { .. }
                | Kind::SysEnter { .. }
                | Kind::SysExit { .. } => {}
            }
        }
        for (cpu, (pid, since)) in holder {
            if s.last > since {
                s.cpus.entry(cpu).or_default().occupancy.push(Occupancy {
                    start: since,
                    end: s.last,
                    pid,
                });
            }
        }
        let last = s.last;
        for pid in open.keys().copied().collect::<Vec<_>>() {
            close(&mut s.spans, &mut open, pid, last);
        }
        for c in s.cpus.values_mut() {
            c.interrupts.sort_by_key(|i| i.start);
        }
        s
    }

    /// When watched thread `tid` next got a CPU at or after `from` (the
    /// start of its first running span from then on), if the trace saw
    /// it: how a dispatcher's order is timed by the kernel (the order at
    /// `from`, the `sched_switch` that put the thread on the CPU).
    pub fn next_run_of(&self, tid: i32, from: u64) -> Option<u64> {
        let spans = self.spans.get(&tid)?;
        let first = spans.partition_point(|s| s.start < from);
        spans[first..]
            .iter()
            .find(|s| s.state == ThreadState::Running)
            .map(|s| s.start)
    }

    /// The spans of `cpu`'s occupancy that overlap `[from, to)`, cut to
    /// it, each with the time its holder took the CPU (before the cut).
    pub fn occupants(
        &self,
        cpu: u32,
        from: u64,
        to: u64,
    ) -> impl Iterator<Item = (Occupancy, u64)> + '_ {
        let occ = self.cpus.get(&cpu).map_or(&[][..], |c| &c.occupancy[..]);
        let first = occ.partition_point(|o| o.end <= from);
        occ[first..]
            .iter()
            .take_while(move |o| o.start < to)
            .map(move |o| {
                (
                    Occupancy {
                        start: o.start.max(from),
                        end: o.end.min(to),
                        pid: o.pid,
                    },
                    o.start,
                )
            })
    }

    /// Time `cpu` spent in hard interrupts and in softirqs within
    /// `[from, to)`.
    pub fn interrupted(&self, cpu: u32, from: u64, to: u64) -> (u64, u64) {
        let Some(c) = self.cpus.get(&cpu) else {
            return (0, 0);
        };
        let first = c
            .interrupts
            .partition_point(|i| i.start < from.saturating_sub(1_000_000_000));
        let (mut irq, mut soft) = (0, 0);
        for i in c.interrupts[first..].iter().take_while(|i| i.start < to) {
            let overlap = i.end.min(to).saturating_sub(i.start.max(from));
            match i.what {
                Interruption::Irq(_) => irq += overlap,
                Interruption::Softirq(_) => soft += overlap,
            }
        }
        (irq, soft)
    }
}

fn close(
    spans: &mut BTreeMap<i32, Vec<ThreadSpan>>,
    open: &mut BTreeMap<i32, Open>,
    pid: i32,
    at: u64,
) {
    if let Some(o) = open.remove(&pid) {
        if at > o.start {
            spans.entry(pid).or_default().push(ThreadSpan {
                start: o.start,
                end: at,
                cpu: o.cpu,
                state: o.state,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switch(ts: u64, cpu: u32, prev: (i32, i64), next: i32) -> Event {
        Event {
            ts,
            cpu,
            pid: prev.0,
            kind: Kind::Switch {
                prev_pid: prev.0,
                prev_prio: if prev.0 == 0 { 120 } else { 90 },
                prev_state: prev.1,
                prev_comm: Comm::new(if prev.0 == 0 { b"swapper/1" } else { b"x" }),
                next_pid: next,
                next_prio: if next == 0 { 120 } else { 90 },
                next_comm: Comm::new(if next == 0 { b"swapper/1" } else { b"x" }),
            },
        }
    }

    fn on(ts: u64, cpu: u32, pid: i32, kind: Kind) -> Event {
        Event { ts, cpu, pid, kind }
    }

    const X: i32 = 10;
    const ASLEEP: i64 = 1;

    /// CPU 1, thread X (times in ns), as the Firecracker guest records it:
    /// no switch away from idle is ever written.
    ///
    /// ```text
    ///  100  X asleep -> idle
    /// 1000  waking X, in idle (the timer interrupt)     [idle -> X missed]
    /// 3000  X asleep -> idle                              X ran 1000..3000
    /// 4000  waking X, in idle                           [idle -> X missed]
    /// 5000  X runnable -> idle (throttled)
    /// 7000  hrtimer expiry, in idle (replenishment)     [idle -> X missed]
    /// 8000  X asleep -> idle                  ready 5000..7000, ran 7000..8000
    /// 9000  softirq entry+exit, in idle
    /// 9500  waking X, on CPU 0 by thread 77             [idle -> X missed]
    /// 9800  X asleep -> idle                              X ran 9500..9800
    /// ```
    #[test]
    fn switches_away_from_idle_that_the_kernel_did_not_record_are_put_back() {
        let events = vec![
            switch(100, 1, (X, ASLEEP), 0),
            on(
                1000,
                1,
                0,
                Kind::Waking {
                    pid: X,
                    target_cpu: 1,
                },
            ),
            switch(3000, 1, (X, ASLEEP), 0),
            on(
                4000,
                1,
                0,
                Kind::Waking {
                    pid: X,
                    target_cpu: 1,
                },
            ),
            switch(5000, 1, (X, 0), 0),
            on(7000, 1, 0, Kind::HrtimerExpire { hrtimer: 1 }),
            switch(8000, 1, (X, ASLEEP), 0),
            on(9000, 1, 0, Kind::SoftirqEntry { vec: 1 }),
            on(9001, 1, 0, Kind::SoftirqExit { vec: 1 }),
            on(
                9500,
                0,
                77,
                Kind::Waking {
                    pid: X,
                    target_cpu: 1,
                },
            ),
            switch(9800, 1, (X, ASLEEP), 0),
        ];
        let s = Schedule::build(&events, &[X]);
        assert_eq!(s.inferred_switches, 4);
        let occ: Vec<(u64, u64, i32)> = s.cpus[&1]
            .occupancy
            .iter()
            .map(|o| (o.start, o.end, o.pid))
            .collect();
        assert_eq!(
            occ,
            vec![
                (100, 1000, 0),
                (1000, 3000, X),
                (3000, 4000, 0),
                (4000, 5000, X),
                (5000, 7000, 0),
                (7000, 8000, X),
                (8000, 9500, 0),
                (9500, 9800, X),
            ]
        );
        let running: Vec<(u64, u64)> = s.spans[&X]
            .iter()
            .filter(|sp| sp.state == ThreadState::Running)
            .map(|sp| (sp.start, sp.end))
            .collect();
        assert_eq!(
            running,
            vec![(1000, 3000), (4000, 5000), (7000, 8000), (9500, 9800)]
        );
        let throttled: Vec<(u64, u64)> = s.spans[&X]
            .iter()
            .filter(|sp| sp.state == ThreadState::Ready { switched_out: true })
            .map(|sp| (sp.start, sp.end))
            .collect();
        assert_eq!(throttled, vec![(5000, 7000)]);
    }
}
