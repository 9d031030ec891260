//! Records from real-time threads to files, without the real-time threads
//! ever allocating, faulting or waiting.
//!
//! Each real-time thread gets a [`RecordSender`]: the producer end of a
//! fixed-capacity single-producer single-consumer ring (the `rtrb` crate:
//! wait-free push and pop, no allocation after construction). The ring is
//! allocated and **pre-faulted** when it is made (every slot written once,
//! so every page is touched, and locked too when `mlockall(MCL_FUTURE)` is in
//! force), which callers do before their first release. A push into a full
//! ring does not wait: the record is dropped and counted
//! ([`RecordSender::dropped`]), so a writer that falls behind costs records,
//! never timing.
//!
//! A [`Drainer`] thread (SCHED_OTHER, kept off the real-time CPU) empties
//! every ring each [`DRAIN_PERIOD`] into a sink (a closure that writes the
//! files), and once more after the producers are done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rtlab_model::Nanos;

use crate::error::RtError;
use rtlab_host::policy;
use rtlab_host::HostError;

/// How often the drainer empties the rings when they were empty the last
/// time it looked.
pub const DRAIN_PERIOD: Duration = Duration::from_millis(10);

/// The producer end of a record ring: used by one real-time thread.
pub struct RecordSender<T> {
    producer: rtrb::Producer<T>,
    dropped: u64,
}

/// The consumer end, emptied by a [`Drainer`].
pub struct RecordReceiver<T> {
    consumer: rtrb::Consumer<T>,
}

/// A ring of `capacity` records (at least 1), pre-faulted by writing
/// `filler` into every slot and reading it back.
pub fn record_ring<T: Copy>(capacity: usize, filler: T) -> (RecordSender<T>, RecordReceiver<T>) {
    let (mut producer, mut consumer) = rtrb::RingBuffer::new(capacity.max(1));
    while producer.push(filler).is_ok() {}
    while consumer.pop().is_ok() {}
    (
        RecordSender {
            producer,
            dropped: 0,
        },
        RecordReceiver { consumer },
    )
}

impl<T> RecordSender<T> {
    /// Queues `record` for the writer; never blocks or allocates. When the
    /// ring is full the record is dropped and counted, and false returned.
    #[inline]
    pub fn send(&mut self, record: T) -> bool {
        let sent = self.producer.push(record).is_ok();
        if !sent {
            self.dropped += 1;
        }
        sent
    }

    /// Counts `n` records as dropped without sending them (a record that
    /// stands for several, lost as one).
    pub fn count_dropped(&mut self, n: u64) {
        self.dropped = self.dropped.saturating_add(n);
    }

    /// Records dropped so far because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The ring's capacity in records.
    pub fn capacity(&self) -> usize {
        self.producer.buffer().capacity()
    }
}

impl<T> RecordReceiver<T> {
    /// Hands every queued record to `f` in order; returns how many.
    pub fn drain(&mut self, mut f: impl FnMut(T)) -> usize {
        let mut n = 0;
        while let Ok(record) = self.consumer.pop() {
            f(record);
            n += 1;
        }
        n
    }
}

/// Ring capacities for producers that make one record every `intervals[i]`:
/// each ring holds `window` of records plus 64, at least `min_each`, and
/// when the rings would hold more than `budget` records in all, the window
/// shrinks in proportion (never below `min_each`).
pub fn ring_capacities(
    intervals: &[Nanos],
    window: Nanos,
    min_each: usize,
    budget: usize,
) -> Vec<usize> {
    let wanted: Vec<usize> = intervals
        .iter()
        .map(|t| {
            let per_window = match window.as_ns().checked_div(t.as_ns()) {
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
                None => usize::MAX,
            };
            per_window.saturating_add(64).max(min_each)
        })
        .collect();
    let total = wanted.iter().fold(0usize, |a, &w| a.saturating_add(w));
    if total <= budget {
        return wanted;
    }
    let scale = budget as f64 / total as f64;
    wanted
        .iter()
        .map(|&w| ((w as f64 * scale) as usize).max(min_each))
        .collect()
}

/// The producer ends (one per producer, `None` without a sink) and the
/// drainer of [`start_streams`].
pub type Streams<T, S> = (Vec<Option<RecordSender<T>>>, Option<Drainer<S>>);

/// One ring per producer (of the given capacities) and a started
/// [`Drainer`] into `sink`, or, without a sink, no rings and no thread: the
/// producers then record nothing.
pub fn start_streams<T, S>(
    name: &str,
    capacities: Vec<usize>,
    filler: T,
    sink: Option<S>,
    avoid_cpu: Option<usize>,
) -> Result<Streams<T, S>, RtError>
where
    T: Copy + Send + 'static,
    S: RecordSink<T> + Send + 'static,
{
    let Some(sink) = sink else {
        return Ok((capacities.iter().map(|_| None).collect(), None));
    };
    let (senders, receivers): (Vec<_>, Vec<_>) = capacities
        .into_iter()
        .map(|capacity| record_ring(capacity, filler))
        .unzip();
    let drainer = Drainer::spawn(name, receivers, sink, avoid_cpu)?;
    Ok((senders.into_iter().map(Some).collect(), Some(drainer)))
}

/// Where a [`Drainer`] puts the records, on its own (non-real-time) thread.
pub trait RecordSink<T> {
    /// One record from ring `ring`; records of a ring arrive in the order
    /// they were sent.
    fn accept(&mut self, ring: usize, record: T);
}

impl<T, F: FnMut(usize, T)> RecordSink<T> for F {
    fn accept(&mut self, ring: usize, record: T) {
        self(ring, record)
    }
}

/// The thread that empties the rings into a sink.
///
/// Dropped without [`finish`](Drainer::finish) (a failed start), it tells
/// the thread to drain once more and end on its own.
pub struct Drainer<S> {
    handle: Option<JoinHandle<S>>,
    done: Arc<AtomicBool>,
}

impl<S: Send + 'static> Drainer<S> {
    /// Starts the drainer: every [`DRAIN_PERIOD`] (at once again when it
    /// found records) it hands each queued record to `sink` with the index
    /// of its ring. It runs at SCHED_OTHER (the policy of the calling thread
    /// is not inherited) and, when `avoid_cpu` is given and another CPU is
    /// allowed, off that CPU.
    pub fn spawn<T: Send + 'static>(
        name: &str,
        mut receivers: Vec<RecordReceiver<T>>,
        mut sink: S,
        avoid_cpu: Option<usize>,
    ) -> Result<Drainer<S>, RtError>
    where
        S: RecordSink<T>,
    {
        let done = Arc::new(AtomicBool::new(false));
        let finished = done.clone();
        let other_cpus: Vec<usize> = policy::allowed_cpus()
            .unwrap_or_default()
            .into_iter()
            .filter(|c| avoid_cpu.is_some_and(|a| a != *c))
            .collect();
        let handle = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let _ = policy::set_current_thread_policy(&policy::Policy::Other { nice: 0 });
                if !other_cpus.is_empty() {
                    let _ = policy::set_current_thread_affinity(&other_cpus);
                }
                loop {
                    // Read before draining: whatever was queued before
                    // `finish` set it is drained in this pass.
                    let last = finished.load(Ordering::SeqCst);
                    let mut drained = 0;
                    for (i, r) in receivers.iter_mut().enumerate() {
                        drained += r.drain(|record| sink.accept(i, record));
                    }
                    if last {
                        return sink;
                    }
                    if drained == 0 {
                        std::thread::sleep(DRAIN_PERIOD);
                    }
                }
            })
            .map_err(|source| HostError::Spawn {
                name: name.to_string(),
                source,
            })?;
        Ok(Drainer {
            handle: Some(handle),
            done,
        })
    }

    /// Call when every producer is done (or given up on): drains what is
    /// left and returns the sink. A panic in the sink is passed on.
    pub fn finish(mut self) -> S {
        self.done.store(true, Ordering::SeqCst);
        let handle = self.handle.take().expect("a drainer is finished once");
        match handle.join() {
            Ok(sink) => sink,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl<S> Drop for Drainer<S> {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_ring_drops_and_counts_instead_of_waiting() {
        let (mut tx, mut rx) = record_ring(4, 0u64);
        assert_eq!(tx.capacity(), 4);
        let sent: Vec<bool> = (1..=6).map(|v| tx.send(v)).collect();
        assert_eq!(sent, [true, true, true, true, false, false]);
        assert_eq!(tx.dropped(), 2);
        let mut got = Vec::new();
        assert_eq!(rx.drain(|v| got.push(v)), 4);
        assert_eq!(got, [1, 2, 3, 4], "the oldest are kept, in order");
        assert!(tx.send(7));
        tx.count_dropped(10);
        assert_eq!(tx.dropped(), 12);
        got.clear();
        rx.drain(|v| got.push(v));
        assert_eq!(got, [7]);
    }

    #[derive(Default)]
    struct Collect(Vec<Vec<u64>>);

    impl RecordSink<(usize, u64)> for Collect {
        fn accept(&mut self, ring: usize, (who, v): (usize, u64)) {
            assert_eq!(ring, who);
            self.0[ring].push(v);
        }
    }

    #[test]
    fn the_drainer_delivers_everything_sent_before_finish_in_order() {
        let rings: Vec<_> = (0..3).map(|_| record_ring(8, (0usize, 0u64))).collect();
        let (mut senders, receivers): (Vec<_>, Vec<_>) = rings.into_iter().unzip();
        let drainer = Drainer::spawn(
            "test-drainer",
            receivers,
            Collect(vec![Vec::new(); 3]),
            None,
        )
        .unwrap();
        // Five times what a ring holds, paced so the drainer keeps up.
        for v in 0..40u64 {
            for (i, s) in senders.iter_mut().enumerate() {
                while !s.send((i, v)) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        // The last ones are still queued: finish drains them.
        let seen = drainer.finish().0;
        for ring in seen {
            assert_eq!(ring, (0..40).collect::<Vec<u64>>());
        }
    }

    #[test]
    fn capacities_cover_the_window_within_the_budget() {
        let ms = Nanos::from_ms;
        assert_eq!(
            ring_capacities(
                &[ms(1), ms(25), ms(1000)],
                Nanos::from_secs(2),
                128,
                1 << 20
            ),
            vec![2064, 144, 128]
        );
        // 4 tasks at 10 us want 200_064 each; a budget of 100_000 scales them.
        let c = ring_capacities(&[Nanos::from_us(10); 4], Nanos::from_secs(2), 128, 100_000);
        assert!(c.iter().all(|&n| n == 24_999 || n == 25_000), "{c:?}");
        assert!(c.iter().sum::<usize>() <= 100_000);
        // A zero interval does not divide by zero.
        assert_eq!(ring_capacities(&[Nanos::ZERO], ms(1), 1, 1000), vec![1000]);
    }
}
