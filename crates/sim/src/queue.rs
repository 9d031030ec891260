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
    /// When, in nanoseconds.
    time: u64,
    /// The class in the high 2 bits, the sequence in the low 62 (2^62
    /// events are some 146 years of events at one per nanosecond, so it
    /// never wraps). `(time, rank)` is the `(time, class, sequence)` key;
    /// sequences are unique, so no two keys are equal and the payload never
    /// decides.
    rank: u64,
    payload: Payload,
}

impl Entry {
    /// True when `self` comes before `other`.
    #[inline]
    fn before(&self, other: &Entry) -> bool {
        (self.time, self.rank) < (other.time, other.rank)
    }
}

const SEQ_MASK: u64 = (1 << 62) - 1;

/// A min-queue of events: a binary heap in a `Vec`, with one twist. The
/// event [`EventQueue::pop_at`] hands out stays at the root, marked vacant,
/// until the next call: a [`EventQueue::push`] then puts the new event in
/// its place and sifts it down once, where a pop and a push would each
/// walk the heap (a release is nearly always followed by the push of its
/// task's next release). Any other call first fills the place as a pop
/// does (the last event moved to the root and sifted down). Keys are
/// unique, so the order events come out in is the same either way.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: Vec<Entry>,
    /// `heap[0]` was handed out and its place is still to be filled.
    vacant_root: bool,
    seq: u64,
}

impl EventQueue {
    // Inlined into every caller, so that the payload its caller builds
    // goes to the heap in registers: read back from the caller's stack it
    // stalled the processor (a store-to-load forwarding failure) at every
    // release.
    #[inline(always)]
    pub(crate) fn push(&mut self, time: Nanos, class: Class, payload: Payload) {
        self.seq += 1;
        let entry = Entry {
            time: time.as_ns(),
            rank: (u64::from(class as u8) << 62) | (self.seq & SEQ_MASK),
            payload,
        };
        if self.vacant_root {
            self.vacant_root = false;
            self.sift_down(0, entry);
        } else {
            self.heap.push(entry);
            self.sift_up(self.heap.len() - 1, entry);
        }
    }

    /// The time of the next event.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<Nanos> {
        let first = if self.vacant_root {
            // The least of the root's two subtrees.
            match (self.heap.get(1), self.heap.get(2)) {
                (Some(a), Some(b)) if b.before(a) => Some(b),
                (a, _) => a,
            }
        } else {
            self.heap.first()
        };
        first.map(|e| Nanos::from_ns(e.time))
    }

    /// The next event if it is at `time`.
    #[inline]
    pub(crate) fn pop_at(&mut self, time: Nanos) -> Option<Payload> {
        self.fill_root();
        match self.heap.first() {
            Some(e) if e.time == time.as_ns() => {
                self.vacant_root = true;
                Some(e.payload)
            }
            _ => None,
        }
    }

    /// Ends a pop left open: the last event takes the vacant root.
    #[inline]
    fn fill_root(&mut self) {
        if !self.vacant_root {
            return;
        }
        self.vacant_root = false;
        if let Some(last) = self.heap.pop() {
            if !self.heap.is_empty() {
                self.sift_down(0, last);
            }
        }
    }

    // The sifts take the entry to place rather than read it from its slot,
    // and are inlined: an entry written to memory and read back at once as
    // one wider load stalls the processor (store-to-load forwarding).

    /// Puts `entry` in the vacant slot `i` or above it.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, entry: Entry) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !entry.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    /// Puts `entry` in the vacant slot `i` or below it.
    #[inline(always)]
    fn sift_down(&mut self, mut i: usize, entry: Entry) {
        let len = self.heap.len();
        loop {
            let mut child = 2 * i + 1;
            if child >= len {
                break;
            }
            if child + 1 < len && self.heap[child + 1].before(&self.heap[child]) {
                child += 1;
            }
            if !self.heap[child].before(&entry) {
                break;
            }
            self.heap[i] = self.heap[child];
            i = child;
        }
        self.heap[i] = entry;
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

    /// Against a sorted list of `(time, class, sequence)` keys: pushes
    /// right after a pop (which fill the vacant root), pops after pops,
    /// peeks in between, many events on the same nanosecond.
    #[test]
    fn pops_in_key_order_whatever_the_mix_of_pushes_and_pops() {
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, Class, u64)> = Vec::new();
        let mut seq = 0u64;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let classes = [Class::Deadline, Class::Release, Class::Tick];
        for _ in 0..20_000 {
            if next() % 5 < 3 {
                let time = next() % 64;
                let class = classes[(next() % 3) as usize];
                seq += 1;
                q.push(
                    Nanos::from_ns(time),
                    class,
                    Payload::Deadline { slot: 0, uid: seq },
                );
                reference.push((time, class, seq));
                continue;
            }
            reference.sort();
            let head = reference.first().map(|e| Nanos::from_ns(e.0));
            assert_eq!(q.peek_time(), head);
            let Some(t) = head else {
                assert_eq!(q.pop_at(Nanos::ZERO), None);
                continue;
            };
            assert_eq!(q.pop_at(t + Nanos::from_ns(1)), None);
            let (_, _, uid) = reference.remove(0);
            assert_eq!(q.pop_at(t), Some(Payload::Deadline { slot: 0, uid }));
            assert_eq!(
                q.peek_time(),
                reference.iter().min().map(|e| Nanos::from_ns(e.0))
            );
        }
    }
}
