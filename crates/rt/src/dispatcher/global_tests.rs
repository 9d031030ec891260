//! The global engine on a virtual platform (threads that run exactly as
//! told, no time to decide, switch or migrate) gives the simulator's
//! global schedule job for job: the same start and finish, the same CPUs,
//! the same preemptions and migrations, for gedf, gfp and edzl on 2 and 3
//! CPUs, with backlogs and skips. The dispatcher decides with the
//! simulator's rule and decision, not a copy of them.

use std::cell::RefCell;
use std::rc::Rc;

use rtlab_model::policy::MissRule;
use rtlab_model::results::{JobRecord, JobSink};
use rtlab_model::{Nanos, Platform as Cpus, Task, TaskSet};
use rtlab_sim::{SchedulerSpec, SimConfig};

use super::global::{GlobalEngine, GlobalSetup};
use super::virtual_cpus::VirtualCpus;
use super::virtual_tests::{job_logs, recorded};

/// What must agree: the job, its times, its CPUs, its preemptions and
/// migrations.
type Key = (
    usize,
    u64,
    Nanos,
    Option<Nanos>,
    Option<Nanos>,
    Option<u32>,
    Option<u32>,
    u64,
    u64,
);

fn key(r: &JobRecord) -> Key {
    (
        r.task,
        r.job,
        r.release,
        r.start,
        r.finish,
        r.start_cpu,
        r.cpu,
        r.involuntary_switches,
        r.migrations,
    )
}

struct Collect(Rc<RefCell<Vec<Key>>>);

impl JobSink for Collect {
    fn job(&mut self, r: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        self.0.borrow_mut().push(key(r));
        Ok(())
    }
}

/// The simulator's records, context switches and migrations.
fn simulated(
    set: &TaskSet,
    spec: &SchedulerSpec,
    d: Nanos,
    on_miss: MissRule,
) -> (Vec<Key>, u64, u64) {
    let mut config = SimConfig::new(d);
    config.on_miss = on_miss;
    let records: Rc<RefCell<Vec<Key>>> = Rc::default();
    let run = rtlab_sim::multi::run(set, spec, &config, Some(Box::new(Collect(records.clone()))))
        .expect("simulates");
    let mut records = records.take();
    records.sort();
    (records, run.report.context_switches, run.report.migrations)
}

/// The global engine's, on the virtual platform.
fn dispatched(
    set: &TaskSet,
    spec: &SchedulerSpec,
    d: Nanos,
    on_miss: MissRule,
) -> (Vec<Key>, u64, u64) {
    let rule = spec
        .global_rule(&set.tasks)
        .expect("builds")
        .expect("a global rule");
    let (logs, mut receivers) = job_logs(set.tasks.len());
    let setup = GlobalSetup {
        tasks: set.tasks.clone(),
        duration: d,
        on_miss,
        cpus: set.processors() as usize,
        cpu_ids: Vec::new(),
    };
    let platform = VirtualCpus::new(set.tasks.len());
    let mut engine = GlobalEngine::new(setup, rule, platform, logs);
    engine.run(&|| false);
    (
        recorded(&mut receivers, key),
        engine.context_switches,
        engine.migrations,
    )
}

fn same_schedule(set: &TaskSet, spec: &str, d: Nanos, on_miss: MissRule) {
    let spec: SchedulerSpec = spec.parse().expect("a scheduler");
    let sim = simulated(set, &spec, d, on_miss);
    let real = dispatched(set, &spec, d, on_miss);
    assert!(!sim.0.is_empty());
    assert_eq!(real.0.len(), sim.0.len(), "{spec} on {}: jobs", set.name);
    for (r, s) in real.0.iter().zip(&sim.0) {
        assert_eq!(r, s, "{spec} on {} ({on_miss:?})", set.name);
    }
    assert_eq!(real.1, sim.1, "{spec} on {}: context switches", set.name);
    assert_eq!(real.2, sim.2, "{spec} on {}: migrations", set.name);
}

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

fn builtin(name: &str) -> TaskSet {
    rtlab_model::file::load(&format!("builtin:{name}"))
        .expect("builtin")
        .set
}

/// Five tasks on 2 CPUs, U = 1.6, offsets and unequal periods: jobs are
/// preempted and resume on the other CPU.
fn migrating() -> TaskSet {
    TaskSet::new(
        "migrating",
        vec![
            Task::new("a", ms(10), ms(3)),
            Task::new("b", ms(15), ms(6)).with_offset(ms(1)),
            Task::new("c", ms(20), ms(7)).with_offset(ms(2)),
            Task::new("d", ms(30), ms(6)),
            Task::new("e", ms(40), ms(8)).with_offset(ms(5)),
        ],
    )
    .on_platform(Cpus::new(2))
}

/// Over 2 on 2 CPUs: misses, backlogs and skips.
fn overloaded() -> TaskSet {
    TaskSet::new(
        "overloaded",
        vec![
            Task::new("a", ms(4), ms(3)),
            Task::new("b", ms(6), ms(4)).with_offset(ms(1)),
            Task::new("c", ms(10), ms(5)),
            Task::new("d", ms(8), ms(2)).with_offset(ms(3)),
        ],
    )
    .on_platform(Cpus::new(2))
}

/// Seven tasks on 3 CPUs.
fn three() -> TaskSet {
    TaskSet::new(
        "three",
        vec![
            Task::new("a", ms(5), ms(2)),
            Task::new("b", ms(7), ms(3)),
            Task::new("c", ms(9), ms(4)).with_offset(ms(1)),
            Task::new("d", ms(11), ms(5)),
            Task::new("e", ms(13), ms(3)).with_offset(ms(2)),
            Task::new("f", ms(17), ms(6)),
            Task::new("g", ms(23), ms(4)),
        ],
    )
    .on_platform(Cpus::new(3))
}

#[test]
fn global_schedulers_give_the_simulators_global_schedule_job_for_job() {
    for spec in ["gedf", "gfp:rm", "gfp:dm", "edzl"] {
        same_schedule(&builtin("dhall"), spec, ms(1000), MissRule::Continue);
        same_schedule(&migrating(), spec, ms(600), MissRule::Continue);
        same_schedule(&three(), spec, ms(500), MissRule::Continue);
        same_schedule(&overloaded(), spec, ms(300), MissRule::Continue);
        same_schedule(&overloaded(), spec, ms(300), MissRule::Skip);
    }
}

/// The schedules differ where the schedulers do (Dhall's effect: G-EDF
/// misses the heavy task's deadline, EDZL does not), so the test above
/// compares schedules, not one schedule three times.
#[test]
fn edzl_meets_dhalls_set_where_gedf_misses() {
    let set = builtin("dhall");
    let missed = |spec: &str| {
        let (records, _, _) =
            dispatched(&set, &spec.parse().unwrap(), ms(1000), MissRule::Continue);
        let deadline = |r: &Key| set.tasks[r.0].deadline + r.2;
        records
            .iter()
            .filter(|r| deadline(r) <= ms(1000) && r.4.is_none_or(|f| f > deadline(r)))
            .count()
    };
    assert!(missed("gedf") > 0);
    assert_eq!(missed("edzl"), 0);
}
