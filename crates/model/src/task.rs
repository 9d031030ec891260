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

use crate::time::{hyperperiod, Nanos, TimeError};

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
    /// Execution time at which the lock is released: `start + length`.
    pub fn end(&self) -> Option<Nanos> {
        self.start.checked_add(self.length)
    }
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
}

impl TaskSet {
    /// A task set from its parts.
    pub fn new(name: impl Into<String>, tasks: Vec<Task>) -> TaskSet {
        TaskSet {
            name: name.into(),
            tasks,
        }
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

    /// True when every deadline equals its period.
    pub fn has_implicit_deadlines(&self) -> bool {
        self.tasks.iter().all(|t| t.deadline == t.period)
    }

    /// True when every deadline is at most its period.
    pub fn has_constrained_deadlines(&self) -> bool {
        self.tasks.iter().all(|t| t.deadline <= t.period)
    }

    /// The task with this name.
    pub fn task(&self, name: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.name == name)
    }

    /// Checks the model's rules; see [`Diagnostic`] for what is an error and
    /// what is only reported. An empty result means the set is clean.
    pub fn validate(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if self.tasks.is_empty() {
            out.push(Diagnostic::error(
                FieldPath::root("task"),
                "the task set has no tasks (add a [[task]] table)",
            ));
        }
        for (index, task) in self.tasks.iter().enumerate() {
            validate_task(index, task, &self.tasks[..index], &mut out);
        }
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

fn validate_task(index: usize, task: &Task, earlier: &[Task], out: &mut Vec<Diagnostic>) {
    let at = |field: &'static str| FieldPath::task(index, field);
    let who = if task.name.is_empty() {
        format!("task #{}", index + 1)
    } else {
        format!("task `{}`", task.name)
    };
    let mut error = |field, message: String| out.push(Diagnostic::error(at(field), message));

    if task.name.trim().is_empty() {
        error("name", format!("{who}: the name is empty"));
    } else if earlier.iter().any(|t| t.name == task.name) {
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
        if cs.resource.trim().is_empty() {
            out.push(Diagnostic::error(
                cs_at("resource"),
                format!(
                    "{who}: critical section #{} has an empty resource name",
                    cs_index + 1
                ),
            ));
        }
        if cs.length.is_zero() {
            out.push(Diagnostic::error(
                cs_at("length"),
                format!("{who}: critical section on `{}` has length 0", cs.resource),
            ));
        }
        match cs.end() {
            Some(end) if end <= task.wcet => {}
            _ => out.push(Diagnostic::error(
                cs_at("length"),
                format!(
                    "{who}: critical section on `{}` ends at {} of execution, after the job's wcet {}",
                    cs.resource,
                    cs.start.saturating_add(cs.length),
                    task.wcet
                ),
            )),
        }
    }
    for (later, cs) in task.critical_sections.iter().enumerate().skip(1) {
        let before = &task.critical_sections[later - 1];
        let overlaps = before.end().is_none_or(|end| cs.start < end);
        if overlaps && before.resource != cs.resource {
            // Nested sections are allowed only if declared outermost first
            // and fully inside it; anything else is an overlap.
            let nested = cs.end().zip(before.end()).is_some_and(|(e, be)| e <= be);
            if !nested {
                out.push(Diagnostic::error(
                    FieldPath::critical_section(index, later, "start"),
                    format!(
                        "{who}: critical section on `{}` overlaps the one on `{}` without nesting inside it",
                        cs.resource, before.resource
                    ),
                ));
            }
        } else if overlaps {
            out.push(Diagnostic::error(
                FieldPath::critical_section(index, later, "start"),
                format!(
                    "{who}: critical sections on `{}` overlap (a job cannot take a lock it holds)",
                    cs.resource
                ),
            ));
        } else if cs.start < before.start {
            out.push(Diagnostic::error(
                FieldPath::critical_section(index, later, "start"),
                format!("{who}: critical sections must be listed in execution order"),
            ));
        }
    }
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
}

impl Diagnostic {
    fn error(path: FieldPath, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            path,
            message: message.into(),
        }
    }

    fn note(path: FieldPath, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Note,
            path,
            message: message.into(),
        }
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

    #[test]
    fn empty_set_is_an_error() {
        assert_eq!(
            messages(&TaskSet::new("e", vec![])),
            vec!["the task set has no tasks (add a [[task]] table)"]
        );
    }
}
