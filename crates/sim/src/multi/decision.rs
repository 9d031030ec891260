//! One global decision: which ready jobs run and on which processor. The
//! simulator's global engine ([`super::global`]) and the real-thread
//! dispatcher (`rtlab_rt::dispatcher::global`) both decide with these, so
//! a global scheduler is written once.
//!
//! The rule: the m jobs of smallest [`Key`] run ([`choose`]); a chosen job
//! that was running keeps its processor; each newly chosen job, in key
//! order, takes the processor it last ran on if that one is idle, else the
//! lowest-numbered idle processor no preempted job left, else the
//! processor of the least urgent preempted job ([`processor_for`]).

use super::rule::Key;

/// Orders `order` (every ready job as `(key, id)`) so that its first
/// `min(len, m)` entries are the m most urgent, most urgent first (the
/// rest in any order), and returns how many were chosen.
pub fn choose<T: Ord>(order: &mut [(Key, T)], m: usize) -> usize {
    if order.len() > m {
        order.select_nth_unstable(m);
    }
    let chosen = order.len().min(m);
    order[..chosen].sort_unstable();
    chosen
}

/// Orders the processors freed by preemption (`(key of the preempted job,
/// processor)`) least urgent job first: the order [`processor_for`] hands
/// them out in.
pub fn least_urgent_first(freed: &mut [(Key, usize)]) {
    freed.sort_unstable_by(|a, b| b.cmp(a));
}

/// The processor a newly chosen job takes among `m`: `last` (the one it
/// last ran on) if idle, else the lowest-numbered idle one not in `freed`,
/// else the first idle one of `freed` ([`least_urgent_first`] order).
/// `None` only when no processor is idle.
pub fn processor_for(
    last: Option<usize>,
    m: usize,
    idle: impl Fn(usize) -> bool,
    freed: &[(Key, usize)],
) -> Option<usize> {
    let not_freed = |c: usize| freed.is_empty() || !freed.iter().any(|f| f.1 == c);
    last.filter(|&c| idle(c))
        .or_else(|| (0..m).find(|&c| idle(c) && not_freed(c)))
        .or_else(|| freed.iter().map(|f| f.1).find(|&c| idle(c)))
}

/// [`processor_for`] with the idle processors as a bit set (processor
/// `c` is idle when bit `c` of `idle` is set; m <= 64): the same choice,
/// found with a few bit operations instead of a scan of every processor.
pub fn processor_for_mask(last: Option<usize>, idle: u64, freed: &[(Key, usize)]) -> Option<usize> {
    let is_idle = |c: usize| c < 64 && (idle >> c) & 1 == 1;
    if let Some(c) = last.filter(|&c| is_idle(c)) {
        return Some(c);
    }
    let freed_mask = freed
        .iter()
        .filter(|f| f.1 < 64)
        .fold(0u64, |mask, f| mask | (1 << f.1));
    match idle & !freed_mask {
        0 => freed.iter().map(|f| f.1).find(|&c| is_idle(c)),
        unfreed => Some(unfreed.trailing_zeros() as usize),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(d: u64) -> Key {
        (d, 0, 0, 0)
    }

    #[test]
    fn choose_keeps_the_m_smallest_keys_in_order() {
        let mut order = vec![(key(9), 0), (key(3), 1), (key(7), 2), (key(1), 3)];
        assert_eq!(choose(&mut order, 2), 2);
        assert_eq!(&order[..2], &[(key(1), 3), (key(3), 1)]);
        let mut few = vec![(key(5), 0)];
        assert_eq!(choose(&mut few, 3), 1);
    }

    #[test]
    fn a_job_goes_back_to_its_processor_then_to_an_unfreed_idle_one_then_to_a_freed_one() {
        // Processors 0 and 2 idle; 2 was freed by preempting a job of key 8.
        let idle = |c: usize| c == 0 || c == 2;
        let freed = [(key(8), 2)];
        assert_eq!(processor_for(Some(2), 3, idle, &freed), Some(2));
        assert_eq!(processor_for(Some(1), 3, idle, &freed), Some(0));
        assert_eq!(processor_for(None, 3, |c| c == 2, &freed), Some(2));
        assert_eq!(processor_for(None, 3, |_| false, &freed), None);
        let mut two = [(key(3), 0), (key(8), 1)];
        least_urgent_first(&mut two);
        assert_eq!(two[0].1, 1);
    }

    #[test]
    fn the_bit_set_choice_is_the_scanning_one() {
        for m in 1..=5usize {
            for idle in 0u64..(1 << m) {
                for freed_set in 0u64..(1 << m) {
                    let up: Vec<(Key, usize)> = (0..m)
                        .filter(|&c| (freed_set >> c) & 1 == 1)
                        .map(|c| (key(c as u64), c))
                        .collect();
                    let down: Vec<(Key, usize)> = up.iter().rev().copied().collect();
                    for freed in [&up, &down] {
                        for last in std::iter::once(None).chain((0..m).map(Some)) {
                            let scan = processor_for(last, m, |c| (idle >> c) & 1 == 1, freed);
                            assert_eq!(processor_for_mask(last, idle, freed), scan);
                        }
                    }
                }
            }
        }
    }
}
