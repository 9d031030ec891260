//! A task set as an rt-app workload (`rtlab taskset export --format rt-app`).
//!
//! One thread per task, named after it, in declaration order:
//!
//! * `policy` / `priority` as `rtlab run --policy` maps them
//!   ([`thread_policies`]); SCHED_DEADLINE threads get `dl-runtime`,
//!   `dl-period`, `dl-deadline` instead of a priority (rtlab's budget,
//!   rounded up to a whole microsecond and kept within the deadline);
//! * `cpus`: on one processor, the pinned CPU; on `m` > 1 processors
//!   (rtlab's processor k is Linux's CPU k), the task's `cpu` as `[k]`, or
//!   all `[0, .., m-1]` for a task without one (global scheduling). Not for
//!   SCHED_DEADLINE, whose threads cannot be pinned narrower than their root
//!   domain: `rtlab compare --with rt-app` puts rt-app in an exclusive cpuset
//!   instead, and a task's `cpu` under SCHED_DEADLINE is a warning. Not with
//!   `--no-pin` ([`ExportOptions::cpu`] `None`);
//! * `delay`: the task's offset;
//! * `loop` -1, then the job: `run` events for C (critical sections as
//!   `lock` / `run` / `unlock` on the named resources, nested as in the
//!   task), then one `timer` with `"ref": "unique"`, `"period"` T and
//!   `"mode": "absolute"`, so releases are start + offset + k·T as in
//!   `rtlab run`;
//! * `global`: `duration` in whole seconds, `calibration` (see
//!   [`Calibration`]), `lock_pages`, `ftrace` and
//!   `gnuplot` false, `default_policy` SCHED_OTHER. No `log_size`: rt-app
//!   1.0 turns logging off for any string but "disable" (a bug in its
//!   parser), and without the key it logs to the files.
//!
//! rt-app counts time in whole microseconds: a time that is not one is
//! refused (naming the task and field), never rounded. What rt-app cannot
//! say is returned as warnings: release jitter, a best-case execution
//! time, and a deadline other than the period outside SCHED_DEADLINE.
//!
//! A repeated event kind is numbered (`run0`, `run1`, ...), as rt-app's
//! workgen does: rt-app matches event keys by prefix and json-c keeps one
//! value per key.

use rtlab_model::{printable, Nanos, Task, TaskSet};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

use crate::error::RtError;
use crate::executor::thread_policies;
use rtlab_host::policy::Policy;
use rtlab_model::policy::RunPolicy;

/// How rt-app turns `run` microseconds into loops of its busy function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calibration {
    /// Measure ns per loop on this CPU when rt-app starts (`"CPUn"`). The
    /// default is the CPU the threads run on, so the measurement sees the
    /// same core; rt-app's `run` then still overshoots by what the
    /// calibration misses (cache state, frequency, interrupts).
    Cpu(usize),
    /// A fixed ns-per-loop value (rt-app skips calibrating).
    NsPerLoop(u64),
}

/// What the exported workload is for.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The pinned CPU (`None`: no `cpus`).
    pub cpu: Option<usize>,
    /// `global.duration`: whole seconds.
    pub duration: Nanos,
    /// `global.calibration`.
    pub calibration: Calibration,
    /// `global.lock_pages`.
    pub lock_pages: bool,
    /// `global.logdir`.
    pub logdir: String,
    /// `global.log_basename`.
    pub log_basename: String,
}

impl ExportOptions {
    /// Pinned to `cpu` (calibrated there, or on CPU 0 when not pinned),
    /// pages locked, logs in `./` as `rt-app-<thread>-<i>.log`.
    pub fn new(cpu: Option<usize>, duration: Nanos) -> ExportOptions {
        ExportOptions {
            cpu,
            duration,
            calibration: Calibration::Cpu(cpu.unwrap_or(0)),
            lock_pages: true,
            logdir: "./".to_string(),
            log_basename: "rt-app".to_string(),
        }
    }
}

/// A JSON object whose keys keep the order they were added in (rt-app
/// runs a phase's events in file order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderedObject(pub Vec<(String, Member)>);

/// A member of an [`OrderedObject`]: a plain JSON value or a nested
/// ordered object.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Member {
    /// A JSON value.
    Value(Value),
    /// An object with ordered keys.
    Object(OrderedObject),
}

impl OrderedObject {
    fn push(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.0.push((key.into(), Member::Value(value.into())));
    }

    fn push_object(&mut self, key: impl Into<String>, object: OrderedObject) {
        self.0.push((key.into(), Member::Object(object)));
    }
}

impl Serialize for OrderedObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// An rt-app workload document: `tasks` then `global`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RtAppDocument {
    /// One thread object per task, by task name, in declaration order.
    pub tasks: OrderedObject,
    /// Run-wide settings.
    pub global: OrderedObject,
}

impl RtAppDocument {
    /// Pretty-printed JSON (deterministic), ending in a newline.
    pub fn to_json_string(&self) -> String {
        let mut text =
            serde_json::to_string_pretty(self).expect("an rt-app document always serializes");
        text.push('\n');
        text
    }
}

/// The workload and what it could not say.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The document.
    pub document: RtAppDocument,
    /// One line each: jitter, bcet, deadlines rt-app cannot carry.
    pub warnings: Vec<String>,
}

/// `set` under `policy` (`rtlab run`'s mapping; `edf_margin` as
/// `--edf-margin`).
pub fn export(
    set: &TaskSet,
    policy: RunPolicy,
    edf_margin: Option<Nanos>,
    options: &ExportOptions,
) -> Result<Exported, RtError> {
    let policies = thread_policies(set, policy, edf_margin)?;
    export_with_policies(set, &policies, options)
}

/// `set` with one Linux policy per task (declaration order), e.g. after
/// SCHED_DEADLINE budgets were fitted to the admission limit.
pub fn export_with_policies(
    set: &TaskSet,
    policies: &[Policy],
    options: &ExportOptions,
) -> Result<Exported, RtError> {
    let seconds = whole(options.duration, 1_000_000_000).ok_or_else(|| RtError::Invalid {
        what: format!("duration {}", options.duration),
        why: "rt-app's duration is a whole number of seconds".into(),
    })?;
    let mut warnings = Vec::new();
    let mut tasks = OrderedObject::default();
    for (task, policy) in set.tasks.iter().zip(policies) {
        let cpus = thread_cpus(set, task, options);
        tasks.push_object(
            task.name.clone(),
            thread(task, policy, cpus, set.processors() > 1, &mut warnings)?,
        );
    }
    let mut global = OrderedObject::default();
    global.push("duration", seconds);
    global.push(
        "calibration",
        match options.calibration {
            Calibration::Cpu(cpu) => json!(format!("CPU{cpu}")),
            Calibration::NsPerLoop(ns) => json!(ns),
        },
    );
    global.push("default_policy", "SCHED_OTHER");
    global.push("pi_enabled", false);
    global.push("lock_pages", options.lock_pages);
    global.push("logdir", options.logdir.clone());
    global.push("log_basename", options.log_basename.clone());
    global.push("ftrace", false);
    global.push("gnuplot", false);
    Ok(Exported {
        document: RtAppDocument { tasks, global },
        warnings,
    })
}

/// `n` in units of `unit` ns, when it is a whole number of them.
fn whole(n: Nanos, unit: u64) -> Option<u64> {
    n.as_ns().is_multiple_of(unit).then_some(n.as_ns() / unit)
}

/// `value` in whole microseconds, or the refusal naming the task and field.
fn micros(task: &Task, field: &str, value: Nanos) -> Result<u64, RtError> {
    whole(value, 1_000).ok_or_else(|| RtError::Invalid {
        what: format!("task `{}`: {field} {value}", printable(&task.name)),
        why: "rt-app's times are whole microseconds; round it in the task set".into(),
    })
}

/// The CPUs a task's thread may run on (see the module's words), or
/// `None` when the threads are not pinned.
fn thread_cpus(set: &TaskSet, task: &Task, options: &ExportOptions) -> Option<Vec<usize>> {
    let pinned = options.cpu?;
    let m = set.processors();
    if m <= 1 {
        return Some(vec![pinned]);
    }
    Some(match task.cpu {
        Some(k) => vec![k as usize],
        None => (0..m as usize).collect(),
    })
}

fn thread(
    task: &Task,
    policy: &Policy,
    cpus: Option<Vec<usize>>,
    multiprocessor: bool,
    warnings: &mut Vec<String>,
) -> Result<OrderedObject, RtError> {
    let name = printable(&task.name);
    let mut t = OrderedObject::default();
    t.push("policy", policy.kernel_name());
    match *policy {
        Policy::Other { nice } => t.push("priority", nice),
        Policy::Fifo { priority } | Policy::RoundRobin { priority } => t.push("priority", priority),
        Policy::Deadline {
            runtime,
            deadline,
            period,
        } => {
            let runtime_us = runtime.as_ns().div_ceil(1_000);
            t.push(
                "dl-runtime",
                runtime_us.min(micros(task, "deadline", deadline)?),
            );
            t.push("dl-period", micros(task, "period", period)?);
            t.push("dl-deadline", micros(task, "deadline", deadline)?);
        }
    }
    if !matches!(policy, Policy::Deadline { .. }) {
        if let Some(cpus) = cpus {
            t.push("cpus", json!(cpus));
        }
        if task.deadline != task.period {
            warnings.push(format!(
                "task `{name}`: rt-app has no deadline outside SCHED_DEADLINE; its D {} is not in the file (D = T = {} when read back)",
                task.deadline, task.period
            ));
        }
    } else if let (Some(k), Some(_), true) = (task.cpu, &cpus, multiprocessor) {
        warnings.push(format!(
            "task `{name}`: a SCHED_DEADLINE thread cannot be pinned to CPU {k} alone (the kernel wants its whole root domain): no `cpus`; partitioned EDF needs one exclusive cpuset per CPU"
        ));
    }
    if matches!(policy, Policy::Deadline { .. }) && task.deadline > task.period {
        warnings.push(format!(
            "task `{name}`: SCHED_DEADLINE needs deadline <= period: dl-deadline is the period {}, not D {}",
            task.period, task.deadline
        ));
    }
    if !task.offset.is_zero() {
        t.push("delay", micros(task, "offset", task.offset)?);
    }
    if !task.jitter.is_zero() {
        warnings.push(format!(
            "task `{name}`: rt-app releases strictly periodically; its jitter {} is not in the file",
            task.jitter
        ));
    }
    if let Some(bcet) = task.bcet {
        warnings.push(format!(
            "task `{name}`: rt-app runs every job for C; its bcet {bcet} is not in the file"
        ));
    }
    t.push("loop", -1);
    for (key, value) in job_events(task)? {
        t.push(key, value);
    }
    let mut timer = OrderedObject::default();
    timer.push("ref", "unique");
    timer.push("period", micros(task, "period", task.period)?);
    timer.push("mode", "absolute");
    t.push_object("timer", timer);
    Ok(t)
}

/// The job as rt-app events: runs between the critical sections'
/// boundaries; at each boundary the sections ending there are unlocked
/// (innermost first), then those starting there are locked (in the task's
/// order). Repeated kinds are numbered.
fn job_events(task: &Task) -> Result<Vec<(String, Value)>, RtError> {
    enum Ev {
        Run(Nanos),
        Lock(usize),
        Unlock(usize),
    }
    let sections = &task.critical_sections;
    let mut points: Vec<Nanos> = sections
        .iter()
        .flat_map(|cs| [cs.start, cs.end().unwrap_or(cs.start)])
        .chain([task.wcet])
        .collect();
    points.sort_unstable();
    points.dedup();
    let mut events = Vec::new();
    let mut now = Nanos::ZERO;
    let mut held: Vec<usize> = Vec::new();
    for point in points {
        if point > now {
            events.push(Ev::Run(point - now));
            now = point;
        }
        while let Some(&inner) = held.last() {
            if sections[inner].end() == Some(point) {
                events.push(Ev::Unlock(inner));
                held.pop();
            } else {
                break;
            }
        }
        for (i, cs) in sections.iter().enumerate() {
            if cs.start == point {
                events.push(Ev::Lock(i));
                held.push(i);
            }
        }
    }
    let count = |kind: fn(&Ev) -> bool| events.iter().filter(|e| kind(e)).count();
    let runs = count(|e| matches!(e, Ev::Run(_)));
    let locks = count(|e| matches!(e, Ev::Lock(_)));
    let key = |kind: &str, total: usize, seen: &mut usize| {
        let k = if total > 1 {
            format!("{kind}{seen}")
        } else {
            kind.to_string()
        };
        *seen += 1;
        k
    };
    let (mut run_i, mut lock_i, mut unlock_i) = (0, 0, 0);
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        out.push(match e {
            Ev::Run(d) => (
                key("run", runs, &mut run_i),
                json!(micros(task, "wcet", d)?),
            ),
            Ev::Lock(i) => (
                key("lock", locks, &mut lock_i),
                json!(sections[i].resource.clone()),
            ),
            Ev::Unlock(i) => (
                key("unlock", locks, &mut unlock_i),
                json!(sections[i].resource.clone()),
            ),
        });
    }
    Ok(out)
}
