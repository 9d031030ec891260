//! Reading a SimSo configuration (`simso/configuration/parser.py`) as a
//! task set.

use roxmltree::{Document, Node};

use super::millis::{parse_ms, MillisError, CYCLES_PER_MS};
use super::{multi_class, packing, scheduler_for_class, MultiClass, CLASS_PREFIX, MULTI_CLASSES};
use crate::file::{line_column, located, placed, LoadError, LoadedTaskSet, LocatedDiagnostic};
use crate::platform::Platform;
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
    let processors = match children(root, "processors").next() {
        Some(processors) => read_processors(processors, &mut found),
        None => {
            found.refuse(
                root.range().start,
                "<simulation> has no <processors>: SimSo needs one <processor>",
            );
            Vec::new()
        }
    };
    let m = processors.len();
    let sched = children(root, "sched").next();
    let class = sched.and_then(|sched| read_sched(sched, m, &mut found));
    let tasks_node = children(root, "tasks").next();
    let cpu_ids = (class == Some(MultiClass::FixedPedf)).then_some(processors.as_slice());
    let mut tasks = match tasks_node {
        Some(node) => read_tasks(node, cpu_ids, &mut found),
        None => {
            found.refuse(root.range().start, "<simulation> has no <tasks>");
            Vec::new()
        }
    };
    if !found.errors.is_empty() {
        return Err(invalid(origin, text, found.errors));
    }
    let assignment = match class {
        Some(MultiClass::PEdf) => packing::p_edf(&tasks, m as u32).map_err(|i| {
            format!(
                "SimSo's P_EDF places no processor for task `{}` (first fit on decreasing \
                 utilization, at most 1 per processor): SimSo stops with `Packing failed`",
                printable(&tasks[i].name)
            )
        }),
        Some(MultiClass::PRm) => Ok(packing::p_rm(&tasks, m as u32)),
        _ => Ok(Vec::new()),
    };
    match assignment {
        Ok(cpus) => {
            for (task, cpu) in tasks.iter_mut().zip(cpus) {
                task.cpu = Some(cpu);
            }
        }
        Err(why) => {
            let at = sched.map_or(root.range().start, |s| attr_offset(s, "class"));
            found.refuse(at, why);
            return Err(invalid(origin, text, found.errors));
        }
    }
    let mut set = TaskSet::new(
        root.attribute("name")
            .map_or_else(|| default_name.to_string(), str::to_string),
        tasks,
    );
    if m > 1 {
        set.platform = Platform::new(u32::try_from(m).unwrap_or(u32::MAX));
    }
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
        source: None,
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
        Some(PathSegment::Key("cpu")) => "cpu",
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

/// Reads `<sched>`: refuses overheads; on one processor notes the class
/// and its rtlab `--scheduler`; on `m` > 1 maps the class to rtlab's
/// multiprocessor schedulers ([`multi_class`]) or refuses it by name.
fn read_sched(sched: Node, m: usize, found: &mut Findings) -> Option<MultiClass> {
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
    if m > 1 {
        return read_multi_sched(sched, m, found);
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
    None
}

/// The class of a `<sched>` on `m` > 1 processors, as rtlab reads it.
fn read_multi_sched(sched: Node, m: usize, found: &mut Findings) -> Option<MultiClass> {
    if let Some(file) = sched.attribute("className").filter(|f| !f.is_empty()) {
        found.refuse(
            attr_offset(sched, "className"),
            format!(
                "SimSo scheduler file `{}` on {m} processors: rtlab cannot tell how it schedules; \
                 use one of SimSo's {MULTI_CLASSES}",
                printable(file)
            ),
        );
        return None;
    }
    let Some(class) = sched.attribute("class") else {
        found.note(
            sched.range().start,
            format!("<sched> names no scheduler: choose a multiprocessor `rtlab sim --scheduler` for the {m} processors"),
        );
        return None;
    };
    let short = class.strip_prefix(CLASS_PREFIX).unwrap_or(class);
    let at = attr_offset(sched, "class");
    let mapped = multi_class(short);
    let advice = match mapped {
        Some(MultiClass::Global(spec)) => {
            format!("`rtlab sim --scheduler {spec}` simulates the same rule")
        }
        Some(MultiClass::PEdf) => "the tasks' `cpu` are where its first fit on decreasing \
            utilization puts them; `rtlab sim --scheduler pedf` simulates the same rule"
            .to_string(),
        Some(MultiClass::PRm) => "the tasks' `cpu` are where it puts them (the least-loaded \
            processor, in file order); `rtlab sim --scheduler pfp:rm` simulates the same rule"
            .to_string(),
        Some(MultiClass::FixedPedf) => "the tasks' `cpu` come from its task field `cpu`; \
            `rtlab sim --scheduler pedf` simulates the same rule"
            .to_string(),
        None if scheduler_for_class(short).is_some() => {
            found.refuse(
                at,
                format!(
                    "SimSo scheduler {short} schedules one processor, not {m}: rtlab reads \
                     SimSo's {MULTI_CLASSES}"
                ),
            );
            return None;
        }
        None => {
            found.refuse(
                at,
                format!(
                    "SimSo scheduler {} on {m} processors has no rtlab equivalent: rtlab reads \
                     SimSo's {MULTI_CLASSES}",
                    printable(short)
                ),
            );
            return None;
        }
    };
    found.note(
        at,
        format!("SimSo scheduler {short} on {m} processors: {advice}"),
    );
    mapped
}

/// Reads `<processors>`: each processor's `id` (`None` when missing or not
/// a whole number), in file order; refuses overheads and speeds.
fn read_processors(processors: Node, found: &mut Findings) -> Vec<Option<i64>> {
    let cpus: Vec<Node> = children(processors, "processor").collect();
    if cpus.is_empty() {
        found.refuse(
            processors.range().start,
            "<processors> has no <processor>: SimSo needs at least one",
        );
    }
    if let Some(v) = processors
        .attribute("migration_overhead")
        .filter(|v| !is_zero(v))
    {
        found.refuse(
            attr_offset(processors, "migration_overhead"),
            format!(
                "migration_overhead `{}`: rtlab takes migration costs from \
                 `rtlab sim --overheads FILE`; set it to 0 here",
                printable(v)
            ),
        );
    }
    for cpu in &cpus {
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
    let ids: Vec<Option<i64>> = cpus
        .iter()
        .map(|c| c.attribute("id").and_then(|v| v.trim().parse::<i64>().ok()))
        .collect();
    // Ids name processors (Fixed_PEDF's `cpu`, SimSo's own results): two
    // processors with one id are two processors no task can tell apart.
    for (k, id) in ids.iter().enumerate() {
        let Some(id) = id else { continue };
        if let Some(first) = ids[..k].iter().position(|other| *other == Some(*id)) {
            found.refuse(
                attr_offset(cpus[k], "id"),
                format!(
                    "processor id {id} is given twice (processors #{} and #{}): each <processor> needs its own id",
                    first + 1,
                    k + 1
                ),
            );
        }
    }
    ids
}

/// `0`, `0.0`, ... as SimSo's `int(float(v))` reads them (a blank is not 0).
fn is_zero(v: &str) -> bool {
    v.trim().parse::<f64>().is_ok_and(|f| f.abs() < 1.0)
}

/// Reads `<tasks>`; `cpu_ids` (the processors' ids, in file order) when
/// the scheduler is `Fixed_PEDF`, which takes each task's processor from
/// its data field `cpu` (a processor's `id`).
fn read_tasks(tasks: Node, cpu_ids: Option<&[Option<i64>]>, found: &mut Findings) -> Vec<Task> {
    let mut extra_fields = Vec::new();
    let mut has_priority = false;
    let mut has_cpu = false;
    for field in children(tasks, "field") {
        match field.attribute("name") {
            Some("priority") => has_priority = true,
            Some("cpu") if cpu_ids.is_some() => has_cpu = true,
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
    if cpu_ids.is_some() && !has_cpu {
        found.refuse(
            tasks.range().start,
            "SimSo's Fixed_PEDF takes each task's processor from the task field `cpu`: \
             declare it (<field name=\"cpu\" type=\"int\"/>) and give every task a `cpu`",
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
        if let Some(mut task) = read_task(node, &label, has_priority, found) {
            if let Some(ids) = cpu_ids.filter(|_| has_cpu) {
                task.cpu = read_cpu(node, &label, ids, found);
            }
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

/// The processor index of a `Fixed_PEDF` task: the position of the
/// `<processor>` whose `id` its `cpu` names.
fn read_cpu(node: Node, label: &str, ids: &[Option<i64>], found: &mut Findings) -> Option<u32> {
    let Some(v) = node.attribute("cpu") else {
        found.refuse(
            node.range().start,
            format!("{label}: missing attribute `cpu` (Fixed_PEDF needs each task's processor)"),
        );
        return None;
    };
    let at = attr_offset(node, "cpu");
    let Ok(id) = v.trim().parse::<i64>() else {
        found.refuse(
            at,
            format!(
                "{label}: cpu must be a processor's whole-number id, not `{}`",
                printable(v)
            ),
        );
        return None;
    };
    match ids.iter().position(|p| *p == Some(id)) {
        Some(index) => u32::try_from(index).ok(),
        None => {
            found.refuse(
                at,
                format!("{label}: cpu {id} names no <processor id=\"{id}\">"),
            );
            None
        }
    }
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
