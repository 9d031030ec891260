//! Blocking from critical sections under the classic locking protocols.
//!
//! Each task lists its critical sections (resource, start, length); a
//! resource's *ceiling* is the highest level of the tasks that use it.
//! For task τi at level Pi, lp(i) are the tasks with a lower level:
//!
//! - **PIP**, priority inheritance (Sha, Rajkumar & Lehoczky, *Priority
//!   Inheritance Protocols*, IEEE TC 39(9), 1990, §5): τi is blocked at most
//!   once per resource and at most once per lower-priority task, so
//!   `Bi = min( Σ_{r: ceil(r) >= Pi} max_{k ∈ lp(i)} len(k, r),
//!              Σ_{k ∈ lp(i)} max_{r: ceil(r) >= Pi} len(k, r) )`.
//! - **IPCP** (also read as `pcp`), (immediate) priority ceiling (same paper; Baker's SRP
//!   under fixed priorities gives the same bound): at most one section,
//!   `Bi = max { len(k, r) : k ∈ lp(i), ceil(r) >= Pi }`.
//! - **SRP** under EDF (Baker, *Stack-based scheduling of realtime
//!   processes*, Real-Time Systems 3(1), 1991) and the **Deadline Floor
//!   Protocol** (Burns, Gutierrez, Aldea Rivas & Gonzalez Harbour, *A
//!   Deadline-Floor Inheritance Protocol for EDF Scheduled Embedded
//!   Real-Time Systems with Resource Sharing*, IEEE TC 64(5), 2015; the
//!   locking of paper 001) share one bound, Baruah's
//!   (*Resource sharing in EDF-scheduled systems: a closer look*, RTSS 2006)
//!   `B(t) = max { len(k, r) : Dk > t, r used by some τj with Dj <= t }`,
//!   added to the demand: `h(t) + B(t) <= t` ([`crate::edf_demand`]).
//!
//! The length of a nested section includes its inner sections; transitive
//! blocking through nested sections under PIP is not modelled.

use rtlab_model::{Nanos, TaskSet};

use crate::priority::Priorities;

pub use rtlab_model::policy::LockingProtocol;

/// True when some task has a critical section.
pub fn has_critical_sections(set: &TaskSet) -> bool {
    set.tasks.iter().any(|t| !t.critical_sections.is_empty())
}

/// Per-task blocking Bi under fixed priorities (zeros without sections).
/// `ipcp`, `srp` and `dfp` share the ceiling bound; `npp` (Mok 1983) is
/// blocked by the longest section of any lower-priority task, whatever its
/// resource; `none` is unbounded (`Nanos::MAX`) wherever a lower-priority
/// task shares a resource with τi or a more urgent task.
pub fn fixed_priority(
    set: &TaskSet,
    priorities: &Priorities,
    protocol: LockingProtocol,
) -> Vec<Nanos> {
    let n = set.tasks.len();
    let ceiling = |resource: &str| {
        (0..n)
            .filter(|&k| {
                set.tasks[k]
                    .critical_sections
                    .iter()
                    .any(|cs| cs.resource == resource)
            })
            .map(|k| priorities.level(k))
            .max()
            .unwrap_or(0)
    };
    // (task, resource, length) of every section that can block level Pi.
    let sections: Vec<(usize, &str, Nanos, u32)> = set
        .tasks
        .iter()
        .enumerate()
        .flat_map(|(k, t)| {
            t.critical_sections
                .iter()
                .map(move |cs| (k, cs.resource.as_str(), cs.length))
        })
        .map(|(k, r, len)| (k, r, len, ceiling(r)))
        .collect();
    (0..n)
        .map(|i| {
            let pi = priorities.level(i);
            let blocking: Vec<(usize, &str, Nanos)> = sections
                .iter()
                .filter(|&&(k, _, _, ceil)| priorities.level(k) < pi && ceil >= pi)
                .map(|&(k, r, len, _)| (k, r, len))
                .collect();
            match protocol {
                LockingProtocol::Pip => {
                    let per_resource = sum_of_max(&blocking, |&(_, r, _)| r);
                    let per_task = sum_of_max(&blocking, |&(k, _, _)| k);
                    per_resource.min(per_task)
                }
                LockingProtocol::Ipcp | LockingProtocol::Srp | LockingProtocol::Dfp => blocking
                    .iter()
                    .map(|&(_, _, len)| len)
                    .max()
                    .unwrap_or_default(),
                LockingProtocol::Npp => sections
                    .iter()
                    .filter(|&&(k, _, _, _)| priorities.level(k) < pi)
                    .map(|&(_, _, len, _)| len)
                    .max()
                    .unwrap_or_default(),
                LockingProtocol::None if blocking.is_empty() => Nanos::ZERO,
                LockingProtocol::None => Nanos::MAX,
            }
        })
        .collect()
}

/// Σ over groups of the longest section in each group.
fn sum_of_max<'a, K: PartialEq>(
    sections: &[(usize, &'a str, Nanos)],
    key: impl Fn(&(usize, &'a str, Nanos)) -> K,
) -> Nanos {
    let mut groups: Vec<(K, Nanos)> = Vec::new();
    for s in sections {
        let k = key(s);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, m)) => *m = (*m).max(s.2),
            None => groups.push((k, s.2)),
        }
    }
    groups
        .iter()
        .fold(Nanos::ZERO, |acc, &(_, m)| acc.saturating_add(m))
}

/// Baruah's blocking function `B(t)` for SRP and DFP under EDF.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EdfBlocking {
    /// `(min deadline of r's users, deadline of the blocking task, length)`:
    /// the section blocks at `t` when `first <= t < second`.
    entries: Vec<(u64, u64, u64)>,
}

impl EdfBlocking {
    /// No blocking.
    pub fn none() -> EdfBlocking {
        EdfBlocking::default()
    }

    /// `B(t)` for the critical sections of `set`.
    pub fn of(set: &TaskSet) -> EdfBlocking {
        let min_deadline = |resource: &str| {
            set.tasks
                .iter()
                .filter(|t| t.critical_sections.iter().any(|cs| cs.resource == resource))
                .map(|t| t.deadline.as_ns())
                .min()
                .unwrap_or(u64::MAX)
        };
        let mut entries: Vec<(u64, u64, u64)> = set
            .tasks
            .iter()
            .flat_map(|t| {
                t.critical_sections.iter().map(move |cs| {
                    (
                        min_deadline(&cs.resource),
                        t.deadline.as_ns(),
                        cs.length.as_ns(),
                    )
                })
            })
            .filter(|&(dmin, dk, _)| dmin < dk)
            .collect();
        entries.sort_unstable();
        entries.dedup();
        EdfBlocking { entries }
    }

    /// True when there is no blocking at any t.
    pub fn is_none(&self) -> bool {
        self.entries.is_empty()
    }

    /// `B(t)`.
    pub fn at(&self, t: u64) -> u64 {
        self.entries
            .iter()
            .filter(|&&(dmin, dk, _)| dmin <= t && t < dk)
            .map(|&(_, _, len)| len)
            .max()
            .unwrap_or(0)
    }

    /// `max_t B(t)`.
    pub fn max(&self) -> u64 {
        self.entries.iter().map(|e| e.2).max().unwrap_or(0)
    }

    /// The points where `B(t)` may change value (it is constant between
    /// them), in no particular order.
    pub fn breakpoints(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().flat_map(|&(from, to, _)| [from, to])
    }

    /// The least `t` from which `B(t) = 0` for good (0 without blocking).
    pub fn horizon(&self) -> u64 {
        self.entries.iter().map(|e| e.1).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::assign;
    use rtlab_model::policy::PriorityAssignment;
    use rtlab_model::{CriticalSection, Task};

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn with_cs(mut t: Task, sections: &[(&str, u64, u64)]) -> Task {
        t.critical_sections = sections
            .iter()
            .map(|&(r, s, l)| CriticalSection {
                resource: r.into(),
                start: ms(s),
                length: ms(l),
            })
            .collect();
        t
    }

    /// Three tasks sharing two resources, RM priorities H > M > L.
    fn example() -> TaskSet {
        TaskSet::new(
            "cs",
            vec![
                with_cs(Task::new("H", ms(10), ms(2)), &[("a", 0, 1), ("b", 1, 1)]),
                with_cs(Task::new("M", ms(20), ms(4)), &[("a", 0, 2)]),
                with_cs(Task::new("L", ms(40), ms(8)), &[("a", 0, 3), ("b", 4, 4)]),
            ],
        )
    }

    #[test]
    fn pcp_takes_the_longest_single_section() {
        let set = example();
        let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
        // H: lower sections on a (2, 3) and b (4) all have ceiling H → 4.
        // M: L's a (3) has ceiling H >= M, L's b (4) has ceiling H >= M → 4.
        // L: nothing below.
        assert_eq!(
            fixed_priority(&set, &p, LockingProtocol::Ipcp),
            vec![ms(4), ms(4), ms(0)]
        );
    }

    #[test]
    fn pip_sums_per_resource_or_per_task_whichever_is_less() {
        let set = example();
        let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
        // H: per resource a: max(2, 3) + b: 4 = 7; per task M: 2 + L: max(3, 4) = 6 → 6.
        // M: per resource a: 3 + b: 4 = 7; per task L: 4 → 4.
        assert_eq!(
            fixed_priority(&set, &p, LockingProtocol::Pip),
            vec![ms(6), ms(4), ms(0)]
        );
    }

    #[test]
    fn baruah_blocking_function() {
        let b = EdfBlocking::of(&example());
        // Resource a: users' min D = 10; b: min D = 10.
        assert_eq!(b.at(ms(5).as_ns()), 0);
        assert_eq!(b.at(ms(10).as_ns()), ms(4).as_ns());
        assert_eq!(b.at(ms(20).as_ns()), ms(4).as_ns());
        assert_eq!(b.at(ms(40).as_ns()), 0);
        assert_eq!(b.max(), ms(4).as_ns());
    }
}
