//! Shared resources on m processors: which resources are global, and the
//! multiprocessor locking protocols that manage them.
//!
//! The task-set file needs nothing new: a task's critical sections name
//! their resources (`[[task.critical_sections]]`), and where each task runs
//! (its `cpu` for a partitioned scheduler, its cluster for a global or
//! clustered one) decides what kind of resource each is:
//!
//! - a **local** resource is used by tasks of one processor (partitioned) or
//!   one cluster (global, clustered): the processor's own ceiling protocol
//!   manages it, with no waiting across processors;
//! - a **global** resource is used from two or more processors (clusters):
//!   the multiprocessor protocol ([`MpProtocol`]) manages it.
//!
//! Under the partitioned protocols (MPCP, DPCP, FMLP+, MrsP, MSRP) local
//! resources follow the immediate priority ceiling protocol on their
//! processor (MrsP's own rule on one processor); global ones the protocol.
//! Under the OMLP every resource of a cluster is the protocol's.
//!
//! What is refused ([`check`], [`check_uniprocessor`]), each at the
//! critical section it comes from:
//!
//! - a critical section nested in another when either is on a global
//!   resource (none of the six papers' protocols nests global sections;
//!   group locks would), and any nesting under the OMLP;
//! - under the OMLP, a resource used from two clusters (the clustered
//!   OMLP's priority donation is not modelled);
//! - under a uniprocessor protocol (PIP, (I)PCP, SRP, DFP, NPP), a resource
//!   used from two processors.

use crate::task::{Diagnostic, FieldPath, TaskSet};
use crate::text::printable;

/// A multiprocessor locking protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MpProtocol {
    /// Multiprocessor priority ceiling protocol (Rajkumar 1990): a job
    /// waiting for a global resource suspends in a queue ordered by
    /// priority; its global critical section runs on its own processor at a
    /// priority above every task's (boosted by the resource's remote
    /// ceiling).
    Mpcp,
    /// Distributed priority ceiling protocol (Rajkumar, Sha & Lehoczky
    /// 1988): every global resource lives on a synchronization processor;
    /// a job's global critical section is executed there by an agent at a
    /// priority above every task's, while the job suspends.
    Dpcp,
    /// Partitioned FMLP+ (Brandenburg 2014): FIFO-ordered suspension
    /// queues; a lock holder is boosted above every task of its processor,
    /// boosted holders served in the order of their requests.
    FmlpPlus,
    /// The O(m) locking protocol (Brandenburg & Anderson 2010) under global
    /// EDF: a FIFO queue of at most m jobs, a priority queue behind it, and
    /// priority inheritance from every waiter to the holder.
    Omlp,
    /// Multiprocessor resource sharing protocol (Burns & Wellings 2013): a
    /// job spins at its resource's local ceiling in FIFO order, and a
    /// preempted holder migrates to a processor where a waiter spins, to
    /// use its time.
    Mrsp,
    /// Multiprocessor stack resource policy (Gai, Lipari & Di Natale
    /// 2001): non-preemptive FIFO spinning, the critical section run
    /// non-preemptively.
    Msrp,
}

/// The kind of scheduler a protocol runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MpScheduling {
    /// Partitioned fixed priorities (`pfp:rm|dm|given`).
    PartitionedFixedPriority,
    /// Global EDF (`gedf`), or clustered EDF (`cedf`) with each resource
    /// inside one cluster.
    GlobalEdf,
}

impl MpProtocol {
    /// Every protocol, in the order tables list them.
    pub const ALL: [MpProtocol; 6] = [
        MpProtocol::Mpcp,
        MpProtocol::Dpcp,
        MpProtocol::FmlpPlus,
        MpProtocol::Mrsp,
        MpProtocol::Msrp,
        MpProtocol::Omlp,
    ];

    /// The stable name (`--locking`): `mpcp`, `dpcp`, `fmlp+`, `omlp`,
    /// `mrsp`, `msrp`.
    pub const fn name(self) -> &'static str {
        match self {
            MpProtocol::Mpcp => "mpcp",
            MpProtocol::Dpcp => "dpcp",
            MpProtocol::FmlpPlus => "fmlp+",
            MpProtocol::Omlp => "omlp",
            MpProtocol::Mrsp => "mrsp",
            MpProtocol::Msrp => "msrp",
        }
    }

    /// The protocol with this name (`fmlpp` and `fmlp-plus` are accepted
    /// for `fmlp+`, which a shell or a file name may not like).
    pub fn from_name(text: &str) -> Option<MpProtocol> {
        match text {
            "fmlpp" | "fmlp-plus" => Some(MpProtocol::FmlpPlus),
            _ => MpProtocol::ALL.into_iter().find(|p| p.name() == text),
        }
    }

    /// The names, for messages.
    pub fn names() -> String {
        MpProtocol::ALL.map(MpProtocol::name).join(", ")
    }

    /// The paper that defines the protocol.
    pub const fn paper(self) -> &'static str {
        match self {
            MpProtocol::Mpcp => "Rajkumar 1990",
            MpProtocol::Dpcp => "Rajkumar, Sha & Lehoczky 1988",
            MpProtocol::FmlpPlus => "Brandenburg 2014",
            MpProtocol::Omlp => "Brandenburg & Anderson 2010",
            MpProtocol::Mrsp => "Burns & Wellings 2013",
            MpProtocol::Msrp => "Gai, Lipari & Di Natale 2001",
        }
    }

    /// The scheduler kind the protocol is defined for.
    pub const fn scheduling(self) -> MpScheduling {
        match self {
            MpProtocol::Omlp => MpScheduling::GlobalEdf,
            _ => MpScheduling::PartitionedFixedPriority,
        }
    }

    /// True when a waiting job busy-waits (keeps its processor) rather than
    /// suspends.
    pub const fn spins(self) -> bool {
        matches!(self, MpProtocol::Mrsp | MpProtocol::Msrp)
    }

    /// The schedulers it runs under, for messages.
    pub const fn schedulers(self) -> &'static str {
        match self.scheduling() {
            MpScheduling::PartitionedFixedPriority => {
                "partitioned fixed priorities (pfp:rm, pfp:dm, pfp:given)"
            }
            MpScheduling::GlobalEdf => "global or clustered EDF (gedf, cedf)",
        }
    }
}

impl std::fmt::Display for MpProtocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl std::str::FromStr for MpProtocol {
    type Err = String;
    fn from_str(text: &str) -> Result<MpProtocol, String> {
        MpProtocol::from_name(text).ok_or_else(|| {
            format!(
                "`{}` is not a multiprocessor locking protocol: use {}",
                printable(text),
                MpProtocol::names()
            )
        })
    }
}

/// What the places tasks run in are: processors (partitioned) or clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Places {
    /// Group `k` is processor `k`.
    Processors,
    /// Group `k` is cluster `k` (numbered from 1 in messages).
    Clusters,
}

impl Places {
    fn one(self, group: u32) -> String {
        match self {
            Places::Processors => format!("cpu {group}"),
            Places::Clusters => format!("cluster #{}", group + 1),
        }
    }

    fn many(self, groups: &[u32]) -> String {
        let named: Vec<String> = groups
            .iter()
            .map(|&g| match self {
                Places::Processors => g.to_string(),
                Places::Clusters => format!("#{}", g + 1),
            })
            .collect();
        let kind = match self {
            Places::Processors => "cpus",
            Places::Clusters => "clusters",
        };
        format!("{kind} {}", named.join(", "))
    }
}

/// One resource of a task set and who uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedResource {
    /// Its name in the file.
    pub name: String,
    /// The tasks with a critical section on it (indices, ascending).
    pub users: Vec<usize>,
    /// The distinct groups (processors or clusters) of its users,
    /// ascending.
    pub groups: Vec<u32>,
}

impl SharedResource {
    /// Used from more than one processor (cluster).
    pub fn is_global(&self) -> bool {
        self.groups.len() > 1
    }
}

/// The resources of a task set placed on processors or clusters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sharing {
    /// The resources, in order of first use (task order, then section
    /// order).
    pub resources: Vec<SharedResource>,
    /// For each task, the resource of each of its critical sections.
    pub sections: Vec<Vec<usize>>,
    /// The group of each task.
    pub groups: Vec<u32>,
}

impl Sharing {
    /// The resources of `set` when task `i` runs in group `groups[i]`
    /// (`groups` has one entry per task).
    pub fn of(set: &TaskSet, groups: &[u32]) -> Sharing {
        let mut resources: Vec<SharedResource> = Vec::new();
        let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let mut sections = Vec::with_capacity(set.tasks.len());
        for (i, task) in set.tasks.iter().enumerate() {
            let group = groups.get(i).copied().unwrap_or(0);
            let mut own = Vec::with_capacity(task.critical_sections.len());
            for cs in &task.critical_sections {
                let r = *index.entry(cs.resource.as_str()).or_insert_with(|| {
                    resources.push(SharedResource {
                        name: cs.resource.clone(),
                        users: Vec::new(),
                        groups: Vec::new(),
                    });
                    resources.len() - 1
                });
                let res = &mut resources[r];
                if res.users.last() != Some(&i) {
                    res.users.push(i);
                }
                if let Err(at) = res.groups.binary_search(&group) {
                    res.groups.insert(at, group);
                }
                own.push(r);
            }
            sections.push(own);
        }
        Sharing {
            resources,
            sections,
            groups: groups.to_vec(),
        }
    }

    /// The index of the resource named `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.resources.iter().position(|r| r.name == name)
    }

    /// True when resource `r` is used from more than one group.
    pub fn is_global(&self, r: usize) -> bool {
        self.resources[r].is_global()
    }

    /// True when some resource is global.
    pub fn has_global(&self) -> bool {
        self.resources.iter().any(SharedResource::is_global)
    }

    /// DPCP's synchronization processor of each resource on `m`
    /// processors: the k-th global resource in order of first use lives on
    /// processor `k mod m` (SchedCAT's default mapping); a local resource
    /// lives on its users' processor.
    pub fn synchronization_processors(&self, m: u32) -> Vec<u32> {
        let mut k = 0u32;
        self.resources
            .iter()
            .map(|r| {
                if r.is_global() {
                    let cpu = k % m.max(1);
                    k += 1;
                    cpu
                } else {
                    r.groups.first().copied().unwrap_or(0)
                }
            })
            .collect()
    }
}

/// The nesting of `set`'s critical sections: for task `i`, section `k`,
/// the section it is directly nested in, if any (sections are validated to
/// nest as a stack).
pub fn enclosing_sections(set: &TaskSet) -> Vec<Vec<Option<usize>>> {
    set.tasks
        .iter()
        .map(|task| {
            let mut held: Vec<usize> = Vec::new();
            let cs = &task.critical_sections;
            (0..cs.len())
                .map(|k| {
                    held.retain(|&h| cs[h].start.saturating_add(cs[h].length) > cs[k].start);
                    let outer = held.last().copied();
                    held.push(k);
                    outer
                })
                .collect()
        })
        .collect()
}

/// What `protocol` refuses in `set` when task `i` runs in group
/// `groups[i]` (processors, or clusters for the OMLP): nested sections it
/// cannot handle and, under the OMLP, a resource used from two clusters.
/// Each finding is an error at the critical section it comes from.
pub fn check(
    set: &TaskSet,
    groups: &[u32],
    protocol: MpProtocol,
    places: Places,
) -> Vec<Diagnostic> {
    let sharing = Sharing::of(set, groups);
    let mut out = Vec::new();
    let name = protocol.name();
    for (i, outers) in enclosing_sections(set).iter().enumerate() {
        let task = &set.tasks[i];
        let who = printable(&task.name);
        for (k, outer) in outers.iter().enumerate() {
            let Some(outer) = *outer else { continue };
            let inner_r = sharing.sections[i][k];
            let outer_r = sharing.sections[i][outer];
            let (inner, outer_name) = (
                printable(&task.critical_sections[k].resource),
                printable(&task.critical_sections[outer].resource),
            );
            let message = if protocol == MpProtocol::Omlp {
                Some(format!(
                    "task `{who}`: the critical section on `{inner}` is nested in the one on `{outer_name}`: {name} does not nest critical sections (the OMLP's group locks are not modelled); write them one after the other"
                ))
            } else {
                [inner_r, outer_r]
                    .into_iter()
                    .find(|&r| sharing.is_global(r))
                    .map(|r| {
                        format!(
                            "task `{who}`: the critical section on `{inner}` is nested in the one on `{outer_name}`, and `{}` is a global resource (used on {}): {name} does not nest sections on global resources; write them one after the other, or keep both resources on one processor",
                            printable(&sharing.resources[r].name),
                            places.many(&sharing.resources[r].groups)
                        )
                    })
            };
            if let Some(message) = message {
                out.push(Diagnostic::error(
                    FieldPath::critical_section(i, k, "resource"),
                    message,
                ));
            }
        }
    }
    if protocol == MpProtocol::Omlp {
        out.extend(across_groups(
            set,
            &sharing,
            places,
            "omlp shares a resource within one cluster (the clustered OMLP's priority donation across clusters is not modelled); place the resource's users in one cluster",
        ));
    }
    out
}

/// What a uniprocessor protocol (`protocol`: pip, ipcp, srp, dfp, npp)
/// refuses on a partitioned platform: a resource used from two
/// processors, as an error at the first section that uses it from another
/// processor than its first user's.
pub fn check_uniprocessor(set: &TaskSet, groups: &[u32], protocol: &str) -> Vec<Diagnostic> {
    let sharing = Sharing::of(set, groups);
    across_groups(
        set,
        &sharing,
        Places::Processors,
        &format!(
            "{} is a uniprocessor protocol; share a resource across processors with {}",
            printable(protocol),
            MpProtocol::ALL
                .into_iter()
                .filter(|p| p.scheduling() == MpScheduling::PartitionedFixedPriority)
                .map(MpProtocol::name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

/// One error per resource used from two groups, at the first section of a
/// user outside the first user's group.
fn across_groups(set: &TaskSet, sharing: &Sharing, places: Places, why: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (r, res) in sharing.resources.iter().enumerate() {
        if !res.is_global() {
            continue;
        }
        let first = res.users[0];
        let home = sharing.groups[first];
        let Some(&other) = res.users.iter().find(|&&u| sharing.groups[u] != home) else {
            continue;
        };
        let k = sharing.sections[other]
            .iter()
            .position(|&x| x == r)
            .unwrap_or(0);
        out.push(Diagnostic::error(
            FieldPath::critical_section(other, k, "resource"),
            format!(
                "task `{}`: resource `{}` is also used on {} (by task `{}`), and this task runs on {}: {why}",
                printable(&set.tasks[other].name),
                printable(&res.name),
                places.one(home),
                printable(&set.tasks[first].name),
                places.one(sharing.groups[other]),
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{CriticalSection, Task};
    use crate::Nanos;

    fn task(name: &str, sections: &[(&str, u64, u64)]) -> Task {
        let mut t = Task::new(name, Nanos::from_ms(10), Nanos::from_ms(5));
        t.critical_sections = sections
            .iter()
            .map(|&(r, s, l)| CriticalSection {
                resource: r.into(),
                start: Nanos::from_ms(s),
                length: Nanos::from_ms(l),
            })
            .collect();
        t
    }

    fn set() -> TaskSet {
        TaskSet::new(
            "s",
            vec![
                task("a", &[("g", 0, 1), ("l", 2, 1)]),
                task("b", &[("g", 1, 1)]),
                task("c", &[("l", 0, 2), ("m", 1, 1)]),
            ],
        )
    }

    #[test]
    fn names_round_trip() {
        for p in MpProtocol::ALL {
            assert_eq!(MpProtocol::from_name(p.name()), Some(p));
            assert_eq!(p.name().parse::<MpProtocol>(), Ok(p));
        }
        assert_eq!(MpProtocol::from_name("fmlpp"), Some(MpProtocol::FmlpPlus));
        assert!("pip".parse::<MpProtocol>().unwrap_err().contains("mpcp"));
    }

    #[test]
    fn resources_are_global_when_used_from_two_groups() {
        let s = Sharing::of(&set(), &[0, 1, 0]);
        let names: Vec<&str> = s.resources.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["g", "l", "m"]);
        assert!(s.is_global(0));
        assert!(!s.is_global(1), "a and c are both on cpu 0");
        assert_eq!(s.resources[0].users, [0, 1]);
        assert_eq!(s.resources[0].groups, [0, 1]);
        assert_eq!(s.sections, [vec![0, 1], vec![0], vec![1, 2]]);
        // The only global resource goes to processor 0; locals stay home.
        assert_eq!(s.synchronization_processors(2), [0, 0, 0]);
        let s = Sharing::of(&set(), &[0, 1, 1]);
        assert_eq!(s.synchronization_processors(2), [0, 1, 1]);
    }

    #[test]
    fn nesting_is_refused_only_around_global_resources() {
        // c nests m in l: fine while l and m are local.
        assert!(check(&set(), &[0, 1, 0], MpProtocol::Mpcp, Places::Processors).is_empty());
        // a on cpu 0, c on cpu 1: l is global now.
        let found = check(&set(), &[0, 0, 1], MpProtocol::Mpcp, Places::Processors);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].path.to_string(),
            "task[2].critical_sections[1].resource"
        );
        assert_eq!(
            found[0].message,
            "task `c`: the critical section on `m` is nested in the one on `l`, and `l` is a global resource (used on cpus 0, 1): mpcp does not nest sections on global resources; write them one after the other, or keep both resources on one processor"
        );
        // The OMLP nests nothing.
        let found = check(&set(), &[0, 0, 0], MpProtocol::Omlp, Places::Clusters);
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("omlp does not nest"), "{found:?}");
    }

    #[test]
    fn cross_group_resources_are_refused_where_a_protocol_cannot_share_them() {
        let mut s = set();
        s.tasks[2].critical_sections.pop();
        let found = check(&s, &[0, 1, 0], MpProtocol::Omlp, Places::Clusters);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].path.to_string(),
            "task[1].critical_sections[0].resource"
        );
        assert!(found[0]
            .message
            .starts_with("task `b`: resource `g` is also used on cluster #1 (by task `a`), and this task runs on cluster #2: omlp shares"));
        let found = check_uniprocessor(&s, &[0, 1, 0], "ipcp");
        assert_eq!(
            found[0].message,
            "task `b`: resource `g` is also used on cpu 0 (by task `a`), and this task runs on cpu 1: ipcp is a uniprocessor protocol; share a resource across processors with mpcp, dpcp, fmlp+, mrsp, msrp"
        );
        assert!(check_uniprocessor(&s, &[0, 0, 0], "ipcp").is_empty());
    }
}
