//! rt-app workloads (scheduler-tools/rt-app, `doc/tutorial.txt`) read as
//! task sets: the periodic subset of rt-app's grammar becomes a [`Task`]
//! per thread; everything else is refused with the place of its key.
//!
//! A file is an rt-app workload when its top level is an object with a
//! `tasks` object (and no `task` array, rtlab's own key). rt-app's JSON is
//! json-c's: comments and trailing commas are accepted.
//!
//! What maps (times in rt-app are whole microseconds):
//!
//! | rt-app                                   | task                          |
//! | ---------------------------------------- | ----------------------------- |
//! | thread key                               | `name`                        |
//! | `run` / `runtime` events, summed         | `wcet` C                      |
//! | the phase's one `timer` `period`         | `period` T                    |
//! | or, without a timer, C + a final `sleep` | `period` T (noted: it drifts) |
//! | `delay`                                  | `offset`                      |
//! | `dl-deadline` (SCHED_DEADLINE only)      | `deadline` D (else D = T)     |
//! | `priority` of SCHED_FIFO / SCHED_RR      | `priority` (for `given`)      |
//! | `lock` X ... `unlock` X                  | a critical section on X       |
//! | `cpus` `[k]` (threads not all on one CPU) | `cpu` k; `processors` 1 + the largest CPU named |
//! | `instance` N > 1                         | N tasks `name-IND`, IND rt-app's thread index |
//!
//! `cpus`: when every thread with `cpus` names the same one CPU, the set
//! has one processor and no `cpu` (that CPU is where it runs: `rtlab run
//! --cpu`); otherwise a thread of one CPU is fixed there and a thread of
//! several is free (global). `instance` N: rt-app starts N copies of the
//! thread, numbering all threads of the file in order (`ind`, in its log
//! names `<basename>-<thread>-<ind>.log`); rtlab names the copies
//! `thread-ind` so that they match, and refuses a non-unique timer `ref`
//! the copies would share. At most [`MAX_THREADS`] threads in all.
//!
//! Accepted and not part of the task: `loop` -1, the policy itself (rtlab chooses it with
//! `--policy`), `dl-runtime`/`dl-period` (rtlab computes the budget), the
//! `global` object and the legacy `resources` object. Refused, each at its
//! key: every other event (`mem`, `iorun`, `wait`, `signal`, `broad`,
//! `sync`, `barrier`, `suspend`, `resume`, `yield`, `fork`, ...), a `sleep`
//! inside a job, a second timer, events after the timer, more than one
//! phase, `instance` 0, a finite thread `loop`, a timer shared by two
//! threads or by the instances of one, an `unlock` that does not release the innermost lock held,
//! times that are not whole non-negative microseconds, and unknown keys.

use super::document::{Entry, Node, Value};
use crate::platform::MAX_PROCESSORS;
use crate::task::{CriticalSection, FieldPath, PathSegment, Task};
use crate::text::printable;
use crate::time::Nanos;

/// Threads read from one rt-app file at most, instances counted: memory
/// stays bounded whatever `instance` says.
pub const MAX_THREADS: u64 = 100_000;

/// A thread as read: its task (before naming instances), where its parts
/// are, how many instances rt-app starts, and its `cpus`.
struct Thread {
    task: Task,
    places: TaskPlaces,
    instances: u32,
    instances_at: usize,
    cpus: Option<(Vec<u32>, usize)>,
}

/// `0,1,3`.
fn join(cpus: &[u32]) -> String {
    let cpus: Vec<String> = cpus.iter().map(u32::to_string).collect();
    cpus.join(",")
}

/// rt-app's event names, in the order rt-app matches a key's prefix
/// against them (`rt-app_parse_config.c`, `events[]`); `fork` and
/// `memrun` come from later rt-app versions.
const EVENTS: &[&str] = &[
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer",
    "suspend", "resume", "memrun", "mem", "iorun", "yield", "barrier", "fork",
];

/// Thread keys read (besides events, in the one-phase form).
const THREAD_KEYS: &[&str] = &[
    "instance",
    "loop",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "cpus",
    "delay",
    "phases",
];

/// Phase keys read besides events.
const PHASE_KEYS: &[&str] = &["loop", "cpus"];

/// Top-level keys.
const ROOT_KEYS: &[&str] = &["tasks", "global", "resources"];

/// The keys of rt-app's `global` object (all about the run, none about
/// the tasks).
const GLOBAL_KEYS: &[&str] = &[
    "duration",
    "calibration",
    "default_policy",
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
];

/// True when `root` is an rt-app workload: an object with a `tasks`
/// object and no `task` key.
pub(super) fn is_rtapp(root: &Node) -> bool {
    matches!(
        root.get("tasks"),
        Some(Node {
            value: Value::Table(_),
            ..
        })
    ) && root.get("task").is_none()
}

/// A problem or note at a byte offset.
#[derive(Debug)]
pub(super) struct Remark {
    /// Byte offset of the key or value.
    pub offset: usize,
    /// One line.
    pub message: String,
}

/// Where each part of an imported task came from, so that the model's
/// validation can point into the rt-app file.
#[derive(Debug, Default, Clone)]
pub(super) struct TaskPlaces {
    thread: usize,
    wcet: usize,
    period: usize,
    deadline: usize,
    offset: usize,
    priority: usize,
    sections: Vec<usize>,
}

/// The tasks of an rt-app workload, with notes and places.
#[derive(Debug)]
pub(super) struct Imported {
    /// One task per thread, in file order.
    pub tasks: Vec<Task>,
    /// Accepted, but worth saying (a drifting `sleep` period, a relative timer).
    pub notes: Vec<Remark>,
    /// Processors: 1, or one more than the largest CPU a thread's `cpus`
    /// names when the threads are not all pinned to the same one CPU.
    pub processors: u32,
    places: Vec<TaskPlaces>,
}

impl Imported {
    /// Byte offset in the rt-app file of a validation diagnostic's field
    /// (`task[i].field`, `task[i].critical_sections[j].field`).
    pub(super) fn offset_of(&self, path: &FieldPath) -> usize {
        let segments = &path.0;
        let Some(PathSegment::Index(i)) = segments.get(1) else {
            return 0;
        };
        let Some(places) = self.places.get(*i) else {
            return 0;
        };
        match (segments.get(2), segments.get(3)) {
            (Some(PathSegment::Key("critical_sections")), Some(PathSegment::Index(j))) => {
                places.sections.get(*j).copied().unwrap_or(places.thread)
            }
            (Some(PathSegment::Key(field)), _) => match *field {
                "wcet" | "bcet" => places.wcet,
                "period" => places.period,
                "deadline" => places.deadline,
                "offset" => places.offset,
                "priority" => places.priority,
                _ => places.thread,
            },
            _ => places.thread,
        }
    }
}

/// Decodes an rt-app workload (`is_rtapp(root)` holds); every refusal, or
/// the tasks.
pub(super) fn decode(root: &Node) -> Result<Imported, Vec<Remark>> {
    let mut d = Importer::default();
    let Value::Table(entries) = &root.value else {
        unreachable_shape(&mut d, root);
        return Err(d.problems);
    };
    d.check_keys(entries, ROOT_KEYS, "at the top level of an rt-app file");
    let default_policy = root
        .get("global")
        .and_then(|g| d.global(g))
        .unwrap_or(Policy::Other);
    let mut tasks = Vec::new();
    let mut places = Vec::new();
    let mut processors = 1;
    if let Some(Node {
        value: Value::Table(threads),
        ..
    }) = root.get("tasks")
    {
        if threads.is_empty() {
            d.problem(
                root.get("tasks").map_or(0, |n| n.offset),
                "`tasks` has no threads".into(),
            );
        }
        // rt-app's thread index: every instance of every thread, in file order.
        let mut index: u64 = 0;
        let mut pins = Vec::new();
        for entry in threads {
            let first = index;
            let Some(thread) = d.thread(entry, default_policy) else {
                continue;
            };
            index += u64::from(thread.instances);
            if index > MAX_THREADS {
                d.problem(
                    thread.instances_at,
                    format!("more than {MAX_THREADS} threads in all (with `instance`s): rtlab reads at most that many tasks from an rt-app file"),
                );
                break;
            }
            for k in first..index {
                let mut task = thread.task.clone();
                if thread.instances > 1 {
                    task.name = format!("{}-{k}", task.name);
                }
                tasks.push(task);
                places.push(thread.places.clone());
                pins.push(thread.cpus.clone());
            }
        }
        processors = d.placement(&mut tasks, &pins);
    }
    d.check_shared_timers();
    if d.problems.is_empty() {
        Ok(Imported {
            tasks,
            notes: d.notes,
            processors,
            places,
        })
    } else {
        d.problems.sort_by_key(|p| p.offset);
        Err(d.problems)
    }
}

fn unreachable_shape(d: &mut Importer, root: &Node) {
    d.problem(
        root.offset,
        "an rt-app file is an object with a `tasks` object".into(),
    );
}

/// A thread's scheduling class, as far as the task model cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    Other,
    Fifo,
    RoundRobin,
    Deadline,
}

impl Policy {
    fn parse(name: &str) -> Option<Policy> {
        Some(match name {
            "SCHED_OTHER" => Policy::Other,
            "SCHED_FIFO" => Policy::Fifo,
            "SCHED_RR" => Policy::RoundRobin,
            "SCHED_DEADLINE" => Policy::Deadline,
            _ => return None,
        })
    }
}

/// One step of a job, in execution order.
enum Step {
    Run(Nanos),
    Lock(String),
    Unlock(String),
}

#[derive(Default)]
struct Importer {
    problems: Vec<Remark>,
    notes: Vec<Remark>,
    /// Non-unique timer refs: (ref, thread, offset), to refuse sharing.
    timers: Vec<(String, String, usize)>,
}

impl Importer {
    fn problem(&mut self, offset: usize, message: String) {
        self.problems.push(Remark {
            offset,
            message: printable(&message).into_owned(),
        });
    }

    fn note(&mut self, offset: usize, message: String) {
        self.notes.push(Remark {
            offset,
            message: printable(&message).into_owned(),
        });
    }

    fn check_keys(&mut self, entries: &[Entry], known: &[&str], place: &str) {
        for (i, entry) in entries.iter().enumerate() {
            if !known.contains(&entry.key.as_str()) {
                self.problem(
                    entry.key_offset,
                    format!(
                        "unknown key `{}` {place} (rtlab reads {})",
                        entry.key,
                        list(known)
                    ),
                );
            } else if entries[..i].iter().any(|e| e.key == entry.key) {
                self.problem(entry.key_offset, duplicate(&entry.key));
            }
        }
    }

    /// The `global` object: only `default_policy` matters to the tasks.
    fn global(&mut self, node: &Node) -> Option<Policy> {
        let Value::Table(entries) = &node.value else {
            self.problem(node.offset, "`global` must be an object".into());
            return None;
        };
        self.check_keys(entries, GLOBAL_KEYS, "in `global`");
        let policy = node.get("default_policy")?;
        self.policy(policy, "default_policy")
    }

    fn policy(&mut self, node: &Node, key: &str) -> Option<Policy> {
        match &node.value {
            Value::String(s) => match Policy::parse(s) {
                Some(p) => Some(p),
                None => {
                    self.problem(
                        node.offset,
                        format!(
                            "`{key}` \"{s}\": rtlab reads SCHED_OTHER, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE"
                        ),
                    );
                    None
                }
            },
            _ => {
                self.problem(
                    node.offset,
                    format!("`{key}` must be a string like \"SCHED_FIFO\""),
                );
                None
            }
        }
    }

    /// A whole number >= 0 (a count: `instance`, `loop`).
    fn whole(&mut self, node: &Node, key: &str) -> Option<u64> {
        self.whole_of(node, key, "")
    }

    /// A whole number >= 0; `unit` says what it counts, after the message.
    fn whole_of(&mut self, node: &Node, key: &str, unit: &str) -> Option<u64> {
        if let Value::Integer(n) = &node.value {
            if let Ok(v) = n.parse::<u64>() {
                return Some(v);
            }
        }
        self.problem(
            node.offset,
            format!("`{key}` must be a whole number >= 0{unit}"),
        );
        None
    }

    /// A time: whole microseconds >= 0.
    fn micros(&mut self, node: &Node, key: &str) -> Option<Nanos> {
        let us = self.whole_of(node, key, " (rt-app's times are microseconds)")?;
        match us.checked_mul(1_000) {
            Some(ns) => Some(Nanos::from_ns(ns)),
            None => {
                self.problem(node.offset, format!("`{key}` {us} us is too long"));
                None
            }
        }
    }

    fn thread(&mut self, entry: &Entry, default_policy: Policy) -> Option<Thread> {
        let name = entry.key.clone();
        let node = &entry.node;
        let Value::Table(keys) = &node.value else {
            self.problem(node.offset, format!("thread `{name}` must be an object"));
            return None;
        };
        let before = self.problems.len();
        let phases = node.get("phases");
        for (i, key) in keys.iter().enumerate() {
            let k = key.key.as_str();
            if THREAD_KEYS.contains(&k) {
                if keys[..i].iter().any(|e| e.key == key.key) {
                    self.problem(key.key_offset, duplicate(k));
                }
            } else if event_of(k).is_none() || phases.is_some() {
                self.problem(
                    key.key_offset,
                    format!(
                        "unknown key `{k}` in thread `{name}` (rtlab reads {} and, without `phases`, events)",
                        list(THREAD_KEYS)
                    ),
                );
            }
        }
        let mut places = TaskPlaces {
            thread: entry.key_offset,
            ..TaskPlaces::default()
        };
        let mut instances = 1;
        let instances_at = node.get("instance").map_or(entry.key_offset, |n| n.offset);
        if let Some(n) = node.get("instance") {
            match self.whole(n, "instance") {
                Some(0) => self.problem(
                    n.offset,
                    format!("thread `{name}`: `instance` 0 starts no thread: remove the thread or make it 1"),
                ),
                Some(v) if v > MAX_THREADS => self.problem(
                    n.offset,
                    format!("thread `{name}`: `instance` {v} is above rtlab's {MAX_THREADS} threads"),
                ),
                Some(v) => instances = v as u32,
                None => {}
            }
        }
        if let Some(n) = node.get("loop") {
            if !matches!(&n.value, Value::Integer(v) if v == "-1") {
                self.problem(
                    n.offset,
                    format!("thread `{name}`: a finite `loop` is refused: rtlab's tasks release jobs for the whole run (use -1)"),
                );
            }
        }
        let policy = match node.get("policy") {
            Some(p) => self.policy(p, "policy"),
            None => Some(default_policy),
        };
        let mut priority = None;
        if let Some(p) = node.get("priority") {
            places.priority = p.offset;
            match policy {
                Some(Policy::Fifo | Policy::RoundRobin) => match &p.value {
                    Value::Integer(v) if v.parse::<u32>().is_ok_and(|v| (1..=99).contains(&v)) => {
                        priority = v.parse::<u32>().ok();
                    }
                    _ => self.problem(
                        p.offset,
                        format!(
                            "thread `{name}`: `priority` must be 1..99 for SCHED_FIFO and SCHED_RR"
                        ),
                    ),
                },
                Some(Policy::Other) if !matches!(&p.value, Value::Integer(v) if v == "0") => {
                    self.note(
                        p.offset,
                        format!("thread `{name}`: the nice value of a SCHED_OTHER thread is not part of the task (rtlab runs `other` at nice 0)"),
                    );
                }
                _ => {}
            }
        }
        for key in ["dl-runtime", "dl-period"] {
            if let Some(n) = node.get(key) {
                self.micros(n, key);
            }
        }
        let dl_deadline = node.get("dl-deadline").and_then(|n| {
            let value = self.micros(n, "dl-deadline")?;
            Some((value, n.offset))
        });
        let offset = match node.get("delay") {
            Some(n) => {
                places.offset = n.offset;
                // rt-app treats a negative delay as 0; rtlab refuses it.
                self.micros(n, "delay").unwrap_or_default()
            }
            None => Nanos::ZERO,
        };
        let mut cpus = node.get("cpus").and_then(|c| self.cpus(c));
        let phase = match phases {
            None => Some((node, keys.as_slice())),
            Some(p) => self.only_phase(&name, p),
        };
        if let (None, Some((phase_node, _)), Some(_)) = (&cpus, phase, phases) {
            cpus = phase_node.get("cpus").and_then(|c| self.cpus(c));
        }
        let (job, period) = match phase {
            Some((phase_node, phase_keys)) => {
                self.phase(&name, phase_node, phase_keys, &mut places)?
            }
            None => return None,
        };
        if instances > 1 {
            if let Some((r, _, at)) = self.timers.iter().find(|(_, t, _)| *t == name) {
                let (r, at) = (r.clone(), *at);
                self.problem(
                    at,
                    format!("thread `{name}`: its {instances} instances would share timer `{r}` (rt-app gives each instance its own timer only for a ref starting with \"unique\")"),
                );
            }
        }
        let mut deadline = period;
        places.deadline = places.period;
        if let Some((d, at)) = dl_deadline {
            if policy == Some(Policy::Deadline) && !d.is_zero() {
                deadline = d;
                places.deadline = at;
            }
        }
        if self.problems.len() > before {
            return None;
        }
        let (wcet, sections) = self.sections(&name, &job, &mut places)?;
        Some(Thread {
            task: Task {
                name,
                period,
                deadline,
                wcet,
                bcet: None,
                offset,
                jitter: Nanos::ZERO,
                priority,
                critical_sections: sections,
                cpu: None,
            },
            places,
            instances,
            instances_at,
            cpus,
        })
    }

    /// The CPU numbers of a `cpus` array (and its place), or `None` with
    /// the problem recorded.
    fn cpus(&mut self, node: &Node) -> Option<(Vec<u32>, usize)> {
        let cpus: Option<Vec<u32>> = match &node.value {
            Value::Array(items) => items
                .iter()
                .map(|c| match &c.value {
                    Value::Integer(v) => v.parse::<u32>().ok(),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        match cpus {
            Some(list) if list.is_empty() => {
                self.problem(node.offset, "`cpus` is empty: name at least one CPU".into());
                None
            }
            Some(list) => match list.iter().find(|c| **c >= MAX_PROCESSORS) {
                Some(c) => {
                    self.problem(
                        node.offset,
                        format!("`cpus` names CPU {c}: rtlab models at most {MAX_PROCESSORS} processors"),
                    );
                    None
                }
                None => Some((list, node.offset)),
            },
            None => {
                self.problem(node.offset, "`cpus` must be an array of CPU numbers".into());
                None
            }
        }
    }

    /// The platform the threads' `cpus` describe: when every thread is
    /// pinned to one and the same CPU (or none has `cpus`), one processor
    /// and no task `cpu` (the CPU is where the set runs, as `rtlab run
    /// --cpu` says); otherwise `1 +` the largest CPU named, a thread of one
    /// CPU fixed there (its task's `cpu`), a thread of several CPUs free
    /// (no `cpu`; noted when they are not all the processors).
    fn placement(&mut self, tasks: &mut [Task], pins: &[Option<(Vec<u32>, usize)>]) -> u32 {
        let mut singles = pins
            .iter()
            .flatten()
            .filter(|(c, _)| c.len() == 1)
            .map(|(c, _)| c[0]);
        let first = singles.next();
        let all_one = pins.iter().all(|p| match p {
            None => true,
            Some((c, _)) => c.len() == 1 && Some(c[0]) == first,
        });
        if all_one {
            return 1;
        }
        let m = pins
            .iter()
            .flatten()
            .flat_map(|(c, _)| c.iter().copied())
            .max()
            .map_or(1, |c| c + 1);
        for (task, pin) in tasks.iter_mut().zip(pins) {
            match pin {
                Some((cpus, _)) if cpus.len() == 1 => task.cpu = Some(cpus[0]),
                Some((cpus, at)) => {
                    let mut sorted = cpus.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    if sorted.len() != m as usize {
                        self.note(
                            *at,
                            format!("task `{}`: rt-app lets this thread run on CPUs {}; rtlab's global schedulers use all {m} processors", task.name, join(&sorted)),
                        );
                    }
                }
                None => {}
            }
        }
        m
    }

    /// The one phase of a `phases` object.
    fn only_phase<'a>(&mut self, name: &str, phases: &'a Node) -> Option<(&'a Node, &'a [Entry])> {
        let Value::Table(list) = &phases.value else {
            self.problem(
                phases.offset,
                format!("thread `{name}`: `phases` must be an object"),
            );
            return None;
        };
        match list.as_slice() {
            [] => {
                self.problem(phases.offset, format!("thread `{name}`: `phases` is empty"));
                None
            }
            [only] => match &only.node.value {
                Value::Table(keys) => {
                    self.check_phase_keys(name, keys);
                    Some((&only.node, keys.as_slice()))
                }
                _ => {
                    self.problem(
                        only.node.offset,
                        format!("thread `{name}`: a phase must be an object"),
                    );
                    None
                }
            },
            [_, second, ..] => {
                self.problem(
                    second.key_offset,
                    format!("thread `{name}`: a second phase `{}` is refused: an rtlab task repeats one job (split the thread into tasks)", second.key),
                );
                None
            }
        }
    }

    fn check_phase_keys(&mut self, name: &str, keys: &[Entry]) {
        for key in keys {
            let k = key.key.as_str();
            if !PHASE_KEYS.contains(&k) && event_of(k).is_none() {
                self.problem(
                    key.key_offset,
                    format!("unknown key `{k}` in a phase of thread `{name}` (rtlab reads {} and events)", list(PHASE_KEYS)),
                );
            }
        }
    }

    /// The events of the phase: the job's steps (before the timer) and the
    /// period.
    fn phase(
        &mut self,
        name: &str,
        node: &Node,
        keys: &[Entry],
        places: &mut TaskPlaces,
    ) -> Option<(Vec<(Step, usize)>, Nanos)> {
        let mut job = Vec::new();
        let mut timer: Option<(Nanos, usize)> = None;
        // A timer written but refused (its period was said to be wrong): not
        // a thread "without a timer".
        let mut timer_refused = false;
        let mut sleep: Option<(Nanos, usize)> = None;
        let mut seen: Vec<&str> = Vec::new();
        for entry in keys {
            let Some(event) = event_of(&entry.key) else {
                continue;
            };
            if seen.contains(&entry.key.as_str()) {
                self.problem(entry.key_offset, duplicate(&entry.key));
                continue;
            }
            seen.push(&entry.key);
            let at = entry.key_offset;
            if let Some((_, timer_at)) = timer {
                let _ = timer_at;
                self.problem(
                    at,
                    format!("thread `{name}`: `{}` after the timer is refused: the timer ends the job (put it last)", entry.key),
                );
                continue;
            }
            match event {
                "run" | "runtime" => {
                    if let Some(v) = self.micros(&entry.node, &entry.key) {
                        if let Some((_, sleep_at)) = sleep {
                            self.problem(
                                sleep_at,
                                format!("thread `{name}`: a `sleep` inside a job (self-suspension) is refused: rtlab's jobs do not suspend"),
                            );
                            sleep = None;
                        }
                        if job.is_empty() {
                            places.wcet = at;
                        }
                        job.push((Step::Run(v), at));
                    }
                }
                "lock" | "unlock" => match &entry.node.value {
                    Value::String(r) if !r.is_empty() => {
                        let step = if event == "lock" {
                            Step::Lock(r.clone())
                        } else {
                            Step::Unlock(r.clone())
                        };
                        job.push((step, at));
                    }
                    _ => self.problem(
                        entry.node.offset,
                        format!("`{}` must name a resource (a non-empty string)", entry.key),
                    ),
                },
                "sleep" => {
                    if let Some(v) = self.micros(&entry.node, &entry.key) {
                        if v.is_zero() {
                            continue;
                        }
                        if let Some((_, first)) = sleep {
                            let _ = first;
                            self.problem(at, format!("thread `{name}`: a second `sleep` is refused: rtlab's jobs do not suspend"));
                        } else {
                            sleep = Some((v, at));
                        }
                    }
                }
                "timer" => {
                    if let Some((_, sleep_at)) = sleep.take() {
                        self.problem(
                            sleep_at,
                            format!("thread `{name}`: a `sleep` beside a timer is refused: rtlab's jobs do not suspend"),
                        );
                    }
                    match self.timer(name, &entry.node) {
                        Some(t) => timer = Some((t, at)),
                        None => timer_refused = true,
                    }
                }
                other => self.problem(at, refused_event(name, &entry.key, other)),
            }
        }
        let period = match (timer, sleep) {
            (Some((t, at)), _) => {
                places.period = at;
                t
            }
            (None, Some((s, at))) => {
                let busy = job.iter().fold(Nanos::ZERO, |sum, (step, _)| match step {
                    Step::Run(v) => sum.saturating_add(*v),
                    _ => sum,
                });
                places.period = at;
                self.note(
                    at,
                    format!("thread `{name}`: period taken as run + sleep ({}): rt-app's sleep-based period drifts with response times, rtlab releases every period", busy.saturating_add(s)),
                );
                busy.saturating_add(s)
            }
            (None, None) if timer_refused => return None,
            (None, None) => {
                self.problem(
                    node.offset,
                    format!("thread `{name}` has no `timer` (or final `sleep`): rtlab's tasks are periodic"),
                );
                return None;
            }
        };
        Some((job, period))
    }

    /// A timer's period; notes the relative mode, remembers shared refs.
    fn timer(&mut self, name: &str, node: &Node) -> Option<Nanos> {
        let Value::Table(keys) = &node.value else {
            self.problem(
                node.offset,
                "`timer` must be an object with `ref` and `period`".into(),
            );
            return None;
        };
        self.check_keys(keys, &["ref", "period", "mode"], "in a timer");
        let period = match node.get("period") {
            Some(p) => self.micros(p, "period")?,
            None => {
                self.problem(
                    node.offset,
                    format!("thread `{name}`: the timer has no `period`"),
                );
                return None;
            }
        };
        if period.is_zero() {
            self.problem(
                node.get("period").map_or(node.offset, |p| p.offset),
                format!("thread `{name}`: timer period 0 is refused (T > 0)"),
            );
            return None;
        }
        match node.get("ref").map(|r| &r.value) {
            Some(Value::String(r)) if !r.starts_with("unique") => {
                let at = node.get("ref").map_or(node.offset, |r| r.offset);
                self.timers.push((r.clone(), name.to_string(), at));
            }
            Some(Value::String(_)) | None => {}
            Some(_) => self.problem(node.offset, "the timer's `ref` must be a string".into()),
        }
        match node.get("mode").map(|m| &m.value) {
            Some(Value::String(m)) if m == "absolute" => {}
            Some(Value::String(m)) if m == "relative" => self.relative_note(name, node),
            None => self.relative_note(name, node),
            Some(_) => self.problem(
                node.get("mode").map_or(node.offset, |m| m.offset),
                "the timer's `mode` must be \"absolute\" or \"relative\"".into(),
            ),
        }
        Some(period)
    }

    fn relative_note(&mut self, name: &str, node: &Node) {
        self.note(
            node.offset,
            format!("thread `{name}`: relative timer: after an overrun rt-app restarts the period from the late finish; rtlab keeps the absolute timeline (`--on-miss skip` is closest)"),
        );
    }

    /// Two threads on one non-unique timer ref would share one timer.
    fn check_shared_timers(&mut self) {
        let timers = std::mem::take(&mut self.timers);
        for (i, (r, thread, at)) in timers.iter().enumerate() {
            if let Some((_, first, _)) = timers[..i]
                .iter()
                .find(|(r2, t2, _)| r2 == r && t2 != thread)
            {
                self.problem(
                    *at,
                    format!("thread `{thread}`: timer `{r}` is shared with thread `{first}`; rtlab's tasks have timers of their own (name it \"unique\")"),
                );
            }
        }
    }

    /// C and the critical sections from the job's steps; an `unlock` must
    /// release the innermost lock held, and every lock is released.
    fn sections(
        &mut self,
        name: &str,
        job: &[(Step, usize)],
        places: &mut TaskPlaces,
    ) -> Option<(Nanos, Vec<CriticalSection>)> {
        let mut now = Nanos::ZERO;
        // Open sections: (index into `out`, resource).
        let mut held: Vec<(usize, &str)> = Vec::new();
        let mut out: Vec<CriticalSection> = Vec::new();
        let mut ok = true;
        for (step, at) in job {
            match step {
                Step::Run(v) => now = now.saturating_add(*v),
                Step::Lock(r) => {
                    if held.iter().any(|(_, h)| h == r) {
                        self.problem(
                            *at,
                            format!("thread `{name}`: `{r}` is locked again while held"),
                        );
                        ok = false;
                    }
                    held.push((out.len(), r));
                    places.sections.push(*at);
                    out.push(CriticalSection {
                        resource: r.clone(),
                        start: now,
                        length: Nanos::ZERO,
                    });
                }
                Step::Unlock(r) => match held.last() {
                    Some((i, h)) if h == r => {
                        out[*i].length = now.saturating_sub(out[*i].start);
                        held.pop();
                    }
                    Some((_, h)) => {
                        self.problem(
                            *at,
                            format!("thread `{name}`: unlock of `{r}` while `{h}` is held inside it: rtlab's critical sections nest"),
                        );
                        ok = false;
                    }
                    None => {
                        self.problem(
                            *at,
                            format!("thread `{name}`: unlock of `{r}`, which is not held"),
                        );
                        ok = false;
                    }
                },
            }
        }
        if ok && !held.is_empty() {
            for (i, r) in held {
                self.problem(
                    places.sections[i],
                    format!("thread `{name}`: `{r}` is locked and never unlocked in the job"),
                );
            }
            ok = false;
        }
        if now.is_zero() && ok {
            self.problem(
                places.thread,
                format!("thread `{name}` has no `run` or `runtime`: a task needs C > 0"),
            );
            ok = false;
        }
        ok.then_some((now, out))
    }
}

/// The rt-app event a key names (rt-app matches by prefix: `run1` is a run).
fn event_of(key: &str) -> Option<&'static str> {
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

fn refused_event(thread: &str, key: &str, event: &str) -> String {
    let why = match event {
        "mem" | "memrun" => "memory-write load",
        "iorun" => "I/O load",
        "wait" | "signal" | "broad" | "sync" => "condition variables between threads",
        "barrier" => "barriers between threads",
        "suspend" | "resume" => "suspension by another thread",
        "yield" => "yielding the CPU",
        "fork" => "forking threads",
        _ => "this event",
    };
    format!("thread `{thread}`: `{key}` is refused: rtlab's task model has no {why}")
}

fn duplicate(key: &str) -> String {
    format!("duplicate key `{key}`: rt-app keeps only one of them (number repeated events: `{key}0`, `{key}1`, as workgen does)")
}

fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use crate::file::{parse_str, Format, LoadError};
    use crate::Nanos;

    fn load(text: &str) -> Result<crate::file::LoadedTaskSet, LoadError> {
        parse_str(text, Format::Json, "w.json", "w")
    }

    /// Every error line of a refused workload.
    fn refusals(text: &str) -> Vec<String> {
        match load(text) {
            Err(LoadError::Invalid { errors, .. }) => {
                errors.iter().map(|e| e.to_string()).collect()
            }
            Err(other) => vec![other.to_string()],
            Ok(_) => panic!("accepted: {text}"),
        }
    }

    /// A one-thread workload with `events` inside the thread (one line each).
    fn thread(events: &str) -> String {
        format!("{{\n\"tasks\": {{\n\"a\": {{\n{events}\n}}\n}}\n}}")
    }

    #[test]
    fn the_periodic_subset_becomes_a_task() {
        let text = r#"{
  /* rt-app's own style: comments, trailing commas */
  "tasks": {
    "ctl": {
      "policy": "SCHED_FIFO", "priority": 20, "cpus": [1], "delay": 1000, "loop": -1,
      "run0": 500, "lock": "bus", "runtime1": 250, "unlock": "bus", "run2": 250,
      "timer": { "ref": "unique", "period": 10000, "mode": "absolute" },
    },
    "dl": {
      "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 20000, "dl-deadline": 15000,
      "phases": { "only": { "loop": 10, "run": 1000, "timer": { "ref": "t", "period": 20000, "mode": "absolute" } } },
    },
  },
  "global": { "duration": 5, "calibration": "CPU0", "default_policy": "SCHED_OTHER", "lock_pages": true, "ftrace": false },
}"#;
        let loaded = load(text).unwrap();
        assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
        let [ctl, dl] = loaded.set.tasks.as_slice() else {
            panic!("two tasks expected")
        };
        assert_eq!(ctl.name, "ctl");
        assert_eq!(ctl.period, Nanos::from_ms(10));
        assert_eq!(ctl.deadline, Nanos::from_ms(10));
        assert_eq!(ctl.wcet, Nanos::from_us(1000));
        assert_eq!(ctl.offset, Nanos::from_ms(1));
        assert_eq!(ctl.priority, Some(20));
        assert_eq!(ctl.critical_sections.len(), 1);
        assert_eq!(ctl.critical_sections[0].resource, "bus");
        assert_eq!(ctl.critical_sections[0].start, Nanos::from_us(500));
        assert_eq!(ctl.critical_sections[0].length, Nanos::from_us(250));
        assert_eq!(dl.period, Nanos::from_ms(20));
        assert_eq!(dl.deadline, Nanos::from_ms(15));
        assert_eq!(dl.wcet, Nanos::from_ms(1));
        assert_eq!(dl.priority, None);
    }

    #[test]
    fn a_sleep_period_and_a_relative_timer_are_noted() {
        let loaded = load(&thread("\"run\": 2000,\n\"sleep\": 8000")).unwrap();
        assert_eq!(loaded.set.tasks[0].period, Nanos::from_ms(10));
        assert_eq!(
            loaded.notes[0].to_string(),
            "w.json:5:1: note: thread `a`: period taken as run + sleep (10ms): rt-app's sleep-based period drifts with response times, rtlab releases every period"
        );
        let loaded = load(&thread(
            "\"run\": 2000,\n\"timer\": {\"ref\": \"unique\", \"period\": 8000}",
        ))
        .unwrap();
        assert_eq!(loaded.set.tasks[0].period, Nanos::from_ms(8));
        assert!(
            loaded.notes[0]
                .to_string()
                .starts_with("w.json:5:10: note: thread `a`: relative timer"),
            "{}",
            loaded.notes[0]
        );
    }

    const TIMER: &str =
        "\"timer\": {\"ref\": \"unique\", \"period\": 10000, \"mode\": \"absolute\"}";

    /// Each construct rtlab cannot model, refused at its key (line 4 of the
    /// thread: the line after `"run": 1000,`).
    #[test]
    fn every_unmodelled_event_is_refused_at_its_key() {
        let cases = [
            ("\"mem\": 1000", "`mem` is refused: rtlab's task model has no memory-write load"),
            ("\"iorun\": 1000", "`iorun` is refused: rtlab's task model has no I/O load"),
            ("\"wait\": {\"ref\": \"q\", \"mutex\": \"m\"}", "`wait` is refused: rtlab's task model has no condition variables between threads"),
            ("\"signal\": \"q\"", "`signal` is refused: rtlab's task model has no condition variables between threads"),
            ("\"broad\": \"q\"", "`broad` is refused: rtlab's task model has no condition variables between threads"),
            ("\"sync\": {\"ref\": \"q\", \"mutex\": \"m\"}", "`sync` is refused: rtlab's task model has no condition variables between threads"),
            ("\"barrier\": \"b\"", "`barrier` is refused: rtlab's task model has no barriers between threads"),
            ("\"suspend\": \"a\"", "`suspend` is refused: rtlab's task model has no suspension by another thread"),
            ("\"resume\": \"b\"", "`resume` is refused: rtlab's task model has no suspension by another thread"),
            ("\"yield\": \"\"", "`yield` is refused: rtlab's task model has no yielding the CPU"),
            ("\"fork\": \"b\"", "`fork` is refused: rtlab's task model has no forking threads"),
            ("\"memrun\": 10", "`memrun` is refused: rtlab's task model has no memory-write load"),
        ];
        for (event, message) in cases {
            let text = thread(&format!("\"run\": 1000,\n{event},\n{TIMER}"));
            assert_eq!(
                refusals(&text),
                [format!("w.json:5:1: thread `a`: {message}")],
                "{event}"
            );
        }
    }

    #[test]
    fn unmodelled_structure_is_refused_at_its_key() {
        let run = "\"run\": 1000";
        let cases: Vec<(String, &str)> = vec![
            (format!("\"sleep\": 500,\n{run},\n{TIMER}"), "w.json:4:1: thread `a`: a `sleep` inside a job (self-suspension) is refused: rtlab's jobs do not suspend"),
            (format!("{run},\n\"sleep\": 500,\n{TIMER}"), "w.json:5:1: thread `a`: a `sleep` beside a timer is refused: rtlab's jobs do not suspend"),
            (format!("{run},\n{TIMER},\n\"timer1\": {{\"ref\": \"x\", \"period\": 5000}}"), "w.json:6:1: thread `a`: `timer1` after the timer is refused: the timer ends the job (put it last)"),
            (format!("{run},\n{TIMER},\n\"run1\": 10"), "w.json:6:1: thread `a`: `run1` after the timer is refused: the timer ends the job (put it last)"),
            (format!("\"instance\": 0,\n{run},\n{TIMER}"), "w.json:4:13: thread `a`: `instance` 0 starts no thread: remove the thread or make it 1"),
            (format!("\"instance\": 100001,\n{run},\n{TIMER}"), "w.json:4:13: thread `a`: `instance` 100001 is above rtlab's 100000 threads"),
            (format!("\"instance\": 2,\n{run},\n\"timer\": {{\"ref\": \"t\", \"period\": 10000}}"), "w.json:6:18: thread `a`: its 2 instances would share timer `t` (rt-app gives each instance its own timer only for a ref starting with \"unique\")"),
            (format!("\"cpus\": [],\n{run},\n{TIMER}"), "w.json:4:9: `cpus` is empty: name at least one CPU"),
            (format!("\"cpus\": [1024],\n{run},\n{TIMER}"), "w.json:4:9: `cpus` names CPU 1024: rtlab models at most 1024 processors"),
            (format!("\"loop\": 5,\n{run},\n{TIMER}"), "w.json:4:9: thread `a`: a finite `loop` is refused: rtlab's tasks release jobs for the whole run (use -1)"),
            (format!("\"phases\": {{\"p1\": {{{run}, {TIMER}}},\n\"p2\": {{{run}, {TIMER}}}}}"), "w.json:5:1: thread `a`: a second phase `p2` is refused: an rtlab task repeats one job (split the thread into tasks)"),
            (run.to_string(), "w.json:3:6: thread `a` has no `timer` (or final `sleep`): rtlab's tasks are periodic"),
            (format!("\"lock\": \"x\",\n{run},\n\"unlock\": \"y\",\n{TIMER}"), "w.json:6:1: thread `a`: unlock of `y` while `x` is held inside it: rtlab's critical sections nest"),
            (format!("\"lock\": \"x\",\n{run},\n{TIMER}"), "w.json:4:1: thread `a`: `x` is locked and never unlocked in the job"),
            (format!("{run},\n\"run\": 5,\n{TIMER}"), "w.json:5:1: duplicate key `run`: rt-app keeps only one of them (number repeated events: `run0`, `run1`, as workgen does)"),
            (format!("\"run\": 1.5,\n{TIMER}"), "w.json:4:8: `run` must be a whole number >= 0 (rt-app's times are microseconds)"),
            // Issue 39: a count is no time, and a timer whose period is
            // refused is not a missing timer.
            (format!("\"instance\": -1,\n{run},\n{TIMER}"), "w.json:4:13: `instance` must be a whole number >= 0"),
            (format!("{run},\n\"timer\": {{\"ref\": \"unique\", \"period\": 0}}"), "w.json:5:38: thread `a`: timer period 0 is refused (T > 0)"),
            (format!("\"nice\": 3,\n{run},\n{TIMER}"), "w.json:4:1: unknown key `nice` in thread `a` (rtlab reads `instance`, `loop`, `policy`, `priority`, `dl-runtime`, `dl-period`, `dl-deadline`, `cpus`, `delay`, `phases` and, without `phases`, events)"),
            (format!("\"policy\": \"SCHED_BATCH\",\n{run},\n{TIMER}"), "w.json:4:11: `policy` \"SCHED_BATCH\": rtlab reads SCHED_OTHER, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE"),
            (format!("\"run\": 0,\n{TIMER}"), "w.json:3:1: thread `a` has no `run` or `runtime`: a task needs C > 0"),
            (format!("\"run\": 20000,\n{TIMER}"), "w.json:4:1: task `a`: wcet 20ms exceeds deadline 10ms: no job can meet it"),
        ];
        for (body, expected) in cases {
            assert_eq!(refusals(&thread(&body)), [expected.to_string()], "{body}");
        }
    }

    /// `instance` N: N tasks named `thread-IND`, IND rt-app's thread index
    /// (every instance of every thread, in file order: rt-app 1.0's log
    /// `<basename>-<thread>-<IND>.log`, later rt-app's thread name), each
    /// the thread's task; a thread of one instance keeps its name.
    #[test]
    fn instances_become_tasks_named_after_rt_apps_thread_index() {
        let text = format!(
            "{{\"tasks\": {{\n\"a\": {{\"run\": 1000, {TIMER}}},\n\"b\": {{\"instance\": 3, \"delay\": 500, \"run\": 2000, {TIMER}}},\n\"c\": {{\"instance\": 1, \"run\": 3000, {TIMER}}}}}}}"
        );
        let set = load(&text).unwrap().set;
        let names: Vec<&str> = set.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b-1", "b-2", "b-3", "c"]);
        for b in &set.tasks[1..4] {
            assert_eq!(
                (b.wcet, b.period, b.offset),
                (Nanos::from_ms(2), Nanos::from_ms(10), Nanos::from_us(500))
            );
        }
        // A name an instance takes is refused at the thread that has it.
        let clash = text.replace("\"c\": {\"instance\": 1", "\"b-2\": {\"instance\": 1");
        assert!(
            refusals(&clash)[0].contains("b-2"),
            "{:?}",
            refusals(&clash)
        );
    }

    /// `cpus`: all threads on one and the same CPU (the uniprocessor
    /// export) is a one-processor set; otherwise one processor per CPU up
    /// to the largest named, a one-CPU thread fixed there (`cpu`), a thread
    /// of several CPUs free (noted when not all of them).
    #[test]
    fn cpus_give_the_platform_and_each_tasks_cpu() {
        let two = |x: &str, y: &str| {
            format!("{{\"tasks\": {{\n\"a\": {{\"cpus\": {x}, \"run\": 1000, {TIMER}}},\n\"b\": {{\"cpus\": {y}, \"run\": 1000, {TIMER}}}}}}}")
        };
        let same = load(&two("[1]", "[1]")).unwrap().set;
        assert_eq!((same.processors(), same.assignment()), (1, None));
        let split = load(&two("[0]", "[2]")).unwrap().set;
        assert_eq!(
            (split.processors(), split.assignment()),
            (3, Some(vec![0, 2]))
        );
        let global = load(&two("[0, 1, 2, 3]", "[3, 2, 1, 0]")).unwrap();
        assert_eq!(
            (global.set.processors(), global.set.has_cpu_fields()),
            (4, false)
        );
        assert!(global.notes.is_empty(), "{:?}", global.notes);
        let mixed = load(&two("[2, 3]", "[0]")).unwrap();
        assert_eq!(mixed.set.processors(), 4);
        assert_eq!(
            mixed.set.tasks.iter().map(|t| t.cpu).collect::<Vec<_>>(),
            [None, Some(0)]
        );
        assert_eq!(
            mixed.notes[0].to_string(),
            "w.json:2:15: note: task `a`: rt-app lets this thread run on CPUs 2,3; rtlab's global schedulers use all 4 processors"
        );
    }

    #[test]
    fn a_timer_shared_by_two_threads_is_refused() {
        let text = "{\"tasks\": {\n\"a\": {\"run\": 10, \"timer\": {\"ref\": \"tick\", \"period\": 100, \"mode\": \"absolute\"}},\n\"b\": {\"run\": 10, \"timer\": {\"ref\": \"tick\", \"period\": 100, \"mode\": \"absolute\"}}}}";
        assert_eq!(
            refusals(text),
            ["w.json:3:35: thread `b`: timer `tick` is shared with thread `a`; rtlab's tasks have timers of their own (name it \"unique\")"]
        );
    }

    #[test]
    fn rtlab_json_is_not_taken_for_rt_app() {
        let text = "{\"task\": [{\"name\": \"a\", \"period\": \"1ms\", \"wcet\": \"1us\"}]}";
        assert!(load(text).is_ok());
        assert!(!crate::file::is_rtapp_workload(text));
        // Trailing commas stay an error in rtlab's own JSON.
        assert!(parse_str("{\"task\": [],}", Format::Json, "f", "f").is_err());
    }

    #[test]
    fn the_installed_examples_are_read_or_refused_in_one_line() {
        let dir = std::path::Path::new("/usr/share/doc/rt-app/examples");
        let Ok(entries) = std::fs::read_dir(dir) else {
            rtlab_testkit::unavailable(
                "rt-app's examples are not installed (apt-get install rt-app)",
            );
            return;
        };
        let mut seen = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                if let Err(e) = parse_str(&text, Format::Json, "x.json", "x") {
                    assert!(!e.to_string().contains('\n'), "{}: {e}", path.display());
                }
                seen += 1;
            }
        }
        assert!(seen > 3);
        let template = std::fs::read_to_string(dir.join("template.json")).unwrap();
        let set = parse_str(&template, Format::Json, "t.json", "t")
            .unwrap()
            .set;
        assert_eq!(set.tasks[0].period, Nanos::from_ms(100));
        assert_eq!(set.tasks[0].wcet, Nanos::from_ms(10));
    }
}
