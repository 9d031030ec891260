//! The engine of multiprocessor locking runs: every processor at once,
//! jobs placed on processors by the protocol, one effective priority per
//! placed job.
//!
//! # One step
//!
//! 1. The next instant `t` is the earliest of the event queue (releases,
//!    deadline checks) and every executing job's next lock operation or
//!    completion.
//! 2. Up to `t`, executing jobs progress, spinning jobs hold their
//!    processors, and every pending job's blocking is counted from the
//!    placement of `[now, t)` ([`LockingSim::account`]).
//! 3. Deadline checks and releases of `t` are handled.
//! 4. Settle: every scheduling domain (a processor under a partitioned
//!    protocol, a cluster under the OMLP) picks the jobs placed on it with
//!    the most urgent effective keys, as many as it has processors
//!    (running jobs keep their processor; others take the one they last
//!    ran on when free, else the lowest-numbered free one); MrsP's helping
//!    is applied; then every running job whose next lock operation falls
//!    at its current progress does it (which may suspend it, make it spin,
//!    move it to an agent, grant a waiter, complete it) and the domains
//!    pick again, until no operation is due.
//!
//! Keys are compared as tuples, smaller first: a job's class (0
//! non-preemptive, 1 DPCP agent, 2 boosted holder, 3 normal), then its
//! priority within the class, then a sequence number (order of requests
//! or grants) and the task index, so every choice is deterministic.

use std::collections::VecDeque;
use std::io;

use rtlab_model::mp_locking::{MpProtocol, Sharing};
use rtlab_model::results::{JobRecord, JobSink, Totals};
use rtlab_model::{lock_steps, Nanos, Task, TaskSet};

use super::{dpcp, fmlp_plus, mpcp, mrsp, msrp, omlp};
use crate::config::{MissRule, SimConfig};
use crate::engine::BacklogStop;
use crate::error::SimError;
use crate::lifecycle::{Backlog, Draws, Ledger};
use crate::metrics::{ProcessorMetrics, SimReport};
use crate::queue::{Class, EventQueue, Payload};
use crate::registry::SchedulerSpec;
use crate::scheduler::fixed_levels;
use crate::trace::{LockMark, LockMarkKind, Trace, TraceRecord, NO_CPU};

/// An effective priority: smaller runs first.
pub(crate) type Key = (u64, u64, u64, u64);

/// How a job waits for a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// It does not.
    No,
    /// Suspended until the resource is granted (MPCP, FMLP+, OMLP).
    Suspended(usize),
    /// Spinning on its processor (MSRP, MrsP).
    Spinning(usize),
}

/// One resource.
#[derive(Clone, Debug)]
pub(crate) struct Resource {
    /// Managed by the multiprocessor protocol (used from two processors;
    /// every resource under the OMLP).
    pub global: bool,
    /// The job holding it.
    pub owner: Option<usize>,
    /// FIFO queue of waiting jobs (FMLP+, MSRP, MrsP; the OMLP's FIFO
    /// part, holder at its head).
    pub fifo: VecDeque<usize>,
    /// Waiting jobs served by priority (MPCP; the OMLP's priority queue).
    pub by_priority: Vec<usize>,
    /// The highest rank of its users.
    pub ceiling: u64,
    /// Per processor, the highest rank of its users there (0: none).
    pub ceiling_on: Vec<u64>,
    /// Per processor, the highest rank of its users elsewhere (MPCP).
    pub remote_ceiling: Vec<u64>,
    /// DPCP: the processor its agents run on.
    pub sync: u32,
}

/// One lock or unlock at an execution offset.
#[derive(Clone, Copy, Debug)]
struct Step {
    at: Nanos,
    resource: usize,
    lock: bool,
}

/// One job.
#[derive(Clone, Debug)]
pub(crate) struct MJob {
    pub task: usize,
    pub index: u64,
    pub release: Nanos,
    pub deadline: Nanos,
    pub demand: Nanos,
    pub executed: Nanos,
    pub uid: u64,
    pub start: Option<Nanos>,
    pub start_cpu: Option<u32>,
    pub last_cpu: Option<u32>,
    pub migrations: u64,
    pub preemptions: u64,
    pub done: bool,
    /// Next lock step.
    step: usize,
    pub wait: Wait,
    /// The global resource it holds.
    pub global: Option<usize>,
    /// Local resources held (immediate ceiling), innermost last.
    pub locals: Vec<usize>,
    /// DPCP: the resource whose section its agent runs, from the request
    /// to the release.
    pub agent: Option<usize>,
    /// DPCP: the agent has started (holds the resource, at its ceiling).
    pub agent_started: bool,
    /// Order of the current request (FIFO boosting) or grant (MPCP).
    pub seq: u64,
    /// MSRP: non-preemptive from its request to its release.
    pub np: bool,
    /// MrsP: the ceiling it runs at from its request to its release.
    pub ceiling: u64,
    /// The processor executing it (or where it spins) now.
    pub on_cpu: Option<u32>,
    /// Blocking so far.
    pub remote: Nanos,
    pub local: Nanos,
}

/// One processor.
#[derive(Clone, Debug, Default)]
struct Cpu {
    /// The job it executes (or that spins on it).
    job: Option<usize>,
    /// Whose place it is: the job picked for it (a spinner whose place a
    /// helping holder uses under MrsP), else `job`.
    slot: Option<usize>,
    last_task: Option<usize>,
    executed_ns: u64,
}

/// A multiprocessor locking run.
pub(crate) struct LockingSim {
    pub tasks: Vec<Task>,
    taskset: String,
    name: String,
    pub protocol: MpProtocol,
    config: SimConfig,
    /// Strict fixed-priority ranks (larger more urgent); unused under EDF.
    pub rank: Vec<u64>,
    /// Scheduling domain of each task (its processor, or its cluster).
    pub home: Vec<usize>,
    /// The processors of each domain.
    pub domains: Vec<Vec<u32>>,
    /// The domain of each processor.
    domain_of_cpu: Vec<usize>,
    steps: Vec<Vec<Step>>,
    /// Whether each task has a critical section.
    has_sections: Vec<bool>,
    pub resources: Vec<Resource>,
    pub jobs: Vec<MJob>,
    free: Vec<usize>,
    /// Each task's ready job and the jobs waiting behind it.
    backlog: Backlog<usize>,
    cpus: Vec<Cpu>,
    queue: EventQueue,
    draws: Draws,
    ledger: Ledger,
    trace: Option<Trace>,
    pub now: Nanos,
    events: u64,
    context_switches: u64,
    next_uid: u64,
    seq: u64,
    finished: bool,
}

impl LockingSim {
    /// Sets up the run; `check` accepted it, `groups` is each task's
    /// processor (partitioned) or cluster.
    pub(crate) fn new(
        set: &TaskSet,
        spec: &SchedulerSpec,
        config: SimConfig,
        protocol: MpProtocol,
        groups: &[u32],
    ) -> Result<LockingSim, SimError> {
        let n = set.tasks.len();
        let m = set.processors();
        let tasks = set.tasks.clone();
        let (domains, rank): (Vec<Vec<u32>>, Vec<u64>) = match spec {
            SchedulerSpec::Pfp(policy) => {
                let levels = fixed_levels(*policy, &tasks, &spec.to_string())?;
                // Strict: equal levels ordered by declaration, as the
                // analysis orders them.
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by(|&a, &b| levels[b].cmp(&levels[a]).then(a.cmp(&b)));
                let mut rank = vec![0u64; n];
                for (k, &i) in order.iter().enumerate() {
                    rank[i] = (n - k) as u64;
                }
                ((0..m).map(|c| vec![c]).collect(), rank)
            }
            SchedulerSpec::Cedf => {
                let clusters = crate::multi::clusters(set).map_err(|why| SimError::Setup {
                    scheduler: spec.to_string(),
                    why,
                })?;
                (clusters.into_iter().map(|(c, _)| c).collect(), vec![0; n])
            }
            _ => (vec![(0..m).collect()], vec![0; n]),
        };
        let mut domain_of_cpu = vec![0; m as usize];
        for (d, cpus) in domains.iter().enumerate() {
            for &c in cpus {
                domain_of_cpu[c as usize] = d;
            }
        }
        let home: Vec<usize> = groups.iter().map(|&g| g as usize).collect();
        let sharing = Sharing::of(set, groups);
        let sync = sharing.synchronization_processors(m);
        let resources = sharing
            .resources
            .iter()
            .enumerate()
            .map(|(q, r)| {
                let on = |cpu: u32, same: bool| {
                    r.users
                        .iter()
                        .filter(|&&k| (groups[k] == cpu) == same)
                        .map(|&k| rank[k])
                        .max()
                        .unwrap_or(0)
                };
                Resource {
                    global: protocol == MpProtocol::Omlp || r.is_global(),
                    owner: None,
                    fifo: VecDeque::new(),
                    by_priority: Vec::new(),
                    ceiling: r.users.iter().map(|&k| rank[k]).max().unwrap_or(0),
                    ceiling_on: (0..m).map(|c| on(c, true)).collect(),
                    remote_ceiling: (0..m).map(|c| on(c, false)).collect(),
                    sync: sync[q],
                }
            })
            .collect();
        let steps = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                lock_steps(&t.critical_sections)
                    .into_iter()
                    .map(|s| {
                        // Sections of one task are listed in order; find
                        // the resource index through the task's sections.
                        let k = t
                            .critical_sections
                            .iter()
                            .position(|cs| cs.resource == s.resource)
                            .unwrap_or(0);
                        Step {
                            at: s.at,
                            resource: sharing.sections[i][k],
                            lock: s.lock,
                        }
                    })
                    .collect()
            })
            .collect();
        let trace = config.trace.map(|w| {
            let mut t = Trace::new(w, tasks.iter().map(|t| t.name.clone()).collect());
            t.processors = m;
            t.per_processor = true;
            t
        });
        let mut sim = LockingSim {
            draws: Draws::new(config.seed, n),
            ledger: Ledger::new(n),
            has_sections: tasks
                .iter()
                .map(|t| !t.critical_sections.is_empty())
                .collect(),
            tasks,
            taskset: set.name.clone(),
            name: spec.to_string(),
            protocol,
            config,
            rank,
            home,
            domains,
            domain_of_cpu,
            steps,
            resources,
            jobs: Vec::new(),
            free: Vec::new(),
            backlog: Backlog::new(n),
            cpus: vec![Cpu::default(); m as usize],
            queue: EventQueue::default(),
            trace,
            now: Nanos::ZERO,
            events: 0,
            context_switches: 0,
            next_uid: 0,
            seq: 0,
            finished: false,
        };
        for i in 0..n {
            let first = sim.tasks[i].offset;
            sim.schedule_release(i, first);
        }
        Ok(sim)
    }

    /// Sends every job record to `sink`.
    pub(crate) fn on_job(&mut self, sink: Box<dyn JobSink>) {
        self.ledger.set_sink(sink);
    }

    /// Ends the job sink's output: its first error, if any.
    pub(crate) fn finish_jobs(&mut self) -> io::Result<()> {
        self.ledger.finish()
    }

    /// Runs to the end.
    pub(crate) fn run(&mut self) {
        while self.step() {}
    }

    /// Why the run stopped early, if it did.
    pub(crate) fn stopped(&self) -> Option<BacklogStop> {
        self.backlog.stopped()
    }

    /// The trace of the window.
    pub(crate) fn take_trace(&mut self) -> Option<Trace> {
        self.trace.take()
    }

    /// A fresh sequence number.
    pub(crate) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The processor of task `k` under a partitioned protocol.
    pub(crate) fn home_cpu(&self, k: usize) -> u32 {
        self.domains[self.home[k]][0]
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
        // Milestones of the jobs that ran up to now come first (the
        // uniprocessor engine's order), then the events, then the picks.
        self.operate();
        while let Some(payload) = self.queue.pop_at(t) {
            self.events += 1;
            match payload {
                Payload::Deadline { slot, uid } => self.handle_deadline(slot as usize, uid),
                Payload::Release { task, at } => self.handle_release(task, at),
                Payload::Tick => {}
            }
        }
        self.settle();
        true
    }

    /// When the job executing on `cpu` reaches its next lock operation or
    /// completes.
    fn milestone(&self, cpu: &Cpu) -> Option<Nanos> {
        let j = cpu.job?;
        let job = &self.jobs[j];
        if job.wait != Wait::No {
            return None;
        }
        let mut target = job.demand;
        if let Some(step) = self.steps[job.task].get(job.step) {
            target = target.min(step.at.max(job.executed));
        }
        self.now.checked_add(target.saturating_sub(job.executed))
    }

    fn next_time(&self) -> Option<Nanos> {
        let mut next = self.queue.peek_time();
        for cpu in &self.cpus {
            if let Some(t) = self.milestone(cpu) {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }

    /// Progress, spins and blocking over `[now, t)`.
    fn advance(&mut self, t: Nanos) {
        let now = self.now;
        if t <= now {
            return;
        }
        let dt = t - now;
        for c in 0..self.cpus.len() {
            let Some(j) = self.cpus[c].job else { continue };
            let (task, index, spinning) = {
                let job = &self.jobs[j];
                (job.task, job.index, matches!(job.wait, Wait::Spinning(_)))
            };
            if spinning {
                self.mark(LockMarkKind::Spin, j, c as u32, now, t);
                continue;
            }
            self.jobs[j].executed += dt;
            self.cpus[c].executed_ns += dt.as_ns();
            if let Some(trace) = &mut self.trace {
                trace.interval_on(c as u32, Some((task, index)), now, t);
            }
            let job = &self.jobs[j];
            let kind = match (job.agent, job.global) {
                (Some(_), _) => Some(LockMarkKind::Agent),
                (None, Some(_))
                    if self.protocol == MpProtocol::Mrsp
                        && self.home_cpu_of_job(j) != Some(c as u32) =>
                {
                    Some(LockMarkKind::Help)
                }
                (None, Some(_)) => Some(LockMarkKind::Section),
                (None, None) => None,
            };
            if let Some(kind) = kind {
                self.mark(kind, j, c as u32, now, t);
            }
        }
        self.account(now, t);
    }

    /// The home processor of job `j` under a partitioned protocol.
    fn home_cpu_of_job(&self, j: usize) -> Option<u32> {
        let d = &self.domains[self.home[self.jobs[j].task]];
        (d.len() == 1).then(|| d[0])
    }

    fn mark(&mut self, kind: LockMarkKind, j: usize, cpu: u32, start: Nanos, end: Nanos) {
        if let Some(trace) = &mut self.trace {
            let job = &self.jobs[j];
            trace.lock_mark(LockMark {
                kind,
                task: job.task,
                job: job.index,
                cpu,
                start,
                end,
            });
        }
    }

    /// Counts every pending job's blocking over `[from, to)` (module docs
    /// of [`super`]; `rtlab_analysis::mp_locking` bounds the same).
    fn account(&mut self, from: Nanos, to: Nanos) {
        let dt = to - from;
        if self.protocol == MpProtocol::Omlp {
            omlp::account(self, from, to);
            return;
        }
        for task in 0..self.tasks.len() {
            let Some(j) = self.backlog.head(task) else {
                continue;
            };
            let job = &self.jobs[j];
            if job.done {
                continue;
            }
            let remote = match job.wait {
                Wait::Suspended(_) => true,
                Wait::Spinning(_) => self.cpus.iter().any(|c| c.slot == Some(j)),
                Wait::No => job.agent.is_some() && job.on_cpu.is_none(),
            };
            if remote {
                self.jobs[j].remote += dt;
                self.mark(LockMarkKind::RemoteBlocked, j, NO_CPU, from, to);
                continue;
            }
            if job.wait != Wait::No || job.agent.is_some() || job.on_cpu.is_some() {
                continue;
            }
            // Ready, not running: who has its processor?
            let c = self.home_cpu(task) as usize;
            let blocked = match (self.cpus[c].job, self.cpus[c].slot) {
                (Some(e), _) if self.jobs[e].agent.is_some() => true,
                (_, Some(o)) => self.rank[self.jobs[o].task] < self.rank[task],
                _ => false,
            };
            if blocked {
                self.jobs[j].local += dt;
                self.mark(LockMarkKind::LocalBlocked, j, NO_CPU, from, to);
            }
        }
    }

    /// Records blocking `dt` of job `j`, remote or local (the OMLP's
    /// accounting).
    pub(crate) fn charge(&mut self, j: usize, remote: bool, from: Nanos, to: Nanos) {
        let dt = to - from;
        if remote {
            self.jobs[j].remote += dt;
            self.mark(LockMarkKind::RemoteBlocked, j, NO_CPU, from, to);
        } else {
            self.jobs[j].local += dt;
            self.mark(LockMarkKind::LocalBlocked, j, NO_CPU, from, to);
        }
    }

    /// The pending jobs (each task's oldest unfinished job).
    pub(crate) fn heads(&self) -> impl Iterator<Item = usize> + '_ {
        self.backlog.heads().filter(|&j| !self.jobs[j].done)
    }

    /// The domain job `j` is a candidate in now, if any.
    fn placed(&self, j: usize) -> Option<usize> {
        let job = &self.jobs[j];
        if job.done || matches!(job.wait, Wait::Suspended(_)) {
            return None;
        }
        if let Some(q) = job.agent {
            // An agent starts only when its resource is free (the
            // ceiling rule makes it so; this keeps it so at ties).
            let r = &self.resources[q];
            if !job.agent_started && r.owner.is_some_and(|o| o != j) {
                return None;
            }
            return Some(self.domain_of_cpu[r.sync as usize]);
        }
        Some(self.home[job.task])
    }

    /// The effective key of placed job `j`.
    pub(crate) fn key(&self, j: usize) -> Key {
        match self.protocol {
            MpProtocol::Omlp => omlp::key(self, j),
            MpProtocol::Msrp => msrp::key(self, j),
            MpProtocol::Mpcp => mpcp::key(self, j),
            MpProtocol::FmlpPlus => fmlp_plus::key(self, j),
            MpProtocol::Dpcp => dpcp::key(self, j),
            MpProtocol::Mrsp => mrsp::key(self, j),
        }
    }

    /// The fixed-priority key of a job that no protocol boosts: its rank,
    /// raised by the ceilings of the local resources it holds and by
    /// `extra` (MrsP's ceiling); a raised job wins a tie.
    pub(crate) fn normal_key(&self, j: usize, extra: u64) -> Key {
        let job = &self.jobs[j];
        let base = self.rank[job.task];
        let raised = job
            .locals
            .iter()
            .map(|&r| self.resources[r].ceiling)
            .max()
            .unwrap_or(0)
            .max(extra);
        let eff = base.max(raised);
        (
            3,
            u64::MAX - eff,
            u64::from(eff == base && raised < base),
            job.task as u64,
        )
    }

    /// Settles the instant: picks, lock operations, picks again.
    fn settle(&mut self) {
        for _ in 0..1_000_000 {
            self.pick();
            if !self.operate() {
                return;
            }
        }
    }

    /// Every domain picks its jobs (module docs).
    fn pick(&mut self) {
        let m = self.cpus.len();
        let mut chosen: Vec<Option<usize>> = vec![None; m];
        let mut candidates: Vec<Vec<(Key, usize)>> = vec![Vec::new(); self.domains.len()];
        for j in 0..self.jobs.len() {
            if let Some(d) = self.placed(j) {
                let is_head = self.backlog.head(self.jobs[j].task) == Some(j);
                if is_head {
                    candidates[d].push((self.key(j), j));
                }
            }
        }
        for (d, cands) in candidates.iter_mut().enumerate() {
            let cpus = &self.domains[d];
            cands.sort_unstable();
            cands.truncate(cpus.len());
            let picked: Vec<usize> = cands.iter().map(|&(_, j)| j).collect();
            // Running jobs keep their processor.
            let mut rest = Vec::new();
            for &j in &picked {
                match self.jobs[j].on_cpu {
                    Some(c) if cpus.contains(&c) && chosen[c as usize].is_none() => {
                        chosen[c as usize] = Some(j)
                    }
                    _ => rest.push(j),
                }
            }
            for j in rest {
                let last = self.jobs[j]
                    .last_cpu
                    .filter(|c| cpus.contains(c) && chosen[*c as usize].is_none());
                let c =
                    last.or_else(|| cpus.iter().copied().find(|&c| chosen[c as usize].is_none()));
                if let Some(c) = c {
                    chosen[c as usize] = Some(j);
                }
            }
        }
        let mut runs: Vec<Option<usize>> = chosen.clone();
        if self.protocol == MpProtocol::Mrsp {
            mrsp::help(self, &chosen, &mut runs);
        }
        self.dispatch(&chosen, &runs);
    }

    /// Applies a pick: `slots[c]` is whose place processor `c` is, `runs[c]`
    /// who runs there.
    fn dispatch(&mut self, slots: &[Option<usize>], runs: &[Option<usize>]) {
        let now = self.now;
        // Jobs that lose their processor while still able to run are
        // preempted.
        for c in 0..self.cpus.len() {
            if let Some(old) = self.cpus[c].job {
                if !runs.contains(&Some(old)) {
                    // Preempted: it could still run, and lost a processor
                    // of its own domain (an agent, or a holder leaving the
                    // place it helped in, is not preempted).
                    let home = self.home[self.jobs[old].task];
                    let job = &mut self.jobs[old];
                    job.on_cpu = None;
                    let runnable = !job.done
                        && !matches!(job.wait, Wait::Suspended(_))
                        && job.agent.is_none()
                        && self.domain_of_cpu[c] == home;
                    if runnable {
                        job.preemptions += 1;
                    }
                }
            }
        }
        for c in 0..self.cpus.len() {
            self.cpus[c].slot = slots[c];
            let new = runs[c];
            if let Some(j) = new {
                // An agent takes its resource at its first instant on a
                // processor, which may be the one its job ran on already.
                if self.jobs[j].agent.is_some() && !self.jobs[j].agent_started {
                    dpcp::start_agent(self, j);
                }
            }
            if self.cpus[c].job == new {
                continue;
            }
            self.cpus[c].job = new;
            let Some(j) = new else { continue };
            let cpu = c as u32;
            let agent = self.jobs[j].agent.is_some();
            let job = &mut self.jobs[j];
            if let Some(was) = job.on_cpu {
                if was != cpu && self.cpus[was as usize].job == Some(j) {
                    self.cpus[was as usize].job = None;
                }
            }
            job.on_cpu = Some(cpu);
            job.start = job.start.or(Some(now));
            job.start_cpu = job.start_cpu.or(Some(cpu));
            if !agent {
                if job.last_cpu.is_some_and(|l| l != cpu) {
                    job.migrations += 1;
                    let (task, index, from) = (job.task, job.index, job.last_cpu.unwrap_or(0));
                    if let Some(trace) = &mut self.trace {
                        trace.migration(task, index, from, cpu, now);
                    }
                }
                self.jobs[j].last_cpu = Some(cpu);
            }
            let task = self.jobs[j].task;
            if self.cpus[c].last_task != Some(task) {
                self.context_switches += 1;
                self.cpus[c].last_task = Some(task);
            }
        }
    }

    /// Does the lock operations and completions due for the executing
    /// jobs; true when anything happened.
    fn operate(&mut self) -> bool {
        let mut any = false;
        for c in 0..self.cpus.len() {
            let Some(j) = self.cpus[c].job else { continue };
            if self.jobs[j].wait != Wait::No || self.jobs[j].done {
                continue;
            }
            // One operation per job and pick: it may move the job (a
            // suspension, an agent, the end of a boost).
            let job = &self.jobs[j];
            if let Some(&step) = self.steps[job.task].get(job.step) {
                if step.at <= job.executed && !(step.at >= job.demand && step.lock) {
                    self.jobs[j].step += 1;
                    self.events += 1;
                    any = true;
                    if step.lock {
                        self.lock(j, step.resource);
                    } else {
                        self.unlock(j, step.resource);
                    }
                    continue;
                }
            }
            let job = &self.jobs[j];
            if !job.done
                && job.wait == Wait::No
                && job.executed >= job.demand
                && self.steps[job.task]
                    .get(job.step)
                    .is_none_or(|s| s.at > job.executed || s.lock)
            {
                self.events += 1;
                self.complete(j);
                any = true;
            }
        }
        any
    }

    fn lock(&mut self, j: usize, q: usize) {
        if !self.resources[q].global {
            // Local: the ceiling keeps it free for whoever runs.
            self.resources[q].owner = Some(j);
            self.jobs[j].locals.push(q);
            return;
        }
        match self.protocol {
            MpProtocol::Mpcp => mpcp::request(self, j, q),
            MpProtocol::Dpcp => dpcp::request(self, j, q),
            MpProtocol::FmlpPlus => fmlp_plus::request(self, j, q),
            MpProtocol::Mrsp => mrsp::request(self, j, q),
            MpProtocol::Msrp => msrp::request(self, j, q),
            MpProtocol::Omlp => omlp::request(self, j, q),
        }
    }

    fn unlock(&mut self, j: usize, q: usize) {
        if !self.resources[q].global {
            if let Some(pos) = self.jobs[j].locals.iter().rposition(|&r| r == q) {
                self.jobs[j].locals.remove(pos);
            }
            self.resources[q].owner = None;
            return;
        }
        if self.resources[q].owner != Some(j) {
            return;
        }
        match self.protocol {
            MpProtocol::Mpcp => mpcp::release(self, j, q),
            MpProtocol::Dpcp => dpcp::release(self, j, q),
            MpProtocol::FmlpPlus => fmlp_plus::release(self, j, q),
            MpProtocol::Mrsp => mrsp::release(self, j, q),
            MpProtocol::Msrp => msrp::release(self, j, q),
            MpProtocol::Omlp => omlp::release(self, j, q),
        }
    }

    /// A request in FIFO order (FMLP+, MSRP, MrsP): `j` takes `q` if it is
    /// free, else joins its queue waiting as `wait` says.
    pub(crate) fn fifo_request(&mut self, j: usize, q: usize, wait: fn(usize) -> Wait) {
        let seq = self.next_seq();
        self.jobs[j].seq = seq;
        if self.resources[q].owner.is_none() {
            self.grant(j, q);
        } else {
            self.jobs[j].wait = wait(q);
            self.resources[q].fifo.push_back(j);
        }
    }

    /// `j` releases `q`, the head of its FIFO queue takes it.
    pub(crate) fn fifo_release(&mut self, j: usize, q: usize) {
        self.jobs[j].global = None;
        self.resources[q].owner = None;
        if let Some(w) = self.resources[q].fifo.pop_front() {
            self.grant(w, q);
        }
    }

    /// Grants `q` to waiting job `w`: it stops waiting and holds `q`.
    pub(crate) fn grant(&mut self, w: usize, q: usize) {
        self.resources[q].owner = Some(w);
        let job = &mut self.jobs[w];
        job.wait = Wait::No;
        job.global = Some(q);
    }

    /// Leaves every queue and lock of job `j` (completion or abort).
    fn let_go(&mut self, j: usize) {
        for q in 0..self.resources.len() {
            let r = &mut self.resources[q];
            if r.owner != Some(j) {
                r.fifo.retain(|&w| w != j);
                r.by_priority.retain(|&w| w != j);
            }
        }
        if let Some(q) = self.jobs[j].agent {
            if self.resources[q].owner == Some(j) {
                self.unlock(j, q);
            }
            self.jobs[j].agent = None;
        }
        if let Some(q) = self.jobs[j].global {
            self.unlock(j, q);
        }
        while let Some(&q) = self.jobs[j].locals.last() {
            self.unlock(j, q);
        }
        let job = &mut self.jobs[j];
        job.wait = Wait::No;
        job.np = false;
        job.ceiling = 0;
    }

    fn schedule_release(&mut self, task: usize, at: Nanos) {
        if at >= self.config.duration {
            return;
        }
        let ready = self
            .draws
            .ready_at(task, &self.tasks[task], at, self.config.jitter);
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
        if self.config.on_miss == MissRule::Skip {
            if let Some(h) = self.backlog.head(task) {
                if self.jobs[h].deadline <= at {
                    self.ledger.skipped(task);
                    return;
                }
            }
        }
        let demand = self.draws.demand(task, &self.tasks[task], self.config.exec);
        let uid = self.next_uid;
        self.next_uid += 1;
        let job = MJob {
            task,
            index,
            release: at,
            deadline: at.saturating_add(deadline),
            demand,
            executed: Nanos::ZERO,
            uid,
            start: None,
            start_cpu: None,
            last_cpu: None,
            migrations: 0,
            preemptions: 0,
            done: false,
            step: 0,
            wait: Wait::No,
            global: None,
            locals: Vec::new(),
            agent: None,
            agent_started: false,
            seq: 0,
            np: false,
            ceiling: 0,
            on_cpu: None,
            remote: Nanos::ZERO,
            local: Nanos::ZERO,
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
        let stopped_before = self.backlog.stopped().is_some();
        if self.backlog.arrive(task, slot, self.now) {
            self.backlog.set_head(task, slot);
        } else if !stopped_before && self.backlog.stopped().is_some() {
            self.config.duration = self.now.max(Nanos::from_ns(1));
        }
    }

    fn complete(&mut self, j: usize) {
        let now = self.now;
        self.let_go(j);
        self.record_job(j, Some(now), false);
        let (task, index, deadline) = {
            let job = &self.jobs[j];
            (job.task, job.index, job.deadline)
        };
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
        self.retire(j);
    }

    fn handle_deadline(&mut self, slot: usize, uid: u64) {
        let Some(job) = self.jobs.get(slot) else {
            return;
        };
        if job.uid != uid || job.done {
            return;
        }
        let (task, index, deadline) = (job.task, job.index, job.deadline);
        self.let_go(slot);
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

    fn record_job(&mut self, j: usize, finish: Option<Nanos>, aborted: bool) {
        let job = &self.jobs[j];
        let record = JobRecord {
            task: job.task,
            job: job.index,
            release: job.release,
            deadline: job.deadline,
            start: job.start,
            finish,
            aborted,
            voluntary_switches: 0,
            involuntary_switches: job.preemptions,
            cpu: finish.and(job.last_cpu),
            start_cpu: job.start_cpu,
            migrations: job.migrations,
            blocked: self.has_sections[job.task].then_some(job.remote),
            remote_blocked: Some(job.remote),
            local_blocked: Some(job.local),
            demand: Some(job.demand),
        };
        self.ledger.record(&record, self.config.duration);
    }

    fn retire(&mut self, j: usize) {
        let task = self.jobs[j].task;
        if let Some(c) = self.jobs[j].on_cpu.take() {
            let cpu = &mut self.cpus[c as usize];
            if cpu.job == Some(j) {
                cpu.job = None;
            }
            if cpu.slot == Some(j) {
                cpu.slot = None;
            }
        }
        for cpu in &mut self.cpus {
            if cpu.slot == Some(j) {
                cpu.slot = None;
            }
        }
        self.jobs[j].done = true;
        self.free.push(j);
        if let Some(next) = self.backlog.retire(task) {
            self.backlog.set_head(task, next);
        }
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
        for j in 0..self.jobs.len() {
            let job = &self.jobs[j];
            if job.done {
                continue;
            }
            let (task, index, deadline) = (job.task, job.index, job.deadline);
            self.record_job(j, None, false);
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
    pub(crate) fn report(&mut self) -> SimReport {
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
                overhead_ns: 0,
                utilization: p.executed_ns as f64 / duration.as_ns() as f64,
            })
            .collect();
        let busy: u64 = self.cpus.iter().map(|p| p.executed_ns).sum();
        SimReport {
            throttling: None,
            scheduler: self.name.clone(),
            taskset: self.taskset.clone(),
            duration_ns: duration.as_ns(),
            protocol: self.protocol.name().into(),
            on_miss: self.config.on_miss.name().into(),
            tick_ns: None,
            timer: None,
            periodic_tick_ns: None,
            seed: self.config.seed,
            jitter: self.config.jitter.to_string(),
            totals,
            context_switches: self.context_switches,
            context_switches_per_s: self.context_switches as f64 / duration.as_secs_f64(),
            overhead_ns: 0,
            idle_ns: duration
                .as_ns()
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
