//! One measuring stretch ("batch"): a set of threads pinned to one CPU,
//! each with its SCHED_FIFO priority and its role, started together at an
//! absolute time and collected with a time limit.
//!
//! Each thread is set up completely before the start time is sent: pinned,
//! given its policy, its stack pre-faulted, its sample buffer allocated at
//! full capacity. After the start nothing allocates: a role only reads the
//! clock, sleeps to absolute times, touches atomics and writes into the
//! buffer, and a full buffer counts what it drops. Every role ends by its
//! own deadline (a spin ends at a clock time, a sleep is absolute), and the
//! coordinator gives up on a thread that has not reported a grace period
//! after the batch's end, so a stalled thread never hangs the command.

use std::sync::mpsc;
use std::time::Duration;

use rtlab_model::Nanos;

use rtlab_host::policy::{self, Policy};
use rtlab_rt::RtError;
use rtlab_sys::clock::{monotonic_now, wait_until};
use rtlab_sys::sched::{sched_setaffinity, CpuSet};

/// Stack of a measuring thread: small, so `mlockall` locks little per
/// thread; the first [`STACK_PREFAULT`] bytes are touched before the start.
const STACK: usize = 256 * 1024;
const STACK_PREFAULT: usize = 64 * 1024;

/// How long after the last thread is set up the batch starts: enough for
/// every thread to reach its first sleep.
const START_DELAY: Nanos = Nanos::from_ms(5);

/// How long a thread waits for its start time, and the coordinator for a
/// thread's set-up, before giving up.
const HANDSHAKE: Duration = Duration::from_secs(5);

/// How long after the batch's planned end a silent thread is given up on.
const GRACE: Nanos = Nanos::from_secs(1);

/// What a role writes: samples into a buffer allocated before the start.
#[derive(Debug)]
pub struct Recorder {
    /// The samples (ns, or `(start, length)` pairs for the gap log).
    pub samples: Vec<u64>,
    /// Samples that did not fit.
    pub dropped: u64,
    /// Events that could not be measured (e.g. the preempted thread was not
    /// running when the release came).
    pub invalid: u64,
}

impl Recorder {
    fn with_capacity(capacity: usize) -> Recorder {
        Recorder {
            samples: Vec::with_capacity(capacity),
            dropped: 0,
            invalid: 0,
        }
    }

    /// Adds a sample; never allocates (a full buffer counts it as dropped).
    #[inline]
    pub fn push(&mut self, v: u64) {
        if self.samples.len() < self.samples.capacity() {
            self.samples.push(v);
        } else {
            self.dropped += 1;
        }
    }

    /// True when `extra` more samples fit.
    #[inline]
    pub fn has_room(&self, extra: usize) -> bool {
        self.samples.len() + extra <= self.samples.capacity()
    }
}

/// The body of a measuring thread: called with the batch's start time.
pub type Role = Box<dyn FnOnce(Nanos, &mut Recorder) + Send>;

/// One thread of a batch.
pub struct ThreadSpec {
    /// Its name (`rtlab-char-...`).
    pub name: String,
    /// Its SCHED_FIFO priority.
    pub priority: u8,
    /// Samples its buffer holds.
    pub capacity: usize,
    /// What it does.
    pub role: Role,
}

/// What a batch measured: each thread's recorder, in the order of the specs
/// (`None` for a thread given up on), and when it started.
pub struct BatchResult {
    /// Per thread.
    pub recorders: Vec<Option<Recorder>>,
    /// The start time handed to the roles.
    pub start: Nanos,
}

/// Runs `threads` pinned to `cpu`; the roles plan to be done `length` after
/// the start, and each reports after that. `at_start` runs on the calling
/// thread once the start time is sent (e.g. to read interrupt counts
/// during the batch). Fails before the start when a thread cannot be
/// started or set up (the first error).
pub fn run_batch(
    cpu: usize,
    threads: Vec<ThreadSpec>,
    length: Nanos,
    at_start: &mut dyn FnMut(Nanos),
) -> Result<BatchResult, RtError> {
    let count = threads.len();
    let (setup_tx, setup_rx) = mpsc::channel::<(usize, Result<(), RtError>)>();
    let (done_tx, done_rx) = mpsc::channel::<(usize, Recorder)>();
    let mut starts: Vec<mpsc::SyncSender<Option<Nanos>>> = Vec::with_capacity(count);
    let mut first_error = None;
    for (index, spec) in threads.into_iter().enumerate() {
        let (start_tx, start_rx) = mpsc::sync_channel::<Option<Nanos>>(1);
        let (setup_tx, done_tx) = (setup_tx.clone(), done_tx.clone());
        let ThreadSpec {
            name,
            priority,
            capacity,
            role,
        } = spec;
        let spawned = std::thread::Builder::new()
            .name(name.clone())
            .stack_size(STACK)
            .spawn(move || {
                let setup = set_up_thread(cpu, priority);
                let ok = setup.is_ok();
                let mut rec = Recorder::with_capacity(capacity);
                let _ = setup_tx.send((index, setup));
                let Ok(Some(start)) = start_rx.recv_timeout(HANDSHAKE) else {
                    return;
                };
                if ok {
                    role(start, &mut rec);
                    // Report only after the planned end, so that no thread's
                    // reporting (which may allocate) lands inside another's
                    // measurement.
                    wait_until(start.saturating_add(length));
                    let _ = done_tx.send((index, rec));
                }
            });
        match spawned {
            Ok(_) => starts.push(start_tx),
            Err(source) => {
                first_error = Some(RtError::spawn(name, source));
                break;
            }
        }
    }
    drop((setup_tx, done_tx));
    let mut set_up = 0;
    while set_up < starts.len() && first_error.is_none() {
        match setup_rx.recv_timeout(HANDSHAKE) {
            Ok((_, Ok(()))) => set_up += 1,
            Ok((_, Err(e))) => first_error = Some(e),
            Err(_) => {
                first_error = Some(RtError::os("starting a measuring thread")(
                    std::io::Error::from(std::io::ErrorKind::TimedOut),
                ))
            }
        }
    }
    if let Some(e) = first_error {
        for tx in &starts {
            let _ = tx.try_send(None);
        }
        return Err(e);
    }
    let start = monotonic_now() + START_DELAY;
    for tx in &starts {
        let _ = tx.try_send(Some(start));
    }
    at_start(start);
    let give_up = start.saturating_add(length).saturating_add(GRACE);
    let mut recorders: Vec<Option<Recorder>> = (0..count).map(|_| None).collect();
    let mut reported = 0;
    while reported < count {
        let now = monotonic_now();
        if now >= give_up {
            break;
        }
        match done_rx.recv_timeout(Duration::from(give_up - now)) {
            Ok((i, rec)) => {
                recorders[i] = Some(rec);
                reported += 1;
            }
            Err(_) => break,
        }
    }
    Ok(BatchResult { recorders, start })
}

/// Pins the thread (directly: it inherited the coordinator's affinity,
/// which leaves the measured CPU out; the CPU was checked against the
/// process's before) and gives it its policy.
fn set_up_thread(cpu: usize, priority: u8) -> Result<(), RtError> {
    let mut set = CpuSet::empty();
    set.insert(cpu);
    sched_setaffinity(&set).map_err(RtError::os("sched_setaffinity"))?;
    policy::set_current_thread_policy(&Policy::Fifo { priority })?;
    prefault_stack();
    Ok(())
}

/// Touches the first [`STACK_PREFAULT`] bytes of the stack, so the roles
/// never fault a stack page in.
#[inline(never)]
fn prefault_stack() {
    let buf = [0u8; STACK_PREFAULT];
    std::hint::black_box(&buf);
}
