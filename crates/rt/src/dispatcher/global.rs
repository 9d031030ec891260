//! The global dispatcher's event loop: one dispatcher decides for m CPUs
//! with the simulator's own global rule (`gedf`, `gfp:ORDER`, `edzl`).
//!
//! The rule ([`GlobalRule`], built by the simulator's registry) orders the
//! ready jobs; the simulator's decision ([`rtlab_sim::multi::decision`])
//! chooses the m most urgent and the processor of each: a chosen job that
//! runs keeps its CPU, a newly chosen one goes back to the CPU it last ran
//! on if that one is idle, else to the lowest-numbered idle CPU, else to
//! the CPU of the least urgent job it preempts. So nothing of G-EDF, G-FP
//! or EDZL is written here a second time: this module is only the
//! simulator's global engine's instant (completions, releases, a decision;
//! `rtlab_sim::multi::global`) on a clock it does not own, as
//! [`super::engine`] is the uniprocessor one's.
//!
//! One turn, after the platform wakes it: every running job is credited
//! with what its thread executed; every job whose thread posted its end
//! completes (also one preempted in the same turn that finished first: its
//! thread, on another CPU, does not stop while the dispatcher decides);
//! the releases whose time has come, in the event queue's order; an EDZL
//! zero-laxity instant; then one decision, enacted as
//! [`CpuPlatform::place`] (the thread's affinity, on a migration) and
//! [`Platform::run`] / [`Platform::preempt`]. Releases are lazy as in the
//! uniprocessor engine: at most one job per task, the others a count.
//! Nothing here allocates after [`GlobalEngine::new`].

use rtlab_model::phase::PhasePlan;
use rtlab_model::policy::MissRule;
use rtlab_model::results::JobRecord;
use rtlab_model::{Nanos, Task};
use rtlab_sim::multi::decision;
use rtlab_sim::multi::global::{GlobalJob, Key};
use rtlab_sim::multi::GlobalRule;

use super::backlog::Backlog;
use super::costs::CostMeter;
use super::engine::{Platform, Post};
use super::upcoming::Upcoming;
use crate::executor::job_log::JobLog;

/// A platform whose threads can run on any of m CPUs.
pub trait CpuPlatform: Platform {
    /// Task `task`'s thread is to run on CPU `cpu` (index among the m)
    /// from its next [`Platform::run`] on.
    fn place(&mut self, task: usize, cpu: usize);
}

/// Everything the global engine needs besides the rule and the platform.
#[derive(Debug, Clone)]
pub struct GlobalSetup {
    /// The tasks, as the rule was built for them.
    pub tasks: Vec<Task>,
    /// Releases at or after it are not made; the run ends there.
    pub duration: Nanos,
    /// What a release that finds its task's job late does.
    pub on_miss: MissRule,
    /// The number of CPUs (m).
    pub cpus: usize,
    /// The CPU each index stands for in the records (empty: the index).
    pub cpu_ids: Vec<usize>,
}

/// One task's current job and its place.
#[derive(Debug, Clone)]
struct Current {
    job: GlobalJob,
    /// When it was first chosen (the decision's time).
    start: Option<Nanos>,
    /// When its thread first began running (its own reading).
    began: Option<Nanos>,
    start_cpu: Option<usize>,
    last_cpu: Option<usize>,
    on_cpu: Option<usize>,
    migrations: u64,
    preemptions: u64,
    /// Execution already credited.
    credited: Nanos,
}

/// Per task: its job and its releases.
#[derive(Debug, Clone)]
struct TaskState {
    current: Option<Current>,
    /// Releases that found the task's job unfinished.
    waiting: Backlog,
    /// The decision time of the latest run order not yet acknowledged.
    ordered_at: Option<Nanos>,
}

/// The global engine: a global rule driven on a platform's clock over m
/// CPUs.
pub struct GlobalEngine<P: CpuPlatform> {
    /// The platform (public for the caller to take apart at the end).
    pub platform: P,
    tasks: Vec<Task>,
    plan: PhasePlan,
    duration: Nanos,
    on_miss: MissRule,
    rule: Box<dyn GlobalRule>,
    state: Vec<TaskState>,
    /// Per CPU: the task whose job it runs, and the last task it ran.
    cpus: Vec<Option<usize>>,
    last_task: Vec<Option<usize>>,
    cpu_ids: Vec<usize>,
    order: Vec<(Key, usize)>,
    freed: Vec<(Key, usize)>,
    /// The next instant a waiting job's key changes with no event.
    change: Option<Nanos>,
    /// Each task's next release.
    upcoming: Upcoming,
    /// Per task: its jobs' records and summary.
    pub logs: Vec<JobLog>,
    /// What the decisions cost and how late the threads began.
    pub meter: CostMeter,
    /// Task switches, per CPU as the simulator counts them.
    pub context_switches: u64,
    /// Jobs dispatched on another CPU than the one they last ran on.
    pub migrations: u64,
    /// Turns that decided.
    pub decisions: u64,
    /// Turns of the loop.
    pub wakes: u64,
    /// Run orders given to a thread that was not running.
    pub dispatches: u64,
    /// How long the run lasted.
    pub ended: Nanos,
    /// Test hook: behave as a dispatcher that hangs from this time on.
    pub hang_at: Option<Nanos>,
}

impl<P: CpuPlatform> GlobalEngine<P> {
    /// An engine for `setup` driving `rule` (built for `setup.tasks`) on
    /// `platform`, recording into `logs` (one per task).
    pub fn new(
        setup: GlobalSetup,
        rule: Box<dyn GlobalRule>,
        platform: P,
        logs: Vec<JobLog>,
    ) -> GlobalEngine<P> {
        let n = setup.tasks.len();
        let m = setup.cpus;
        let mut engine = GlobalEngine {
            platform,
            plan: PhasePlan::none(n),
            duration: setup.duration,
            on_miss: setup.on_miss,
            rule,
            state: (0..n)
                .map(|_| TaskState {
                    current: None,
                    waiting: Backlog::default(),
                    ordered_at: None,
                })
                .collect(),
            cpus: vec![None; m],
            last_task: vec![None; m],
            cpu_ids: if setup.cpu_ids.len() == m {
                setup.cpu_ids
            } else {
                (0..m).collect()
            },
            order: Vec::with_capacity(n),
            freed: Vec::with_capacity(m),
            change: None,
            upcoming: Upcoming::new(n),
            logs,
            meter: CostMeter::new(),
            context_switches: 0,
            migrations: 0,
            decisions: 0,
            wakes: 0,
            dispatches: 0,
            ended: setup.duration,
            hang_at: None,
            tasks: setup.tasks,
        };
        for i in 0..n {
            let first = engine.plan.first_release(i, engine.tasks[i].offset);
            engine.schedule_release(i, first);
        }
        engine
    }

    /// Runs until the end of the run, or until `stop` returns true.
    pub fn run(&mut self, stop: &dyn Fn() -> bool) {
        loop {
            self.platform.arm();
            let woke = self.platform.stamp();
            let now = self.platform.now();
            self.wakes += 1;
            if self.hang_at.is_some_and(|h| now >= h) {
                loop {
                    std::hint::spin_loop();
                }
            }
            let at = now.min(self.duration);
            let stopping = stop();
            self.collect_begins();
            self.account();
            let mut acted = self.completions(at);
            acted |= self.releases(at);
            acted |= self.change.is_some_and(|c| c <= at);
            if acted && !stopping {
                self.decide(at, woke);
            }
            if now >= self.duration || stopping {
                self.ended = if stopping { at } else { self.duration };
                break;
            }
            self.change = self.change_after(at);
            let next = self.next_wake();
            self.platform.wait(next);
            let woke_at = self.platform.now();
            if woke_at >= next && next < self.duration {
                self.meter.wake(woke_at - next);
            }
        }
        self.platform.stop();
        self.finish();
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
                if let Some(c) = &mut self.state[i].current {
                    c.began.get_or_insert(began);
                }
            }
        }
    }

    /// Credits every job that has had a CPU with what its thread executed
    /// since the last turn (a thread not yet given its job still shows
    /// its previous one's).
    fn account(&mut self) {
        for i in 0..self.state.len() {
            let Some(c) = self.state[i].current.as_mut().filter(|c| c.start.is_some()) else {
                continue;
            };
            let executed = self.platform.executed(i);
            if executed > c.credited {
                c.job.executed = c.job.executed.saturating_add(executed - c.credited);
                c.credited = executed;
            }
        }
    }

    /// Completes every job whose thread posted its end, CPU by CPU as the
    /// simulator does, then any preempted one that finished first.
    fn completions(&mut self, now: Nanos) -> bool {
        let mut acted = false;
        for c in 0..self.cpus.len() {
            if let Some(i) = self.cpus[c] {
                acted |= self.posted(i, now);
            }
        }
        for i in 0..self.state.len() {
            if self.state[i].current.is_some() {
                acted |= self.posted(i, now);
            }
        }
        acted
    }

    fn posted(&mut self, i: usize, now: Nanos) -> bool {
        let Some(c) = &self.state[i].current else {
            return false;
        };
        let release = c.job.release;
        match self.platform.posted(i, c.job.index) {
            Some(Post::Finished(at)) => {
                self.meter.post(now.saturating_sub(at));
                self.complete(i, at.min(now.max(release)), now);
                true
            }
            // No lock steps under a global scheduler (refused before).
            Some(Post::Step(_)) | None => false,
        }
    }

    fn schedule_release(&mut self, i: usize, at: Nanos) {
        let period = self.tasks[i].period;
        self.upcoming
            .schedule(&self.plan, i, period, at, self.duration);
    }

    /// Handles every release due by `now`, in the event queue's order.
    fn releases(&mut self, now: Nanos) -> bool {
        let mut acted = false;
        while let Some((i, at)) = self.upcoming.take_due(now, |t| t) {
            acted = true;
            if let Some(next) = at.checked_add(self.tasks[i].period) {
                self.schedule_release(i, next);
            }
            match &self.state[i].current {
                Some(c) if self.on_miss == MissRule::Skip && c.job.deadline <= at => {
                    self.logs[i].summary.record_skipped(1);
                }
                Some(_) => self.state[i].waiting.push(at),
                None => self.make_ready(i, at),
            }
        }
        acted
    }

    /// Task `i`'s job released at `at` becomes its current job.
    fn make_ready(&mut self, i: usize, at: Nanos) {
        let t = &self.tasks[i];
        let index = self.plan.job_index(i, t.period, t.offset, at);
        let demand = self.plan.demand(t.wcet, at);
        self.state[i].current = Some(Current {
            job: GlobalJob::new(i, index, at, at.saturating_add(t.deadline), demand),
            start: None,
            began: None,
            start_cpu: None,
            last_cpu: None,
            on_cpu: None,
            migrations: 0,
            preemptions: 0,
            credited: Nanos::ZERO,
        });
    }

    /// Task `i`'s job finished at `finish`: recorded, its CPU freed, its
    /// next waiting release made ready.
    fn complete(&mut self, i: usize, finish: Nanos, _now: Nanos) {
        if let Some(c) = &mut self.state[i].current {
            c.job.executed = c.job.demand;
            if let Some(cpu) = c.on_cpu.take() {
                self.cpus[cpu] = None;
            }
        }
        self.record(i, Some(finish));
        self.state[i].current = None;
        let period = self.tasks[i].period;
        if let Some(at) = self.state[i]
            .waiting
            .pop(&self.plan, i, period, self.duration)
        {
            self.make_ready(i, at);
        }
    }

    /// The record of task `i`'s current job, as the simulator's global
    /// engine writes it.
    fn record(&mut self, i: usize, finish: Option<Nanos>) {
        let Some(c) = &self.state[i].current else {
            return;
        };
        let cpu_id = |c: Option<usize>| c.map(|c| self.cpu_ids[c] as u32);
        let record = JobRecord {
            start: c.began.or(c.start.filter(|_| finish.is_some())),
            finish,
            involuntary_switches: c.preemptions,
            cpu: finish.and(cpu_id(c.last_cpu)),
            start_cpu: cpu_id(c.start_cpu),
            migrations: c.migrations,
            demand: Some(c.job.demand),
            ..JobRecord::unstarted(i, c.job.index, c.job.release, c.job.deadline)
        };
        let ended = self.ended;
        self.logs[i].job(record, ended);
    }

    /// The next instant after `now` a waiting job's key changes with no
    /// event (EDZL: its laxity reaches zero), as the simulator's global
    /// engine finds it.
    fn change_after(&self, now: Nanos) -> Option<Nanos> {
        if !self.rule.watches_time() {
            return None;
        }
        self.state
            .iter()
            .filter_map(|s| s.current.as_ref())
            .filter_map(|c| self.rule.change_at(&c.job, c.on_cpu.is_some(), now))
            .filter(|&at| at > now)
            .min()
    }

    /// The simulator's global decision, enacted.
    fn decide(&mut self, now: Nanos, woke: Nanos) {
        self.decisions += 1;
        let m = self.cpus.len();
        let mut order = std::mem::take(&mut self.order);
        let mut freed = std::mem::take(&mut self.freed);
        order.clear();
        freed.clear();
        for (i, s) in self.state.iter_mut().enumerate() {
            let Some(c) = &mut s.current else { continue };
            let running = c.on_cpu.is_some();
            self.rule.update(&mut c.job, running, now);
            order.push((self.rule.key(&c.job, running), i));
        }
        let chosen = decision::choose(&mut order, m);
        let decided = self.platform.stamp();
        let decided_at = self.platform.now().max(now);
        for &(key, i) in &order[chosen..] {
            let Some(c) = &mut self.state[i].current else {
                continue;
            };
            if let Some(cpu) = c.on_cpu.take() {
                c.preemptions += 1;
                self.cpus[cpu] = None;
                freed.push((key, cpu));
                self.platform.preempt(i);
            }
        }
        decision::least_urgent_first(&mut freed);
        for &(_, i) in &order[..chosen] {
            let Some(c) = &self.state[i].current else {
                continue;
            };
            if c.on_cpu.is_some() {
                continue;
            }
            let cpus = &self.cpus;
            let Some(cpu) = decision::processor_for(c.last_cpu, m, |k| cpus[k].is_none(), &freed)
            else {
                continue;
            };
            self.dispatch(i, cpu, now, decided_at);
        }
        self.order = order;
        self.freed = freed;
        let enacted = self.platform.stamp();
        self.meter.decision(
            decided.saturating_sub(woke),
            enacted.saturating_sub(decided),
        );
    }

    fn dispatch(&mut self, i: usize, cpu: usize, now: Nanos, decided_at: Nanos) {
        let Some(c) = &mut self.state[i].current else {
            return;
        };
        if c.last_cpu.is_some_and(|l| l != cpu) {
            c.migrations += 1;
            self.migrations += 1;
        }
        c.start.get_or_insert(now);
        c.start_cpu.get_or_insert(cpu);
        c.last_cpu = Some(cpu);
        c.on_cpu = Some(cpu);
        let (index, demand) = (c.job.index, c.job.demand);
        if self.last_task[cpu] != Some(i) {
            self.context_switches += 1;
            self.last_task[cpu] = Some(i);
        }
        self.cpus[cpu] = Some(i);
        self.dispatches += 1;
        self.state[i].ordered_at = Some(decided_at);
        self.platform.place(i, self.cpu_ids[cpu]);
        self.platform.run(i, index, demand, 0);
    }

    /// When to wake next: the next release, an EDZL zero-laxity instant,
    /// the end.
    fn next_wake(&self) -> Nanos {
        let next = self
            .upcoming
            .first_notice(|t| t)
            .map_or(self.duration, |r| r.min(self.duration));
        self.change.map_or(next, |c| next.min(c))
    }

    /// At the end: every job still in the run is recorded unfinished, and
    /// every release that waited behind it unstarted.
    fn finish(&mut self) {
        self.collect_begins();
        let ended = self.ended;
        for i in 0..self.state.len() {
            if self.state[i].current.is_some() {
                self.record(i, None);
                self.state[i].current = None;
            }
            let (t, log) = (&self.tasks[i], &mut self.logs[i]);
            self.state[i].waiting.drain(
                &self.plan,
                i,
                t,
                self.duration,
                ended,
                |index, at, demand| {
                    let record = JobRecord {
                        demand: Some(demand),
                        ..JobRecord::unstarted(i, index, at, at.saturating_add(t.deadline))
                    };
                    log.job(record, ended);
                },
            );
        }
    }
}
