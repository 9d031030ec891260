//! From a parsed [`Node`] tree to tasks, with every shape problem said in
//! the file's own words: fields, tables (objects in JSON), arrays, strings,
//! whole numbers and durations, never the names of Rust types.
//!
//! Every problem is collected (not just the first), each with the byte
//! offset of the value or key it is about.

use super::document::{Entry, Node, Value};
use super::Format;
use crate::platform::Platform;
use crate::task::{CriticalSection, Task};
use crate::text::printable;
use crate::time::Nanos;

/// The fields of the document, a task and a critical section, in the order
/// messages list them.
const DOCUMENT_FIELDS: &[&str] = &["name", "processors", "clusters", "task", "mode"];
const MODE_FIELDS: &[&str] = &["name", "start", "tasks"];
pub(super) const TASK_FIELDS: &[&str] = &[
    "name",
    "period",
    "deadline",
    "wcet",
    "bcet",
    "offset",
    "jitter",
    "priority",
    "cpu",
    "critical_sections",
];
const SECTION_FIELDS: &[&str] = &["resource", "start", "length"];

/// A duration string longer than this is not read (no real one is), so a
/// hostile value cannot make a message huge.
const MAX_DURATION_TEXT: usize = 64;

/// Values quoted in messages are cut to this many characters.
const QUOTE_CHARS: usize = 40;

/// What the document holds, before the model's rules are checked.
#[derive(Debug)]
pub(super) struct Decoded {
    /// The `name` field, if any.
    pub name: Option<String>,
    /// The tasks, in file order.
    pub tasks: Vec<Task>,
    /// `processors` and `clusters` (validated later, with the tasks).
    pub platform: Platform,
    /// True when `processors` and `clusters` decoded without a problem (so
    /// the tasks' `cpu` fields can be checked against them even when other
    /// fields have problems).
    pub platform_decoded: bool,
    /// Each task's index among the file's tasks (tasks that could not be
    /// decoded leave gaps).
    pub indices: Vec<usize>,
    /// The `[[mode]]` entries, task names not yet resolved.
    pub modes: Vec<ModeEntry>,
}

/// One `[[mode]]` as written: its name, start, and the tasks it runs, each
/// with its byte offset (for `file:line:col` when the name is unknown).
#[derive(Debug)]
pub(super) struct ModeEntry {
    pub name: String,
    pub name_offset: usize,
    pub start: Nanos,
    pub start_offset: usize,
    pub tasks: Vec<(String, usize)>,
}

/// A shape problem: where, and what, in one line.
#[derive(Debug)]
pub(super) struct Problem {
    /// Byte offset of the value or key.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
    /// Report order: the enclosing task's offset, then problems with values
    /// before missing fields (the typo `perod` before "missing `period`"),
    /// then the offset.
    order: (usize, bool, usize),
}

/// Decodes a task-set document; every shape problem, or the tasks.
/// The set, or every shape problem with the tasks that could still be
/// decoded (so that their own errors can be reported with the problems).
pub(super) fn task_set(
    root: &Node,
    format: Format,
) -> Result<Decoded, (Vec<Problem>, Option<Box<Decoded>>)> {
    let mut d = Decoder {
        format,
        problems: Vec::new(),
        group: 0,
    };
    let decoded = d.document(root);
    // Report in file order, whatever order the fields were checked in.
    d.problems.sort_by_key(|p| p.order);
    match decoded {
        Some(decoded) if d.problems.is_empty() => Ok(decoded),
        partial => Err((d.problems, partial.map(Box::new))),
    }
}

struct Decoder {
    format: Format,
    problems: Vec<Problem>,
    /// Offset of the task being decoded (0 outside tasks).
    group: usize,
}

impl Decoder {
    fn problem(&mut self, offset: usize, message: String) {
        self.push(offset, false, message);
    }

    fn missing(&mut self, offset: usize, message: String) {
        self.push(offset, true, message);
    }

    fn push(&mut self, offset: usize, missing: bool, message: String) {
        self.problems.push(Problem {
            offset,
            message: printable(&message).into_owned(),
            order: (self.group, missing, offset),
        });
    }

    /// "a table" in TOML, "an object" in JSON.
    fn table_word(&self) -> &'static str {
        match self.format {
            Format::Toml => "a table",
            Format::Json => "an object",
        }
    }

    /// The value in words, for "..., not X".
    fn describe(&self, node: &Node) -> String {
        match &node.value {
            Value::Table(_) => self.table_word().to_string(),
            Value::Array(_) => "an array".to_string(),
            Value::String(s) => format!("the string \"{}\"", quote(s)),
            Value::Integer(n) | Value::Float(n) => quote(n),
            Value::Boolean(b) => b.to_string(),
            Value::Datetime(d) => format!("the date {}", quote(d)),
            Value::Null => "null".to_string(),
        }
    }

    fn document(&mut self, root: &Node) -> Option<Decoded> {
        let Value::Table(entries) = &root.value else {
            let message = format!(
                "the document must be {} with fields `name` and `task`, not {}",
                self.table_word(),
                self.describe(root)
            );
            self.problem(root.offset, message);
            return None;
        };
        self.check_keys(entries, DOCUMENT_FIELDS);
        let name = field(entries, "name").and_then(|n| self.string(n, "name"));
        let mut platform = Platform::default();
        let problems_before = self.problems.len();
        if let Some(v) =
            field(entries, "processors").and_then(|n| self.whole_number(n, "processors"))
        {
            platform.processors = v;
        }
        if let Some(c) = field(entries, "clusters").and_then(|n| self.clusters(n)) {
            platform.clusters = c;
        }
        let platform_decoded = self.problems.len() == problems_before;
        // A misspelt `[[tasks]]` is reported as an unknown field above; its
        // tasks are still read, so that their own problems are reported
        // too (and not one at a time, after each fix), whether or not the
        // file also has well-spelt `[[task]]` tables.
        if let Some(Value::Array(items)) = field(entries, "tasks").map(|n| &n.value) {
            for (i, item) in items.iter().enumerate() {
                let _ = self.task(i, item);
            }
            self.group = 0;
        }
        let (indices, tasks) = match field(entries, "task") {
            None => (Vec::new(), Vec::new()),
            Some(node) => match &node.value {
                Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| Some((i, self.task(i, item)?)))
                    .unzip(),
                _ => {
                    let message = match self.format {
                        Format::Toml => format!(
                            "`task` must be an array of tables (write each task as [[task]]), not {}",
                            self.describe(node)
                        ),
                        Format::Json => format!(
                            "`task` must be an array of task objects, not {}",
                            self.describe(node)
                        ),
                    };
                    self.problem(node.offset, message);
                    (Vec::new(), Vec::new())
                }
            },
        };
        let modes = match field(entries, "mode") {
            None => Vec::new(),
            Some(node) => match &node.value {
                Value::Array(items) => items.iter().filter_map(|m| self.mode(m)).collect(),
                _ => {
                    let message = format!(
                        "`mode` must be an array of {}s (write each mode as [[mode]]), not {}",
                        self.table_word(),
                        self.describe(node)
                    );
                    self.problem(node.offset, message);
                    Vec::new()
                }
            },
        };
        Some(Decoded {
            name,
            tasks,
            platform,
            platform_decoded,
            indices,
            modes,
        })
    }

    /// `[[mode]]`: `name`, `start` (a duration) and `tasks` (names).
    fn mode(&mut self, node: &Node) -> Option<ModeEntry> {
        let Value::Table(entries) = &node.value else {
            let message = format!(
                "a mode must be {} with fields `name`, `start`, `tasks`, not {}",
                self.table_word(),
                self.describe(node)
            );
            self.problem(node.offset, message);
            return None;
        };
        self.check_keys(entries, MODE_FIELDS);
        let get = |d: &mut Decoder, key: &str| {
            let found = field(entries, key);
            if found.is_none() {
                d.missing(node.offset, format!("mode: missing field `{key}`"));
            }
            found
        };
        let name = get(self, "name");
        let start = get(self, "start");
        let tasks = get(self, "tasks");
        let name_offset = name.map_or(node.offset, |n| n.offset);
        let name = name.and_then(|n| self.string(n, "name"));
        let start_offset = start.map_or(node.offset, |n| n.offset);
        let start = start.and_then(|n| self.duration(n, "start"));
        let tasks = match tasks.map(|n| (n, &n.value)) {
            Some((_, Value::Array(items))) => items
                .iter()
                .map(|t| Some((self.string(t, "tasks")?, t.offset)))
                .collect::<Option<Vec<_>>>(),
            Some((n, _)) => {
                let message = format!(
                    "`tasks` must be an array of task names, e.g. [\"t1\", \"t2\"], not {}",
                    self.describe(n)
                );
                self.problem(n.offset, message);
                None
            }
            None => None,
        };
        Some(ModeEntry {
            name: name?,
            name_offset,
            start: start?,
            start_offset,
            tasks: tasks?,
        })
    }

    fn task(&mut self, index: usize, node: &Node) -> Option<Task> {
        let Value::Table(entries) = &node.value else {
            let message = format!(
                "a task must be {} with fields `name`, `period`, `wcet`, ..., not {}",
                self.table_word(),
                self.describe(node)
            );
            self.problem(node.offset, message);
            return None;
        };
        self.group = node.offset;
        self.check_keys(entries, TASK_FIELDS);
        let name = field(entries, "name").and_then(|n| self.string(n, "name"));
        let who = match &name {
            Some(n) if !n.is_empty() && n.len() <= QUOTE_CHARS * 4 => format!("task `{n}`"),
            _ => format!("task #{}", index + 1),
        };
        let required = |d: &mut Decoder, key: &str| {
            let found = field(entries, key);
            if found.is_none() {
                d.missing(node.offset, format!("{who}: missing field `{key}`"));
            }
            found
        };
        required(self, "name");
        let period = required(self, "period");
        let wcet = required(self, "wcet");
        let period = period.and_then(|n| self.duration(n, "period"));
        let wcet = wcet.and_then(|n| self.duration(n, "wcet"));
        let optional =
            |d: &mut Decoder, key: &str| field(entries, key).map(|n| d.duration(n, key).ok_or(()));
        let deadline = optional(self, "deadline");
        let bcet = optional(self, "bcet");
        let offset = optional(self, "offset");
        let jitter = optional(self, "jitter");
        let priority = field(entries, "priority").map(|n| self.priority(n).ok_or(()));
        let cpu = field(entries, "cpu").map(|n| self.whole_number(n, "cpu").ok_or(()));
        let sections = match field(entries, "critical_sections") {
            None => Some(Vec::new()),
            Some(n) => self.sections(&who, n),
        };
        let period = period?;
        Some(Task {
            name: name?,
            period,
            deadline: deadline.transpose().ok()?.unwrap_or(period),
            wcet: wcet?,
            bcet: bcet.transpose().ok()?,
            offset: offset.transpose().ok()?.unwrap_or_default(),
            jitter: jitter.transpose().ok()?.unwrap_or_default(),
            priority: priority.transpose().ok()?,
            critical_sections: sections?,
            cpu: cpu.transpose().ok()?,
        })
    }

    fn sections(&mut self, who: &str, node: &Node) -> Option<Vec<CriticalSection>> {
        let Value::Array(items) = &node.value else {
            let message = match self.format {
                Format::Toml => format!(
                    "`critical_sections` must be an array of tables (write each as [[task.critical_sections]]), not {}",
                    self.describe(node)
                ),
                Format::Json => format!(
                    "`critical_sections` must be an array of objects, not {}",
                    self.describe(node)
                ),
            };
            self.problem(node.offset, message);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        let mut complete = true;
        for (k, item) in items.iter().enumerate() {
            match self.section(who, k, item) {
                Some(cs) => out.push(cs),
                None => complete = false,
            }
        }
        complete.then_some(out)
    }

    fn section(&mut self, who: &str, k: usize, node: &Node) -> Option<CriticalSection> {
        let Value::Table(entries) = &node.value else {
            let message = format!(
                "a critical section must be {} with fields `resource`, `start` and `length`, not {}",
                self.table_word(),
                self.describe(node)
            );
            self.problem(node.offset, message);
            return None;
        };
        self.check_keys(entries, SECTION_FIELDS);
        let get = |d: &mut Decoder, key: &str| {
            let found = field(entries, key);
            if found.is_none() {
                d.missing(
                    node.offset,
                    format!("{who}: critical section #{}: missing field `{key}`", k + 1),
                );
            }
            found
        };
        let (resource, start, length) = (
            get(self, "resource"),
            get(self, "start"),
            get(self, "length"),
        );
        let resource = resource.and_then(|n| self.string(n, "resource"));
        let start = start.and_then(|n| self.duration(n, "start"));
        let length = length.and_then(|n| self.duration(n, "length"));
        Some(CriticalSection {
            resource: resource?,
            start: start?,
            length: length?,
        })
    }

    /// Unknown keys, and keys written twice (JSON; TOML's parser refuses those).
    fn check_keys(&mut self, entries: &[Entry], known: &[&str]) {
        for (i, entry) in entries.iter().enumerate() {
            if !known.contains(&entry.key.as_str()) {
                let hint = if entry.key == "tasks" && known.contains(&"task") {
                    " (each task is a [[task]] table)"
                } else {
                    ""
                };
                let message = format!(
                    "unknown field `{}`, expected {}{hint}",
                    quote(&entry.key),
                    one_of(known)
                );
                self.problem(entry.key_offset, message);
            } else if entries[..i].iter().any(|e| e.key == entry.key) {
                self.problem(entry.key_offset, format!("duplicate field `{}`", entry.key));
            }
        }
    }

    fn string(&mut self, node: &Node, key: &str) -> Option<String> {
        match &node.value {
            Value::String(s) => Some(s.clone()),
            _ => {
                let message = format!("`{key}` must be a string, not {}", self.describe(node));
                self.problem(node.offset, message);
                None
            }
        }
    }

    /// A duration is a string with a unit (`"25ms"`); a bare 0 is accepted.
    fn duration(&mut self, node: &Node, key: &str) -> Option<Nanos> {
        let result = match &node.value {
            Value::String(s) if s.len() > MAX_DURATION_TEXT => Err(format!(
                "`{key}`: \"{}...\" is not a duration (write e.g. \"10ms\")",
                quote(s)
            )),
            Value::String(s) => s.parse::<Nanos>().map_err(|e| e.to_string()),
            Value::Integer(n) if n.bytes().all(|b| b == b'0') => Ok(Nanos::ZERO),
            Value::Integer(n) if n.starts_with('-') => Err(format!(
                "`{key}`: durations cannot be negative, and need a unit, e.g. \"10ms\""
            )),
            Value::Integer(n) => Err(format!(
                "`{key}`: a duration needs a unit, e.g. \"10ms\" ({n} as nanoseconds is \"{n}ns\")",
                n = quote(n)
            )),
            Value::Float(_) => Err(format!(
                "`{key}`: a duration needs a unit, e.g. \"10ms\" or \"2.5us\""
            )),
            _ => Err(format!(
                "`{key}` must be a duration with a unit like \"10ms\", not {}",
                self.describe(node)
            )),
        };
        result.map_err(|m| self.problem(node.offset, m)).ok()
    }

    /// `clusters`: an array of arrays of processor numbers.
    fn clusters(&mut self, node: &Node) -> Option<Vec<Vec<u32>>> {
        let shape =
            "`clusters` must be an array of arrays of processor numbers, e.g. [[0, 1], [2, 3]]";
        let Value::Array(items) = &node.value else {
            let message = format!("{shape}, not {}", self.describe(node));
            self.problem(node.offset, message);
            return None;
        };
        if items.is_empty() {
            // An empty list is not "no clusters": it names none, where
            // leaving `clusters` out means one cluster of every processor.
            self.problem(
                node.offset,
                "`clusters` is empty: it names no cluster; leave it out for one cluster of every \
                 processor, or list them, e.g. [[0, 1], [2, 3]]"
                    .to_string(),
            );
            return None;
        }
        let mut out = Vec::with_capacity(items.len());
        let mut complete = true;
        for item in items {
            let Value::Array(cpus) = &item.value else {
                let message = format!("{shape}, not {} in it", self.describe(item));
                self.problem(item.offset, message);
                complete = false;
                continue;
            };
            let cluster: Option<Vec<u32>> = cpus
                .iter()
                .map(|c| self.whole_number(c, "clusters"))
                .collect();
            match cluster {
                Some(c) => out.push(c),
                None => complete = false,
            }
        }
        complete.then_some(out)
    }

    /// A whole number from 0 to `u32::MAX` (`processors`, `cpu`, a cluster's
    /// processor); the model's rules check the range that matters.
    fn whole_number(&mut self, node: &Node, key: &str) -> Option<u32> {
        if let Value::Integer(n) = &node.value {
            if let Ok(v) = n.parse::<u32>() {
                return Some(v);
            }
        }
        let what = match key {
            "processors" => format!("a whole number from 1 to {}", crate::MAX_PROCESSORS),
            "cpu" => "a processor number (0, 1, ...)".to_string(),
            _ => "an array of arrays of processor numbers (0, 1, ...)".to_string(),
        };
        let message = format!("`{key}` must be {what}, not {}", self.describe(node));
        self.problem(node.offset, message);
        None
    }

    fn priority(&mut self, node: &Node) -> Option<u32> {
        if let Value::Integer(n) = &node.value {
            if let Ok(p) = n.parse::<u32>() {
                return Some(p);
            }
        }
        let message = format!(
            "`priority` must be a whole number from 0 to {}, not {}",
            u32::MAX,
            self.describe(node)
        );
        self.problem(node.offset, message);
        None
    }
}

/// The first entry named `key`.
fn field<'a>(entries: &'a [Entry], key: &str) -> Option<&'a Node> {
    entries.iter().find(|e| e.key == key).map(|e| &e.node)
}

/// `text` cut to [`QUOTE_CHARS`] characters (with `...` when cut).
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// "`a`", "`a` or `b`", "one of `a`, `b`, `c`".
fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        _ => format!("one of {}", quoted.join(", ")),
    }
}
