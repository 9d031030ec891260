//! The engine on a virtual platform (threads that run exactly as told, no
//! time to decide or to switch) gives the simulator's schedule job for job,
//! for every uniprocessor scheduler, tickless and ticked, with phases,
//! skips and critical sections: the dispatcher runs the simulator's
//! scheduler, not a copy of it.

use std::cell::RefCell;
use std::rc::Rc;

use rtlab_model::phase::{Phase, PhasePlan};
use rtlab_model::results::JobRecord;
use rtlab_model::{Nanos, Task, TaskSet};
use rtlab_sim::{OnMiss, Protocol, SchedulerSpec, SimConfig, Simulator};

use super::engine::{steps_of, Engine, EngineSetup, LockRule, Platform, Post, Step};
use crate::executor::job_log::{JobLog, JobMessage};
use crate::executor::Overrun;
use crate::stream::record_ring;

/// Threads on a virtual clock: the running one executes as time passes,
/// reaches its lock steps and its demand exactly.
struct VirtualPlatform {
    now: Nanos,
    running: Option<usize>,
    steps: Vec<Vec<Step>>,
    threads: Vec<VirtualThread>,
}

#[derive(Default, Clone)]
struct VirtualThread {
    job: Option<u64>,
    demand: Nanos,
    executed: Nanos,
    passed: usize,
    post: Option<Post>,
    /// Waiting at a lock step or done: it does not execute.
    waiting: bool,
    began: Option<Nanos>,
}

impl VirtualPlatform {
    fn new(steps: Vec<Vec<Step>>) -> VirtualPlatform {
        VirtualPlatform {
            now: Nanos::ZERO,
            running: None,
            threads: vec![VirtualThread::default(); steps.len()],
            steps,
        }
    }

    /// The execution time at which the running thread next posts.
    fn target(&self, task: usize) -> Nanos {
        let t = &self.threads[task];
        let mut target = t.demand;
        if let Some(step) = self.steps[task].get(t.passed) {
            if !(step.lock && step.at >= t.demand) {
                target = target.min(step.at.max(t.executed));
            }
        }
        target
    }
}

impl Platform for VirtualPlatform {
    fn now(&mut self) -> Nanos {
        self.now
    }

    fn wait(&mut self, until: Nanos) {
        if let Some(task) = self.running.filter(|&t| !self.threads[t].waiting) {
            let target = self.target(task);
            let t = &mut self.threads[task];
            let left = target.saturating_sub(t.executed);
            if self.now.saturating_add(left) <= until {
                self.now = self.now.saturating_add(left);
                t.executed = target;
                t.waiting = true;
                t.post = Some(if target >= t.demand {
                    Post::Finished(self.now)
                } else {
                    Post::Step(t.passed)
                });
                return;
            }
            t.executed = t.executed.saturating_add(until.saturating_sub(self.now));
        }
        self.now = self.now.max(until);
    }

    fn executed(&self, task: usize) -> Nanos {
        self.threads[task].executed
    }

    fn posted(&mut self, task: usize, job: u64) -> Option<Post> {
        let t = &mut self.threads[task];
        if t.job != Some(job) {
            return None;
        }
        t.post.take()
    }

    fn run(&mut self, task: usize, job: u64, demand: Nanos, steps: usize) {
        let t = &mut self.threads[task];
        if t.job != Some(job) {
            *t = VirtualThread {
                job: Some(job),
                demand,
                ..VirtualThread::default()
            };
        }
        t.passed = steps;
        t.began = Some(self.now);
        self.running = Some(task);
    }

    fn pass(&mut self, task: usize, steps: usize) {
        let t = &mut self.threads[task];
        t.passed = steps;
        t.waiting = false;
    }

    fn preempt(&mut self, task: usize) {
        if self.running == Some(task) {
            self.running = None;
        }
    }

    fn began(&mut self, task: usize) -> Option<Nanos> {
        self.threads[task].began.take()
    }

    fn stop(&mut self) {
        self.running = None;
    }
}

type Key = (usize, u64, Nanos, Nanos, Option<Nanos>, Option<Nanos>, u64);

fn key(r: &JobRecord) -> Key {
    (
        r.task,
        r.job,
        r.release,
        r.deadline,
        r.start,
        r.finish,
        r.involuntary_switches,
    )
}

/// The simulator's records and context switches of `set` under `spec`.
fn simulated(
    set: &TaskSet,
    spec: &SchedulerSpec,
    duration: Nanos,
    tick: Option<Nanos>,
    on_miss: OnMiss,
    phases: &[Phase],
    protocol: Protocol,
) -> (Vec<Key>, u64) {
    let mut config = SimConfig::new(duration);
    config.tick = tick;
    config.on_miss = on_miss;
    config.phases = phases.to_vec();
    config.protocol = protocol;
    let mut sim = Simulator::new(set, spec, config).expect("simulates");
    let records: Rc<RefCell<Vec<Key>>> = Rc::default();
    let sink = Rc::clone(&records);
    sim.on_job(move |r| sink.borrow_mut().push(key(r)));
    let report = sim.report();
    let mut records = records.take();
    records.sort();
    (records, report.context_switches)
}

/// The engine's records and context switches on the virtual platform.
fn dispatched(
    set: &TaskSet,
    spec: &SchedulerSpec,
    duration: Nanos,
    tick: Option<Nanos>,
    on_miss: OnMiss,
    phases: &[Phase],
    protocol: LockRule,
) -> (Vec<Key>, u64) {
    let tasks = PhasePlan::tasks(set, phases);
    let plan = PhasePlan::new(set, phases, duration).expect("phases");
    let scheduler = spec.build(&tasks).expect("builds");
    let (steps, _) = steps_of(&tasks);
    let mut receivers = Vec::new();
    let logs = tasks
        .iter()
        .map(|_| {
            let (tx, rx) = record_ring(100_000, JobMessage::FILLER);
            receivers.push(rx);
            JobLog::new(Some(tx))
        })
        .collect();
    let setup = EngineSetup {
        tasks,
        plan,
        duration,
        on_miss: match on_miss {
            OnMiss::Skip => Overrun::Skip,
            _ => Overrun::Continue,
        },
        tick,
        protocol,
    };
    let mut engine = Engine::new(setup, scheduler, VirtualPlatform::new(steps), logs);
    engine.run(&|| false);
    let mut records = Vec::new();
    for rx in &mut receivers {
        rx.drain(|m| match m {
            JobMessage::Job(r) => records.push(key(&r)),
            JobMessage::Unstarted { .. } => panic!("the engine records every job one by one"),
        });
    }
    records.sort();
    (records, engine.context_switches)
}

fn same_schedule(set: &TaskSet, spec: &str, duration: Nanos, tick: Option<Nanos>, skip: bool) {
    let spec: SchedulerSpec = spec.parse().expect("a scheduler");
    let on_miss = if skip { OnMiss::Skip } else { OnMiss::Continue };
    let sim = simulated(set, &spec, duration, tick, on_miss, &[], Protocol::None);
    let real = dispatched(set, &spec, duration, tick, on_miss, &[], LockRule::None);
    assert!(!sim.0.is_empty());
    assert_eq!(
        real.0.len(),
        sim.0.len(),
        "{spec} on {}: job count",
        set.name
    );
    for (r, s) in real.0.iter().zip(&sim.0) {
        assert_eq!(r, s, "{spec} on {} (tick {tick:?})", set.name);
    }
    assert_eq!(real.1, sim.1, "{spec} on {}: context switches", set.name);
}

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

fn hartstone() -> TaskSet {
    rtlab_model::file::load("builtin:hartstone-ph")
        .expect("builtin")
        .set
}

/// U = 0.4 + 4/7 = 0.97: RM misses, EDF does not.
fn pair() -> TaskSet {
    TaskSet::new(
        "pair",
        vec![Task::new("a", ms(5), ms(2)), Task::new("b", ms(7), ms(4))],
    )
}

/// Over 1: misses, skips and backlogs.
fn overloaded() -> TaskSet {
    TaskSet::new(
        "over",
        vec![
            Task::new("a", ms(4), ms(2)),
            Task::new("b", ms(6), ms(3)).with_offset(ms(1)),
            Task::new("c", ms(10), ms(3)),
        ],
    )
}

const SCHEDULERS: [&str; 12] = [
    "edf",
    "fp:rm",
    "fp:dm",
    "fifo",
    "np-edf",
    "rr:2ms",
    "rr:1ms:linux",
    "ipi",
    "multiburst",
    "multiburst:wake=immediate",
    "multiburst:wake=next-burst,burst=1ms",
    "hybrid",
];

#[test]
fn every_uniprocessor_scheduler_gives_the_simulators_schedule_tickless() {
    for spec in SCHEDULERS {
        same_schedule(&hartstone(), spec, Nanos::from_secs(2), None, false);
        same_schedule(&pair(), spec, ms(700), None, false);
        same_schedule(&overloaded(), spec, ms(300), None, false);
        same_schedule(&overloaded(), spec, ms(300), None, true);
    }
}

#[test]
fn every_uniprocessor_scheduler_gives_the_simulators_schedule_ticked() {
    for spec in SCHEDULERS {
        same_schedule(&hartstone(), spec, Nanos::from_secs(2), Some(ms(4)), false);
        same_schedule(&pair(), spec, ms(700), Some(Nanos::from_us(700)), false);
        same_schedule(&overloaded(), spec, ms(300), Some(ms(1)), true);
    }
}

#[test]
fn phases_give_the_simulators_schedule() {
    let set = hartstone();
    let phases = vec![Phase::parse("1s..1500ms:x2.4").expect("a phase")];
    for spec in ["edf", "fp:rm", "multiburst", "ipi", "hybrid"] {
        let spec: SchedulerSpec = spec.parse().unwrap();
        let d = Nanos::from_secs(3);
        let sim = simulated(&set, &spec, d, None, OnMiss::Skip, &phases, Protocol::None);
        let real = dispatched(&set, &spec, d, None, OnMiss::Skip, &phases, LockRule::None);
        assert_eq!(real, sim, "{spec}");
    }
}

#[test]
fn critical_sections_under_ipcp_dfp_and_plain_locks_give_the_simulators_schedule() {
    let set = rtlab_model::file::load("builtin:priority-inversion")
        .expect("builtin")
        .set;
    let d = ms(1000);
    for (spec, sim_protocol, rule) in [
        ("fp:dm", Protocol::Ipcp, LockRule::Ipcp),
        ("fp:dm", Protocol::None, LockRule::None),
        ("edf", Protocol::Dfp, LockRule::Dfp),
        ("edf", Protocol::None, LockRule::None),
    ] {
        let spec: SchedulerSpec = spec.parse().unwrap();
        let sim = simulated(&set, &spec, d, None, OnMiss::Continue, &[], sim_protocol);
        let real = dispatched(&set, &spec, d, None, OnMiss::Continue, &[], rule);
        assert_eq!(real, sim, "{spec} {rule:?}");
    }
}
