//! The watchdog: a dispatcher that stalls or dies must not leave a task
//! thread spinning at a real-time priority.
//!
//! A thread at SCHED_FIFO 99 on another CPU than the dispatchers (when
//! there is one) looks every [`LOOK`] at each dispatcher's heartbeat: the
//! time of its last wake-up and the time it meant to wake next. A
//! dispatcher that has not woken `grace` after the later of the two is
//! stalled (a scheduler that loops, a thread the kernel no longer runs);
//! so is one still running `grace` after the end of the run. Then the
//! watchdog raises the run's stop flag, turns every task thread and every
//! dispatcher of the run into SCHED_OTHER (so none keeps a CPU at a
//! real-time priority whatever it does next), wakes them all, and says why
//! in one line. A dispatcher that dies (its scheduler panicked) stops its
//! threads itself.
//!
//! It also forwards a stop signal: it records when the run ended and wakes
//! the dispatchers, which end their loops at once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use rtlab_host::policy::{self, Policy};
use rtlab_model::Nanos;
use rtlab_sys::clock::monotonic_now;

use super::threads::{Shared, DISPATCHER_PRIORITY};
use crate::error::RtError;

/// How often the watchdog looks.
pub const LOOK: Nanos = Nanos::from_ms(10);

/// What the watchdog concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every dispatcher kept time.
    Kept,
    /// A dispatcher stalled: the run ended at `at` (since the start).
    Stalled {
        /// When the watchdog ended the run (since the start).
        at: Nanos,
        /// One line: which dispatcher, since when.
        why: String,
    },
}

/// The running watchdog.
pub struct Watchdog {
    handle: Option<JoinHandle<()>>,
    verdict: Arc<Mutex<Verdict>>,
    fired: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
}

impl Watchdog {
    /// True once it ended the run for a stall.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    /// Stops it (the run is over) and returns its verdict.
    pub fn finish(mut self) -> Verdict {
        self.done.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let v = self
            .verdict
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        v
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// Starts the watchdog of dispatchers `shareds` for a run from `start` to
/// `end` (absolute): `grace` is how late a wake-up may be; `interrupt` a
/// stop signal to forward (its time goes to `ended_ns`); it runs on a CPU
/// other than `measured` when there is one.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    shareds: Vec<Arc<Shared>>,
    stop: Arc<AtomicBool>,
    start: Nanos,
    end: Nanos,
    grace: Nanos,
    interrupt: Arc<AtomicBool>,
    ended_ns: Arc<AtomicU64>,
    measured: &[usize],
) -> Result<Watchdog, RtError> {
    let verdict = Arc::new(Mutex::new(Verdict::Kept));
    let fired = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let allowed = policy::allowed_cpus().unwrap_or_default();
    let others: Vec<usize> = allowed
        .iter()
        .copied()
        .filter(|c| !measured.contains(c))
        .collect();
    let cpus = if others.is_empty() { allowed } else { others };
    let (v, f, dn) = (verdict.clone(), fired.clone(), done.clone());
    let name = "rtlab-watchdog".to_string();
    let handle = std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || {
            if !cpus.is_empty() {
                let _ = policy::set_current_thread_affinity(&cpus);
            }
            let _ = policy::set_current_thread_policy(&Policy::Fifo {
                priority: DISPATCHER_PRIORITY,
            });
            let mut forwarded = false;
            while !dn.load(Ordering::SeqCst) {
                let now = monotonic_now();
                if !forwarded && interrupt.load(Ordering::Relaxed) {
                    forwarded = true;
                    ended_ns.store(now.as_ns(), Ordering::SeqCst);
                    stop.store(true, Ordering::SeqCst);
                    for s in &shareds {
                        s.wake_all();
                    }
                }
                if now > start {
                    if let Some(why) = stalled(&shareds, start, end, grace, now) {
                        let at = now.saturating_sub(start);
                        stop.store(true, Ordering::SeqCst);
                        demote(&shareds);
                        for s in &shareds {
                            s.wake_all();
                        }
                        *v.lock().unwrap_or_else(PoisonError::into_inner) =
                            Verdict::Stalled { at, why };
                        f.store(true, Ordering::SeqCst);
                        return;
                    }
                }
                rtlab_sys::clock::wait_until(now.saturating_add(LOOK));
            }
        })
        .map_err(|source| RtError::spawn(name, source))?;
    Ok(Watchdog {
        handle: Some(handle),
        verdict,
        fired,
        done,
    })
}

/// Which dispatcher, if any, has missed its wake-up by more than `grace`
/// at `now` (absolute).
fn stalled(
    shareds: &[Arc<Shared>],
    start: Nanos,
    end: Nanos,
    grace: Nanos,
    now: Nanos,
) -> Option<String> {
    let rel = now.saturating_sub(start);
    let over = end.saturating_sub(start);
    for s in shareds {
        if s.stop.load(Ordering::Relaxed) {
            // Stopping (the end, a signal, a death): winding up.
            continue;
        }
        let beat = Nanos::from_ns(s.heartbeat_ns.load(Ordering::Relaxed));
        let next = Nanos::from_ns(s.next_wake_ns.load(Ordering::Relaxed));
        let due = beat.max(next).min(over);
        if rel > due.saturating_add(grace) {
            let tid = s.dispatcher_tid.load(Ordering::Relaxed);
            return Some(format!(
                "the dispatcher (thread {tid}) stalled: it last woke at {beat} and was due again by {due}, \
                 and had not woken {grace} later; the watchdog ended the run at {rel}, turned every task \
                 thread and dispatcher into SCHED_OTHER, and kept what was recorded until then"
            ));
        }
    }
    None
}

/// Every task thread and dispatcher of the run to SCHED_OTHER.
fn demote(shareds: &[Arc<Shared>]) {
    let other = Policy::Other { nice: 0 };
    for s in shareds {
        let tid = s.dispatcher_tid.load(Ordering::SeqCst);
        if tid > 0 {
            let _ = policy::set_thread_policy(tid, &other);
        }
        for slot in &s.slots {
            let tid = slot.tid.load(Ordering::SeqCst);
            if tid > 0 {
                let _ = policy::set_thread_policy(tid, &other);
            }
        }
    }
}
