//! The engine on a virtual platform (threads that run exactly as told, no
//! time to decide or to switch) gives the simulator's schedule job for job,
//! for every uniprocessor scheduler, tickless and ticked, with phases,
//! skips and critical sections: the dispatcher runs the simulator's
//! scheduler, not a copy of it.

use std::cell::RefCell;
use std::rc::Rc;

use rtlab_model::phase::{Phase, PhasePlan};
use rtlab_model::policy::{LockingProtocol, MissRule};
use rtlab_model::results::JobRecord;
use rtlab_model::{Nanos, Task, TaskSet};
use rtlab_sim::{SchedulerSpec, SimConfig, Simulator};

use super::engine::{steps_of, Engine, EngineSetup};
use super::virtual_platform::VirtualPlatform;
use crate::executor::job_log::{JobLog, JobMessage};
use crate::stream::{record_ring, RecordReceiver};

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
    on_miss: MissRule,
    phases: &[Phase],
    protocol: LockingProtocol,
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
    on_miss: MissRule,
    phases: &[Phase],
    protocol: LockingProtocol,
) -> (Vec<Key>, u64) {
    dispatched_with(set, spec, duration, tick, on_miss, phases, protocol, |_| {})
}

/// [`dispatched`] on a platform `adjust` sets up (threads that end their
/// bursts themselves as the real ones, a late timer).
#[allow(clippy::too_many_arguments)]
fn dispatched_with(
    set: &TaskSet,
    spec: &SchedulerSpec,
    duration: Nanos,
    tick: Option<Nanos>,
    on_miss: MissRule,
    phases: &[Phase],
    protocol: LockingProtocol,
    adjust: impl FnOnce(&mut VirtualPlatform),
) -> (Vec<Key>, u64) {
    let tasks = PhasePlan::tasks(set, phases);
    let plan = PhasePlan::new(set, phases, duration).expect("phases");
    let scheduler = spec.build(&tasks).expect("builds");
    let (steps, _) = steps_of(&tasks);
    let (logs, mut receivers) = job_logs(tasks.len());
    let setup = EngineSetup {
        tasks,
        plan,
        duration,
        on_miss,
        tick,
        protocol,
        ids: Vec::new(),
        min_slice: Nanos::ZERO,
    };
    let mut platform = VirtualPlatform::new(steps);
    adjust(&mut platform);
    let mut engine = Engine::new(setup, scheduler, platform, logs);
    engine.run(&|| false);
    (recorded(&mut receivers, key), engine.context_switches)
}

/// One job log per task, each writing to a ring the test reads.
pub(super) fn job_logs(n: usize) -> (Vec<JobLog>, Vec<RecordReceiver<JobMessage>>) {
    let mut receivers = Vec::with_capacity(n);
    let logs = (0..n)
        .map(|_| {
            let (tx, rx) = record_ring(100_000, JobMessage::FILLER);
            receivers.push(rx);
            JobLog::new(Some(tx))
        })
        .collect();
    (logs, receivers)
}

/// Every job the engine recorded, as `key` sees it, sorted.
pub(super) fn recorded<K: Ord>(
    receivers: &mut [RecordReceiver<JobMessage>],
    key: impl Fn(&JobRecord) -> K,
) -> Vec<K> {
    let mut records = Vec::new();
    for rx in receivers {
        rx.drain(|m| match m {
            JobMessage::Job(r) => records.push(key(&r)),
            JobMessage::Unstarted { .. } => panic!("the engine records every job one by one"),
        });
    }
    records.sort();
    records
}

fn same_schedule(set: &TaskSet, spec: &str, duration: Nanos, tick: Option<Nanos>, skip: bool) {
    let spec: SchedulerSpec = spec.parse().expect("a scheduler");
    let on_miss = if skip {
        MissRule::Skip
    } else {
        MissRule::Continue
    };
    let sim = simulated(
        set,
        &spec,
        duration,
        tick,
        on_miss,
        &[],
        LockingProtocol::None,
    );
    let real = dispatched(
        set,
        &spec,
        duration,
        tick,
        on_miss,
        &[],
        LockingProtocol::None,
    );
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
        let sim = simulated(
            &set,
            &spec,
            d,
            None,
            MissRule::Skip,
            &phases,
            LockingProtocol::None,
        );
        let real = dispatched(
            &set,
            &spec,
            d,
            None,
            MissRule::Skip,
            &phases,
            LockingProtocol::None,
        );
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
        ("fp:dm", LockingProtocol::Ipcp, LockingProtocol::Ipcp),
        ("fp:dm", LockingProtocol::None, LockingProtocol::None),
        ("edf", LockingProtocol::Dfp, LockingProtocol::Dfp),
        ("edf", LockingProtocol::None, LockingProtocol::None),
    ] {
        let spec: SchedulerSpec = spec.parse().unwrap();
        let sim = simulated(&set, &spec, d, None, MissRule::Continue, &[], sim_protocol);
        let real = dispatched(&set, &spec, d, None, MissRule::Continue, &[], rule);
        assert_eq!(real, sim, "{spec} {rule:?}");
    }
}

/// Threads that end their bursts themselves (the real platform's way: a
/// burst counted on the thread's CPU clock, the engine's timer only a
/// backstop 500 us later) give the simulator's schedule too, for every
/// scheduler that asks for burst or quantum ends, tickless. (A backstop
/// taken for a burst end would show as a job run 500 us too long.)
#[test]
fn bursts_ended_by_the_threads_give_the_simulators_schedule() {
    for spec in [
        "rr:2ms",
        "rr:1ms:linux",
        "ipi",
        "multiburst",
        "multiburst:wake=immediate",
        "multiburst:wake=next-burst,burst=1ms",
        "edf",
    ] {
        let spec: SchedulerSpec = spec.parse().unwrap();
        for (set, d) in [(hartstone(), Nanos::from_secs(2)), (overloaded(), ms(300))] {
            let run = |budgets| {
                let on_miss = MissRule::Continue;
                let none = LockingProtocol::None;
                dispatched_with(&set, &spec, d, None, on_miss, &[], none, |p| {
                    p.budgets = budgets
                })
            };
            let sim = simulated(
                &set,
                &spec,
                d,
                None,
                MissRule::Continue,
                &[],
                LockingProtocol::None,
            );
            assert_eq!(run(true), sim, "{spec} on {}", set.name);
        }
    }
}

/// A ticked kernel counts time in ticks: a dispatcher whose timer wakes it
/// 7 us after each tick still ends a 2 ms quantum or a burst at the tick
/// the simulator does, not one tick later (its clock is the tick it woke
/// for, and the running job is credited in it). Every job, its preemptions
/// and the task switches are the simulator's; a finish moves by at most
/// the lateness (the thread runs on until the dispatcher is awake).
#[test]
fn a_late_timer_does_not_lengthen_a_ticked_quantum() {
    let late = Nanos::from_us(7);
    for spec in ["rr:2ms", "multiburst", "ipi", "edf", "fp:rm"] {
        let spec: SchedulerSpec = spec.parse().unwrap();
        let (set, d, tick) = (hartstone(), Nanos::from_secs(2), Some(ms(1)));
        let (on_miss, none) = (MissRule::Continue, LockingProtocol::None);
        let (real, real_switches) =
            dispatched_with(&set, &spec, d, tick, on_miss, &[], none, |p| {
                p.timer_lateness = late
            });
        let (sim, sim_switches) = simulated(&set, &spec, d, tick, on_miss, &[], none);
        assert_eq!(real_switches, sim_switches, "{spec}: task switches");
        assert_eq!(real.len(), sim.len(), "{spec}: jobs");
        for (r, s) in real.iter().zip(&sim) {
            let same = (r.0, r.1, r.2, r.3, r.6) == (s.0, s.1, s.2, s.3, s.6);
            let near = |a: Option<Nanos>, b: Option<Nanos>| match (a, b) {
                (Some(a), Some(b)) => a.max(b) - a.min(b) <= late,
                (a, b) => a == b,
            };
            assert!(
                same && near(r.4, s.4) && near(r.5, s.5),
                "{spec}: {r:?} against {s:?}"
            );
        }
    }
}
