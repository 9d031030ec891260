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

use std::collections::VecDeque;

use rand_chacha::ChaCha8Rng;
use rtlab_model::random::{below, stream_rng};
use rtlab_model::results::{JobRecord, TaskSummary, Totals};
use rtlab_model::{Nanos, Task};

use super::ready_set::ReadySet;
use crate::config::{ExecModel, JitterModel, OnMiss, SimConfig};
use crate::engine::{earliest, BacklogStop, MAX_PENDING_JOBS};
use crate::metrics::{ProcessorMetrics, SimReport};
use crate::queue::{Class, EventQueue, Payload};
use crate::trace::{Trace, TraceRecord};

/// How a global scheduler orders ready jobs. Smaller keys run first.
#[derive(Clone, Debug)]
pub enum GlobalRule {
    /// Global EDF: earliest absolute deadline; equal deadlines go to the
    /// task declared first, even against a running job (LITMUS^RT's
    /// `edf_higher_prio`, by task id). SimSo 0.8.5's `EDF` also picks the
    /// first task among waiting jobs but keeps a running job on a tie.
    Edf,
    /// Global fixed priority: the task's level (larger is more urgent),
    /// equal levels to the task declared first.
    Fp(Vec<u64>),
    /// EDZL (Lee 1994; Cho, Ravindran, Jensen 2002): a waiting job whose
    /// laxity `d - t - remaining` reaches zero gets top priority and keeps
    /// it; otherwise global EDF with its tie rule.
    Edzl,
    /// Linux SCHED_DEADLINE on one root domain: earliest deadline, but a
    /// waiting job preempts only with a strictly earlier deadline (a
    /// running job wins ties) and equal waiting jobs go in the order they
    /// became ready (the rb-tree inserts equal keys to the right).
    LinuxDl,
}

/// The key of a job: compared as a tuple, smaller first.
type Key = (u64, u64, u64, u64);

impl GlobalRule {
    /// True when a job's key never changes while it is ready (EDF, FP):
    /// it is then computed once, when the job becomes ready.
    fn is_static(&self) -> bool {
        matches!(self, GlobalRule::Edf | GlobalRule::Fp(_))
    }

    fn key(&self, job: &MJob, running: bool) -> Key {
        let d = job.deadline.as_ns();
        let (task, index) = (job.task as u64, job.index);
        match self {
            GlobalRule::Edf => (d, task, index, 0),
            GlobalRule::Fp(levels) => (u64::MAX - levels[job.task], task, index, 0),
            GlobalRule::Edzl => (u64::from(!job.zero_laxity), d, task, index),
            GlobalRule::LinuxDl => (d, u64::from(!running), job.ready_seq, task),
        }
    }
}

/// One job in the global engine.
#[derive(Clone, Debug)]
struct MJob {
    task: usize,
    index: u64,
    release: Nanos,
    deadline: Nanos,
    demand: Nanos,
    executed: Nanos,
    start: Option<Nanos>,
    start_cpu: Option<u32>,
    last_cpu: Option<u32>,
    migrations: u64,
    preemptions: u64,
    uid: u64,
    /// Order in which jobs became ready (Linux's tie rule).
    ready_seq: u64,
    /// EDZL: laxity reached zero while it waited.
    zero_laxity: bool,
    /// The processor running it now.
    on_cpu: Option<u32>,
    done: bool,
}

impl MJob {
    fn remaining(&self) -> Nanos {
        self.demand.saturating_sub(self.executed)
    }
}

/// One processor.
#[derive(Clone, Debug, Default)]
struct Processor {
    /// The slot of the job it runs.
    job: Option<usize>,
    /// Since when that job is credited.
    run_from: Nanos,
    /// Overheads (a migration cost) occupy it until then.
    busy_until: Nanos,
    last_task: Option<usize>,
    executed_ns: u64,
    overhead_ns: u64,
}

impl Processor {
    /// When its job completes, if nothing happens before.
    fn completion(&self, jobs: &[MJob]) -> Option<Nanos> {
        let job = &jobs[self.job?];
        Some(
            self.run_from
                .max(self.busy_until)
                .saturating_add(job.remaining()),
        )
    }
}

/// A global-scheduling run of `tasks` on `m` processors.
pub struct GlobalSim {
    tasks: Vec<Task>,
    rule: GlobalRule,
    name: String,
    taskset: String,
    config: SimConfig,
    migration_cost: Nanos,
    now: Nanos,
    queue: EventQueue,
    jobs: Vec<MJob>,
    free: Vec<usize>,
    head: Vec<Option<usize>>,
    pending: Vec<VecDeque<usize>>,
    pending_jobs: usize,
    stopped: Option<BacklogStop>,
    cpus: Vec<Processor>,
    rngs: Vec<ChaCha8Rng>,
    jitter_rngs: Vec<ChaCha8Rng>,
    last_ready: Vec<Nanos>,
    summaries: Vec<TaskSummary>,
    sink: Option<super::JobSink>,
    context_switches: u64,
    events: u64,
    next_uid: u64,
    next_ready_seq: u64,
    /// Candidates of the last pick, reused (no allocation per instant).
    order: Vec<(Key, usize)>,
    /// Processors freed by preemption in the last pick, reused likewise.
    freed: Vec<(Key, usize)>,
    /// Under a static rule (EDF, FP): each ready task under the first
    /// member of its job's key ([`ReadySet`]: the m most urgent kept in
    /// order). A task has one ready job at a time, so `(key.0, task)`
    /// orders ready jobs as the whole key does.
    ready: ReadySet<u64>,
    trace: Option<Trace>,
    finished: bool,
}

impl GlobalSim {
    /// Sets up the run; `tasks` and `config` were checked by the caller.
    pub(crate) fn new(
        taskset: &str,
        tasks: Vec<Task>,
        rule: GlobalRule,
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
        let mut sim = GlobalSim {
            rngs: (0..n).map(|i| stream_rng(config.seed, i as u64)).collect(),
            jitter_rngs: (0..n)
                .map(|i| stream_rng(config.seed, crate::engine::JITTER_STREAMS | i as u64))
                .collect(),
            last_ready: vec![Nanos::ZERO; n],
            summaries: vec![TaskSummary::default(); n],
            head: vec![None; n],
            pending: vec![VecDeque::new(); n],
            cpus: vec![Processor::default(); m as usize],
            tasks,
            rule,
            name,
            taskset: taskset.to_string(),
            config,
            migration_cost,
            now: Nanos::ZERO,
            queue: EventQueue::default(),
            jobs: Vec::new(),
            free: Vec::new(),
            pending_jobs: 0,
            stopped: None,
            sink: None,
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
    pub fn on_job(&mut self, sink: impl FnMut(&JobRecord) + 'static) {
        self.sink = Some(Box::new(sink));
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        while self.step() {}
    }

    /// Why the run stopped early, if it did.
    pub fn stopped(&self) -> Option<BacklogStop> {
        self.stopped
    }

    /// The recorded trace (after the run).
    pub fn take_trace(&mut self) -> Option<Trace> {
        self.trace.take()
    }

    fn step(&mut self) -> bool {
        if self.finished {
            return false;
        }
        let t = match self.next_time() {
            Some(t) if t <= self.config.duration => t,
            _ => {
                self.finish();
                return false;
            }
        };
        self.advance(t);
        self.now = t;
        for c in 0..self.cpus.len() {
            if let Some(slot) = self.cpus[c].job {
                if self.jobs[slot].remaining().is_zero() {
                    self.events += 1;
                    self.complete(slot);
                }
            }
        }
        while let Some(payload) = self.queue.pop_at(t) {
            self.events += 1;
            match payload {
                Payload::Deadline { slot, uid } => self.handle_deadline(slot as usize, uid),
                Payload::Release { task, at } => self.handle_release(task, at),
                Payload::Tick => {}
            }
        }
        self.reschedule();
        true
    }

    fn next_time(&self) -> Option<Nanos> {
        let mut next = self.queue.peek_time();
        for cpu in &self.cpus {
            next = earliest(next, cpu.completion(&self.jobs));
        }
        if matches!(self.rule, GlobalRule::Edzl) {
            next = earliest(next, self.zero_laxity_time());
        }
        next
    }

    /// EDZL: the next instant a waiting job's laxity reaches zero.
    fn zero_laxity_time(&self) -> Option<Nanos> {
        let mut next = None;
        for slot in self.head.iter().flatten().copied() {
            let job = &self.jobs[slot];
            if job.zero_laxity || self.running_on(slot).is_some() {
                continue;
            }
            let at = job.deadline.saturating_sub(job.remaining());
            if at > self.now {
                next = earliest(next, Some(at));
            }
        }
        next
    }

    fn running_on(&self, slot: usize) -> Option<usize> {
        self.jobs[slot].on_cpu.map(|c| c as usize)
    }

    fn advance(&mut self, t: Nanos) {
        for (c, cpu) in self.cpus.iter_mut().enumerate() {
            let Some(slot) = cpu.job else { continue };
            let start = cpu.run_from.max(cpu.busy_until);
            if t > start {
                let amount = t - start;
                let job = &mut self.jobs[slot];
                job.executed += amount;
                cpu.executed_ns += amount.as_ns();
                if let Some(trace) = &mut self.trace {
                    trace.interval_on(c as u32, Some((job.task, job.index)), start, t);
                }
            }
            cpu.run_from = t;
        }
    }

    fn schedule_release(&mut self, task: usize, at: Nanos) {
        if at >= self.config.duration {
            return;
        }
        let jitter = self.tasks[task].jitter;
        let delay = match self.config.jitter {
            JitterModel::None => Nanos::ZERO,
            JitterModel::Max => jitter,
            JitterModel::Uniform if jitter.is_zero() => Nanos::ZERO,
            JitterModel::Uniform => {
                Nanos::from_ns(below(&mut self.jitter_rngs[task], jitter.as_ns() + 1))
            }
        };
        let ready = at.saturating_add(delay).max(self.last_ready[task]);
        self.last_ready[task] = ready;
        self.queue
            .push(ready, Class::Release, Payload::Release { task, at });
    }

    fn handle_release(&mut self, task: usize, at: Nanos) {
        let t = &self.tasks[task];
        let (period, deadline, offset) = (t.period, t.deadline, t.offset);
        let index = at.saturating_sub(offset).div_floor(period);
        if let Some(next) = at.checked_add(period) {
            self.schedule_release(task, next);
        }
        if self.config.on_miss == OnMiss::Skip {
            if let Some(h) = self.head[task] {
                if self.jobs[h].deadline <= at {
                    self.summaries[task].record_skipped(1);
                    return;
                }
            }
        }
        let demand = self.draw_demand(task);
        let uid = self.next_uid;
        self.next_uid += 1;
        let job = MJob {
            task,
            index,
            release: at,
            deadline: at.saturating_add(deadline),
            demand,
            executed: Nanos::ZERO,
            start: None,
            start_cpu: None,
            last_cpu: None,
            migrations: 0,
            preemptions: 0,
            uid,
            ready_seq: 0,
            zero_laxity: false,
            on_cpu: None,
            done: false,
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
        if self.config.on_miss == OnMiss::Abort {
            self.queue.push(
                abs_deadline,
                Class::Deadline,
                Payload::Deadline {
                    slot: slot as u32,
                    uid,
                },
            );
        }
        if self.head[task].is_none() {
            self.make_ready(slot);
        } else {
            self.pending[task].push_back(slot);
            self.pending_jobs += 1;
            if self.pending_jobs > MAX_PENDING_JOBS && self.stopped.is_none() {
                self.stopped = Some(BacklogStop {
                    at: self.now,
                    pending: self.pending_jobs,
                });
                self.config.duration = self.now.max(Nanos::from_ns(1));
            }
        }
    }

    fn make_ready(&mut self, slot: usize) {
        let job = &mut self.jobs[slot];
        self.head[job.task] = Some(slot);
        job.ready_seq = self.next_ready_seq;
        self.next_ready_seq += 1;
        if self.rule.is_static() {
            self.ready.insert(job.task, self.rule.key(job, false).0);
        }
    }

    fn draw_demand(&mut self, task: usize) -> Nanos {
        let t = &self.tasks[task];
        match t.bcet.filter(|&b| b < t.wcet) {
            Some(bcet) if self.config.exec == ExecModel::Uniform => {
                let span = (t.wcet - bcet).as_ns() + 1;
                bcet + Nanos::from_ns(below(&mut self.rngs[task], span))
            }
            _ => t.wcet,
        }
    }

    fn complete(&mut self, slot: usize) {
        let now = self.now;
        let (task, index, deadline) = {
            let j = &self.jobs[slot];
            (j.task, j.index, j.deadline)
        };
        self.record_job(slot, Some(now), false);
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
        if self.head[task] != Some(slot) {
            self.pending[task].retain(|&j| j != slot);
            self.pending_jobs -= 1;
            self.jobs[slot].done = true;
            self.free.push(slot);
            return;
        }
        self.retire(slot);
    }

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
            demand: Some(j.demand),
        };
        self.summaries[j.task].record(&record, self.config.duration);
        if let Some(sink) = &mut self.sink {
            sink(&record);
        }
    }

    fn retire(&mut self, slot: usize) {
        let task = self.jobs[slot].task;
        if let Some(c) = self.jobs[slot].on_cpu.take() {
            self.cpus[c as usize].job = None;
        }
        self.jobs[slot].done = true;
        self.free.push(slot);
        self.head[task] = None;
        self.ready.remove(task);
        if let Some(next) = self.pending[task].pop_front() {
            self.pending_jobs -= 1;
            self.make_ready(next);
        }
    }

    /// Picks the m most urgent ready jobs and places them on processors.
    fn reschedule(&mut self) {
        let m = self.cpus.len();
        let now = self.now;
        let edzl = matches!(self.rule, GlobalRule::Edzl);
        let mut order = std::mem::take(&mut self.order);
        let mut freed = std::mem::take(&mut self.freed);
        order.clear();
        freed.clear();
        let chosen;
        if self.rule.is_static() {
            // The m most urgent, in order, as the ready set keeps them (only
            // their slots are read below: no key is built); a running job
            // is preempted when it is no longer among them.
            for &(_, task) in self.ready.top() {
                if let Some(slot) = self.head[task] {
                    order.push(((0, 0, 0, 0), slot));
                }
            }
            chosen = order.len();
            for c in 0..m {
                let Some(slot) = self.cpus[c].job else {
                    continue;
                };
                let job = &mut self.jobs[slot];
                if self.ready.is_top(job.task) {
                    continue;
                }
                job.on_cpu = None;
                job.preemptions += 1;
                self.cpus[c].job = None;
                freed.push((self.rule.key(&self.jobs[slot], false), c));
            }
        } else {
            for task in 0..self.head.len() {
                let Some(slot) = self.head[task] else {
                    continue;
                };
                let job = &mut self.jobs[slot];
                let running = job.on_cpu.is_some();
                if edzl && !running && job.deadline.saturating_sub(job.remaining()) <= now {
                    job.zero_laxity = true;
                }
                order.push((self.rule.key(job, running), slot));
            }
            // The m most urgent first, in order; the rest in any order.
            if order.len() > m {
                order.select_nth_unstable(m);
            }
            chosen = order.len().min(m);
            order[..chosen].sort_unstable();
            // Preempt the running jobs that were not chosen.
            for &(key, slot) in &order[chosen..] {
                if let Some(c) = self.jobs[slot].on_cpu.take() {
                    self.jobs[slot].preemptions += 1;
                    self.cpus[c as usize].job = None;
                    freed.push((key, c as usize));
                }
            }
        }
        // The preempted jobs' processors go least urgent job first.
        freed.sort_unstable_by(|a, b| b.cmp(a));
        for &(_, slot) in &order[..chosen] {
            if self.jobs[slot].on_cpu.is_some() {
                continue;
            }
            let idle = |c: usize| self.cpus[c].job.is_none();
            let last = self.jobs[slot].last_cpu.map(|c| c as usize);
            let cpu = last
                .filter(|&c| idle(c))
                .or_else(|| (0..m).find(|&c| idle(c) && !freed.iter().any(|f| f.1 == c)))
                .or_else(|| freed.iter().map(|f| f.1).find(|&c| idle(c)));
            // At most m jobs are chosen and every processor not keeping
            // its job is idle or freed, so one is always found.
            if let Some(cpu) = cpu {
                self.dispatch(slot, cpu);
            }
        }
        self.order = order;
        self.freed = freed;
    }

    fn dispatch(&mut self, slot: usize, c: usize) {
        let now = self.now;
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
        cpu.job = Some(slot);
        cpu.run_from = now;
        job.on_cpu = Some(c as u32);
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
        let tasks: Vec<_> = self
            .summaries
            .iter()
            .zip(&self.tasks)
            .map(|(s, t)| s.metrics(&t.name))
            .collect();
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
