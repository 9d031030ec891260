//! The event queue, ordered by `(time, class, sequence)`.
//!
//! # Tie-break (what happens on the same nanosecond)
//!
//! Events at the same instant are handled in this class order, and within a
//! class in the order they were scheduled (the sequence number):
//!
//! 1. **milestone** of the running job: its completion, or a lock/unlock at
//!    a critical-section boundary (not stored here: the engine computes it);
//!    a job finishing exactly at its deadline therefore meets it;
//! 2. **deadline** checks (`--on-miss abort`), so an aborted job is gone
//!    before the next release of its task;
//! 3. **release** of jobs, in task declaration order for equal times
//!    (they were scheduled in that order at start and stay in it);
//! 4. **tick** of the periodic timer;
//! 5. **call-back** asked for by the scheduler (quantum or burst end).
//!
//! Only after all events of an instant does the scheduler pick, once. This
//! is the `(time, class, sequence)` rule of nexosim's priority queue.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rtlab_model::Nanos;

/// Event classes, in tie-break order (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    Deadline = 1,
    Release = 2,
    Tick = 3,
}

/// What an event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Payload {
    /// Abort check of job `uid` in slot `slot`.
    Deadline { slot: u32, uid: u64 },
    /// Release of `task`'s job whose true release time is `at` (with a tick
    /// the event time is the next tick).
    Release { task: usize, at: Nanos },
    /// Timer interrupt.
    Tick,
}

/// One event: its payload under a key that orders it.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// `(time, class, sequence)` packed into one integer, compared at once:
    /// time in the high 64 bits, the class in the next 2, the sequence in
    /// the low 62 (2^62 events are some 146 years of events at one per
    /// nanosecond, so it never wraps). Sequences are unique, so no two keys
    /// are equal and the payload never decides.
    key: u128,
    payload: Payload,
}

impl Entry {
    fn key(time: Nanos, class: Class, seq: u64) -> u128 {
        (u128::from(time.as_ns()) << 64)
            | (u128::from(class as u8) << 62)
            | u128::from(seq & SEQ_MASK)
    }

    fn time(&self) -> Nanos {
        Nanos::from_ns((self.key >> 64) as u64)
    }
}

const SEQ_MASK: u64 = (1 << 62) - 1;

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// A min-queue of events.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

impl EventQueue {
    pub(crate) fn push(&mut self, time: Nanos, class: Class, payload: Payload) {
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            key: Entry::key(time, class, self.seq),
            payload,
        }));
    }

    pub(crate) fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse(e)| e.time())
    }

    /// The next event if it is at `time`.
    pub(crate) fn pop_at(&mut self, time: Nanos) -> Option<Payload> {
        match self.heap.peek() {
            Some(Reverse(e)) if e.time() == time => self.heap.pop().map(|Reverse(e)| e.payload),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_class_then_sequence() {
        let mut q = EventQueue::default();
        let t = Nanos::from_ms(1);
        q.push(t, Class::Tick, Payload::Tick);
        q.push(t, Class::Release, Payload::Release { task: 1, at: t });
        q.push(t, Class::Release, Payload::Release { task: 0, at: t });
        q.push(t, Class::Deadline, Payload::Deadline { slot: 0, uid: 9 });
        q.push(Nanos::ZERO, Class::Tick, Payload::Tick);
        assert_eq!(q.pop_at(Nanos::ZERO), Some(Payload::Tick));
        assert_eq!(q.pop_at(Nanos::ZERO), None);
        assert_eq!(q.pop_at(t), Some(Payload::Deadline { slot: 0, uid: 9 }));
        assert_eq!(q.pop_at(t), Some(Payload::Release { task: 1, at: t }));
        assert_eq!(q.pop_at(t), Some(Payload::Release { task: 0, at: t }));
        assert_eq!(q.pop_at(t), Some(Payload::Tick));
        assert_eq!(q.peek_time(), None);
    }
}
