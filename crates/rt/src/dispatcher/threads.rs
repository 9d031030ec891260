//! The real platform: task threads that run the jobs the dispatcher
//! orders, and the dispatcher's side of the words they share.
//!
//! **Enacting a decision.** Every task thread is SCHED_FIFO, pinned to its
//! dispatcher's CPU. A thread ordered to run is at [`RUN_PRIORITY`]; every
//! other one is at [`WAIT_PRIORITY`] or blocked on its futex. The
//! dispatcher, at [`DISPATCHER_PRIORITY`] on the same CPU, never runs at
//! the same time as a task thread of its CPU: when it wakes it has the CPU,
//! so what the threads posted is final while it decides. To run job J it
//! writes J's order (job, demand, lock steps it may pass), raises J's
//! thread to the running priority (one `sched_setattr`, only if it was
//! lowered) and wakes it if it was blocked (one `futex_wake`); to preempt
//! it lowers the running thread to the waiting priority. When the
//! dispatcher goes back to sleep, the kernel switches to the one thread at
//! the running priority. A preempted thread keeps its place in the kernel
//! as runnable (the kernel trace sees it waiting, as it should); should the
//! CPU ever fall idle while it is runnable, it runs at the waiting priority
//! only long enough to see that it has no order and to block.
//!
//! **What the threads post**, without allocating or locking: the execution
//! time of their current job (their `CLOCK_THREAD_CPUTIME_ID` since the job
//! began, stored at every clock reading of the burn loop), the clock
//! reading at which they began running after each order (the dispatch
//! latency), the job they finished and when, and the lock step they wait
//! at. A post that needs a decision (done, a lock step) rings the
//! dispatcher's doorbell: an atomic counter and a `futex_wake`.
//!
//! **Stopping.** Every loop of a thread checks the run's stop flag, and
//! whoever raises it (the dispatcher at the end, the watchdog, a dying
//! dispatcher, the coordinator) wakes every blocked thread, so every
//! thread ends once it is raised.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use rtlab_host::policy::{self, Policy};
use rtlab_model::Nanos;
use rtlab_sys::clock::{monotonic_now, thread_cpu_time};
use rtlab_sys::futex::{futex_wait, futex_wait_until, futex_wake};

use super::engine::{Platform, Post, Step};
use super::global::CpuPlatform;
use crate::stream::RecordSender;

/// The dispatcher's SCHED_FIFO priority: the top one.
pub const DISPATCHER_PRIORITY: u8 = 99;
/// The priority of the one task thread ordered to run on a CPU.
pub const RUN_PRIORITY: u8 = 98;
/// The priority of every other task thread of the CPU (preempted, or
/// blocked waiting for an order).
pub const WAIT_PRIORITY: u8 = 1;
/// How long a blocked task thread sleeps at most before it looks at its
/// order and the stop flag again. Every stop wakes every blocked thread
/// (the dispatcher's end, the watchdog, a death), so this is only a
/// backstop; it is long because a thread blocked after its job keeps the
/// running priority, and a wake-up of its own would preempt the job
/// running then.
pub const PARKED_POLL: Nanos = Nanos::from_secs(60);

/// What one task thread and its dispatcher share.
#[derive(Debug, Default)]
pub struct Slot {
    // ---- dispatcher -> thread
    /// The futex word a thread waits on: bumped at every order.
    order: AtomicU32,
    /// The thread may run (its job, up to its passed lock steps).
    run: AtomicBool,
    /// The job it is to run (index) and its demand, ns.
    job: AtomicU64,
    demand: AtomicU64,
    /// Lock steps of that job it may pass.
    passed: AtomicU32,
    /// Sequence number of the latest run order.
    ordered: AtomicU32,
    /// The execution of its current job at which it posts the end of its
    /// burst (ns; `u64::MAX`: none), and that limit's sequence number.
    limit: AtomicU64,
    limit_seq: AtomicU32,
    // ---- thread -> dispatcher
    /// Its kernel thread id (0 until it is known).
    pub tid: AtomicI32,
    /// The execution time of its current job, ns.
    executed: AtomicU64,
    /// The run order it began running after, and when (ns since start).
    began_order: AtomicU32,
    began_ns: AtomicU64,
    /// The last job it finished, index + 1 (0: none), and when.
    finished: AtomicU64,
    finish_ns: AtomicU64,
    /// The lock step it waits at: (job index + 1) << 20 | (step + 1).
    waiting_step: AtomicU64,
    /// It is blocked on `order` (the dispatcher then wakes it).
    parked: AtomicBool,
    /// The sequence number of the last limit it reached.
    limit_reached: AtomicU32,
}

/// Steps per job a thread can post (the encoding of `waiting_step`).
pub const MAX_STEPS: usize = (1 << 20) - 2;

fn step_word(job: u64, step: usize) -> u64 {
    (job.saturating_add(1) << 20) | (step as u64 + 1)
}

/// The words all the threads of one dispatcher share.
#[derive(Debug)]
pub struct Shared {
    /// One per task of the dispatcher (local index).
    pub slots: Vec<Slot>,
    /// The dispatcher's doorbell (a futex word: bumped by every post that
    /// needs a decision).
    pub doorbell: AtomicU32,
    /// Raised at the end of the run (by the dispatcher, the watchdog, a
    /// stop signal): every thread ends.
    pub stop: Arc<AtomicBool>,
    /// CLOCK_MONOTONIC at the run's time 0, ns (set before the gate opens).
    pub start_ns: AtomicU64,
    /// The dispatcher's last wake-up (ns since start; the watchdog's
    /// heartbeat).
    pub heartbeat_ns: AtomicU64,
    /// When it means to wake next (ns since start).
    pub next_wake_ns: AtomicU64,
    /// The dispatcher's thread id.
    pub dispatcher_tid: AtomicI32,
}

impl Shared {
    /// Words for `n` task threads.
    pub fn new(n: usize, stop: Arc<AtomicBool>) -> Shared {
        Shared {
            slots: (0..n).map(|_| Slot::default()).collect(),
            doorbell: AtomicU32::new(0),
            stop,
            start_ns: AtomicU64::new(0),
            heartbeat_ns: AtomicU64::new(0),
            next_wake_ns: AtomicU64::new(0),
            dispatcher_tid: AtomicI32::new(0),
        }
    }

    fn start(&self) -> Nanos {
        Nanos::from_ns(self.start_ns.load(Ordering::Relaxed))
    }

    /// Rings the dispatcher's doorbell.
    #[inline]
    pub fn ring(&self) {
        self.doorbell.fetch_add(1, Ordering::SeqCst);
        let _ = futex_wake(&self.doorbell, 1);
    }

    /// Wakes every blocked thread and the dispatcher (after `stop`).
    pub fn wake_all(&self) {
        for slot in &self.slots {
            slot.order.fetch_add(1, Ordering::SeqCst);
            let _ = futex_wake(&slot.order, 1);
        }
        self.ring();
    }
}

/// What a task thread did over the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadOutcome {
    /// Voluntary + involuntary switches of the thread over the run.
    pub context_switches: u64,
    /// Its CPU time at its end (ns), for the disturbance account.
    pub cpu_time_ns: u64,
}

/// A task thread's loop: wait for an order, run its job's work on its CPU
/// clock until it is done, reaches a lock step or the order changes, post,
/// repeat, until the stop flag. Nothing here allocates or locks.
pub fn run_task_thread(shared: &Shared, me: usize, steps: &[Step]) -> ThreadOutcome {
    let slot = &shared.slots[me];
    let start = shared.start();
    let switches_at_start = rtlab_host::usage::thread_switches();
    let mut current: Option<u64> = None;
    let mut finished_last: Option<u64> = None;
    let mut demand = Nanos::ZERO;
    let mut cpu_start = Nanos::ZERO;
    let mut next_step = 0usize;
    let mut acked = 0u32;
    // The last limit it posted (sequence number; 0: none is ever set).
    let mut limit_posted = 0u32;
    let mut x = 1.0f64;
    'outer: loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let order = slot.order.load(Ordering::SeqCst);
        let job = slot.job.load(Ordering::Acquire);
        let may_run = slot.run.load(Ordering::Acquire) && finished_last != Some(job);
        let passed = slot.passed.load(Ordering::Acquire) as usize;
        let at_step = current == Some(job)
            && next_step < steps.len()
            && next_step >= passed
            && reached(steps, next_step, demand, slot);
        if !may_run || at_step {
            park(slot, order);
            continue;
        }
        let ordered = slot.ordered.load(Ordering::Acquire);
        if ordered != acked {
            acked = ordered;
            slot.began_ns.store(
                monotonic_now().saturating_sub(start).as_ns(),
                Ordering::Relaxed,
            );
            slot.began_order.store(ordered, Ordering::Release);
        }
        if current != Some(job) {
            current = Some(job);
            demand = Nanos::from_ns(slot.demand.load(Ordering::Acquire));
            cpu_start = thread_cpu_time();
            next_step = 0;
            slot.executed.store(0, Ordering::Relaxed);
        }
        loop {
            let used = thread_cpu_time().saturating_sub(cpu_start);
            slot.executed.store(used.as_ns(), Ordering::Relaxed);
            if used >= demand {
                slot.executed.store(demand.as_ns(), Ordering::Relaxed);
                slot.finish_ns.store(
                    monotonic_now().saturating_sub(start).as_ns(),
                    Ordering::Relaxed,
                );
                slot.finished
                    .store(job.saturating_add(1), Ordering::Release);
                finished_last = Some(job);
                shared.ring();
                continue 'outer;
            }
            // The end of its burst: post it and go on (the dispatcher, woken
            // on this CPU at a higher priority, takes the CPU at once).
            let seq = slot.limit_seq.load(Ordering::Acquire);
            if seq != limit_posted && used.as_ns() >= slot.limit.load(Ordering::Relaxed) {
                limit_posted = seq;
                slot.limit_reached.store(seq, Ordering::Release);
                shared.ring();
            }
            while next_step < steps.len() && reached(steps, next_step, demand, slot) {
                if next_step < slot.passed.load(Ordering::Acquire) as usize {
                    next_step += 1;
                    continue;
                }
                // Wait at the step for the dispatcher to take or release
                // the resource.
                slot.waiting_step
                    .store(step_word(job, next_step), Ordering::Release);
                shared.ring();
                continue 'outer;
            }
            if shared.stop.load(Ordering::Relaxed) {
                break 'outer;
            }
            if slot.order.load(Ordering::Relaxed) != order {
                continue 'outer;
            }
            for _ in 0..32 {
                x = std::hint::black_box(x * 1.000_000_1 + 1e-9);
            }
        }
    }
    std::hint::black_box(x);
    let end = rtlab_host::usage::thread_switches();
    ThreadOutcome {
        context_switches: (end.0 + end.1).saturating_sub(switches_at_start.0 + switches_at_start.1),
        cpu_time_ns: thread_cpu_time().as_ns(),
    }
}

/// True when the job's execution reached lock step `k` (a lock at or past
/// the demand is never taken, as in the simulator).
fn reached(steps: &[Step], k: usize, demand: Nanos, slot: &Slot) -> bool {
    let step = steps[k];
    if step.lock && step.at >= demand {
        return false;
    }
    Nanos::from_ns(slot.executed.load(Ordering::Relaxed)) >= step.at
}

/// Blocks until the order word moves on (or [`PARKED_POLL`] passes).
fn park(slot: &Slot, order: u32) {
    slot.parked.store(true, Ordering::SeqCst);
    let _ = futex_wait(&slot.order, order, PARKED_POLL);
    slot.parked.store(false, Ordering::SeqCst);
}

/// The dispatcher's side: the [`Platform`] on real threads of one CPU.
pub struct RealPlatform {
    shared: Arc<Shared>,
    start: Nanos,
    armed: u32,
    /// Per thread: at the running priority now.
    raised: Vec<bool>,
    /// Per thread: the sequence number of its latest run order, and
    /// whether its start was reported.
    ordered: Vec<u32>,
    began_reported: Vec<bool>,
    /// Per thread: the lock-step post last reported.
    step_reported: Vec<u64>,
    /// Per thread: the sequence number of its latest limit.
    limit_seq: Vec<u32>,
    run_policy: Policy,
    wait_policy: Policy,
    /// Failed `sched_setattr` calls on other threads (should stay 0).
    pub enact_errors: u64,
    /// Every run order as (CLOCK_MONOTONIC ns, thread id), for the kernel
    /// trace's timing of the dispatch latency (only with a trace).
    pub orders: Option<RecordSender<(u64, i32)>>,
    /// Per thread: the CPU its affinity names (a global dispatcher moves
    /// it; `usize::MAX` until it first does).
    cpu_of: Vec<usize>,
}

impl RealPlatform {
    /// The platform over `shared`'s threads; `start` is the run's time 0.
    pub fn new(shared: Arc<Shared>, start: Nanos) -> RealPlatform {
        let n = shared.slots.len();
        RealPlatform {
            shared,
            start,
            armed: 0,
            raised: vec![false; n],
            ordered: vec![0; n],
            began_reported: vec![true; n],
            step_reported: vec![0; n],
            limit_seq: vec![0; n],
            run_policy: Policy::Fifo {
                priority: RUN_PRIORITY,
            },
            wait_policy: Policy::Fifo {
                priority: WAIT_PRIORITY,
            },
            enact_errors: 0,
            orders: None,
            cpu_of: vec![usize::MAX; n],
        }
    }

    /// Bumps thread `task`'s order word and wakes it if it is blocked.
    #[inline]
    fn notify(&self, task: usize) {
        let slot = &self.shared.slots[task];
        slot.order.fetch_add(1, Ordering::SeqCst);
        if slot.parked.load(Ordering::SeqCst) {
            let _ = futex_wake(&slot.order, 1);
        }
    }

    fn set_priority(&mut self, task: usize, raise: bool) {
        if self.raised[task] == raise {
            return;
        }
        self.raised[task] = raise;
        let tid = self.shared.slots[task].tid.load(Ordering::Relaxed);
        let policy = if raise {
            &self.run_policy
        } else {
            &self.wait_policy
        };
        if tid == 0 || !policy::change_thread_policy(tid, policy) {
            self.enact_errors += 1;
        }
    }
}

impl Platform for RealPlatform {
    #[inline]
    fn now(&mut self) -> Nanos {
        monotonic_now().saturating_sub(self.start)
    }

    fn arm(&mut self) {
        self.armed = self.shared.doorbell.load(Ordering::SeqCst);
        let now = monotonic_now().saturating_sub(self.start);
        self.shared
            .heartbeat_ns
            .store(now.as_ns(), Ordering::Relaxed);
    }

    fn wait(&mut self, until: Nanos) {
        self.shared
            .next_wake_ns
            .store(until.as_ns(), Ordering::Relaxed);
        let _ = futex_wait_until(
            &self.shared.doorbell,
            self.armed,
            self.start.saturating_add(until),
        );
    }

    #[inline]
    fn executed(&self, task: usize) -> Nanos {
        Nanos::from_ns(self.shared.slots[task].executed.load(Ordering::Relaxed))
    }

    fn posted(&mut self, task: usize, job: u64) -> Option<Post> {
        let slot = &self.shared.slots[task];
        if slot.finished.load(Ordering::Acquire) == job.saturating_add(1) {
            return Some(Post::Finished(Nanos::from_ns(
                slot.finish_ns.load(Ordering::Relaxed),
            )));
        }
        let word = slot.waiting_step.load(Ordering::Acquire);
        if word != self.step_reported[task] && word >> 20 == job.saturating_add(1) {
            self.step_reported[task] = word;
            return Some(Post::Step((word & ((1 << 20) - 1)) as usize - 1));
        }
        None
    }

    fn run(&mut self, task: usize, job: u64, demand: Nanos, steps: usize) {
        let slot = &self.shared.slots[task];
        if slot.job.load(Ordering::Relaxed) != job {
            // A new job has executed nothing yet: the thread's reading is
            // its previous job's until it begins this one.
            slot.executed.store(0, Ordering::Relaxed);
        }
        slot.job.store(job, Ordering::Relaxed);
        slot.demand.store(demand.as_ns(), Ordering::Relaxed);
        slot.passed.store(steps as u32, Ordering::Relaxed);
        let seq = self.ordered[task].wrapping_add(1);
        self.ordered[task] = seq;
        self.began_reported[task] = false;
        if let Some(orders) = &mut self.orders {
            let tid = slot.tid.load(Ordering::Relaxed);
            orders.send((monotonic_now().as_ns(), tid));
        }
        slot.ordered.store(seq, Ordering::Release);
        slot.run.store(true, Ordering::Release);
        self.set_priority(task, true);
        self.notify(task);
    }

    fn pass(&mut self, task: usize, steps: usize) {
        self.shared.slots[task]
            .passed
            .store(steps as u32, Ordering::Release);
        self.notify(task);
    }

    fn preempt(&mut self, task: usize) {
        self.shared.slots[task].run.store(false, Ordering::Release);
        self.set_priority(task, false);
        self.shared.slots[task].order.fetch_add(1, Ordering::SeqCst);
    }

    fn began(&mut self, task: usize) -> Option<Nanos> {
        if self.began_reported[task] {
            return None;
        }
        let slot = &self.shared.slots[task];
        if slot.began_order.load(Ordering::Acquire) != self.ordered[task] {
            return None;
        }
        self.began_reported[task] = true;
        Some(Nanos::from_ns(slot.began_ns.load(Ordering::Relaxed)))
    }

    fn budgets(&self) -> bool {
        true
    }

    fn limit(&mut self, task: usize, at: Option<Nanos>) {
        let slot = &self.shared.slots[task];
        let seq = match self.limit_seq[task].wrapping_add(1) {
            0 => 1,
            s => s,
        };
        self.limit_seq[task] = seq;
        slot.limit
            .store(at.map_or(u64::MAX, Nanos::as_ns), Ordering::Relaxed);
        slot.limit_seq.store(seq, Ordering::Release);
    }

    fn limit_reached(&mut self, task: usize) -> bool {
        let seq = self.limit_seq[task];
        seq != 0
            && self.shared.slots[task]
                .limit_reached
                .load(Ordering::Acquire)
                == seq
    }

    #[inline]
    fn stamp(&mut self) -> Nanos {
        monotonic_now()
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for slot in &self.shared.slots {
            slot.run.store(false, Ordering::SeqCst);
        }
        self.shared.wake_all();
    }
}

impl CpuPlatform for RealPlatform {
    /// One `sched_setaffinity` when the thread changes CPU (a migration),
    /// before it is raised: the kernel then runs it on its new CPU.
    fn place(&mut self, task: usize, cpu: usize) {
        if self.cpu_of[task] == cpu {
            return;
        }
        self.cpu_of[task] = cpu;
        let tid = self.shared.slots[task].tid.load(Ordering::Relaxed);
        if tid == 0 || !policy::move_thread_to(tid, cpu) {
            self.enact_errors += 1;
        }
    }
}
