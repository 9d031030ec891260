//! Blocking bounds of the multiprocessor locking protocols, inserted into
//! partitioned fixed-priority response-time analysis (and, for the OMLP,
//! into the global EDF tests).
//!
//! One module per protocol, each stating its bound and its paper:
//!
//! | module | protocol | waiting | scheduler |
//! | --- | --- | --- | --- |
//! | [`mpcp`] | MPCP, Rajkumar 1990 (bounds of Lakshmanan, de Niz & Rajkumar 2009) | suspension, priority-ordered | P-FP |
//! | [`dpcp`] | DPCP, Rajkumar, Sha & Lehoczky 1988 | suspension, agents on the synchronization processor | P-FP |
//! | [`fmlp_plus`] | partitioned FMLP+, Brandenburg 2014 | suspension, FIFO | P-FP |
//! | [`mrsp`] | MrsP, Burns & Wellings 2013 | spinning at the local ceiling, FIFO, with helping | P-FP |
//! | [`msrp`] | MSRP, Gai, Lipari & Di Natale 2001 | non-preemptive FIFO spinning | P-FP |
//! | [`omlp`] | global OMLP, Brandenburg & Anderson 2010 | suspension, FIFO of m then priority | G-EDF |
//!
//! # What the bounds bound
//!
//! The simulator measures, for every job, the two quantities the bounds are
//! about ([`rtlab_model::results::JobRecord`]'s `remote_blocked` and
//! `local_blocked`), and the falsification test checks each job against
//! them:
//!
//! - **remote blocking** `Bʳi`: the time the job waits for global
//!   resources: suspended in a queue (MPCP, FMLP+), suspended while an
//!   agent is delayed on the synchronization processor beyond the
//!   section's own length (DPCP), or spinning (MSRP, MrsP: only while it
//!   holds its processor, spinning or lending it to a helping holder);
//! - **local blocking** `Bˡi`: the time the job is ready on its processor
//!   while that processor serves a lower-priority task of it (a boosted or
//!   ceiling-raised critical section, a spin, a helper in a lower task's
//!   place) or an agent (DPCP);
//! - under the OMLP, **s-oblivious pi-blocking** (Brandenburg & Anderson
//!   2010): the time the job is pending, not scheduled, and among the m
//!   highest-priority pending jobs; it counts as remote while the job waits
//!   for a resource and as local otherwise (the OMLP's inheritance makes
//!   that 0).
//!
//! # Response times
//!
//! Partitioned: each processor's tasks in their fixed-priority order
//! (strict: equal levels are ordered by declaration, as the simulator
//! dispatches them), with the exact recurrence of [`crate::rta`]:
//!
//! ```text
//! Ri = Ci + Bʳi + Bˡi + Σ_{h ∈ hp(i), same cpu} ⌈(Ri + J'h) / Th⌉ C'h
//! ```
//!
//! where the job's own waiting counts as its execution (suspension
//! oblivious for itself), `C'h` is what a higher-priority task demands of
//! the processor (its `C`, plus its spinning under MSRP and MrsP, minus
//! its sections run by agents elsewhere under DPCP), and a task that
//! suspends (MPCP, DPCP, FMLP+) interferes as if released with jitter
//! `J'h = Rh − C'h` (its work may come anywhere in its response window):
//! the reduction of self-suspension to jitter that Bletsas, Audsley, Huang,
//! Chen & Nelissen (2018, "Errata for three papers on fixed-priority
//! scheduling with self-suspensions") and Chen et al. (2019, "Many
//! suspensions, many problems") show sound, where modelling suspension by
//! its length alone is not. A task that neither spins nor suspends keeps
//! its release jitter `Jh`. Where a bound depends on response times
//! (DPCP's windows, the jitter) the whole system is iterated from `Ri = Ci`
//! to its least fixed point.
//!
//! Assumed, as in the papers: constrained deadlines (`D <= T`; a set with
//! `D > T` is "not proven"), one active job per task (so every `Rk <= Tk`
//! once a set is proven), global sections not nested, and no overheads.
//! All arithmetic is on integer nanoseconds (`u128` inside, saturating).

pub mod dpcp;
pub mod fmlp_plus;
pub mod mpcp;
pub mod mrsp;
pub mod msrp;
pub mod omlp;

use rtlab_model::mp_locking::{MpProtocol, Sharing};
use rtlab_model::policy::{levels_from_order, PriorityAssignment};
use rtlab_model::{Nanos, TaskSet};
use serde::Serialize;

use crate::error::AnalysisError;
use crate::rta::{self, Analysed, Interferer};
use crate::verdict::{combine, Response, Verdict};

/// Rounds of the whole-system fixed point before giving up.
pub const ROUND_CAP: usize = 10_000;

/// The bounds of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskBound {
    /// `Bˡi`: the longest the job can be ready on its processor while the
    /// processor serves lower-priority work or agents.
    pub local_blocking: Nanos,
    /// `Bʳi`: the longest the job can wait for global resources
    /// (suspended or spinning).
    pub remote_blocking: Nanos,
    /// The response-time bound.
    pub response: Response,
}

/// A protocol's analysis of one task set.
#[derive(Debug, Clone, PartialEq)]
pub struct LockingOutcome {
    /// The protocol.
    pub protocol: MpProtocol,
    /// Processors.
    pub processors: u32,
    /// Every task within its deadline (`Some(true)`), some task beyond it
    /// (`Some(false)`), or not proven.
    pub schedulable: Verdict,
    /// Per task, in set order.
    pub tasks: Vec<TaskBound>,
    /// Why the set was not analysed, when it was not.
    pub note: Option<String>,
}

/// The terms of one task that a protocol contributes to the response-time
/// analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Terms {
    /// `Bˡi`.
    pub local: u64,
    /// `Bʳi` (`u64::MAX`: unbounded within the deadline).
    pub remote: u64,
    /// `C'i`: what the task demands of its processor when it preempts
    /// another.
    pub demand: u64,
    /// The task suspends (its demand may come anywhere in its response
    /// window).
    pub suspends: bool,
}

impl Terms {
    /// A spinning protocol's terms (MSRP, MrsP): the spin charged as
    /// execution, for the task and for those it preempts.
    pub(crate) fn spinning(wcet: u64, local: u64, spin: u64) -> Terms {
        Terms {
            local,
            remote: spin,
            demand: wcet.saturating_add(spin),
            suspends: false,
        }
    }
}

/// A task's requests for one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Request {
    /// The resource (index into [`Sharing::resources`]).
    pub resource: usize,
    /// Critical sections on it per job, `N`.
    pub count: u64,
    /// The longest, `L`.
    pub longest: u64,
    /// Their total length.
    pub total: u64,
}

/// A partitioned task set as the protocols' bounds read it.
pub(crate) struct Model<'a> {
    pub set: &'a TaskSet,
    pub sharing: Sharing,
    /// Processor of each task.
    pub cpu: Vec<u32>,
    /// Strict urgency, larger more urgent (`n..1`).
    pub rank: Vec<u64>,
    /// Per task, one entry per resource it uses.
    pub requests: Vec<Vec<Request>>,
    /// Processors.
    pub m: u32,
}

impl<'a> Model<'a> {
    /// The model of `set` with tasks on `cpu` and strict ranks from `levels`
    /// (equal levels ordered by declaration).
    pub fn new(set: &'a TaskSet, cpu: Vec<u32>, levels: &[u32], m: u32) -> Model<'a> {
        let sharing = Sharing::of(set, &cpu);
        let mut order: Vec<usize> = (0..set.tasks.len()).collect();
        order.sort_by(|&a, &b| levels[b].cmp(&levels[a]).then(a.cmp(&b)));
        let rank = levels_from_order(&order)
            .into_iter()
            .map(u64::from)
            .collect();
        let requests = set
            .tasks
            .iter()
            .enumerate()
            .map(|(i, task)| {
                let mut own: Vec<Request> = Vec::new();
                for (k, cs) in task.critical_sections.iter().enumerate() {
                    let resource = sharing.sections[i][k];
                    let len = cs.length.as_ns();
                    match own.iter_mut().find(|r| r.resource == resource) {
                        Some(r) => {
                            r.count += 1;
                            r.longest = r.longest.max(len);
                            r.total = r.total.saturating_add(len);
                        }
                        None => own.push(Request {
                            resource,
                            count: 1,
                            longest: len,
                            total: len,
                        }),
                    }
                }
                own
            })
            .collect();
        Model {
            set,
            sharing,
            cpu,
            rank,
            requests,
            m,
        }
    }

    /// Tasks.
    pub fn n(&self) -> usize {
        self.set.tasks.len()
    }

    /// Task `k`'s requests for `q`, if it uses it.
    pub fn request(&self, k: usize, q: usize) -> Option<&Request> {
        self.requests[k].iter().find(|r| r.resource == q)
    }

    /// True for a resource used from two processors.
    pub fn global(&self, q: usize) -> bool {
        self.sharing.is_global(q)
    }

    /// Task `k`'s requests for global resources.
    pub fn global_requests(&self, k: usize) -> impl Iterator<Item = &Request> + '_ {
        self.requests[k].iter().filter(|r| self.global(r.resource))
    }

    /// The number of global critical sections of a job of `k` (its
    /// suspensions, under a suspension-based protocol).
    pub fn global_count(&self, k: usize) -> u64 {
        self.global_requests(k).map(|r| r.count).sum()
    }

    /// The longest global critical section of `k` (0 without any).
    pub fn longest_global(&self, k: usize) -> u64 {
        self.global_requests(k)
            .map(|r| r.longest)
            .max()
            .unwrap_or(0)
    }

    /// The tasks on processor `p`.
    pub fn on(&self, p: u32) -> impl Iterator<Item = usize> + '_ {
        (0..self.n()).filter(move |&k| self.cpu[k] == p)
    }

    /// The tasks on `i`'s processor below it.
    pub fn lower_local(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.on(self.cpu[i])
            .filter(move |&k| self.rank[k] < self.rank[i])
    }

    /// The tasks on `i`'s processor above it.
    pub fn higher_local(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.on(self.cpu[i])
            .filter(move |&k| self.rank[k] > self.rank[i])
    }

    /// The users of `q`.
    pub fn users(&self, q: usize) -> &[usize] {
        &self.sharing.resources[q].users
    }

    /// The highest rank among `q`'s users on processor `p` (0: none).
    pub fn ceiling_on(&self, q: usize, p: u32) -> u64 {
        self.users(q)
            .iter()
            .filter(|&&k| self.cpu[k] == p)
            .map(|&k| self.rank[k])
            .max()
            .unwrap_or(0)
    }

    /// The highest rank among all of `q`'s users.
    pub fn ceiling(&self, q: usize) -> u64 {
        self.users(q)
            .iter()
            .map(|&k| self.rank[k])
            .max()
            .unwrap_or(0)
    }

    /// The longest section of `x` on a local resource whose ceiling is at
    /// least `rank` (what the ceiling protocol lets block a task of that
    /// rank on the processor; 0 without any).
    pub fn local_ceiling_blocking(&self, x: usize, rank: u64) -> u64 {
        self.requests[x]
            .iter()
            .filter(|r| !self.global(r.resource) && self.ceiling(r.resource) >= rank)
            .map(|r| r.longest)
            .max()
            .unwrap_or(0)
    }

    /// Jobs of task `k` that can be active in a window of `window` ns:
    /// `⌈(window + Jk) / Tk⌉ + 1` (one carried in, as `Rk <= Tk`).
    pub fn jobs_in(&self, k: usize, window: u64) -> u64 {
        let t = &self.set.tasks[k];
        let released = u128::from(window)
            .saturating_add(u128::from(t.jitter.as_ns()))
            .div_ceil(u128::from(t.period.as_ns().max(1)));
        u64::try_from(released.saturating_add(1)).unwrap_or(u64::MAX)
    }

    /// `C` of task `k`, ns.
    pub fn wcet(&self, k: usize) -> u64 {
        self.set.tasks[k].wcet.as_ns()
    }

    /// The suspension-based local blocking of MPCP and FMLP+: at the
    /// release and after each of its `Σ N` suspensions, each lower task of
    /// the processor can be inside one boosted global section or one
    /// ceiling-raised local section (it cannot start another while the job
    /// is ready): `(1 + Σ_q N_{i,q}) · Σ_{x ∈ lp(i)} max(L^g_x, L^c_x)`.
    pub fn boosted_local_blocking(&self, i: usize) -> u64 {
        let per_arrival: u128 = self
            .lower_local(i)
            .map(|x| {
                u128::from(
                    self.longest_global(x)
                        .max(self.local_ceiling_blocking(x, self.rank[i])),
                )
            })
            .sum();
        saturate(per_arrival.saturating_mul(u128::from(1 + self.global_count(i))))
    }
}

/// `x` as u64, saturating.
pub(crate) fn saturate(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

/// The fixed priorities of `set` under `assignment`, or an error
/// (`given` without priorities; OPA has no meaning here: it falls back to
/// deadline monotonic as [`crate::priority::assign`] does).
fn levels(set: &TaskSet, assignment: PriorityAssignment) -> Result<Vec<u32>, AnalysisError> {
    crate::priority::assign(set, assignment).map(|p| p.0)
}

/// Analyses `set` under `protocol` on `m` processors. A partitioned
/// protocol needs every task's `cpu` (place the tasks first:
/// [`crate::partition`]) and priorities from `assignment`; the OMLP reads
/// neither (global EDF).
pub fn analyse(
    set: &TaskSet,
    protocol: MpProtocol,
    assignment: PriorityAssignment,
    m: u32,
) -> Result<LockingOutcome, AnalysisError> {
    if set.tasks.is_empty() {
        return Err(AnalysisError::EmptySet);
    }
    let n = set.tasks.len();
    let not_analysed = |note: String| LockingOutcome {
        protocol,
        processors: m,
        schedulable: None,
        tasks: vec![
            TaskBound {
                local_blocking: Nanos::ZERO,
                remote_blocking: Nanos::ZERO,
                response: Response::Unknown,
            };
            n
        ],
        note: Some(note),
    };
    if !set.has_constrained_deadlines() {
        return Ok(not_analysed(
            "not analysed: the bounds assume constrained deadlines (D <= T)".into(),
        ));
    }
    if protocol == MpProtocol::Omlp {
        return Ok(omlp::analyse(set, m));
    }
    let Some(cpu) = set.assignment() else {
        return Ok(not_analysed(format!(
            "not analysed: {protocol} needs every task's processor (`cpu`, or a partition)"
        )));
    };
    let levels = levels(set, assignment)?;
    let model = Model::new(set, cpu, &levels, m);
    let terms = |model: &Model, responses: &[u64]| -> Vec<Terms> {
        match protocol {
            MpProtocol::Mpcp => mpcp::terms(model),
            MpProtocol::Dpcp => dpcp::terms(model, responses),
            MpProtocol::FmlpPlus => fmlp_plus::terms(model),
            MpProtocol::Mrsp => mrsp::terms(model),
            MpProtocol::Msrp => msrp::terms(model),
            MpProtocol::Omlp => unreachable!("the OMLP is analysed above"),
        }
    };
    Ok(partitioned(&model, protocol, terms))
}

/// The whole-system fixed point of the partitioned analysis (module docs).
///
/// A task's bound is valid only while every higher-priority task of its
/// processor has one (their jitter enters it): below a task found beyond
/// its deadline, or unknown, the tasks of that processor are unknown. The
/// other processors' tasks keep their bounds (the blocking terms read no
/// other task's response).
fn partitioned(
    model: &Model,
    protocol: MpProtocol,
    terms: impl Fn(&Model, &[u64]) -> Vec<Terms>,
) -> LockingOutcome {
    let n = model.n();
    let mut by_rank: Vec<usize> = (0..n).collect();
    by_rank.sort_by(|&a, &b| model.rank[b].cmp(&model.rank[a]));
    let mut responses: Vec<u64> = (0..n).map(|k| model.wcet(k)).collect();
    let mut found: Vec<Response> = vec![Response::Unknown; n];
    let mut last = vec![Terms::default(); n];
    let mut settled = false;
    for _ in 0..ROUND_CAP {
        last = terms(model, &responses);
        let mut next = responses.clone();
        let mut round = vec![Response::Unknown; n];
        for &i in &by_rank {
            let above_unbounded = model
                .higher_local(i)
                .any(|h| !matches!(round[h], Response::Within(_)));
            round[i] = if above_unbounded {
                Response::Unknown
            } else {
                response(model, i, &last, &responses)
            };
            if let Response::Within(r) = round[i] {
                next[i] = r.as_ns();
            }
        }
        let same = next == responses && round == found;
        found = round;
        if same {
            settled = true;
            break;
        }
        responses = next;
    }
    if !settled {
        found = vec![Response::Unknown; n];
    }
    LockingOutcome {
        protocol,
        processors: model.m,
        schedulable: combine(found.iter().map(|r| r.verdict())),
        tasks: (0..n)
            .map(|i| TaskBound {
                local_blocking: Nanos::from_ns(last[i].local),
                remote_blocking: Nanos::from_ns(last[i].remote),
                response: found[i],
            })
            .collect(),
        note: None,
    }
}

/// Task `i`'s response bound given every task's terms and the current
/// response estimates (for the jitter of suspending interferers).
fn response(model: &Model, i: usize, terms: &[Terms], responses: &[u64]) -> Response {
    let task = &model.set.tasks[i];
    let own = &terms[i];
    if own.remote == u64::MAX {
        return Response::Exceeds;
    }
    let interferers: Vec<Interferer> = model
        .higher_local(i)
        .map(|h| {
            let t = &model.set.tasks[h];
            let demand = terms[h].demand;
            Interferer {
                period: t.period.as_ns(),
                jitter: if terms[h].suspends {
                    responses[h].saturating_sub(demand)
                } else {
                    t.jitter.as_ns()
                },
                cost: demand,
            }
        })
        .collect();
    let analysed = Analysed {
        wcet: task.wcet.as_ns().saturating_add(own.remote),
        period: task.period.as_ns(),
        deadline: task.deadline.as_ns(),
        jitter: task.jitter.as_ns(),
        blocking: own.local,
    };
    rta::response_time(&analysed, &interferers)
}

/// The longest section of `k` on `q`, 0 when it does not use it.
pub(crate) fn longest(model: &Model, k: usize, q: usize) -> u64 {
    model.request(k, q).map_or(0, |r| r.longest)
}

/// The `analyze --locking` document of one protocol.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LockingDocument {
    /// The protocol's name.
    pub protocol: String,
    /// Its paper.
    pub paper: &'static str,
    /// Processors.
    pub processors: u32,
    /// Where the tasks run: `cpu fields`, a heuristic, or `global`.
    pub placement: String,
    /// The verdict (`null`: not proven).
    pub schedulable: Verdict,
    /// Why it was not analysed, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The resources and where their users run.
    pub resources: Vec<ResourceDocument>,
    /// Per task.
    pub tasks: Vec<LockingTaskDocument>,
}

/// A resource in a [`LockingDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceDocument {
    /// Its name.
    pub name: String,
    /// `global` or `local`.
    pub scope: &'static str,
    /// The processors its users run on (global EDF: all in one cluster).
    pub cpus: Vec<u32>,
    /// Its users.
    pub tasks: Vec<String>,
    /// DPCP: the processor its agents run on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synchronization_cpu: Option<u32>,
}

/// A task in a [`LockingDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LockingTaskDocument {
    /// Name.
    pub name: String,
    /// Its processor (partitioned).
    pub cpu: Option<u32>,
    /// Strict priority rank, larger more urgent (partitioned).
    pub priority: Option<u64>,
    /// C.
    pub wcet_ns: u64,
    /// T.
    pub period_ns: u64,
    /// D.
    pub deadline_ns: u64,
    /// `Bˡ`.
    pub local_blocking_ns: u64,
    /// `Bʳ`.
    pub remote_blocking_ns: u64,
    /// The response bound (`null`: beyond D or unknown).
    pub response_ns: Option<u64>,
    /// Within its deadline.
    pub schedulable: Verdict,
}

/// The document of `outcome` for `set` (tasks placed as `placement` says).
pub fn document(
    set: &TaskSet,
    outcome: &LockingOutcome,
    assignment: PriorityAssignment,
    placement: &str,
) -> LockingDocument {
    let partitioned = outcome.protocol != MpProtocol::Omlp;
    let cpu: Vec<u32> = if partitioned {
        set.tasks.iter().map(|t| t.cpu.unwrap_or(0)).collect()
    } else {
        vec![0; set.tasks.len()]
    };
    let sharing = Sharing::of(set, &cpu);
    let sync = sharing.synchronization_processors(outcome.processors);
    let ranks: Option<Vec<u64>> = (partitioned && set.assignment().is_some())
        .then(|| levels(set, assignment).ok())
        .flatten()
        .map(|l| Model::new(set, cpu.clone(), &l, outcome.processors).rank);
    LockingDocument {
        protocol: outcome.protocol.name().to_string(),
        paper: outcome.protocol.paper(),
        processors: outcome.processors,
        placement: placement.to_string(),
        schedulable: outcome.schedulable,
        note: outcome.note.clone(),
        resources: sharing
            .resources
            .iter()
            .enumerate()
            .map(|(q, r)| ResourceDocument {
                name: r.name.clone(),
                scope: if r.is_global() || (!partitioned && r.users.len() > 1) {
                    "global"
                } else {
                    "local"
                },
                cpus: if partitioned {
                    r.groups.clone()
                } else {
                    Vec::new()
                },
                tasks: r.users.iter().map(|&k| set.tasks[k].name.clone()).collect(),
                synchronization_cpu: (outcome.protocol == MpProtocol::Dpcp && r.is_global())
                    .then_some(sync[q]),
            })
            .collect(),
        tasks: set
            .tasks
            .iter()
            .zip(&outcome.tasks)
            .enumerate()
            .map(|(i, (t, b))| LockingTaskDocument {
                name: t.name.clone(),
                cpu: if partitioned { t.cpu } else { None },
                priority: ranks.as_ref().map(|r| r[i]),
                wcet_ns: t.wcet.as_ns(),
                period_ns: t.period.as_ns(),
                deadline_ns: t.deadline.as_ns(),
                local_blocking_ns: b.local_blocking.as_ns(),
                remote_blocking_ns: b.remote_blocking.as_ns(),
                response_ns: b.response.wcrt().map(|r| r.as_ns()),
                schedulable: b.response.verdict(),
            })
            .collect(),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use rtlab_model::{CriticalSection, Nanos, Task, TaskSet};

    /// A task `(name, C, T, cpu)` in microseconds with sections
    /// `(resource, start, length)`, D = T.
    pub fn task(name: &str, c: u64, t: u64, cpu: u32, sections: &[(&str, u64, u64)]) -> Task {
        let us = Nanos::from_us;
        let mut task = Task::new(name, us(t), us(c)).with_cpu(cpu);
        task.critical_sections = sections
            .iter()
            .map(|&(r, s, l)| CriticalSection::new(r, us(s), us(l)))
            .collect();
        task
    }

    /// cpu 0: a (C 2, T 10, q at 0 for 1), b (C 4, T 20, q at 1 for 2);
    /// cpu 1: c (C 3, T `c_period`, q at 0 for 3) and, with `d`, d (C 5,
    /// T 50, a local r at 0 for 2) (µs): the examples of the protocols'
    /// tests.
    pub fn example(c_period: u64, d: bool) -> TaskSet {
        let mut tasks = vec![
            task("a", 2, 10, 0, &[("q", 0, 1)]),
            task("b", 4, 20, 0, &[("q", 1, 2)]),
            task("c", 3, c_period, 1, &[("q", 0, 3)]),
        ];
        if d {
            tasks.push(task("d", 5, 50, 1, &[("r", 0, 2)]));
        }
        set(2, tasks)
    }

    /// The tasks on `m` processors.
    pub fn set(m: u32, tasks: Vec<Task>) -> TaskSet {
        TaskSet::new("locking", tasks).on_platform(rtlab_model::Platform::new(m))
    }
}

/// How the tasks of a partitioned protocol were placed.
#[derive(Debug, Clone, PartialEq)]
pub enum Placed {
    /// Every task has its `cpu` in the file.
    Given(TaskSet),
    /// Placed by a heuristic, each processor admitted by uniprocessor RTA
    /// under the priorities (blocking not counted: the protocols' bounds
    /// are applied to the result).
    Partitioned(TaskSet, crate::partition::Heuristic),
    /// The heuristic placed every task but this one.
    Unplaced(String, crate::partition::Heuristic),
}

impl Placed {
    /// The placed set, when every task has a processor.
    pub fn set(&self) -> Option<&TaskSet> {
        match self {
            Placed::Given(s) | Placed::Partitioned(s, _) => Some(s),
            Placed::Unplaced(..) => None,
        }
    }

    /// In words, for documents: `the file's cpu fields`, `ff-decreasing by
    /// rm:rta`.
    pub fn describe(&self, assignment: PriorityAssignment) -> String {
        match self {
            Placed::Given(_) => "the file's cpu fields".into(),
            Placed::Partitioned(_, h) => format!("{} by {}:rta", h.name(), assignment.name()),
            Placed::Unplaced(task, h) => format!(
                "{} by {}:rta placed every task but `{}`",
                h.name(),
                assignment.name(),
                rtlab_model::printable(task)
            ),
        }
    }
}

/// `set` on `m` processors as a partitioned protocol sees it: its own
/// `cpu` fields when every task has one, else placed by `heuristic`.
pub fn place(
    set: &TaskSet,
    m: u32,
    assignment: PriorityAssignment,
    heuristic: crate::partition::Heuristic,
) -> Result<Placed, AnalysisError> {
    if set.assignment().is_some() {
        return Ok(Placed::Given(set.clone()));
    }
    let test = crate::sweep::SweepTest {
        policy: rtlab_model::policy::AnalysedPolicy::Fixed(assignment),
        test: crate::verdict::Test::Rta,
    };
    let found =
        crate::partition::partition(set, m, heuristic, test, &crate::suite::Options::default())?;
    Ok(match found.unplaced {
        Some(i) => Placed::Unplaced(set.tasks[i].name.clone(), heuristic),
        None => {
            let mut placed = found.apply(set);
            placed.platform = set.platform.clone();
            Placed::Partitioned(placed, heuristic)
        }
    })
}

/// `rtlab analyze --cpus M --locking ...`: one [`LockingDocument`] per
/// protocol.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MpLockingAnalyzeDocument {
    /// The set's name.
    pub taskset: String,
    /// Path or `builtin:NAME`.
    pub origin: String,
    /// Processors.
    pub processors: u32,
    /// `Σ C/T`.
    pub utilization: f64,
    /// The fixed-priority order of the partitioned protocols.
    pub priorities: String,
    /// One per protocol, in the order asked.
    pub protocols: Vec<LockingDocument>,
}

/// The document of `outcome`, or of a set a heuristic could not place.
pub fn placed_document(
    set: &TaskSet,
    protocol: MpProtocol,
    placed: &Placed,
    assignment: PriorityAssignment,
    m: u32,
) -> Result<LockingDocument, AnalysisError> {
    let placement = placed.describe(assignment);
    match placed.set() {
        Some(on) => {
            let outcome = analyse(on, protocol, assignment, m)?;
            Ok(document(on, &outcome, assignment, &placement))
        }
        None => Ok(LockingDocument {
            protocol: protocol.name().to_string(),
            paper: protocol.paper(),
            processors: m,
            note: Some(format!("not analysed: {placement}")),
            placement,
            schedulable: None,
            resources: Vec::new(),
            tasks: set
                .tasks
                .iter()
                .map(|t| LockingTaskDocument {
                    name: t.name.clone(),
                    cpu: None,
                    priority: None,
                    wcet_ns: t.wcet.as_ns(),
                    period_ns: t.period.as_ns(),
                    deadline_ns: t.deadline.as_ns(),
                    local_blocking_ns: 0,
                    remote_blocking_ns: 0,
                    response_ns: None,
                    schedulable: None,
                })
                .collect(),
        }),
    }
}

/// The verdict of `protocol` on `set` on `m` processors, as a sweep counts
/// it: a partitioned protocol's set placed by `heuristic` under RM
/// priorities (a set the heuristic cannot place is not proven), the OMLP's
/// under global EDF.
pub fn decide(
    set: &TaskSet,
    protocol: MpProtocol,
    m: u32,
    heuristic: crate::partition::Heuristic,
) -> Verdict {
    let rm = PriorityAssignment::RateMonotonic;
    let placed;
    let on = match protocol.scheduling() {
        rtlab_model::mp_locking::MpScheduling::GlobalEdf => set,
        rtlab_model::mp_locking::MpScheduling::PartitionedFixedPriority => {
            placed = place(set, m, rm, heuristic).ok()?;
            placed.set()?
        }
    };
    analyse(on, protocol, rm, m).ok()?.schedulable
}
