//! The operating system's costs read from kernel timestamps
//! (`characterize --kernel-trace`), with the host's stalls kept apart.
//!
//! On one CPU, for the threads whose name says they measure
//! (`rtlab-char-*`), from the recording of [`crate::decode::EVENTS`],
//! [`crate::decode::TIMER_EVENTS`] and [`crate::decode::SYSCALL_EVENTS`]:
//!
//! | cost      | starts at                                                     | ends at                                             |
//! | --------- | ------------------------------------------------------------- | --------------------------------------------------- |
//! | release   | the `hrtimer_expire_entry` just before the thread's `sched_wakeup` (the wake-up itself when no expiry precedes it) | its `sched_switch` in, when that is the next switch on the CPU and takes the CPU from a running thread or idle |
//! | exit      | the thread's `sys_enter` of `futex` or `clock_nanosleep`       | its `sched_switch` out asleep (`prev_state` not runnable, not exiting) |
//! | switch    | the last `sys_enter` of the thread that blocks                | the `sys_exit` of the measuring thread switched in right after it |
//!
//! The switch is the whole hand-over as the user-space ping-pong sees it
//! (the blocking call, the pick, the switch, the return to user space),
//! timed by the kernel. What the trace cannot give: the thread's own last
//! user-space instruction before a release (no event marks it), so the
//! release starts at the timer's handler, not at the interrupt's entry.
//!
//! **Host stalls.** A guest whose virtual CPU the host does not run shows
//! no event at all for the stall (0.1..1.5 ms on the Firecracker VM of
//! the issue-23 note), then charges the gap to whatever runs next. A gap
//! of more than `stall_gap` between two consecutive events of the CPU is
//! a stall when the CPU is busy on the measuring threads' behalf: a
//! measuring thread inside a system call, or handed the CPU and not yet
//! back in user space; and any such gap inside a cost's span is one too,
//! and that sample is left out (counted in [`KernelCosts::excluded`]). A gap while a thread runs its own user
//! code is not a stall by this rule (no event is expected there).

use serde::Serialize;

use crate::decode::{Comm, Event, Kind};
use crate::schedule::runnable;

/// The thread names that measure (`rtlab characterize`'s threads).
pub const MEASURING_PREFIX: &[u8] = b"rtlab-char-";

/// The calls a measuring thread blocks in (its end of a job, a hand-over).
pub const BLOCKING_CALLS: [i64; 2] = [libc::SYS_futex, libc::SYS_clock_nanosleep];

/// `prev_state` bits of a thread that exits (`TASK_DEAD`, `EXIT_ZOMBIE`,
/// `EXIT_DEAD`): its last switch is not a job's exit.
const DEAD: i64 = 0x80 | 0x20 | 0x10;

/// The default event-less gap taken as a host stall, ns: 100 us, far
/// above any of the costs timed here (a few us) and the smallest stall the
/// issue-23 note saw.
pub const STALL_GAP_NS: u64 = 100_000;

/// The host's stalls seen in the trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Stalls {
    /// Gaps counted.
    pub count: u64,
    /// Their total, ns.
    pub total_ns: u64,
    /// The longest, ns.
    pub longest_ns: u64,
}

/// The samples of one time window (one scenario at one n).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CostSamples {
    /// Release: expiry (or wake-up) to switch-in, ns.
    pub release: Vec<u64>,
    /// Switch: the blocking call's entry to the next thread's return, ns.
    pub switch: Vec<u64>,
    /// Exit: the last call's entry to the switch out asleep, ns.
    pub exit: Vec<u64>,
}

/// What [`measure`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelCosts {
    /// Per window, in the order given.
    pub windows: Vec<CostSamples>,
    /// Host stalls while the measuring threads were in the kernel or
    /// waiting.
    pub stalls: Stalls,
    /// Samples left out because a stall lay inside them.
    pub excluded: u64,
    /// The trace had timer expiries (else releases start at the wake-up).
    pub saw_timers: bool,
    /// The trace had system-call events (else no switch or exit samples).
    pub saw_syscalls: bool,
}

fn measuring(comm: &Comm) -> bool {
    comm.as_string().as_bytes().starts_with(MEASURING_PREFIX)
}

/// A cost whose start is known and whose end is awaited.
#[derive(Debug, Clone, Copy)]
struct Open {
    pid: i32,
    start: u64,
}

/// Reads the costs of CPU `cpu` from `events` (in time order), sorting
/// each sample into the `windows` (`[from, to]`, ns) that holds its end
/// (samples outside every window are dropped). Gaps of more than
/// `stall_gap` ns are host stalls (module docs).
pub fn measure(events: &[Event], cpu: u32, windows: &[(u64, u64)], stall_gap: u64) -> KernelCosts {
    let mut out = KernelCosts {
        windows: vec![CostSamples::default(); windows.len()],
        ..KernelCosts::default()
    };
    let mut measured: std::collections::BTreeSet<i32> = Default::default();
    // Measuring threads that left the CPU asleep (in a system call).
    let mut asleep: std::collections::BTreeSet<i32> = Default::default();
    let mut current: i32 = -1;
    // The current thread's system call: (entry, number).
    let mut in_call: Option<(u64, i64)> = None;
    let mut last_expiry: Option<u64> = None;
    let mut waking: Option<Open> = None;
    let mut handed: Option<Open> = None;
    // Every long gap: (start, length, counted).
    let mut gaps: Vec<(u64, u64, bool)> = Vec::new();
    let mut last_ts: Option<u64> = None;
    let add = |out: &mut KernelCosts,
               gaps: &mut Vec<(u64, u64, bool)>,
               which: fn(&mut CostSamples) -> &mut Vec<u64>,
               start: u64,
               end: u64| {
        let first = gaps.partition_point(|g| g.0 < start);
        let mut stalled = false;
        for g in gaps[first..].iter_mut().filter(|g| g.0 + g.1 <= end) {
            g.2 = true;
            stalled = true;
        }
        if stalled {
            out.excluded += 1;
        } else if let Some(i) = windows.iter().position(|&(f, t)| f <= end && end <= t) {
            which(&mut out.windows[i]).push(end - start);
        }
    };
    for e in events.iter().filter(|e| e.cpu == cpu) {
        if let Some(prev) = last_ts {
            let gap = e.ts.saturating_sub(prev);
            if gap > stall_gap {
                // A woken thread waiting is not enough: a lower priority
                // one waits for the running thread's user code. A wait
                // that ends in a release is a span (below).
                let busy = handed.is_some() || (in_call.is_some() && measured.contains(&current));
                gaps.push((prev, gap, busy));
            }
        }
        last_ts = Some(e.ts);
        match e.kind {
            Kind::HrtimerExpire { .. } => {
                out.saw_timers = true;
                last_expiry = Some(e.ts);
            }
            Kind::Wakeup { pid, target_cpu } if target_cpu as u32 == cpu => {
                if measured.contains(&pid) && waking.is_none() {
                    waking = Some(Open {
                        pid,
                        start: last_expiry.unwrap_or(e.ts),
                    });
                }
                last_expiry = None;
            }
            Kind::SysEnter { id } => {
                out.saw_syscalls = true;
                in_call = Some((e.ts, id));
            }
            Kind::SysExit { .. } => {
                out.saw_syscalls = true;
                if let Some(h) = handed.take() {
                    if h.pid == current {
                        add(&mut out, &mut gaps, |s| &mut s.switch, h.start, e.ts);
                    }
                }
                in_call = None;
            }
            Kind::Switch {
                prev_pid,
                prev_state,
                prev_comm,
                next_pid,
                next_comm,
                ..
            } => {
                for (pid, comm) in [(prev_pid, prev_comm), (next_pid, next_comm)] {
                    if measuring(&comm) {
                        measured.insert(pid);
                    }
                }
                if let Some(w) = waking.take() {
                    // A release takes the CPU from a running thread or idle,
                    // not after the running one blocks.
                    if w.pid == next_pid && (runnable(prev_state) || prev_pid == 0) {
                        add(&mut out, &mut gaps, |s| &mut s.release, w.start, e.ts);
                    }
                }
                handed = None;
                let woke_asleep = asleep.remove(&next_pid);
                if measured.contains(&prev_pid) && !runnable(prev_state) {
                    asleep.insert(prev_pid);
                    if let Some(entered) = in_call
                        .filter(|&(_, id)| BLOCKING_CALLS.contains(&id) && prev_state & DEAD == 0)
                        .map(|(ts, _)| ts)
                    {
                        add(&mut out, &mut gaps, |s| &mut s.exit, entered, e.ts);
                        // Only a thread that blocked in a call returns by sys_exit.
                        if measured.contains(&next_pid) && woke_asleep {
                            handed = Some(Open {
                                pid: next_pid,
                                start: entered,
                            });
                        }
                    }
                }
                in_call = None;
                last_expiry = None;
                current = next_pid;
            }
            _ => {}
        }
    }
    for &(_, len, counted) in &gaps {
        if counted {
            out.stalls.count += 1;
            out.stalls.total_ns += len;
            out.stalls.longest_ns = out.stalls.longest_ns.max(len);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts: u64, kind: Kind) -> Event {
        // The recording thread is not used by the costs.
        Event {
            ts,
            cpu: 1,
            pid: -1,
            kind,
        }
    }

    fn switch(ts: u64, prev: (i32, &str, i64), next: (i32, &str)) -> Event {
        ev(
            ts,
            Kind::Switch {
                prev_pid: prev.0,
                prev_prio: 90,
                prev_state: prev.2,
                prev_comm: Comm::new(prev.1.as_bytes()),
                next_pid: next.0,
                next_prio: 90,
                next_comm: Comm::new(next.1.as_bytes()),
            },
        )
    }

    const HIGH: (i32, &str) = (10, "rtlab-char-high");
    const LOW: (i32, &str) = (11, "rtlab-char-low");
    const MID: (i32, &str) = (12, "rtlab-char-mid");

    /// A hand-made sequence on CPU 1 (times in ns; S = 1, asleep; R = 0):
    ///
    /// ```text
    ///   500 switch idle -> mid, 800 mid S -> low, 1000 low S -> high (all named)
    ///   2000 sys_enter (high: clock_nanosleep)   2600 switch high S -> low     exit 600
    ///   5000 hrtimer_expire  5300 wakeup high    5800 switch low R -> high     release 800
    ///   5900 sys_exit (high)                                                   (no hand-over)
    ///   7000 sys_enter (high: futex)  7400 switch high S -> mid (asleep)      exit 400, hand-over opens
    ///   8100 sys_exit (mid)  8200 sys_enter  8300 switch mid S -> low         switch 1100, exit 100
    ///   9000 hrtimer_expire  9100 wakeup high  [no event for 300 us]  309100 switch low R -> high
    ///                                                                          release left out: stall
    ///   320000 sys_exit  -  gap while high runs user code  -  900000 sys_enter: not a stall
    /// ```
    #[test]
    fn hand_made_sequence_gives_the_exact_costs_and_leaves_the_stall_out() {
        let events = vec![
            switch(500, (0, "swapper/1", 0), MID),
            switch(800, (MID.0, MID.1, 1), LOW),
            switch(1000, (LOW.0, LOW.1, 1), HIGH),
            ev(
                2000,
                Kind::SysEnter {
                    id: libc::SYS_clock_nanosleep,
                },
            ),
            switch(2600, (HIGH.0, HIGH.1, 1), LOW),
            ev(5000, Kind::HrtimerExpire { hrtimer: 7 }),
            ev(
                5300,
                Kind::Wakeup {
                    pid: HIGH.0,
                    target_cpu: 1,
                },
            ),
            switch(5800, (LOW.0, LOW.1, 0), HIGH),
            ev(
                5900,
                Kind::SysExit {
                    id: libc::SYS_clock_nanosleep,
                },
            ),
            ev(
                7000,
                Kind::SysEnter {
                    id: libc::SYS_futex,
                },
            ),
            switch(7400, (HIGH.0, HIGH.1, 1), MID),
            ev(
                8100,
                Kind::SysExit {
                    id: libc::SYS_futex,
                },
            ),
            ev(
                8200,
                Kind::SysEnter {
                    id: libc::SYS_futex,
                },
            ),
            switch(8300, (MID.0, MID.1, 1), LOW),
            ev(9000, Kind::HrtimerExpire { hrtimer: 7 }),
            ev(
                9100,
                Kind::Wakeup {
                    pid: HIGH.0,
                    target_cpu: 1,
                },
            ),
            switch(309_100, (LOW.0, LOW.1, 0), HIGH),
            ev(
                320_000,
                Kind::SysExit {
                    id: libc::SYS_clock_nanosleep,
                },
            ),
            ev(
                900_000,
                Kind::SysEnter {
                    id: libc::SYS_clock_nanosleep,
                },
            ),
        ];
        let costs = measure(&events, 1, &[(0, 6000), (6000, 1_000_000)], STALL_GAP_NS);
        assert_eq!(
            costs.windows,
            vec![
                CostSamples {
                    release: vec![800],
                    switch: vec![],
                    exit: vec![600],
                },
                CostSamples {
                    release: vec![],
                    switch: vec![1100],
                    exit: vec![400, 100],
                },
            ]
        );
        assert_eq!(costs.excluded, 1);
        assert_eq!(
            costs.stalls,
            Stalls {
                count: 1,
                total_ns: 300_000,
                longest_ns: 300_000
            }
        );
        assert!(costs.saw_timers && costs.saw_syscalls);
    }

    #[test]
    fn without_timer_events_a_release_starts_at_the_wake_up() {
        let events = vec![
            switch(100, (LOW.0, LOW.1, 1), HIGH),
            switch(200, (HIGH.0, HIGH.1, 1), LOW),
            ev(
                1000,
                Kind::Wakeup {
                    pid: HIGH.0,
                    target_cpu: 1,
                },
            ),
            switch(1250, (LOW.0, LOW.1, 0), HIGH),
            ev(
                1300,
                Kind::SysEnter {
                    id: libc::SYS_futex,
                },
            ),
            // LOW was preempted, not asleep: its next sys_exit ends no switch.
            switch(1400, (HIGH.0, HIGH.1, 1), LOW),
            ev(
                1900,
                Kind::SysExit {
                    id: libc::SYS_futex,
                },
            ),
        ];
        let costs = measure(&events, 1, &[(0, 2000)], STALL_GAP_NS);
        assert_eq!(costs.windows[0].release, vec![250]);
        assert_eq!(costs.windows[0].exit, vec![100]);
        assert!(costs.windows[0].switch.is_empty());
        assert!(!costs.saw_timers);
        assert_eq!(costs.stalls, Stalls::default());
    }
}
