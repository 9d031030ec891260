//! The global engine's ready set under a static rule (global EDF, global
//! FP): the m most urgent ready tasks kept incrementally, in order, above
//! an indexed binary min-heap of the others.
//!
//! | operation | cost |
//! | --- | --- |
//! | [`ReadySet::insert`], [`ReadySet::remove`] | O(m + log n) |
//! | [`ReadySet::top`] (the m most urgent, in order) | O(1): kept |
//! | [`ReadySet::is_top`] | O(1) |
//!
//! Each ready task has one entry `(key, task)`, compared as a pair, so
//! equal keys go to the lower task index. A key never changes while its
//! job is ready (EDF's deadline, FP's level), so a job enters once when it
//! becomes its task's head and leaves once when it completes or is
//! aborted. Every entry of `top` is smaller than every entry of the heap,
//! and `top` holds `min(m, len)` entries; an insertion smaller than the
//! last of `top` pushes that last one down into the heap, and a removal
//! from `top` lifts the heap's minimum up. The engine used to collect
//! every ready job and select and sort the m most urgent at each
//! scheduling point (O(n) per decision plus a sort); now a decision reads
//! `top` as it is.
//!
//! Between two decisions the set also notes which ids entered `top` and
//! which an insertion pushed out of it ([`ReadySet::entered`],
//! [`ReadySet::evicted`], cleared by [`ReadySet::take_changed`]): the
//! engine then preempts and places only those, and skips a decision when
//! `top` did not change ([`ReadySet::changed`]).
//!
//! Nothing allocates after the first decisions: `top` holds at most m
//! entries, the heap at most one per task, and the two notes at most one
//! id per insertion or removal between two decisions.

/// Ready tasks' keys: the `m` smallest in order, the rest in a heap; ids
/// are task indices `0..n`.
#[derive(Clone, Debug)]
pub struct ReadySet<K> {
    m: usize,
    /// The `min(m, len)` smallest entries, ascending.
    top: Vec<(K, usize)>,
    /// The others: `heap[i] <= heap[2i + 1], heap[2i + 2]`.
    heap: Vec<(K, usize)>,
    /// Per id: [`ABSENT`], [`IN_TOP`], or its index in `heap`.
    position: Vec<usize>,
    /// `top` changed since [`ReadySet::take_changed`] last read it.
    changed: bool,
    /// Ids pushed down from `top` into the heap by an insertion since
    /// [`ReadySet::take_changed`] (at most one per insertion).
    evicted: Vec<usize>,
    /// Ids that entered `top` (inserted or lifted from the heap) since
    /// [`ReadySet::take_changed`].
    entered: Vec<usize>,
}

const ABSENT: usize = usize::MAX;
const IN_TOP: usize = usize::MAX - 1;

impl<K: Ord + Copy> ReadySet<K> {
    /// An empty set for ids `0..n` whose `m` smallest are kept in order.
    pub fn new(n: usize, m: usize) -> ReadySet<K> {
        ReadySet {
            m,
            top: Vec::with_capacity(m + 1),
            heap: Vec::with_capacity(n),
            position: vec![ABSENT; n],
            changed: false,
            evicted: Vec::with_capacity(n),
            entered: Vec::with_capacity(n),
        }
    }

    /// Ready ids.
    pub fn len(&self) -> usize {
        self.top.len() + self.heap.len()
    }

    /// True when no id is ready.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when `id` is in the set.
    pub fn contains(&self, id: usize) -> bool {
        self.position.get(id).is_some_and(|&p| p != ABSENT)
    }

    /// True when `id` is one of the `m` smallest.
    pub fn is_top(&self, id: usize) -> bool {
        self.position.get(id) == Some(&IN_TOP)
    }

    /// The `min(m, len)` smallest `(key, id)`, smallest first.
    pub fn top(&self) -> &[(K, usize)] {
        &self.top
    }

    /// True when `top` changed (an entry entered or left it) since the
    /// last call; clears the mark and [`ReadySet::evicted`]. The global
    /// engine skips a decision when the m most urgent are those it placed
    /// last time.
    pub fn take_changed(&mut self) -> bool {
        self.evicted.clear();
        self.entered.clear();
        std::mem::replace(&mut self.changed, false)
    }

    /// The ids that entered `top` since [`ReadySet::take_changed`] (some
    /// may have left it since): after a decision that placed every entry
    /// of `top`, only these can be waiting for a processor.
    pub fn entered(&self) -> &[usize] {
        &self.entered
    }

    /// True when `top` changed since [`ReadySet::take_changed`].
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// The ids an insertion pushed out of `top` since
    /// [`ReadySet::take_changed`] (some may be back in it, or gone): an
    /// entry leaves `top` only so or by its removal, so these are the only
    /// running jobs a decision may have to preempt.
    pub fn evicted(&self) -> &[usize] {
        &self.evicted
    }

    /// The key of `id`, when it is in the set.
    pub fn key(&self, id: usize) -> Option<K> {
        match *self.position.get(id)? {
            ABSENT => None,
            IN_TOP => self.top.iter().find(|e| e.1 == id).map(|e| e.0),
            at => Some(self.heap[at].0),
        }
    }

    /// Adds `id` with `key`, or replaces its key.
    pub fn insert(&mut self, id: usize, key: K) {
        if self.contains(id) {
            self.remove(id);
        }
        let entry = (key, id);
        if self.top.len() < self.m {
            // The heap is empty while `top` is not full.
            self.insert_top(entry);
        } else if let Some(&last) = self.top.last().filter(|&&last| entry < last) {
            // `top` is full: the new entry takes its place in order, the
            // last one goes down to the heap.
            let mut at = self.top.len() - 1;
            while at > 0 && entry < self.top[at - 1] {
                self.top[at] = self.top[at - 1];
                at -= 1;
            }
            self.top[at] = entry;
            self.position[id] = IN_TOP;
            self.entered.push(id);
            self.changed = true;
            self.heap_push(last);
            self.evicted.push(last.1);
        } else {
            self.heap_push(entry);
        }
    }

    /// Removes `id` (nothing when absent); returns its key.
    pub fn remove(&mut self, id: usize) -> Option<K> {
        match *self.position.get(id)? {
            ABSENT => None,
            IN_TOP => {
                let at = self.top.iter().position(|e| e.1 == id)?;
                // Shifted by hand: m is small, a call to `memmove` costs
                // more than the few moves.
                let (key, _) = self.top[at];
                for i in at + 1..self.top.len() {
                    self.top[i - 1] = self.top[i];
                }
                self.top.pop();
                self.position[id] = ABSENT;
                self.changed = true;
                if let Some(least) = self.heap_pop() {
                    self.position[least.1] = IN_TOP;
                    self.top.push(least);
                    self.entered.push(least.1);
                }
                Some(key)
            }
            at => {
                let (key, _) = self.heap_remove(at);
                Some(key)
            }
        }
    }

    fn insert_top(&mut self, entry: (K, usize)) {
        // From the end: m is small, and a new job's key (a later
        // deadline) is mostly the largest.
        self.top.push(entry);
        let mut at = self.top.len() - 1;
        while at > 0 && entry < self.top[at - 1] {
            self.top[at] = self.top[at - 1];
            at -= 1;
        }
        self.top[at] = entry;
        self.position[entry.1] = IN_TOP;
        self.entered.push(entry.1);
        self.changed = true;
    }

    fn heap_push(&mut self, entry: (K, usize)) {
        let at = self.heap.len();
        self.heap.push(entry);
        self.sift_up(at);
    }

    fn heap_pop(&mut self) -> Option<(K, usize)> {
        if self.heap.is_empty() {
            return None;
        }
        // The last entry moves to the root: it can only go down.
        let least = self.heap.swap_remove(0);
        self.position[least.1] = ABSENT;
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
        Some(least)
    }

    fn heap_remove(&mut self, at: usize) -> (K, usize) {
        let entry = self.heap.swap_remove(at);
        self.position[entry.1] = ABSENT;
        if at < self.heap.len() {
            // The moved entry may belong above or below `at`.
            let at = self.sift_up(at);
            self.sift_down(at);
        }
        entry
    }

    /// Moves the entry at `at` up to its place (a hole moves down past
    /// the greater parents, each entry written once); returns where it
    /// went, its position noted.
    fn sift_up(&mut self, mut at: usize) -> usize {
        let entry = self.heap[at];
        while at > 0 {
            let parent = (at - 1) / 2;
            let above = self.heap[parent];
            if above <= entry {
                break;
            }
            self.heap[at] = above;
            self.position[above.1] = at;
            at = parent;
        }
        self.heap[at] = entry;
        self.position[entry.1] = at;
        at
    }

    /// Moves the entry at `at` down to its place, as [`ReadySet::sift_up`].
    fn sift_down(&mut self, mut at: usize) {
        let n = self.heap.len();
        let entry = self.heap[at];
        loop {
            let left = 2 * at + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right] < self.heap[left] {
                right
            } else {
                left
            };
            let below = self.heap[child];
            if entry <= below {
                break;
            }
            self.heap[at] = below;
            self.position[below.1] = at;
            at = child;
        }
        self.heap[at] = entry;
        self.position[entry.1] = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_the_m_smallest_in_order() {
        let mut set = ReadySet::new(6, 3);
        for (id, key) in [(0, 50u64), (1, 10), (2, 40), (3, 30), (4, 20), (5, 60)] {
            set.insert(id, key);
        }
        assert_eq!(set.top(), &[(10, 1), (20, 4), (30, 3)]);
        assert!(set.is_top(4) && !set.is_top(2));
        assert_eq!(set.key(2), Some(40));
        assert_eq!(set.remove(4), Some(20));
        assert_eq!(set.remove(4), None);
        assert_eq!(set.top(), &[(10, 1), (30, 3), (40, 2)]);
        set.insert(1, 70);
        assert_eq!(set.top(), &[(30, 3), (40, 2), (50, 0)]);
        assert_eq!(set.len(), 5);
        // Equal keys: the lower id first.
        set.insert(4, 30);
        assert_eq!(set.top(), &[(30, 3), (30, 4), (40, 2)]);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(usize, u8),
        Remove(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..12usize, any::<u8>()).prop_map(|(i, k)| Op::Insert(i, k)),
            (0..12usize).prop_map(Op::Remove),
        ]
    }

    proptest! {
        /// Against the obvious model: every entry in a vector, sorted on
        /// demand, for every m from 0 to past the number of ids.
        #[test]
        fn agrees_with_sorting_everything(m in 0..14usize, ops in proptest::collection::vec(op(), 1..200)) {
            let mut set = ReadySet::new(12, m);
            let mut model: Vec<Option<u8>> = vec![None; 12];
            let mut last_top: Vec<(u8, usize)> = Vec::new();
            for op in ops {
                // An id given a new key leaves `top` by its removal, not
                // by eviction (the engine never re-keys a ready task).
                let mut rekeyed = None;
                match op {
                    Op::Insert(id, k) => {
                        set.insert(id, k);
                        if model[id].is_some() {
                            rekeyed = Some(id);
                        }
                        model[id] = Some(k);
                    }
                    Op::Remove(id) => prop_assert_eq!(set.remove(id), model[id].take()),
                }
                let mut all: Vec<(u8, usize)> = (0..12)
                    .filter_map(|id| model[id].map(|k| (k, id)))
                    .collect();
                all.sort_unstable();
                prop_assert_eq!(set.len(), all.len());
                all.truncate(m);
                prop_assert_eq!(set.top(), &all[..]);
                // Every id that left the m most urgent but is still ready
                // was evicted.
                for &(_, id) in &last_top {
                    if model[id].is_some() && !set.is_top(id) && rekeyed != Some(id) {
                        prop_assert!(set.evicted().contains(&id));
                    }
                }
                // Every id new among the m most urgent entered.
                for &(_, id) in &all {
                    if !last_top.iter().any(|e| e.1 == id) {
                        prop_assert!(set.entered().contains(&id));
                    }
                }
                // Unmarked, the m most urgent are those read last time.
                if !set.take_changed() {
                    prop_assert_eq!(&last_top, &all);
                }
                prop_assert!(set.evicted().is_empty() && set.entered().is_empty());
                last_top = all.clone();
                for (id, &key) in model.iter().enumerate() {
                    prop_assert_eq!(set.key(id), key);
                    prop_assert_eq!(set.is_top(id), all.iter().any(|e| e.1 == id));
                }
            }
        }
    }
}
