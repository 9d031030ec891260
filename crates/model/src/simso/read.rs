//! Reading a SimSo configuration (`simso/configuration/parser.py`) as a
//! task set.

use roxmltree::{Document, Node};

use super::millis::{parse_ms, MillisError, CYCLES_PER_MS};
use super::{scheduler_for_class, CLASS_PREFIX};
use crate::file::{line_column, located, placed, LoadError, LoadedTaskSet, LocatedDiagnostic};
use crate::task::{PathSegment, Severity, Task, TaskSet};
use crate::text::printable;
use crate::time::Nanos;

/// Problems and notes found so far, each at a byte offset into the text.
#[derive(Default)]
struct Findings {
    errors: Vec<(usize, String)>,
    notes: Vec<(usize, String)>,
}

impl Findings {
    fn refuse(&mut self, offset: usize, message: impl Into<String>) {
        self.errors.push((offset, message.into()));
    }

    fn note(&mut self, offset: usize, message: impl Into<String>) {
        self.notes.push((offset, message.into()));
    }
}

/// Byte offset of attribute `name` of `node`, or of the element itself.
fn attr_offset(node: Node, name: &str) -> usize {
    node.attributes()
        .find(|a| a.name() == name)
        .map_or(node.range().start, |a| a.range_value().start)
}

/// The element children of `node` named `name`.
fn children<'a, 'input>(
    node: Node<'a, 'input>,
    name: &'a str,
) -> impl Iterator<Item = Node<'a, 'input>> + 'a {
    node.children()
        .filter(move |n| n.is_element() && n.tag_name().name() == name)
}

/// Reads `text` (an XML document whose root is `<simulation>`) as a task
/// set; `origin` names it in messages.
pub fn parse_str(text: &str, origin: &str, default_name: &str) -> Result<LoadedTaskSet, LoadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some((offset, excess)) = super::shape::first_excess(text) {
        let (line, column) = line_column(text, offset);
        return Err(LoadError::Syntax(LocatedDiagnostic {
            origin: origin.to_string(),
            line,
            column,
            severity: Severity::Error,
            message: format!("XML refused: {excess}"),
        }));
    }
    let doc = Document::parse(text).map_err(|e| {
        let pos = e.pos();
        LoadError::Syntax(LocatedDiagnostic {
            origin: origin.to_string(),
            line: pos.row as usize,
            column: pos.col as usize,
            severity: Severity::Error,
            message: format!(
                "not well-formed XML: {}",
                printable(
                    e.to_string()
                        .trim_end_matches(&format!(" at {}:{}", pos.row, pos.col))
                )
            ),
        })
    })?;
    let root = doc.root_element();
    let mut found = Findings::default();
    if root.tag_name().name() != "simulation" {
        found.refuse(
            root.range().start,
            format!(
                "an XML task set must be a SimSo configuration, whose root is <simulation>, not <{}>",
                printable(root.tag_name().name())
            ),
        );
        return Err(invalid(origin, text, found.errors));
    }
    read_simulation(root, &mut found);
    if let Some(sched) = children(root, "sched").next() {
        read_sched(sched, &mut found);
    }
    match children(root, "processors").next() {
        Some(processors) => read_processors(processors, &mut found),
        None => found.refuse(
            root.range().start,
            "<simulation> has no <processors>: SimSo needs one <processor>",
        ),
    }
    let tasks_node = children(root, "tasks").next();
    let tasks = match tasks_node {
        Some(node) => read_tasks(node, &mut found),
        None => {
            found.refuse(root.range().start, "<simulation> has no <tasks>");
            Vec::new()
        }
    };
    if !found.errors.is_empty() {
        return Err(invalid(origin, text, found.errors));
    }
    let set = TaskSet::new(
        root.attribute("name")
            .map_or_else(|| default_name.to_string(), str::to_string),
        tasks,
    );
    let task_nodes: Vec<Node> = tasks_node.map_or_else(Vec::new, |n| children(n, "task").collect());
    let diagnostics = placed(origin, text, set.validate(), |path| {
        diagnostic_offset(root, &task_nodes, &path.0)
    });
    for (offset, severity, message) in diagnostics {
        match severity {
            Severity::Error => found.refuse(offset, message),
            Severity::Note => found.note(offset, message),
        }
    }
    if !found.errors.is_empty() {
        return Err(invalid(origin, text, found.errors));
    }
    let notes = located(
        origin,
        text,
        found
            .notes
            .into_iter()
            .map(|(offset, m)| (offset, Severity::Note, m)),
    );
    Ok(LoadedTaskSet {
        modes: Vec::new(),
        set,
        notes,
        origin: origin.to_string(),
    })
}

fn invalid(origin: &str, text: &str, errors: Vec<(usize, String)>) -> LoadError {
    LoadError::invalid(located(
        origin,
        text,
        errors.into_iter().map(|(o, m)| (o, Severity::Error, m)),
    ))
}

/// The place of a validation finding: the task's attribute for the field.
fn diagnostic_offset(root: Node, tasks: &[Node], path: &[PathSegment]) -> usize {
    let node = match path.get(1) {
        Some(PathSegment::Index(i)) => tasks.get(*i),
        _ => None,
    };
    let Some(node) = node else {
        return root.range().start;
    };
    let attribute = match path.get(2) {
        Some(PathSegment::Key("period")) => "period",
        Some(PathSegment::Key("deadline")) => "deadline",
        Some(PathSegment::Key("wcet")) => "WCET",
        Some(PathSegment::Key("offset")) => "activationDate",
        Some(PathSegment::Key("priority")) => "priority",
        _ => "name",
    };
    attr_offset(*node, attribute)
}

fn read_simulation(root: Node, found: &mut Findings) {
    let etm = match (root.attribute("etm"), root.attribute("use_wcet")) {
        (Some(etm), _) => Some((etm, "etm")),
        (None, Some(v)) if !matches!(v, "true" | "yes") => Some(("cache", "use_wcet")),
        _ => None,
    };
    if let Some((etm, attribute)) = etm {
        if etm != "wcet" {
            found.refuse(
                attr_offset(root, attribute),
                format!(
                    "execution-time model `{}`: rtlab executes every job for its WCET \
                     (or uniformly in [bcet, wcet] with `rtlab sim --exec uniform`); use etm=\"wcet\"",
                    printable(etm)
                ),
            );
        }
    }
    let cycles_per_ms = match root.attribute("cycles_per_ms") {
        None => CYCLES_PER_MS,
        Some(v) => match v.trim().parse::<u64>() {
            Ok(c) if c > 0 => c,
            _ => {
                found.refuse(
                    attr_offset(root, "cycles_per_ms"),
                    format!(
                        "cycles_per_ms must be a whole number above 0, not `{}`",
                        printable(v)
                    ),
                );
                return;
            }
        },
    };
    if cycles_per_ms != CYCLES_PER_MS {
        found.note(
            attr_offset(root, "cycles_per_ms"),
            format!(
                "cycles_per_ms = {cycles_per_ms}: SimSo truncates each time to whole cycles of \
                 1/{cycles_per_ms} ms; rtlab keeps every time to the nanosecond"
            ),
        );
    }
    if let Some(v) = root.attribute("duration") {
        let offset = attr_offset(root, "duration");
        match v.trim().parse::<u64>() {
            Ok(cycles) => {
                let ns = u128::from(cycles) * 1_000_000 / u128::from(cycles_per_ms);
                let length = u64::try_from(ns).map_or(Nanos::MAX, Nanos::from_ns);
                found.note(
                    offset,
                    format!(
                        "SimSo runs {cycles} cycles ({length}): `rtlab sim --duration {length}` runs as long"
                    ),
                );
            }
            Err(_) => found.refuse(
                offset,
                format!(
                    "duration must be a whole number of cycles, not `{}`",
                    printable(v)
                ),
            ),
        }
    }
}

fn read_sched(sched: Node, found: &mut Findings) {
    for attribute in ["overhead", "overhead_activate", "overhead_terminate"] {
        if let Some(v) = sched.attribute(attribute) {
            if !is_zero(v) {
                found.refuse(
                    attr_offset(sched, attribute),
                    format!(
                        "scheduler {attribute} `{}`: rtlab takes scheduling costs from \
                         `rtlab sim --overheads FILE`; set it to 0 here",
                        printable(v)
                    ),
                );
            }
        }
    }
    let offset = sched.range().start;
    if let Some(file) = sched.attribute("className").filter(|f| !f.is_empty()) {
        found.note(
            attr_offset(sched, "className"),
            format!(
                "SimSo scheduler file `{}` is not run by rtlab: choose `rtlab sim --scheduler`",
                printable(file)
            ),
        );
    } else if let Some(class) = sched.attribute("class") {
        let short = class.strip_prefix(CLASS_PREFIX).unwrap_or(class);
        match scheduler_for_class(short) {
            Some(spec) => found.note(
                attr_offset(sched, "class"),
                format!(
                    "SimSo scheduler {}: `rtlab sim --scheduler {spec}` simulates the same rule",
                    printable(short)
                ),
            ),
            None => found.note(
                attr_offset(sched, "class"),
                format!(
                    "SimSo scheduler {} has no rtlab equivalent here: choose `rtlab sim --scheduler`",
                    printable(short)
                ),
            ),
        }
    } else {
        found.note(offset, "<sched> names no scheduler");
    }
}

fn read_processors(processors: Node, found: &mut Findings) {
    let cpus: Vec<Node> = children(processors, "processor").collect();
    match cpus.len() {
        0 => found.refuse(
            processors.range().start,
            "<processors> has no <processor>: rtlab simulates one processor",
        ),
        1 => {}
        n => found.refuse(
            cpus[1].range().start,
            format!(
                "a multiprocessor configuration ({n} processors): rtlab simulates one processor; \
                 keep one <processor> (partition the tasks into one file per processor)"
            ),
        ),
    }
    for cpu in cpus.iter().take(1) {
        for attribute in ["cs_overhead", "cl_overhead"] {
            if let Some(v) = cpu.attribute(attribute).filter(|v| !is_zero(v)) {
                found.refuse(
                    attr_offset(*cpu, attribute),
                    format!(
                        "processor {attribute} `{}`: rtlab takes context-switch costs from \
                         `rtlab sim --overheads FILE`; set it to 0 here",
                        printable(v)
                    ),
                );
            }
        }
        if let Some(v) = cpu.attribute("speed") {
            if v.trim().parse::<f64>() != Ok(1.0) {
                found.refuse(
                    attr_offset(*cpu, "speed"),
                    format!(
                        "processor speed `{}`: rtlab simulates a processor of speed 1 (scale the WCETs instead)",
                        printable(v)
                    ),
                );
            }
        }
    }
}

/// `0`, `0.0`, ... as SimSo's `int(float(v))` reads them (a blank is not 0).
fn is_zero(v: &str) -> bool {
    v.trim().parse::<f64>().is_ok_and(|f| f.abs() < 1.0)
}

fn read_tasks(tasks: Node, found: &mut Findings) -> Vec<Task> {
    let mut extra_fields = Vec::new();
    let mut has_priority = false;
    for field in children(tasks, "field") {
        match field.attribute("name") {
            Some("priority") => has_priority = true,
            Some(other) => extra_fields.push((field.range().start, other.to_string())),
            None => {}
        }
    }
    for (offset, name) in extra_fields {
        found.note(
            offset,
            format!(
                "task field `{}` is data for a SimSo scheduler; rtlab does not use it",
                printable(&name)
            ),
        );
    }
    let mut out = Vec::new();
    let mut aborting = Vec::new();
    let mut continuing = 0;
    for (index, node) in children(tasks, "task").enumerate() {
        let label = node.attribute("name").map_or_else(
            || format!("task #{}", index + 1),
            |n| format!("task `{}`", printable(n)),
        );
        if let Some(task) = read_task(node, &label, has_priority, found) {
            if node.attribute("abort_on_miss").is_none_or(|v| v == "yes") {
                aborting.push(task.name.clone());
            } else {
                continuing += 1;
            }
            out.push(task);
        }
    }
    if !aborting.is_empty() {
        let advice = if continuing == 0 {
            "`rtlab sim --on-miss abort` does the same".to_string()
        } else {
            format!(
                "rtlab's --on-miss applies to every task, and {continuing} task(s) here continue \
                 (abort_on_miss=\"no\")"
            )
        };
        found.note(
            tasks.range().start,
            format!(
                "SimSo aborts a job at its deadline for {} task(s) (abort_on_miss, \"yes\" when absent): {advice}",
                aborting.len()
            ),
        );
    }
    out
}

fn read_task(node: Node, label: &str, has_priority: bool, found: &mut Findings) -> Option<Task> {
    let before = found.errors.len();
    let start = node.range().start;
    let task_type = node.attribute("task_type");
    match task_type {
        None | Some("Periodic") => {
            if task_type.is_none() && node.attribute("periodic") == Some("no") {
                found.refuse(
                    attr_offset(node, "periodic"),
                    format!("{label}: periodic=\"no\" (an aperiodic task): rtlab models periodic tasks only"),
                );
            }
        }
        Some(other) => found.refuse(
            attr_offset(node, "task_type"),
            format!(
                "{label}: task_type `{}`: rtlab models periodic tasks only (task_type=\"Periodic\")",
                printable(other)
            ),
        ),
    }
    if let Some(v) = node.attribute("followed_by") {
        found.refuse(
            attr_offset(node, "followed_by"),
            format!(
                "{label}: followed_by `{}` (a job activated by another task's end): rtlab models independent periodic tasks",
                printable(v)
            ),
        );
    }
    let name = node.attribute("name");
    if name.is_none() {
        found.refuse(start, format!("{label}: missing attribute `name`"));
    }
    match node.attribute("id") {
        None => found.refuse(
            start,
            format!("{label}: missing attribute `id` (SimSo needs it)"),
        ),
        Some(v) if v.trim().parse::<i64>().is_err() => found.refuse(
            attr_offset(node, "id"),
            format!("{label}: id must be a whole number, not `{}`", printable(v)),
        ),
        Some(_) => {}
    }
    let mut time = |attribute: &str, required: bool| -> Nanos {
        let Some(v) = node.attribute(attribute) else {
            if required {
                found.refuse(start, format!("{label}: missing attribute `{attribute}`"));
            }
            return Nanos::ZERO;
        };
        match parse_ms(v) {
            Ok(ns) => Nanos::from_ns(ns),
            Err(e) => {
                let why = match e {
                    MillisError::NotANumber => "must be a number of milliseconds",
                    MillisError::Negative => "must not be negative",
                    MillisError::OutOfRange => "is out of range (at most about 584 years)",
                };
                found.refuse(
                    attr_offset(node, attribute),
                    format!("{label}: {attribute} `{}` {why}", printable(v)),
                );
                Nanos::ZERO
            }
        }
    };
    let period = time("period", true);
    let deadline = time("deadline", true);
    let wcet = time("WCET", true);
    let offset = time("activationDate", false);
    let priority = match (has_priority, node.attribute("priority")) {
        (true, Some(v)) => match v.trim().parse::<u32>() {
            Ok(p) => Some(p),
            Err(_) => {
                found.refuse(
                    attr_offset(node, "priority"),
                    format!(
                        "{label}: priority must be a whole number from 0 to 4294967295 \
                         (larger is more urgent, as in SimSo's FP), not `{}`",
                        printable(v)
                    ),
                );
                None
            }
        },
        _ => None,
    };
    (found.errors.len() == before).then(|| {
        let mut task = Task::new(name.unwrap_or_default(), period, wcet)
            .with_deadline(deadline)
            .with_offset(offset);
        task.priority = priority;
        task
    })
}
