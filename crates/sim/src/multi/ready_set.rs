//! The global engine's ready set under a static rule (global EDF, global
//! FP): an indexed binary min-heap of at most one key per task, from which
//! the m most urgent are read in order without sorting the whole set.
//!
//! | operation | cost |
//! | --- | --- |
//! | [`ReadySet::insert`], [`ReadySet::remove`] | O(log n) |
//! | [`ReadySet::smallest`] (the m smallest, in order) | O(m²) comparisons (m processors: a few), heap untouched |
//!
//! A key never changes while its job is ready (EDF's deadline, FP's level),
//! so a job enters once when it becomes its task's head and leaves once
//! when it completes or is aborted. [`ReadySet::smallest`] walks the heap
//! best-first: the root is the smallest key, and the next smallest is
//! always a child of one already taken, so a second small heap of
//! candidates (at most m + 1 of them) yields the m smallest in order. The
//! engine used to collect every ready job and select and sort the m most
//! urgent at each scheduling point (O(n) per decision plus a sort).
//!
//! Nothing allocates after the first decisions: the heap holds at most one
//! entry per task and the candidate buffer is reused.

/// Ready tasks' keys, smallest first; ids are task indices `0..n`.
#[derive(Clone, Debug)]
pub struct ReadySet<K> {
    /// The binary heap: `heap[i] <= heap[2i + 1], heap[2i + 2]`.
    heap: Vec<(K, usize)>,
    /// Where each id sits in `heap` (`NONE` when absent).
    position: Vec<usize>,
    /// Candidates of [`ReadySet::smallest`]: (key, heap index), reused.
    frontier: Vec<(K, usize)>,
}

const NONE: usize = usize::MAX;

impl<K: Ord + Copy> ReadySet<K> {
    /// An empty set for ids `0..n`.
    pub fn new(n: usize) -> ReadySet<K> {
        ReadySet {
            heap: Vec::with_capacity(n),
            position: vec![NONE; n],
            frontier: Vec::new(),
        }
    }

    /// Ready ids.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when no id is ready.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// True when `id` is in the set.
    pub fn contains(&self, id: usize) -> bool {
        self.position.get(id).is_some_and(|&p| p != NONE)
    }

    /// The key of `id`, when it is in the set.
    pub fn key(&self, id: usize) -> Option<K> {
        let at = *self.position.get(id).filter(|&&p| p != NONE)?;
        Some(self.heap[at].0)
    }

    /// Adds `id` with `key`, or replaces its key.
    pub fn insert(&mut self, id: usize, key: K) {
        if self.contains(id) {
            self.remove(id);
        }
        let at = self.heap.len();
        self.heap.push((key, id));
        self.position[id] = at;
        self.sift_up(at);
    }

    /// Removes `id` (nothing when absent); returns its key.
    pub fn remove(&mut self, id: usize) -> Option<K> {
        let at = *self.position.get(id).filter(|&&p| p != NONE)?;
        let (key, _) = self.heap.swap_remove(at);
        self.position[id] = NONE;
        if at < self.heap.len() {
            self.position[self.heap[at].1] = at;
            // The moved entry may belong above or below `at`.
            let at = self.sift_up(at);
            self.sift_down(at);
        }
        Some(key)
    }

    /// Clears `out` and fills it with the `m` smallest `(key, id)`, smallest
    /// first (fewer when fewer are ready).
    pub fn smallest(&mut self, m: usize, out: &mut Vec<(K, usize)>) {
        out.clear();
        let frontier = &mut self.frontier;
        frontier.clear();
        if let Some(&(key, _)) = self.heap.first() {
            frontier.push((key, 0));
        }
        while out.len() < m {
            // The frontier is small (at most m + 1): its minimum by a scan
            // beats a second heap for the few processors of a platform.
            let Some(best) = (0..frontier.len()).min_by_key(|&i| frontier[i].0) else {
                break;
            };
            let (_, at) = frontier.swap_remove(best);
            out.push(self.heap[at]);
            for child in [2 * at + 1, 2 * at + 2] {
                if let Some(&(key, _)) = self.heap.get(child) {
                    frontier.push((key, child));
                }
            }
        }
    }

    fn sift_up(&mut self, mut at: usize) -> usize {
        while at > 0 {
            let parent = (at - 1) / 2;
            if self.heap[parent].0 <= self.heap[at].0 {
                break;
            }
            self.swap(at, parent);
            at = parent;
        }
        at
    }

    fn sift_down(&mut self, mut at: usize) {
        let n = self.heap.len();
        loop {
            let (left, right) = (2 * at + 1, 2 * at + 2);
            let mut least = at;
            if left < n && self.heap[left].0 < self.heap[least].0 {
                least = left;
            }
            if right < n && self.heap[right].0 < self.heap[least].0 {
                least = right;
            }
            if least == at {
                return;
            }
            self.swap(at, least);
            at = least;
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.position[self.heap[a].1] = a;
        self.position[self.heap[b].1] = b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_the_m_smallest_in_order() {
        let mut set = ReadySet::new(6);
        for (id, key) in [(0, 50u64), (1, 10), (2, 40), (3, 30), (4, 20), (5, 60)] {
            set.insert(id, key);
        }
        let mut out = Vec::new();
        set.smallest(3, &mut out);
        assert_eq!(out, vec![(10, 1), (20, 4), (30, 3)]);
        assert_eq!(set.remove(4), Some(20));
        assert_eq!(set.remove(4), None);
        set.smallest(10, &mut out);
        assert_eq!(out, vec![(10, 1), (30, 3), (40, 2), (50, 0), (60, 5)]);
        set.insert(1, 70);
        set.smallest(2, &mut out);
        assert_eq!(out, vec![(30, 3), (40, 2)]);
        assert_eq!(set.len(), 5);
        set.smallest(0, &mut out);
        assert!(out.is_empty());
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(usize, u16),
        Remove(usize),
        Smallest(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..12usize, any::<u16>()).prop_map(|(i, k)| Op::Insert(i, k)),
            (0..12usize).prop_map(Op::Remove),
            (0..14usize).prop_map(Op::Smallest),
        ]
    }

    proptest! {
        /// Against the obvious model: every key in a vector, sorted on
        /// demand (keys made unique by the id, as the engine's are).
        #[test]
        fn agrees_with_sorting_everything(ops in proptest::collection::vec(op(), 1..200)) {
            let mut set = ReadySet::new(12);
            let mut model: Vec<Option<(u16, usize)>> = vec![None; 12];
            let mut out = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(id, k) => {
                        set.insert(id, (k, id));
                        model[id] = Some((k, id));
                    }
                    Op::Remove(id) => {
                        prop_assert_eq!(set.remove(id), model[id].take());
                    }
                    Op::Smallest(m) => {
                        set.smallest(m, &mut out);
                        let mut all: Vec<_> = model.iter().flatten().map(|&k| (k, k.1)).collect();
                        all.sort_unstable();
                        all.truncate(m);
                        prop_assert_eq!(&out, &all);
                    }
                }
                prop_assert_eq!(set.len(), model.iter().flatten().count());
            }
        }
    }
}
