//! Periodic tasks and task sets, and their validation.
//!
//! A task τi is the classic periodic model (Liu & Layland 1973) extended as
//! the analyses and simulators of rtlab need: period `T`, relative deadline
//! `D` (default `T`; `D > T` is an arbitrary deadline), worst-case execution
//! time `C`, optional best-case execution time (randomised execution in
//! simulation), release `offset` (phase), release `jitter` `J` (response-time
//! analysis, Tindell), optional explicit `priority`, and critical sections for
//! the locking protocols.
//!
//! Priorities follow the Linux SCHED_FIFO convention: **a larger number is a
//! more urgent task**.

use serde::{Deserialize, Serialize};

use crate::platform::Platform;
use crate::text::{lookalike_key, printable, spelled};
use crate::time::{hyperperiod, Nanos, TimeError};

/// The longest task, resource or task-set name accepted, in bytes of UTF-8.
/// Names are labels in tables and thread names (15 bytes); a limit keeps a
/// hostile file from making every output that prints them huge.
pub const MAX_NAME_BYTES: usize = 256;

/// One critical section of a job: the job holds `resource` from `start`
/// (execution time into the job) for `length` of execution time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriticalSection {
    /// The name of the shared resource (lock).
    pub resource: String,
    /// Execution time the job has consumed when it takes the lock.
    pub start: Nanos,
    /// Execution time spent holding the lock.
    pub length: Nanos,
}

impl CriticalSection {
    /// A section on `resource` from `start` of the job's execution for
    /// `length`.
    pub fn new(resource: impl Into<String>, start: Nanos, length: Nanos) -> CriticalSection {
        CriticalSection {
            resource: resource.into(),
            start,
            length,
        }
    }

    /// Execution time at which the lock is released: `start + length`.
    pub fn end(&self) -> Option<Nanos> {
        self.start.checked_add(self.length)
    }
}

/// One lock or unlock of a job's critical sections, at `at` of the job's
/// execution time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockStep<'a> {
    /// Execution time into the job.
    pub at: Nanos,
    /// The resource's name.
    pub resource: &'a str,
    /// Lock (true) or unlock.
    pub lock: bool,
}

/// The lock and unlock steps of `sections` (validated: in execution order,
/// nested, never overlapping) in the order a job performs them: by
/// execution time, unlocks before locks at the same instant, and among
/// sections that start (end) together the outer one locks first (unlocks
/// last), so the held locks are always a stack. The simulator and the
/// real-thread executor both follow it.
pub fn lock_steps(sections: &[CriticalSection]) -> Vec<LockStep<'_>> {
    let mut keyed = Vec::with_capacity(2 * sections.len());
    for (k, cs) in sections.iter().enumerate() {
        let k = k as i64;
        let end = cs.start.saturating_add(cs.length);
        keyed.push((
            (cs.start, 1u8, k),
            LockStep {
                at: cs.start,
                resource: &cs.resource,
                lock: true,
            },
        ));
        keyed.push((
            (end, 0u8, -k),
            LockStep {
                at: end,
                resource: &cs.resource,
                lock: false,
            },
        ));
    }
    keyed.sort_by_key(|(key, _)| *key);
    keyed.into_iter().map(|(_, step)| step).collect()
}

/// A periodic task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Unique name within its task set.
    pub name: String,
    /// Period T: the time between successive releases.
    pub period: Nanos,
    /// Relative deadline D.
    pub deadline: Nanos,
    /// Worst-case execution time C.
    pub wcet: Nanos,
    /// Best-case execution time, when execution times vary (simulation).
    pub bcet: Option<Nanos>,
    /// Release offset (phase) of the first job.
    pub offset: Nanos,
    /// Release jitter J: the largest delay between arrival and release.
    pub jitter: Nanos,
    /// Explicit priority for the `given` policy; larger is more urgent.
    pub priority: Option<u32>,
    /// Critical sections of every job, in execution order.
    pub critical_sections: Vec<CriticalSection>,
    /// The processor this task is fixed to (0-based), for partitioned
    /// scheduling; `None` lets the scheduler place it.
    pub cpu: Option<u32>,
}

impl Task {
    /// A task with implicit deadline (D = T), no offset, jitter or priority.
    pub fn new(name: impl Into<String>, period: Nanos, wcet: Nanos) -> Task {
        Task {
            name: name.into(),
            period,
            deadline: period,
            wcet,
            bcet: None,
            offset: Nanos::ZERO,
            jitter: Nanos::ZERO,
            priority: None,
            critical_sections: Vec::new(),
            cpu: None,
        }
    }

    /// Builder: set the relative deadline.
    pub fn with_deadline(mut self, deadline: Nanos) -> Task {
        self.deadline = deadline;
        self
    }

    /// Builder: set the release offset.
    pub fn with_offset(mut self, offset: Nanos) -> Task {
        self.offset = offset;
        self
    }

    /// Builder: set the explicit priority (larger is more urgent).
    pub fn with_priority(mut self, priority: u32) -> Task {
        self.priority = Some(priority);
        self
    }

    /// Builder: fix the task to processor `cpu` (0-based).
    pub fn with_cpu(mut self, cpu: u32) -> Task {
        self.cpu = Some(cpu);
        self
    }

    /// Utilization U = C / T.
    pub fn utilization(&self) -> f64 {
        self.wcet.as_ns() as f64 / self.period.as_ns() as f64
    }

    /// Density C / min(D, T).
    pub fn density(&self) -> f64 {
        self.wcet.as_ns() as f64 / self.deadline.min(self.period).as_ns() as f64
    }
}

/// A named set of periodic tasks, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSet {
    /// Name of the set (from the file, the catalog or the generator).
    pub name: String,
    /// The tasks, in declaration order (which matters to `fifo-order`).
    pub tasks: Vec<Task>,
    /// The processors it runs on (default: one).
    pub platform: Platform,
}

impl TaskSet {
    /// A task set from its parts, on one processor.
    pub fn new(name: impl Into<String>, tasks: Vec<Task>) -> TaskSet {
        TaskSet {
            name: name.into(),
            tasks,
            platform: Platform::default(),
        }
    }

    /// Builder: run the set on `platform`.
    pub fn on_platform(mut self, platform: Platform) -> TaskSet {
        self.platform = platform;
        self
    }

    /// The number of processors `m`.
    pub fn processors(&self) -> u32 {
        self.platform.processors
    }

    /// The set on `m` processors instead of its own count (the `--cpus M`
    /// override), clusters kept. Refused, with the first broken rule, when
    /// `m` is 0 or above [`crate::platform::MAX_PROCESSORS`], or a task's
    /// `cpu` or a cluster names a processor `m` processors do not have.
    pub fn with_processors(&self, m: u32) -> Result<TaskSet, Diagnostic> {
        let mut set = self.clone();
        set.platform.processors = m;
        match set.platform.check(&set.tasks).into_iter().next() {
            Some((path, message)) => Err(Diagnostic::error(path, message)),
            None => Ok(set),
        }
    }

    /// The processor of every task when each has a `cpu` (a partitioned
    /// assignment), in task order; `None` when any task has none.
    pub fn assignment(&self) -> Option<Vec<u32>> {
        self.tasks.iter().map(|t| t.cpu).collect()
    }

    /// True when some task has a `cpu` field.
    pub fn has_cpu_fields(&self) -> bool {
        self.tasks.iter().any(|t| t.cpu.is_some())
    }

    /// Total utilization U = Σ Ci / Ti.
    pub fn utilization(&self) -> f64 {
        self.tasks.iter().map(Task::utilization).sum()
    }

    /// Total density Σ Ci / min(Di, Ti).
    pub fn density(&self) -> f64 {
        self.tasks.iter().map(Task::density).sum()
    }

    /// Least common multiple of the periods, or an overflow error.
    pub fn hyperperiod(&self) -> Result<Nanos, TimeError> {
        hyperperiod(self.tasks.iter().map(|t| t.period))
    }

    /// The longest period, max T_i (0 for an empty set).
    pub fn longest_period(&self) -> Nanos {
        self.tasks
            .iter()
            .map(|t| t.period)
            .max()
            .unwrap_or(Nanos::ZERO)
    }

    /// The last first deadline, max (O_i + D_i) (0 for an empty set): a run
    /// shorter than this could never see some task miss.
    pub fn last_first_deadline(&self) -> Nanos {
        self.tasks
            .iter()
            .map(|t| t.offset.saturating_add(t.deadline))
            .max()
            .unwrap_or(Nanos::ZERO)
    }

    /// True when every deadline equals its period.
    pub fn has_implicit_deadlines(&self) -> bool {
        self.tasks.iter().all(|t| t.deadline == t.period)
    }

    /// True when every deadline is at most its period.
    pub fn has_constrained_deadlines(&self) -> bool {
        self.tasks.iter().all(|t| t.deadline <= t.period)
    }

    /// `implicit` (every D = T), `constrained` (every D <= T) or
    /// `arbitrary`.
    pub fn deadline_kind(&self) -> &'static str {
        if self.has_implicit_deadlines() {
            "implicit"
        } else if self.has_constrained_deadlines() {
            "constrained"
        } else {
            "arbitrary"
        }
    }

    /// The task with this name.
    pub fn task(&self, name: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.name == name)
    }

    /// Checks the model's rules; see [`Diagnostic`] for what is an error and
    /// what is only reported. An empty result means the set is clean.
    pub fn validate(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if self.name.len() > MAX_NAME_BYTES {
            out.push(Diagnostic::error(
                FieldPath::root("name"),
                format!(
                    "the task set's name is {} bytes long; names are limited to {MAX_NAME_BYTES} bytes",
                    self.name.len()
                ),
            ));
        }
        if self.tasks.is_empty() {
            out.push(Diagnostic::error(
                FieldPath::root("task"),
                "the task set has no tasks (add a [[task]] table)",
            ));
        }
        let mut seen = std::collections::HashSet::with_capacity(self.tasks.len());
        for (index, task) in self.tasks.iter().enumerate() {
            let duplicate = !seen.insert(task.name.as_str());
            validate_task(index, task, duplicate, &mut out);
        }
        validate_lookalike_names(self, &mut out);
        out.extend(
            self.platform
                .check(&self.tasks)
                .into_iter()
                .map(|(path, message)| Diagnostic::error(path, message)),
        );
        out
    }

    /// [`TaskSet::validate`], keeping only errors.
    pub fn errors(&self) -> Vec<Diagnostic> {
        self.validate()
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect()
    }
}

/// Refuses two task names, or two resource names, that differ but print
/// alike: equal after NFKC normalization and UTS #39 confusable folding
/// ([`lookalike_key`]), such as NFC `café` beside NFD `café`, or Cyrillic
/// `а` beside Latin `a`. Each later name is refused, naming the earlier
/// one; names refused for other reasons (empty, too long) are skipped.
fn validate_lookalike_names(set: &TaskSet, out: &mut Vec<Diagnostic>) {
    use std::collections::hash_map::{Entry, HashMap};
    let fine = |name: &str| !name.trim().is_empty() && name.len() <= MAX_NAME_BYTES;
    let lookalike = |what: String, name: &str, first_what: String, first: &str| {
        format!(
            "{what} `{}` ({}) prints like {first_what} `{}` ({}): the names are equal after NFKC normalization and confusable folding (Unicode TS #39); rename one",
            printable(name),
            spelled(name),
            printable(first),
            spelled(first),
        )
    };
    let mut tasks: HashMap<String, usize> = HashMap::new();
    let mut resources: HashMap<String, (usize, usize, &str)> = HashMap::new();
    for (index, task) in set.tasks.iter().enumerate() {
        if fine(&task.name) {
            match tasks.entry(lookalike_key(&task.name)) {
                Entry::Vacant(slot) => {
                    slot.insert(index);
                }
                Entry::Occupied(first) if set.tasks[*first.get()].name != task.name => {
                    let first_index = *first.get();
                    out.push(
                        Diagnostic::error(
                            FieldPath::task(index, "name"),
                            lookalike(
                                format!("task #{}", index + 1),
                                &task.name,
                                format!("task #{}", first_index + 1),
                                &set.tasks[first_index].name,
                            ),
                        )
                        .with_related(FieldPath::task(first_index, "name")),
                    );
                }
                Entry::Occupied(_) => {}
            }
        }
        for (cs_index, cs) in task.critical_sections.iter().enumerate() {
            if !fine(&cs.resource) {
                continue;
            }
            match resources.entry(lookalike_key(&cs.resource)) {
                Entry::Vacant(slot) => {
                    slot.insert((index, cs_index, cs.resource.as_str()));
                }
                Entry::Occupied(first) if first.get().2 != cs.resource => {
                    let (first_index, first_cs, first_name) = *first.get();
                    out.push(
                        Diagnostic::error(
                            FieldPath::critical_section(index, cs_index, "resource"),
                            lookalike(
                                format!("task #{}: resource", index + 1),
                                &cs.resource,
                                format!("task #{}'s resource", first_index + 1),
                                first_name,
                            ),
                        )
                        .with_related(FieldPath::critical_section(
                            first_index,
                            first_cs,
                            "resource",
                        )),
                    );
                }
                Entry::Occupied(_) => {}
            }
        }
    }
}

fn validate_task(index: usize, task: &Task, duplicate: bool, out: &mut Vec<Diagnostic>) {
    let at = |field: &'static str| FieldPath::task(index, field);
    let too_long = task.name.len() > MAX_NAME_BYTES;
    let who = if task.name.is_empty() || too_long {
        format!("task #{}", index + 1)
    } else {
        format!("task `{}`", printable(&task.name))
    };
    let mut error = |field, message: String| out.push(Diagnostic::error(at(field), message));

    if task.name.trim().is_empty() {
        error("name", format!("{who}: the name is empty"));
    } else if too_long {
        error(
            "name",
            format!(
                "{who}: the name is {} bytes long; names are limited to {MAX_NAME_BYTES} bytes",
                task.name.len()
            ),
        );
    } else if duplicate {
        error("name", format!("{who}: duplicate task name"));
    }
    if task.period.is_zero() {
        error("period", format!("{who}: period must be greater than 0"));
    }
    if task.deadline.is_zero() {
        error(
            "deadline",
            format!("{who}: deadline must be greater than 0"),
        );
    }
    if task.wcet.is_zero() {
        error("wcet", format!("{who}: wcet must be greater than 0"));
    } else if task.wcet > task.deadline && !task.deadline.is_zero() {
        error(
            "wcet",
            format!(
                "{who}: wcet {} exceeds deadline {}: no job can meet it",
                task.wcet, task.deadline
            ),
        );
    }
    if let Some(bcet) = task.bcet {
        if bcet > task.wcet {
            error(
                "bcet",
                format!("{who}: bcet {bcet} exceeds wcet {}", task.wcet),
            );
        }
    }
    for (cs_index, cs) in task.critical_sections.iter().enumerate() {
        let cs_at = |field| FieldPath::critical_section(index, cs_index, field);
        let resource = printable(&cs.resource);
        if cs.resource.trim().is_empty() {
            out.push(Diagnostic::error(
                cs_at("resource"),
                format!(
                    "{who}: critical section #{} has an empty resource name",
                    cs_index + 1
                ),
            ));
        } else if cs.resource.len() > MAX_NAME_BYTES {
            out.push(Diagnostic::error(
                cs_at("resource"),
                format!(
                    "{who}: the resource name of critical section #{} is {} bytes long; names are limited to {MAX_NAME_BYTES} bytes",
                    cs_index + 1,
                    cs.resource.len()
                ),
            ));
            continue;
        }
        if cs.length.is_zero() {
            out.push(Diagnostic::error(
                cs_at("length"),
                format!("{who}: critical section on `{resource}` has length 0"),
            ));
        }
        match cs.end() {
            Some(end) if end <= task.wcet => {}
            _ => out.push(Diagnostic::error(
                cs_at("length"),
                format!(
                    "{who}: critical section on `{resource}` ends at {} of execution, after the job's wcet {}",
                    cs.start.saturating_add(cs.length),
                    task.wcet
                ),
            )),
        }
    }
    validate_section_order(index, &who, &task.critical_sections, out);
    if task.deadline > task.period && !task.period.is_zero() {
        out.push(Diagnostic::note(
            at("deadline"),
            format!(
                "{who}: deadline {} is longer than period {} (arbitrary deadline: jobs may overlap)",
                task.deadline, task.period
            ),
        ));
    }
}

/// Critical sections are listed in execution order (by `start`) and nest
/// rather than overlap: a section that starts while others are held must end
/// within the innermost of them, and must not take a lock already held. The
/// held sections are a stack, as the locks of a job are.
fn validate_section_order(
    index: usize,
    who: &str,
    sections: &[CriticalSection],
    out: &mut Vec<Diagnostic>,
) {
    let mut held: Vec<&CriticalSection> = Vec::new();
    for (k, cs) in sections.iter().enumerate() {
        let at = FieldPath::critical_section(index, k, "start");
        let resource = printable(&cs.resource);
        if let Some(before) = k.checked_sub(1).map(|p| &sections[p]) {
            if cs.start < before.start {
                out.push(Diagnostic::error(
                    at,
                    format!(
                        "{who}: critical section on `{resource}` starts at {}, before the one on `{}` ({}): list critical sections in execution order",
                        cs.start,
                        printable(&before.resource),
                        before.start
                    ),
                ));
                continue;
            }
        }
        let end = cs.start.saturating_add(cs.length);
        held.retain(|h| h.start.saturating_add(h.length) > cs.start);
        if held.iter().any(|h| h.resource == cs.resource) {
            out.push(Diagnostic::error(
                at,
                format!(
                    "{who}: critical sections on `{resource}` overlap (a job cannot take a lock it holds)"
                ),
            ));
            continue;
        }
        if let Some(inner) = held.last() {
            if end > inner.start.saturating_add(inner.length) {
                out.push(Diagnostic::error(
                    at,
                    format!(
                        "{who}: critical section on `{resource}` overlaps the one on `{}` without nesting inside it",
                        printable(&inner.resource)
                    ),
                ));
                continue;
            }
        }
        held.push(cs);
    }
}

/// How serious a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Reported but accepted (e.g. an arbitrary deadline D > T).
    Note,
    /// The task set is refused.
    Error,
}

/// Where in a task-set document a diagnostic points: a chain of keys and
/// array indices, e.g. `task[2].wcet`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(pub Vec<PathSegment>);

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// A table key.
    Key(&'static str),
    /// An array index.
    Index(usize),
}

impl FieldPath {
    /// A top-level key.
    pub fn root(key: &'static str) -> FieldPath {
        FieldPath(vec![PathSegment::Key(key)])
    }

    /// `task[index].field`.
    pub fn task(index: usize, field: &'static str) -> FieldPath {
        FieldPath(vec![
            PathSegment::Key("task"),
            PathSegment::Index(index),
            PathSegment::Key(field),
        ])
    }

    /// `task[index].critical_sections[cs].field`.
    pub fn critical_section(index: usize, cs: usize, field: &'static str) -> FieldPath {
        FieldPath(vec![
            PathSegment::Key("task"),
            PathSegment::Index(index),
            PathSegment::Key("critical_sections"),
            PathSegment::Index(cs),
            PathSegment::Key(field),
        ])
    }
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                PathSegment::Key(k) if i == 0 => write!(f, "{k}")?,
                PathSegment::Key(k) => write!(f, ".{k}")?,
                PathSegment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// A finding of [`TaskSet::validate`]: what is wrong, how bad, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error (refused) or note (accepted, reported).
    pub severity: Severity,
    /// The field it is about.
    pub path: FieldPath,
    /// One line of plain words, naming the task.
    pub message: String,
    /// Another field the finding is about (the earlier of two look-alike
    /// names): a file loader appends its place to the message.
    pub related: Option<FieldPath>,
}

impl Diagnostic {
    pub(crate) fn error(path: FieldPath, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            path,
            message: message.into(),
            related: None,
        }
    }

    fn note(path: FieldPath, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Note,
            path,
            message: message.into(),
            related: None,
        }
    }

    /// This diagnostic, about `other` too.
    fn with_related(mut self, other: FieldPath) -> Diagnostic {
        self.related = Some(other);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn messages(set: &TaskSet) -> Vec<String> {
        set.validate().into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn longest_period_and_last_first_deadline() {
        // a: T 10, O 0, D 8 -> first deadline 8; b: T 4, O 7, D 4 -> 11.
        let set = TaskSet::new(
            "two",
            vec![
                Task::new("a", ms(10), ms(1)).with_deadline(ms(8)),
                Task::new("b", ms(4), ms(1)).with_offset(ms(7)),
            ],
        );
        assert_eq!(set.longest_period(), ms(10));
        assert_eq!(set.last_first_deadline(), ms(11));
        let empty = TaskSet::new("none", vec![]);
        assert_eq!(empty.longest_period(), Nanos::ZERO);
        assert_eq!(empty.last_first_deadline(), Nanos::ZERO);
    }

    #[test]
    fn clean_set_has_no_diagnostics() {
        let set = TaskSet::new(
            "ok",
            vec![Task::new("a", ms(10), ms(2)), Task::new("b", ms(20), ms(5))],
        );
        assert!(set.validate().is_empty());
        assert!((set.utilization() - 0.45).abs() < 1e-12);
        assert_eq!(set.hyperperiod(), Ok(ms(20)));
    }

    #[test]
    fn each_rule_reports_in_words() {
        let mut bad = Task::new("a", ms(10), ms(12));
        bad.bcet = Some(ms(13));
        let set = TaskSet::new("bad", vec![bad, Task::new("a", Nanos::ZERO, Nanos::ZERO)]);
        assert_eq!(
            messages(&set),
            vec![
                "task `a`: wcet 12ms exceeds deadline 10ms: no job can meet it",
                "task `a`: bcet 13ms exceeds wcet 12ms",
                "task `a`: duplicate task name",
                "task `a`: period must be greater than 0",
                "task `a`: deadline must be greater than 0",
                "task `a`: wcet must be greater than 0",
            ]
        );
        assert_eq!(set.validate()[2].path.to_string(), "task[1].name");
    }

    /// Issue 24: NFC `café` beside NFD `café`, and Cyrillic `а` beside
    /// Latin `a`, printed as the same task; so do two look-alike resources.
    #[test]
    fn names_that_print_alike_are_refused() {
        let mut t3 = Task::new("b", ms(10), ms(2));
        t3.critical_sections = vec![section("bus", 0, 1)];
        let mut t4 = Task::new("c", ms(10), ms(2));
        t4.critical_sections = vec![section("b\u{57d}s", 0, 1)];
        let set = TaskSet::new(
            "alike",
            vec![
                Task::new("caf\u{e9}", ms(10), ms(1)),
                Task::new("cafe\u{301}", ms(10), ms(1)),
                Task::new("\u{430}", ms(10), ms(1)),
                Task::new("a", ms(10), ms(1)),
                t3,
                t4,
            ],
        );
        assert_eq!(
            messages(&set),
            vec![
                "task #2 `cafe\u{301}` (cafe<U+301>) prints like task #1 `caf\u{e9}` (caf<U+E9>): the names are equal after NFKC normalization and confusable folding (Unicode TS #39); rename one",
                "task #4 `a` (a) prints like task #3 `\u{430}` (<U+430>): the names are equal after NFKC normalization and confusable folding (Unicode TS #39); rename one",
                "task #6: resource `b\u{57d}s` (b<U+57D>s) prints like task #5's resource `bus` (bus): the names are equal after NFKC normalization and confusable folding (Unicode TS #39); rename one",
            ]
        );
        let paths: Vec<String> = set.validate().iter().map(|d| d.path.to_string()).collect();
        assert_eq!(
            paths,
            [
                "task[1].name",
                "task[3].name",
                "task[5].critical_sections[0].resource"
            ]
        );
    }

    #[test]
    fn arbitrary_deadline_is_a_note_not_an_error() {
        let set = TaskSet::new(
            "d",
            vec![Task::new("a", ms(10), ms(2)).with_deadline(ms(15))],
        );
        let diags = set.validate();
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].severity, Severity::Note);
        assert!(set.errors().is_empty());
    }

    #[test]
    fn critical_sections_must_fit_in_the_job() {
        let mut t = Task::new("a", ms(10), ms(4));
        t.critical_sections = vec![
            CriticalSection {
                resource: "bus".into(),
                start: ms(1),
                length: ms(1),
            },
            CriticalSection {
                resource: "bus".into(),
                start: ms(3),
                length: ms(2),
            },
        ];
        let set = TaskSet::new("cs", vec![t]);
        assert_eq!(
            messages(&set),
            vec!["task `a`: critical section on `bus` ends at 5ms of execution, after the job's wcet 4ms"]
        );
        assert_eq!(
            set.validate()[0].path.to_string(),
            "task[0].critical_sections[1].length"
        );
    }

    #[test]
    fn nested_sections_are_allowed_overlapping_ones_are_not() {
        let cs = |r: &str, s, l| CriticalSection {
            resource: r.into(),
            start: ms(s),
            length: ms(l),
        };
        let mut t = Task::new("a", ms(10), ms(8));
        t.critical_sections = vec![cs("outer", 1, 5), cs("inner", 2, 2)];
        assert!(TaskSet::new("n", vec![t.clone()]).validate().is_empty());
        t.critical_sections = vec![cs("x", 1, 3), cs("y", 2, 4)];
        assert_eq!(
            messages(&TaskSet::new("o", vec![t])),
            vec!["task `a`: critical section on `y` overlaps the one on `x` without nesting inside it"]
        );
    }

    fn section(resource: &str, start: u64, length: u64) -> CriticalSection {
        CriticalSection {
            resource: resource.into(),
            start: ms(start),
            length: ms(length),
        }
    }

    fn section_messages(sections: Vec<CriticalSection>) -> Vec<String> {
        let mut t = Task::new("a", ms(20), ms(10));
        t.critical_sections = sections;
        messages(&TaskSet::new("cs", vec![t]))
    }

    #[test]
    fn sections_out_of_execution_order_are_refused() {
        // Two disjoint sections listed last-first: once accepted because the
        // second "nested" inside the first by its end alone.
        assert_eq!(
            section_messages(vec![section("x", 3, 1), section("y", 1, 1)]),
            vec!["task `a`: critical section on `y` starts at 1ms, before the one on `x` (3ms): list critical sections in execution order"]
        );
        assert_eq!(
            section_messages(vec![section("x", 3, 1), section("x", 1, 1)]).len(),
            1
        );
        assert!(section_messages(vec![section("x", 1, 1), section("y", 3, 1)]).is_empty());
    }

    #[test]
    fn nesting_is_checked_against_every_held_section() {
        // `c` starts after `b` ends but overlaps `a` without nesting in it.
        assert_eq!(
            section_messages(vec![section("a", 1, 4), section("b", 2, 1), section("c", 4, 4)]),
            vec!["task `a`: critical section on `c` overlaps the one on `a` without nesting inside it"]
        );
        // Taking `a` again while the outer `a` is held.
        assert_eq!(
            section_messages(vec![
                section("a", 1, 6),
                section("b", 2, 1),
                section("a", 4, 1)
            ]),
            vec!["task `a`: critical sections on `a` overlap (a job cannot take a lock it holds)"]
        );
        // Three levels, properly nested, then a later one.
        assert!(section_messages(vec![
            section("a", 1, 6),
            section("b", 2, 4),
            section("c", 3, 1),
            section("d", 8, 1),
        ])
        .is_empty());
    }

    #[test]
    fn names_are_capped_and_printed_escaped() {
        let long = "n".repeat(MAX_NAME_BYTES + 1);
        let set = TaskSet::new(
            long.clone(),
            vec![
                Task::new(long, ms(10), ms(1)),
                Task::new("x\ny\u{7}", ms(10), ms(11)),
                Task::new("n".repeat(MAX_NAME_BYTES), ms(10), ms(1)),
            ],
        );
        assert_eq!(
            messages(&set),
            vec![
                "the task set's name is 257 bytes long; names are limited to 256 bytes",
                "task #1: the name is 257 bytes long; names are limited to 256 bytes",
                "task `x\\ny\\u{7}`: wcet 11ms exceeds deadline 10ms: no job can meet it",
            ]
        );
        assert_eq!(set.validate()[1].path.to_string(), "task[0].name");
    }

    #[test]
    fn empty_set_is_an_error() {
        assert_eq!(
            messages(&TaskSet::new("e", vec![])),
            vec!["the task set has no tasks (add a [[task]] table)"]
        );
    }
}
