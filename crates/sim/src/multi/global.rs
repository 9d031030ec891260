//! The global engine: one ready set, m identical processors.
//!
//! At every scheduling point (a release, a completion, an abort, an EDZL
//! zero-laxity instant) the m highest-priority ready jobs run
//! ([`GlobalRule::key`] orders them). A selected job that was running
//! keeps its processor (no needless migration); each newly selected job,
//! in priority order, takes the processor it last ran on if that one is
//! available, else the lowest-numbered idle processor, else the processor
//! of the lowest-priority job being preempted. A job dispatched on
//! another processor than the one it last ran on counts a migration and
//! costs the overheads' `migration` on the destination processor (the
//! processor is busy, the job does not progress).
//!
//! Releases, jitter, execution-time draws, the overrun rules and the
//! event tie-break at one instant are the uniprocessor engine's
//! ([`crate::engine`], [`crate::queue`]); locks, ticks, per-event kernel
//! costs and overload phases are refused on m > 1 ([`super::check`]).

use rtlab_model::results::{JobRecord, JobSink, Totals};
use rtlab_model::{Nanos, Task};

use super::decision;
use super::ready_set::ReadySet;
use super::releases::Releases;
use crate::config::{MissRule, SimConfig};
use crate::engine::{earliest, BacklogStop};
use crate::lifecycle::{Backlog, Draws, Ledger};
use crate::metrics::{ProcessorMetrics, SimReport};
use crate::queue::{Class, EventQueue, Payload};
use crate::trace::{Trace, TraceRecord};

pub use super::rule::{GlobalRule, Key};

/// One job in the global engine, as the rules ([`GlobalRule`]) see it.
#[derive(Clone, Debug)]
pub struct GlobalJob {
    /// Its task (declaration order).
    pub task: usize,
    /// Which release of its task it is.
    pub index: u64,
    /// Release time.
    pub release: Nanos,
    /// Absolute deadline.
    pub deadline: Nanos,
    /// Execution time it needs.
    pub demand: Nanos,
    /// Execution time received so far (current at every scheduling point).
    pub executed: Nanos,
    start: Option<Nanos>,
    start_cpu: Option<u32>,
    last_cpu: Option<u32>,
    migrations: u64,
    preemptions: u64,
    uid: u64,
    /// Order in which jobs became ready (Linux's tie rule).
    pub ready_seq: u64,
    /// EDZL: laxity reached zero while it waited.
    pub zero_laxity: bool,
    /// The processor running it now.
    on_cpu: Option<u32>,
    done: bool,
}

impl GlobalJob {
    /// A job just released, as a rule sees it (another engine's job: the
    /// dispatcher's, [`super::decision`]).
    pub fn new(
        task: usize,
        index: u64,
        release: Nanos,
        deadline: Nanos,
        demand: Nanos,
    ) -> GlobalJob {
        GlobalJob {
            task,
            index,
            release,
            deadline,
            demand,
            executed: Nanos::ZERO,
            start: None,
            start_cpu: None,
            last_cpu: None,
            migrations: 0,
            preemptions: 0,
            uid: 0,
            ready_seq: 0,
            zero_laxity: false,
            on_cpu: None,
            done: false,
        }
    }

    /// Execution time still needed.
    pub fn remaining(&self) -> Nanos {
        self.demand.saturating_sub(self.executed)
    }
}

/// Records that processor `c` ran `job` from `start` to `t` (out of the
/// busiest path: only a traced run does).
#[cold]
fn trace_interval(trace: &mut Trace, c: usize, job: &GlobalJob, start: Nanos, t: Nanos) {
    trace.interval_on(c as u32, Some((job.task, job.index)), start, t);
}

/// One processor.
#[derive(Clone, Debug, Default)]
struct Processor {
    /// The slot of the job it runs.
    job: Option<usize>,
    /// Since when that job is credited (its execution up to here is in
    /// [`GlobalJob::executed`]).
    run_from: Nanos,
    /// When its job completes if nothing happens before (`None`: no job,
    /// or beyond [`Nanos::MAX`]); set at dispatch, it stays right while
    /// the job runs, however often the job is credited.
    completion: Option<Nanos>,
    /// From when its job's remaining work is zero: the completion, or the
    /// dispatch instant of a job that needs nothing more.
    due: Option<Nanos>,
    /// Overheads (a migration cost) occupy it until then.
    busy_until: Nanos,
    last_task: Option<usize>,
    executed_ns: u64,
    overhead_ns: u64,
}

impl Processor {
    /// Runs `job` (its execution credited up to `now`) from `now`: the
    /// completion is `max(now, busy_until) + remaining`, `None` when that
    /// lies beyond the last representable instant ([`Nanos::MAX`]): a
    /// saturated completion at `Nanos::MAX` would be handled without the
    /// job completing, then found again, forever (as the uniprocessor
    /// engine's milestone, issue 39).
    fn run(&mut self, slot: usize, job: &GlobalJob, now: Nanos) {
        let remaining = job.remaining();
        self.job = Some(slot);
        self.run_from = now;
        self.completion = now.max(self.busy_until).checked_add(remaining);
        self.due = if remaining.is_zero() {
            Some(now)
        } else {
            self.completion
        };
    }

    /// Leaves its job (credited first).
    fn clear(&mut self) {
        self.job = None;
        self.completion = None;
        self.due = None;
    }
}

/// A global-scheduling run of `tasks` on `m` processors.
pub struct GlobalSim {
    tasks: Vec<Task>,
    rule: Box<dyn GlobalRule>,
    name: String,
    taskset: String,
    config: SimConfig,
    migration_cost: Nanos,
    now: Nanos,
    /// Deadline checks (`--on-miss abort`).
    queue: EventQueue,
    /// Releases, handled after the deadline checks of their instant.
    releases: Releases,
    jobs: Vec<GlobalJob>,
    free: Vec<usize>,
    /// Each task's ready job and the jobs waiting behind it.
    backlog: Backlog<usize>,
    cpus: Vec<Processor>,
    /// Per processor: its [`Processor::completion`] and
    /// [`Processor::due`] in nanoseconds, `u64::MAX` for `None`
    /// ([`GlobalSim::set_cpu_times`] keeps them).
    cpu_times: Vec<[u64; 2]>,
    /// The least of `cpu_times`, each column: kept as a processor's times
    /// change (scanned again only when the one that held a least changes)
    /// instead of scanned at every instant ([`GlobalSim::next_time`]).
    least_cpu_times: [u64; 2],
    draws: Draws,
    ledger: Ledger,
    context_switches: u64,
    events: u64,
    next_uid: u64,
    next_ready_seq: u64,
    /// Candidates of the last pick, reused (no allocation per instant).
    order: Vec<(Key, usize)>,
    /// Processors freed by preemption in the last pick, reused likewise.
    freed: Vec<(Key, usize)>,
    /// Under a static rule (EDF, FP): each ready task under its job's
    /// urgency, the key's first element, ties to the lower task as the
    /// whole key orders them ([`GlobalRule::is_static`]; [`ReadySet`]: the
    /// m most urgent kept in order, the rest in an indexed heap), so a
    /// decision reads them without collecting and sorting every ready job.
    ready: ReadySet<u64>,
    /// Bit `c` set when processor `c` runs no job (kept when m <= 64,
    /// [`GlobalSim::few_cpus`]): a newly chosen job finds its processor
    /// with a few bit operations ([`decision::processor_for_mask`]).
    idle: u64,
    /// m <= 64: [`GlobalSim::idle`] is kept.
    few_cpus: bool,
    /// The rule's [`GlobalRule::is_static`], read once.
    static_rule: bool,
    /// The rule's [`GlobalRule::watches_time`], read once.
    watches_time: bool,
    /// Running jobs are credited only when they leave a processor (a
    /// completion, a preemption, an abort, the end) instead of at every
    /// instant: under a static rule with no trace nothing reads a running
    /// job's execution in between (a dynamic rule's key does; a trace
    /// records one interval per instant).
    lazy: bool,
    trace: Option<Trace>,
    finished: bool,
}

impl GlobalSim {
    /// Sets up the run; `tasks` and `config` were checked by the caller.
    pub(crate) fn new(
        taskset: &str,
        tasks: Vec<Task>,
        rule: Box<dyn GlobalRule>,
        name: String,
        m: u32,
        config: SimConfig,
    ) -> GlobalSim {
        let n = tasks.len();
        let migration_cost = config
            .overheads
            .as_ref()
            .map_or(Nanos::ZERO, |o| o.migration.at(n));
        let trace = config.trace.map(|w| {
            let mut t = Trace::new(w, tasks.iter().map(|t| t.name.clone()).collect());
            t.processors = m;
            t.per_processor = true;
            t
        });
        let static_rule = rule.is_static();
        let watches_time = rule.watches_time();
        let lazy = static_rule && trace.is_none();
        let mut sim = GlobalSim {
            static_rule,
            watches_time,
            lazy,
            idle: u64::MAX.checked_shr(64 - m.min(64)).unwrap_or(0),
            few_cpus: m <= 64,
            draws: Draws::new(config.seed, n),
            ledger: Ledger::new(n),
            backlog: Backlog::new(n),
            cpus: vec![Processor::default(); m as usize],
            cpu_times: vec![[u64::MAX; 2]; m as usize],
            least_cpu_times: [u64::MAX; 2],
            tasks,
            rule,
            name,
            taskset: taskset.to_string(),
            config,
            migration_cost,
            now: Nanos::ZERO,
            queue: EventQueue::default(),
            releases: Releases::new(n),
            jobs: Vec::new(),
            free: Vec::new(),
            context_switches: 0,
            events: 0,
            next_uid: 0,
            next_ready_seq: 0,
            order: Vec::with_capacity(n),
            freed: Vec::with_capacity(m as usize),
            ready: ReadySet::new(n, m as usize),
            trace,
            finished: false,
        };
        for i in 0..n {
            let first = sim.tasks[i].offset;
            sim.schedule_release(i, first);
        }
        sim
    }

    /// Sends every job record to `sink` as the job leaves the run.
    pub fn with_sink(&mut self, sink: Box<dyn JobSink>) {
        self.ledger.set_sink(sink);
    }

    /// Finishes the run and ends the job sink's output; its first error.
    pub fn finish_jobs(&mut self) -> std::io::Result<()> {
        self.run();
        self.ledger.finish()
    }

    /// Runs to the end.
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
                // The report is of the part run: credit the running jobs.
                self.advance(self.now);
                break;
            }
        }
    }

    /// Why the run stopped early, if it did.
    pub fn stopped(&self) -> Option<BacklogStop> {
        self.backlog.stopped()
    }

    /// The recorded trace (after the run).
    pub fn take_trace(&mut self) -> Option<Trace> {
        self.trace.take()
    }

    fn step(&mut self) -> bool {
        if self.finished {
            return false;
        }
        let (next, first_due) = self.next_time();
        let t = match next {
            Some(t) if t <= self.config.duration => t,
            _ => {
                self.finish();
                return false;
            }
        };
        if !self.lazy {
            self.advance(t);
        }
        self.now = t;
        if first_due.is_some_and(|due| due <= t) {
            for c in 0..self.cpus.len() {
                // The integer is a filter; the option is exact (it tells
                // `None` from `Nanos::MAX`).
                if self.cpu_times[c][1] <= t.as_ns() && self.cpus[c].due.is_some_and(|due| due <= t)
                {
                    if let Some(slot) = self.cpus[c].job {
                        self.events += 1;
                        self.complete(slot);
                    }
                }
            }
        }
        // The events of `t`: deadline checks, then releases (a deadline
        // check scheduled at `t` meanwhile goes before the releases left).
        loop {
            if let Some(payload) = self.queue.pop_at(t) {
                self.events += 1;
                if let Payload::Deadline { slot, uid } = payload {
                    self.handle_deadline(slot as usize, uid);
                }
            } else if let Some((task, at, index)) = self.releases.first_at(t) {
                self.events += 1;
                self.handle_release(task, at, index);
            } else {
                break;
            }
        }
        self.reschedule();
        true
    }

    /// The next instant something happens, and the earliest instant a
    /// processor's job has no work left ([`Processor::due`]; when it is
    /// later than the next instant, no job completes there).
    fn next_time(&self) -> (Option<Nanos>, Option<Nanos>) {
        // As plain integers, `None` as `u64::MAX`: the least is exact
        // when it is below `u64::MAX` (then a due instant of `None` or of
        // `Nanos::MAX` is alike: later than the next instant). Else, the
        // same with the options, which tell `None` from `Nanos::MAX`.
        let ns = |t: Option<Nanos>| t.map_or(u64::MAX, Nanos::as_ns);
        let mut next = ns(self.queue.peek_time()).min(ns(self.releases.peek_time()));
        let [next_completion, first_due] = self.least_cpu_times;
        next = next.min(next_completion);
        if self.watches_time {
            next = next.min(ns(self.change_time()));
        }
        if next < u64::MAX {
            let first_due = (first_due < u64::MAX).then(|| Nanos::from_ns(first_due));
            return (Some(Nanos::from_ns(next)), first_due);
        }
        let mut next = earliest(self.queue.peek_time(), self.releases.peek_time());
        let mut first_due = None;
        for cpu in &self.cpus {
            next = earliest(next, cpu.completion);
            first_due = earliest(first_due, cpu.due);
        }
        if self.watches_time {
            next = earliest(next, self.change_time());
        }
        (next, first_due)
    }

    /// The next instant a ready job's key changes with no event (EDZL: a
    /// waiting job's laxity reaches zero).
    fn change_time(&self) -> Option<Nanos> {
        let mut next = None;
        for slot in self.backlog.heads() {
            let job = &self.jobs[slot];
            let at = self.rule.change_at(job, job.on_cpu.is_some(), self.now);
            next = earliest(next, at.filter(|&at| at > self.now));
        }
        next
    }

    /// Credits every running job up to `t`.
    fn advance(&mut self, t: Nanos) {
        for c in 0..self.cpus.len() {
            self.credit(c, t);
        }
    }

    /// Credits processor `c`'s job with its execution from `run_from`
    /// (or the end of a migration's cost) to `t`. Crediting at every
    /// instant or once when the job leaves gives the same sums.
    #[inline(always)]
    fn credit(&mut self, c: usize, t: Nanos) {
        let cpu = &mut self.cpus[c];
        let Some(slot) = cpu.job else { return };
        let start = cpu.run_from.max(cpu.busy_until);
        if t > start {
            let amount = t - start;
            let job = &mut self.jobs[slot];
            job.executed += amount;
            cpu.executed_ns += amount.as_ns();
            if let Some(trace) = &mut self.trace {
                trace_interval(trace, c, job, start, t);
            }
        }
        cpu.run_from = t;
    }

    /// The instant `task`'s release at `at` is handled (after its
    /// jitter), when it falls within the run.
    fn release_time(&mut self, task: usize, at: Nanos) -> Option<Nanos> {
        if at >= self.config.duration {
            return None;
        }
        Some(
            self.draws
                .ready_at(task, &self.tasks[task], at, self.config.jitter),
        )
    }

    fn schedule_release(&mut self, task: usize, at: Nanos) {
        if let Some(time) = self.release_time(task, at) {
            self.releases.push(time, task, at);
        }
    }

    /// The first pending release, `task`'s `index`-th at `at` (its offset
    /// plus `index` periods): replaced in the queue by the task's next one.
    fn handle_release(&mut self, task: usize, at: Nanos, index: u64) {
        let t = &self.tasks[task];
        let (period, deadline) = (t.period, t.deadline);
        debug_assert_eq!(index, at.saturating_sub(t.offset).div_floor(period));
        let next = at.checked_add(period);
        match next.and_then(|next| Some((self.release_time(task, next)?, next))) {
            Some((time, next)) => self.releases.replace_first(time, next),
            None => self.releases.remove_first(),
        }
        if self.config.on_miss == MissRule::Skip {
            if let Some(h) = self.backlog.head(task) {
                if self.jobs[h].deadline <= at {
                    self.ledger.skipped(task);
                    return;
                }
            }
        }
        let demand = self.draw_demand(task);
        let uid = self.next_uid;
        self.next_uid += 1;
        let job = GlobalJob {
            uid,
            ..GlobalJob::new(task, index, at, at.saturating_add(deadline), demand)
        };
        let abs_deadline = job.deadline;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.jobs[slot] = job;
                slot
            }
            None => {
                self.jobs.push(job);
                self.jobs.len() - 1
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
                Payload::Deadline {
                    slot: slot as u32,
                    uid,
                },
            );
        }
        let was_stopped = self.backlog.stopped().is_some();
        if self.backlog.arrive(task, slot, self.now) {
            self.make_ready(slot);
        } else if !was_stopped && self.backlog.stopped().is_some() {
            self.config.duration = self.now.max(Nanos::from_ns(1));
        }
    }

    fn make_ready(&mut self, slot: usize) {
        let job = &mut self.jobs[slot];
        self.backlog.set_head(job.task, slot);
        job.ready_seq = self.next_ready_seq;
        self.next_ready_seq += 1;
        if self.static_rule {
            let key = self.rule.key(job, false);
            debug_assert_eq!(
                key.1, job.task as u64,
                "a static rule's key is (urgency, task, ..)"
            );
            self.ready.insert(job.task, key.0);
        }
    }

    fn draw_demand(&mut self, task: usize) -> Nanos {
        self.draws.demand(task, &self.tasks[task], self.config.exec)
    }

    fn complete(&mut self, slot: usize) {
        let now = self.now;
        let j = &self.jobs[slot];
        let (task, index, deadline) = (j.task, j.index, j.deadline);
        match j.start {
            // A completed job started; with no sink nothing reads its
            // record, the summary takes the few figures it needs.
            Some(start) if !self.ledger.has_sink() => self
                .ledger
                .summary_without_sink(task)
                .record_completed(j.release, deadline, start, now, j.preemptions, j.migrations),
            _ => self.record_job(slot, Some(now), false),
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
        self.retire(slot);
    }

    fn handle_deadline(&mut self, slot: usize, uid: u64) {
        let Some(job) = self.jobs.get(slot) else {
            return;
        };
        if job.uid != uid || job.done {
            return;
        }
        let (task, index, deadline) = (job.task, job.index, job.deadline);
        self.record_job(slot, None, true);
        if let Some(trace) = &mut self.trace {
            trace.point(TraceRecord::Miss {
                task,
                job: index,
                at: deadline,
            });
        }
        if self.backlog.head(task) != Some(slot) {
            self.backlog.drop_waiting(task, slot);
            self.jobs[slot].done = true;
            self.free.push(slot);
            return;
        }
        self.retire(slot);
    }

    #[inline]
    fn record_job(&mut self, slot: usize, finish: Option<Nanos>, aborted: bool) {
        let j = &self.jobs[slot];
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
            cpu: finish.and(j.last_cpu),
            start_cpu: j.start_cpu,
            migrations: j.migrations,
            blocked: None,
            remote_blocked: None,
            local_blocked: None,
            demand: Some(j.demand),
        };
        self.ledger.record(&record, self.config.duration);
    }

    #[inline(always)]
    fn retire(&mut self, slot: usize) {
        let task = self.jobs[slot].task;
        if let Some(c) = self.jobs[slot].on_cpu.take() {
            self.credit(c as usize, self.now);
            self.vacate(c as usize);
        }
        self.jobs[slot].done = true;
        self.free.push(slot);
        self.ready.remove(task);
        if let Some(next) = self.backlog.retire(task) {
            self.make_ready(next);
        }
    }

    /// Picks the m most urgent ready jobs and places them on processors.
    fn reschedule(&mut self) {
        if self.static_rule {
            self.reschedule_static();
        } else {
            self.reschedule_dynamic();
        }
    }

    /// Under a static rule: the m most urgent, in order, as the ready set
    /// keeps them; a running job is preempted when it is no longer among
    /// them. When they are those placed at the last decision, every one of
    /// them runs and nothing else does: nothing to do.
    fn reschedule_static(&mut self) {
        if !self.ready.changed() {
            return;
        }
        // Only a job pushed out of the m most urgent by a newer one can
        // have to leave its processor: a running job is among them and
        // leaves them otherwise only when it completes or is aborted.
        if self.ready.evicted().is_empty() {
            self.place_entered(&[]);
        } else {
            let mut freed = std::mem::take(&mut self.freed);
            freed.clear();
            self.preempt_evicted(&mut freed);
            self.place_entered(&freed);
            self.freed = freed;
        }
        self.ready.take_changed();
    }

    /// Preempts the running jobs an insertion pushed out of the m most
    /// urgent; their processors go to `freed`, least urgent job first.
    fn preempt_evicted(&mut self, freed: &mut Vec<(Key, usize)>) {
        let now = self.now;
        for i in 0..self.ready.evicted().len() {
            let task = self.ready.evicted()[i];
            if self.ready.is_top(task) {
                continue;
            }
            let Some(slot) = self.backlog.head(task) else {
                continue;
            };
            let Some(c) = self.jobs[slot].on_cpu.map(|c| c as usize) else {
                continue;
            };
            self.credit(c, now);
            self.vacate(c);
            let job = &mut self.jobs[slot];
            job.on_cpu = None;
            job.preemptions += 1;
            freed.push((self.rule.key(job, false), c));
        }
        if freed.len() > 1 {
            decision::least_urgent_first(freed);
        }
    }

    /// Only a job that entered the m most urgent since the last decision
    /// can be waiting (every one of them was placed then); none when none
    /// entered (a job left them and none came up), one such is placed at
    /// once, several in priority order.
    #[inline(always)]
    fn place_entered(&mut self, freed: &[(Key, usize)]) {
        match *self.ready.entered() {
            [] => {}
            [task] => self.place_waiting(task, freed),
            _ => {
                for i in 0..self.ready.top().len() {
                    self.place_waiting(self.ready.top()[i].1, freed);
                }
            }
        }
    }

    /// Places `task`'s ready job if it is among the m most urgent and not
    /// running.
    #[inline]
    fn place_waiting(&mut self, task: usize, freed: &[(Key, usize)]) {
        if !self.ready.is_top(task) {
            return;
        }
        if let Some(slot) = self.backlog.head(task) {
            if self.jobs[slot].on_cpu.is_none() {
                self.place(slot, freed);
            }
        }
    }

    /// Under a dynamic rule: every ready job's key built anew.
    fn reschedule_dynamic(&mut self) {
        let m = self.cpus.len();
        let now = self.now;
        let mut order = std::mem::take(&mut self.order);
        let mut freed = std::mem::take(&mut self.freed);
        order.clear();
        freed.clear();
        for task in 0..self.tasks.len() {
            let Some(slot) = self.backlog.head(task) else {
                continue;
            };
            let job = &mut self.jobs[slot];
            let running = job.on_cpu.is_some();
            self.rule.update(job, running, now);
            order.push((self.rule.key(job, running), slot));
        }
        // The m most urgent first, in order; the rest in any order.
        let chosen = decision::choose(&mut order, m);
        // Preempt the running jobs that were not chosen.
        for &(key, slot) in &order[chosen..] {
            if let Some(c) = self.jobs[slot].on_cpu.take() {
                self.jobs[slot].preemptions += 1;
                self.vacate(c as usize);
                freed.push((key, c as usize));
            }
        }
        decision::least_urgent_first(&mut freed);
        for &(_, slot) in &order[..chosen] {
            if self.jobs[slot].on_cpu.is_none() {
                self.place(slot, &freed);
            }
        }
        self.order = order;
        self.freed = freed;
    }

    /// Dispatches a newly chosen job (chosen in priority order): on the
    /// processor it last ran on if that one is idle, else on the
    /// lowest-numbered idle processor no preemption freed, else on the
    /// processor of the least urgent preempted job (`freed`: the preempted
    /// jobs' keys and processors, least urgent first).
    #[inline(always)]
    fn place(&mut self, slot: usize, freed: &[(Key, usize)]) {
        let last = self.jobs[slot].last_cpu.map(|c| c as usize);
        let cpu = if self.few_cpus {
            decision::processor_for_mask(last, self.idle, freed)
        } else {
            let idle = |c: usize| self.cpus[c].job.is_none();
            decision::processor_for(last, self.cpus.len(), idle, freed)
        };
        // At most m jobs are chosen and every processor not keeping its
        // job is idle or freed, so one is always found.
        if let Some(cpu) = cpu {
            self.dispatch(slot, cpu);
        }
    }

    /// Processor `c` leaves its job (credited first).
    fn vacate(&mut self, c: usize) {
        self.cpus[c].clear();
        self.set_cpu_times(c, [u64::MAX; 2]);
        if c < 64 {
            self.idle |= 1 << c;
        }
    }

    #[inline(always)]
    fn dispatch(&mut self, slot: usize, c: usize) {
        let now = self.now;
        if c < 64 {
            self.idle &= !(1 << c);
        }
        let job = &mut self.jobs[slot];
        let cpu = &mut self.cpus[c];
        if job.last_cpu.is_some_and(|l| l as usize != c) {
            job.migrations += 1;
            if let Some(trace) = &mut self.trace {
                trace.migration(
                    job.task,
                    job.index,
                    job.last_cpu.unwrap_or(0),
                    c as u32,
                    now,
                );
            }
            if !self.migration_cost.is_zero() {
                let start = cpu.busy_until.max(now);
                cpu.busy_until = start.saturating_add(self.migration_cost);
                cpu.overhead_ns = cpu.overhead_ns.saturating_add(self.migration_cost.as_ns());
                if let Some(trace) = &mut self.trace {
                    trace.interval_on(c as u32, None, start, cpu.busy_until);
                }
            }
        }
        job.start = job.start.or(Some(now));
        job.start_cpu = job.start_cpu.or(Some(c as u32));
        job.last_cpu = Some(c as u32);
        if cpu.last_task != Some(job.task) {
            self.context_switches += 1;
            cpu.last_task = Some(job.task);
        }
        cpu.run(slot, job, now);
        let ns = |t: Option<Nanos>| t.map_or(u64::MAX, Nanos::as_ns);
        let times = [ns(cpu.completion), ns(cpu.due)];
        job.on_cpu = Some(c as u32);
        self.set_cpu_times(c, times);
    }

    /// Processor `c`'s completion and due instants are now `times`
    /// ([`GlobalSim::cpu_times`]); their least kept.
    #[inline]
    fn set_cpu_times(&mut self, c: usize, times: [u64; 2]) {
        let old = std::mem::replace(&mut self.cpu_times[c], times);
        let least = &mut self.least_cpu_times;
        if old[0] == least[0] || old[1] == least[1] {
            // A least may have gone: found again.
            *least = [u64::MAX; 2];
            for &[completion, due] in &self.cpu_times {
                least[0] = least[0].min(completion);
                least[1] = least[1].min(due);
            }
        } else {
            least[0] = least[0].min(times[0]);
            least[1] = least[1].min(times[1]);
        }
    }

    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let end = self.config.duration;
        // `now <= end`; with `now == end` this credits what a lazy run
        // has not yet.
        self.advance(end);
        self.now = end;
        for slot in 0..self.jobs.len() {
            let job = &self.jobs[slot];
            if job.done {
                continue;
            }
            let (task, index, deadline) = (job.task, job.index, job.deadline);
            self.record_job(slot, None, false);
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

    /// The report (runs to the end first).
    pub fn report(&mut self) -> SimReport {
        self.run();
        let tasks = self.ledger.metrics(&self.tasks);
        let totals = Totals::of(&tasks);
        let duration = self.config.duration;
        let processors: Vec<ProcessorMetrics> = self
            .cpus
            .iter()
            .enumerate()
            .map(|(c, p)| ProcessorMetrics {
                cpu: c as u32,
                executed_ns: p.executed_ns,
                overhead_ns: p.overhead_ns,
                utilization: p.executed_ns as f64 / duration.as_ns() as f64,
            })
            .collect();
        let busy: u64 = self
            .cpus
            .iter()
            .map(|p| p.executed_ns.saturating_add(p.overhead_ns))
            .sum();
        let overhead_ns = self.cpus.iter().map(|p| p.overhead_ns).sum();
        SimReport {
            throttling: self
                .config
                .overheads
                .as_ref()
                .filter(|o| !o.throttling.is_none())
                .map(|_| crate::kernel_servers::ThrottlingReport {
                    model: "not modelled under global scheduling: RT throttling and the fair server are modelled per CPU for partitioned and uniprocessor fixed-priority runs".into(),
                    ..Default::default()
                }),
            scheduler: self.name.clone(),
            taskset: self.taskset.clone(),
            duration_ns: duration.as_ns(),
            protocol: self.config.protocol.name().into(),
            on_miss: self.config.on_miss.name().into(),
            tick_ns: None,
            timer: None,
            periodic_tick_ns: None,
            seed: self.config.seed,
            jitter: self.config.jitter.to_string(),
            totals,
            context_switches: self.context_switches,
            context_switches_per_s: self.context_switches as f64 / duration.as_secs_f64(),
            overhead_ns,
            idle_ns: (duration.as_ns())
                .saturating_mul(self.cpus.len() as u64)
                .saturating_sub(busy),
            first_miss_ns: totals.first_miss_ns,
            events: self.events,
            migrations: tasks.iter().map(|t| t.migrations).sum(),
            tasks,
            scheduler_data: None,
            deadlock: None,
            processors,
        }
    }
}
