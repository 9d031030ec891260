//! The global engine's pending releases: at most one per task (a task's
//! next release is scheduled when its current one is handled), ordered by
//! `(time, sequence)` as the shared event queue orders its release class
//! ([`crate::queue`]: equal times in the order they were scheduled).
//!
//! Handling a release schedules the same task's next one, so the engine
//! replaces the queue's least entry in place ([`Releases::replace_first`]:
//! one sift down) instead of popping it and pushing the next (a sift down
//! to the bottom, then a sift up).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use rtlab_model::Nanos;

/// One pending release: `(event time, sequence)` packed into one integer
/// (time in the high 64 bits), compared at once; sequences are unique, so
/// the task never decides.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    task: usize,
}

impl Entry {
    fn new(time: Nanos, seq: u64, task: usize) -> Entry {
        Entry {
            key: (u128::from(time.as_ns()) << 64) | u128::from(seq),
            task,
        }
    }

    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// Pending releases, least `(time, sequence)` first.
#[derive(Debug, Default)]
pub(super) struct Releases {
    heap: BinaryHeap<Reverse<Entry>>,
    /// Per task: the true release time of its pending release (the event
    /// time adds the release jitter).
    at: Vec<Nanos>,
    /// Per task: which release of the task the pending one is (counted
    /// here, where `(at - offset) / period` would cost a division each).
    index: Vec<u64>,
    seq: u64,
}

impl Releases {
    /// No release pending, for tasks `0..n`.
    pub(super) fn new(n: usize) -> Releases {
        Releases {
            heap: BinaryHeap::with_capacity(n),
            at: vec![Nanos::ZERO; n],
            index: vec![0; n],
            seq: 0,
        }
    }

    /// Schedules `task`'s first release, at `at`, handled at `time`;
    /// `task` has none pending.
    pub(super) fn push(&mut self, time: Nanos, task: usize, at: Nanos) {
        self.seq += 1;
        self.at[task] = at;
        self.index[task] = 0;
        self.heap.push(Reverse(Entry::new(time, self.seq, task)));
    }

    /// The time of the first pending release.
    pub(super) fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse(e)| Nanos::from_ns(e.time()))
    }

    /// The first pending release if it is handled at `time`: its task,
    /// true release time and index (0 for the task's first). It stays
    /// pending until [`Releases::replace_first`] or
    /// [`Releases::remove_first`].
    pub(super) fn first_at(&self, time: Nanos) -> Option<(usize, Nanos, u64)> {
        match self.heap.peek() {
            Some(Reverse(e)) if e.time() == time.as_ns() => {
                Some((e.task, self.at[e.task], self.index[e.task]))
            }
            _ => None,
        }
    }

    /// Replaces the first pending release by its task's next one, at `at`
    /// handled at `time` (as [`Releases::remove_first`] then
    /// [`Releases::push`]).
    pub(super) fn replace_first(&mut self, time: Nanos, at: Nanos) {
        self.seq += 1;
        let seq = self.seq;
        if let Some(mut first) = self.heap.peek_mut() {
            let task = first.0.task;
            self.at[task] = at;
            self.index[task] += 1;
            *first = Reverse(Entry::new(time, seq, task));
        }
    }

    /// Removes the first pending release.
    pub(super) fn remove_first(&mut self) {
        self.heap.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_scheduling_order() {
        let ms = Nanos::from_ms;
        let mut q = Releases::new(3);
        q.push(ms(2), 2, ms(2));
        q.push(ms(1), 1, ms(1));
        q.push(ms(1), 0, ms(1));
        assert_eq!(q.peek_time(), Some(ms(1)));
        assert_eq!(q.first_at(ms(0)), None);
        assert_eq!(q.first_at(ms(1)), Some((1, ms(1), 0)));
        // Task 1's next at 2 ms is scheduled after task 2's: it comes after.
        q.replace_first(ms(2), ms(2));
        assert_eq!(q.first_at(ms(1)), Some((0, ms(1), 0)));
        q.remove_first();
        assert_eq!(q.first_at(ms(2)), Some((2, ms(2), 0)));
        q.remove_first();
        assert_eq!(q.first_at(ms(2)), Some((1, ms(2), 1)));
        q.replace_first(ms(5), ms(4));
        assert_eq!(q.first_at(ms(5)), Some((1, ms(4), 2)));
        q.remove_first();
        assert_eq!(q.peek_time(), None);
    }
}
