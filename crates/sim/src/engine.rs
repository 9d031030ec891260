//! The discrete-event engine: time, jobs, releases, execution, overheads,
//! locks and metrics. Schedulers only decide (see [`crate::scheduler`]).
//!
//! # Model
//!
//! - Time is integer nanoseconds; nothing in the event loop uses floats.
//! - Task `i` releases job `k` at `offset_i + k * T_i` (phase tasks: from the
//!   phase start), for releases before the end of the run. A task is one
//!   thread: its jobs run one after the other, so a job released while an
//!   earlier one of its task is unfinished waits (state `Pending`) and is
//!   shown to the scheduler only when it is the task's oldest.
//! - Per instant, events are handled in the order documented in
//!   [`crate::queue`], then the scheduler picks once.
//! - Overheads are processor time: charging `c` at `t` makes the kernel
//!   busy until `max(t, busy) + c`, and no job progresses meanwhile.
//!   Per instant the engine charges: `release` per release noticed, `timer`
//!   per tick, `exit` per job completion, `schedule` once when the scheduler
//!   is invoked, `preempt` when it switches to another job other than right
//!   after a completion (a preemption, or a dispatch from idle),
//!   `nonpreempt` per release that did not get the processor, and the lock
//!   cost per lock or unlock. Costs are evaluated for `n` = number of tasks.
//! - The timer model is [`SimConfig::timing`]. Paper 004's tick
//!   (`--tick`, or an overheads file with `releases = "tick"`): releases and
//!   scheduler call-backs are noticed at the next multiple of the tick
//!   (response times still count from the true release), and each tick
//!   costs `timer`. Linux's model (`releases = "hrtimer"`): releases and
//!   call-backs are noticed at their exact instants (one-shot
//!   high-resolution timers), while the periodic tick, when the file gives
//!   one, still interrupts at every multiple of it from 0 and costs `timer`.
//!   Completions and lock operations are noticed at once in every model.
//! - A lock request that would close a cycle of jobs each waiting for a lock
//!   the next one holds is a deadlock: the first is recorded (time, jobs,
//!   resources) in [`SimReport::deadlock`] and every later one counted. The
//!   run goes on unchanged; the jobs of the cycle never finish (unless
//!   `--on-miss abort` removes one at its deadline, releasing its locks).
//! - A job's lock wait ([`JobRecord::blocked`], per task `max_blocked_ns`
//!   and `total_blocked_ns`, for tasks with critical sections) is the time
//!   it spent [`JobState::Blocked`](crate::JobState::Blocked) waiting for a
//!   lock another job held. It is lock wait, not the whole priority
//!   inversion: under IPCP and SRP on one processor a job never waits on a
//!   lock (it cannot start, or is not picked, while a ceiling blocks it), so
//!   its lock wait is 0 although it was delayed; a job preempted by a
//!   boosted holder is not waiting on a lock either.
//! - Memory does not grow with the duration, with one exception that is
//!   bounded: jobs waiting behind an unfinished job of their task (an
//!   overloaded set under `--on-miss continue`). When more than
//!   [`MAX_PENDING_JOBS`] wait, the run stops there ([`Simulator::stopped`])
//!   and the report covers the time simulated so far.

use rtlab_model::overheads::{LinearCost, Overheads, Timing};
use rtlab_model::phase::PhasePlan;
use rtlab_model::{lock_steps, Nanos, Task, TaskSet};

use crate::config::{LockingProtocol, MissRule, SimConfig};
use crate::error::SimError;
use crate::job::{Job, JobId, JobState};
use crate::kernel_servers::{KernelServers, ThrottlingReport};
use crate::lifecycle::{Backlog, Draws, Ledger};
use crate::metrics::{Deadlock, DeadlockLink, SimReport};
use crate::queue::{Class, EventQueue, Payload};
use crate::scheduler::{Hooks, PolicyKind, Priority, Scheduler, SchedulerSpec, System};
use crate::trace::{Trace, TraceRecord};
use rtlab_model::results::{EachJob, JobRecord, JobSink, Totals};

/// Jobs that may wait behind an unfinished job of their task, all tasks
/// together, before the run stops (about 200 bytes each, 200 MB in all).
/// Only an overloaded set under `--on-miss continue` builds such a backlog:
/// it grows with the duration and never drains.
pub const MAX_PENDING_JOBS: usize = 1_000_000;

/// Instants between two polls of the caller's stop flag
/// ([`rtlab_model::cancel`]) in `run`: well under a millisecond of work.
pub const CANCEL_POLL_STEPS: u32 = 4096;

/// Why a run ended before its configured duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BacklogStop {
    /// When the backlog passed [`MAX_PENDING_JOBS`]; the report covers `0..at`.
    pub at: Nanos,
    /// Jobs waiting then.
    pub pending: usize,
}

impl std::fmt::Display for BacklogStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the simulation stopped at {}: {} jobs were waiting behind unfinished jobs of their \
             tasks (the limit is {MAX_PENDING_JOBS}; the set is overloaded and --on-miss continue \
             never drops a job); the report covers 0..{}; use --on-miss skip or abort, or a shorter \
             --duration",
            self.at, self.pending, self.at
        )
    }
}

/// Builds the read-only view from the simulator's fields (a macro so that
/// the borrow of the scheduler and of the job table stay disjoint).
macro_rules! view {
    ($s:ident) => {
        System {
            now: $s.now,
            tasks: &$s.tasks,
            jobs: &$s.jobs,
            ready: &$s.ready,
            running: $s.running,
            srp_ceiling: $s.srp_ceiling(),
            srp_levels: &$s.srp_levels,
        }
    };
}

/// One lock operation of a task's critical sections.
#[derive(Clone, Copy, Debug)]
struct LockOp {
    /// Execution time into the job at which it happens.
    at: Nanos,
    /// Resource index.
    resource: usize,
    /// Lock (true) or unlock.
    lock: bool,
}

#[derive(Clone, Debug)]
struct Resource {
    /// Its name in the task set.
    name: String,
    owner: Option<JobId>,
    waiters: Vec<JobId>,
    /// IPCP: the highest task priority among its users.
    ceiling: Option<Priority>,
    /// SRP: the highest preemption level among its users.
    srp_ceiling: u64,
    /// DFP: the shortest relative deadline among its users.
    floor: Nanos,
}

/// What happened in the current instant (for overheads).
#[derive(Default)]
struct Instant {
    releases: Vec<JobId>,
    ticks: u64,
    completions: u64,
    lock_ops: u64,
    other: bool,
}

impl Instant {
    /// Nothing happened yet (the releases' buffer kept for the next instant).
    fn clear(&mut self) {
        self.releases.clear();
        self.ticks = 0;
        self.completions = 0;
        self.lock_ops = 0;
        self.other = false;
    }
}

/// A simulation in progress. [`Simulator::run`] to the end, or
/// [`Simulator::step`] one instant at a time.
pub struct Simulator {
    tasks: Vec<Task>,
    /// The phases' windows, suspensions and scales ([`PhasePlan`]: the
    /// interpretation the real-thread executor shares).
    phases: PhasePlan,
    config: SimConfig,
    overheads: Overheads,
    has_overheads: bool,
    /// The tick releases and call-backs wait for (paper 004's model).
    release_tick: Option<Nanos>,
    /// The periodic tick that costs `timer` (either model).
    periodic_tick: Option<Nanos>,
    scheduler: Box<dyn Scheduler>,
    /// The scheduler's [`Scheduler::hooks`], read once.
    hooks: Hooks,
    scheduler_name: String,
    taskset_name: String,
    now: Nanos,
    queue: EventQueue,
    jobs: Vec<Job>,
    free: Vec<u32>,
    ready: Vec<JobId>,
    /// Each task's ready job and the jobs waiting behind it.
    backlog: Backlog<JobId>,
    running: Option<JobId>,
    run_from: Nanos,
    busy_until: Nanos,
    last_task: Option<usize>,
    callback: Option<Nanos>,
    /// Execution-time and jitter draws.
    draws: Draws,
    /// Per task: true when the phases leave its releases alone (no window,
    /// no suspension), so that its releases are `offset + k T` in order and
    /// the `k`-th handled is job `k` ([`Simulator::handle_release`] counts
    /// instead of dividing).
    regular: Vec<bool>,
    /// Per task: the index of its next job, for the regular tasks.
    next_index: Vec<u64>,
    resources: Vec<Resource>,
    ops: Vec<Vec<LockOp>>,
    srp_levels: Vec<u64>,
    /// Each task's jobs, folded in as they leave (completed, aborted, or
    /// unfinished at the end), and the job sink ([`Simulator::on_job`]).
    ledger: Ledger,
    context_switches: u64,
    overhead_ns: u64,
    executed_ns: u64,
    events: u64,
    next_uid: u64,
    instant: Instant,
    /// Linux's RT throttling and fair server ([`crate::kernel_servers`]),
    /// when the overheads file states them and the scheduler has fixed
    /// priorities.
    servers: Option<KernelServers>,
    /// Why stated limits are not modelled (another kind of scheduler).
    servers_skipped: Option<String>,
    trace: Option<Trace>,
    /// The first deadlock (wait-for cycle) seen, and how many formed.
    deadlock: Option<Deadlock>,
    finished: bool,
}

/// Simulates `set` under `spec` with `config` and returns the report. A run
/// stopped at the backlog limit ([`MAX_PENDING_JOBS`]) reports a
/// `duration_ns` shorter than the configured one; use [`Simulator`] and
/// [`Simulator::stopped`] to learn why.
pub fn simulate(
    set: &TaskSet,
    spec: &SchedulerSpec,
    config: &SimConfig,
) -> Result<SimReport, SimError> {
    crate::run(set, spec, config, None).map(|run| run.report)
}

impl Simulator {
    /// Sets up a run of `set` under the scheduler `spec` names.
    pub fn new(
        set: &TaskSet,
        spec: &SchedulerSpec,
        config: SimConfig,
    ) -> Result<Simulator, SimError> {
        if set.processors() != 1 && !spec.is_multiprocessor() {
            return Err(SimError::Setup {
                scheduler: spec.to_string(),
                why: crate::registry::uniprocessor_only(spec.entry().on_many, set.processors()),
            });
        }
        let tasks = all_tasks(set, &config);
        let scheduler = spec.build(&tasks)?;
        Simulator::with_scheduler(set, scheduler, config)
    }

    /// Sets up a run with a scheduler built by the caller (it must have been
    /// built for the set's tasks followed by the phases' tasks).
    pub fn with_scheduler(
        set: &TaskSet,
        scheduler: Box<dyn Scheduler>,
        config: SimConfig,
    ) -> Result<Simulator, SimError> {
        if let Some(e) = set.errors().first() {
            return Err(SimError::TaskSet {
                name: set.name.clone(),
                message: e.message.clone(),
            });
        }
        if config.duration.is_zero() {
            return Err(SimError::Setting {
                setting: "duration",
                message: "must be greater than 0".into(),
            });
        }
        if set.processors() != 1 {
            return Err(SimError::Setup {
                scheduler: scheduler.name(),
                why: crate::registry::uniprocessor_only("", set.processors()),
            });
        }
        let timing = config.timing();
        if timing.tick().is_some_and(|t| t.is_zero()) {
            return Err(SimError::Setting {
                setting: "tick",
                message: "must be greater than 0".into(),
            });
        }
        let release_tick = match timing {
            Timing::Tick(t) => Some(t),
            Timing::Unstated | Timing::Hrtimer { .. } => None,
        };
        let phases = PhasePlan::new(set, &config.phases, config.duration)?;
        let tasks = all_tasks(set, &config);
        let overheads = config.overheads.clone().unwrap_or_else(Overheads::zero);
        let has_overheads = [
            overheads.timer,
            overheads.preempt,
            overheads.exit,
            overheads.nonpreempt,
            overheads.schedule,
            overheads.release,
            overheads.wake,
        ]
        .iter()
        .any(|c| !c.is_zero())
            || !config.lock_cost.is_zero();
        let (resources, ops, srp_levels) =
            build_locks(&tasks, scheduler.as_ref(), config.protocol)?;
        let trace = config
            .trace
            .map(|w| Trace::new(w, tasks.iter().map(|t| t.name.clone()).collect()));
        let n = tasks.len();
        let throttling = overheads.throttling;
        let (servers, servers_skipped) = if throttling.is_none() {
            (None, None)
        } else if scheduler.kind() == PolicyKind::FixedPriority {
            (Some(KernelServers::new(&throttling)), None)
        } else {
            let why = format!(
                "not modelled under {}: RT throttling and the fair server are modelled for fixed-priority schedulers (SCHED_FIFO) only",
                scheduler.name()
            );
            (None, Some(why))
        };
        let regular = (0..n).map(|i| !phases.changes_releases_of(i)).collect();
        let mut sim = Simulator {
            servers,
            servers_skipped,
            ledger: Ledger::new(n),
            scheduler_name: scheduler.name(),
            hooks: scheduler.hooks(),
            taskset_name: set.name.clone(),
            phases,
            overheads,
            has_overheads,
            release_tick,
            periodic_tick: timing.tick(),
            scheduler,
            now: Nanos::ZERO,
            queue: EventQueue::default(),
            jobs: Vec::new(),
            free: Vec::new(),
            ready: Vec::new(),
            backlog: Backlog::new(n),
            running: None,
            run_from: Nanos::ZERO,
            busy_until: Nanos::ZERO,
            last_task: None,
            callback: None,
            draws: Draws::new(config.seed, n),
            regular,
            next_index: vec![0; n],
            resources,
            ops,
            srp_levels,
            context_switches: 0,
            overhead_ns: 0,
            executed_ns: 0,
            events: 0,
            next_uid: 0,
            instant: Instant::default(),
            trace,
            deadlock: None,
            finished: false,
            tasks,
            config,
        };
        for i in 0..n {
            let first = sim.phases.first_release(i, sim.tasks[i].offset);
            sim.schedule_release(i, first);
        }
        if sim.periodic_tick.is_some() && !sim.overheads.timer.is_zero() {
            sim.queue.push(Nanos::ZERO, Class::Tick, Payload::Tick);
        }
        Ok(sim)
    }

    /// The current simulated time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// The tasks simulated (the set's, then the phases').
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// Runs to the end of the configured duration.
    ///
    /// Stops early when the caller's stop flag is raised
    /// ([`rtlab_model::cancel`], polled every [`CANCEL_POLL_STEPS`]
    /// instants); the report is then of the part run.
    pub fn run(&mut self) {
        let mut steps = 0u32;
        while self.step() {
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(crate::engine::CANCEL_POLL_STEPS)
                && rtlab_model::cancel::requested()
            {
                break;
            }
        }
    }

    /// Runs every instant up to and including `until` (or the end).
    pub fn run_until(&mut self, until: Nanos) {
        while self.next_time().is_some_and(|t| t <= until) && self.step() {}
    }

    /// Handles the next instant at which anything happens. Returns false
    /// when the run is over.
    pub fn step(&mut self) -> bool {
        if self.finished {
            return false;
        }
        // Crediting the running job up to `t` (`advance`) leaves its
        // milestone where it was, so it is computed once.
        let milestone = self.milestone();
        let t = match self.next_time_from(milestone) {
            Some(t) if t <= self.config.duration => t,
            _ => {
                self.finish();
                return false;
            }
        };
        self.advance(t);
        self.now = t;
        if milestone == Some(t) {
            self.events += 1;
            self.instant.other = true;
            self.handle_milestone();
        }
        while let Some(payload) = self.queue.pop_at(t) {
            self.events += 1;
            match payload {
                Payload::Deadline { slot, uid } => self.handle_deadline(slot, uid),
                Payload::Release { task, at } => self.handle_release(task, at),
                Payload::Tick => self.handle_tick(),
            }
        }
        if self.callback == Some(t) {
            self.events += 1;
            self.callback = None;
            self.instant.other = true;
            let sys = view!(self);
            self.scheduler.on_callback(&sys);
        }
        if let Some(servers) = &mut self.servers {
            if let Some(end) = servers.act(t, self.busy_until) {
                self.busy_until = self.busy_until.max(end);
            }
        }
        self.reschedule();
        true
    }

    fn next_time(&self) -> Option<Nanos> {
        self.next_time_from(self.milestone())
    }

    /// The next instant, the running job's milestone being `milestone`.
    #[inline]
    fn next_time_from(&self, milestone: Option<Nanos>) -> Option<Nanos> {
        let mut next = earliest(milestone, self.queue.peek_time());
        next = earliest(next, self.callback);
        if let Some(servers) = &self.servers {
            next = earliest(
                next,
                servers.next_event(
                    self.running
                        .map(|_| self.run_from.max(self.busy_until).max(self.now)),
                ),
            );
        }
        next
    }

    /// When the running job reaches its next lock operation or completes;
    /// `None` when that lies beyond the last representable instant
    /// ([`Nanos::MAX`]): a saturated milestone at `Nanos::MAX` would be
    /// handled without the job reaching it, then found again, forever
    /// (issue 24: `-d 18446744073709551615ns` spun at 100 % CPU).
    #[inline]
    fn milestone(&self) -> Option<Nanos> {
        let id = self.running?;
        let job = &self.jobs[id.index()];
        let mut target = job.demand;
        if let Some(op) = self.ops[job.task].get(job.op_cursor) {
            target = target.min(op.at.max(job.executed));
        }
        let start = self.run_from.max(self.busy_until);
        start.checked_add(target.saturating_sub(job.executed))
    }

    /// Credits the running job with the processor time up to `t`.
    #[inline]
    fn advance(&mut self, t: Nanos) {
        if let Some(servers) = &mut self.servers {
            let start = self.run_from.max(self.busy_until);
            let span = t.saturating_sub(start);
            if self.running.is_some() {
                servers.account(span, Nanos::ZERO);
            } else {
                servers.account(Nanos::ZERO, span);
            }
        }
        if let Some(id) = self.running {
            let start = self.run_from.max(self.busy_until);
            if t > start {
                let amount = t - start;
                let job = &mut self.jobs[id.index()];
                job.executed += amount;
                self.executed_ns += amount.as_ns();
                let (task, index) = (job.task, job.index);
                if self.hooks.executed {
                    self.scheduler.on_executed(id, amount);
                }
                if let Some(trace) = &mut self.trace {
                    trace.interval(Some((task, index)), start, t);
                }
            }
        }
        self.run_from = t;
    }

    fn charge(&mut self, cost: Nanos) {
        if cost.is_zero() {
            return;
        }
        let start = self.busy_until.max(self.now);
        self.busy_until = start.saturating_add(cost);
        self.overhead_ns = self.overhead_ns.saturating_add(cost.as_ns());
        if let Some(trace) = &mut self.trace {
            trace.interval(None, start, self.busy_until);
        }
    }

    fn cost(&self, c: LinearCost) -> Nanos {
        c.at(self.tasks.len())
    }

    fn notice_time(&self, t: Nanos) -> Nanos {
        match self.release_tick {
            Some(tick) => {
                let k = t.div_ceil(tick);
                tick.checked_mul(k).unwrap_or(Nanos::MAX)
            }
            None => t,
        }
    }

    #[inline]
    fn schedule_release(&mut self, task: usize, at: Nanos) {
        let release = if self.regular[task] {
            // What `PhasePlan::release` gives a task no phase moves.
            (at < self.config.duration).then_some(at)
        } else {
            let period = self.tasks[task].period;
            self.phases.release(task, period, at, self.config.duration)
        };
        if let Some(at) = release {
            let ready = self
                .draws
                .ready_at(task, &self.tasks[task], at, self.config.jitter);
            let notice = self.notice_time(ready);
            self.queue
                .push(notice, Class::Release, Payload::Release { task, at });
        }
    }

    fn handle_tick(&mut self) {
        self.instant.ticks += 1;
        if let Some(tick) = self.periodic_tick {
            if let Some(next) = self.now.checked_add(tick) {
                if next < self.config.duration {
                    self.queue.push(next, Class::Tick, Payload::Tick);
                }
            }
        }
    }

    fn handle_release(&mut self, task: usize, at: Nanos) {
        let t = &self.tasks[task];
        let (period, deadline) = (t.period, t.deadline);
        let index = if self.regular[task] {
            // Its releases come in order, one per period from its offset.
            let k = self.next_index[task];
            self.next_index[task] = k + 1;
            debug_assert_eq!(k, self.phases.job_index(task, period, t.offset, at));
            k
        } else {
            self.phases.job_index(task, period, t.offset, at)
        };
        if let Some(next) = at.checked_add(period) {
            self.schedule_release(task, next);
        }
        if self.config.on_miss == MissRule::Skip {
            if let Some(h) = self.backlog.head(task) {
                if self.jobs[h.index()].deadline <= at {
                    self.ledger.skipped(task);
                    return;
                }
            }
        }
        let demand = self.draw_demand(task, at);
        let uid = self.next_uid;
        self.next_uid += 1;
        let abs_deadline = at.saturating_add(deadline);
        let id = match self.free.pop() {
            Some(slot) => {
                // Written in place: no job moved, no lock list dropped.
                self.jobs[slot as usize].reuse(task, index, at, abs_deadline, demand, uid);
                JobId(slot)
            }
            None => {
                let job = Job {
                    uid,
                    ..Job::new(task, index, at, abs_deadline, demand)
                };
                self.jobs.push(job);
                JobId((self.jobs.len() - 1) as u32)
            }
        };
        if let Some(trace) = &mut self.trace {
            trace.point(TraceRecord::Release {
                task,
                job: index,
                at,
            });
        }
        if self.config.on_miss == MissRule::Abort {
            self.queue.push(
                abs_deadline,
                Class::Deadline,
                Payload::Deadline { slot: id.0, uid },
            );
        }
        let was_stopped = self.backlog.stopped().is_some();
        if self.backlog.arrive(task, id, self.now) {
            self.make_ready(id);
        } else if !was_stopped && self.backlog.stopped().is_some() {
            // End the run at this instant: the events already due now are
            // handled, nothing after.
            self.config.duration = self.now.max(Nanos::from_ns(1));
        }
    }

    #[inline]
    fn make_ready(&mut self, id: JobId) {
        let task = self.jobs[id.index()].task;
        self.backlog.set_head(task, id);
        self.jobs[id.index()].state = JobState::Ready;
        self.ready.push(id);
        self.instant.releases.push(id);
        if self.hooks.job_events {
            let sys = view!(self);
            self.scheduler.on_release(id, &sys);
        }
    }

    #[inline]
    fn draw_demand(&mut self, task: usize, at: Nanos) -> Nanos {
        let demand = self.draws.demand(task, &self.tasks[task], self.config.exec);
        if self.phases.is_empty() {
            // No phase scales it.
            return demand;
        }
        self.phases.demand(demand, at)
    }

    fn handle_milestone(&mut self) {
        let Some(id) = self.running else { return };
        loop {
            let job = &self.jobs[id.index()];
            let Some(&op) = self.ops[job.task].get(job.op_cursor) else {
                break;
            };
            if op.at > job.executed || op.at >= job.demand && op.lock {
                break;
            }
            self.jobs[id.index()].op_cursor += 1;
            self.instant.lock_ops += 1;
            if op.lock {
                if !self.lock(id, op.resource) {
                    return;
                }
            } else {
                self.unlock(id, op.resource);
            }
        }
        let job = &self.jobs[id.index()];
        if job.executed >= job.demand {
            self.complete(id);
        }
    }

    fn complete(&mut self, id: JobId) {
        let now = self.now;
        let (task, index, deadline) = {
            let j = &self.jobs[id.index()];
            (j.task, j.index, j.deadline)
        };
        self.release_all_locks(id);
        let j = &self.jobs[id.index()];
        match j.start {
            // A completed job of a task without critical sections, and no
            // sink: nothing reads its record, the summary takes the few
            // figures it needs (`TaskSummary::record_completed`: the same).
            Some(start) if !self.ledger.has_sink() && self.ops[task].is_empty() => {
                let (release, preemptions) = (j.release, j.preemptions);
                self.ledger.summary_without_sink(task).record_completed(
                    release,
                    deadline,
                    start,
                    now,
                    preemptions,
                    0,
                );
            }
            _ => self.record_job(id, Some(now), false),
        }
        if let Some(trace) = &mut self.trace {
            trace.point(TraceRecord::Complete {
                task,
                job: index,
                at: now,
            });
            if now > deadline {
                trace.point(TraceRecord::Miss {
                    task,
                    job: index,
                    at: deadline,
                });
            }
        }
        self.instant.completions += 1;
        self.retire(id);
    }

    fn handle_deadline(&mut self, slot: u32, uid: u64) {
        let id = JobId(slot);
        let Some(job) = self.jobs.get(id.index()) else {
            return;
        };
        if job.uid != uid || job.state == JobState::Done {
            return;
        }
        self.instant.other = true;
        let (task, index, deadline, state) = (job.task, job.index, job.deadline, job.state);
        self.record_job(id, None, true);
        if let Some(trace) = &mut self.trace {
            trace.point(TraceRecord::Miss {
                task,
                job: index,
                at: deadline,
            });
        }
        if state == JobState::Pending {
            self.backlog.drop_waiting(task, id);
            self.jobs[id.index()].state = JobState::Done;
            self.free.push(id.0);
            return;
        }
        if let Some(r) = self.jobs[id.index()].blocked_on.take() {
            self.resources[r].waiters.retain(|&w| w != id);
            if let Some(owner) = self.resources[r].owner {
                self.recompute_inheritance(owner);
            }
        }
        self.release_all_locks(id);
        self.retire(id);
    }

    /// Folds job `id` into its task's summary as it leaves the system:
    /// completed at `finish`, aborted at its deadline, or (neither) still
    /// unfinished when the run ends; then hands the record to the job sink.
    #[inline]
    fn record_job(&mut self, id: JobId, finish: Option<Nanos>, aborted: bool) {
        let j = &self.jobs[id.index()];
        let record = JobRecord {
            task: j.task,
            job: j.index,
            release: j.release,
            deadline: j.deadline,
            start: j.start,
            finish,
            aborted,
            voluntary_switches: 0,
            involuntary_switches: j.preemptions,
            cpu: None,
            start_cpu: None,
            migrations: 0,
            blocked: (!self.ops[j.task].is_empty()).then(|| j.lock_wait(self.now)),
            remote_blocked: None,
            local_blocked: None,
            demand: Some(j.demand),
        };
        self.ledger.record(&record, self.config.duration);
    }

    /// Removes a ready or blocked job from the system and promotes the next
    /// job of its task.
    fn retire(&mut self, id: JobId) {
        let task = self.jobs[id.index()].task;
        remove_ready(&mut self.ready, id);
        if self.running == Some(id) {
            self.running = None;
        }
        if self.hooks.job_events {
            let sys = view!(self);
            self.scheduler.on_complete(id, &sys);
        }
        self.jobs[id.index()].state = JobState::Done;
        self.free.push(id.0);
        if let Some(next) = self.backlog.retire(task) {
            self.make_ready(next);
        }
    }

    // ---------------------------------------------------------------- locks

    fn effective(&self, id: JobId) -> Priority {
        let job = &self.jobs[id.index()];
        let base = self.scheduler.priority(job).unwrap_or(Priority(0));
        job.boost.map_or(base, |b| b.max(base))
    }

    /// Tries to take `r` for `id`; false when `id` now waits for it.
    fn lock(&mut self, id: JobId, r: usize) -> bool {
        if self.resources[r].owner.is_some() {
            self.detect_deadlock(id, r);
            let job = &mut self.jobs[id.index()];
            job.state = JobState::Blocked;
            job.blocked_on = Some(r);
            job.blocked_since = Some(self.now);
            self.resources[r].waiters.push(id);
            self.ready.retain(|&j| j != id);
            if self.running == Some(id) {
                self.running = None;
            }
            if self.hooks.job_events {
                let sys = view!(self);
                self.scheduler.on_block(id, &sys);
            }
            if let Some(owner) = self.resources[r].owner {
                self.recompute_inheritance(owner);
            }
            return false;
        }
        self.grant(id, r);
        true
    }

    /// `id` is about to wait for `r`: if the owner of `r` waits (through a
    /// chain of owners) for a lock `id` holds, no job of the chain can ever
    /// run again. Records the first such cycle and counts them all. Waiting
    /// edges appear only here (a lock handed over on unlock goes to a job
    /// that stops waiting), so every cycle is seen when it forms.
    fn detect_deadlock(&mut self, id: JobId, r: usize) {
        let mut chain = vec![(id, r)];
        let mut resource = r;
        // A chain visits each waiting job at most once.
        for _ in 0..=self.jobs.len() {
            let Some(owner) = self.resources[resource].owner else {
                return;
            };
            if owner == id {
                break;
            }
            let Some(next) = self.jobs[owner.index()].blocked_on else {
                return;
            };
            chain.push((owner, next));
            resource = next;
        }
        if self.resources[resource].owner != Some(id) {
            return;
        }
        if let Some(d) = &mut self.deadlock {
            d.count += 1;
            return;
        }
        let name = |job: JobId| {
            let j = &self.jobs[job.index()];
            (self.tasks[j.task].name.clone(), j.index)
        };
        let cycle = chain
            .iter()
            .enumerate()
            .map(|(k, &(job, waits))| {
                let (task, index) = name(job);
                let (held_by, held_job) = name(chain[(k + 1) % chain.len()].0);
                DeadlockLink {
                    task,
                    job: index,
                    waits_for: self.resources[waits].name.clone(),
                    held_by,
                    held_job,
                }
            })
            .collect();
        self.deadlock = Some(Deadlock {
            at_ns: self.now.as_ns(),
            cycle,
            count: 1,
        });
    }

    fn grant(&mut self, id: JobId, r: usize) {
        self.resources[r].owner = Some(id);
        let boost = match self.config.protocol {
            LockingProtocol::Ipcp => self.resources[r].ceiling,
            LockingProtocol::Dfp => Some(Priority::deadline(
                self.now.saturating_add(self.resources[r].floor),
            )),
            _ => None,
        };
        let job = &mut self.jobs[id.index()];
        job.held.push(r);
        job.boost_stack.push(job.boost);
        if let Some(b) = boost {
            job.boost = Some(job.boost.map_or(b, |old| old.max(b)));
        }
    }

    fn unlock(&mut self, id: JobId, r: usize) {
        let job = &mut self.jobs[id.index()];
        let Some(pos) = job.held.iter().rposition(|&h| h == r) else {
            return;
        };
        job.held.remove(pos);
        let saved = job.boost_stack.pop().flatten();
        job.boost = saved;
        self.resources[r].owner = None;
        if self.config.protocol == LockingProtocol::Pip {
            self.recompute_inheritance(id);
        }
        // Hand the lock to the most urgent waiter (FIFO among equals).
        let waiters = std::mem::take(&mut self.resources[r].waiters);
        let mut best: Option<(usize, Priority)> = None;
        for (i, &w) in waiters.iter().enumerate() {
            let p = self.effective(w);
            if best.is_none_or(|(_, bp)| p > bp) {
                best = Some((i, p));
            }
        }
        let mut waiters = waiters;
        if let Some((i, _)) = best {
            let w = waiters.remove(i);
            self.resources[r].waiters = waiters;
            self.grant(w, r);
            let now = self.now;
            let job = &mut self.jobs[w.index()];
            job.blocked = job.lock_wait(now);
            job.blocked_since = None;
            job.blocked_on = None;
            job.state = JobState::Ready;
            self.ready.push(w);
            self.instant.other = true;
            if self.hooks.job_events {
                let sys = view!(self);
                self.scheduler.on_unblock(w, &sys);
            }
            if self.config.protocol == LockingProtocol::Pip {
                self.recompute_inheritance(w);
            }
        }
    }

    fn release_all_locks(&mut self, id: JobId) {
        while let Some(&r) = self.jobs[id.index()].held.last() {
            self.unlock(id, r);
        }
    }

    /// Priority inheritance: `owner` runs at the highest effective priority
    /// of the jobs waiting for its locks, and so on down the chain of owners.
    fn recompute_inheritance(&mut self, owner: JobId) {
        if self.config.protocol != LockingProtocol::Pip {
            return;
        }
        let mut current = owner;
        for _ in 0..=self.jobs.len() {
            let mut inherited: Option<Priority> = None;
            for &r in &self.jobs[current.index()].held {
                for &w in &self.resources[r].waiters {
                    let p = self.effective(w);
                    inherited = Some(inherited.map_or(p, |q| q.max(p)));
                }
            }
            self.jobs[current.index()].boost = inherited;
            match self.jobs[current.index()]
                .blocked_on
                .and_then(|r| self.resources[r].owner)
            {
                Some(next) if next != current => current = next,
                _ => break,
            }
        }
    }

    fn srp_ceiling(&self) -> Option<u64> {
        if self.config.protocol != LockingProtocol::Srp {
            return None;
        }
        self.resources
            .iter()
            .filter(|r| r.owner.is_some())
            .map(|r| r.srp_ceiling)
            .max()
    }

    // ------------------------------------------------------------ dispatch

    fn reschedule(&mut self) {
        let inst = &self.instant;
        let invoked = inst.other || !inst.releases.is_empty() || inst.completions > 0;
        let previous = self
            .running
            .filter(|id| self.jobs[id.index()].state == JobState::Ready);
        // Ticks alone do not invoke the scheduler; under NPP a lock holder
        // keeps the processor.
        let keep = !invoked
            || self.config.protocol == LockingProtocol::Npp
                && previous.is_some_and(|p| self.jobs[p.index()].holds_locks());
        let choice = if keep {
            previous
        } else {
            let sys = view!(self);
            let pick = self.scheduler.pick(&sys);
            pick.filter(|id| self.ready.contains(id))
        };
        if choice != previous {
            if let Some(p) = previous {
                self.jobs[p.index()].preemptions += 1;
            }
        }
        if let Some(c) = choice {
            let task = self.jobs[c.index()].task;
            if self.last_task != Some(task) {
                self.context_switches += 1;
                self.last_task = Some(task);
            }
            let job = &mut self.jobs[c.index()];
            job.start = job.start.or(Some(self.now));
        }
        if self.has_overheads {
            let inst = &self.instant;
            let n_rel = inst.releases.len() as u64;
            let mut cost = Nanos::ZERO;
            let mul = |c: Nanos, k: u64| c.checked_mul(k).unwrap_or(Nanos::MAX);
            cost = cost.saturating_add(mul(self.cost(self.overheads.release), n_rel));
            // One wake-up of a scheduler on one timer serves every release
            // that coincides.
            cost = cost.saturating_add(mul(self.cost(self.overheads.wake), n_rel.min(1)));
            cost = cost.saturating_add(mul(self.cost(self.overheads.timer), inst.ticks));
            cost = cost.saturating_add(mul(self.cost(self.overheads.exit), inst.completions));
            cost = cost.saturating_add(mul(self.config.lock_cost, inst.lock_ops));
            if invoked {
                cost = cost.saturating_add(self.cost(self.overheads.schedule));
            }
            if choice.is_some() && choice != previous && inst.completions == 0 {
                cost = cost.saturating_add(self.cost(self.overheads.preempt));
            }
            let waiting = inst.releases.iter().filter(|&&r| Some(r) != choice).count() as u64;
            cost = cost.saturating_add(mul(self.cost(self.overheads.nonpreempt), waiting));
            self.charge(cost);
        }
        self.running = choice;
        self.instant.clear();
        // A call-back asks for an amount of the chosen job's time from now
        // (a burst, a quantum): the overheads charged before the job runs
        // are no part of it, as on real threads, where rtlab's dispatcher
        // counts it on the thread's CPU clock from when the job gets the CPU.
        let held = if choice.is_some() {
            self.busy_until.saturating_sub(self.now)
        } else {
            Nanos::ZERO
        };
        self.callback = if invoked {
            self.scheduler
                .callback_at()
                .filter(|&c| c > self.now)
                .map(|c| self.notice_time(c.saturating_add(held)))
        } else {
            self.callback
        };
    }

    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let end = self.config.duration;
        if self.now < end {
            self.advance(end);
            self.now = end;
        }
        for slot in 0..self.jobs.len() {
            let job = &self.jobs[slot];
            if job.state == JobState::Done {
                continue;
            }
            let (task, index, deadline) = (job.task, job.index, job.deadline);
            self.record_job(JobId(slot as u32), None, false);
            if deadline <= end {
                if let Some(trace) = &mut self.trace {
                    trace.point(TraceRecord::Miss {
                        task,
                        job: index,
                        at: deadline,
                    });
                }
            }
        }
    }

    /// The report (finishes the run first if it was not).
    pub fn report(&mut self) -> SimReport {
        self.run();
        let tasks = self.ledger.metrics(&self.tasks);
        let totals = Totals::of(&tasks);
        let duration = self.config.duration;
        let busy = self
            .executed_ns
            .saturating_add(self.overhead_ns)
            .saturating_add(self.servers.as_ref().map_or(0, KernelServers::taken_ns));
        SimReport {
            throttling: match (&self.servers, &self.servers_skipped) {
                (Some(servers), _) => Some(servers.report()),
                (None, Some(why)) => Some(ThrottlingReport {
                    model: why.clone(),
                    ..ThrottlingReport::default()
                }),
                (None, None) => None,
            },
            scheduler: self.scheduler_name.clone(),
            taskset: self.taskset_name.clone(),
            duration_ns: duration.as_ns(),
            protocol: self.config.protocol.name().into(),
            on_miss: self.config.on_miss.name().into(),
            tick_ns: self.release_tick.map(Nanos::as_ns),
            timer: match self.config.timing() {
                Timing::Hrtimer { tick: Some(t) } => Some(format!("hrtimer + tick {t}")),
                Timing::Hrtimer { tick: None } => Some("hrtimer".into()),
                Timing::Unstated | Timing::Tick(_) => None,
            },
            periodic_tick_ns: match self.config.timing() {
                Timing::Hrtimer { tick } => tick.map(Nanos::as_ns),
                Timing::Unstated | Timing::Tick(_) => None,
            },
            seed: self.config.seed,
            jitter: self.config.jitter.to_string(),
            totals,
            context_switches: self.context_switches,
            context_switches_per_s: self.context_switches as f64 / duration.as_secs_f64(),
            overhead_ns: self.overhead_ns,
            idle_ns: duration.as_ns().saturating_sub(busy),
            first_miss_ns: totals.first_miss_ns,
            events: self.events,
            tasks,
            scheduler_data: self.scheduler.data(),
            deadlock: self.deadlock.clone(),
            migrations: 0,
            processors: Vec::new(),
        }
    }

    /// Calls `sink` with the record of every job as it leaves the run
    /// (completed, aborted, or unfinished at the end), the records the
    /// per-task summaries are folded from (call before running).
    pub fn on_job(&mut self, sink: impl FnMut(&JobRecord) + 'static) {
        self.ledger.set_sink(Box::new(EachJob(sink)));
    }

    /// Sends the record of every job to `sink` as it leaves the run (call
    /// before running); [`Simulator::finish_jobs`] ends its output.
    pub fn with_sink(&mut self, sink: Box<dyn JobSink>) {
        self.ledger.set_sink(sink);
    }

    /// Finishes the run and ends the job sink's output; its first error.
    pub fn finish_jobs(&mut self) -> std::io::Result<()> {
        self.run();
        self.ledger.finish()
    }

    /// The recorded trace, if a window was configured.
    pub fn trace(&self) -> Option<&Trace> {
        self.trace.as_ref()
    }

    /// The recorded trace, taken out (after the run).
    pub fn take_trace(&mut self) -> Option<Trace> {
        self.trace.take()
    }

    /// Streams the trace window as a Chrome trace-event document to `out`
    /// while the run goes (call before running; nothing happens without a
    /// configured window). `keep_records` false keeps no records in memory
    /// (they are needed only for the Gantt chart,
    /// [`crate::schedule_spans::gantt_window`]). Call
    /// [`Simulator::finish_trace`] after the run to end the document.
    pub fn stream_chrome_trace(&mut self, out: Box<dyn std::io::Write + Send>, keep_records: bool) {
        if let Some(trace) = &mut self.trace {
            trace.stream_chrome(out, keep_records);
        }
    }

    /// Finishes the run, ends the streamed Chrome document and flushes it;
    /// the first write error, if any.
    pub fn finish_trace(&mut self) -> std::io::Result<()> {
        self.run();
        match &mut self.trace {
            Some(trace) => trace.finish_chrome(),
            None => Ok(()),
        }
    }

    /// Why the run ended before the configured duration, if it did: too
    /// many jobs waiting (see [`MAX_PENDING_JOBS`]).
    pub fn stopped(&self) -> Option<BacklogStop> {
        self.backlog.stopped()
    }
}

/// Removes `id` (there at most once) from the ready jobs, keeping their order.
#[inline]
fn remove_ready(ready: &mut Vec<JobId>, id: JobId) {
    if let Some(i) = ready.iter().position(|&j| j == id) {
        // Shifted by hand: a handful of ids, where `Vec::remove` calls
        // `memmove`.
        for k in i + 1..ready.len() {
            ready[k - 1] = ready[k];
        }
        ready.pop();
    }
}

/// The earlier of two instants, either of which may be absent.
#[inline]
pub(crate) fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The set's tasks followed by every phase's extra tasks.
fn all_tasks(set: &TaskSet, config: &SimConfig) -> Vec<Task> {
    PhasePlan::tasks(set, &config.phases)
}

type LockTables = (Vec<Resource>, Vec<Vec<LockOp>>, Vec<u64>);

fn build_locks(
    tasks: &[Task],
    scheduler: &dyn Scheduler,
    protocol: LockingProtocol,
) -> Result<LockTables, SimError> {
    let kind = scheduler.kind();
    let refuse = |needs: &str| {
        Err(SimError::Setting {
            setting: "protocol",
            message: format!("{protocol} needs {needs}; {} is not one", scheduler.name()),
        })
    };
    match (protocol, kind) {
        (LockingProtocol::Multiprocessor(p), _) => {
            return Err(SimError::Setting {
                setting: "protocol",
                message: format!(
                    "{p} is a multiprocessor protocol: it runs under {} (--cpus M, --partition HEURISTIC for pfp)",
                    p.schedulers()
                ),
            })
        }
        (LockingProtocol::Pip | LockingProtocol::Srp, PolicyKind::Other) => {
            return refuse("a fixed-priority or EDF scheduler (fp:*, edf, np-edf)")
        }
        (LockingProtocol::Ipcp, k) if k != PolicyKind::FixedPriority => {
            return refuse(
                "a fixed-priority scheduler (fp:rm, fp:dm, fp:given; with edf use srp or dfp)",
            )
        }
        (LockingProtocol::Dfp, k) if k != PolicyKind::Deadline => {
            return refuse("an EDF scheduler (edf, np-edf; with fp use ipcp or pip)")
        }
        _ => {}
    }
    let srp_levels: Vec<u64> = (0..tasks.len())
        .map(|i| match kind {
            PolicyKind::FixedPriority => scheduler.task_priority(i).map_or(0, |p| p.0),
            _ => u64::MAX - tasks[i].deadline.as_ns(),
        })
        .collect();
    let mut names: Vec<&str> = Vec::new();
    let mut ops = Vec::with_capacity(tasks.len());
    for task in tasks {
        let task_ops = lock_steps(&task.critical_sections)
            .into_iter()
            .map(|step| {
                let r = match names.iter().position(|&n| n == step.resource) {
                    Some(r) => r,
                    None => {
                        names.push(step.resource);
                        names.len() - 1
                    }
                };
                LockOp {
                    at: step.at,
                    resource: r,
                    lock: step.lock,
                }
            })
            .collect::<Vec<_>>();
        ops.push(task_ops);
    }
    let mut resources: Vec<Resource> = names
        .iter()
        .map(|&name| Resource {
            name: name.to_string(),
            owner: None,
            waiters: Vec::new(),
            ceiling: None,
            srp_ceiling: 0,
            floor: Nanos::MAX,
        })
        .collect();
    for (i, task) in tasks.iter().enumerate() {
        for op in &ops[i] {
            let res = &mut resources[op.resource];
            if let Some(p) = scheduler.task_priority(i) {
                res.ceiling = Some(res.ceiling.map_or(p, |c| c.max(p)));
            }
            res.srp_ceiling = res.srp_ceiling.max(srp_levels[i]);
            res.floor = res.floor.min(task.deadline);
        }
    }
    Ok((resources, ops, srp_levels))
}

/// Stream indices of the jitter streams: apart from the execution-time
/// streams (task index `i`), so enabling jitter leaves execution times as
/// they were.
pub(crate) const JITTER_STREAMS: u64 = 1 << 40;
