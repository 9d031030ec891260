//! One vocabulary for scheduling, shared by the analysis, the simulator,
//! the real-thread executor, the CLI and Python. One type per idea, each
//! with its `FromStr` and `Display` written once; a name means one thing
//! wherever rtlab reads or prints it.
//!
//! | type | the idea | names | who chooses it |
//! | --- | --- | --- | --- |
//! | [`PriorityAssignment`] | how fixed priorities are chosen: rate monotonic (Liu & Layland 1973), deadline monotonic (Leung & Whitehead 1982), the file's own priorities, Audsley's optimal assignment | `rm`, `dm`, `given`, `opa` | every fixed-priority scheduler |
//! | [`Scope`] | where a scheduler runs | `uni`, `global`, `partitioned`, `clustered` | the registry (per scheduler), a real run (per `--policy`) |
//! | [`AnalysedPolicy`] | a uniprocessor policy the analysis tests | `rm`, `dm`, `given`, `opa`, `edf` | `analyze --policy`, `sweep` |
//! | [`RunPolicy`] | the Linux policy of a real run's threads | `other`, `fifo-order`, `rm`, `dm`, `given`, `rr`, `edf` | inside [`RealScheduler`] |
//! | [`RealScheduler`] | the real scheduler a user names: a policy with its scope | the above on one CPU; `linux-dl`, `pedf`, `cedf`, `gfp:ORDER`, `pfp:ORDER` on several | `run`/`compare --policy`, the global-vs-partitioned study, `RunReport::policy` |
//! | [`ModelScheduler`] | the simulator scheduler that models a real one (a type, not a `--scheduler` string) | `fp:rm`, `edf`, `fifo`, `rr:Q:linux`, `linux-dl`, `pedf`, `cedf`, `gfp:dm`, `pfp:dm`, `hybrid:dm` | `compare`, `RunReport::scheduler`, `hartstone`, `breakdown`, the studies' `Runner` |
//! | [`LockingProtocol`] | the resource-access protocol of critical sections | `none`, `npp`, `pip`, `ipcp` (`pcp` read as it), `srp`, `dfp` | `sim --protocol`, `analyze --locking`, `run --protocol` (none, pip, ipcp) |
//! | [`MissRule`] | what happens to a late job | `continue`, `abort` (simulator only), `skip` | `--on-miss` of `sim`, `run`, `hartstone` |
//!
//! A name differs where the thing differs: `gedf` is the simulator's
//! global EDF with LITMUS^RT's tie rule (the task declared first wins a
//! deadline tie even against a running job), which no Linux policy has;
//! SCHED_DEADLINE over several CPUs is `linux-dl` in `sim` and in `run`
//! alike.
//!
//! Conversions, each written once: `AnalysedPolicy -> ModelScheduler`
//! (`From`), `RunPolicy -> ModelScheduler` ([`RunPolicy::model_scheduler`],
//! which needs the kernel's SCHED_RR quantum), `RealScheduler ->
//! ModelScheduler` ([`RealScheduler::model_scheduler`]), `RunPolicy ->
//! PriorityAssignment` ([`RunPolicy::priority_assignment`]), and in the
//! simulator `ModelScheduler -> SchedulerSpec` (`From`). None goes through
//! a string.
//!
//! Other types that name a scheduler live elsewhere on purpose, each a
//! different idea:
//!
//! * `rtlab_sim::SchedulerSpec` is the simulator's registry entry as parsed
//!   (every `--scheduler`, with its parameters, e.g. `ipi:burst=4ms`); it
//!   builds the engine's schedulers, so it stays in `sim`
//!   (`crates/sim/src/registry.rs`);
//! * [`crate::simso::SimsoScheduler`] names a scheduler in the SimSo file
//!   format's terms (its class names); the simulator converts it `From`
//!   into `SchedulerSpec`;
//! * `rtlab_host::policy::Policy` is one thread's kernel attributes for
//!   `sched_setattr` (a SCHED_FIFO priority, a SCHED_DEADLINE runtime);
//!   the CLI's `PolicyName` is the measuring thread's kernel class of
//!   `latency`/`drift` (other, fifo, rr, deadline): neither chooses how a
//!   task set is scheduled;
//! * `rtlab_sim::PolicyKind` (fixed priorities, deadlines, other) is what
//!   kind of priorities a built scheduler uses, for the locking protocols;
//! * the global-vs-partitioned study's `Method` is the study's closed set
//!   of four arms, each named by its [`RealScheduler`].
//!
//! Levels follow the SCHED_FIFO convention: a **larger number is more
//! urgent**. RM and DM give distinct levels `n` (most urgent) down to `1`;
//! ties in the ordering key are broken by the other parameter (deadline for
//! RM, period for DM), then by declaration order (earlier declared is more
//! urgent), so an assignment is deterministic.

use std::fmt;
use std::str::FromStr;

use crate::{Nanos, Task};

/// How fixed priorities are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PriorityAssignment {
    /// Rate monotonic: shorter period, more urgent.
    RateMonotonic,
    /// Deadline monotonic: shorter relative deadline, more urgent.
    DeadlineMonotonic,
    /// The `priority` written for every task in the task set.
    Given,
    /// Audsley's optimal priority assignment; it needs a schedulability
    /// test, so it is computed by `rtlab_analysis::audsley::assign`.
    Audsley,
}

/// A task without the `priority` that [`PriorityAssignment::Given`] needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("task `{task}` has no priority (add `priority = N`)")]
pub struct MissingPriority {
    /// The task's name.
    pub task: String,
}

impl PriorityAssignment {
    /// The stable short name (`rm`, `dm`, `given`, `opa`).
    pub const fn name(self) -> &'static str {
        match self {
            PriorityAssignment::RateMonotonic => "rm",
            PriorityAssignment::DeadlineMonotonic => "dm",
            PriorityAssignment::Given => "given",
            PriorityAssignment::Audsley => "opa",
        }
    }

    /// One level per task, in declaration order (larger is more urgent):
    /// RM orders by (period, deadline, index), DM by (deadline, period,
    /// index), giving levels n..1; `Given` copies the tasks' priorities.
    /// `Audsley` starts from (and here returns) the DM order: the search
    /// itself belongs to the analysis.
    pub fn levels(self, tasks: &[Task]) -> Result<Vec<u32>, MissingPriority> {
        let key = |i: usize| match self {
            PriorityAssignment::RateMonotonic => (tasks[i].period, tasks[i].deadline),
            _ => (tasks[i].deadline, tasks[i].period),
        };
        if self == PriorityAssignment::Given {
            return tasks
                .iter()
                .map(|t| {
                    t.priority.ok_or_else(|| MissingPriority {
                        task: t.name.clone(),
                    })
                })
                .collect();
        }
        let mut order: Vec<usize> = (0..tasks.len()).collect();
        order.sort_by_key(|&i| (key(i), i));
        Ok(levels_from_order(&order))
    }
}

/// Distinct levels `n..1` following `order` (task indices, most urgent first).
pub fn levels_from_order(order: &[usize]) -> Vec<u32> {
    let n = order.len();
    let mut levels = vec![0; n];
    for (rank, &index) in order.iter().enumerate() {
        levels[index] = (n - rank) as u32;
    }
    levels
}

impl fmt::Display for PriorityAssignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PriorityAssignment {
    type Err = String;

    /// `rm`, `dm`, `given` or `opa`; the error lists them.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rm" => Ok(PriorityAssignment::RateMonotonic),
            "dm" => Ok(PriorityAssignment::DeadlineMonotonic),
            "given" => Ok(PriorityAssignment::Given),
            "opa" => Ok(PriorityAssignment::Audsley),
            _ => Err(format!(
                "unknown priority assignment `{s}` (rm, dm, given, opa)"
            )),
        }
    }
}

/// A scheduler of the simulator that models a real-thread policy, on one
/// CPU or (the last five) on several. Its display is the simulator's
/// scheduler spec (`fp:rm`, `edf`, `fifo`, `rr:100ms:linux`, `linux-dl`,
/// `pfp:dm`, ...), which the reports print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelScheduler {
    /// Preemptive fixed priority under an assignment.
    FixedPriority(PriorityAssignment),
    /// Preemptive EDF.
    Edf,
    /// Non-preemptive, release order (one SCHED_FIFO level).
    Fifo,
    /// SCHED_RR with this timeslice, under the kernel's rule: a thread's
    /// slice is refilled only when it runs out, not when the thread sleeps
    /// (the simulator's `rr:Q:linux`).
    RoundRobin(Nanos),
    /// Global EDF as SCHED_DEADLINE runs it on one root domain: a running
    /// job keeps its CPU on a deadline tie (`linux-dl`).
    LinuxDl,
    /// Partitioned EDF: one root domain per CPU (`pedf`).
    PartitionedEdf,
    /// Clustered EDF: global inside each cluster (`cedf`).
    ClusteredEdf,
    /// Global fixed priority under an assignment: SCHED_FIFO floating over
    /// the CPUs (`gfp:ORDER`).
    GlobalFixedPriority(PriorityAssignment),
    /// Partitioned fixed priority under an assignment: SCHED_FIFO pinned per
    /// CPU (`pfp:ORDER`).
    PartitionedFixedPriority(PriorityAssignment),
    /// Paper 001's hybrid: EDF below 100 % load, fixed priorities under
    /// this assignment above (the simulator's `hybrid:dm`; no Linux policy
    /// does this).
    Hybrid(PriorityAssignment),
}

impl fmt::Display for ModelScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelScheduler::FixedPriority(a) => write!(f, "fp:{a}"),
            ModelScheduler::Edf => f.write_str("edf"),
            ModelScheduler::Fifo => f.write_str("fifo"),
            ModelScheduler::RoundRobin(q) => write!(f, "rr:{q}:linux"),
            ModelScheduler::LinuxDl => f.write_str("linux-dl"),
            ModelScheduler::PartitionedEdf => f.write_str("pedf"),
            ModelScheduler::ClusteredEdf => f.write_str("cedf"),
            ModelScheduler::GlobalFixedPriority(a) => write!(f, "gfp:{a}"),
            ModelScheduler::PartitionedFixedPriority(a) => write!(f, "pfp:{a}"),
            ModelScheduler::Hybrid(a) => write!(f, "hybrid:{a}"),
        }
    }
}

/// A uniprocessor scheduling policy as the analysis tests it (`rtlab
/// analyze --policy`, `rtlab sweep`): preemptive fixed priorities under an
/// assignment, or preemptive EDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnalysedPolicy {
    /// Preemptive fixed priorities, assigned by the given rule.
    Fixed(PriorityAssignment),
    /// Preemptive earliest deadline first.
    Edf,
}

impl From<AnalysedPolicy> for ModelScheduler {
    /// The simulator scheduler an analysed policy is checked against:
    /// fixed priorities under the same assignment, or EDF.
    fn from(policy: AnalysedPolicy) -> Self {
        match policy {
            AnalysedPolicy::Fixed(assignment) => Self::FixedPriority(assignment),
            AnalysedPolicy::Edf => Self::Edf,
        }
    }
}

impl AnalysedPolicy {
    /// Every policy, in report order.
    pub const ALL: [AnalysedPolicy; 5] = [
        AnalysedPolicy::Fixed(PriorityAssignment::RateMonotonic),
        AnalysedPolicy::Fixed(PriorityAssignment::DeadlineMonotonic),
        AnalysedPolicy::Fixed(PriorityAssignment::Given),
        AnalysedPolicy::Fixed(PriorityAssignment::Audsley),
        AnalysedPolicy::Edf,
    ];

    /// The stable short name (`rm`, `dm`, `given`, `opa`, `edf`).
    pub const fn name(self) -> &'static str {
        match self {
            AnalysedPolicy::Fixed(p) => p.name(),
            AnalysedPolicy::Edf => "edf",
        }
    }

    /// The policy with this short name.
    pub fn from_name(name: &str) -> Option<AnalysedPolicy> {
        AnalysedPolicy::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// The run policies' names, for messages.
pub const RUN_POLICIES: &str = "other, fifo-order, rm, dm, given, rr or edf";

/// How the task threads of a run are scheduled (`rtlab run --policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPolicy {
    /// SCHED_OTHER (CFS/EEVDF).
    Other,
    /// SCHED_FIFO at one priority: non-preemptive, release order.
    FifoOrder,
    /// SCHED_FIFO, rate-monotonic priorities.
    RateMonotonic,
    /// SCHED_FIFO, deadline-monotonic priorities.
    DeadlineMonotonic,
    /// SCHED_FIFO in the order of the file's `priority` (larger is more urgent).
    Given,
    /// SCHED_RR, all at one priority.
    RoundRobin,
    /// SCHED_DEADLINE: EDF with a constant-bandwidth server per task.
    Edf,
}

impl RunPolicy {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            RunPolicy::Other => "other",
            RunPolicy::FifoOrder => "fifo-order",
            RunPolicy::RateMonotonic => "rm",
            RunPolicy::DeadlineMonotonic => "dm",
            RunPolicy::Given => "given",
            RunPolicy::RoundRobin => "rr",
            RunPolicy::Edf => "edf",
        }
    }

    /// The fixed-priority assignment behind `rm`, `dm` and `given` (the
    /// model's vocabulary, shared with the analysis and the simulator).
    pub fn priority_assignment(self) -> Option<PriorityAssignment> {
        match self {
            RunPolicy::RateMonotonic => Some(PriorityAssignment::RateMonotonic),
            RunPolicy::DeadlineMonotonic => Some(PriorityAssignment::DeadlineMonotonic),
            RunPolicy::Given => Some(PriorityAssignment::Given),
            _ => None,
        }
    }

    /// The simulator scheduler that models this policy, or `None` for
    /// `other` (CFS has no model in the simulator). `rr_timeslice` is the
    /// kernel's SCHED_RR quantum (`rtlab_rt::executor::rr_timeslice` reads it).
    pub fn model_scheduler(self, rr_timeslice: Nanos) -> Option<ModelScheduler> {
        match self {
            RunPolicy::Other => None,
            RunPolicy::FifoOrder => Some(ModelScheduler::Fifo),
            RunPolicy::RoundRobin => Some(ModelScheduler::RoundRobin(rr_timeslice)),
            RunPolicy::Edf => Some(ModelScheduler::Edf),
            fixed => fixed
                .priority_assignment()
                .map(ModelScheduler::FixedPriority),
        }
    }

    /// True for SCHED_DEADLINE.
    pub fn is_deadline(self) -> bool {
        self == RunPolicy::Edf
    }

    /// True for the policies RT throttling applies to (FIFO and RR).
    pub fn is_fifo_or_rr(self) -> bool {
        !matches!(self, RunPolicy::Other | RunPolicy::Edf)
    }
}

impl fmt::Display for RunPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RunPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<RunPolicy, String> {
        Ok(match s {
            "other" => RunPolicy::Other,
            "fifo-order" => RunPolicy::FifoOrder,
            "rm" => RunPolicy::RateMonotonic,
            "dm" => RunPolicy::DeadlineMonotonic,
            "given" => RunPolicy::Given,
            "rr" => RunPolicy::RoundRobin,
            "edf" => RunPolicy::Edf,
            _ => return Err(format!("unknown policy `{s}` (use {RUN_POLICIES})")),
        })
    }
}

/// Where a scheduler runs: on one processor, or on m processors globally
/// (one ready set), partitioned (each task fixed to one processor) or
/// clustered (global inside each cluster of the platform). The simulator's
/// registry gives every scheduler one; a real run on several CPUs has one
/// ([`RealScheduler`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// One processor.
    Uni,
    /// m processors, one ready set.
    Global,
    /// m processors, each task fixed to one.
    Partitioned,
    /// Clusters of processors, global inside each.
    Clustered,
}

impl Scope {
    /// `uni`, `global`, `partitioned` or `clustered`.
    pub const fn name(self) -> &'static str {
        match self {
            Scope::Uni => "uni",
            Scope::Global => "global",
            Scope::Partitioned => "partitioned",
            Scope::Clustered => "clustered",
        }
    }

    /// True for the multiprocessor scopes.
    pub fn is_multi(self) -> bool {
        self != Scope::Uni
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The scheduler of a real run as the user names it (`rtlab run --policy`):
/// a Linux policy for the task threads and, on several CPUs, how the CPUs
/// are shared. One CPU: `other`, `fifo-order`, `rm`, `dm`, `given`, `rr`,
/// `edf` (SCHED_DEADLINE). Several CPUs (`--cpus`): `linux-dl`
/// (SCHED_DEADLINE over one root domain of every CPU: global EDF as the
/// kernel runs it, the simulator's `linux-dl`), `pedf` and `cedf`
/// (SCHED_DEADLINE, one root domain per CPU or per cluster), `gfp[:ORDER]`
/// and `pfp[:ORDER]` (SCHED_FIFO floating or pinned; ORDER rm, dm (the
/// default) or given).
///
/// `gedf` is the simulator's global EDF with LITMUS^RT's tie rule, which no
/// Linux policy has; the SCHED_DEADLINE run it used to name is `linux-dl`
/// (a real run given `gedf` is refused with that hint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RealScheduler {
    /// The task threads' policy.
    pub policy: RunPolicy,
    /// [`Scope::Uni`] on one CPU; otherwise how the CPUs are shared.
    pub scope: Scope,
}

/// The real schedulers' names, for messages.
pub const REAL_SCHEDULERS: &str = "other, fifo-order, rm, dm, given, rr or edf; on --cpus linux-dl, pedf, cedf, gfp[:rm|dm|given] or pfp[:rm|dm|given]";

impl RealScheduler {
    /// A one-CPU run under `policy`.
    pub const fn uni(policy: RunPolicy) -> RealScheduler {
        RealScheduler {
            policy,
            scope: Scope::Uni,
        }
    }

    /// The simulator scheduler that models the run (`None` for `other`, and
    /// for policies the simulator has no multiprocessor model of).
    /// `rr_timeslice` is the kernel's SCHED_RR quantum.
    pub fn model_scheduler(self, rr_timeslice: Nanos) -> Option<ModelScheduler> {
        match (self.scope, self.policy) {
            (Scope::Uni, p) => p.model_scheduler(rr_timeslice),
            (Scope::Global, RunPolicy::Edf) => Some(ModelScheduler::LinuxDl),
            (Scope::Partitioned, RunPolicy::Edf) => Some(ModelScheduler::PartitionedEdf),
            (Scope::Clustered, RunPolicy::Edf) => Some(ModelScheduler::ClusteredEdf),
            (Scope::Global, p) => p
                .priority_assignment()
                .map(ModelScheduler::GlobalFixedPriority),
            (Scope::Partitioned, p) => p
                .priority_assignment()
                .map(ModelScheduler::PartitionedFixedPriority),
            (Scope::Clustered, _) => None,
        }
    }
}

impl fmt::Display for RealScheduler {
    /// The name it is parsed from: the policy's on one CPU, `linux-dl`,
    /// `pedf`, `cedf`, `gfp:ORDER`, `pfp:ORDER` on several (`SCOPE-POLICY`,
    /// e.g. `global-fifo-order`, for a pairing no flag makes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fixed = self.policy.priority_assignment().is_some();
        match (self.scope, self.policy) {
            (Scope::Uni, p) => write!(f, "{p}"),
            (Scope::Global, RunPolicy::Edf) => f.write_str("linux-dl"),
            (Scope::Partitioned, RunPolicy::Edf) => f.write_str("pedf"),
            (Scope::Clustered, RunPolicy::Edf) => f.write_str("cedf"),
            (Scope::Global, p) if fixed => write!(f, "gfp:{p}"),
            (Scope::Partitioned, p) if fixed => write!(f, "pfp:{p}"),
            (scope, p) => write!(f, "{scope}-{p}"),
        }
    }
}

impl FromStr for RealScheduler {
    type Err = String;

    /// A one-CPU policy ([`RunPolicy`], also in the simulator's spellings
    /// `fp:rm`, `fp:dm`, `fp:given`), or a
    /// multiprocessor one; the error lists them.
    fn from_str(s: &str) -> Result<RealScheduler, String> {
        let s = s.trim();
        let unknown = || {
            match s {
            "gedf" => "gedf is the simulator's global EDF with LITMUS^RT's tie rule, which Linux has not; SCHED_DEADLINE over several CPUs is linux-dl".to_string(),
            _ => format!("unknown policy `{s}` (use {REAL_SCHEDULERS})"),
        }
        };
        let (head, order) = match s.split_once(':') {
            Some((h, o)) => (h, Some(o)),
            None => (s, None),
        };
        let fixed = |scope| {
            let policy = match order.unwrap_or("dm") {
                "rm" => RunPolicy::RateMonotonic,
                "dm" => RunPolicy::DeadlineMonotonic,
                "given" => RunPolicy::Given,
                _ => return Err(unknown()),
            };
            Ok(RealScheduler { policy, scope })
        };
        let multi = |scope| RealScheduler {
            policy: RunPolicy::Edf,
            scope,
        };
        match (head, order) {
            ("linux-dl", None) => Ok(multi(Scope::Global)),
            ("pedf", None) => Ok(multi(Scope::Partitioned)),
            ("cedf", None) => Ok(multi(Scope::Clustered)),
            ("gfp", _) => fixed(Scope::Global),
            ("pfp", _) => fixed(Scope::Partitioned),
            // The simulator's spellings of the one-CPU policies.
            ("fp", Some(order)) => order
                .parse::<RunPolicy>()
                .ok()
                .filter(|p| p.priority_assignment().is_some())
                .map(RealScheduler::uni)
                .ok_or_else(unknown),
            _ => s
                .parse::<RunPolicy>()
                .map(RealScheduler::uni)
                .map_err(|_| unknown()),
        }
    }
}

/// Serialized as their names (`Display`), as the reports have always
/// printed them.
macro_rules! serialize_as_display {
    ($($t:ty),*) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    )*};
}

serialize_as_display!(
    RealScheduler,
    ModelScheduler,
    RunPolicy,
    Scope,
    PriorityAssignment
);

/// What happens to a job that misses its deadline, in the simulator and
/// on real threads (`--on-miss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum MissRule {
    /// It keeps running to completion; later jobs of its task queue behind it.
    #[default]
    Continue,
    /// It is removed at its deadline (counted as missed and aborted);
    /// simulator only.
    Abort,
    /// It runs to completion, and releases of its task that fall while it is
    /// late are skipped: the next release is the first period boundary after
    /// its completion, as Hartstone counts (Donohoe, Shapiro, Weiderman 1990).
    Skip,
}

/// The miss rules' names, for messages.
pub const MISS_RULES: &str = "continue, abort or skip";

impl MissRule {
    /// `continue`, `abort` or `skip`.
    pub const fn name(self) -> &'static str {
        match self {
            MissRule::Continue => "continue",
            MissRule::Abort => "abort",
            MissRule::Skip => "skip",
        }
    }
}

impl fmt::Display for MissRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MissRule {
    type Err = String;
    fn from_str(s: &str) -> Result<MissRule, String> {
        match s {
            "continue" => Ok(MissRule::Continue),
            "abort" => Ok(MissRule::Abort),
            "skip" => Ok(MissRule::Skip),
            _ => Err(format!("unknown miss rule `{s}` (use {MISS_RULES})")),
        }
    }
}

serialize_as_display!(MissRule, LockingProtocol);

/// A resource-access protocol for the tasks' critical sections: what the
/// simulator runs (`sim --protocol`), what the analysis bounds (`analyze
/// --locking`) and what a real run's mutexes do (`run --protocol`: `none`,
/// `pip`, `ipcp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum LockingProtocol {
    /// Plain locks: a job that finds a lock taken waits; priority inversion
    /// is unbounded.
    #[default]
    None,
    /// Non-preemptive critical sections (Mok 1983): a job holding a lock is
    /// not preempted.
    Npp,
    /// Priority inheritance (Sha, Rajkumar & Lehoczky 1990): a holder runs at
    /// the highest priority of the jobs it blocks, transitively.
    Pip,
    /// Immediate priority ceiling (a.k.a. highest locker; the analysis's
    /// bound is the priority ceiling protocol's, Sha, Rajkumar & Lehoczky
    /// 1990): a holder runs at the ceiling of its locks, the highest priority
    /// of their users. `pcp` is read as `ipcp` (the analysis's old name).
    Ipcp,
    /// Stack resource policy (Baker 1991): a job may start only if its
    /// preemption level exceeds the ceiling of every lock held.
    Srp,
    /// Deadline floor (Burns, Gutierrez, Aldea & Gonzalez Harbour 2015): a
    /// holder's absolute deadline drops to now plus the floor of the lock,
    /// the shortest relative deadline of its users.
    Dfp,
}

/// The protocols' names, for messages.
pub const LOCKING_PROTOCOLS: &str = "none, npp, pip, ipcp (fixed priority), srp or dfp (EDF)";

impl LockingProtocol {
    /// `none`, `npp`, `pip`, `ipcp`, `srp` or `dfp`.
    pub const fn name(self) -> &'static str {
        match self {
            LockingProtocol::None => "none",
            LockingProtocol::Npp => "npp",
            LockingProtocol::Pip => "pip",
            LockingProtocol::Ipcp => "ipcp",
            LockingProtocol::Srp => "srp",
            LockingProtocol::Dfp => "dfp",
        }
    }
}

impl fmt::Display for LockingProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LockingProtocol {
    type Err = String;
    fn from_str(s: &str) -> Result<LockingProtocol, String> {
        match s {
            "none" => Ok(LockingProtocol::None),
            "npp" => Ok(LockingProtocol::Npp),
            "pip" => Ok(LockingProtocol::Pip),
            "ipcp" | "pcp" => Ok(LockingProtocol::Ipcp),
            "srp" => Ok(LockingProtocol::Srp),
            "dfp" => Ok(LockingProtocol::Dfp),
            _ => Err(format!("unknown protocol `{s}` (use {LOCKING_PROTOCOLS})")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    #[test]
    fn rm_and_dm_orders_break_ties_by_the_other_parameter_then_declaration() {
        let tasks = vec![
            Task::new("slow", ms(100), ms(1)).with_deadline(ms(5)),
            Task::new("fast", ms(10), ms(1)),
            Task::new("fast2", ms(10), ms(1)),
            Task::new("fast-tight", ms(10), ms(1)).with_deadline(ms(8)),
        ];
        let rm = PriorityAssignment::RateMonotonic.levels(&tasks).unwrap();
        assert_eq!(rm, vec![1, 3, 2, 4]);
        let dm = PriorityAssignment::DeadlineMonotonic
            .levels(&tasks)
            .unwrap();
        assert_eq!(dm, vec![4, 2, 1, 3]);
        assert_eq!(PriorityAssignment::Audsley.levels(&tasks).unwrap(), dm);
    }

    #[test]
    fn given_copies_the_priorities_or_names_the_task_without_one() {
        let tasks = vec![
            Task::new("a", ms(10), ms(1)).with_priority(4),
            Task::new("b", ms(10), ms(1)).with_priority(4),
        ];
        assert_eq!(
            PriorityAssignment::Given.levels(&tasks).unwrap(),
            vec![4, 4]
        );
        let missing = vec![tasks[0].clone(), Task::new("c", ms(10), ms(1))];
        let e = PriorityAssignment::Given.levels(&missing).unwrap_err();
        assert_eq!(
            e.to_string(),
            "task `c` has no priority (add `priority = N`)"
        );
    }

    #[test]
    fn names_round_trip_and_model_schedulers_print_as_simulator_specs() {
        for a in [
            PriorityAssignment::RateMonotonic,
            PriorityAssignment::DeadlineMonotonic,
            PriorityAssignment::Given,
            PriorityAssignment::Audsley,
        ] {
            assert_eq!(a.name().parse::<PriorityAssignment>(), Ok(a));
        }
        assert!("edf".parse::<PriorityAssignment>().is_err());
        let shown: Vec<String> = [
            ModelScheduler::FixedPriority(PriorityAssignment::DeadlineMonotonic),
            ModelScheduler::Edf,
            ModelScheduler::Fifo,
            ModelScheduler::RoundRobin(ms(100)),
            ModelScheduler::Hybrid(PriorityAssignment::DeadlineMonotonic),
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            shown,
            ["fp:dm", "edf", "fifo", "rr:100ms:linux", "hybrid:dm"]
        );
    }

    #[test]
    fn policy_names_round_trip_and_bad_names_are_explained() {
        for name in ["other", "fifo-order", "rm", "dm", "given", "rr", "edf"] {
            assert_eq!(name.parse::<RunPolicy>().unwrap().name(), name);
        }
        let e = "fifo".parse::<RunPolicy>().unwrap_err();
        assert!(e.contains("use other, fifo-order"), "{e}");
        assert!(!e.contains("--policy"), "{e}");
        let model = |p: RunPolicy| p.model_scheduler(ms(100)).map(|m| m.to_string());
        assert_eq!(model(RunPolicy::RoundRobin).unwrap(), "rr:100ms:linux");
        assert_eq!(model(RunPolicy::Given).unwrap(), "fp:given");
        assert_eq!(model(RunPolicy::FifoOrder).unwrap(), "fifo");
        assert_eq!(model(RunPolicy::Other), None);
    }

    #[test]
    fn each_policy_is_modelled_by_the_simulator_scheduler_of_its_name() {
        let names: Vec<String> = AnalysedPolicy::ALL
            .iter()
            .map(|&p| ModelScheduler::from(p).to_string())
            .collect();
        assert_eq!(names, ["fp:rm", "fp:dm", "fp:given", "fp:opa", "edf"]);
    }

    #[test]
    fn real_schedulers_round_trip_and_gedf_is_not_sched_deadline() {
        for name in [
            "other",
            "fifo-order",
            "rm",
            "dm",
            "given",
            "rr",
            "edf",
            "linux-dl",
            "pedf",
            "cedf",
            "gfp:rm",
            "gfp:dm",
            "pfp:given",
        ] {
            let s: RealScheduler = name.parse().unwrap();
            assert_eq!(s.to_string(), name);
        }
        assert_eq!("fp:rm".parse::<RealScheduler>().unwrap().to_string(), "rm");
        assert_eq!(
            "gfp".parse::<RealScheduler>().unwrap().to_string(),
            "gfp:dm"
        );
        let e = "gedf".parse::<RealScheduler>().unwrap_err();
        assert!(e.contains("linux-dl"), "{e}");
        let model = |n: &str| {
            n.parse::<RealScheduler>()
                .unwrap()
                .model_scheduler(ms(100))
                .map(|m| m.to_string())
        };
        assert_eq!(model("linux-dl").as_deref(), Some("linux-dl"));
        assert_eq!(model("pfp:rm").as_deref(), Some("pfp:rm"));
        assert_eq!(model("other"), None);
    }

    #[test]
    fn multiprocessor_model_schedulers_print_as_simulator_specs() {
        let shown: Vec<String> = [
            ModelScheduler::LinuxDl,
            ModelScheduler::PartitionedEdf,
            ModelScheduler::ClusteredEdf,
            ModelScheduler::GlobalFixedPriority(PriorityAssignment::RateMonotonic),
            ModelScheduler::PartitionedFixedPriority(PriorityAssignment::Given),
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(shown, ["linux-dl", "pedf", "cedf", "gfp:rm", "pfp:given"]);
    }
}
