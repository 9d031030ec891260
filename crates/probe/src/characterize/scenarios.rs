//! The worst cases of paper 004 §3, set up with real SCHED_FIFO threads on
//! one CPU, and measured with shared `CLOCK_MONOTONIC` stamps. `n` counts
//! every thread of the scenario on the CPU. Each function builds the
//! threads of one batch of `count` events; [`super`] runs the batches.
//!
//! Every measured gap also holds up to one iteration of the stamping loop
//! (a clock read, tens of ns), and on a virtual machine whatever the
//! hypervisor adds (exits, steal): this is the cost a task sees.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use rtlab_model::Nanos;

use super::batch::{Recorder, ThreadSpec};
use rtlab_sys::clock::{monotonic_now, wait_until};
use rtlab_sys::futex::{futex_wait, futex_wake};
use rtlab_sys::time::clock_gettime;

/// Priority of the thread that preempts, exits or spins above the rest.
pub const HIGH: u8 = 80;
/// Priority of the preempted / observing thread, and of the ready threads
/// above the released one in `nonpreempt`.
pub const MID: u8 = 60;
/// Priority of the ready threads below the running one (`preempt`), the
/// sleeping ones (`exit`) and the released one (`nonpreempt`).
pub const LOW: u8 = 40;

/// Time from the batch start to the first event: every thread has reached
/// its role by then.
const LEAD: Nanos = Nanos::from_ms(1);
/// Release period of `preempt` and `exit`.
pub const SWITCH_PERIOD: Nanos = Nanos::from_us(200);
/// Release period of `nonpreempt`.
pub const NONPREEMPT_PERIOD: Nanos = Nanos::from_us(500);
/// In `nonpreempt`, the spinner wakes this long before each release...
const SPINNER_EARLY: Nanos = Nanos::from_us(150);
/// ...the ready threads are released this long before it...
const READY_EARLY: Nanos = Nanos::from_us(100);
/// ...and the spinner looks this long after it for the release's gap.
const NONPREEMPT_WINDOW: Nanos = Nanos::from_us(50);
/// A release that finds the preempted thread's last stamp older than this
/// is not counted (that thread was not running).
const RUNNING_SLACK: Nanos = Nanos::from_us(20);
/// How long a ping-pong thread waits for its turn before giving up.
const TURN_TIMEOUT: Nanos = Nanos::from_ms(100);

/// `d * k`, saturating (batch lengths are far from overflowing).
fn times(d: Nanos, k: u64) -> Nanos {
    Nanos::from_ns(d.as_ns().saturating_mul(k))
}

fn spec(
    name: &str,
    i: usize,
    priority: u8,
    capacity: usize,
    role: super::batch::Role,
) -> ThreadSpec {
    ThreadSpec {
        name: format!("rtlab-char-{name}{i}"),
        priority,
        capacity,
        role,
    }
}

/// Adds `count` threads (LOW) that sleep until `wake` after the start and
/// then end: in the run queue from then on while a higher-priority thread
/// runs, or, with `wake` past the batch, asleep with a timer set.
fn bystanders(threads: &mut Vec<ThreadSpec>, name: &str, count: usize, wake: Nanos) {
    for i in 0..count {
        threads.push(spec(
            name,
            i,
            LOW,
            0,
            Box::new(move |start, _| wait_until(start + wake)),
        ));
    }
}

/// A batch: its threads and its planned length.
pub struct Plan {
    /// The threads.
    pub threads: Vec<ThreadSpec>,
    /// Start to planned end.
    pub length: Nanos,
    /// Which thread records the samples.
    pub recorder: usize,
}

/// `preempt(n)`: thread `low` (MID) spins, publishing its latest stamp;
/// `n - 2` threads are ready below it (LOW, released just after the start,
/// so they wait in the run queue); thread `high` (HIGH) sleeps to absolute
/// release times `SWITCH_PERIOD` apart and, first thing on waking, takes
/// `its stamp - low's last stamp`: the timer interrupt, the wake-up, the
/// switch to `high` and the return to user space. Not included: how late
/// the timer fires after the release time (`low` keeps stamping until the
/// interrupt arrives).
pub fn preempt(n: usize, count: usize, stop: &'static AtomicBool) -> Plan {
    let last = Arc::new(AtomicU64::new(0));
    let length = LEAD + times(SWITCH_PERIOD, count as u64) + Nanos::from_us(100);
    let mut threads = Vec::with_capacity(n);
    let seen = last.clone();
    threads.push(spec(
        "high",
        0,
        HIGH,
        count,
        Box::new(move |start, rec: &mut Recorder| {
            for k in 0..count as u64 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let release = start + LEAD + times(SWITCH_PERIOD, k);
                wait_until(release);
                let now = monotonic_now().as_ns();
                let before = seen.load(Ordering::Relaxed);
                if before + RUNNING_SLACK.as_ns() >= release.as_ns() && now > before {
                    rec.push(now - before);
                } else {
                    rec.invalid += 1;
                }
            }
        }),
    ));
    threads.push(spec(
        "low",
        0,
        MID,
        0,
        Box::new(move |start, _| {
            let end = start + length;
            wait_until(start);
            loop {
                let now = monotonic_now();
                last.store(now.as_ns(), Ordering::Relaxed);
                if now >= end || stop.load(Ordering::Relaxed) {
                    break;
                }
            }
        }),
    ));
    bystanders(
        &mut threads,
        "ready",
        n.saturating_sub(2),
        Nanos::from_us(500),
    );
    Plan {
        threads,
        length,
        recorder: 0,
    }
}

/// `exit(n)`: thread `high` (HIGH) is released every `SWITCH_PERIOD`; on
/// each release it stamps its last instruction and blocks again (an
/// absolute `clock_nanosleep`). The observer (MID) spins and, the first
/// time it runs after `high`'s stamp changed, takes `its stamp - high's
/// last stamp`: the blocking system call, the pick of the next thread, the
/// switch to the observer. `n - 2` threads sleep with timers pending until
/// after the batch (paper 004's "start queue").
pub fn exit(n: usize, count: usize, stop: &'static AtomicBool) -> Plan {
    let stamp = Arc::new(AtomicU64::new(0));
    let seq = Arc::new(AtomicU64::new(0));
    let releases_end = LEAD + times(SWITCH_PERIOD, count as u64) + Nanos::from_us(100);
    let length = releases_end + Nanos::from_ms(1);
    let (stamp_w, seq_w) = (stamp.clone(), seq.clone());
    let mut threads = Vec::with_capacity(n);
    threads.push(spec(
        "high",
        0,
        HIGH,
        0,
        Box::new(move |start, _| {
            for k in 0..count as u64 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                wait_until(start + LEAD + times(SWITCH_PERIOD, k));
                stamp_w.store(monotonic_now().as_ns(), Ordering::Relaxed);
                seq_w.store(k + 1, Ordering::Release);
            }
        }),
    ));
    threads.push(spec(
        "observer",
        0,
        MID,
        count,
        Box::new(move |start, rec: &mut Recorder| {
            let end = start + releases_end;
            wait_until(start);
            let mut seen = 0;
            loop {
                let s = seq.load(Ordering::Acquire);
                let now = monotonic_now();
                if s != seen {
                    rec.push(now.as_ns().saturating_sub(stamp.load(Ordering::Relaxed)));
                    seen = s;
                }
                if now >= end || stop.load(Ordering::Relaxed) {
                    break;
                }
            }
        }),
    ));
    bystanders(&mut threads, "sleeping", n.saturating_sub(2), length);
    Plan {
        threads,
        length,
        recorder: 1,
    }
}

/// `nonpreempt(n)`: the spinner (HIGH) wakes `SPINNER_EARLY` before each
/// release and spins; `n - 2` threads (MID) are released just before, so
/// they wait in the run queue above the released one; the released thread
/// (LOW) sleeps to the release time. Its timer interrupt and enqueue take
/// the CPU from the spinner without a switch; the cost is the first gap of
/// at least `threshold` in the spinner's stamps that ends at or after the
/// release time. After the window the spinner sleeps, so the others run
/// and block again for the next release. Not included: the timer's
/// lateness (the spinner stamps until the interrupt arrives).
pub fn nonpreempt(n: usize, count: usize, threshold: Nanos, stop: &'static AtomicBool) -> Plan {
    let length = LEAD + times(NONPREEMPT_PERIOD, count as u64);
    let release = move |start: Nanos, k: u64| start + LEAD + times(NONPREEMPT_PERIOD, k);
    let mut threads = Vec::with_capacity(n);
    threads.push(spec(
        "spinner",
        0,
        HIGH,
        count,
        Box::new(move |start, rec: &mut Recorder| {
            for k in 0..count as u64 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let at = release(start, k);
                wait_until(at.saturating_sub(SPINNER_EARLY));
                let mut prev = monotonic_now();
                if prev + RUNNING_SLACK > at {
                    rec.invalid += 1;
                    continue;
                }
                let window_end = at + NONPREEMPT_WINDOW;
                loop {
                    let now = monotonic_now();
                    if now >= at && now.saturating_sub(prev) >= threshold {
                        rec.push(now.saturating_sub(prev).as_ns());
                        break;
                    }
                    if now >= window_end {
                        rec.invalid += 1;
                        break;
                    }
                    prev = now;
                }
            }
        }),
    ));
    for i in 0..n.saturating_sub(2) {
        threads.push(spec(
            "ready",
            i,
            MID,
            0,
            Box::new(move |start, _| {
                for k in 0..count as u64 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    wait_until(release(start, k).saturating_sub(READY_EARLY));
                }
            }),
        ));
    }
    threads.push(spec(
        "released",
        0,
        LOW,
        0,
        Box::new(move |start, _| {
            for k in 0..count as u64 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                wait_until(release(start, k));
            }
        }),
    ));
    Plan {
        threads,
        length,
        recorder: 0,
    }
}

/// In the lone spinner's log, the second word of a coarse-clock change
/// (a gap's is its length, never 0).
pub const COARSE_CHANGE: u64 = 0;

/// The lone spinner (HIGH) of the `timer` scenario: spins for `length`
/// reading `CLOCK_MONOTONIC` and `CLOCK_MONOTONIC_COARSE`, and logs pairs:
/// every gap of at least `threshold` between consecutive stamps as
/// `(start, length)` (start = the stamp before the gap), and every change
/// of the coarse clock as `(the first stamp that saw it, COARSE_CHANGE)`.
pub fn lone_spinner(
    length: Nanos,
    threshold: Nanos,
    pairs: usize,
    stop: &'static AtomicBool,
) -> Plan {
    let threads = vec![spec(
        "spinner",
        0,
        HIGH,
        2 * pairs,
        Box::new(move |start, rec: &mut Recorder| {
            wait_until(start);
            let end = start + length;
            let mut prev = monotonic_now();
            let mut coarse = coarse_now();
            let log = |rec: &mut Recorder, a: u64, b: u64| {
                if rec.has_room(2) {
                    rec.push(a);
                    rec.push(b);
                } else {
                    rec.dropped += 1;
                }
            };
            loop {
                let now = monotonic_now();
                let c = coarse_now();
                let gap = now.saturating_sub(prev);
                if gap >= threshold {
                    log(rec, prev.as_ns(), gap.as_ns());
                }
                if c != coarse {
                    log(rec, now.as_ns(), COARSE_CHANGE);
                    coarse = c;
                }
                prev = now;
                if now >= end || stop.load(Ordering::Relaxed) {
                    break;
                }
            }
        }),
    )];
    Plan {
        threads,
        length,
        recorder: 0,
    }
}

/// `CLOCK_MONOTONIC_COARSE` in ns (0 if it cannot be read).
#[inline]
fn coarse_now() -> u64 {
    clock_gettime(libc::CLOCK_MONOTONIC_COARSE).map_or(0, Nanos::as_ns)
}

/// Calibration: a lone spinner (HIGH) counts its loop iterations over
/// `length`; records `[iterations, elapsed ns]`.
pub fn calibration(length: Nanos, stop: &'static AtomicBool) -> Plan {
    let threads = vec![spec(
        "calibrate",
        0,
        HIGH,
        2,
        Box::new(move |start, rec: &mut Recorder| {
            wait_until(start);
            let first = monotonic_now();
            let mut iterations = 0u64;
            let last = loop {
                iterations += 1;
                std::hint::black_box(coarse_now());
                let now = monotonic_now();
                if now >= first + length || stop.load(Ordering::Relaxed) {
                    break now;
                }
            };
            rec.push(iterations);
            rec.push(last.saturating_sub(first).as_ns());
        }),
    )];
    Plan {
        threads,
        length: length + Nanos::from_ms(1),
        recorder: 0,
    }
}

/// The cross-check, lmbench `lat_ctx` style on futexes: two threads (MID,
/// equal priority) hand the CPU to each other. Each, on its turn, stamps
/// its first instruction, passes the turn (store + `FUTEX_WAKE`: the other
/// becomes ready but, at equal FIFO priority, does not preempt), stamps
/// its last instruction and blocks in `FUTEX_WAIT`. A sample is `first
/// stamp - the other's last stamp`: one blocking futex system call, the
/// pick and the switch, the return to user space. Each thread's first turn
/// is not counted (it follows the start, not a switch). `count` samples.
pub fn ping_pong(count: usize, stop: &'static AtomicBool) -> Plan {
    let turns = count.div_ceil(2) as u64 + 1;
    let turn = Arc::new(AtomicU32::new(0));
    let out = Arc::new(AtomicU64::new(0));
    let length = Nanos::from_ms(10) + times(Nanos::from_us(50), count as u64);
    let threads = (0..2u32)
        .map(|me| {
            let (turn, out) = (turn.clone(), out.clone());
            spec(
                "pingpong",
                me as usize,
                MID,
                turns as usize,
                Box::new(move |start, rec: &mut Recorder| {
                    wait_until(start);
                    let give_up = start + length;
                    let other = 1 - me;
                    for i in 0..turns {
                        while turn.load(Ordering::Acquire) != me {
                            if stop.load(Ordering::Relaxed) || monotonic_now() >= give_up {
                                return;
                            }
                            let _ = futex_wait(&turn, other, TURN_TIMEOUT);
                        }
                        let now = monotonic_now().as_ns();
                        if i > 0 {
                            rec.push(now.saturating_sub(out.load(Ordering::Relaxed)));
                        }
                        turn.store(other, Ordering::Release);
                        let _ = futex_wake(&turn, 1);
                        out.store(monotonic_now().as_ns(), Ordering::Relaxed);
                    }
                }),
            )
        })
        .collect();
    Plan {
        threads,
        length,
        recorder: usize::MAX,
    }
}

/// What the ping-pong's samples hold besides the switch: one `FUTEX_WAIT`
/// that returns at once (the word differs), timed alone by one thread.
pub fn futex_round_trip(count: usize, stop: &'static AtomicBool) -> Plan {
    let threads = vec![spec(
        "futex",
        0,
        MID,
        count,
        Box::new(move |start, rec: &mut Recorder| {
            wait_until(start);
            let word = AtomicU32::new(0);
            for _ in 0..count {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let t = monotonic_now();
                let _ = futex_wait(&word, 1, TURN_TIMEOUT);
                rec.push(monotonic_now().saturating_sub(t).as_ns());
            }
        }),
    )];
    Plan {
        threads,
        length: Nanos::from_ms(10) + times(Nanos::from_us(20), count as u64),
        recorder: 0,
    }
}
