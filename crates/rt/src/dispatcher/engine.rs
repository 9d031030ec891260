//! The dispatcher's event loop: the simulator's model of releases,
//! completions, call-backs and ticks, on a clock it does not own.
//!
//! The engine owns the job table, the ready list and the scheduler (a
//! [`Scheduler`] of `rtlab_sim`, the very object the simulator builds); a
//! [`Platform`] owns time and the task threads. One turn of the loop, after
//! the platform wakes it:
//!
//! 1. **account**: the running job's execution since the last turn, read
//!    from its thread's CPU clock, is credited to it and to the scheduler
//!    ([`Scheduler::on_executed`]);
//! 2. **milestones**: the running job's completion or lock step, posted by
//!    its thread ([`Platform::posted`]); a completion retires the job
//!    (`on_complete`) and makes its task's oldest waiting release ready;
//! 3. **releases** whose notice time has come (the release itself, or with
//!    a tick the next multiple of it), in the order of the simulator's
//!    event queue: notice time, then the order they were scheduled in;
//! 4. **call-back**: the time [`Scheduler::callback_at`] asked for (with a
//!    tick, the next multiple of the tick at or after it); tickless on a
//!    platform whose threads end their bursts ([`Platform::budgets`]),
//!    when the running thread has executed the burst asked for;
//! 5. **decide**: when anything of 2-4 happened, [`Scheduler::pick`] once,
//!    and the platform enacts the choice ([`Platform::run`],
//!    [`Platform::preempt`]);
//! 6. **sleep** until the next release or call-back notice, the next tick,
//!    or the end, whichever is first, or until a thread posts.
//!
//! This is the order of the simulator's instant (`rtlab_sim::queue`):
//! milestone, releases, call-back, then one pick. So on a platform whose
//! threads run exactly as told and take no time to switch (the virtual
//! platform of the tests), a run is the simulator's schedule job for job;
//! on real threads every difference is the platform's: how late the
//! dispatcher wakes, how long it takes to decide and to switch threads,
//! what else takes the CPU.
//!
//! **Releases are lazy.** A task's next release is one event; a release
//! that finds its task's previous job unfinished waits as a count (the
//! releases of a task are a fixed sequence, recomputed from the phase plan
//! when their turn comes), so the engine holds at most one job per task
//! and allocates nothing per job: slot `i` of the job table is task `i`'s
//! current job, the simulator's rule of a task as one thread.
//!
//! **Critical sections** go through the engine: a thread that reaches a
//! lock step posts it and waits; the engine takes or releases the resource
//! under the protocol (`none`, `ipcp`: the ceiling of the resource's
//! users, `dfp`: the deadline floor, now + the shortest relative deadline
//! of its users; Carletto & Vardanega 2017), as the simulator does, and
//! decides again.

use rtlab_model::phase::PhasePlan;
use rtlab_model::results::JobRecord;
use rtlab_model::{lock_steps, Nanos, Task};
use rtlab_sim::{Job, JobId, JobState, PolicyKind, Priority, Scheduler, System};

use crate::executor::job_log::JobLog;
use rtlab_model::policy::{LockingProtocol, MissRule};

use super::backlog::Backlog;
use super::costs::CostMeter;
use super::upcoming::Upcoming;

/// The scheduler's read-only view (a macro so that the borrows of the
/// scheduler and of the job table stay disjoint, as in the simulator).
macro_rules! view {
    ($s:ident, $now:expr) => {
        System::new($now, &$s.tasks, &$s.jobs, &$s.ready, $s.running)
    };
}

/// What the engine asks of the world it dispatches in: the real task
/// threads ([`super::threads::RealPlatform`]) or, in tests, threads that
/// run exactly as told on a virtual clock.
pub trait Platform {
    /// Time since the run's start.
    fn now(&mut self) -> Nanos;

    /// Sleeps until `until` (time since the start) or until a thread posts
    /// a completion or a lock step, whichever comes first (at once when a
    /// post came in since the turn began).
    fn wait(&mut self, until: Nanos);

    /// Called at the start of each turn, before the posts are read: a post
    /// that arrives later ends the next [`Platform::wait`] at once.
    fn arm(&mut self) {}

    /// The execution time task `task`'s thread has given its current job
    /// (its CPU clock since the job began).
    fn executed(&self, task: usize) -> Nanos;

    /// What task `task`'s thread posted about job `job` since it was last
    /// asked: the job finished (when), or reached lock step `step`.
    fn posted(&mut self, task: usize, job: u64) -> Option<Post>;

    /// Gives the CPU to task `task`'s thread for job `job` (index) whose
    /// demand is `demand`; `steps`: how many of its lock steps it may pass.
    fn run(&mut self, task: usize, job: u64, demand: Nanos, steps: usize);

    /// Lets task `task`'s thread pass its lock steps up to `steps` (it
    /// took or released the resource it waits at).
    fn pass(&mut self, task: usize, steps: usize);

    /// Takes the CPU from task `task`'s thread (it keeps its job).
    fn preempt(&mut self, task: usize);

    /// When task `task`'s thread began running after its latest
    /// [`Platform::run`], once it has.
    fn began(&mut self, task: usize) -> Option<Nanos>;

    /// True when the threads end a burst themselves: told a limit of
    /// execution ([`Platform::limit`]), a thread posts once its own CPU
    /// clock reaches it. The engine then ends the bursts the scheduler asks
    /// for (`callback_at`) at the thread's limit, not on its own timer:
    /// a timer counts from the decision, so the dispatch latency would be
    /// taken from the burst and the timer's lateness added to it.
    fn budgets(&self) -> bool {
        false
    }

    /// Task `task`'s thread posts once its current job has executed `at`
    /// in all (`None`: no limit). Only where [`Platform::budgets`].
    fn limit(&mut self, _task: usize, _at: Option<Nanos>) {}

    /// True when task `task`'s thread reached the limit last set for it.
    fn limit_reached(&mut self, _task: usize) -> bool {
        false
    }

    /// A wall-clock reading for the cost meter (ns, any origin; 0 where
    /// time does not pass while the engine works).
    fn stamp(&mut self) -> Nanos {
        Nanos::ZERO
    }

    /// The run is over: every thread stops.
    fn stop(&mut self);
}

/// What a task thread posts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Post {
    /// Its job finished at this time (since the start).
    Finished(Nanos),
    /// Its job reached lock step `step` (index into the task's steps) and
    /// waits for the engine.
    Step(usize),
}

/// Everything the engine needs besides the scheduler and the platform.
#[derive(Debug, Clone)]
pub struct EngineSetup {
    /// The tasks (the set's, then the phases'), as the scheduler was built
    /// for them.
    pub tasks: Vec<Task>,
    /// Which releases are made and each job's demand.
    pub plan: PhasePlan,
    /// Releases at or after it are not made; the run ends there.
    pub duration: Nanos,
    /// What a release that finds its task's job late does.
    pub on_miss: MissRule,
    /// Decide only at multiples of it (the ticked kernel), or at each
    /// event (`None`: tickless).
    pub tick: Option<Nanos>,
    /// The locking protocol of the critical sections.
    pub protocol: LockingProtocol,
    /// The set's index of each task, for the records (a partitioned run's
    /// dispatcher has a part of the set); empty: the identity.
    pub ids: Vec<usize>,
    /// The shortest time the dispatcher sleeps for a call-back: a burst or
    /// quantum end asked for sooner is moved to it (0 on a platform where
    /// deciding takes no time; [`MIN_SLICE`] on real threads).
    pub min_slice: Nanos,
}

/// When an event at `t` (a release, a call-back) is noticed: at once, or
/// with a tick at the next multiple of it.
fn notice_at(tick: Option<Nanos>, t: Nanos) -> Nanos {
    match tick {
        Some(tick) => tick.checked_mul(t.div_ceil(tick)).unwrap_or(Nanos::MAX),
        None => t,
    }
}

/// The least slice a call-back gives the running job on real threads: a
/// burst end asked for sooner than this after the dispatcher goes back to
/// sleep waits for it. A few decisions' worth (a turn costs 2-10 us), so
/// a job always runs between two turns; bursts are enforced to within it.
pub const MIN_SLICE: Nanos = Nanos::from_us(20);

/// Where the threads end their bursts themselves ([`Platform::budgets`]),
/// the dispatcher's timer for a burst end is only a backstop, this much
/// after the burst's end counted from when it gave the CPU back: the
/// thread's post ends the burst unless interrupts or other processes took
/// the CPU for longer than this meanwhile.
pub const BUDGET_BACKSTOP: Nanos = Nanos::from_us(500);

/// The locking protocols the engine applies itself: `none`, `ipcp` and
/// `dfp` (the dispatcher takes and releases resources; `pip`, `srp` and
/// `npp` are the simulator's only).
pub fn applies(protocol: LockingProtocol) -> bool {
    matches!(
        protocol,
        LockingProtocol::None | LockingProtocol::Ipcp | LockingProtocol::Dfp
    )
}

/// One lock step of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Execution time into the job at which it happens.
    pub at: Nanos,
    /// Resource index.
    pub resource: usize,
    /// Take (true) or release.
    pub lock: bool,
}

/// The lock steps of each task and the resources' names, from the tasks'
/// critical sections.
pub fn steps_of(tasks: &[Task]) -> (Vec<Vec<Step>>, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    let steps = tasks
        .iter()
        .map(|task| {
            lock_steps(&task.critical_sections)
                .into_iter()
                .map(|step| {
                    let resource = match names.iter().position(|n| n == step.resource) {
                        Some(r) => r,
                        None => {
                            names.push(step.resource.to_string());
                            names.len() - 1
                        }
                    };
                    Step {
                        at: step.at,
                        resource,
                        lock: step.lock,
                    }
                })
                .collect()
        })
        .collect();
    (steps, names)
}

#[derive(Debug, Clone)]
struct Resource {
    owner: Option<usize>,
    /// Tasks waiting for it, in the order they asked.
    waiters: Vec<usize>,
    /// IPCP: the highest task priority among its users.
    ceiling: Option<Priority>,
    /// DFP: the shortest relative deadline among its users.
    floor: Nanos,
}

/// Per task, what the engine tracks besides its job.
#[derive(Debug, Clone)]
struct TaskState {
    /// Releases handled while the task's job was unfinished.
    waiting: Backlog,
    /// Execution of the current job already credited to the scheduler.
    credited: Nanos,
    /// With a tick: the turn's time up to which the running job's
    /// execution is credited (the ticked kernel's accounting, in its clock).
    credited_to: Nanos,
    /// When its current job first got the CPU (the thread's own reading).
    began: Option<Nanos>,
    /// The decision time of the latest run order not yet acknowledged.
    ordered_at: Option<Nanos>,
    /// Lock steps of the current job passed so far (resources taken or
    /// released through the engine).
    steps_done: usize,
    /// Boosts saved at each lock (restored on unlock).
    boost_stack: Vec<Option<Priority>>,
    /// Resources held, in locking order.
    held: Vec<usize>,
    /// Since when it waits for a lock.
    blocked_since: Option<Nanos>,
    /// Lock wait of the current job so far.
    blocked: Nanos,
}

/// The engine: a scheduler driven on a platform's clock.
pub struct Engine<P: Platform> {
    /// The platform (public for the caller to take apart at the end).
    pub platform: P,
    tasks: Vec<Task>,
    plan: PhasePlan,
    duration: Nanos,
    on_miss: MissRule,
    tick: Option<Nanos>,
    protocol: LockingProtocol,
    scheduler: Box<dyn Scheduler>,
    jobs: Vec<Job>,
    ready: Vec<JobId>,
    running: Option<JobId>,
    state: Vec<TaskState>,
    steps: Vec<Vec<Step>>,
    resources: Vec<Resource>,
    callback: Option<Nanos>,
    /// Each task's next release.
    upcoming: Upcoming,
    last_task: Option<usize>,
    ids: Vec<usize>,
    min_slice: Nanos,
    /// The threads end the bursts (tickless on a platform with budgets).
    budgets: bool,
    /// With a tick: the tick instant the timer woke the dispatcher for,
    /// when it did (the turn's time in the ticked kernel's clock).
    woke_for: Option<Nanos>,
    /// With a tick: how late the dispatcher woke for the last tick; the
    /// ticked kernel's clock is the platform's less this (see
    /// [`Engine::clock`]).
    clock_lag: Nanos,
    /// Per task: its jobs' records and summary.
    pub logs: Vec<JobLog>,
    /// What the decisions cost and how late the threads began.
    pub meter: CostMeter,
    /// Task switches (the simulator's count: the chosen job's task differs
    /// from the last one that ran).
    pub context_switches: u64,
    /// Turns in which the scheduler was asked to pick.
    pub decisions: u64,
    /// Turns of the loop (wake-ups).
    pub wakes: u64,
    /// Run orders given to a thread that was not running.
    pub dispatches: u64,
    /// Lock steps (taking or releasing a resource) handled.
    pub lock_operations: u64,
    /// How long the run lasted (the duration, or less when stopped early).
    pub ended: Nanos,
    /// Test hook: behave as a dispatcher that hangs from this time on
    /// (spin without waking anyone), for the watchdog's tests.
    pub hang_at: Option<Nanos>,
}

impl<P: Platform> Engine<P> {
    /// An engine for `setup` driving `scheduler` (built for
    /// `setup.tasks`) on `platform`, recording into `logs` (one per task).
    pub fn new(
        setup: EngineSetup,
        scheduler: Box<dyn Scheduler>,
        platform: P,
        logs: Vec<JobLog>,
    ) -> Engine<P> {
        let n = setup.tasks.len();
        let (steps, names) = steps_of(&setup.tasks);
        let mut resources: Vec<Resource> = names
            .iter()
            .map(|_| Resource {
                owner: None,
                waiters: Vec::with_capacity(n),
                ceiling: None,
                floor: Nanos::MAX,
            })
            .collect();
        for (i, task_steps) in steps.iter().enumerate() {
            for s in task_steps {
                let r = &mut resources[s.resource];
                if let Some(p) = scheduler.task_priority(i) {
                    r.ceiling = Some(r.ceiling.map_or(p, |c| c.max(p)));
                }
                r.floor = r.floor.min(setup.tasks[i].deadline);
            }
        }
        let state = steps
            .iter()
            .map(|s| TaskState {
                waiting: Backlog::default(),
                credited: Nanos::ZERO,
                credited_to: Nanos::ZERO,
                began: None,
                ordered_at: None,
                steps_done: 0,
                boost_stack: Vec::with_capacity(s.len()),
                held: Vec::with_capacity(s.len()),
                blocked_since: None,
                blocked: Nanos::ZERO,
            })
            .collect();
        let jobs = (0..n)
            .map(|i| {
                let mut j = Job::new(i, 0, Nanos::ZERO, Nanos::ZERO, Nanos::ZERO);
                j.state = JobState::Done;
                j
            })
            .collect();
        let budgets = platform.budgets() && setup.tick.is_none();
        let mut engine = Engine {
            budgets,
            woke_for: None,
            clock_lag: Nanos::ZERO,
            platform,
            plan: setup.plan,
            duration: setup.duration,
            on_miss: setup.on_miss,
            tick: setup.tick,
            protocol: setup.protocol,
            scheduler,
            jobs,
            ready: Vec::with_capacity(n),
            running: None,
            state,
            steps,
            resources,
            callback: None,
            upcoming: Upcoming::new(n),
            last_task: None,
            logs,
            meter: CostMeter::new(),
            context_switches: 0,
            decisions: 0,
            wakes: 0,
            dispatches: 0,
            lock_operations: 0,
            ended: setup.duration,
            hang_at: None,
            min_slice: setup.min_slice,
            ids: if setup.ids.len() == n {
                setup.ids
            } else {
                (0..n).collect()
            },
            tasks: setup.tasks,
        };
        for i in 0..n {
            let first = engine.plan.first_release(i, engine.tasks[i].offset);
            engine.schedule_release(i, first);
        }
        engine
    }

    /// The tasks (the set's, then the phases').
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// The scheduler's name and report data.
    pub fn scheduler(&self) -> &dyn Scheduler {
        self.scheduler.as_ref()
    }

    /// Runs until the end of the run, or until `stop` returns true (checked
    /// every turn: a stop signal, the watchdog). Nothing here allocates:
    /// the job table, the ready list and the lock stacks are sized for the
    /// set before the first release.
    pub fn run(&mut self, stop: &dyn Fn() -> bool) {
        loop {
            self.platform.arm();
            let woke = self.platform.stamp();
            let now = self.platform.now();
            self.wakes += 1;
            if self.hang_at.is_some_and(|h| now >= h) {
                // A hung dispatcher (tests): spin until the process ends.
                loop {
                    std::hint::spin_loop();
                }
            }
            let real = now.min(self.duration);
            let at = self.clock(real);
            let stopping = stop();
            self.collect_begins();
            let mut acted = false;
            self.account(at);
            acted |= self.milestone(at, real);
            acted |= self.releases(at);
            let spent = self.budgets
                && self
                    .running
                    .is_some_and(|id| self.platform.limit_reached(id.index()));
            if spent || self.callback.is_some_and(|c| c <= at) {
                self.callback = None;
                let sys = view!(self, at);
                self.scheduler.on_callback(&sys);
                acted = true;
            }
            if acted && !stopping {
                self.decide(at, woke);
            }
            if now >= self.duration || stopping {
                self.ended = if stopping { at } else { self.duration };
                break;
            }
            let next = self.next_wake(at);
            self.platform.wait(next);
            let woke_at = self.platform.now();
            if woke_at >= next && next < self.duration {
                self.meter.wake(woke_at - next);
                if self.tick.is_some() {
                    self.woke_for = Some(next);
                }
            }
        }
        self.platform.stop();
        self.finish();
    }

    /// The scheduler's clock at platform time `real`: the same, or with a
    /// tick the ticked kernel's, which reads the tick itself at a turn the
    /// timer woke the dispatcher for however late it woke, and between two
    /// ticks runs at the platform's pace from there (`real` less that
    /// lateness). So a quantum or burst asked for at a tick ends at the
    /// tick the simulator ends it, not one tick later for the few
    /// microseconds the dispatcher woke late; the running job's execution
    /// is counted in it ([`Engine::account`]).
    fn clock(&mut self, real: Nanos) -> Nanos {
        if self.tick.is_none() {
            return real;
        }
        if let Some(tick) = self.woke_for.take() {
            self.clock_lag = real.saturating_sub(tick);
        }
        real.saturating_sub(self.clock_lag)
    }

    /// Records when threads ordered to run began (the dispatch latency).
    fn collect_begins(&mut self) {
        for i in 0..self.state.len() {
            if self.state[i].ordered_at.is_none() {
                continue;
            }
            if let Some(began) = self.platform.began(i) {
                let ordered = self.state[i].ordered_at.take().unwrap_or(began);
                self.meter.latency(began.saturating_sub(ordered));
                if self.jobs[i].state != JobState::Done {
                    self.state[i].began.get_or_insert(began);
                }
            }
        }
    }

    /// Credits the running job with what its thread executed since the
    /// last turn: read from its CPU clock, or with a tick the time since
    /// the last turn in the ticked kernel's clock (`now`), as the
    /// simulator's ticked model counts it.
    fn account(&mut self, now: Nanos) {
        let Some(id) = self.running else { return };
        let task = id.index();
        let amount = if self.tick.is_some() {
            let since = std::mem::replace(&mut self.state[task].credited_to, now);
            now.saturating_sub(since)
        } else {
            let executed = self.platform.executed(task);
            let credited = &mut self.state[task].credited;
            let amount = executed.saturating_sub(*credited);
            *credited = (*credited).max(executed);
            amount
        };
        if !amount.is_zero() {
            self.jobs[task].executed = self.jobs[task].executed.saturating_add(amount);
            self.scheduler.on_executed(id, amount);
        }
    }

    /// Handles what the running job's thread posted, at the turn's time
    /// `now` in the scheduler's clock (`real`: on the platform's). True when
    /// anything happened.
    fn milestone(&mut self, now: Nanos, real: Nanos) -> bool {
        let Some(id) = self.running else {
            return false;
        };
        let task = id.index();
        let mut acted = false;
        while let Some(post) = self.platform.posted(task, self.jobs[task].index) {
            acted = true;
            match post {
                Post::Finished(at) => {
                    self.meter.post(real.saturating_sub(at));
                    let finish = at.min(real.max(self.jobs[task].release));
                    self.complete(task, finish, now);
                    return true;
                }
                Post::Step(step) => {
                    if !self.lock_step(task, step, now) {
                        return true;
                    }
                }
            }
        }
        acted
    }

    /// Schedules task `i`'s release at `at` (a candidate, moved past
    /// suspensions by the phase plan), unless it is at or after the end.
    fn schedule_release(&mut self, i: usize, at: Nanos) {
        let period = self.tasks[i].period;
        self.upcoming
            .schedule(&self.plan, i, period, at, self.duration);
    }

    /// Handles every release noticed by `now`, in the event queue's order.
    fn releases(&mut self, now: Nanos) -> bool {
        let tick = self.tick;
        let mut acted = false;
        while let Some((i, at)) = self.upcoming.take_due(now, |t| notice_at(tick, t)) {
            acted = true;
            self.release(i, at, now);
        }
        acted
    }

    /// Task `i` releases a job at `at` (the simulator's `handle_release`).
    fn release(&mut self, i: usize, at: Nanos, now: Nanos) {
        let period = self.tasks[i].period;
        if let Some(next) = at.checked_add(period) {
            self.schedule_release(i, next);
        }
        let busy = self.jobs[i].state != JobState::Done;
        if self.on_miss == MissRule::Skip && busy && self.jobs[i].deadline <= at {
            self.logs[i].summary.record_skipped(1);
            return;
        }
        if busy {
            self.state[i].waiting.push(at);
        } else {
            self.make_ready(i, at, now);
        }
    }

    /// Task `i`'s job released at `at` becomes its current job and ready.
    fn make_ready(&mut self, i: usize, at: Nanos, now: Nanos) {
        let t = &self.tasks[i];
        let index = self.plan.job_index(i, t.period, t.offset, at);
        let demand = self.plan.demand(t.wcet, at);
        self.jobs[i] = Job::new(i, index, at, at.saturating_add(t.deadline), demand);
        // `Job::new` makes a pending job; this one's task has no earlier
        // job left, so it is ready now.
        self.jobs[i].state = JobState::Ready;
        let s = &mut self.state[i];
        s.credited = Nanos::ZERO;
        s.began = None;
        s.steps_done = 0;
        s.blocked = Nanos::ZERO;
        s.blocked_since = None;
        let id = JobId::new(i as u32);
        self.ready.push(id);
        let sys = view!(self, now);
        self.scheduler.on_release(id, &sys);
    }

    /// The running job of task `i` finished at `finish`.
    fn complete(&mut self, i: usize, finish: Nanos, now: Nanos) {
        // Everything the thread executed is the job's demand.
        let demand = self.jobs[i].demand;
        if self.jobs[i].executed < demand {
            let amount = demand - self.jobs[i].executed;
            self.jobs[i].executed = demand;
            self.scheduler.on_executed(JobId::new(i as u32), amount);
        }
        self.release_all_locks(i, now);
        self.record(i, Some(finish));
        self.retire(i, now);
    }

    /// Removes task `i`'s job and makes its next waiting release ready
    /// (the simulator's `retire`).
    fn retire(&mut self, i: usize, now: Nanos) {
        let id = JobId::new(i as u32);
        self.ready.retain(|&j| j != id);
        if self.running == Some(id) {
            self.running = None;
        }
        {
            let sys = view!(self, now);
            self.scheduler.on_complete(id, &sys);
        }
        self.jobs[i].state = JobState::Done;
        let period = self.tasks[i].period;
        if let Some(at) = self.state[i]
            .waiting
            .pop(&self.plan, i, period, self.duration)
        {
            self.make_ready(i, at, now);
        }
    }

    /// The record of task `i`'s current job, folded into its summary.
    fn record(&mut self, i: usize, finish: Option<Nanos>) {
        let j = &self.jobs[i];
        let s = &self.state[i];
        let record = JobRecord {
            start: s.began.or(j.start.filter(|_| finish.is_some())),
            finish,
            involuntary_switches: j.preemptions,
            blocked: (!self.steps[i].is_empty()).then_some(s.blocked),
            demand: Some(j.demand),
            ..JobRecord::unstarted(self.ids[i], j.index, j.release, j.deadline)
        };
        let ended = self.ended;
        self.logs[i].job(record, ended);
    }

    /// Asks the scheduler and enacts its choice (the simulator's
    /// `reschedule`).
    fn decide(&mut self, now: Nanos, woke: Nanos) {
        self.decisions += 1;
        let previous = self
            .running
            .filter(|id| self.jobs[id.index()].state == JobState::Ready);
        let choice = {
            let sys = view!(self, now);
            self.scheduler.pick(&sys)
        }
        .filter(|id| self.ready.contains(id));
        let decided = self.platform.stamp();
        let decided_at = self.platform.now().max(now);
        if choice != previous {
            if let Some(p) = previous {
                self.jobs[p.index()].preemptions += 1;
                self.platform.preempt(p.index());
            }
        }
        if let Some(c) = choice {
            let task = c.index();
            if self.last_task != Some(task) {
                self.context_switches += 1;
                self.last_task = Some(task);
            }
            let job = &mut self.jobs[task];
            job.start = job.start.or(Some(now));
            if choice != previous {
                self.dispatches += 1;
                self.state[task].credited_to = now;
                let (index, demand) = (job.index, job.demand);
                let steps = self.state[task].steps_done;
                self.state[task].ordered_at = Some(decided_at);
                self.platform.run(task, index, demand, steps);
            }
        }
        self.running = choice;
        // A call-back asks for an amount of the job's time from now: it
        // counts from when the dispatcher gives the CPU back (its own turn
        // is no part of the job's burst), and never sooner than the
        // platform's least slice (else a burst left shorter than a turn
        // would wake the dispatcher again before the job could run).
        let asked = self.scheduler.callback_at().filter(|&c| c > now);
        // Where the threads end their bursts, the chosen job's thread
        // posts once it has executed the burst asked for (on its own CPU
        // clock, from when it gets the CPU), and the timer is a backstop.
        let limited = self.budgets && choice.is_some();
        if let Some(c) = choice.filter(|_| self.budgets) {
            let task = c.index();
            let credited = self.state[task].credited;
            let limit = asked.map(|a| credited.saturating_add(a - now));
            self.platform.limit(task, limit);
        }
        let enacted = self.platform.stamp();
        self.callback = asked.map(|c| {
            // With a tick the call-back is in the ticked kernel's clock.
            let from = match self.tick {
                Some(_) => now,
                None => self.platform.now().max(now),
            };
            let mut delay = (c - now).max(self.min_slice);
            if limited {
                delay = delay.saturating_add(BUDGET_BACKSTOP);
            }
            notice_at(self.tick, from.saturating_add(delay))
        });
        self.meter.decision(
            decided.saturating_sub(woke),
            enacted.saturating_sub(decided),
        );
    }

    /// When to wake next: the next release or call-back notice, the next
    /// tick, the end.
    fn next_wake(&self, now: Nanos) -> Nanos {
        let tick = self.tick;
        let mut next = self
            .upcoming
            .first_notice(|t| notice_at(tick, t))
            .map_or(self.duration, |r| r.min(self.duration));
        if let Some(c) = self.callback {
            next = next.min(c);
        }
        if let Some(tick) = self.tick {
            let k = now.div_floor(tick).saturating_add(1);
            next = next.min(tick.checked_mul(k).unwrap_or(Nanos::MAX));
        }
        next
    }

    /// At the end: every job still in the run is recorded unfinished, and
    /// every release that waited behind it unstarted.
    fn finish(&mut self) {
        self.collect_begins();
        let ended = self.ended;
        for i in 0..self.jobs.len() {
            if self.jobs[i].state != JobState::Done {
                if let Some(since) = self.state[i].blocked_since.take() {
                    self.state[i].blocked += ended.saturating_sub(since);
                }
                self.record(i, None);
                self.jobs[i].state = JobState::Done;
            }
            let (t, id, log) = (&self.tasks[i], self.ids[i], &mut self.logs[i]);
            let blocked = (!self.steps[i].is_empty()).then_some(Nanos::ZERO);
            self.state[i].waiting.drain(
                &self.plan,
                i,
                t,
                self.duration,
                ended,
                |index, at, demand| {
                    let record = JobRecord {
                        blocked,
                        demand: Some(demand),
                        ..JobRecord::unstarted(id, index, at, at.saturating_add(t.deadline))
                    };
                    log.job(record, ended);
                },
            );
        }
    }

    // ---------------------------------------------------------------- locks

    /// Task `i`'s running job reached lock step `step`: take or release the
    /// resource and let its thread pass. False when the job now waits for
    /// the resource (it left the ready jobs).
    fn lock_step(&mut self, i: usize, step: usize, now: Nanos) -> bool {
        let Some(&op) = self.steps[i].get(step) else {
            return true;
        };
        if step != self.state[i].steps_done {
            return true;
        }
        self.lock_operations += 1;
        if op.lock && self.resources[op.resource].owner.is_some() {
            let id = JobId::new(i as u32);
            self.jobs[i].state = JobState::Blocked;
            self.state[i].blocked_since = Some(now);
            self.resources[op.resource].waiters.push(i);
            self.ready.retain(|&j| j != id);
            if self.running == Some(id) {
                self.running = None;
                self.platform.preempt(i);
            }
            let sys = view!(self, now);
            self.scheduler.on_block(id, &sys);
            return false;
        }
        self.state[i].steps_done = step + 1;
        if op.lock {
            self.grant(i, op.resource, now);
        } else {
            self.unlock(i, op.resource, now);
        }
        self.platform.pass(i, step + 1);
        true
    }

    fn grant(&mut self, i: usize, r: usize, now: Nanos) {
        self.resources[r].owner = Some(i);
        let boost = match self.protocol {
            LockingProtocol::Ipcp => self.resources[r].ceiling,
            LockingProtocol::Dfp => Some(Priority::deadline(
                now.saturating_add(self.resources[r].floor),
            )),
            _ => None,
        };
        let job = &mut self.jobs[i];
        let s = &mut self.state[i];
        s.held.push(r);
        s.boost_stack.push(job.boost);
        if let Some(b) = boost {
            job.boost = Some(job.boost.map_or(b, |old| old.max(b)));
        }
    }

    fn unlock(&mut self, i: usize, r: usize, now: Nanos) {
        let s = &mut self.state[i];
        let Some(pos) = s.held.iter().rposition(|&h| h == r) else {
            return;
        };
        s.held.remove(pos);
        self.jobs[i].boost = s.boost_stack.pop().flatten();
        self.resources[r].owner = None;
        // Hand the lock to the most urgent waiter (the first among equals).
        let mut best: Option<(usize, Priority)> = None;
        for (k, &w) in self.resources[r].waiters.iter().enumerate() {
            let p = self.effective(w);
            if best.is_none_or(|(_, bp)| p > bp) {
                best = Some((k, p));
            }
        }
        if let Some((k, _)) = best {
            let w = self.resources[r].waiters.remove(k);
            self.grant(w, r, now);
            self.state[w].steps_done += 1;
            let passed = self.state[w].steps_done;
            self.platform.pass(w, passed);
            let s = &mut self.state[w];
            if let Some(since) = s.blocked_since.take() {
                s.blocked += now.saturating_sub(since);
            }
            self.jobs[w].state = JobState::Ready;
            let id = JobId::new(w as u32);
            self.ready.push(id);
            let sys = view!(self, now);
            self.scheduler.on_unblock(id, &sys);
        }
    }

    fn release_all_locks(&mut self, i: usize, now: Nanos) {
        while let Some(&r) = self.state[i].held.last() {
            self.unlock(i, r, now);
        }
    }

    fn effective(&self, i: usize) -> Priority {
        let job = &self.jobs[i];
        let base = self.scheduler.priority(job).unwrap_or(Priority(0));
        job.boost.map_or(base, |b| b.max(base))
    }
}

/// Refuses what the engine cannot apply with a scheduler of `kind`: a
/// protocol it does not apply, IPCP without fixed priorities, DFP without
/// deadlines (the simulator's refusals).
pub fn check_lock_rule(
    rule: LockingProtocol,
    kind: PolicyKind,
    scheduler: &str,
) -> Result<(), String> {
    match (rule, kind) {
        (r, _) if !applies(r) => Err(format!(
            "the dispatcher applies none, ipcp (fixed-priority schedulers) or dfp (EDF schedulers), not {r}"
        )),
        (LockingProtocol::Ipcp, k) if k != PolicyKind::FixedPriority => Err(format!(
            "ipcp needs a fixed-priority scheduler (fp:rm, fp:dm, fp:given; with edf use dfp); {scheduler} is not one"
        )),
        (LockingProtocol::Dfp, k) if k != PolicyKind::Deadline => Err(format!(
            "dfp needs an EDF scheduler (edf, np-edf; with fp use ipcp); {scheduler} is not one"
        )),
        _ => Ok(()),
    }
}
