//! The global engine's pending releases: at most one per task (a task's
//! next release is scheduled when its current one is handled), ordered by
//! `(time, sequence)` as the shared event queue orders its release class
//! ([`crate::queue`]: equal times in the order they were scheduled).
//!
//! Handling a release schedules the same task's next one, so the engine
//! replaces the queue's least entry in place ([`Releases::replace_first`]:
//! one sift down) instead of popping it and pushing the next (a sift down
//! to the bottom, then a sift up).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rtlab_model::Nanos;

/// One pending release: `(event time, sequence, task)` packed into one
/// integer, time in the high 64 bits, then the sequence, then the task in
/// the low [`Releases::task_bits`] bits, compared at once: sequences are
/// unique, so the task never decides, and an entry is 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry(u128);

impl Entry {
    fn time(self) -> u64 {
        (self.0 >> 64) as u64
    }

    fn task(self, task_bits: u32) -> usize {
        (self.0 as u64 & ((1u64 << task_bits) - 1)) as usize
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
    /// Bits of an entry's low half that hold the task (`ceil(log2 n)`, at
    /// least 1); the sequence has the others.
    task_bits: u32,
}

impl Releases {
    /// No release pending, for tasks `0..n`.
    pub(super) fn new(n: usize) -> Releases {
        Releases {
            heap: BinaryHeap::with_capacity(n),
            at: vec![Nanos::ZERO; n],
            index: vec![0; n],
            seq: 0,
            task_bits: (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1),
        }
    }

    /// The entry of `task`'s release handled at `time`, scheduled after
    /// every pending one. When the sequence would overflow its bits (after
    /// 2^(64 - task_bits) releases: never in practice), the pending entries
    /// are renumbered first, keeping their order.
    #[inline]
    fn entry(&mut self, time: Nanos, task: usize) -> Entry {
        if self.seq >= (u64::MAX >> self.task_bits) {
            self.renumber();
        }
        self.seq += 1;
        let low = (self.seq << self.task_bits) | task as u64;
        Entry((u128::from(time.as_ns()) << 64) | u128::from(low))
    }

    fn renumber(&mut self) {
        let mut pending: Vec<Entry> = std::mem::take(&mut self.heap)
            .into_iter()
            .map(|Reverse(e)| e)
            .collect();
        pending.sort_unstable();
        let bits = self.task_bits;
        self.heap = pending
            .into_iter()
            .zip(1u64..)
            .map(|(e, seq)| {
                let low = (seq << bits) | e.task(bits) as u64;
                Reverse(Entry((u128::from(e.time()) << 64) | u128::from(low)))
            })
            .collect();
        self.seq = self.heap.len() as u64;
    }

    /// Schedules `task`'s first release, at `at`, handled at `time`;
    /// `task` has none pending.
    pub(super) fn push(&mut self, time: Nanos, task: usize, at: Nanos) {
        self.at[task] = at;
        self.index[task] = 0;
        let entry = self.entry(time, task);
        self.heap.push(Reverse(entry));
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
            Some(&Reverse(e)) if e.time() == time.as_ns() => {
                let task = e.task(self.task_bits);
                Some((task, self.at[task], self.index[task]))
            }
            _ => None,
        }
    }

    /// Replaces the first pending release by its task's next one, at `at`
    /// handled at `time` (as [`Releases::remove_first`] then
    /// [`Releases::push`]).
    pub(super) fn replace_first(&mut self, time: Nanos, at: Nanos) {
        let Some(&Reverse(first)) = self.heap.peek() else {
            return;
        };
        let task = first.task(self.task_bits);
        self.at[task] = at;
        self.index[task] += 1;
        let entry = self.entry(time, task);
        if let Some(mut first) = self.heap.peek_mut() {
            *first = Reverse(entry);
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

    #[test]
    fn renumbering_at_the_sequence_limit_keeps_the_order() {
        let ms = Nanos::from_ms;
        let mut q = Releases::new(20);
        q.seq = (u64::MAX >> q.task_bits) - 2;
        q.push(ms(1), 7, ms(1));
        q.push(ms(1), 3, ms(1));
        q.push(ms(1), 19, ms(1));
        assert!(q.seq < 10, "renumbered: {}", q.seq);
        q.push(ms(1), 0, ms(1));
        for task in [7, 3, 19, 0] {
            assert_eq!(q.first_at(ms(1)), Some((task, ms(1), 0)));
            q.remove_first();
        }
        assert_eq!(q.peek_time(), None);
    }
}
