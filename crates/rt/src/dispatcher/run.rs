//! A task set run by dispatchers (`rtlab run --dispatcher -s SCHEDULER`):
//! set-up, the run, the report.
//!
//! One **domain** per dispatcher: a CPU and the tasks it schedules (all
//! of them on one CPU; each CPU's own under a partitioned run). Per domain,
//! before the first release: the task threads (pinned, SCHED_FIFO at the
//! waiting priority, blocked on their futex, their stacks touched), the
//! dispatcher thread (pinned, SCHED_FIFO 99) with its engine, scheduler and
//! job logs. Then one gate opens them all; the coordinator (this thread)
//! moves off the measured CPUs and waits; a watchdog on another CPU
//! watches the dispatchers' heartbeats ([`super::watchdog`]).
//!
//! Every job goes through the executor's record path: the dispatcher folds
//! it into the task's online summary and queues it on the task's
//! pre-faulted ring; the writer thread (off the measured CPUs) streams it
//! to the sinks and folds a second copy of the summaries, which stands in
//! for the dispatcher's should the dispatcher never come back (a stall).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex, PoisonError};
use std::time::Duration;

use rtlab_host::policy::{self, Policy, RtThrottling};
use rtlab_host::usage::peak_rss_bytes;
use rtlab_model::phase::PhasePlan;
use rtlab_model::results::{JobRecord, JobSink, TaskSummary, Totals};
use rtlab_model::{Nanos, Task, TaskSet};
use rtlab_sim::SchedulerSpec;
use rtlab_sys::clock::{monotonic_now, thread_cpu_time};

use super::costs::{CostMeter, DispatcherCosts, Percentiles};
use super::engine::{check_lock_rule, steps_of, Engine, EngineSetup, Step};
use super::global::{GlobalEngine, GlobalSetup};
use super::threads::{
    run_task_thread, RealPlatform, Shared, ThreadOutcome, DISPATCHER_PRIORITY, MAX_STEPS,
    RUN_PRIORITY, WAIT_PRIORITY,
};
use super::virtual_platform::VirtualPlatform;
use super::watchdog::{self, Verdict};
use crate::error::RtError;
use crate::executor::job_log::{JobLog, JobMessage, JobWriter, RunEnd};
use crate::executor::{job_ring_capacities, RunConfig, RunReport, TaskRunMetrics};
use crate::stream::start_streams;
use rtlab_model::policy::{LockingProtocol, MissRule, RealScheduler, RunPolicy, Scope};

/// How long the dispatcher may fail to wake up before the watchdog ends
/// the run (RT throttling alone holds it back up to 50 ms a second).
pub const DEFAULT_WATCHDOG: Nanos = Nanos::from_ms(500);

/// What the dispatcher runs besides the executor's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchConfig {
    /// The scheduler, any uniprocessor one of the simulator's registry (on
    /// a partitioned run, each CPU's).
    pub scheduler: SchedulerSpec,
    /// Decide only at multiples of this (the ticked kernel); `None`:
    /// tickless.
    pub tick: Option<Nanos>,
    /// The critical sections' protocol, applied by the dispatcher (none,
    /// ipcp or dfp).
    pub protocol: LockingProtocol,
    /// How long a dispatcher may miss its wake-up before the watchdog
    /// ends the run.
    pub watchdog: Nanos,
    /// Test hook: the dispatcher hangs from this time on (the watchdog's
    /// tests).
    pub hang_at: Option<Nanos>,
}

impl DispatchConfig {
    /// Tickless, no locking protocol, the default watchdog.
    pub fn new(scheduler: SchedulerSpec) -> DispatchConfig {
        DispatchConfig {
            scheduler,
            tick: None,
            protocol: LockingProtocol::None,
            watchdog: DEFAULT_WATCHDOG,
            hang_at: None,
        }
    }

    /// `tickless` or `tick 4ms`.
    pub fn mode(&self) -> String {
        match self.tick {
            Some(t) => format!("tick {t}"),
            None => "tickless".into(),
        }
    }
}

/// Why the dispatcher refuses a run (before anything changed).
fn refused(setting: &'static str, value: Option<String>, why: String) -> RtError {
    RtError::Setting {
        setting,
        value,
        why,
    }
}

/// True for the global schedulers one dispatcher runs over several CPUs
/// ([`super::global`]).
fn is_global(spec: &SchedulerSpec) -> bool {
    matches!(
        spec,
        SchedulerSpec::Gedf | SchedulerSpec::Gfp(_) | SchedulerSpec::Edzl
    )
}

/// The schedulers a dispatcher runs: every uniprocessor one of the
/// registry, on several CPUs the partitioned ones (each CPU's dispatcher
/// runs EDF or fixed priorities for its tasks), and the global ones gedf,
/// gfp and edzl (returned as they are: one dispatcher runs the rule).
fn per_cpu_scheduler(spec: &SchedulerSpec) -> Result<SchedulerSpec, RtError> {
    match spec {
        SchedulerSpec::Pedf => Ok(SchedulerSpec::Edf),
        SchedulerSpec::Pfp(order) => Ok(SchedulerSpec::Fp(*order)),
        SchedulerSpec::LinuxDl | SchedulerSpec::Gllf | SchedulerSpec::Cedf => Err(refused(
            "scheduler",
            Some(spec.to_string()),
            "the dispatcher runs the global schedulers gedf, gfp:ORDER and edzl (one dispatcher \
             for the run's CPUs) and partitioned ones (pedf, pfp:ORDER, or any uniprocessor \
             scheduler with --cpus and the tasks' cpu or --partition), not this one yet"
                .into(),
        )),
        other => Ok(other.clone()),
    }
}

/// The median cost of one decision of `spec` on `tasks`, timed before the
/// run: the engine on a virtual platform for up to 200 ms of the set's time
/// (the hooks and `pick`), plus two `sched_setattr` calls (raising one
/// thread and lowering another).
pub fn measured_decision_cost(
    tasks: &[Task],
    spec: &SchedulerSpec,
    protocol: LockingProtocol,
) -> Result<Nanos, RtError> {
    let scheduler = spec
        .build(tasks)
        .map_err(|e| refused("scheduler", Some(spec.to_string()), e.to_string()))?;
    let (steps, _) = steps_of(tasks);
    let mut platform = VirtualPlatform::new(steps);
    platform.wall = true;
    let duration = Nanos::from_ms(200);
    let setup = EngineSetup {
        tasks: tasks.to_vec(),
        plan: PhasePlan::none(tasks.len()),
        duration,
        on_miss: MissRule::Skip,
        tick: None,
        protocol,
        ids: Vec::new(),
        min_slice: Nanos::ZERO,
    };
    let logs = tasks.iter().map(|_| JobLog::new(None)).collect();
    let mut engine = Engine::new(setup, scheduler, platform, logs);
    engine.run(&|| false);
    let decide = engine.meter.decide_summary().p50;
    let tid = policy::current_tid();
    let mut calls: Vec<u64> = (0..16)
        .map(|_| {
            let before = monotonic_now();
            let _ = policy::change_thread_policy(tid, &Policy::Other { nice: 0 });
            monotonic_now().saturating_sub(before).as_ns()
        })
        .collect();
    calls.sort_unstable();
    Ok(decide.saturating_add(Nanos::from_ns(2 * calls[calls.len() / 2])))
}

/// True when this process may set real-time priorities: root or
/// CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least the dispatcher's.
pub fn may_set_rt_priorities() -> bool {
    if policy::has_cap_sys_nice() {
        return true;
    }
    rtlab_sys::resource::getrlimit(libc::RLIMIT_RTPRIO)
        .is_ok_and(|l| l.rlim_cur >= u64::from(DISPATCHER_PRIORITY))
}

/// One dispatcher's CPU and tasks (indices into the set).
#[derive(Debug, Clone)]
struct Domain {
    /// The dispatcher's CPU (and its tasks' first one).
    cpu: usize,
    /// The CPUs it decides for: its own, or under a global scheduler all
    /// the run's.
    cpus: Vec<usize>,
    tasks: Vec<usize>,
}

/// The domains of a run: each CPU's tasks under a partitioned placement,
/// else every task on the run's CPU.
fn domains(set: &TaskSet, cfg: &RunConfig) -> Result<Vec<Domain>, RtError> {
    match &cfg.placement {
        Some(p) if p.scope == Scope::Partitioned => Ok(p
            .domains
            .iter()
            .enumerate()
            .filter_map(|(d, cpus)| {
                let tasks = p.tasks_of(d);
                (!tasks.is_empty()).then(|| Domain {
                    cpu: cpus[0],
                    cpus: vec![cpus[0]],
                    tasks,
                })
            })
            .collect()),
        Some(p) if p.scope == Scope::Global && !p.cpus.is_empty() => Ok(vec![Domain {
            cpu: p.cpus[0],
            cpus: p.cpus.clone(),
            tasks: (0..set.tasks.len()).collect(),
        }]),
        Some(_) => Err(refused(
            "cpus",
            None,
            "the dispatcher runs one CPU, one per CPU under a partitioned placement, or one over \
             the run's CPUs under a global scheduler"
                .into(),
        )),
        None => {
            let cpu = cfg.cpu.unwrap_or_else(crate::executor::default_cpu);
            Ok(vec![Domain {
                cpu,
                cpus: vec![cpu],
                tasks: (0..set.tasks.len()).collect(),
            }])
        }
    }
}

/// What [`run_dispatched`] refuses before it changes anything: a scheduler
/// the dispatcher cannot run, a protocol the scheduler does not take, a
/// tick of 0 or shorter than a decision, phases on several CPUs, a set the
/// executor refuses, no right to real-time priorities.
pub fn check(set: &TaskSet, cfg: &RunConfig, d: &DispatchConfig) -> Result<(), RtError> {
    prepare(set, cfg, d).map(|_| ())
}

/// The run's tasks (the set's, then the phases'), the phase plan and the
/// domains, checked.
fn prepare(
    set: &TaskSet,
    cfg: &RunConfig,
    d: &DispatchConfig,
) -> Result<(TaskSet, PhasePlan, Vec<Domain>), RtError> {
    let per_cpu = per_cpu_scheduler(&d.scheduler)?;
    if set.tasks.is_empty() {
        return Err(RtError::Invalid {
            what: format!("task set `{}`", set.name),
            why: "it has no tasks".into(),
        });
    }
    if cfg.duration.is_zero() {
        return Err(refused("duration", None, "must be more than 0".into()));
    }
    if let Some(t) = set
        .tasks
        .iter()
        .find(|t| t.period.is_zero() || t.wcet.is_zero())
    {
        return Err(RtError::Invalid {
            what: format!("task set `{}`", set.name),
            why: format!(
                "task `{}` needs a period and an execution time above 0",
                t.name
            ),
        });
    }
    if let Some(tick) = d.tick {
        if tick.is_zero() {
            return Err(refused(
                "tick",
                Some(tick.to_string()),
                "must be more than 0 (without --tick the dispatcher is tickless)".into(),
            ));
        }
    }
    let plan = PhasePlan::new(set, &cfg.phases, cfg.duration)
        .map_err(|e| refused("phase", None, e.to_string()))?;
    let mut phased = set.clone();
    phased.tasks = PhasePlan::tasks(set, &cfg.phases);
    let domains = domains(&phased, cfg)?;
    if domains.len() > 1 && !cfg.phases.is_empty() {
        return Err(refused(
            "phase",
            None,
            "phases on several CPUs are not modelled (as in the simulator): run them on one CPU"
                .into(),
        ));
    }
    let (steps, _) = steps_of(&phased.tasks);
    if steps.iter().any(|s| s.len() > MAX_STEPS) {
        return Err(refused(
            "protocol",
            None,
            format!("a job has more than {MAX_STEPS} lock steps"),
        ));
    }
    let global = is_global(&d.scheduler);
    if global
        != cfg
            .placement
            .as_ref()
            .is_some_and(|p| p.scope == Scope::Global)
    {
        return Err(refused(
            "cpus",
            None,
            format!(
                "{} with a global placement: gedf, gfp:ORDER and edzl run over the run's CPUs, \
                 every other scheduler on one CPU or partitioned",
                d.scheduler
            ),
        ));
    }
    if global {
        check_global(&phased, cfg, d)?;
    }
    for domain in domains.iter().filter(|_| !global) {
        let tasks: Vec<Task> = domain
            .tasks
            .iter()
            .map(|&i| phased.tasks[i].clone())
            .collect();
        let scheduler = per_cpu
            .build(&tasks)
            .map_err(|e| refused("scheduler", Some(d.scheduler.to_string()), e.to_string()))?;
        let has_sections = tasks.iter().any(|t| !t.critical_sections.is_empty());
        if has_sections || d.protocol != LockingProtocol::None {
            check_lock_rule(d.protocol, scheduler.kind(), &scheduler.name())
                .map_err(|why| refused("protocol", Some(d.protocol.to_string()), why))?;
        }
        if domains.len() > 1 && has_sections {
            return Err(refused(
                "protocol",
                None,
                "critical sections across CPUs (MrsP, FMLP) are not implemented: run them on one CPU"
                    .into(),
            ));
        }
        if let Some(tick) = d.tick {
            let cost = measured_decision_cost(&tasks, &per_cpu, d.protocol)?;
            if tick < cost {
                return Err(refused(
                    "tick",
                    Some(tick.to_string()),
                    format!(
                        "shorter than one decision of {} here (measured {cost}: the scheduler's hooks and pick, and raising and lowering a thread); use a longer tick",
                        d.scheduler
                    ),
                ));
            }
        }
    }
    let allowed = policy::allowed_cpus()?;
    if let Some(domain) = domains.iter().find(|d| !allowed.contains(&d.cpu)) {
        return Err(rtlab_host::HostError::Affinity {
            cpus: vec![domain.cpu],
            allowed,
            why: "not a CPU this process may use".into(),
        }
        .into());
    }
    if !may_set_rt_priorities() {
        return Err(rtlab_host::HostError::NeedsPrivilege {
            what: format!(
                "--dispatcher (SCHED_FIFO priorities {WAIT_PRIORITY}..{DISPATCHER_PRIORITY} for the dispatcher and the task threads)"
            ),
            hint: "; or allow them with RLIMIT_RTPRIO (`ulimit -r 99`)".into(),
        }
        .into());
    }
    Ok((phased, plan, domains))
}

/// What one global dispatcher refuses (as the simulator's global engine
/// does, or because it is not built yet): a tick, phases, critical
/// sections or a locking protocol; and a rule the registry cannot build
/// for the set.
fn check_global(set: &TaskSet, cfg: &RunConfig, d: &DispatchConfig) -> Result<(), RtError> {
    let spec = Some(d.scheduler.to_string());
    if let Some(tick) = d.tick {
        return Err(refused(
            "tick",
            Some(tick.to_string()),
            format!("{}: the global dispatcher is tickless only", d.scheduler),
        ));
    }
    if !cfg.phases.is_empty() {
        return Err(refused(
            "phase",
            None,
            "phases on several CPUs are not modelled (as in the simulator): run them on one CPU"
                .into(),
        ));
    }
    if d.protocol != LockingProtocol::None
        || set.tasks.iter().any(|t| !t.critical_sections.is_empty())
    {
        return Err(refused(
            "protocol",
            None,
            "critical sections under a global scheduler (MrsP, FMLP) are not implemented: run them on one CPU"
                .into(),
        ));
    }
    match d.scheduler.global_rule(&set.tasks) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(refused(
            "scheduler",
            spec,
            "is not a global scheduler".into(),
        )),
        Err(e) => Err(refused("scheduler", spec, e.to_string())),
    }
}

/// Folds the writer's copy of every record into per-task summaries: what
/// the report uses if a dispatcher never returns its own.
#[derive(Clone)]
struct BackupSummaries(Arc<Mutex<Vec<TaskSummary>>>);

impl JobSink for BackupSummaries {
    fn job(&mut self, job: &JobRecord, ended: Nanos) -> std::io::Result<()> {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = all.get_mut(job.task) {
            s.record(job, ended);
        }
        Ok(())
    }
}

/// What one dispatcher thread hands back.
struct DomainResult {
    logs: Vec<JobLog>,
    meter: CostMeter,
    context_switches: u64,
    decisions: u64,
    wakes: u64,
    dispatches: u64,
    lock_operations: u64,
    /// Jobs a global dispatcher moved to another CPU.
    migrations: u64,
    cpu_ns: u64,
    /// The dispatcher thread's CPU time at its end (the disturbance
    /// account's own time).
    cpu_end_ns: u64,
    enact_errors: u64,
    ended: Nanos,
    /// The scheduler's report data (control schedulers' rounds).
    data: Option<serde_json::Value>,
    /// The scheduler panicked: its message.
    died: Option<String>,
}

/// A dispatcher thread's engine: a uniprocessor scheduler for its CPU's
/// tasks, or a global rule deciding for all the run's CPUs.
enum Dispatcher {
    Uni(Box<Engine<RealPlatform>>),
    Global(Box<GlobalEngine<RealPlatform>>),
}

impl Dispatcher {
    /// The engine of `spec` (each CPU's scheduler, or a global one) for
    /// `setup`, deciding for `cpus`.
    fn build(
        spec: &SchedulerSpec,
        setup: EngineSetup,
        cpus: &[usize],
        platform: RealPlatform,
        logs: Vec<JobLog>,
    ) -> Result<Dispatcher, RtError> {
        let bad =
            |e: rtlab_sim::SimError| refused("scheduler", Some(spec.to_string()), e.to_string());
        if !is_global(spec) {
            let scheduler = spec.build(&setup.tasks).map_err(bad)?;
            let engine = Engine::new(setup, scheduler, platform, logs);
            return Ok(Dispatcher::Uni(Box::new(engine)));
        }
        let rule = spec
            .global_rule(&setup.tasks)
            .map_err(bad)?
            .ok_or_else(|| {
                refused(
                    "scheduler",
                    Some(spec.to_string()),
                    "is not a global scheduler".into(),
                )
            })?;
        let global = GlobalSetup {
            tasks: setup.tasks,
            duration: setup.duration,
            on_miss: setup.on_miss,
            cpus: cpus.len(),
            cpu_ids: cpus.to_vec(),
        };
        let engine = GlobalEngine::new(global, rule, platform, logs);
        Ok(Dispatcher::Global(Box::new(engine)))
    }

    fn platform(&mut self) -> &mut RealPlatform {
        match self {
            Dispatcher::Uni(e) => &mut e.platform,
            Dispatcher::Global(e) => &mut e.platform,
        }
    }

    fn hang_at(&mut self, at: Option<Nanos>) {
        match self {
            Dispatcher::Uni(e) => e.hang_at = at,
            Dispatcher::Global(e) => e.hang_at = at,
        }
    }

    fn run(&mut self, stop: &dyn Fn() -> bool) {
        match self {
            Dispatcher::Uni(e) => e.run(stop),
            Dispatcher::Global(e) => e.run(stop),
        }
    }

    /// What it hands back (its own CPU time and death filled in by the
    /// caller).
    fn result(&mut self) -> DomainResult {
        let (meter, logs) = match self {
            Dispatcher::Uni(e) => (std::mem::take(&mut e.meter), std::mem::take(&mut e.logs)),
            Dispatcher::Global(e) => (std::mem::take(&mut e.meter), std::mem::take(&mut e.logs)),
        };
        let mut r = DomainResult {
            logs,
            meter,
            context_switches: 0,
            decisions: 0,
            wakes: 0,
            dispatches: 0,
            lock_operations: 0,
            migrations: 0,
            cpu_ns: 0,
            cpu_end_ns: 0,
            enact_errors: 0,
            ended: Nanos::ZERO,
            data: None,
            died: None,
        };
        match self {
            Dispatcher::Uni(e) => {
                r.data = e.scheduler().data();
                (r.context_switches, r.decisions, r.wakes) =
                    (e.context_switches, e.decisions, e.wakes);
                (r.dispatches, r.lock_operations) = (e.dispatches, e.lock_operations);
                (r.enact_errors, r.ended) = (e.platform.enact_errors, e.ended);
            }
            Dispatcher::Global(e) => {
                (r.context_switches, r.decisions, r.wakes) =
                    (e.context_switches, e.decisions, e.wakes);
                (r.dispatches, r.migrations) = (e.dispatches, e.migrations);
                (r.enact_errors, r.ended) = (e.platform.enact_errors, e.ended);
            }
        }
        r
    }
}

/// What [`run_dispatched`] returns besides the report: the kernel thread
/// ids of the dispatchers (a kernel trace names them), the decision
/// times of every dispatch when asked for.
#[derive(Debug, Clone, Default)]
pub struct DispatchedExtras {
    /// The dispatcher threads' ids.
    pub dispatcher_tids: Vec<i32>,
    /// Every run order, (CLOCK_MONOTONIC ns, thread id), with a kernel
    /// trace (empty otherwise).
    pub orders: Vec<(u64, i32)>,
}

/// [`run_dispatched`], and with [`RunConfig::kernel_trace`] the kernel's
/// schedule of the run's CPUs recorded over it: every job explained (the
/// dispatcher named as a cause of waits), the dispatch latency timed by
/// the kernel (each order to the `sched_switch` that ran the thread), and
/// the task switches the kernel saw. The executor's traced path, for
/// dispatched runs.
pub fn run_traced(
    set: &TaskSet,
    cfg: &RunConfig,
    d: &DispatchConfig,
    interrupt: &AtomicBool,
    mut sinks: Vec<Box<dyn JobSink + Send>>,
) -> Result<crate::executor::TracedRun, RtError> {
    let Some(request) = &cfg.kernel_trace else {
        return run_dispatched(set, cfg, d, interrupt, sinks).map(|(r, w, _)| (r, w, None));
    };
    let all_jobs = crate::executor::JobList::new();
    sinks.push(Box::new(all_jobs.clone()));
    let (_, _, domains) = prepare(set, cfg, d)?;
    let cpus: Vec<usize> = domains.iter().flat_map(|d| d.cpus.clone()).collect();
    let recording = request.start(Some(&cpus))?;
    let (mut report, mut written, extras) = run_inner(set, cfg, d, interrupt, sinks, true)?;
    written.pop();
    let jobs = all_jobs.take();
    let tasks = report
        .tasks
        .iter()
        .zip(report.thread_ids.iter().chain(std::iter::repeat(&None)))
        .map(|(t, id)| (t.metrics.name.clone(), *id))
        .collect();
    // Each job burns its task's C on the thread's CPU clock; under phases
    // C changes, and is left unknown.
    let own_cpu = report
        .tasks
        .iter()
        .enumerate()
        .map(|(i, _)| {
            cfg.phases
                .is_empty()
                .then(|| set.tasks.get(i).map(|t| t.wcet.as_ns()))
                .flatten()
        })
        .collect();
    let threads = rtlab_ktrace::SetThreads {
        tasks,
        class: rtlab_ktrace::ThreadClass::RealTime,
        own_cpu,
        irq_in_task_time: !rtlab_host::disturbance::irq_time_accounted(),
        dispatchers: extras.dispatcher_tids.clone(),
    };
    let traced = request.finish_set(
        recording,
        threads,
        report.start_monotonic_ns,
        Nanos::from_ns(report.ended_ns),
        &jobs,
    );
    if let Ok(t) = &traced {
        let schedule = &t.analysis.schedule;
        let mut meter = CostMeter::new();
        for &(at, tid) in &extras.orders {
            if let Some(ran) = schedule.next_run_of(tid, at) {
                let d = Nanos::from_ns(ran.saturating_sub(at));
                if d < Nanos::from_secs(1) {
                    meter.latency(d);
                }
            }
        }
        let tids: Vec<i32> = report.thread_ids.iter().flatten().copied().collect();
        let switches = task_switches(schedule, &cpus, &tids);
        if let Some(costs) = &mut report.dispatcher {
            costs.kernel_dispatch_latency = Some(Percentiles::from(meter.latency_summary()));
            costs.kernel_task_switches = Some(switches);
        }
    }
    report.kernel_trace = Some(match &traced {
        Ok(t) => rtlab_ktrace::KernelTraceSummary::Read(t.summary.clone()),
        Err(e) => rtlab_ktrace::KernelTraceSummary::Unread {
            error: e.to_string(),
        },
    });
    Ok((
        report,
        written,
        Some(crate::executor::KernelAccount { jobs, traced }),
    ))
}

/// Task switches on `cpus` as the kernel saw them, counted as the
/// simulator counts them: each time one of `tids` got a CPU after another
/// of them had it last (the dispatcher and other threads in between do not
/// count).
pub fn task_switches(schedule: &rtlab_ktrace::Schedule, cpus: &[usize], tids: &[i32]) -> u64 {
    let mut switches = 0;
    for cpu in cpus {
        let Some(c) = schedule.cpus.get(&(*cpu as u32)) else {
            continue;
        };
        let mut last = None;
        for occ in &c.occupancy {
            if tids.contains(&occ.pid) && last != Some(occ.pid) {
                switches += 1;
                last = Some(occ.pid);
            }
        }
    }
    switches
}

/// Runs `set` on real threads under the scheduler of `d`, every job
/// recorded into `sinks` (with the executor's rings and writer). Returns
/// the report (its `dispatcher` field holds the costs), one result per
/// sink, and the dispatchers' thread ids.
///
/// Fails before the first release when the run is refused ([`check`]) or
/// a thread cannot get its CPU or priority. A dispatcher that stalls or
/// dies does not fail the call: the watchdog ends the run, and the report
/// (from what was recorded until then) says why in
/// `dispatcher.watchdog`.
pub fn run_dispatched(
    set: &TaskSet,
    cfg: &RunConfig,
    d: &DispatchConfig,
    interrupt: &AtomicBool,
    sinks: Vec<Box<dyn JobSink + Send>>,
) -> Result<(RunReport, Vec<std::io::Result<()>>, DispatchedExtras), RtError> {
    run_inner(set, cfg, d, interrupt, sinks, false)
}

/// The ring of run orders each dispatcher keeps under a kernel trace.
const ORDERS_RING: usize = 1 << 16;

/// Collects the dispatchers' run orders (on the drainer thread).
#[derive(Default)]
struct Orders(Vec<(u64, i32)>);

impl crate::stream::RecordSink<(u64, i32)> for Orders {
    fn accept(&mut self, _ring: usize, order: (u64, i32)) {
        self.0.push(order);
    }
}

fn run_inner(
    set: &TaskSet,
    cfg: &RunConfig,
    d: &DispatchConfig,
    interrupt: &AtomicBool,
    mut sinks: Vec<Box<dyn JobSink + Send>>,
    keep_orders: bool,
) -> Result<(RunReport, Vec<std::io::Result<()>>, DispatchedExtras), RtError> {
    let (phased, plan, domains) = prepare(set, cfg, d)?;
    let set = &phased;
    let per_cpu = per_cpu_scheduler(&d.scheduler)?;
    let n = set.tasks.len();
    let _throttling_off = if cfg.no_rt_throttling {
        Some(policy::RtThrottlingOff::new()?)
    } else {
        None
    };
    let throttling = RtThrottling::read().ok();
    let _memory = if cfg.mlock {
        Some(policy::lock_memory()?)
    } else {
        None
    };
    let stop = Arc::new(AtomicBool::new(false));
    let run_end = RunEnd {
        start_ns: Arc::new(AtomicU64::new(0)),
        ended_ns: Arc::new(AtomicU64::new(u64::MAX)),
        duration: cfg.duration,
    };
    let backup = BackupSummaries(Arc::new(Mutex::new(vec![TaskSummary::default(); n])));
    let sink_count = sinks.len();
    sinks.push(Box::new(backup.clone()));
    let writer_sink = JobWriter::new(set, run_end.clone(), sinks);
    let measured: Vec<usize> = domains.iter().flat_map(|d| d.cpus.clone()).collect();
    let (rings, writer) = start_streams(
        "rtlab-jobs-writer",
        job_ring_capacities(set),
        JobMessage::FILLER,
        Some(writer_sink),
        measured.first().copied(),
    )?;
    let mut rings: Vec<Option<_>> = rings;
    let (order_rings, orders_drainer) = start_streams(
        "rtlab-dispatch-orders",
        vec![ORDERS_RING; domains.len()],
        (0u64, 0i32),
        keep_orders.then(Orders::default),
        measured.first().copied(),
    )?;
    let mut order_rings: Vec<Option<_>> = order_rings;
    let (steps, _) = steps_of(&set.tasks);
    rtlab_sys::resource::limit_malloc_arenas();
    let threads = domains.iter().map(|d| d.tasks.len()).sum::<usize>() + domains.len();
    let gate = Arc::new(Barrier::new(threads + 1));
    let abort = Arc::new(AtomicBool::new(false));
    let (setup_tx, setup_rx) = mpsc::channel::<Result<(), RtError>>();
    let (thread_tx, thread_rx) = mpsc::channel::<(usize, ThreadOutcome)>();
    let (domain_tx, domain_rx) = mpsc::channel::<(usize, DomainResult)>();
    let mut shareds = Vec::with_capacity(domains.len());
    for (k, domain) in domains.iter().enumerate() {
        let shared = Arc::new(Shared::new(domain.tasks.len(), stop.clone()));
        shareds.push(shared.clone());
        for (local, &task) in domain.tasks.iter().enumerate() {
            let task_steps: Vec<Step> = steps[task].clone();
            let (shared, gate, abort_t) = (shared.clone(), gate.clone(), abort.clone());
            let (setup_tx, thread_tx) = (setup_tx.clone(), thread_tx.clone());
            let cpu = domain.cpu;
            let name = format!(
                "rtlab-{}",
                set.tasks[task].name.chars().take(9).collect::<String>()
            );
            std::thread::Builder::new()
                .name(name.clone())
                .stack_size(crate::executor::TASK_STACK)
                .spawn(move || {
                    shared.slots[local]
                        .tid
                        .store(rtlab_sys::sched::gettid(), Ordering::SeqCst);
                    let setup = policy::set_current_thread_affinity(&[cpu])
                        .and_then(|()| {
                            policy::set_current_thread_policy(&Policy::Fifo {
                                priority: WAIT_PRIORITY,
                            })
                        })
                        .map_err(RtError::from);
                    let ok = setup.is_ok();
                    crate::executor::prefault_stack();
                    let _ = setup_tx.send(setup);
                    gate.wait();
                    if !ok || abort_t.load(Ordering::SeqCst) {
                        return;
                    }
                    let outcome = run_task_thread(&shared, local, &task_steps);
                    let _ = thread_tx.send((task, outcome));
                })
                .map_err(|source| {
                    abort.store(true, Ordering::SeqCst);
                    RtError::spawn(name, source)
                })?;
        }
        // The dispatcher of this domain.
        let tasks: Vec<Task> = domain.tasks.iter().map(|&i| set.tasks[i].clone()).collect();
        let spec = per_cpu.clone();
        let logs: Vec<JobLog> = domain
            .tasks
            .iter()
            .map(|&i| JobLog::new(rings[i].take()))
            .collect();
        let setup_engine = EngineSetup {
            tasks,
            plan: if domains.len() == 1 {
                plan.clone()
            } else {
                PhasePlan::none(domain.tasks.len())
            },
            duration: cfg.duration,
            on_miss: cfg.on_miss,
            tick: d.tick,
            protocol: d.protocol,
            ids: domain.tasks.clone(),
            min_slice: super::engine::MIN_SLICE,
        };
        let (shared_d, gate_d, abort_d) = (shared.clone(), gate.clone(), abort.clone());
        let (setup_tx, domain_tx) = (setup_tx.clone(), domain_tx.clone());
        let cpu = domain.cpu;
        let cpu_ids = domain.cpus.clone();
        let hang_at = d.hang_at;
        let orders = order_rings[k].take();
        let name = format!("rtlab-dispatch{cpu}");
        std::thread::Builder::new()
            .name(name.clone())
            .stack_size(crate::executor::TASK_STACK)
            .spawn(move || {
                shared_d
                    .dispatcher_tid
                    .store(rtlab_sys::sched::gettid(), Ordering::SeqCst);
                let setup = policy::set_current_thread_affinity(&[cpu])
                    .and_then(|()| {
                        policy::set_current_thread_policy(&Policy::Fifo {
                            priority: DISPATCHER_PRIORITY,
                        })
                    })
                    .map_err(RtError::from);
                // Built on its own thread (a scheduler is not Send); the
                // build was checked before anything started.
                let platform = RealPlatform::new(shared_d.clone(), Nanos::ZERO);
                let engine = Dispatcher::build(&spec, setup_engine, &cpu_ids, platform, logs);
                let (setup, engine) = match (setup, engine) {
                    (Ok(()), Ok(e)) => (Ok(()), Some(e)),
                    (Err(e), _) | (Ok(()), Err(e)) => (Err(e), None),
                };
                let ok = setup.is_ok();
                let _ = setup_tx.send(setup);
                drop(setup_tx);
                let Some(mut engine) = engine else {
                    gate_d.wait();
                    return;
                };
                engine.hang_at(hang_at);
                crate::executor::prefault_stack();
                gate_d.wait();
                if !ok || abort_d.load(Ordering::SeqCst) {
                    return;
                }
                let start = Nanos::from_ns(shared_d.start_ns.load(Ordering::SeqCst));
                let mut platform = RealPlatform::new(shared_d.clone(), start);
                platform.orders = orders;
                *engine.platform() = platform;
                let cpu_before = thread_cpu_time();
                // Until the first release.
                rtlab_sys::clock::wait_until(start);
                let stop = shared_d.stop.clone();
                let ran = catch_unwind(AssertUnwindSafe(|| {
                    engine.run(&|| stop.load(Ordering::Relaxed));
                }));
                let died = ran.err().map(|panic| {
                    shared_d.stop.store(true, Ordering::SeqCst);
                    shared_d.wake_all();
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a panic".into())
                });
                let cpu_end = thread_cpu_time();
                let cpu_ns = cpu_end.saturating_sub(cpu_before).as_ns();
                let mut result = engine.result();
                result.cpu_ns = cpu_ns;
                result.cpu_end_ns = cpu_end.as_ns();
                result.died = died;
                let _ = domain_tx.send((k, result));
            })
            .map_err(|source| {
                abort.store(true, Ordering::SeqCst);
                RtError::spawn(name, source)
            })?;
    }
    drop((setup_tx, thread_tx, domain_tx));
    let mut first_error = None;
    for _ in 0..threads {
        match setup_rx.recv() {
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Ok(Ok(())) => {}
            Err(_) => break,
        }
    }
    // The disturbance account's window opens with every thread made and
    // closes once they have reported (nothing is read during the run); the
    // dispatchers and the task threads are the run's own. Under a global
    // scheduler the threads move between the CPUs, so where each was seen
    // at the window's ends says nothing of where its time went: the
    // process's CPU time is shared evenly among the CPUs instead.
    let global = is_global(&d.scheduler);
    let window = first_error.is_none().then(|| {
        if global {
            return rtlab_host::disturbance::Window::open_process(&measured);
        }
        let own: Vec<i32> = shareds
            .iter()
            .flat_map(|s| {
                s.slots
                    .iter()
                    .map(|slot| slot.tid.load(Ordering::SeqCst))
                    .chain([s.dispatcher_tid.load(Ordering::SeqCst)])
            })
            .filter(|&t| t > 0)
            .collect();
        rtlab_host::disturbance::Window::open(&measured, &own)
    });
    let start = monotonic_now().saturating_add(crate::executor::START_DELAY);
    for s in &shareds {
        s.start_ns.store(start.as_ns(), Ordering::SeqCst);
    }
    run_end.start_ns.store(start.as_ns(), Ordering::SeqCst);
    abort.store(first_error.is_some(), Ordering::SeqCst);
    gate.wait();
    if let Some(e) = first_error {
        stop.store(true, Ordering::SeqCst);
        if let Some(w) = writer {
            w.finish().finish();
        }
        return Err(e);
    }
    let _away: Vec<policy::KeptOffCpu> = measured
        .iter()
        .map(|&c| policy::KeptOffCpu::new(c))
        .collect();
    let end = start.saturating_add(cfg.duration);
    let interrupt_request = Arc::new(AtomicBool::new(false));
    let dog = watchdog::spawn(
        shareds.clone(),
        stop.clone(),
        start,
        end,
        d.watchdog,
        interrupt_request.clone(),
        run_end.ended_ns.clone(),
        &measured,
    )?;
    // Collect the dispatchers: each ends at the end of the run; a stalled
    // one is given up once the watchdog has spoken.
    let give_up = end
        .saturating_add(d.watchdog)
        .saturating_add(Nanos::from_secs(5));
    let mut results: Vec<Option<DomainResult>> = (0..domains.len()).map(|_| None).collect();
    let mut received = 0;
    while received < domains.len() {
        if interrupt.load(Ordering::Relaxed) {
            interrupt_request.store(true, Ordering::SeqCst);
        }
        let now = monotonic_now();
        if now >= give_up || dog.fired() {
            break;
        }
        match domain_rx.recv_timeout(Duration::from_millis(20)) {
            Ok((k, r)) => {
                results[k] = Some(r);
                received += 1;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    stop.store(true, Ordering::SeqCst);
    for s in &shareds {
        s.wake_all();
    }
    // A dispatcher the watchdog ended may still come back (it was only
    // late); one that hangs does not.
    while received < domains.len() {
        match domain_rx.recv_timeout(Duration::from_millis(300)) {
            Ok((k, r)) => {
                results[k] = Some(r);
                received += 1;
            }
            Err(_) => break,
        }
    }
    let verdict = dog.finish();
    let mut thread_outcomes: Vec<Option<ThreadOutcome>> = vec![None; n];
    let mut threads_back = 0;
    while threads_back < n {
        match thread_rx.recv_timeout(Duration::from_millis(500)) {
            Ok((i, o)) => {
                thread_outcomes[i] = Some(o);
                threads_back += 1;
            }
            Err(_) => break,
        }
    }
    let mut ended_own: Vec<(i32, u64)> = thread_ids(&domains, &shareds, n)
        .into_iter()
        .zip(&thread_outcomes)
        .filter_map(|(tid, o)| Some((tid?, o.as_ref()?.cpu_time_ns)))
        .collect();
    for (shared, r) in shareds.iter().zip(&results) {
        if let Some(r) = r {
            ended_own.push((shared.dispatcher_tid.load(Ordering::SeqCst), r.cpu_end_ns));
        }
    }
    let disturbance = window.map(|w| w.close(&ended_own));
    let ended_abs = run_end.ended_ns.load(Ordering::SeqCst);
    let interrupted = ended_abs != u64::MAX;
    let written = writer.map_or_else(Vec::new, |w| w.finish().finish());
    let mut written = written;
    written.truncate(sink_count);
    let backup = std::mem::take(&mut *backup.0.lock().unwrap_or_else(PoisonError::into_inner));
    let report = report(
        set,
        cfg,
        d,
        &domains,
        results,
        backup,
        &thread_outcomes,
        verdict,
        interrupted,
        throttling,
        start,
        thread_ids(&domains, &shareds, n),
    );
    let mut report = report;
    report.disturbance = disturbance;
    let extras = DispatchedExtras {
        dispatcher_tids: shareds
            .iter()
            .map(|s| s.dispatcher_tid.load(Ordering::SeqCst))
            .collect(),
        orders: orders_drainer.map_or_else(Vec::new, |o| o.finish().0),
    };
    Ok((report, written, extras))
}

/// Each task's thread id, in the set's order.
fn thread_ids(domains: &[Domain], shareds: &[Arc<Shared>], n: usize) -> Vec<Option<i32>> {
    let mut ids = vec![None; n];
    for (domain, shared) in domains.iter().zip(shareds) {
        for (local, &task) in domain.tasks.iter().enumerate() {
            let tid = shared.slots[local].tid.load(Ordering::SeqCst);
            ids[task] = (tid > 0).then_some(tid);
        }
    }
    ids
}

/// The report of a dispatched run: the executor's fields (every job
/// summarised per task), `scheduler` the one that ran, `tick_ns` its tick,
/// and the costs in `dispatcher`.
#[allow(clippy::too_many_arguments)]
fn report(
    set: &TaskSet,
    cfg: &RunConfig,
    d: &DispatchConfig,
    domains: &[Domain],
    results: Vec<Option<DomainResult>>,
    backup: Vec<TaskSummary>,
    threads: &[Option<ThreadOutcome>],
    verdict: Verdict,
    interrupted: bool,
    throttling: Option<RtThrottling>,
    start: Nanos,
    thread_ids: Vec<Option<i32>>,
) -> RunReport {
    let n = set.tasks.len();
    let global = is_global(&d.scheduler);
    let multi = domains.len() > 1 || global;
    let mut summaries: Vec<Option<TaskSummary>> = vec![None; n];
    let mut meter = CostMeter::new();
    let mut costs = DispatcherCosts {
        scheduler: d.scheduler.to_string(),
        mode: d.mode(),
        dispatchers: domains.len(),
        priorities: format!(
            "SCHED_FIFO: dispatcher {DISPATCHER_PRIORITY}, running thread {RUN_PRIORITY}, waiting threads {WAIT_PRIORITY}"
        ),
        ..DispatcherCosts::default()
    };
    let mut ended = cfg.duration;
    let mut lost = Vec::new();
    let mut data = None;
    let mut jobs_dropped = 0;
    let mut died = None;
    for (k, result) in results.into_iter().enumerate() {
        match result {
            Some(r) => {
                for (log, &task) in r.logs.iter().zip(&domains[k].tasks) {
                    summaries[task] = Some(log.summary);
                }
                meter.merge(&r.meter);
                costs.wakes += r.wakes;
                costs.decisions += r.decisions;
                costs.dispatches += r.dispatches;
                costs.lock_operations += r.lock_operations;
                costs.migrations += r.migrations;
                costs.context_switches += r.context_switches;
                costs.cpu_ns += r.cpu_ns;
                costs.enact_errors += r.enact_errors;
                jobs_dropped += r.logs.iter().map(JobLog::dropped).sum::<u64>();
                ended = ended.min(r.ended);
                if domains.len() == 1 {
                    data = r.data;
                }
                if let Some(why) = r.died {
                    died.get_or_insert(format!(
                        "the dispatcher of CPU {} died (its scheduler panicked: {why})",
                        domains[k].cpu
                    ));
                }
            }
            None => lost.push(domains[k].cpu),
        }
    }
    for (i, s) in summaries.iter_mut().enumerate() {
        if s.is_none() {
            *s = Some(backup.get(i).copied().unwrap_or_default());
        }
    }
    if let Verdict::Stalled { at, why } = &verdict {
        ended = ended.min(*at);
        costs.watchdog = Some(why.clone());
    }
    if let Some(why) = died {
        costs.watchdog = Some(why);
    }
    costs.dispatch_latency = Percentiles::from(meter.latency_summary());
    costs.wake_latency = Percentiles::from(meter.wake_summary());
    costs.post_latency = Percentiles::from(meter.post_summary());
    costs.decision_cost = Percentiles::from(meter.decision_summary());
    costs.decide_cost = Percentiles::from(meter.decide_summary());
    costs.enact_cost = Percentiles::from(meter.enact_summary());
    costs.kernel_context_switches = threads.iter().flatten().map(|t| t.context_switches).sum();
    let seconds = ended.as_secs_f64();
    costs.cpu_share = if seconds > 0.0 {
        costs.cpu_ns as f64 / 1e9 / seconds / domains.len().max(1) as f64
    } else {
        0.0
    };
    let thread_policy = format!("dispatched (SCHED_FIFO {RUN_PRIORITY}/{WAIT_PRIORITY})");
    let tasks: Vec<TaskRunMetrics> = set
        .tasks
        .iter()
        .zip(&summaries)
        .enumerate()
        .map(|(i, (t, s))| {
            let mut m = TaskRunMetrics::from_summary(
                &t.name,
                &s.unwrap_or_default(),
                thread_policy.clone(),
            );
            if multi {
                m.cpus = domains
                    .iter()
                    .find(|d| d.tasks.contains(&i))
                    .map(|d| d.cpus.clone());
            }
            m
        })
        .collect();
    let totals = Totals::of(tasks.iter().map(|t| &t.metrics));
    let lost_tasks = lost
        .iter()
        .flat_map(|cpu| {
            domains
                .iter()
                .filter(move |d| d.cpu == *cpu)
                .flat_map(|d| d.tasks.iter().map(|&i| set.tasks[i].name.clone()))
        })
        .filter(|_| costs.watchdog.is_none())
        .collect();
    RunReport {
        // The threads' kernel policy; the scheduler that ran is
        // `dispatcher.scheduler` (no model scheduler names it).
        policy: RealScheduler {
            policy: RunPolicy::FifoOrder,
            scope: if global {
                Scope::Global
            } else if multi {
                Scope::Partitioned
            } else {
                Scope::Uni
            },
        },
        scheduler: None,
        cpus: multi.then(|| domains.iter().flat_map(|d| d.cpus.clone()).collect()),
        taskset: set.name.clone(),
        duration_ns: cfg.duration.as_ns(),
        ended_ns: ended.as_ns(),
        interrupted,
        cpu: (!multi).then(|| domains[0].cpu),
        protocol: d.protocol,
        on_miss: cfg.on_miss,
        tick_ns: d.tick.map(Nanos::as_ns),
        seed: None,
        jitter: "none".into(),
        lag_controller: false,
        lag_controller_kind: None,
        rt_throttling: throttling.map_or_else(|| "unknown".into(), |t| t.describe_limit()),
        totals,
        context_switches: costs.context_switches,
        context_switches_per_s: if seconds > 0.0 {
            costs.context_switches as f64 / seconds
        } else {
            0.0
        },
        overhead_ns: None,
        idle_ns: None,
        first_miss_ns: totals.first_miss_ns,
        events: None,
        start_deadline_misses: tasks.iter().map(|t| t.start_deadline_misses).sum(),
        tasks,
        lost_tasks,
        scheduler_data: data,
        jobs_dropped,
        lock_errors: 0,
        peak_rss_bytes: peak_rss_bytes(),
        kernel_trace: None,
        thread_ids,
        start_monotonic_ns: start.as_ns(),
        phases: cfg.phases.iter().map(ToString::to_string).collect(),
        budget_changes: None,
        dispatcher: Some(costs),
        disturbance: None,
    }
}
