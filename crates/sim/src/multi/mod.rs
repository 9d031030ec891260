//! Scheduling on m identical processors: global, partitioned and
//! clustered schedulers.
//!
//! Two engines serve them, sharing the job, record and report types:
//!
//! - **Global** schedulers (`gedf`, `gfp:*`, `edzl`, `linux-dl`) run in
//!   [`global`], whose ready set is shared by all processors (the m most
//!   urgent ready jobs run; see its docs for the placement and migration
//!   rules).
//! - **Partitioned** schedulers (`pedf`, `pfp:*`) run each processor's
//!   tasks as an independent uniprocessor schedule in the uniprocessor
//!   engine ([`crate::engine`], with every overhead, tick and timer model
//!   it has), merged into one report in which each job carries its
//!   processor. A partitioned run is by construction the union of the
//!   uniprocessor runs.
//! - **Clustered EDF** (`cedf`) runs global EDF inside each cluster of the
//!   platform, tasks assigned to clusters, merged the same way.
//!
//! The uniprocessor engine is left as it was (its results are pinned byte
//! for byte); a global engine beside it was the safe way to multiprocessor
//! scheduling without touching the locking protocols, ticks and control
//! schedulers of the uniprocessor one.
//!
//! The platform is the task set's ([`TaskSet::platform`]: `processors`,
//! `clusters`) and each task's `cpu` ([`Task::cpu`]).
//!
//! Refused on m > 1 ([`check`]): critical sections (locking across
//! processors, MrsP or FMLP, is later work), locking protocols, overload
//! phases, and under global schedulers every overhead but `migration`
//! (ticks and per-event kernel costs are per processor, not modelled).
//! A `cpu` fixed for a task is refused under a global scheduler, and a
//! partitioned scheduler needs every task's `cpu`. On m = 1 the
//! multiprocessor schedulers run too: `gedf` is then uniprocessor EDF with
//! gedf's tie rule (task order), `pedf` is `edf`.

pub mod decision;
pub mod edzl;
pub mod gedf;
pub mod gfp;
pub mod gllf;
pub mod global;
pub mod linux_dl;
pub mod ready_set;
mod releases;
pub mod rule;

pub use rule::GlobalRule;

use std::cell::RefCell;
use std::rc::Rc;

use std::io;

use rtlab_model::results::{JobRecord, JobSink, TaskSummary, Totals};
use rtlab_model::{Nanos, Task, TaskSet};

use crate::config::{LockingProtocol, SimConfig};
use crate::engine::{BacklogStop, Simulator};
use crate::error::SimError;
use crate::metrics::{ProcessorMetrics, SimReport};
use crate::registry::SchedulerSpec;
use crate::trace::Trace;
use global::GlobalSim;
use rtlab_model::policy::Scope;

pub use rtlab_model::MAX_PROCESSORS;

/// A finished multiprocessor run.
pub struct MultiRun {
    /// The report (with per-processor figures and migrations).
    pub report: SimReport,
    /// The trace of the window, one row per processor when drawn.
    pub trace: Option<Trace>,
    /// Why (part of) the run stopped early, if it did.
    pub stopped: Option<BacklogStop>,
    /// How the job sink's output went: its first error, if any.
    pub jobs_written: io::Result<()>,
}

/// A sub-run: its processors and its tasks (indices into the set).
pub type Group = (Vec<u32>, Vec<usize>);

/// A sub-run's records, its tasks and processors numbered as the whole
/// run's, to the run's one sink.
struct Renumbered {
    out: Rc<RefCell<Box<dyn JobSink>>>,
    cpus: Vec<u32>,
    tasks: Vec<usize>,
}

impl JobSink for Renumbered {
    fn job(&mut self, r: &JobRecord, ended: Nanos) -> io::Result<()> {
        let (cpus, tasks) = (&self.cpus, &self.tasks);
        let mut r = *r;
        r.task = tasks[r.task];
        r.cpu = r.cpu.map(|c| cpus[c as usize]);
        r.start_cpu = match (r.start_cpu, r.start) {
            (Some(c), _) => Some(cpus[c as usize]),
            (None, Some(_)) if cpus.len() == 1 => Some(cpus[0]),
            _ => None,
        };
        if cpus.len() == 1 && r.finish.is_some() {
            r.cpu = Some(cpus[0]);
        }
        self.out.borrow_mut().job(&r, ended)
    }
}

/// Refuses what the multiprocessor simulation does not model, in words.
pub fn check(set: &TaskSet, spec: &SchedulerSpec, config: &SimConfig) -> Result<(), SimError> {
    let m = set.processors();
    if m == 0 || m > MAX_PROCESSORS {
        return Err(SimError::Setting {
            setting: "cpus",
            message: format!("{m}: the number of processors must be 1 to {MAX_PROCESSORS}"),
        });
    }
    let name = spec.to_string();
    let setup = |why: String| SimError::Setup {
        scheduler: name.clone(),
        why,
    };
    if !spec.is_multiprocessor() {
        if m > 1 {
            return Err(setup(crate::registry::uniprocessor_only(
                spec.entry().on_many,
                m,
            )));
        }
        return Ok(());
    }
    if let Some(t) = set.tasks.iter().find(|t| t.cpu.is_some_and(|c| c >= m)) {
        return Err(setup(format!(
            "task `{}` is fixed to cpu {}, but the platform has {m} processors (0..{})",
            t.name,
            t.cpu.unwrap_or(0),
            m - 1
        )));
    }
    if let LockingProtocol::Multiprocessor(protocol) = config.protocol {
        return crate::mp_locking::check(set, spec, config, protocol).map(|_| ());
    }
    let partitioned = spec.scope() == Scope::Partitioned;
    if let Some(t) = set.tasks.iter().find(|t| !t.critical_sections.is_empty()) {
        if m > 1 && !partitioned {
            return Err(SimError::Setting {
                setting: "cpus",
                message: format!(
                    "{m}: task `{}` has critical sections; under {name} on more than one processor give a multiprocessor protocol: --locking omlp (gedf, cedf), or partition the set (pfp:* with mpcp, dpcp, fmlp+, mrsp, msrp)",
                    t.name
                ),
            });
        }
    }
    if config.protocol != LockingProtocol::None && m > 1 && !partitioned {
        return Err(SimError::Setting {
            setting: "protocol",
            message: format!(
                "{}: a uniprocessor protocol runs on one processor or per processor of a partitioned scheduler (pedf, pfp:*); under {name} use omlp",
                config.protocol
            ),
        });
    }
    if partitioned {
        // Each processor is its own uniprocessor run: its resources must
        // be its own.
        if let Some(cpus) = set.assignment() {
            let protocol = match config.protocol {
                LockingProtocol::None => "plain locking (no protocol)",
                p => p.name(),
            };
            if let Some(d) =
                rtlab_model::mp_locking::check_uniprocessor(set, &cpus, protocol).first()
            {
                return Err(SimError::Setting {
                    setting: "protocol",
                    message: d.message.clone(),
                });
            }
        }
    }
    if !config.phases.is_empty() {
        return Err(SimError::Setting {
            setting: "phase",
            message: format!("overload phases are not modelled under {name}"),
        });
    }
    match spec.scope() {
        Scope::Global => {
            if let Some(t) = set.tasks.iter().find(|t| t.cpu.is_some()) {
                return Err(setup(format!(
                    "is global, but task `{}` is fixed to a processor (`cpu`): drop the `cpu` fields or use pedf, pfp:* or cedf",
                    t.name
                )));
            }
            let timing = config.timing();
            let o = config.overheads.as_ref();
            let per_event = o.is_some_and(|o| {
                [
                    o.timer,
                    o.preempt,
                    o.exit,
                    o.nonpreempt,
                    o.schedule,
                    o.release,
                ]
                .iter()
                .any(|c| !c.is_zero())
            });
            if config.tick.is_some() {
                return Err(SimError::Setting {
                    setting: "tick",
                    message: format!(
                        "is not modelled under {name} on m processors (the global engine takes only the overheads file's `migration` cost); use pedf/pfp, which take every overhead"
                    ),
                });
            }
            if per_event || timing.tick().is_some() {
                return Err(SimError::Setting {
                    setting: "overheads",
                    message: format!(
                        "{name} models only the `migration` cost on m processors: set the file's other costs to 0 and give no tick (or use pedf/pfp, which take every overhead)"
                    ),
                });
            }
        }
        Scope::Partitioned => {
            if set.assignment().is_none() {
                return Err(setup(
                    "needs every task's processor: give `cpu` in the task file or --partition HEURISTIC".into(),
                ));
            }
        }
        Scope::Clustered => {
            clusters(set).map_err(setup)?;
        }
        Scope::Uni => {}
    }
    Ok(())
}

/// Runs `set` under the multiprocessor scheduler `spec` on the platform of
/// `config`, sending every job record to `sink`.
pub fn run(
    set: &TaskSet,
    spec: &SchedulerSpec,
    config: &SimConfig,
    sink: Option<Box<dyn JobSink>>,
) -> Result<MultiRun, SimError> {
    if let Some(e) = set.errors().first() {
        return Err(SimError::TaskSet {
            name: set.name.clone(),
            message: e.message.clone(),
        });
    }
    if config.duration.is_zero() {
        return Err(SimError::Setting {
            setting: "duration",
            message: "must be greater than 0".into(),
        });
    }
    if let LockingProtocol::Multiprocessor(protocol) = config.protocol {
        return crate::mp_locking::run(set, spec, config, protocol, sink);
    }
    check(set, spec, config)?;
    let m = set.processors();
    let name = spec.to_string();
    let all: Vec<usize> = (0..set.tasks.len()).collect();
    let groups: Vec<Group> = match spec.scope() {
        Scope::Global | Scope::Uni => vec![((0..m).collect(), all)],
        Scope::Partitioned => (0..m)
            .map(|c| {
                let tasks = all
                    .iter()
                    .copied()
                    .filter(|&i| set.tasks[i].cpu == Some(c))
                    .collect();
                (vec![c], tasks)
            })
            .collect(),
        Scope::Clustered => clusters(set).map_err(|why| SimError::Setup {
            scheduler: name.clone(),
            why,
        })?,
    };
    let sink = sink.map(|s| Rc::new(RefCell::new(s)));
    let mut written = Ok(());
    let mut merged = Merged::new(set, &name, config);
    for (cpus, tasks) in groups {
        if tasks.is_empty() {
            continue;
        }
        // The sub-run's own platform: its processors renumbered from 0, no
        // fixed processors (they are all its own).
        let sub_set = TaskSet::new(
            set.name.clone(),
            tasks
                .iter()
                .map(|&i| Task {
                    cpu: None,
                    ..set.tasks[i].clone()
                })
                .collect(),
        )
        .on_platform(rtlab_model::Platform::new(cpus.len() as u32));
        let sub_config = config.clone();
        let forward = sink.clone().map(|out| -> Box<dyn JobSink> {
            Box::new(Renumbered {
                out,
                cpus: cpus.clone(),
                tasks: tasks.clone(),
            })
        });
        let rule = spec.global_rule(&sub_set.tasks)?;
        let (report, trace, stopped) = match (spec.per_processor(), rule) {
            (Some(uni), _) => {
                let mut sim = Simulator::new(&sub_set, &uni, sub_config)?;
                if let Some(f) = forward {
                    sim.with_sink(f);
                }
                sim.run();
                let report = sim.report();
                written = written.and(sim.finish_jobs());
                (report, sim.trace().map(clone_trace), sim.stopped())
            }
            (None, Some(rule)) => {
                let mut sim = GlobalSim::new(
                    &set.name,
                    sub_set.tasks.clone(),
                    rule,
                    name.clone(),
                    cpus.len() as u32,
                    sub_config,
                );
                if let Some(f) = forward {
                    sim.with_sink(f);
                }
                let report = sim.report();
                written = written.and(sim.finish_jobs());
                (report, sim.take_trace(), sim.stopped())
            }
            (None, None) => {
                return Err(SimError::Setup {
                    scheduler: name,
                    why: "is not a multiprocessor scheduler".into(),
                })
            }
        };
        merged.add(&report, trace.as_ref(), &cpus, &tasks);
        merged.stopped = merged.stopped.or(stopped);
    }
    if let Some(out) = sink {
        written = written.and_then(|()| out.borrow_mut().finish());
    }
    let mut run = merged.finish();
    run.jobs_written = written;
    Ok(run)
}

/// The groups of a clustered run: each cluster's processors and tasks
/// (the set's `clusters`, one cluster of every processor when it has
/// none; the model checked that they partition the processors).
/// Tasks go to the cluster holding their `cpu` when every task has one,
/// else by worst fit in decreasing utilization: each task, the heaviest
/// first, to the cluster with the least utilization per processor (the
/// first such on ties) among those it fits (a cluster of k processors
/// holds utilization at most k). Worst fit spreads the load, which global
/// EDF inside a cluster needs more than packing (Dhall's effect).
pub fn clusters(set: &TaskSet) -> Result<Vec<Group>, String> {
    let platform = &set.platform;
    let mut groups: Vec<Group> = platform
        .effective_clusters()
        .into_iter()
        .map(|c| (c, Vec::new()))
        .collect();
    if let Some(cpus) = set.assignment() {
        for (i, cpu) in cpus.into_iter().enumerate() {
            let k = platform.cluster_of(cpu).ok_or_else(|| {
                format!(
                    "task `{}` is fixed to cpu {cpu}, which is in no cluster",
                    set.tasks[i].name
                )
            })?;
            groups[k].1.push(i);
        }
        return Ok(groups);
    }
    let mut order: Vec<usize> = (0..set.tasks.len()).collect();
    order.sort_by(|&a, &b| {
        let (ua, ub) = (set.tasks[a].utilization(), set.tasks[b].utilization());
        ub.total_cmp(&ua).then(a.cmp(&b))
    });
    let mut load = vec![0.0_f64; groups.len()];
    for i in order {
        let u = set.tasks[i].utilization();
        let size = |k: usize| groups[k].0.len() as f64;
        let k = (0..groups.len())
            .filter(|&k| u <= 1.0 && load[k] + u <= size(k) + 1e-12)
            .min_by(|&a, &b| (load[a] / size(a)).total_cmp(&(load[b] / size(b))))
            .ok_or_else(|| {
                format!(
                    "task `{}` (U = {u:.3}) fits in no cluster by worst fit in decreasing utilization; give each task's `cpu`",
                    set.tasks[i].name
                )
            })?;
        load[k] += u;
        groups[k].1.push(i);
    }
    for g in &mut groups {
        g.1.sort_unstable();
    }
    Ok(groups)
}

fn clone_trace(t: &Trace) -> Trace {
    let mut copy = Trace::new(t.window, t.tasks.clone());
    copy.processors = t.processors;
    copy.per_processor = t.per_processor;
    copy.records = t.records.clone();
    copy.record_cpus = t.record_cpus.clone();
    copy.migrations = t.migrations.clone();
    copy.lock_marks = t.lock_marks.clone();
    copy.dropped = t.dropped;
    copy
}

/// The report and trace of a run made of sub-runs.
struct Merged {
    report: SimReport,
    trace: Option<Trace>,
    stopped: Option<BacklogStop>,
    first: bool,
}

impl Merged {
    fn new(set: &TaskSet, name: &str, config: &SimConfig) -> Merged {
        let m = set.processors();
        let duration = config.duration;
        // The report of no job at all: every task with zero counts, every
        // processor idle; the sub-runs' figures are added to it.
        let tasks: Vec<_> = set
            .tasks
            .iter()
            .map(|t| TaskSummary::default().metrics(&t.name))
            .collect();
        let report = SimReport {
            throttling: None,
            scheduler: name.to_string(),
            taskset: set.name.clone(),
            duration_ns: duration.as_ns(),
            protocol: config.protocol.name().into(),
            on_miss: config.on_miss.name().into(),
            tick_ns: None,
            timer: None,
            periodic_tick_ns: None,
            seed: config.seed,
            jitter: config.jitter.to_string(),
            totals: Totals::of(&tasks),
            context_switches: 0,
            context_switches_per_s: 0.0,
            overhead_ns: 0,
            idle_ns: 0,
            first_miss_ns: None,
            events: 0,
            tasks,
            scheduler_data: None,
            deadlock: None,
            migrations: 0,
            processors: idle_processors(m),
        };
        let trace = config.trace.map(|w| {
            let mut t = Trace::new(w, set.tasks.iter().map(|t: &Task| t.name.clone()).collect());
            t.processors = m;
            t.per_processor = true;
            t
        });
        Merged {
            report,
            trace,
            stopped: None,
            first: true,
        }
    }

    fn add(&mut self, sub: &SimReport, trace: Option<&Trace>, cpus: &[u32], tasks: &[usize]) {
        let r = &mut self.report;
        if self.first {
            r.tick_ns = sub.tick_ns;
            r.timer.clone_from(&sub.timer);
            r.periodic_tick_ns = sub.periodic_tick_ns;
            self.first = false;
        }
        for (k, &i) in tasks.iter().enumerate() {
            r.tasks[i] = sub.tasks[k].clone();
        }
        if let Some(t) = &sub.throttling {
            // Linux's limits are per CPU: each partition's servers add up.
            let merged =
                r.throttling
                    .get_or_insert_with(|| crate::kernel_servers::ThrottlingReport {
                        model: t.model.clone(),
                        ..Default::default()
                    });
            merged.rt_throttles += t.rt_throttles;
            merged.rt_throttled_ns += t.rt_throttled_ns;
            merged.fair_server_runs += t.fair_server_runs;
            merged.fair_server_ns += t.fair_server_ns;
        }
        r.context_switches += sub.context_switches;
        r.overhead_ns += sub.overhead_ns;
        r.events += sub.events;
        r.migrations += sub.migrations;
        if sub.processors.is_empty() {
            let cpu = &mut r.processors[cpus[0] as usize];
            cpu.overhead_ns = sub.overhead_ns;
            cpu.executed_ns = sub
                .duration_ns
                .saturating_sub(sub.idle_ns)
                .saturating_sub(sub.overhead_ns);
        } else {
            for (k, p) in sub.processors.iter().enumerate() {
                let cpu = &mut r.processors[cpus[k] as usize];
                cpu.overhead_ns = p.overhead_ns;
                cpu.executed_ns = p.executed_ns;
            }
        }
        if let (Some(merged), Some(t)) = (&mut self.trace, trace) {
            merged.absorb(t, cpus, tasks);
        }
    }

    fn finish(mut self) -> MultiRun {
        let r = &mut self.report;
        let duration = r.duration_ns;
        let mut busy = 0u64;
        for p in &mut r.processors {
            p.utilization = p.executed_ns as f64 / duration as f64;
            busy += p.executed_ns + p.overhead_ns;
        }
        r.idle_ns = duration
            .saturating_mul(r.processors.len() as u64)
            .saturating_sub(busy);
        r.totals = Totals::of(&r.tasks);
        r.first_miss_ns = r.totals.first_miss_ns;
        r.context_switches_per_s = r.context_switches as f64 / (duration as f64 / 1e9);
        MultiRun {
            report: self.report,
            trace: self.trace,
            stopped: self.stopped,
            jobs_written: Ok(()),
        }
    }
}

/// `m` processors with nothing done yet.
fn idle_processors(m: u32) -> Vec<ProcessorMetrics> {
    (0..m)
        .map(|cpu| ProcessorMetrics {
            cpu,
            executed_ns: 0,
            overhead_ns: 0,
            utilization: 0.0,
        })
        .collect()
}
