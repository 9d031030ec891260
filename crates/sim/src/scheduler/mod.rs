//! The [`Scheduler`] trait and the schedulers, one module each.
//!
//! The engine owns time, jobs, events, overheads, locks and metrics; a
//! scheduler owns only its policy state and decides which ready job runs
//! next (the SimSo shape: a few hooks with default no-ops and one decision).
//! A scheduler may ask to be called back at a time, which is how round-robin
//! quanta, I+PI / Multiburst bursts and mode changes are modelled.
//!
//! The ready set itself (in the order jobs became ready) is part of the
//! read-only [`System`] view, so a static policy is a pure function of it:
//! [`fp`], [`edf`], [`fifo`] and [`np_edf`] are a few lines each. Stateful
//! policies ([`rr`], [`ipi`], [`multiburst`], [`hybrid`]) keep their own
//! queues and controllers, fed by the hooks.
//!
//! | spec | module | rule |
//! | --- | --- | --- |
//! | `fp:rm`, `fp:dm`, `fp:given` | [`fp`] | preemptive fixed priority |
//! | `edf` | [`edf`] | preemptive earliest deadline first |
//! | `fifo` | [`fifo`] | non-preemptive, release order |
//! | `np-edf` | [`np_edf`] | non-preemptive earliest deadline first |
//! | `rr:QUANTUM` | [`rr`] | round robin with a quantum |
//! | `rr:QUANTUM:linux` | [`rr_linux`] | round robin with Linux SCHED_RR's timeslice rule |
//! | `ipi[:k=v,...]` | [`ipi`] | I+PI control scheduler (paper 002 §3.1.1) |
//! | `multiburst[:k=v,...]` | [`multiburst`] | PI Multiburst scheduler (paper 002 §3.2) |
//! | `hybrid[:rm\|dm]` | [`hybrid`] | EDF, falling back to FP on overload (paper 001) |

use std::fmt;
use std::str::FromStr;

use rtlab_model::policy::{ModelScheduler, PriorityAssignment};
use rtlab_model::simso::SimsoScheduler;
use rtlab_model::{Nanos, Task, TaskSet};

use crate::error::SimError;
use crate::job::{Job, JobId, JobState};
pub use crate::multi::{GlobalPolicy, PartitionedPolicy};

pub mod edf;
pub mod fifo;
pub mod fp;
pub mod hybrid;
pub mod ipi;
pub mod multiburst;
pub mod np_edf;
pub mod rr;
pub mod rr_linux;

/// A job's urgency: **larger is more urgent** (the model's convention).
///
/// Fixed-priority schedulers use the task's level; deadline schedulers use
/// [`Priority::deadline`], so that earlier deadlines compare larger and the
/// locking protocols can treat both kinds alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub u64);

impl Priority {
    /// The priority of an absolute deadline: earlier is larger.
    pub const fn deadline(at: Nanos) -> Priority {
        Priority(u64::MAX - at.as_ns())
    }
}

/// What kind of priorities a scheduler uses (decides which locking
/// protocols apply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// Static per-task priorities (`pip`, `ipcp`, `srp`, `npp` apply).
    FixedPriority,
    /// Absolute deadlines (`pip`, `srp`, `dfp`, `npp` apply).
    Deadline,
    /// Anything else (only `none` and `npp` apply).
    Other,
}

/// The read-only view of the system a scheduler decides on.
#[derive(Clone, Copy)]
pub struct System<'a> {
    pub(crate) now: Nanos,
    pub(crate) tasks: &'a [Task],
    pub(crate) jobs: &'a [Job],
    pub(crate) ready: &'a [JobId],
    pub(crate) running: Option<JobId>,
    pub(crate) srp_ceiling: Option<u64>,
    pub(crate) srp_levels: &'a [u64],
}

impl<'a> System<'a> {
    /// A view over another engine's jobs (the real-time dispatcher of
    /// `rtlab_rt::dispatcher`, on the real clock): `now`, the tasks, the
    /// job table, the ready jobs in the order they became ready and the
    /// job on the processor. No stack resource policy ceiling.
    pub fn new(
        now: Nanos,
        tasks: &'a [Task],
        jobs: &'a [Job],
        ready: &'a [JobId],
        running: Option<JobId>,
    ) -> System<'a> {
        System {
            now,
            tasks,
            jobs,
            ready,
            running,
            srp_ceiling: None,
            srp_levels: &[],
        }
    }

    /// The current simulated time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// The tasks (declaration order; overload phases may append tasks).
    pub fn tasks(&self) -> &'a [Task] {
        self.tasks
    }

    /// A job by id.
    pub fn job(&self, id: JobId) -> &'a Job {
        &self.jobs[id.index()]
    }

    /// Ready jobs (at most one per task), in the order they became ready.
    pub fn ready(&self) -> &'a [JobId] {
        self.ready
    }

    /// The job on the processor, if it is still ready.
    pub fn running(&self) -> Option<JobId> {
        self.running
            .filter(|id| self.jobs[id.index()].state == JobState::Ready)
    }

    /// False when the stack resource policy forbids `id` to start now (its
    /// preemption level does not exceed the system ceiling). Always true
    /// for jobs already started and under every other protocol.
    pub fn may_start(&self, id: JobId) -> bool {
        let job = &self.jobs[id.index()];
        match self.srp_ceiling {
            Some(ceiling) if !job.started() => self.srp_levels[job.task] > ceiling,
            _ => true,
        }
    }

    /// `base` raised by the job's locking boost, if any.
    pub fn effective(&self, id: JobId, base: Priority) -> Priority {
        match self.jobs[id.index()].boost {
            Some(b) if b > base => b,
            _ => base,
        }
    }
}

/// A scheduling policy. Every hook has a default no-op; only
/// [`Scheduler::pick`] is required.
///
/// The engine calls the hooks in event order, then `pick` once per instant
/// at which anything happened, then [`Scheduler::callback_at`].
pub trait Scheduler {
    /// The spec it was built from, e.g. `fp:rm`.
    fn name(&self) -> String;

    /// `job` became ready for the first time (released, and its task's
    /// earlier jobs are finished).
    fn on_release(&mut self, _job: JobId, _sys: &System<'_>) {}

    /// `job` left the system (completed or aborted); its id is then reused.
    fn on_complete(&mut self, _job: JobId, _sys: &System<'_>) {}

    /// `job` stopped being ready while waiting for a lock.
    fn on_block(&mut self, _job: JobId, _sys: &System<'_>) {}

    /// `job` is ready again after getting its lock.
    fn on_unblock(&mut self, _job: JobId, _sys: &System<'_>) {}

    /// `job` received `amount` of processor time (called as the engine
    /// accounts execution, before any hook of the same instant).
    fn on_executed(&mut self, _job: JobId, _amount: Nanos) {}

    /// The time asked for by [`Scheduler::callback_at`] has come.
    fn on_callback(&mut self, _sys: &System<'_>) {}

    /// The job to run now, or `None` to idle. It must be one of
    /// [`System::ready`].
    fn pick(&mut self, sys: &System<'_>) -> Option<JobId>;

    /// When to be called back (a quantum or burst end, a timer), if ever.
    /// Only times after now are honoured; with a tick they are rounded up to
    /// the next tick.
    fn callback_at(&self) -> Option<Nanos> {
        None
    }

    /// What kind of priorities it uses.
    fn kind(&self) -> PolicyKind {
        PolicyKind::Other
    }

    /// The base priority of a ready job, for the locking protocols
    /// (inheritance compares these).
    fn priority(&self, _job: &Job) -> Option<Priority> {
        None
    }

    /// The static priority of a task (fixed-priority schedulers only), for
    /// the priority-ceiling protocol.
    fn task_priority(&self, _task: usize) -> Option<Priority> {
        None
    }

    /// Scheduler-specific results for the report (e.g. the rounds of a
    /// control scheduler), or `None`.
    fn data(&self) -> Option<serde_json::Value> {
        None
    }
}

/// The highest effective priority among the ready jobs that may start.
///
/// Ties go to the running job (no needless preemption), then to the earlier
/// release, then to the task declared first, then to the earlier job. A
/// non-preemptive policy keeps the running job whatever its priority.
pub fn pick_highest(
    sys: &System<'_>,
    preemptive: bool,
    base: impl Fn(&Job) -> Priority,
) -> Option<JobId> {
    let running = sys.running();
    if !preemptive && running.is_some() {
        return running;
    }
    let mut best: Option<(JobId, Priority)> = None;
    for &id in sys.ready() {
        if !sys.may_start(id) {
            continue;
        }
        let job = sys.job(id);
        let p = sys.effective(id, base(job));
        let better = match best {
            None => true,
            Some((bid, bp)) => {
                if p != bp {
                    p > bp
                } else if Some(id) == running || Some(bid) == running {
                    Some(id) == running
                } else {
                    let b = sys.job(bid);
                    (job.release, job.task, job.index) < (b.release, b.task, b.index)
                }
            }
        };
        if better {
            best = Some((id, p));
        }
    }
    best.map(|(id, _)| id)
}

/// One level per task (larger is more urgent) under `policy`, from the
/// model's [`PriorityAssignment::levels`] (the orders and tie rules of
/// `rtlab-analysis` and the real-thread executor). `scheduler` names the
/// scheduler in the error of a `given` task without a priority.
pub fn fixed_levels(
    policy: PriorityAssignment,
    tasks: &[Task],
    scheduler: &str,
) -> Result<Vec<u64>, SimError> {
    if policy == PriorityAssignment::Audsley {
        return Err(SimError::Setup {
            scheduler: scheduler.into(),
            why: "opa needs a schedulability test: write the priorities the analysis assigns as `priority` and use fp:given"
                .into(),
        });
    }
    match policy.levels(tasks) {
        Ok(levels) => Ok(levels.into_iter().map(u64::from).collect()),
        Err(e) => Err(SimError::Setup {
            scheduler: scheduler.into(),
            why: e.to_string(),
        }),
    }
}

/// The simulator scheduler that models a real-thread policy.
impl From<ModelScheduler> for SchedulerSpec {
    fn from(model: ModelScheduler) -> SchedulerSpec {
        match model {
            ModelScheduler::FixedPriority(policy) => SchedulerSpec::Fp(policy),
            ModelScheduler::Edf => SchedulerSpec::Edf,
            ModelScheduler::Fifo => SchedulerSpec::Fifo,
            ModelScheduler::RoundRobin(quantum) => SchedulerSpec::RrLinux(quantum),
            ModelScheduler::LinuxDl => SchedulerSpec::Global(GlobalPolicy::LinuxDl),
            ModelScheduler::PartitionedEdf => SchedulerSpec::Partitioned(PartitionedPolicy::Edf),
            ModelScheduler::ClusteredEdf => SchedulerSpec::Cedf,
            ModelScheduler::GlobalFixedPriority(order) => {
                SchedulerSpec::Global(GlobalPolicy::Fp(order))
            }
            ModelScheduler::PartitionedFixedPriority(order) => {
                SchedulerSpec::Partitioned(PartitionedPolicy::Fp(order))
            }
            ModelScheduler::Hybrid(policy) => SchedulerSpec::Hybrid(policy),
        }
    }
}

/// The simulator scheduler a SimSo scheduler is compared with (the one
/// [`SimsoScheduler::rtlab_spec`] names).
impl From<SimsoScheduler> for SchedulerSpec {
    fn from(scheduler: SimsoScheduler) -> SchedulerSpec {
        match scheduler {
            SimsoScheduler::Edf => SchedulerSpec::Edf,
            SimsoScheduler::FixedPriority(order) => SchedulerSpec::Fp(order),
            SimsoScheduler::GlobalEdf => SchedulerSpec::Global(GlobalPolicy::Edf),
            SimsoScheduler::GlobalFixedPriority(order) => {
                SchedulerSpec::Global(GlobalPolicy::Fp(order))
            }
            SimsoScheduler::Edzl => SchedulerSpec::Global(GlobalPolicy::Edzl),
            SimsoScheduler::PartitionedEdf => SchedulerSpec::Partitioned(PartitionedPolicy::Edf),
            SimsoScheduler::PartitionedRm => {
                SchedulerSpec::Partitioned(PartitionedPolicy::Fp(PriorityAssignment::RateMonotonic))
            }
        }
    }
}

/// A scheduler as named on the command line (`--scheduler`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedulerSpec {
    /// `fp:rm`, `fp:dm`, `fp:given`.
    Fp(PriorityAssignment),
    /// `edf`.
    Edf,
    /// `fifo`.
    Fifo,
    /// `np-edf`.
    NpEdf,
    /// `rr:QUANTUM`: a fresh quantum at every dispatch.
    Rr(Nanos),
    /// `rr:QUANTUM:linux`: Linux SCHED_RR, the timeslice kept across sleeps.
    RrLinux(Nanos),
    /// `ipi[:key=value,...]`.
    Ipi(ipi::IpiParams),
    /// `multiburst[:key=value,...]`.
    Multiburst(multiburst::MultiburstParams),
    /// `hybrid[:rm|dm]`.
    Hybrid(PriorityAssignment),
    /// `gedf`, `gfp:rm|dm|given`, `edzl`, `linux-dl`: global on m processors.
    Global(GlobalPolicy),
    /// `pedf`, `pfp:rm|dm|given`: partitioned on m processors.
    Partitioned(PartitionedPolicy),
    /// `cedf`: clustered EDF.
    Cedf,
}

/// Which platforms a scheduler is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platforms {
    /// One processor (the uniprocessor engine).
    Uni,
    /// m >= 1 processors, one ready set ([`crate::multi::global`]).
    Global,
    /// m >= 1 processors, each task fixed to one.
    Partitioned,
    /// Clusters of processors, global inside each.
    Clustered,
}

impl Platforms {
    /// True for the multiprocessor schedulers ([`crate::multi`]).
    pub fn is_multi(self) -> bool {
        self != Platforms::Uni
    }

    fn name(self) -> &'static str {
        match self {
            Platforms::Uni => "one processor",
            Platforms::Global => "global",
            Platforms::Partitioned => "partitioned",
            Platforms::Clustered => "clustered",
        }
    }
}

/// One scheduler of the registry: everything parsing, `--help`, error
/// messages and the guide's list need. Adding a scheduler is its module plus
/// one entry here (and its variant of [`SchedulerSpec`]).
pub struct SchedulerEntry {
    /// The name before any `:` argument.
    pub name: &'static str,
    /// The accepted forms, e.g. `fp:rm|dm|given`.
    pub forms: &'static str,
    /// One line: what it does.
    pub summary: &'static str,
    /// Where it runs.
    pub platforms: Platforms,
    /// Whether a more urgent job preempts a running one.
    pub preemptive: bool,
    /// How equal priorities are ordered.
    pub ties: &'static str,
    /// Where the rule comes from.
    pub paper: &'static str,
    /// Parses the argument after `name:` (`None`: none given).
    pub parse: fn(Option<&str>) -> Result<SchedulerSpec, String>,
}

/// Every scheduler, in the order help lists them.
pub const SCHEDULERS: &[SchedulerEntry] = &[
    SchedulerEntry {
        name: "fp",
        forms: "fp:rm|dm|given",
        summary: "preemptive fixed priority (rate or deadline monotonic, or the file's priorities)",
        platforms: Platforms::Uni,
        preemptive: true,
        ties: "running job, then earlier release, then declaration order",
        paper: "Liu & Layland 1973; Leung & Whitehead 1982",
        parse: |a| fp_policy("fp", a).map(SchedulerSpec::Fp),
    },
    SchedulerEntry {
        name: "edf",
        forms: "edf",
        summary: "preemptive earliest deadline first",
        platforms: Platforms::Uni,
        preemptive: true,
        ties: "running job, then earlier release, then declaration order",
        paper: "Liu & Layland 1973",
        parse: |a| no_arg("edf", a, SchedulerSpec::Edf),
    },
    SchedulerEntry {
        name: "fifo",
        forms: "fifo",
        summary: "non-preemptive, release order",
        platforms: Platforms::Uni,
        preemptive: false,
        ties: "declaration order",
        paper: "Soyer 2024",
        parse: |a| no_arg("fifo", a, SchedulerSpec::Fifo),
    },
    SchedulerEntry {
        name: "np-edf",
        forms: "np-edf",
        summary: "non-preemptive earliest deadline first",
        platforms: Platforms::Uni,
        preemptive: false,
        ties: "earlier release, then declaration order",
        paper: "",
        parse: |a| no_arg("np-edf", a, SchedulerSpec::NpEdf),
    },
    SchedulerEntry {
        name: "rr",
        forms: "rr:QUANTUM[:linux]",
        summary: "round robin with a quantum (e.g. rr:2ms); :linux keeps SCHED_RR's timeslice across sleeps",
        platforms: Platforms::Uni,
        preemptive: true,
        ties: "queue order",
        paper: "",
        parse: parse_rr,
    },
    SchedulerEntry {
        name: "ipi",
        forms: "ipi[:burst=4ms,bmin=200us,bmax=20ms,share=rate]",
        summary: "I+PI control scheduler (Golchin 2017 section 3.1.1)",
        platforms: Platforms::Uni,
        preemptive: true,
        ties: "Golchin 2017",
        paper: "Golchin 2017",
        parse: |a| ipi::IpiParams::parse(a.unwrap_or("")).map(SchedulerSpec::Ipi),
    },
    SchedulerEntry {
        name: "multiburst",
        forms: "multiburst[:burst=..,wake=[POLICY/]TASK:POLICY/..,reshare=ROUND:W1/W2/..]",
        summary: "PI Multiburst scheduler (Golchin 2017 section 3.2); POLICY: immediate, next-burst or end-of-round",
        platforms: Platforms::Uni,
        preemptive: true,
        ties: "Golchin 2017",
        paper: "Golchin 2017",
        parse: |a| {
            multiburst::MultiburstParams::parse(a.unwrap_or("")).map(SchedulerSpec::Multiburst)
        },
    },
    SchedulerEntry {
        name: "hybrid",
        forms: "hybrid[:rm|dm]",
        summary: "EDF, falling back to fixed priority on overload (Carletto & Vardanega 2017)",
        platforms: Platforms::Uni,
        preemptive: true,
        ties: "as edf / fp",
        paper: "Carletto & Vardanega 2017",
        parse: |a| match a {
            None | Some("rm") => Ok(SchedulerSpec::Hybrid(PriorityAssignment::RateMonotonic)),
            Some("dm") => Ok(SchedulerSpec::Hybrid(PriorityAssignment::DeadlineMonotonic)),
            Some(_) => Err("write hybrid, hybrid:rm or hybrid:dm".into()),
        },
    },
    SchedulerEntry {
        name: "gedf",
        forms: "gedf",
        summary: "global EDF on m processors, equal deadlines to the task declared first",
        platforms: Platforms::Global,
        preemptive: true,
        ties: "the task declared first, even against a running job (LITMUS^RT's rule by task id; SimSo's EDF keeps the running job, as linux-dl)",
        paper: "Baker 2003; Goossens, Funk, Baruah 2003",
        parse: |a| no_arg("gedf", a, SchedulerSpec::Global(GlobalPolicy::Edf)),
    },
    SchedulerEntry {
        name: "gfp",
        forms: "gfp:rm|dm|given",
        summary: "global fixed priority on m processors",
        platforms: Platforms::Global,
        preemptive: true,
        ties: "the task declared first",
        paper: "Bertogna & Cirinei 2007",
        parse: |a| fp_policy("gfp", a).map(|p| SchedulerSpec::Global(GlobalPolicy::Fp(p))),
    },
    SchedulerEntry {
        name: "edzl",
        forms: "edzl",
        summary: "global EDF until zero laxity (Lee 1994; Cho, Ravindran, Jensen 2002)",
        platforms: Platforms::Global,
        preemptive: true,
        ties: "zero-laxity jobs first (by deadline), then as gedf",
        paper: "Lee 1994; Cho, Ravindran, Jensen 2002",
        parse: |a| no_arg("edzl", a, SchedulerSpec::Global(GlobalPolicy::Edzl)),
    },
    SchedulerEntry {
        name: "linux-dl",
        forms: "linux-dl",
        summary: "Linux SCHED_DEADLINE: global EDF, preempting only on a strictly earlier deadline",
        platforms: Platforms::Global,
        preemptive: true,
        ties: "a running job keeps the processor; waiting jobs in the order they became ready",
        paper: "Linux SCHED_DEADLINE (kernel/sched/deadline.c); Abeni & Buttazzo 1998 (CBS)",
        parse: |a| no_arg("linux-dl", a, SchedulerSpec::Global(GlobalPolicy::LinuxDl)),
    },
    SchedulerEntry {
        name: "pedf",
        forms: "pedf",
        summary: "partitioned EDF: each processor's tasks under edf (tasks' `cpu` or --partition)",
        platforms: Platforms::Partitioned,
        preemptive: true,
        ties: "as edf on each processor",
        paper: "Lopez, Diaz, Garcia 2004",
        parse: |a| no_arg("pedf", a, SchedulerSpec::Partitioned(PartitionedPolicy::Edf)),
    },
    SchedulerEntry {
        name: "pfp",
        forms: "pfp:rm|dm|given",
        summary: "partitioned fixed priority (tasks' `cpu` or --partition)",
        platforms: Platforms::Partitioned,
        preemptive: true,
        ties: "as fp on each processor",
        paper: "Dhall & Liu 1978",
        parse: |a| {
            fp_policy("pfp", a).map(|p| SchedulerSpec::Partitioned(PartitionedPolicy::Fp(p)))
        },
    },
    SchedulerEntry {
        name: "cedf",
        forms: "cedf",
        summary: "clustered EDF: global EDF inside each of the platform's clusters",
        platforms: Platforms::Clustered,
        preemptive: true,
        ties: "as gedf inside each cluster",
        paper: "Calandrino et al. 2007; Baker & Baruah 2007",
        parse: |a| no_arg("cedf", a, SchedulerSpec::Cedf),
    },
];

/// `spec` when no argument was given.
fn no_arg(name: &str, arg: Option<&str>, spec: SchedulerSpec) -> Result<SchedulerSpec, String> {
    match arg {
        None => Ok(spec),
        Some(_) => Err(format!("`{name}` takes no argument")),
    }
}

/// `rm`, `dm` or `given` after `name:`.
fn fp_policy(name: &str, arg: Option<&str>) -> Result<PriorityAssignment, String> {
    match arg {
        Some("rm") => Ok(PriorityAssignment::RateMonotonic),
        Some("dm") => Ok(PriorityAssignment::DeadlineMonotonic),
        Some("given") => Ok(PriorityAssignment::Given),
        _ => Err(format!("write {name}:rm, {name}:dm or {name}:given")),
    }
}

fn parse_rr(arg: Option<&str>) -> Result<SchedulerSpec, String> {
    let arg = arg.ok_or("give a quantum, e.g. rr:2ms")?;
    let (q, linux) = match arg.split_once(':') {
        None => (arg, false),
        Some((q, "linux")) => (q, true),
        Some((_, other)) => {
            return Err(format!(
                "unknown round-robin variant `{other}` (write rr:QUANTUM or rr:QUANTUM:linux)"
            ))
        }
    };
    let q: Nanos = q.parse().map_err(|e| format!("{e}"))?;
    if q.is_zero() {
        return Err("the quantum must be greater than 0".into());
    }
    Ok(if linux {
        SchedulerSpec::RrLinux(q)
    } else {
        SchedulerSpec::Rr(q)
    })
}

/// The accepted forms of the multiprocessor schedulers (`multi`) or the
/// uniprocessor ones, comma-separated.
pub fn forms_of(multi: bool) -> String {
    SCHEDULERS
        .iter()
        .filter(|e| e.platforms.is_multi() == multi)
        .map(|e| e.forms)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every accepted form, comma-separated (error messages).
pub fn scheduler_forms() -> String {
    SCHEDULERS
        .iter()
        .map(|e| e.forms)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per scheduler, `  FORMS  summary`, for `--help`.
pub fn scheduler_help() -> String {
    let width = SCHEDULERS.iter().map(|e| e.forms.len()).max().unwrap_or(0);
    SCHEDULERS
        .iter()
        .map(|e| {
            let m = if e.platforms.is_multi() {
                " [--cpus M]"
            } else {
                ""
            };
            format!("  {:width$}  {}{m}\n", e.forms, e.summary)
        })
        .collect()
}

/// The guide's table of the multiprocessor schedulers
/// (docs/src/reference/schedulers.md; a test keeps the page equal to it): name, scope, preemptive, tie rule, paper.
pub fn multiprocessor_table() -> String {
    let mut out = String::from(
        "| scheduler | scope | preemptive | ties go to | paper |\n| --- | --- | --- | --- | --- |\n",
    );
    for e in SCHEDULERS.iter().filter(|e| e.platforms.is_multi()) {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            e.forms.replace('|', "\\|"),
            e.platforms.name(),
            if e.preemptive { "yes" } else { "no" },
            e.ties,
            e.paper
        ));
    }
    out
}

impl SchedulerSpec {
    /// Whether it schedules m processors ([`crate::multi`]).
    pub fn is_multiprocessor(&self) -> bool {
        matches!(
            self,
            SchedulerSpec::Global(_) | SchedulerSpec::Partitioned(_) | SchedulerSpec::Cedf
        )
    }

    /// Builds the scheduler for `tasks`.
    pub fn build(&self, tasks: &[Task]) -> Result<Box<dyn Scheduler>, SimError> {
        Ok(match self {
            SchedulerSpec::Fp(policy) => Box::new(fp::FixedPriority::new(*policy, tasks)?),
            SchedulerSpec::Edf => Box::new(edf::Edf),
            SchedulerSpec::Fifo => Box::new(fifo::Fifo),
            SchedulerSpec::NpEdf => Box::new(np_edf::NpEdf),
            SchedulerSpec::Rr(q) => Box::new(rr::RoundRobin::new(*q)),
            SchedulerSpec::RrLinux(q) => Box::new(rr_linux::LinuxRoundRobin::new(*q)),
            SchedulerSpec::Ipi(p) => Box::new(ipi::Ipi::new(p.clone(), tasks)?),
            SchedulerSpec::Multiburst(p) => {
                Box::new(multiburst::Multiburst::new(p.clone(), tasks)?)
            }
            SchedulerSpec::Hybrid(policy) => Box::new(hybrid::Hybrid::new(*policy, tasks)?),
            SchedulerSpec::Global(_) | SchedulerSpec::Partitioned(_) | SchedulerSpec::Cedf => {
                return Err(SimError::Setup {
                    scheduler: self.to_string(),
                    why: "is a multiprocessor scheduler: run it with rtlab_sim::simulate or rtlab_sim::multi::run".into(),
                })
            }
        })
    }

    /// Builds it for a task set.
    pub fn build_for(&self, set: &TaskSet) -> Result<Box<dyn Scheduler>, SimError> {
        self.build(&set.tasks)
    }
}

impl fmt::Display for SchedulerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedulerSpec::Fp(p) => write!(f, "fp:{}", p.name()),
            SchedulerSpec::Edf => f.write_str("edf"),
            SchedulerSpec::Fifo => f.write_str("fifo"),
            SchedulerSpec::NpEdf => f.write_str("np-edf"),
            SchedulerSpec::Rr(q) => write!(f, "rr:{q}"),
            SchedulerSpec::RrLinux(q) => write!(f, "rr:{q}:linux"),
            SchedulerSpec::Ipi(p) => write!(f, "{p}"),
            SchedulerSpec::Multiburst(p) => write!(f, "{p}"),
            SchedulerSpec::Hybrid(p) => write!(f, "hybrid:{}", p.name()),
            SchedulerSpec::Global(GlobalPolicy::Edf) => f.write_str("gedf"),
            SchedulerSpec::Global(GlobalPolicy::Fp(p)) => write!(f, "gfp:{}", p.name()),
            SchedulerSpec::Global(GlobalPolicy::Edzl) => f.write_str("edzl"),
            SchedulerSpec::Global(GlobalPolicy::LinuxDl) => f.write_str("linux-dl"),
            SchedulerSpec::Partitioned(PartitionedPolicy::Edf) => f.write_str("pedf"),
            SchedulerSpec::Partitioned(PartitionedPolicy::Fp(p)) => {
                write!(f, "pfp:{}", p.name())
            }
            SchedulerSpec::Cedf => f.write_str("cedf"),
        }
    }
}

impl FromStr for SchedulerSpec {
    type Err = SimError;

    /// Looks the name (before the first `:`) up in [`SCHEDULERS`] and
    /// hands the rest to its parser.
    fn from_str(text: &str) -> Result<SchedulerSpec, SimError> {
        let text = text.trim();
        let (name, arg) = match text.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        let bad = |why: String| SimError::Spec {
            spec: text.to_string(),
            why,
        };
        match SCHEDULERS.iter().find(|e| e.name == name) {
            Some(entry) => (entry.parse)(arg).map_err(bad),
            None => Err(bad(format!(
                "unknown scheduler (use {})",
                scheduler_forms()
            ))),
        }
    }
}

/// Parses `key=value,key=value` parameter lists of the control schedulers;
/// a key given twice is refused (which one was meant is anyone's guess).
pub(crate) fn parse_params(arg: &str) -> Result<Vec<(&str, &str)>, String> {
    let params: Vec<(&str, &str)> = arg
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| format!("parameter `{p}` needs a value (key=value)"))
        })
        .collect::<Result<_, _>>()?;
    for (i, (key, _)) in params.iter().enumerate() {
        if params[..i].iter().any(|(earlier, _)| earlier == key) {
            return Err(format!("parameter `{key}` is given twice"));
        }
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every model scheduler converts to the spec its printed name parses
    /// to, so a report that prints the model names the scheduler that ran.
    #[test]
    fn a_model_scheduler_converts_to_the_spec_of_its_name() {
        let dm = PriorityAssignment::DeadlineMonotonic;
        for model in [
            ModelScheduler::FixedPriority(dm),
            ModelScheduler::Edf,
            ModelScheduler::Fifo,
            ModelScheduler::RoundRobin(Nanos::from_ms(100)),
            ModelScheduler::LinuxDl,
            ModelScheduler::PartitionedEdf,
            ModelScheduler::ClusteredEdf,
            ModelScheduler::GlobalFixedPriority(dm),
            ModelScheduler::PartitionedFixedPriority(PriorityAssignment::Given),
        ] {
            let spec = SchedulerSpec::from(model);
            let parsed: SchedulerSpec = model.to_string().parse().expect("a spec");
            assert_eq!(parsed, spec, "{model}");
            assert_eq!(spec.to_string(), model.to_string());
        }
    }

    /// Every SimSo scheduler converts to the spec its rtlab name parses to.
    #[test]
    fn a_simso_scheduler_converts_to_the_spec_of_its_rtlab_name() {
        let dm = PriorityAssignment::DeadlineMonotonic;
        for scheduler in [
            SimsoScheduler::Edf,
            SimsoScheduler::FixedPriority(dm),
            SimsoScheduler::GlobalEdf,
            SimsoScheduler::GlobalFixedPriority(PriorityAssignment::Given),
            SimsoScheduler::Edzl,
            SimsoScheduler::PartitionedEdf,
            SimsoScheduler::PartitionedRm,
        ] {
            let spec = SchedulerSpec::from(scheduler);
            let parsed: SchedulerSpec = scheduler.rtlab_spec().parse().expect("a spec");
            assert_eq!(parsed, spec, "{scheduler:?}");
            assert_eq!(spec.to_string(), scheduler.rtlab_spec());
        }
    }
}
