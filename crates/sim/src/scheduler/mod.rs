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
//! | `llf` | [`llf`] | least laxity first at every scheduling point |
//! | `fifo` | [`fifo`] | non-preemptive, release order |
//! | `np-edf` | [`np_edf`] | non-preemptive earliest deadline first |
//! | `rr:QUANTUM` | [`rr`] | round robin with a quantum |
//! | `rr:QUANTUM:linux` | [`rr_linux`] | round robin with Linux SCHED_RR's timeslice rule |
//! | `ipi[:k=v,...]` | [`ipi`] | I+PI control scheduler (paper 002 §3.1.1) |
//! | `multiburst[:k=v,...]` | [`multiburst`] | PI Multiburst scheduler (paper 002 §3.2) |
//! | `hybrid[:rm\|dm]` | [`hybrid`] | EDF, falling back to FP on overload (paper 001) |

use rtlab_model::policy::PriorityAssignment;
use rtlab_model::{Nanos, Task};

use crate::error::SimError;
use crate::job::{Job, JobId, JobState};
pub use crate::registry::{
    forms_of, multiprocessor_table, scheduler_forms, scheduler_help, uniprocessor_table,
    SchedulerEntry, SchedulerSpec, SCHEDULERS,
};

pub mod edf;
pub mod fifo;
pub mod fp;
pub mod hybrid;
pub mod ipi;
pub mod llf;
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
    /// The view an engine gives its scheduler: the time, the tasks, the
    /// job table (indexed by [`JobId::index`]), the ready jobs in the order
    /// they became ready, and the job on the processor. No stack resource
    /// policy ceiling: [`System::may_start`] is then always true. An
    /// engine outside the simulator (the real-clock dispatcher) drives a
    /// [`Scheduler`] through this.
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

/// The event hooks a scheduler implements ([`Scheduler::hooks`]); the
/// simulator does not call the others, nor build their view of the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hooks {
    /// [`Scheduler::on_release`], [`Scheduler::on_complete`],
    /// [`Scheduler::on_block`], [`Scheduler::on_unblock`].
    pub job_events: bool,
    /// [`Scheduler::on_executed`].
    pub executed: bool,
}

impl Hooks {
    /// Every hook called: the default.
    pub const ALL: Hooks = Hooks {
        job_events: true,
        executed: true,
    };
    /// No hook called: a scheduler that decides from [`System`] alone
    /// (EDF, FP, FIFO, LLF, NP-EDF, the hybrid).
    pub const NONE: Hooks = Hooks {
        job_events: false,
        executed: false,
    };
}

/// A scheduling policy. Every hook has a default no-op; only
/// [`Scheduler::pick`] is required.
///
/// The engine calls the hooks in event order, then `pick` once per instant
/// at which anything happened, then [`Scheduler::callback_at`].
pub trait Scheduler {
    /// The spec it was built from, e.g. `fp:rm`.
    fn name(&self) -> String;

    /// The hooks it implements. The simulator skips the calls to the
    /// others (on the busiest path: a release, a completion, each credit of
    /// execution). Default: every hook, so a scheduler that overrides one
    /// is never skipped by mistake; `the_declared_hooks_change_nothing`
    /// runs every registry scheduler with and without its declaration.
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }

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
#[inline]
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
