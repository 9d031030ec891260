//! The real-thread executor (`rtlab run`): one thread per task, released at
//! offset + k*T on an absolute timeline, each job burning its WCET as CPU
//! time, every job recorded.
//!
//! Paper 000 (section 4.2) runs the same task sets first-in-first-out,
//! deadline monotonic and EDF on Linux; paper 004 uses synthetic threads
//! with exact execution times and detects deadline misses; paper 002's
//! Hartstone task loop is "wait for the next release, do the work, check the
//! deadline". This module is that loop:
//!
//! ```text
//! for k = 0, 1, ...:   r = start + offset + k*T;  stop when r >= end
//!     wait_until(r + i ns)              (i = declaration index: the tie-break)
//!     s = now;  burn C of thread CPU time (stoppable);  f = now
//!     record (r, r + D, s, f, context switches during [s, f], CPU)
//! ```
//!
//! * **No drift**: releases are computed from the start, never from the
//!   previous wake-up; a late job does not move later releases. A job
//!   released while its predecessor still runs starts when that one is done
//!   (`--on-miss continue`), or, with `skip`, a release that finds a job of
//!   its task pending past its deadline is skipped (the simulator's rule:
//!   the next release is the first period boundary after completion).
//! * **Tie-break**: the thread of the task declared i-th sleeps until r + i
//!   ns. hrtimers expire in time order, so simultaneous releases wake in
//!   declaration order; with SCHED_FIFO at one priority (`fifo-order`) that
//!   is the order they run in, as in paper 000's Lingua Franca runtime. The
//!   recorded release stays r.
//! * **Always ends**: a watchdog thread (SCHED_FIFO 99 when it may, on
//!   another CPU than the tasks when there is one) sets a stop flag at the
//!   end of `--duration` or on Ctrl-C; the burn loop checks it between clock
//!   reads, so an overrunning job stops within microseconds of the end once
//!   it has the CPU. Releases at or after the end are not made.
//! * **Recorded once, in constant memory**: each thread folds every release
//!   before the end (started or not, finished or not) into its online
//!   summary ([`TaskSummary`], O(1) per job) and, when job files are asked
//!   for, queues the record on its own pre-faulted ring, which a writer
//!   thread off the task CPU streams to the files ([`job_log`]). Everything
//!   a thread touches after its first release (summary, ring, skip state,
//!   stack) is allocated and touched before it: nothing allocates or faults
//!   on the real-time path, and memory does not grow with `--duration`.
//! * **Critical sections**: a job with `critical_sections` burns to each
//!   lock step, takes or releases the resource's shared pthread mutex
//!   (`--protocol`: plain, inheriting or ceiling; see [`locks`]) and records
//!   the time spent inside `pthread_mutex_lock` as its lock wait; a stopped
//!   job releases every lock it holds, so no thread stays blocked.
//! * **Off the task CPU**: the watchdog, the job-file writer and, while the
//!   task threads run, the coordinating thread stay on the other CPUs.
//! * **SCHED_DEADLINE budgets** are C + margin, with `SCHED_FLAG_RECLAIM`
//!   unless [`RunConfig::edf_reclaim`] is off (why: see that field).
//! * **Phases** ([`phases`], `RunConfig::phases`): a release moves past
//!   the phases that suspend its task, a phase's own tasks release only in
//!   it, and each job burns its C scaled by the phase its release falls in,
//!   all read from `rtlab_model::phase::PhasePlan` (the simulator's
//!   interpretation); SCHED_DEADLINE budgets per segment are precomputed.
//! * **Context switches** per job: `getrusage(RUSAGE_THREAD)` before and
//!   after the job (`ru_nivcsw` counts preemptions, `ru_nvcsw` blocking).

pub mod job_files;
pub mod job_log;
pub mod locks;
pub mod phases;
pub mod placement;
pub mod policy_map;
pub mod record;
mod skip;

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;

use rtlab_model::phase::{Phase, PhasePlan};
use rtlab_model::policy::{RealScheduler, RunPolicy};
use rtlab_model::results::Totals;
use rtlab_model::{Nanos, Task, TaskSet};

use crate::error::RtError;
use crate::lag::{ControllerKind, LagController, Waiter};
use crate::stream::start_streams;
use rtlab_host::dl_bandwidth::{self, DomainCapacity};
use rtlab_host::policy::{self, Policy, RtThrottling};
use rtlab_host::usage::{peak_rss_bytes, thread_switches};
use rtlab_host::HostError;
use rtlab_sys::clock::{monotonic_now, MonotonicClock};

pub use job_files::{
    ChromeTrace, JobList, JobSink, JobsCsv, JOBS_CSV_BLOCKED_COLUMN, JOBS_CSV_HEADER,
};
pub use job_log::job_ring_capacities;
pub use locks::{check_protocol, LockingProtocol, LOCK_PROTOCOLS};
pub use phases::{BudgetChanges, DeadlineBudgets};
pub use placement::Placement;
pub use policy_map::{deadline_runtime, rr_timeslice, thread_policies};
pub use record::{JobRecord, RunReport, TaskOutcome, TaskRunMetrics};
pub use rtlab_host::cpuset::{CpusetDoor, DomainCpusets, ExclusiveCpuset};
pub use rtlab_ktrace::{KernelTrace, Traced};
use rtlab_ktrace::{KernelTraceSummary, ThreadClass};
pub use rtlab_model::policy::Scope;
pub use rtlab_model::results::TaskSummary;

use job_log::{JobLog, JobMessage, JobWriter, RunEnd};
use locks::{Resources, SectionPlan};
use skip::Pending;

pub use rtlab_model::policy::MissRule;

/// The miss rules a real run offers, for messages (`abort` is the
/// simulator's only: a thread cannot be removed in the middle of a job).
pub const OVERRUN_RULES: &str = "continue or skip";

/// How to run a task set.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Length of the run; releases at or after it are not made.
    pub duration: Nanos,
    /// The policy of the task threads.
    pub policy: RunPolicy,
    /// Pin every task thread to this CPU (`None`: let them roam).
    pub cpu: Option<usize>,
    /// MissRule handling.
    pub on_miss: MissRule,
    /// Wait for releases with a lag controller (gain 1): the robust one, or
    /// paper 000's Algorithm 2 (outlier threshold = the task's period);
    /// `None`: plain absolute sleeps.
    pub lag_controller: Option<ControllerKind>,
    /// SCHED_DEADLINE budget margin over C (default: max(5% of C, 100 us)).
    pub edf_margin: Option<Nanos>,
    /// Under SCHED_DEADLINE, let a job reclaim the bandwidth the other
    /// threads leave unused (`SCHED_FLAG_RECLAIM`, GRUB; see
    /// [`policy::set_current_thread_policy_reclaiming`]) instead of being
    /// throttled the moment its budget is spent (default: true).
    ///
    /// Why it is the default: on a virtual machine the kernel charges time
    /// the guest never saw (the vCPU stopped by the host, then resumed) to
    /// the running thread's runtime as if it had computed. The job's own
    /// work is measured on the same clock and absorbs such a stall, but a
    /// stall at the end of a job or in the executor's few microseconds
    /// around it overshoots the budget (C + margin), and the constant
    /// bandwidth server throttles the job until its kernel deadline (its
    /// wake-up + D, later than release + D): a miss of a set that
    /// EDF schedules, at any utilisation. Hartstone test 1 under EDF ended
    /// at iteration 2..24 that way (README "Hartstone": before and after).
    /// `false` keeps hard CBS budgets (a job past C + margin is throttled),
    /// e.g. to study budget overruns.
    pub edf_reclaim: bool,
    /// `mlockall` for the run.
    pub mlock: bool,
    /// Switch RT throttling and SCHED_DEADLINE admission control off for
    /// the run (`sched_rt_runtime_us = -1`, restored afterwards).
    pub no_rt_throttling: bool,
    /// The protocol of the critical sections' mutexes (see [`locks`]).
    pub protocol: LockingProtocol,
    /// A multiprocessor run (`--cpus LIST`): its CPUs, domains and each
    /// task's domain (see [`placement`]); `cpu` is then `None`.
    pub placement: Option<Placement>,
    /// Phases (`--phase`, `--overload`, a file's modes): C scaled, tasks
    /// suspended or added in windows of the run, read as the simulator
    /// reads them ([`PhasePlan`]; see [`phases`]).
    pub phases: Vec<Phase>,
    /// Record the kernel's schedule of the run's CPUs and explain every
    /// job by it (`--kernel-trace`; see [`run_traced`]).
    pub kernel_trace: Option<KernelTrace>,
}

impl RunConfig {
    /// Defaults: continue, pinned to CPU 1 when the machine has two CPUs or
    /// more (else CPU 0), plain waits, default margin, memory locked.
    pub fn new(duration: Nanos, policy: RunPolicy) -> RunConfig {
        RunConfig {
            duration,
            policy,
            cpu: Some(default_cpu()),
            on_miss: MissRule::Continue,
            lag_controller: None,
            edf_margin: None,
            edf_reclaim: true,
            mlock: true,
            no_rt_throttling: false,
            protocol: LockingProtocol::None,
            placement: None,
            phases: Vec::new(),
            kernel_trace: None,
        }
    }

    /// The run's scheduler as the user names it: the policy on one CPU, or
    /// with the placement's scope on several (`linux-dl`, `pedf`, `cedf`,
    /// `gfp:ORDER`, `pfp:ORDER`).
    pub fn scheduler(&self) -> RealScheduler {
        RealScheduler {
            policy: self.policy,
            scope: self.placement.as_ref().map_or(Scope::Uni, |p| p.scope),
        }
    }
}

/// CPU 1 when this process may use it (CPU 0 takes most interrupts and
/// housekeeping), else the first CPU it may use.
pub fn default_cpu() -> usize {
    let allowed = policy::allowed_cpus().unwrap_or_default();
    if allowed.contains(&1) {
        1
    } else {
        allowed.first().copied().unwrap_or(0)
    }
}

/// How long after the threads are set up the first release is: enough for
/// every thread to reach its first sleep.
pub(crate) const START_DELAY: Nanos = Nanos::from_ms(50);

/// How long after the threads are set up the run starts: [`START_DELAY`],
/// or, under SCHED_DEADLINE, at least `T - offset` of every task with a
/// constrained deadline (D < T).
///
/// Linux throttles a constrained SCHED_DEADLINE task that wakes after its
/// kernel deadline but before its kernel next period, until that period
/// (`dl_check_constrained_dl`, kernel/sched/deadline.c); the kernel's
/// timeline starts when `sched_setattr` made the thread SCHED_DEADLINE
/// (deadline = then + D, next period = then + T). A first release between
/// those two instants would wait for the kernel's period, which has
/// nothing to do with the run's timeline (up to T - D late: the
/// priority-inversion example's high task started 45 ms late). A first
/// release at least T after the policy was set is at or past that period,
/// so it runs at once and restarts the kernel's timeline at the release.
/// The delay is counted from the gate, which [`gate_delay`] opens at or
/// past every thread's first period, where the kernel's timeline restarts.
pub fn first_release_delay(set: &TaskSet, policy: RunPolicy) -> Nanos {
    if policy != RunPolicy::Edf {
        return START_DELAY;
    }
    set.tasks
        .iter()
        .filter(|t| t.deadline < t.period)
        .map(|t| t.period.saturating_sub(t.offset))
        .fold(START_DELAY, Nanos::max)
}

/// How long the threads, set up, wait before the gate opens: under
/// SCHED_DEADLINE, the longest period T of a task with D < T; else zero.
///
/// The gate's wake-up is a wake-up in the kernel's eyes: a constrained
/// thread woken between its kernel deadline (`sched_setattr` + D) and its
/// next period (+ T) is throttled until that period and comes back with a
/// deadline a period later (`dl_check_constrained_dl`), behind tasks with
/// later deadlines at its first release (seen on a loaded machine, where
/// the other threads' set-up took longer than D). Opened T after the last
/// `sched_setattr`, the gate wakes every thread at or past its period, so
/// the kernel starts its timeline afresh at the gate, and
/// [`first_release_delay`] puts the first release a period after that.
pub fn gate_delay(set: &TaskSet, policy: RunPolicy) -> Nanos {
    if policy != RunPolicy::Edf {
        return Nanos::ZERO;
    }
    set.tasks
        .iter()
        .filter(|t| t.deadline < t.period)
        .map(|t| t.period)
        .fold(Nanos::ZERO, Nanos::max)
}

/// How long a refused SCHED_DEADLINE admission is retried, beyond one
/// period (see `set_policy_waiting_for_released_bandwidth`).
const ADMISSION_PATIENCE: Nanos = Nanos::from_ms(500);

/// Bytes of its stack a task thread touches before its first release, so
/// that the loop (which needs a few KiB) never faults a stack page in.
const STACK_PREFAULT: usize = 64 * 1024;

/// Stack of a task thread: the prefaulted part and room for the set-up
/// code, small so that `mlockall` locks little per thread.
pub(crate) const TASK_STACK: usize = 256 * 1024;

/// Runs `set` on real threads. `interrupt` (e.g. the Ctrl-C flag) ends the
/// run early; what was recorded is returned. No job records are kept: see
/// [`run_recording`] for files.
///
/// Fails before the first release when a thread cannot get its policy,
/// affinity or cpuset (the first such error, explained).
pub fn run(set: &TaskSet, cfg: &RunConfig, interrupt: &AtomicBool) -> Result<RunReport, RtError> {
    run_recording(set, cfg, interrupt, Vec::new()).map(|(report, _)| report)
}

/// What [`run_recording`] refuses before it changes anything (the set,
/// the protocol with the policy, each thread's policy), for a caller that
/// must know before it waits for the CPU (the per-CPU measurement lock).
pub fn check(set: &TaskSet, cfg: &RunConfig) -> Result<(), RtError> {
    let (set, plan) = phases::phased_set(set, cfg)?;
    let mut policies = checked_policies(&set, cfg)?;
    if cfg.no_rt_throttling || plan.is_empty() {
        return Ok(());
    }
    let throttling = RtThrottling::read().ok();
    fit_to_admission(&set, cfg, throttling, &mut policies)?;
    let budgets = DeadlineBudgets::new(&set, &plan, &policies, cfg.duration);
    match admitted_limit(cfg, throttling) {
        Some(limit) => budgets.check(&cfg.phases, limit),
        None => Ok(()),
    }
}

fn checked_policies(set: &TaskSet, cfg: &RunConfig) -> Result<Vec<Policy>, RtError> {
    check_set(set, cfg)?;
    check_protocol(cfg.protocol, cfg.policy).map_err(|why| RtError::Setting {
        setting: "protocol",
        value: Some(cfg.protocol.name().into()),
        why,
    })?;
    if cfg.on_miss == MissRule::Abort {
        return Err(RtError::Setting {
            setting: "on-miss",
            value: Some(cfg.on_miss.name().into()),
            why: format!("real threads cannot abort a job; use {OVERRUN_RULES}"),
        });
    }
    let policies = thread_policies(set, cfg.policy, cfg.edf_margin)?;
    for p in &policies {
        p.validate()?;
    }
    if let Some(placement) = &cfg.placement {
        check_placement(set, cfg, placement)?;
    }
    Ok(policies)
}

/// Refuses a multiprocessor run that cannot be set up, before anything is
/// changed: CPUs offline, missing, too many or not allowed, a placement
/// that does not cover every task, a domain whose SCHED_DEADLINE
/// bandwidth is over the kernel's admission limit, cpusets of another tool
/// in the way.
fn check_placement(set: &TaskSet, cfg: &RunConfig, placement: &Placement) -> Result<(), RtError> {
    let online = rtlab_host::platform::online_cpus();
    let allowed = policy::allowed_cpus()?;
    placement.check_cpus(&online, &allowed)?;
    if placement.task_domain.len() != set.tasks.len()
        || placement
            .task_domain
            .iter()
            .any(|&d| d >= placement.domains.len())
    {
        return Err(RtError::Invalid {
            what: format!("placement of task set `{}`", set.name),
            why: "every task needs a domain among the run's CPUs".into(),
        });
    }
    if cfg.policy.is_deadline() {
        let mut policies = thread_policies(set, cfg.policy, cfg.edf_margin)?;
        let throttling = if cfg.no_rt_throttling {
            None
        } else {
            RtThrottling::read().ok()
        };
        fit_to_admission(set, cfg, throttling, &mut policies)?;
        DomainCpusets::check(&placement.domains, &online)?;
    }
    Ok(())
}

/// [`run`], with every job also written to `sinks` as the run goes (on a
/// writer thread, through one pre-faulted ring per task; see [`job_log`]).
/// Returns the report and one result per sink: a sink that failed stopped
/// receiving jobs at its first error, without disturbing the run.
pub fn run_recording(
    set: &TaskSet,
    cfg: &RunConfig,
    interrupt: &AtomicBool,
    sinks: Vec<Box<dyn JobSink + Send>>,
) -> Result<(RunReport, Vec<std::io::Result<()>>), RtError> {
    run_traced(set, cfg, interrupt, sinks).map(|(report, written, _)| (report, written))
}

/// What a run with [`RunConfig::kernel_trace`] adds: every job (in the
/// order the sinks saw them) and the kernel's account of them, or why the
/// trace could not be read (the run's own results stand either way).
pub struct KernelAccount {
    /// Every job of the run.
    pub jobs: Vec<JobRecord>,
    /// The decoded trace, its per-job causes and summary.
    pub traced: Result<Traced, rtlab_ktrace::TraceError>,
}

/// A run's report, one result per sink, and the kernel's account when
/// traced.
pub type TracedRun = (RunReport, Vec<std::io::Result<()>>, Option<KernelAccount>);

/// [`run_recording`], and with [`RunConfig::kernel_trace`] the kernel's
/// schedule of the run's CPUs recorded over it (started before the threads
/// are made, the reader on the other CPUs), every job explained, and the
/// summary in [`RunReport::kernel_trace`] (or `{"error": ...}` when the
/// trace could not be read). The one path of every traced command.
pub fn run_traced(
    set: &TaskSet,
    cfg: &RunConfig,
    interrupt: &AtomicBool,
    mut sinks: Vec<Box<dyn JobSink + Send>>,
) -> Result<TracedRun, RtError> {
    let Some(request) = &cfg.kernel_trace else {
        return run_untraced(set, cfg, interrupt, sinks).map(|(r, w)| (r, w, None));
    };
    let all_jobs = JobList::new();
    sinks.push(Box::new(all_jobs.clone()));
    let cpus = match &cfg.placement {
        Some(p) => Some(p.cpus.clone()),
        None => cfg.cpu.map(|c| vec![c]),
    };
    let recording = request.start(cpus.as_deref())?;
    let (mut report, mut written) = run_untraced(set, cfg, interrupt, sinks)?;
    // The job list's (in memory: it cannot fail).
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
    let own_cpu = set
        .tasks
        .iter()
        .map(|t| cfg.phases.is_empty().then_some(t.wcet.as_ns()))
        .collect();
    let traced = request.finish(
        recording,
        tasks,
        thread_class(cfg.policy),
        own_cpu,
        report.start_monotonic_ns,
        Nanos::from_ns(report.ended_ns),
        &jobs,
    );
    report.kernel_trace = Some(match &traced {
        Ok(t) => KernelTraceSummary::Read(t.summary.clone()),
        Err(e) => KernelTraceSummary::Unread {
            error: e.to_string(),
        },
    });
    Ok((report, written, Some(KernelAccount { jobs, traced })))
}

/// The kernel's class of the run's threads under `policy`.
pub fn thread_class(policy: RunPolicy) -> ThreadClass {
    if policy.is_deadline() {
        ThreadClass::Deadline
    } else if policy == RunPolicy::Other {
        ThreadClass::Other
    } else {
        ThreadClass::RealTime
    }
}

fn run_untraced(
    set: &TaskSet,
    cfg: &RunConfig,
    interrupt: &AtomicBool,
    sinks: Vec<Box<dyn JobSink + Send>>,
) -> Result<(RunReport, Vec<std::io::Result<()>>), RtError> {
    // The set's tasks and the phases' (each first released at its phase's
    // start plus its offset), every thread made before the first release.
    let (phased, plan) = phases::phased_set(set, cfg)?;
    let set = &phased;
    let plan = Arc::new(plan);
    let mut policies = checked_policies(set, cfg)?;
    // Every mutex exists before any thread does, and outlives them all.
    let resources = Arc::new(Resources::new(set, &policies, cfg.protocol)?);
    if let Some(cpu) = cfg.cpu {
        let allowed = policy::allowed_cpus()?;
        if !allowed.contains(&cpu) {
            return Err(HostError::Affinity {
                cpus: vec![cpu],
                allowed,
                why: "not a CPU this process may use".into(),
            }
            .into());
        }
    }
    let _throttling_off = if cfg.no_rt_throttling {
        Some(policy::RtThrottlingOff::new()?)
    } else {
        None
    };
    let throttling = RtThrottling::read().ok();
    fit_to_admission(set, cfg, throttling, &mut policies)?;
    // Per thread and segment of the run its SCHED_DEADLINE budget (C at
    // that segment's scale plus the margin), computed now: a thread changes
    // its own with one sched_setattr before its first release in a new
    // segment, nothing else happens at a phase change.
    let budgets = DeadlineBudgets::new(set, &plan, &policies, cfg.duration);
    if let Some(limit) = admitted_limit(cfg, throttling) {
        budgets.check(&cfg.phases, limit)?;
    }
    budgets.apply_first(&mut policies);
    // Owned here and dropped when `run` returns, after every thread that
    // reported has been joined (a lost thread is moved out on drop).
    let cpuset = match (cfg.policy.is_deadline(), cfg.cpu) {
        (true, Some(cpu)) => Some(ExclusiveCpuset::create(cpu)?),
        _ => None,
    };
    let domain_cpusets = match (&cfg.placement, cfg.policy.is_deadline()) {
        (Some(p), true) => Some(DomainCpusets::create(
            &p.domains,
            &rtlab_host::platform::online_cpus(),
        )?),
        _ => None,
    };
    let _memory = if cfg.mlock {
        Some(policy::lock_memory()?)
    } else {
        None
    };

    let n = set.tasks.len();
    let stop = Arc::new(AtomicBool::new(false));
    let run_end = RunEnd {
        start_ns: Arc::new(AtomicU64::new(0)),
        ended_ns: Arc::new(AtomicU64::new(u64::MAX)),
        duration: cfg.duration,
    };
    let (ended_ns, start_ns) = (run_end.ended_ns.clone(), run_end.start_ns.clone());
    let abort = Arc::new(AtomicBool::new(false));
    // The rings exist only when there are files to write: allocated and
    // pre-faulted here, after mlockall, before any thread runs.
    let writer_sink = (!sinks.is_empty()).then(|| JobWriter::new(set, run_end.clone(), sinks));
    let (rings, writer) = start_streams(
        "rtlab-jobs-writer",
        job_ring_capacities(set),
        JobMessage::FILLER,
        writer_sink,
        cfg.cpu,
    )?;
    let gate = Arc::new(Barrier::new(n + 1));
    let thread_ids: Arc<Vec<AtomicI32>> = Arc::new((0..n).map(|_| AtomicI32::new(0)).collect());
    let (setup_tx, setup_rx) = mpsc::channel::<Result<(), RtError>>();
    let (done_tx, done_rx) = mpsc::channel::<(usize, TaskOutcome)>();
    let mut handles = Vec::with_capacity(n);
    rtlab_sys::resource::limit_malloc_arenas();
    for (i, (task, ring)) in set.tasks.iter().zip(rings).enumerate() {
        let thread = TaskThread {
            index: i,
            task: task.clone(),
            policy: policies[i],
            cpu: cfg.cpu,
            cpuset: match (&cpuset, &domain_cpusets, &cfg.placement) {
                (Some(one), _, _) => Some(one.door()),
                (None, Some(sets), Some(p)) => sets.door(p.task_domain[i]),
                _ => None,
            },
            affinity: cfg.placement.as_ref().map(|p| p.cpus_of_task(i).to_vec()),
            duration: cfg.duration,
            on_miss: cfg.on_miss,
            lag_controller: cfg.lag_controller,
            reclaim: cfg.edf_reclaim,
            throttling,
            resources: resources.clone(),
            phases: plan.clone(),
            budgets: budgets.of(i),
        };
        let plan = SectionPlan::for_protocol(set, i, &policies, cfg.protocol)?;
        let shared = Shared {
            stop: stop.clone(),
            end: run_end.clone(),
            abort: abort.clone(),
            gate: gate.clone(),
        };
        let (setup_tx, done_tx) = (setup_tx.clone(), done_tx.clone());
        let ids = thread_ids.clone();
        let name = format!("rtlab-{}", task.name.chars().take(9).collect::<String>());
        let handle = std::thread::Builder::new()
            .name(name.clone())
            .stack_size(TASK_STACK)
            .spawn(move || {
                ids[i].store(rtlab_sys::sched::gettid(), Ordering::SeqCst);
                // Allocate and fault in before the policy is set: under
                // SCHED_DEADLINE this work would be charged to the task's
                // runtime, and a set-up slowed past it (page reclaim on a
                // loaded machine) leaves the thread throttled with a
                // deadline a period later, behind later-deadline tasks at
                // its first release.
                let pending =
                    Pending::with_capacity(Pending::capacity_for(&thread.task, thread.duration));
                let log = JobLog::new(ring);
                prefault_stack();
                let setup = thread.set_up();
                let ok = setup.is_ok();
                let _ = setup_tx.send(setup);
                shared.gate.wait();
                if !ok || shared.abort.load(Ordering::SeqCst) {
                    return;
                }
                let outcome = thread.run_jobs(&shared, pending, log, plan);
                let _ = done_tx.send((thread.index, outcome));
            })
            .map_err(|source| {
                // Release the threads already waiting at the gate.
                abort.store(true, Ordering::SeqCst);
                RtError::spawn(name, source)
            })?;
        handles.push(handle);
    }
    drop((setup_tx, done_tx));
    let mut first_error = None;
    for _ in 0..n {
        match setup_rx.recv() {
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Ok(Ok(())) => {}
            Err(_) => break,
        }
    }
    if first_error.is_none() {
        std::thread::sleep(gate_delay(set, cfg.policy).into());
    }
    // The disturbance account's window opens with every thread made and
    // closes once they have reported (read here, before the first release
    // and after the last job: nothing is read during the run).
    let window = first_error.is_none().then(|| {
        let own: Vec<i32> = thread_ids
            .iter()
            .map(|id| id.load(Ordering::SeqCst))
            .filter(|&t| t > 0)
            .collect();
        rtlab_host::disturbance::Window::open(&measured_cpus(cfg), &own)
    });
    let start = monotonic_now().saturating_add(first_release_delay(set, cfg.policy));
    start_ns.store(start.as_ns(), Ordering::SeqCst);
    abort.store(first_error.is_some(), Ordering::SeqCst);
    gate.wait();
    if let Some(e) = first_error {
        // Every thread returns at once: join them so that none is still in
        // the cpuset when it is removed.
        for h in handles {
            let _ = h.join();
        }
        if let Some(w) = writer {
            w.finish().finish();
        }
        return Err(e);
    }

    // Every task thread has its affinity or cpuset: the coordinator (this
    // thread) waits for them on the other CPUs until the run is over.
    let _coordinator_away = cfg.cpu.map(policy::KeptOffCpu::new);
    let end = start.saturating_add(cfg.duration);
    let interrupt_request = Arc::new(AtomicBool::new(false));
    let watchdog = spawn_watchdog(
        cfg,
        end,
        stop.clone(),
        ended_ns.clone(),
        interrupt_request.clone(),
    )?;

    // Collect: every thread stops within a job's length of the end once it
    // has a CPU; the grace covers RT throttling and the longest period.
    let give_up = end
        .saturating_add(Nanos::from_secs(5))
        .saturating_add(set.longest_period());
    let mut outcomes: Vec<Option<TaskOutcome>> = vec![None; n];
    let mut received = 0;
    while received < n {
        if interrupt.load(Ordering::Relaxed) {
            interrupt_request.store(true, Ordering::SeqCst);
        }
        let now = monotonic_now();
        if now >= give_up && stop.load(Ordering::SeqCst) {
            break;
        }
        let wait = give_up.saturating_sub(now).min(Nanos::from_ms(100));
        match done_rx.recv_timeout(Duration::from(wait.max(Nanos::from_ms(1)))) {
            Ok((i, outcome)) => {
                outcomes[i] = Some(outcome);
                received += 1;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    stop.store(true, Ordering::SeqCst);
    // A thread past the give-up time may only have been unable to run (the
    // process stopped by SIGSTOP past the end, then continued): with the
    // stop set it reports within a job's length of running again, so it
    // gets a last short wait before its jobs are given up for lost.
    while received < n {
        match done_rx.recv_timeout(Duration::from_millis(200)) {
            Ok((i, outcome)) => {
                outcomes[i] = Some(outcome);
                received += 1;
            }
            Err(_) => break,
        }
    }
    // The task threads end once they have reported: their CPU time at the
    // end is what they said.
    let ended_own: Vec<(i32, u64)> = outcomes
        .iter()
        .zip(thread_ids.iter())
        .filter_map(|(o, id)| Some((id.load(Ordering::SeqCst), o.as_ref()?.cpu_time_ns)))
        .collect();
    let disturbance = window.map(|w| w.close(&ended_own));
    let interrupted = watchdog.join().unwrap_or(false);
    for (handle, outcome) in handles.into_iter().zip(&outcomes) {
        if outcome.is_some() {
            let _ = handle.join();
        }
    }
    drop(cpuset);
    drop(domain_cpusets);
    let ended = run_end.ended();
    // Every thread that reported has queued its last record: drain them.
    let written = writer.map_or_else(Vec::new, |w| w.finish().finish());
    let mut report = summarise(
        set,
        cfg,
        &policies,
        outcomes,
        ended,
        interrupted,
        throttling,
    );
    report.thread_ids = thread_ids
        .iter()
        .map(|id| Some(id.load(Ordering::SeqCst)).filter(|&t| t > 0))
        .collect();
    report.start_monotonic_ns = start.as_ns();
    report.disturbance = disturbance;
    Ok((report, written))
}

/// The CPUs a run measures on: its CPU, its placement's CPUs, or (threads
/// free to run anywhere) every CPU this process may use.
pub fn measured_cpus(cfg: &RunConfig) -> Vec<usize> {
    match (&cfg.placement, cfg.cpu) {
        (Some(p), _) => p.cpus.clone(),
        (None, Some(cpu)) => vec![cpu],
        (None, None) => policy::allowed_cpus().unwrap_or_default(),
    }
}

/// Writes to `STACK_PREFAULT` bytes of the stack below the caller, so the
/// pages are mapped (and, under `mlockall`, locked) before the first
/// release, as cyclictest does.
#[inline(never)]
pub(crate) fn prefault_stack() {
    let mut block = [0u8; STACK_PREFAULT];
    for b in block.iter_mut().step_by(1024) {
        *b = 1;
    }
    std::hint::black_box(&mut block);
}

/// Fits the SCHED_DEADLINE budgets of `policies` into what the kernel
/// admits on the run's CPUs under `throttling` ([`fit_deadline_budgets`]
/// with the domain's capacity in the kernel's units,
/// [`rtlab_host::dl_bandwidth`]), or explains why the set cannot be
/// admitted. Nothing to do without a limit.
pub fn fit_to_admission(
    set: &TaskSet,
    cfg: &RunConfig,
    throttling: Option<RtThrottling>,
    policies: &mut [Policy],
) -> Result<(), RtError> {
    if let Some(placement) = &cfg.placement {
        let Some(throttling) = throttling else {
            return Ok(());
        };
        return fit_domains_to_admission(set, placement, throttling, policies);
    }
    let Some(admitted) = admitted_limit(cfg, throttling) else {
        return Ok(());
    };
    fit_deadline_budgets(set, policies, admitted.capacity.for_tasks()).map_err(|need| {
        RtError::DeadlineOverLimit {
            need: dl_bandwidth::show(need),
            over: dl_bandwidth::show(need - admitted.capacity.for_tasks()),
            cpus: admitted.cpus,
            limit: admitted.capacity.describe(),
        }
    })
}

/// What SCHED_DEADLINE admission accepts on the run's CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmittedLimit {
    /// The root domain's capacity in the kernel's units (CPUs x
    /// (sched_rt_runtime_us / sched_rt_period_us - the fair server's
    /// share)).
    pub capacity: DomainCapacity,
    /// CPUs the run uses.
    pub cpus: usize,
}

/// The admission limit on the run's CPUs under `throttling`; `None`
/// without a limit (RT throttling off).
pub fn admitted_limit(cfg: &RunConfig, throttling: Option<RtThrottling>) -> Option<AdmittedLimit> {
    let cpus = match cfg.cpu {
        Some(_) => 1,
        None => policy::allowed_cpus().map_or(1, |c| c.len().max(1)),
    };
    let capacity = DomainCapacity::new(throttling?, cpus)?;
    Some(AdmittedLimit { capacity, cpus })
}

/// [`fit_to_admission`] per root domain: the kernel admits deadline
/// bandwidth per root domain, up to its CPUs x (the RT limit - the fair
/// server's share), in its own units. A domain whose WCETs alone exceed
/// that is refused with its CPUs, tasks, sum and limit.
fn fit_domains_to_admission(
    set: &TaskSet,
    placement: &Placement,
    throttling: RtThrottling,
    policies: &mut [Policy],
) -> Result<(), RtError> {
    for (d, cpus) in placement.domains.iter().enumerate() {
        let members = placement.tasks_of(d);
        if members.is_empty() {
            continue;
        }
        let Some(capacity) = DomainCapacity::new(throttling, cpus.len()) else {
            return Ok(());
        };
        let sub = TaskSet::new(
            set.name.clone(),
            members.iter().map(|&i| set.tasks[i].clone()).collect(),
        );
        let mut sub_policies: Vec<Policy> = members.iter().map(|&i| policies[i]).collect();
        fit_deadline_budgets(&sub, &mut sub_policies, capacity.for_tasks()).map_err(|need| {
            RtError::DomainOverLimit {
                cpus: placement::list(cpus),
                tasks: sub
                    .tasks
                    .iter()
                    .map(|t| format!("`{}`", t.name))
                    .collect::<Vec<_>>()
                    .join(", "),
                need: dl_bandwidth::show(need),
                over: dl_bandwidth::show(need - capacity.for_tasks()),
                limit: capacity.describe(),
            }
        })?;
        for (&i, p) in members.iter().zip(sub_policies) {
            policies[i] = p;
        }
    }
    Ok(())
}

/// Shrinks the SCHED_DEADLINE margins (never the WCETs) so that the
/// threads' bandwidths, each `to_ratio(period, runtime)` in the kernel's
/// units of 2^-20 of a CPU, sum to at most `capacity`, as the kernel
/// admits them ([`rtlab_host::dl_bandwidth`]). Every margin m is scaled by
/// the same k / 2^20, k the largest that fits (found by bisection: the sum
/// grows with k), so the budgets are C + ⌊m k / 2^20⌋. When the WCETs alone
/// exceed the capacity nothing changes and the error is their sum, in the
/// kernel's units: every job would exhaust its budget.
pub fn fit_deadline_budgets(
    set: &TaskSet,
    policies: &mut [Policy],
    capacity: u64,
) -> Result<(), u64> {
    // (C, margin, period) of each deadline thread.
    let threads: Vec<(usize, Nanos, Nanos, Nanos)> = set
        .tasks
        .iter()
        .zip(policies.iter())
        .enumerate()
        .filter_map(|(i, (t, p))| match *p {
            Policy::Deadline {
                runtime, period, ..
            } => Some((i, t.wcet, runtime.saturating_sub(t.wcet), period)),
            _ => None,
        })
        .collect();
    let budget = |c: Nanos, m: Nanos, k: u64| {
        let extra = (u128::from(m.as_ns()) * u128::from(k)) >> dl_bandwidth::BW_SHIFT;
        c.saturating_add(Nanos::from_ns(u64::try_from(extra).unwrap_or(u64::MAX)))
    };
    let sum_at = |k: u64| -> u64 {
        threads
            .iter()
            .map(|&(_, c, m, t)| dl_bandwidth::to_ratio(t, budget(c, m, k)))
            .sum()
    };
    let wcets = sum_at(0);
    if wcets > capacity {
        return Err(wcets);
    }
    let full = dl_bandwidth::BW_UNIT;
    if sum_at(full) <= capacity {
        return Ok(());
    }
    // sum_at(lo) fits, sum_at(hi) does not.
    let (mut lo, mut hi) = (0, full);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if sum_at(mid) <= capacity {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    for &(i, c, m, _) in &threads {
        if let Policy::Deadline { runtime, .. } = &mut policies[i] {
            *runtime = budget(c, m, lo);
        }
    }
    Ok(())
}

/// Refuses what cannot run: an empty set, a zero duration, periods or
/// execution times the timeline cannot hold.
fn check_set(set: &TaskSet, cfg: &RunConfig) -> Result<(), RtError> {
    let invalid = |why: String| RtError::Invalid {
        what: format!("task set `{}`", set.name),
        why,
    };
    if set.tasks.is_empty() {
        return Err(invalid("it has no tasks".into()));
    }
    if cfg.duration.is_zero() {
        return Err(RtError::Setting {
            setting: "duration",
            value: None,
            why: "must be more than 0".into(),
        });
    }
    for t in &set.tasks {
        if t.period.is_zero() || t.wcet.is_zero() {
            return Err(invalid(format!(
                "task `{}` needs a period and an execution time above 0",
                t.name
            )));
        }
    }
    Ok(())
}

/// State shared by the coordinator, the watchdog and the task threads.
struct Shared {
    stop: Arc<AtomicBool>,
    end: RunEnd,
    abort: Arc<AtomicBool>,
    gate: Arc<Barrier>,
}

/// One task's thread.
struct TaskThread {
    index: usize,
    task: Task,
    policy: Policy,
    cpu: Option<usize>,
    cpuset: Option<CpusetDoor>,
    /// The CPUs of its domain on a multiprocessor run (`--cpus`).
    affinity: Option<Vec<usize>>,
    duration: Nanos,
    on_miss: MissRule,
    lag_controller: Option<ControllerKind>,
    /// SCHED_DEADLINE with `SCHED_FLAG_RECLAIM` ([`RunConfig::edf_reclaim`]).
    reclaim: bool,
    /// The RT-throttling settings the robust controller's spin budget
    /// guards, read once before the threads start.
    throttling: Option<RtThrottling>,
    /// The set's mutexes (its task's critical sections lock them).
    resources: Arc<Resources>,
    /// The run's phases: which releases are made and each job's C.
    phases: Arc<PhasePlan>,
    /// Its SCHED_DEADLINE budget per segment of the run (empty otherwise).
    budgets: Vec<(Nanos, Policy)>,
}

impl TaskThread {
    /// Affinity (or the cpuset, for SCHED_DEADLINE), then the policy.
    fn set_up(&self) -> Result<(), RtError> {
        match (&self.cpuset, self.cpu, &self.affinity) {
            (Some(set), _, _) => set.add_current_thread()?,
            // A deadline thread of a domain that is the whole machine: its
            // affinity is the root domain, as the kernel requires.
            (None, _, Some(cpus)) => policy::set_current_thread_affinity(cpus)?,
            (None, Some(cpu), None) if !matches!(self.policy, Policy::Deadline { .. }) => {
                policy::set_current_thread_affinity(&[cpu])?
            }
            _ => {}
        }
        self.set_policy_waiting_for_released_bandwidth()
    }

    /// Sets the policy. A SCHED_DEADLINE refusal is retried for a while:
    /// the kernel frees the bandwidth of a deadline thread that exited only
    /// at its zero-lag time (up to a period later), so a run that follows
    /// another one at once can be refused for bandwidth that is about to be
    /// free.
    fn set_policy_waiting_for_released_bandwidth(&self) -> Result<(), RtError> {
        let patience = monotonic_now()
            .saturating_add(ADMISSION_PATIENCE)
            .saturating_add(self.task.period);
        loop {
            match policy::set_current_thread_policy_reclaiming(&self.policy, self.reclaim) {
                Err(HostError::DeadlineAdmission { .. }) if monotonic_now() < patience => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other.map_err(RtError::from),
            }
        }
    }

    /// Releases `offset + k*T` until the end. Nothing here allocates (the
    /// summary is a few counters, the ring, the skip state and the
    /// section plan were allocated before the first release) or prints;
    /// the only locks taken are the task's own critical sections.
    fn run_jobs(
        &self,
        shared: &Shared,
        mut pending: Pending,
        mut log: JobLog,
        mut plan: SectionPlan,
    ) -> TaskOutcome {
        let start = Nanos::from_ns(shared.end.start_ns.load(Ordering::SeqCst));
        let t = &self.task;
        let mut waiter = match self.lag_controller {
            Some(kind) => Waiter::Controlled(LagController::of_kind(
                kind,
                LagController::DEFAULT_KI,
                t.period,
                self.throttling,
            )),
            None => Waiter::Plain,
        };
        let mut clock = MonotonicClock;
        let switches_at_start = thread_switches();
        let multi = self.affinity.is_some();
        let migrations_at_start = multi.then(thread_migrations).flatten();
        let mut lock_errors = 0;
        let mut budget = self.budgets.first().map(|b| b.1);
        let mut changes = BudgetChanges::default();
        let mut candidate = t.offset;
        while let Some(release) = self.release_from(candidate) {
            candidate = release.saturating_add(t.period);
            let k = self.job_index(release);
            if self.on_miss == MissRule::Skip && pending.skips(release) {
                log.summary.record_skipped(1);
                continue;
            }
            // A new segment's SCHED_DEADLINE budget, set by the thread
            // itself between two of its jobs (no job of its own in flight),
            // before it sleeps until the segment's first release.
            if let Some(&(_, next)) = self.budgets.iter().rev().find(|(from, _)| *from <= release) {
                if budget != Some(next) {
                    let asked = monotonic_now();
                    let ok = policy::change_current_thread_policy(&next);
                    changes.record(monotonic_now().saturating_sub(asked), ok);
                    budget = Some(next);
                }
            }
            let c = self.phases.demand(t.wcet, release);
            let deadline = release.saturating_add(t.deadline);
            let wake_at = start
                .saturating_add(release)
                .saturating_add(Nanos::from_ns(self.index as u64));
            if monotonic_now() < wake_at {
                waiter.wait_until(&mut clock, wake_at);
                // Woken early, by a stop signal (`rtlab_host::interrupt`): wait
                // for the watchdog's stop, which follows within 20 ms, in
                // short sleeps, rather than start the job early.
                while monotonic_now() < wake_at && !shared.stop.load(Ordering::Relaxed) {
                    rtlab_sys::clock::wait_until(
                        wake_at.min(monotonic_now().saturating_add(Nanos::from_ms(1))),
                    );
                }
            }
            if shared.stop.load(Ordering::Relaxed) {
                self.record_backlog(release, shared.end.ended(), &mut pending, &mut log);
                break;
            }
            let before = thread_switches();
            let began = monotonic_now().saturating_sub(start);
            let start_cpu = if multi { current_cpu() } else { None };
            let work = plan.execute(&self.resources, c, &shared.stop);
            lock_errors += work.lock_errors;
            let done = work.done;
            let finished = monotonic_now().saturating_sub(start);
            let after = thread_switches();
            let job = JobRecord {
                task: self.index,
                job: k,
                release,
                deadline,
                start: Some(began),
                finish: done.then_some(finished),
                aborted: false,
                voluntary_switches: after.0.saturating_sub(before.0),
                involuntary_switches: after.1.saturating_sub(before.1),
                cpu: done.then(current_cpu).flatten(),
                start_cpu,
                migrations: match (start_cpu, done.then(current_cpu).flatten()) {
                    (Some(a), Some(b)) if a != b => 1,
                    _ => 0,
                },
                blocked: work.blocked,
                remote_blocked: work
                    .blocked
                    .filter(|_| self.resources.protocol().is_multiprocessor()),
                local_blocked: None,
                demand: Some(c),
            };
            if !done {
                // Stopped: the end is decided (see `RunEnd`).
                let ended = shared.end.ended();
                log.job(job, ended);
                pending.push(deadline, Nanos::MAX);
                self.record_backlog(candidate, ended, &mut pending, &mut log);
                break;
            }
            // A finished job's record does not depend on the end.
            log.job(job, self.duration);
            if self.on_miss == MissRule::Skip {
                pending.push(deadline, finished);
            }
        }
        let switches_at_end = thread_switches();
        TaskOutcome {
            kernel_migrations: migrations_at_start
                .and_then(|a| Some(thread_migrations()?.saturating_sub(a))),
            summary: log.summary,
            context_switches: (switches_at_end.0 + switches_at_end.1)
                .saturating_sub(switches_at_start.0 + switches_at_start.1),
            jobs_dropped: log.dropped(),
            lock_errors,
            budget_changes: changes,
            cpu_time_ns: rtlab_sys::clock::thread_cpu_time().as_ns(),
        }
    }

    /// The release a candidate release `at` becomes under the phases
    /// (moved past suspensions), relative to the start, or `None` at or
    /// after the end of the run or of the task's phase.
    fn release_from(&self, at: Nanos) -> Option<Nanos> {
        self.phases
            .release(self.index, self.task.period, at, self.duration)
    }

    /// The job index of the release at `release`: periods since the task's
    /// first release (its offset; a phase task's offset counts from its
    /// phase's start).
    fn job_index(&self, release: Nanos) -> u64 {
        release
            .saturating_sub(self.task.offset)
            .div_floor(self.task.period)
    }

    /// After the stop: the releases from the candidate `from` on made before
    /// the run ended at `ended`, never started. Under `continue`, without
    /// phases that change the task's releases, they are one range, counted
    /// in O(1) however long the backlog; otherwise they are walked release
    /// by release (ranges of consecutive jobs recorded at once). Under
    /// `skip` a release that finds a job pending past its deadline is
    /// skipped as in the loop (jobs never started are pending for good, as
    /// in the simulator), so at most ceil(D/T) of them are made and, without
    /// phases, the rest are counted at once.
    fn record_backlog(&self, from: Nanos, ended: Nanos, pending: &mut Pending, log: &mut JobLog) {
        let t = &self.task;
        let plain = !self.phases.changes_releases_of(self.index);
        let remaining = |r: Nanos| ended.saturating_sub(r).div_ceil(t.period);
        if self.on_miss == MissRule::Continue && plain {
            if let Some(r) = self.release_from(from).filter(|r| *r < ended) {
                log.unstarted(t, self.job_index(r), remaining(r), ended);
            }
            return;
        }
        let (mut run_from, mut run_len) = (0, 0);
        let mut candidate = from;
        while let Some(release) = self.release_from(candidate).filter(|r| *r < ended) {
            candidate = release.saturating_add(t.period);
            let k = self.job_index(release);
            if self.on_miss == MissRule::Skip && pending.skips(release) {
                log.unstarted(t, run_from, run_len, ended);
                run_len = 0;
                if plain && pending.skips_all_from(release) {
                    log.summary.record_skipped(remaining(release));
                    return;
                }
                log.summary.record_skipped(1);
                continue;
            }
            if run_len > 0 && k != run_from + run_len {
                log.unstarted(t, run_from, run_len, ended);
                run_len = 0;
            }
            if run_len == 0 {
                run_from = k;
            }
            run_len += 1;
            if self.on_miss == MissRule::Skip {
                pending.push(release.saturating_add(t.deadline), Nanos::MAX);
            }
        }
        log.unstarted(t, run_from, run_len, ended);
    }
}

/// How often the kernel moved the calling thread to another CPU so far
/// (`se.nr_migrations` of `/proc/thread-self/sched`; `None` without
/// CONFIG_SCHED_DEBUG's file).
fn thread_migrations() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
    text.lines()
        .find(|l| l.trim_start().starts_with("se.nr_migrations"))?
        .split(':')
        .nth(1)?
        .trim()
        .parse()
        .ok()
}

/// The CPU the calling thread runs on.
fn current_cpu() -> Option<u32> {
    rtlab_sys::sched::sched_getcpu().ok()
}

/// Starts the thread that ends the run: at `end`, or when `interrupt` is
/// set (the coordinator forwards Ctrl-C to it). It returns whether the run
/// was interrupted.
fn spawn_watchdog(
    cfg: &RunConfig,
    end: Nanos,
    stop: Arc<AtomicBool>,
    ended_ns: Arc<AtomicU64>,
    interrupt: Arc<AtomicBool>,
) -> Result<std::thread::JoinHandle<bool>, RtError> {
    let other_cpus: Vec<usize> = policy::allowed_cpus()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| Some(*c) != cfg.cpu)
        .collect();
    let name = "rtlab-watchdog".to_string();
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || {
            if !other_cpus.is_empty() {
                let _ = policy::set_current_thread_affinity(&other_cpus);
            }
            // Above every task thread; without the privilege it stays
            // SCHED_OTHER, which RT throttling still lets run.
            let _ = policy::set_current_thread_policy(&Policy::Fifo { priority: 99 });
            let mut interrupted = false;
            loop {
                let now = monotonic_now();
                if now >= end || stop.load(Ordering::SeqCst) {
                    // The end, or every thread already made its last release.
                    break;
                }
                if interrupt.load(Ordering::Relaxed) {
                    interrupted = true;
                    ended_ns.store(now.as_ns(), Ordering::SeqCst);
                    break;
                }
                rtlab_sys::clock::wait_until(end.min(now.saturating_add(Nanos::from_ms(20))));
            }
            stop.store(true, Ordering::SeqCst);
            interrupted
        })
        .map_err(|source| RtError::spawn(name, source))
}

/// A task thread's policy as the report shows it: the policy, and
/// `reclaim` after a SCHED_DEADLINE policy set with `SCHED_FLAG_RECLAIM`.
fn thread_policy_text(policy: &Policy, cfg: &RunConfig) -> String {
    match policy {
        Policy::Deadline { .. } if cfg.edf_reclaim => format!("{policy} reclaim"),
        _ => policy.to_string(),
    }
}

/// Builds the report from the threads' summaries (each thread judged its
/// unfinished jobs with the same `ended`).
fn summarise(
    set: &TaskSet,
    cfg: &RunConfig,
    policies: &[Policy],
    outcomes: Vec<Option<TaskOutcome>>,
    ended: Nanos,
    interrupted: bool,
    throttling: Option<RtThrottling>,
) -> RunReport {
    let mut tasks = Vec::with_capacity(set.tasks.len());
    let mut lost_tasks = Vec::new();
    let (mut context_switches, mut jobs_dropped, mut lock_errors) = (0, 0, 0);
    let mut budget_changes = BudgetChanges::default();
    for (i, outcome) in outcomes.into_iter().enumerate() {
        let name = &set.tasks[i].name;
        let outcome = outcome.unwrap_or_else(|| {
            lost_tasks.push(name.clone());
            TaskOutcome::default()
        });
        let mut m = TaskRunMetrics::from_summary(
            name,
            &outcome.summary,
            thread_policy_text(&policies[i], cfg),
        );
        if let Some(p) = &cfg.placement {
            m.cpus = Some(p.cpus_of_task(i).to_vec());
            m.kernel_migrations = outcome.kernel_migrations;
        }
        context_switches += outcome.context_switches;
        jobs_dropped += outcome.jobs_dropped;
        lock_errors += outcome.lock_errors;
        budget_changes.add(&outcome.budget_changes);
        tasks.push(m);
    }
    let totals = Totals::of(tasks.iter().map(|t| &t.metrics));
    let seconds = ended.as_secs_f64();
    RunReport {
        policy: cfg.scheduler(),
        scheduler: cfg.scheduler().model_scheduler(rr_timeslice()),
        cpus: cfg.placement.as_ref().map(|p| p.cpus.clone()),
        taskset: set.name.clone(),
        duration_ns: cfg.duration.as_ns(),
        ended_ns: ended.as_ns(),
        interrupted,
        cpu: cfg.cpu,
        protocol: cfg.protocol,
        on_miss: cfg.on_miss,
        tick_ns: None,
        seed: None,
        jitter: "none".into(),
        lag_controller: cfg.lag_controller.is_some(),
        lag_controller_kind: cfg.lag_controller.map(|k| k.name().to_string()),
        rt_throttling: throttling.map_or_else(|| "unknown".into(), |t| t.describe_limit()),
        totals,
        context_switches,
        context_switches_per_s: if seconds > 0.0 {
            context_switches as f64 / seconds
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
        scheduler_data: None,
        jobs_dropped,
        lock_errors,
        peak_rss_bytes: peak_rss_bytes(),
        kernel_trace: None,
        disturbance: None,
        thread_ids: Vec::new(),
        start_monotonic_ns: 0,
        phases: cfg.phases.iter().map(ToString::to_string).collect(),
        budget_changes: (budget_changes.changes > 0).then_some(budget_changes),
        dispatcher: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Task;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    /// Soyer 2024's scenario 4 on one CPU with the defaults (943719 units
    /// for tasks): C/T = 0.12 + 0.80 = 0.92 (964689 units) does not fit;
    /// its tasks at C/T = 0.12 + 0.78 = 0.90 exactly (943718 units) do,
    /// as the kernel admits them (at or under the limit), with margins
    /// shrunk to the last unit.
    #[test]
    fn deadline_margins_shrink_to_fit_and_wcets_over_the_limit_are_refused() {
        let capacity = 943_719;
        let set = |c2: u64| {
            TaskSet::new(
                "s4",
                vec![
                    Task::new("t1", ms(25), ms(3)).with_deadline(ms(23)),
                    Task::new("t2", ms(50), ms(c2)).with_deadline(ms(45)),
                ],
            )
        };
        let sum = |set: &TaskSet, policies: &[Policy]| -> u64 {
            set.tasks
                .iter()
                .zip(policies)
                .map(|(t, p)| match p {
                    Policy::Deadline { runtime, .. } => dl_bandwidth::to_ratio(t.period, *runtime),
                    _ => unreachable!(),
                })
                .sum()
        };
        let four = set(40);
        let mut policies = thread_policies(&four, RunPolicy::Edf, None).unwrap();
        assert_eq!(
            fit_deadline_budgets(&four, &mut policies, capacity),
            Err(125_829 + 838_860)
        );
        let exact = set(39);
        let mut policies = thread_policies(&exact, RunPolicy::Edf, None).unwrap();
        assert_eq!(
            fit_deadline_budgets(&exact, &mut policies, capacity),
            Ok(())
        );
        let total = sum(&exact, &policies);
        assert!(total <= capacity && total + 2 >= capacity, "{total}");
        for (t, p) in exact.tasks.iter().zip(&policies) {
            let Policy::Deadline { runtime, .. } = p else {
                unreachable!()
            };
            assert!(*runtime >= t.wcet);
        }
        // Room for the full margins: unchanged.
        let mut roomy = thread_policies(&four, RunPolicy::Edf, None).unwrap();
        assert_eq!(
            fit_deadline_budgets(&four, &mut roomy, 2 * capacity),
            Ok(())
        );
        assert_eq!(roomy, thread_policies(&four, RunPolicy::Edf, None).unwrap());
    }

    /// Only SCHED_DEADLINE runs with a constrained task wait longer than
    /// the usual delay: max over D < T tasks of T - offset.
    #[test]
    fn constrained_deadline_tasks_start_at_least_a_period_after_setup() {
        let ms = Nanos::from_ms;
        let set = rtlab_model::file::load("builtin:priority-inversion")
            .unwrap()
            .set;
        // high: T 100, offset 5, D 20; mid: T 100, offset 8, D 60; low: D = T.
        assert_eq!(first_release_delay(&set, RunPolicy::Edf), ms(95));
        assert_eq!(gate_delay(&set, RunPolicy::Edf), ms(100));
        assert_eq!(gate_delay(&set, RunPolicy::RateMonotonic), Nanos::ZERO);
        assert_eq!(
            first_release_delay(&set, RunPolicy::DeadlineMonotonic),
            START_DELAY
        );
        let implicit = TaskSet::new(
            "implicit",
            vec![Task::new("a", ms(500), ms(1)), Task::new("b", ms(7), ms(1))],
        );
        assert_eq!(first_release_delay(&implicit, RunPolicy::Edf), START_DELAY);
        let mut short = implicit.clone();
        short.tasks[1].deadline = ms(5);
        assert_eq!(first_release_delay(&short, RunPolicy::Edf), START_DELAY);
        short.tasks[0].deadline = ms(400);
        short.tasks[0].offset = ms(100);
        assert_eq!(first_release_delay(&short, RunPolicy::Edf), ms(400));
    }
}
