//! Why a job waited: every nanosecond between its release and its end
//! that it was ready but not running (or running, but its CPU was in an
//! interrupt) gets a cause, and a missed job's lateness is split among
//! them.
//!
//! For a ready span of the job's thread on CPU c, each piece of c's
//! occupancy in it is charged to:
//!
//! | who had the CPU | cause |
//! |---|---|
//! | an interrupt handler / softirq (carved out first) | `irq` / `softirq` |
//! | a thread of the task set | `set:NAME` |
//! | idle or a lower class, the thread **passed over** (switched out runnable, or the CPU given to that holder while the thread was runnable), SCHED_DEADLINE | `throttled:deadline` (budget exhausted, CBS) |
//! | the same, SCHED_FIFO/RR | `throttled:rt` (RT throttling, or the fair server) |
//! | idle since before the wake-up | `idle-or-host` (wake-up latency; the guest CPU idle while the thread was runnable: the host) |
//! | any other thread (for a lower class: one that held the CPU since before the wake-up, until the kernel preempted it) | `thread:COMM(POLICY)` |
//!
//! While the thread runs, time its CPU spent in interrupts is charged to
//! `irq` / `softirq` too, and time it spent on the task's previous job
//! (between this job's release and that job's finish) to `backlog`.
//!
//! **Lateness split** (missed jobs): with lateness L = end - deadline and
//! the waits w_i summing to W, a cause gets L * w_i / W when W >= L;
//! otherwise each gets w_i and the rest, X = L - W, is the time the job
//! was on its CPU beyond its deadline. That time is split in two when the
//! job's own CPU time C is known ([`SetThreads::own_cpu`]): the thread was
//! on the CPU for R ns (its running spans, interrupts carved out), of
//! which C - I was its own work (I: the interrupts' time in R's job, which
//! the thread's CPU clock also counts on a kernel without IRQ time
//! accounting, [`SetThreads::irq_in_task_time`]) and S = R - (C - I) was
//! not the job's although the thread was on the CPU: the vCPU stalled by
//! the host (paravirtual steal is not charged to the thread). `host-stall`
//! gets min(X, S) and `execution` the rest, X - min(X, S): "execution"
//! is the job's own work only. Integer shares; the rounding remainder goes
//! to the largest.

use std::collections::BTreeMap;

pub use rtlab_model::kernel_trace::MissCause;
use serde::Serialize;

use crate::schedule::{Schedule, ThreadState};

/// The scheduling class of the set's threads, which decides what a
/// runnable thread switched out for idle means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadClass {
    /// SCHED_DEADLINE.
    Deadline,
    /// SCHED_FIFO or SCHED_RR.
    RealTime,
    /// SCHED_OTHER.
    Other,
}

/// The kinds of cause, one column each in the job rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum CauseKind {
    /// Another task of the set.
    SetTask,
    /// Any other thread.
    OtherThread,
    /// A hard interrupt handler.
    Irq,
    /// A softirq.
    Softirq,
    /// SCHED_DEADLINE budget exhausted or RT throttling / the fair server.
    Throttled,
    /// Nothing visible: the CPU idle in the guest while the thread was
    /// runnable (wake-up latency, or the host).
    IdleOrHost,
    /// Its own task's previous job still running (a late predecessor
    /// under `--on-miss continue`).
    Backlog,
}

impl CauseKind {
    /// Column suffix.
    pub fn column(self) -> &'static str {
        match self {
            CauseKind::SetTask => "set",
            CauseKind::OtherThread => "other",
            CauseKind::Irq => "irq",
            CauseKind::Softirq => "softirq",
            CauseKind::Throttled => "throttled",
            CauseKind::IdleOrHost => "idle",
            CauseKind::Backlog => "backlog",
        }
    }

    /// Every kind, in column order.
    pub const ALL: [CauseKind; 7] = [
        CauseKind::SetTask,
        CauseKind::OtherThread,
        CauseKind::Irq,
        CauseKind::Softirq,
        CauseKind::Throttled,
        CauseKind::IdleOrHost,
        CauseKind::Backlog,
    ];
}

/// A job as the executor recorded it, in absolute trace-clock times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobWindow {
    /// Task index in the set.
    pub task: usize,
    /// Release (ns, absolute).
    pub release: u64,
    /// Absolute deadline.
    pub deadline: u64,
    /// Finish, or the run's end for a job that did not finish.
    pub end: u64,
    /// When the executor started it (absolute), if it did.
    pub start: Option<u64>,
    /// When the task's previous job finished (absolute), if it did: until
    /// then, the thread was busy with it.
    pub previous_finish: Option<u64>,
}

/// What the kernel says about one job.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct JobKernel {
    /// Its thread's wake-up (absolute ns), when one fell in the window.
    pub wake: Option<u64>,
    /// When it first ran in the window.
    pub first_run: Option<u64>,
    /// Times its thread was switched out while runnable.
    pub preemptions: u32,
    /// Times its thread left the CPU in the window (any reason).
    pub switches: u32,
    /// Time waited, by cause label (`set:t2`, `irq`, ...).
    pub waits: BTreeMap<String, u64>,
    /// Time waited, by kind.
    pub by_kind: BTreeMap<CauseKind, u64>,
    /// For a missed job: its lateness split by cause label
    /// (`execution` for its own time beyond the deadline).
    pub lateness: BTreeMap<String, u64>,
    /// The trace does not cover the job (no span of its thread in it).
    pub untraced: bool,
    /// Time its thread was on the CPU in the window, interrupts carved
    /// out (ns).
    pub on_cpu: u64,
    /// Interrupt and softirq time while its thread was on the CPU (ns).
    pub interrupted_on_cpu: u64,
}

impl JobKernel {
    /// The label with the most wait (or lateness, for a missed job);
    /// `none` when it never waited.
    pub fn main_cause(&self) -> String {
        let from = if self.lateness.is_empty() {
            &self.waits
        } else {
            &self.lateness
        };
        from.iter()
            .max_by_key(|(label, v)| (**v, std::cmp::Reverse((*label).clone())))
            .map_or_else(
                || {
                    if self.untraced {
                        "untraced".into()
                    } else {
                        "none".into()
                    }
                },
                |(l, _)| l.clone(),
            )
    }

    /// `label=ns;label=ns` of the lateness split (empty when not missed).
    pub fn lateness_text(&self) -> String {
        self.lateness
            .iter()
            .map(|(l, v)| format!("{l}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// The set as the attribution needs it.
#[derive(Debug, Clone)]
pub struct SetThreads {
    /// Per task: its name and thread id.
    pub tasks: Vec<(String, Option<i32>)>,
    /// The class of every task thread.
    pub class: ThreadClass,
    /// Per task: each job's own CPU time (ns, its C as the executor burns
    /// it on the thread's CPU clock), when it is the same for every job
    /// (no phases); empty or `None`: unknown, the lateness beyond the waits
    /// stays `execution` whole.
    pub own_cpu: Vec<Option<u64>>,
    /// The thread's CPU clock counts interrupt time (a kernel without
    /// `CONFIG_IRQ_TIME_ACCOUNTING`, as here).
    pub irq_in_task_time: bool,
}

impl SetThreads {
    fn task_of(&self, pid: i32) -> Option<&str> {
        self.tasks
            .iter()
            .find(|(_, t)| *t == Some(pid))
            .map(|(n, _)| n.as_str())
    }
}

/// The policy a kernel priority means: -1 deadline, 0..=99 fifo/rr,
/// else other.
pub fn policy_of_prio(prio: i32) -> &'static str {
    match prio {
        p if p < 0 => "deadline",
        p if p < 100 => "fifo/rr",
        _ => "other",
    }
}

/// Attributes one job's waits.
pub fn attribute(
    schedule: &Schedule,
    set: &SetThreads,
    job: &JobWindow,
    missed: bool,
) -> JobKernel {
    let mut k = JobKernel::default();
    let Some(tid) = set.tasks.get(job.task).and_then(|(_, t)| *t) else {
        k.untraced = true;
        return k;
    };
    let (a, b) = (job.release, job.end.max(job.release));
    let spans = schedule.spans.get(&tid).map_or(&[][..], |s| &s[..]);
    if spans.is_empty() || schedule.last < b || schedule.first > a {
        k.untraced = true;
    }
    k.wake = schedule
        .wakes
        .get(&tid)
        .and_then(|w| w.iter().copied().find(|&t| t >= a && t <= b));
    if let Some(outs) = schedule.switch_outs.get(&tid) {
        let from = outs.partition_point(|(t, _)| *t < a);
        for &(_, runnable) in outs[from..].iter().take_while(|(t, _)| *t <= b) {
            k.switches += 1;
            k.preemptions += u32::from(runnable);
        }
    }
    let first = spans.partition_point(|s| s.end <= a);
    let add = |k: &mut JobKernel, label: String, kind: CauseKind, ns: u64| {
        if ns > 0 {
            *k.waits.entry(label).or_default() += ns;
            *k.by_kind.entry(kind).or_default() += ns;
        }
    };
    for span in spans[first..].iter().take_while(|s| s.start < b) {
        let (s, e) = (span.start.max(a), span.end.min(b));
        if e <= s {
            continue;
        }
        let (irq, soft) = schedule.interrupted(span.cpu, s, e);
        add(&mut k, "irq".into(), CauseKind::Irq, irq);
        add(&mut k, "softirq".into(), CauseKind::Softirq, soft);
        match span.state {
            ThreadState::Running => {
                let busy_until = job.previous_finish.unwrap_or(0).clamp(s, e);
                // Its own job's part of the span (after the previous
                // job's finish).
                if e > busy_until {
                    let (i, so) = schedule.interrupted(span.cpu, busy_until, e);
                    k.on_cpu += (e - busy_until).saturating_sub(i + so);
                    k.interrupted_on_cpu += i + so;
                }
                // Before the previous job's finish the thread was busy
                // with it (after it, up to the job's start, it was on its
                // own release path: not a wait).
                let busy = (busy_until - s).saturating_sub(irq + soft);
                add(&mut k, "backlog".into(), CauseKind::Backlog, busy);
                if span.start >= a {
                    k.first_run.get_or_insert(span.start);
                } else if let Some(own) = job.start.filter(|t| *t < e) {
                    k.first_run.get_or_insert(own.max(s));
                }
            }
            ThreadState::Ready { switched_out } => {
                for (occ, took_cpu) in schedule.occupants(span.cpu, s, e) {
                    let (i, so) = schedule.interrupted(span.cpu, occ.start, occ.end);
                    let ns = (occ.end - occ.start).saturating_sub(i + so);
                    // The kernel passed the thread over: switched it out
                    // runnable, or gave the CPU to this holder while it
                    // was runnable.
                    let passed_over = switched_out || took_cpu > span.start;
                    let (label, kind) = classify(schedule, set, occ.pid, passed_over);
                    add(&mut k, label, kind, ns);
                }
            }
        }
    }
    if missed {
        let own = set.own_cpu.get(job.task).copied().flatten();
        let stall = own.map(|c| {
            let work = if set.irq_in_task_time {
                c.saturating_sub(k.interrupted_on_cpu)
            } else {
                c
            };
            k.on_cpu.saturating_sub(work)
        });
        split_lateness(&mut k, b.saturating_sub(job.deadline), stall);
    }
    k
}

/// Who had the CPU, as a cause (see the module table).
fn classify(
    schedule: &Schedule,
    set: &SetThreads,
    pid: i32,
    passed_over: bool,
) -> (String, CauseKind) {
    if let Some(name) = set.task_of(pid) {
        return (format!("set:{name}"), CauseKind::SetTask);
    }
    let throttled = match set.class {
        ThreadClass::Deadline => "throttled:deadline",
        ThreadClass::RealTime => "throttled:rt",
        ThreadClass::Other => "",
    };
    if pid == 0 {
        return if passed_over && !throttled.is_empty() {
            (throttled.into(), CauseKind::Throttled)
        } else {
            ("idle-or-host".into(), CauseKind::IdleOrHost)
        };
    }
    let info = schedule.threads.get(&pid);
    let prio = info.map_or(120, |i| i.prio);
    let lower = match set.class {
        ThreadClass::Deadline => prio >= 0,
        ThreadClass::RealTime => prio >= 100,
        ThreadClass::Other => false,
    };
    if passed_over && lower && !throttled.is_empty() {
        return (throttled.into(), CauseKind::Throttled);
    }
    let comm = info.map_or_else(|| format!("pid{pid}"), |i| i.comm.as_string());
    (
        format!("thread:{comm}({})", policy_of_prio(prio)),
        CauseKind::OtherThread,
    )
}

/// Splits `late` ns among the waits, and beyond them between
/// `host-stall` (at most `stall`: on the CPU, not the job's) and
/// `execution` (see the module docs).
fn split_lateness(k: &mut JobKernel, late: u64, stall: Option<u64>) {
    if late == 0 {
        return;
    }
    let total: u64 = k.waits.values().sum();
    if total < late {
        k.lateness = k.waits.clone();
        let beyond = late - total;
        let stalled = stall.unwrap_or(0).min(beyond);
        if stalled > 0 {
            k.lateness.insert("host-stall".into(), stalled);
        }
        if beyond > stalled {
            k.lateness.insert("execution".into(), beyond - stalled);
        }
        return;
    }
    let mut given = 0;
    for (label, w) in &k.waits {
        let share = (u128::from(late) * u128::from(*w) / u128::from(total)) as u64;
        given += share;
        k.lateness.insert(label.clone(), share);
    }
    if let Some((_, v)) = k
        .lateness
        .iter_mut()
        .max_by_key(|(l, v)| (**v, std::cmp::Reverse((*l).clone())))
    {
        *v += late - given;
    }
    k.lateness.retain(|_, v| *v > 0);
}

/// Whether a cause label is a disturbance from outside the set: another
/// thread (`thread:...`), an interrupt (`irq`, `softirq`), the host
/// (`host-stall`) or the CPU idle in the guest while the thread was
/// runnable (`idle-or-host`: wake-up latency or the host). The set's own
/// causes (`set:...`, `execution`, `backlog`) and throttling (the kernel's
/// rule for the set's own load, `throttled:...`) are not.
pub fn outside_the_set(label: &str) -> bool {
    label.starts_with("thread:")
        || matches!(label, "irq" | "softirq" | "host-stall" | "idle-or-host")
}

/// Sums missed jobs' lateness splits into "misses by cause", most
/// lateness first.
#[derive(Debug, Clone, Default)]
pub struct MissesByCause {
    by: BTreeMap<String, (u64, u64)>,
}

impl MissesByCause {
    /// Adds a missed job.
    pub fn add(&mut self, k: &JobKernel) {
        for (label, v) in &k.lateness {
            self.by.entry(label.clone()).or_default().1 += v;
        }
        self.by.entry(k.main_cause()).or_default().0 += 1;
    }

    /// The lines, most lateness first.
    pub fn lines(&self) -> Vec<MissCause> {
        let mut v: Vec<MissCause> = self
            .by
            .iter()
            .map(|(c, (m, l))| MissCause {
                cause: c.clone(),
                misses: *m,
                lateness_ns: *l,
            })
            .collect();
        v.sort_by(|x, y| {
            y.lateness_ns
                .cmp(&x.lateness_ns)
                .then(y.misses.cmp(&x.misses))
                .then(x.cause.cmp(&y.cause))
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disturbance_is_a_cause_from_outside_the_set() {
        for label in [
            "thread:cc1(other)",
            "irq",
            "softirq",
            "host-stall",
            "idle-or-host",
        ] {
            assert!(outside_the_set(label), "{label}");
        }
        for label in [
            "set:T1",
            "execution",
            "backlog",
            "throttled:rt",
            "throttled:deadline",
            "none",
        ] {
            assert!(!outside_the_set(label), "{label}");
        }
    }

    fn waits(pairs: &[(&str, u64)]) -> JobKernel {
        JobKernel {
            waits: pairs.iter().map(|(l, v)| (l.to_string(), *v)).collect(),
            ..JobKernel::default()
        }
    }

    /// L = 3 ms over waits of 4 ms (set:a) and 2 ms (irq): shares 2 ms and
    /// 1 ms. L = 10 ms over the same 6 ms: each keeps its wait and
    /// `execution` gets the other 4 ms.
    #[test]
    fn lateness_is_split_in_proportion_to_the_waits_or_beyond_them_to_execution() {
        let mut k = waits(&[("set:a", 4_000_000), ("irq", 2_000_000)]);
        split_lateness(&mut k, 3_000_000, None);
        assert_eq!(k.lateness["set:a"], 2_000_000);
        assert_eq!(k.lateness["irq"], 1_000_000);
        assert_eq!(k.main_cause(), "set:a");
        let mut k = waits(&[("set:a", 4_000_000), ("irq", 2_000_000)]);
        split_lateness(&mut k, 10_000_000, None);
        assert_eq!(k.lateness["execution"], 4_000_000);
        assert_eq!(k.lateness["set:a"], 4_000_000);
        // Rounding: 1 ns over three equal waits goes to one of them.
        let mut k = waits(&[("a", 1), ("b", 1), ("c", 1)]);
        split_lateness(&mut k, 1, None);
        assert_eq!(k.lateness.values().sum::<u64>(), 1);
    }

    /// A hand-made trace of CPU 1: t (pid 10, D 4 ms) is woken at 0 and
    /// runs from 0 to 6 ms, IRQ 19 in 1..1.5 ms. Late by L = 2 ms; waits W
    /// = 0.5 ms (the IRQ); on the CPU R = 5.5 ms. With C = 3 ms counted on
    /// a CPU clock that includes the IRQ, its own work was 2.5 ms, so 3 ms
    /// of R were not the job's (the host): of X = L - W = 1.5 ms,
    /// host-stall 1.5 ms, execution 0. With C = 5.5 ms the stall is 0.5 ms
    /// and execution 1 ms; with C unknown, execution keeps all 1.5 ms.
    #[test]
    fn execution_beyond_the_waits_is_split_into_own_work_and_host_stall() {
        use crate::decode::{Comm, Event, Kind};
        let o = 1_000_000_000u64;
        let ms = |x: f64| o + (x * 1e6) as u64;
        let switch = |ts, prev: (i32, i64), next: i32| Event {
            ts,
            cpu: 1,
            pid: prev.0,
            kind: Kind::Switch {
                prev_pid: prev.0,
                prev_prio: if prev.0 == 0 { 120 } else { 90 },
                prev_state: prev.1,
                prev_comm: Comm::new(if prev.0 == 0 { b"swapper/1" } else { b"t" }),
                next_pid: next,
                next_prio: if next == 0 { 120 } else { 90 },
                next_comm: Comm::new(if next == 0 { b"swapper/1" } else { b"t" }),
            },
        };
        let on = |ts, pid, kind| Event {
            ts,
            cpu: 1,
            pid,
            kind,
        };
        let events = vec![
            switch(ms(-1.0), (0, 0), 0),
            on(
                ms(0.0),
                0,
                Kind::Waking {
                    pid: 10,
                    target_cpu: 1,
                },
            ),
            switch(ms(0.0), (0, 0), 10),
            on(ms(1.0), 10, Kind::IrqEntry { irq: 19 }),
            on(ms(1.5), 10, Kind::IrqExit { irq: 19 }),
            switch(ms(6.0), (10, 1), 0),
            switch(ms(7.0), (0, 0), 0),
        ];
        let schedule = Schedule::build(&events, &[10]);
        let job = JobWindow {
            task: 0,
            release: ms(0.0),
            deadline: ms(4.0),
            end: ms(6.0),
            start: Some(ms(0.0)),
            previous_finish: None,
        };
        let explain = |own: Option<u64>| {
            let set = SetThreads {
                tasks: vec![("t".into(), Some(10))],
                class: ThreadClass::RealTime,
                own_cpu: vec![own],
                irq_in_task_time: true,
            };
            attribute(&schedule, &set, &job, true)
        };
        let k = explain(Some(3_000_000));
        assert_eq!(k.on_cpu, 5_500_000);
        assert_eq!(k.interrupted_on_cpu, 500_000);
        let lateness = |k: &JobKernel| {
            k.lateness
                .iter()
                .map(|(l, v)| (l.clone(), *v))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            lateness(&k),
            [
                ("host-stall".to_string(), 1_500_000),
                ("irq".to_string(), 500_000)
            ]
        );
        assert_eq!(
            lateness(&explain(Some(5_500_000))),
            [
                ("execution".to_string(), 1_000_000),
                ("host-stall".to_string(), 500_000),
                ("irq".to_string(), 500_000)
            ]
        );
        assert_eq!(
            lateness(&explain(None)),
            [
                ("execution".to_string(), 1_500_000),
                ("irq".to_string(), 500_000)
            ]
        );
    }

    #[test]
    fn priorities_name_their_policies() {
        assert_eq!(policy_of_prio(-1), "deadline");
        assert_eq!(policy_of_prio(1), "fifo/rr");
        assert_eq!(policy_of_prio(120), "other");
    }
}
