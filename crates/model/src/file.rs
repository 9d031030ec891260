//! Task-set files: TOML (primary) and JSON with the same fields.
//!
//! ```toml
//! name = "lf-scenario-4"
//! [[task]]
//! name = "t1"
//! period = "25ms"
//! deadline = "23ms"     # optional, defaults to period
//! wcet = "3ms"
//! offset = "1ms"        # optional release offset
//! jitter = "0ns"        # optional release jitter
//! bcet = "2ms"          # optional best-case execution time
//! priority = 2          # optional; larger is more urgent
//! cpu = 0               # optional fixed processor (see `processors` below)
//! [[task.critical_sections]]
//! resource = "bus"
//! start = "1ms"         # execution time into the job
//! length = "500us"
//! ```
//!
//! Modes (optional, after the tasks): from its `start` until the next
//! mode's, only the tasks a mode names release jobs (see
//! [`crate::phase::Mode`]); a name the set does not have, a task named
//! twice, or modes out of time order are errors at their place:
//!
//! ```toml
//! [[mode]]
//! name = "degraded"
//! start = "300ms"
//! tasks = ["t1"]
//! ```
//!
//! A set on several processors says so at the top (see [`crate::platform`]):
//! `processors = 4` (default 1) and optionally `clusters = [[0, 1], [2, 3]]`.
//!
//! Every problem is reported as one line, `file:line:col: what is wrong`,
//! whether the parser found it (syntax), the decoder did (unknown field, a
//! string where a table belongs, a duration without a unit, in the file's
//! own words) or the model's validation did (C > D, duplicate names, ...).
//! Nothing here panics on any input.
//!
//! JSON files are JSONC: `//` and `/* */` comments are allowed. A UTF-8
//! byte-order mark at the start of either format is ignored.

use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::catalog;
use crate::task::{CriticalSection, FieldPath, PathSegment, Severity, Task, TaskSet};
use crate::text::printable;
use crate::time::Nanos;

mod decode;
mod document;
mod output;
mod rtapp;

pub use output::{write_output, OutputFile, PendingOutput};

use document::Node;

/// The prefix that names a built-in task set instead of a file.
pub const BUILTIN_PREFIX: &str = "builtin:";

/// The two accepted encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TOML, as in DESIGN.md.
    Toml,
    /// JSON with the same fields.
    Json,
}

impl Format {
    /// `.json` files are JSON; everything else is read as TOML.
    pub fn from_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Toml,
        }
    }
}

/// The on-disk shape of a task set, as the generators write it (reading
/// goes through [`decode`]).
#[derive(Debug, Serialize)]
struct TaskSetDocument {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    /// Written only when not 1, so one-processor files are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    processors: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    clusters: Vec<Vec<u32>>,
    task: Vec<TaskEntry>,
}

#[derive(Debug, Serialize)]
struct TaskEntry {
    name: String,
    period: Nanos,
    #[serde(skip_serializing_if = "Option::is_none")]
    deadline: Option<Nanos>,
    wcet: Nanos,
    #[serde(skip_serializing_if = "Option::is_none")]
    bcet: Option<Nanos>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<Nanos>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jitter: Option<Nanos>,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    critical_sections: Vec<CriticalSection>,
}

impl From<&Task> for TaskEntry {
    fn from(t: &Task) -> TaskEntry {
        let nonzero = |n: Nanos| (!n.is_zero()).then_some(n);
        TaskEntry {
            name: t.name.clone(),
            period: t.period,
            deadline: Some(t.deadline),
            wcet: t.wcet,
            bcet: t.bcet,
            offset: nonzero(t.offset),
            jitter: nonzero(t.jitter),
            priority: t.priority,
            cpu: t.cpu,
            critical_sections: t.critical_sections.clone(),
        }
    }
}

/// A problem or note with its place in a file: prints as
/// `file:line:col: message` (notes as `file:line:col: note: message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedDiagnostic {
    /// The file as the user named it (or `builtin:NAME`).
    pub origin: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// Error or note.
    pub severity: Severity,
    /// What is wrong, in one line.
    pub message: String,
}

impl fmt::Display for LocatedDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Error => "",
            Severity::Note => "note: ",
        };
        write!(
            f,
            "{}:{}:{}: {kind}{}",
            printable(&self.origin),
            self.line,
            self.column,
            printable(&self.message)
        )
    }
}

/// Why a task set could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: cannot read: {reason}")]
    Read {
        /// The path as given.
        path: String,
        /// The operating system's reason, in words.
        reason: String,
    },
    /// The text is not a well-formed task-set document.
    #[error("{0}")]
    Syntax(LocatedDiagnostic),
    /// The document parses but has the wrong shape (a field missing, a
    /// duration without a unit, ...) or breaks the model's rules. Displays
    /// the first error and how many more there are.
    #[error("{}{}", .errors[0], more_errors(.errors.len() + .unlisted))]
    Invalid {
        /// The first [`MAX_LISTED_ERRORS`] errors, in file order (never
        /// empty).
        errors: Vec<LocatedDiagnostic>,
        /// How many more errors there were, not kept (a file of 400,000
        /// duplicate keys would otherwise hold 400,000 messages).
        unlisted: usize,
    },
    /// `builtin:NAME` with an unknown name or a bad parameter.
    #[error("{0}")]
    Builtin(#[from] catalog::CatalogError),
}

fn more_errors(count: usize) -> String {
    match count {
        0 | 1 => String::new(),
        2 => " (and 1 more error)".to_string(),
        n => format!(" (and {} more errors)", thousands(n - 1)),
    }
}

/// Errors of one file kept and listed at most; the rest are counted
/// ([`LoadError::Invalid`]'s `unlisted`).
pub const MAX_LISTED_ERRORS: usize = 100;

impl LoadError {
    /// [`LoadError::Invalid`] of `errors` (not empty), keeping the first
    /// [`MAX_LISTED_ERRORS`] and counting the rest.
    pub(crate) fn invalid(mut errors: Vec<LocatedDiagnostic>) -> LoadError {
        let unlisted = errors.len().saturating_sub(MAX_LISTED_ERRORS);
        errors.truncate(MAX_LISTED_ERRORS);
        errors.shrink_to_fit();
        LoadError::Invalid { errors, unlisted }
    }
}

/// `n` with a comma every three digits: `399,990`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A loaded, valid task set with the notes its validation produced.
#[derive(Debug, Clone)]
pub struct LoadedTaskSet {
    /// The task set.
    pub set: TaskSet,
    /// Its modes (`[[mode]]`), in time order; empty for most sets. See
    /// [`crate::phase::Mode`].
    pub modes: Vec<crate::phase::Mode>,
    /// Accepted-but-reported findings (e.g. arbitrary deadlines).
    pub notes: Vec<LocatedDiagnostic>,
    /// Where it came from: the path as given, or `builtin:NAME`.
    pub origin: String,
    /// The text of a TOML or JSON task-set file, kept to place findings
    /// made after loading ([`LoadedTaskSet::place`]).
    pub source: Option<std::sync::Arc<SourceText>>,
}

/// The text a task set was read from, and its format.
#[derive(Debug)]
pub struct SourceText {
    /// The whole file.
    pub text: String,
    /// How it is encoded.
    pub format: Format,
}

impl LoadedTaskSet {
    /// `diagnostics` about this set that a later step found (a locking
    /// protocol's rules, say) placed at `file:line:col` of the field each
    /// names. A set not read from a TOML or JSON task-set file (a built-in,
    /// a SimSo or rt-app file) places them at 1:1.
    pub fn place(&self, diagnostics: Vec<crate::task::Diagnostic>) -> Vec<LocatedDiagnostic> {
        let parsed = self
            .source
            .as_ref()
            .and_then(|s| Some((s, document::parse(&s.text, s.format).ok()?)));
        match parsed {
            Some((source, root)) => located(
                &self.origin,
                &source.text,
                placed(&self.origin, &source.text, diagnostics, |path| {
                    offset_of(&root, path)
                }),
            ),
            None => diagnostics
                .into_iter()
                .map(|d| LocatedDiagnostic {
                    origin: self.origin.clone(),
                    line: 1,
                    column: 1,
                    severity: d.severity,
                    message: d.message,
                })
                .collect(),
        }
    }
}

/// Loads a task set from a path (`.json` is JSON, an XML document a SimSo
/// configuration, anything else TOML) or from the catalog (`builtin:NAME`, see [`catalog`]).
pub fn load(spec: &str) -> Result<LoadedTaskSet, LoadError> {
    if let Some(name) = spec.strip_prefix(BUILTIN_PREFIX) {
        let set = catalog::build(name)?;
        let notes = set
            .validate()
            .into_iter()
            .map(|d| LocatedDiagnostic {
                origin: spec.to_string(),
                line: 1,
                column: 1,
                severity: d.severity,
                message: d.message,
            })
            .collect();
        return Ok(LoadedTaskSet {
            set,
            modes: Vec::new(),
            notes,
            origin: spec.to_string(),
            source: None,
        });
    }
    let path = Path::new(spec);
    let text = read_text(path).map_err(|reason| LoadError::Read {
        path: spec.to_string(),
        reason,
    })?;
    let default_name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("taskset");
    parse_foreign(&text, spec, default_name)
        .unwrap_or_else(|| parse_str(&text, Format::from_path(path), spec, default_name))
}

/// Task sets written for another tool, recognised by their content rather
/// than their name: a SimSo configuration (XML, see [`crate::simso`]).
/// `None` when the text is not in a foreign format.
fn parse_foreign(
    text: &str,
    spec: &str,
    default_name: &str,
) -> Option<Result<LoadedTaskSet, LoadError>> {
    if crate::simso::looks_like_xml(text) {
        return Some(crate::simso::parse_str(text, spec, default_name));
    }
    None
}

/// Largest task-set or overheads file rtlab reads: 8 MiB, about 100,000
/// tasks in TOML as rtlab writes them (75,000 in its pretty-printed JSON).
/// Parsing TOML takes up to about 80 times the file's size in memory, so
/// this keeps a load under about 650 MB.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// A named pipe (Unix; elsewhere, as on Windows, there are none to open by path).
#[cfg(unix)]
fn is_fifo(file_type: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    file_type.is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::FileType) -> bool {
    false
}

/// The whole text of `path`, at most [`MAX_FILE_BYTES`]: a larger file (or a
/// device or pipe that never ends) is refused once that much has been read,
/// never read into memory whole. The error is the reason, in words.
///
/// A named pipe (FIFO) is refused before it is opened: opening one blocks
/// until something writes to it, which may be never. A pipe that is
/// already open (`<(command)`, `/dev/stdin`: a path under `/dev/fd`,
/// `/proc/self/fd` or `/dev/std*`) is read as usual.
pub fn read_text(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let already_open = ["/dev/fd/", "/proc/self/fd/", "/dev/std"]
        .iter()
        .any(|p| path.to_string_lossy().starts_with(p));
    let is_fifo = std::fs::metadata(path).is_ok_and(|m| is_fifo(&m.file_type()));
    if is_fifo && !already_open {
        return Err(
            "a named pipe (FIFO), not a regular file: opening it would block until something writes to it; \
             copy it to a file first"
                .to_string(),
        );
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => "the file is not UTF-8 text".to_string(),
            _ => e.to_string(),
        })?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "larger than the limit of {} MiB for task-set and overheads files",
            MAX_FILE_BYTES >> 20
        ));
    }
    Ok(text)
}

/// Parses and validates a task-set document. `origin` names it in messages;
/// `default_name` is used when the document has no `name`.
pub fn parse_str(
    text: &str,
    format: Format,
    origin: &str,
    default_name: &str,
) -> Result<LoadedTaskSet, LoadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if format == Format::Json {
        // rt-app workloads are told by their content (a `tasks` object),
        // read as json-c reads them (trailing commas allowed).
        if let Ok(root) = document::parse_json_c(text) {
            if rtapp::is_rtapp(&root) {
                return parse_rtapp(text, &root, origin, default_name);
            }
        }
    }
    let root = document::parse(text, format).map_err(|e| {
        let (line, column) = line_column(text, e.offset);
        LoadError::Syntax(LocatedDiagnostic {
            origin: origin.to_string(),
            line,
            column,
            severity: Severity::Error,
            message: printable(&e.message).into_owned(),
        })
    })?;
    let decoded = decode::task_set(&root, format).map_err(|(problems, partial)| {
        let mut all: Vec<(usize, String)> = problems
            .into_iter()
            .map(|p| (p.offset, p.message))
            .collect();
        all.extend(partial.map_or_else(Vec::new, |p| task_errors(&root, *p)));
        refused(origin, text, all.into_iter())
    })?;
    let modes_written = decoded.modes;
    let set = TaskSet {
        name: decoded.name.unwrap_or_else(|| default_name.to_string()),
        tasks: decoded.tasks,
        platform: decoded.platform,
    };
    let mut diagnostics = placed(origin, text, set.validate(), |path| offset_of(&root, path));
    let modes = resolve_modes(&set, &modes_written, &mut diagnostics);
    let mut loaded = loaded_or_refused(set, origin, text, diagnostics)?;
    loaded.modes = modes;
    loaded.source = Some(std::sync::Arc::new(SourceText {
        text: text.to_string(),
        format,
    }));
    Ok(loaded)
}

/// The modes with their task names resolved to indices; an empty or
/// repeated mode name, an unknown task name, a task named twice, or a mode
/// that does not start after the previous one is an error placed at the
/// name or the start.
fn resolve_modes(
    set: &TaskSet,
    written: &[decode::ModeEntry],
    diagnostics: &mut Vec<(usize, Severity, String)>,
) -> Vec<crate::phase::Mode> {
    let mut modes = Vec::with_capacity(written.len());
    let mut previous: Option<&decode::ModeEntry> = None;
    for (k, m) in written.iter().enumerate() {
        let who = printable(&m.name);
        if m.name.is_empty() {
            diagnostics.push((
                m.name_offset,
                Severity::Error,
                "a mode's `name` is empty: give each mode a name".to_string(),
            ));
        } else if let Some(first) = written[..k].iter().find(|e| e.name == m.name) {
            diagnostics.push((
                m.name_offset,
                Severity::Error,
                format!(
                    "mode `{who}` is named twice (also the mode starting at {}): give each mode its own name",
                    first.start
                ),
            ));
        }
        if let Some(p) = previous.filter(|p| p.start >= m.start) {
            diagnostics.push((
                m.start_offset,
                Severity::Error,
                format!(
                    "mode `{who}` starts at {}, not after mode `{}` ({}): list modes in time order",
                    m.start,
                    printable(&p.name),
                    p.start
                ),
            ));
        }
        previous = Some(m);
        let mut tasks = Vec::with_capacity(m.tasks.len());
        for (name, offset) in &m.tasks {
            match set.tasks.iter().position(|t| &t.name == name) {
                Some(i) if tasks.contains(&i) => diagnostics.push((
                    *offset,
                    Severity::Error,
                    format!("mode `{who}` names task `{}` twice", printable(name)),
                )),
                Some(i) => tasks.push(i),
                None => diagnostics.push((
                    *offset,
                    Severity::Error,
                    format!(
                        "mode `{who}` names task `{}`, which the set does not have",
                        printable(name)
                    ),
                )),
            }
        }
        modes.push(crate::phase::Mode {
            name: m.name.clone(),
            start: m.start,
            tasks,
        });
    }
    modes
}

/// The errors of the tasks that decoded in a document with shape problems
/// (`wcet exceeds deadline` of one task is reported with another task's
/// `wcet = "3msec"`), placed at their fields. Set-wide checks (names,
/// count) wait for a document whose every task decodes.
fn task_errors(root: &Node, partial: decode::Decoded) -> Vec<(usize, String)> {
    let platform_decoded = partial.platform_decoded;
    let set = TaskSet {
        name: String::new(),
        tasks: partial.tasks,
        platform: partial.platform,
    };
    set.validate()
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        // Only the tasks' own fields; a task's `cpu` checked against the
        // platform only when `processors` and `clusters` decoded (with
        // `processors = -2`, which decodes as 1 processor, every `cpu` 1
        // would look out of range).
        .filter(|d| {
            d.path.0.first() == Some(&PathSegment::Key("task"))
                && (platform_decoded || !d.path.0.contains(&PathSegment::Key("cpu")))
        })
        .filter_map(|d| {
            let mut path = d.path.clone();
            match path.0.get_mut(1) {
                Some(PathSegment::Index(i)) => *i = *partial.indices.get(*i)?,
                _ => return None,
            }
            Some((offset_of(root, &path), d.message))
        })
        .collect()
}

/// The shape problems of a document, as errors placed in `text`.
fn refused(origin: &str, text: &str, problems: impl Iterator<Item = (usize, String)>) -> LoadError {
    LoadError::invalid(located(
        origin,
        text,
        problems.map(|(offset, message)| (offset, Severity::Error, message)),
    ))
}

/// The set with its notes, or every error, each placed in `text`.
fn loaded_or_refused(
    set: TaskSet,
    origin: &str,
    text: &str,
    diagnostics: impl IntoIterator<Item = (usize, Severity, String)>,
) -> Result<LoadedTaskSet, LoadError> {
    let (errors, notes): (Vec<_>, Vec<_>) = located(origin, text, diagnostics)
        .into_iter()
        .partition(|d| d.severity == Severity::Error);
    if !errors.is_empty() {
        return Err(LoadError::invalid(errors));
    }
    Ok(LoadedTaskSet {
        set,
        modes: Vec::new(),
        notes,
        origin: origin.to_string(),
        source: None,
    })
}

/// True when `text` is an rt-app workload (a JSON object with a `tasks`
/// object and no `task` array), which [`parse_str`] reads as one.
pub fn is_rtapp_workload(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    document::parse_json_c(text).is_ok_and(|root| rtapp::is_rtapp(&root))
}

/// An rt-app workload (see [`rtapp`]) as a task set: refusals and the
/// model's errors placed in the rt-app file, notes kept.
fn parse_rtapp(
    text: &str,
    root: &Node,
    origin: &str,
    default_name: &str,
) -> Result<LoadedTaskSet, LoadError> {
    let imported = rtapp::decode(root).map_err(|problems| {
        refused(
            origin,
            text,
            problems.into_iter().map(|p| (p.offset, p.message)),
        )
    })?;
    let set = TaskSet::new(default_name, imported.tasks.clone())
        .on_platform(crate::platform::Platform::new(imported.processors));
    let diagnostics = placed(origin, text, set.validate(), |path| {
        imported.offset_of(path)
    })
    .into_iter()
    .chain(
        imported
            .notes
            .iter()
            .map(|n| (n.offset, Severity::Note, n.message.clone())),
    );
    loaded_or_refused(set, origin, text, diagnostics)
}

/// The task set as a TOML document in the file format (deterministic).
pub fn to_toml_string(set: &TaskSet) -> String {
    toml::to_string(&document_of(set)).expect("a task set always serializes to TOML")
}

/// The task set as a JSON document in the file format (deterministic).
pub fn to_json_string(set: &TaskSet) -> String {
    serde_json::to_string_pretty(&document_of(set)).expect("a task set always serializes to JSON")
}

fn document_of(set: &TaskSet) -> TaskSetDocument {
    TaskSetDocument {
        name: Some(set.name.clone()),
        processors: (set.platform.processors != 1).then_some(set.platform.processors),
        clusters: set.platform.clusters.clone(),
        task: set.tasks.iter().map(TaskEntry::from).collect(),
    }
}

/// `diagnostics` at their byte offsets in `text` (`offset` finds a field),
/// each message about a second field ([`crate::task::Diagnostic::related`])
/// ending with that field's place, `(the other: set.toml:2:8)`. The related
/// places are found in one pass over `text`, however many there are.
pub(crate) fn placed(
    origin: &str,
    text: &str,
    diagnostics: Vec<crate::task::Diagnostic>,
    offset: impl Fn(&FieldPath) -> usize,
) -> Vec<(usize, Severity, String)> {
    let related: Vec<(usize, Severity, String)> = diagnostics
        .iter()
        .filter_map(|d| Some((offset(d.related.as_ref()?), d.severity, String::new())))
        .collect();
    let mut places = located(origin, text, related).into_iter();
    diagnostics
        .into_iter()
        .map(|d| {
            let mut message = d.message;
            if d.related.is_some() {
                if let Some(place) = places.next() {
                    message.push_str(&format!(
                        " (the other: {}:{}:{})",
                        origin, place.line, place.column
                    ));
                }
            }
            (offset(&d.path), d.severity, message)
        })
        .collect()
}

/// 1-based line and character column of a byte offset into `text` (shared
/// by every file format rtlab reads, so all errors point the same way).
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Places messages at their byte offsets, in the order given. The text is
/// scanned once (offsets are visited in increasing order), so a file with
/// many problems costs no more than one pass over it.
pub(crate) fn located(
    origin: &str,
    text: &str,
    items: impl IntoIterator<Item = (usize, Severity, String)>,
) -> Vec<LocatedDiagnostic> {
    let items: Vec<_> = items.into_iter().collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| items[i].0);
    let mut places = vec![(1, 1); items.len()];
    let mut cursor = LineCursor::default();
    for i in order {
        places[i] = cursor.advance_to(text, items[i].0);
    }
    items
        .into_iter()
        .zip(places)
        .map(
            |((_, severity, message), (line, column))| LocatedDiagnostic {
                origin: origin.to_string(),
                line,
                column,
                severity,
                message,
            },
        )
        .collect()
}

/// Line and column of increasing byte offsets, counted incrementally.
#[derive(Default)]
struct LineCursor {
    offset: usize,
    line: usize,
    column: usize,
}

impl LineCursor {
    fn advance_to(&mut self, text: &str, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        for c in text[self.offset.min(offset)..offset].chars() {
            if c == '\n' {
                self.line += 1;
                self.column = 0;
            } else {
                self.column += 1;
            }
        }
        self.offset = self.offset.max(offset);
        (self.line + 1, self.column + 1)
    }
}

/// Byte offset of the deepest part of `path` present in the document (a
/// defaulted field points at its task's table).
fn offset_of(root: &Node, path: &FieldPath) -> usize {
    let mut node = root;
    let mut best = root.offset;
    for segment in &path.0 {
        let next = match segment {
            PathSegment::Key(key) => node.get(key),
            PathSegment::Index(i) => node.at(*i),
        };
        match next {
            Some(n) => {
                node = n;
                best = n.offset;
            }
            None => break,
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml_err(text: &str) -> String {
        parse_str(text, Format::Toml, "set.toml", "set")
            .unwrap_err()
            .to_string()
    }

    fn json_err(text: &str) -> String {
        parse_str(text, Format::Json, "set.json", "set")
            .unwrap_err()
            .to_string()
    }

    const GOOD: &str = r#"
name = "demo"
[[task]]
name = "t1"
period = "25ms"
deadline = "23ms"
wcet = "3ms"
offset = "1ms"
priority = 2

[[task]]
name = "t2"
period = "50ms"
wcet = "40ms"
[[task.critical_sections]]
resource = "bus"
start = "1ms"
length = "500us"
"#;

    #[test]
    fn reads_the_design_example() {
        let loaded = parse_str(GOOD, Format::Toml, "x.toml", "x").unwrap();
        let set = loaded.set;
        assert_eq!(set.name, "demo");
        assert_eq!(set.tasks.len(), 2);
        let t1 = &set.tasks[0];
        assert_eq!(t1.deadline, Nanos::from_ms(23));
        assert_eq!(t1.offset, Nanos::from_ms(1));
        assert_eq!(t1.priority, Some(2));
        let t2 = &set.tasks[1];
        assert_eq!(t2.deadline, t2.period, "deadline defaults to period");
        assert_eq!(t2.critical_sections[0].length, Nanos::from_us(500));
        assert!(loaded.notes.is_empty());
    }

    #[test]
    fn toml_and_json_round_trip() {
        let set = parse_str(GOOD, Format::Toml, "x.toml", "x").unwrap().set;
        let again = parse_str(&to_toml_string(&set), Format::Toml, "y", "y")
            .unwrap()
            .set;
        assert_eq!(set, again);
        let json = parse_str(&to_json_string(&set), Format::Json, "z", "z")
            .unwrap()
            .set;
        assert_eq!(set, json);
    }

    #[test]
    fn name_defaults_to_the_file_stem() {
        let text = "[[task]]\nname = \"a\"\nperiod = \"1ms\"\nwcet = \"1us\"\n";
        let loaded = parse_str(text, Format::Toml, "dir/mine.toml", "mine").unwrap();
        assert_eq!(loaded.set.name, "mine");
    }

    #[test]
    fn arbitrary_deadline_is_reported_with_its_place() {
        let text =
            "[[task]]\nname = \"a\"\nperiod = \"10ms\"\ndeadline = \"15ms\"\nwcet = \"1ms\"\n";
        let loaded = parse_str(text, Format::Toml, "d.toml", "d").unwrap();
        assert_eq!(
            loaded.notes[0].to_string(),
            "d.toml:4:12: note: task `a`: deadline 15ms is longer than period 10ms (arbitrary deadline: jobs may overlap)"
        );
    }

    // Malformed files, each with its exact one-line message.

    #[test]
    fn unknown_field() {
        assert_eq!(
            toml_err("[[task]]\nname = \"a\"\nperod = \"10ms\"\nwcet = \"1ms\"\n"),
            "set.toml:3:1: unknown field `perod`, expected one of `name`, `period`, `deadline`, `wcet`, `bcet`, `offset`, `jitter`, `priority`, `cpu`, `critical_sections` (and 1 more error)"
        );
    }

    #[test]
    fn bad_unit() {
        assert_eq!(
            toml_err("[[task]]\nname = \"a\"\nperiod = \"10xs\"\nwcet = \"1ms\"\n"),
            "set.toml:3:10: invalid duration `10xs`: unknown unit `xs` (use ns, us, ms or s)"
        );
    }

    #[test]
    fn negative_period() {
        assert_eq!(
            toml_err("[[task]]\nname = \"a\"\nperiod = \"-10ms\"\nwcet = \"1ms\"\n"),
            "set.toml:3:10: invalid duration `-10ms`: durations cannot be negative"
        );
    }

    #[test]
    fn number_without_unit() {
        assert_eq!(
            toml_err("[[task]]\nname = \"a\"\nperiod = 10\nwcet = \"1ms\"\n"),
            "set.toml:3:10: `period`: a duration needs a unit, e.g. \"10ms\" (10 as nanoseconds is \"10ns\")"
        );
    }

    #[test]
    fn missing_wcet() {
        assert_eq!(
            toml_err("[[task]]\nname = \"a\"\nperiod = \"10ms\"\n"),
            "set.toml:1:1: task `a`: missing field `wcet`"
        );
    }

    #[test]
    fn zero_period() {
        assert_eq!(
            toml_err(
                "[[task]]\nname = \"a\"\nperiod = \"0ms\"\ndeadline = \"5ms\"\nwcet = \"1ms\"\n"
            ),
            "set.toml:3:10: task `a`: period must be greater than 0"
        );
    }

    #[test]
    fn wcet_above_deadline() {
        assert_eq!(
            toml_err(
                "name = \"x\"\n[[task]]\nname = \"a\"\nperiod = \"25ms\"\ndeadline = \"20ms\"\nwcet = \"21ms\"\n"
            ),
            "set.toml:6:8: task `a`: wcet 21ms exceeds deadline 20ms: no job can meet it"
        );
    }

    #[test]
    fn wcet_above_defaulted_deadline_points_at_wcet() {
        assert_eq!(
            toml_err("[[task]]\nname = \"a\"\nperiod = \"2ms\"\nwcet = \"3ms\"\n"),
            "set.toml:4:8: task `a`: wcet 3ms exceeds deadline 2ms: no job can meet it"
        );
    }

    #[test]
    fn duplicate_names_count_further_errors() {
        let text = "[[task]]\nname = \"a\"\nperiod = \"2ms\"\nwcet = \"1ms\"\n\
                    [[task]]\nname = \"a\"\nperiod = \"2ms\"\nwcet = \"0ms\"\n";
        assert_eq!(
            toml_err(text),
            "set.toml:6:8: task `a`: duplicate task name (and 1 more error)"
        );
    }

    #[test]
    fn findings_after_loading_are_placed_at_their_field() {
        let text = "processors = 2\n[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"2ms\"\ncpu = 0\n\
                    critical_sections = [{ resource = \"bus\", start = \"0ms\", length = \"1ms\" }]\n\
                    [[task]]\nname = \"b\"\nperiod = \"10ms\"\nwcet = \"2ms\"\ncpu = 1\n\
                    critical_sections = [{ resource = \"bus\", start = \"0ms\", length = \"1ms\" }]\n";
        let loaded = parse_str(text, Format::Toml, "set.toml", "set").unwrap();
        let found = crate::mp_locking::check_uniprocessor(&loaded.set, &[0, 1], "ipcp");
        let placed = loaded.place(found);
        assert_eq!(placed.len(), 1);
        assert!(
            placed[0]
                .to_string()
                .starts_with("set.toml:13:35: task `b`: resource `bus` is also used on cpu 0"),
            "{}",
            placed[0]
        );
    }

    #[test]
    fn critical_section_outside_the_job() {
        let text = "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"2ms\"\n\
                    critical_sections = [{ resource = \"bus\", start = \"1ms\", length = \"2ms\" }]\n";
        assert_eq!(
            toml_err(text),
            "set.toml:5:66: task `a`: critical section on `bus` ends at 3ms of execution, after the job's wcet 2ms"
        );
    }

    #[test]
    fn toml_syntax_error() {
        assert_eq!(
            toml_err("[[task]\nname = \"a\"\n"),
            "set.toml:1:8: unclosed array table, expected `]`"
        );
    }

    #[test]
    fn no_tasks() {
        assert_eq!(
            toml_err("name = \"empty\"\n"),
            "set.toml:1:1: the task set has no tasks (add a [[task]] table)"
        );
    }

    #[test]
    fn negative_priority() {
        assert_eq!(
            toml_err("[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"1ms\"\npriority = -1\n"),
            "set.toml:5:12: `priority` must be a whole number from 0 to 4294967295, not -1"
        );
    }

    #[test]
    fn json_unknown_field() {
        assert_eq!(
            json_err("{\"task\": [{\"name\": \"a\", \"period\": \"1ms\", \"wcet\": \"1us\", \"prio\": 1}]}"),
            "set.json:1:57: unknown field `prio`, expected one of `name`, `period`, `deadline`, `wcet`, `bcet`, `offset`, `jitter`, `priority`, `cpu`, `critical_sections`"
        );
    }

    #[test]
    fn json_validation_error_points_at_the_field() {
        let text = "{\n  \"task\": [\n    {\"name\": \"a\", \"period\": \"1ms\",\n     \"wcet\": \"2ms\"}\n  ]\n}";
        assert_eq!(
            json_err(text),
            "set.json:4:14: task `a`: wcet 2ms exceeds deadline 1ms: no job can meet it"
        );
    }

    #[test]
    fn json_syntax_error() {
        assert_eq!(
            json_err("{\"task\": [}"),
            "set.json:1:11: unexpected close brace"
        );
        assert_eq!(
            json_err("{\"task\": [],}"),
            "set.json:1:12: trailing commas are not allowed"
        );
    }

    #[test]
    fn a_missing_field_points_at_its_task() {
        let text = "[[task]]\nname = \"a\"\nperiod = \"2ms\"\nwcet = \"1ms\"\n\n[[task]]\nname = \"b\"\nwcet = \"1ms\"\n";
        assert_eq!(
            toml_err(text),
            "set.toml:6:1: task `b`: missing field `period`"
        );
        assert_eq!(
            json_err("{\"task\": [\n  {\"period\": \"1ms\", \"wcet\": \"1us\"}]}"),
            "set.json:2:3: task #1: missing field `name`"
        );
    }

    #[test]
    fn json_may_start_with_a_bom_and_hold_comments() {
        let text = "\u{feff}// generated\n{\"task\": [ /* the only one */\n {\"name\": \"a\", \"period\": \"2ms\", \"wcet\": \"3ms\"}]}";
        // Positions count from after the mark: the error is on line 3.
        assert_eq!(
            json_err(text),
            "set.json:3:41: task `a`: wcet 3ms exceeds deadline 2ms: no job can meet it"
        );
        let ok = text.replace("\"3ms\"", "\"1ms\"");
        assert_eq!(
            parse_str(&ok, Format::Json, "f", "f").unwrap().set.tasks[0].wcet,
            Nanos::from_ms(1)
        );
        let toml = format!("\u{feff}{GOOD}");
        assert!(parse_str(&toml, Format::Toml, "f", "f").is_ok());
    }

    /// `taskset validate` lists every problem the parser can recover from:
    /// a task's bad unit does not hide another task's semantic error, and a
    /// misspelt `[[tasks]]` does not hide a misspelt field inside it.
    #[test]
    fn shape_problems_do_not_hide_other_tasks_errors_or_fields_under_a_misspelt_table() {
        let text = "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"3msec\"\n\n\
                    [[task]]\nname = \"b\"\nperiod = \"10ms\"\ndeadline = \"2ms\"\nwcet = \"5ms\"\n";
        let all = |text: &str| match parse_str(text, Format::Toml, "set.toml", "set") {
            Err(LoadError::Invalid { errors, .. }) => errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            other => panic!("{other:?}"),
        };
        let err = all(text);
        assert!(
            err.contains("set.toml:4:8: invalid duration `3msec`"),
            "{err}"
        );
        assert!(
            err.contains("set.toml:10:8: task `b`: wcet 5ms exceeds deadline 2ms"),
            "{err}"
        );
        let err = all("[[tasks]]\nname = \"a\"\nperod = \"10ms\"\nwcet = \"3ms\"\n");
        assert!(
            err.contains("unknown field `tasks`") && err.contains("[[task]]"),
            "{err}"
        );
        assert!(err.contains("set.toml:3:1: unknown field `perod`"), "{err}");
        // Beside well-spelt [[task]] tables too (issue 36): the fields of
        // the misspelt table are still reported, at their own lines.
        let err = all(
            "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"2ms\"\n\n\
                       [[tasks]]\nname = \"b\"\nperod = \"10ms\"\nwcet = \"20xs\"\n",
        );
        assert!(err.contains("set.toml:6:3: unknown field `tasks`"), "{err}");
        assert!(err.contains("set.toml:8:1: unknown field `perod`"), "{err}");
        assert!(
            err.contains("set.toml:9:8: invalid duration `20xs`"),
            "{err}"
        );
    }

    /// Issue 39: what files could say and was accepted: `clusters = []`,
    /// an empty or repeated mode name; and a task's `cpu` out of range hidden
    /// behind another task's unreadable `cpu`.
    #[test]
    fn empty_clusters_unnamed_or_repeated_modes_and_every_bad_cpu_are_refused() {
        let all = |text: &str| match parse_str(text, Format::Toml, "set.toml", "set") {
            Err(LoadError::Invalid { errors, .. }) => {
                errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
            }
            other => panic!("{other:?}"),
        };
        let task = "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n";
        assert_eq!(
            all(&format!("processors = 2\nclusters = []\n{task}")),
            ["set.toml:2:12: `clusters` is empty: it names no cluster; leave it out for one cluster of every processor, or list them, e.g. [[0, 1], [2, 3]]"]
        );
        let mode = |name: &str, start: &str| {
            format!("[[mode]]\nname = \"{name}\"\nstart = \"{start}\"\ntasks = [\"a\"]\n")
        };
        assert_eq!(
            all(&format!("{task}{}{}", mode("m", "0ms"), mode("m", "5ms"))),
            ["set.toml:10:8: mode `m` is named twice (also the mode starting at 0ns): give each mode its own name"]
        );
        assert_eq!(
            all(&format!("{task}{}", mode("", "0ms"))),
            ["set.toml:6:8: a mode's `name` is empty: give each mode a name"]
        );
        let cpus = "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"1ms\"\ncpu = \"x\"\n\
                    [[task]]\nname = \"b\"\nperiod = \"10ms\"\nwcet = \"1ms\"\ncpu = 7\n";
        assert_eq!(
            all(cpus),
            [
                "set.toml:5:7: `cpu` must be a processor number (0, 1, ...), not the string \"x\"",
                "set.toml:10:7: task `b`: cpu 7 does not exist (processors = 1 numbers its one processor 0)"
            ]
        );
        // With `processors` unreadable, a `cpu` is not judged against it.
        let unreadable = format!("processors = -2\n{}", cpus.replace("cpu = 7", "cpu = 1"));
        assert_eq!(all(&unreadable).len(), 2, "{:?}", all(&unreadable));
    }

    #[test]
    fn every_shape_problem_is_reported_at_once() {
        let text = "[[task]]\nname = 1\nperiod = 5\nwcet = true\n[[task]]\nname = \"b\"\nperiod = \"1ms\"\nwcet = \"1us\"\ncritical_sections = 3\n";
        let Err(LoadError::Invalid { errors, .. }) = parse_str(text, Format::Toml, "s", "s") else {
            panic!("not refused");
        };
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            lines,
            [
                "s:2:8: `name` must be a string, not 1",
                "s:3:10: `period`: a duration needs a unit, e.g. \"10ms\" (5 as nanoseconds is \"5ns\")",
                "s:4:8: `wcet` must be a duration with a unit like \"10ms\", not true",
                "s:9:21: `critical_sections` must be an array of tables (write each as [[task.critical_sections]]), not 3",
            ]
        );
    }

    /// Words that belong to Rust, not to task-set files.
    const RUST_WORDS: [&str; 14] = [
        "struct ",
        "TaskEntry",
        "TaskSetDocument",
        "CriticalSection",
        "u32",
        "u64",
        "i64",
        "i128",
        "u128",
        "usize",
        "Nanos",
        "sequence",
        "map",
        "Option",
    ];

    /// Malformed shapes of every field, in both formats: each is refused
    /// with one line in the file's words.
    #[test]
    fn shape_errors_never_name_rust_types() {
        let values = [
            "1",
            "-1",
            "1.5",
            "1e40",
            "99999999999999999999999999",
            "true",
            "\"x\"",
            "\"\"",
            "[]",
            "[1, 2]",
            "[[1]]",
            "{}",
            "{\"a\": 1}",
            "null",
            "\"-5ms\"",
            "\"10\"",
            "\"1.0000000001s\"",
            "\"99999999999s\"",
        ];
        let fields = decode::TASK_FIELDS.iter().chain(&["unknown"]);
        let mut json_docs = vec![
            "1".to_string(), "[]".into(), "[1]".into(), "\"task\"".into(), "null".into(),
            "{\"task\": 1}".into(), "{\"task\": {}}".into(), "{\"task\": [1]}".into(),
            "{\"task\": [[\"a\", \"1ms\", \"1ms\", \"1ms\", \"1ms\", \"1ms\", \"1ms\", 1, []]]}".into(),
            "{\"name\": 5, \"task\": []}".into(), "{\"task\": [{}]}".into(),
            "{\"task\": [{\"name\": \"a\", \"name\": \"b\", \"period\": \"1ms\", \"wcet\": \"1us\"}]}".into(),
        ];
        let base = "\"name\": \"a\", \"period\": \"10ms\", \"wcet\": \"1ms\"";
        for field in fields {
            for value in values {
                json_docs.push(format!("{{\"task\": [{{{base}, \"{field}\": {value}}}]}}"));
            }
        }
        for value in values {
            for cs_field in ["resource", "start", "length", "other"] {
                json_docs.push(format!(
                    "{{\"task\": [{{{base}, \"critical_sections\": [{{\"resource\": \"r\", \"start\": \"0\", \"length\": \"1us\", \"{cs_field}\": {value}}}]}}]}}"
                ));
            }
            json_docs.push(format!(
                "{{\"task\": [{{{base}, \"critical_sections\": [{value}]}}]}}"
            ));
        }
        let mut checked = 0;
        for doc in &json_docs {
            for (text, format) in [
                (Some(doc.clone()), Format::Json),
                (json_to_toml_shape(doc), Format::Toml),
            ] {
                let Some(text) = text else { continue };
                let message = match parse_str(&text, format, "f", "f") {
                    Ok(_) => continue,
                    Err(e) => e.to_string(),
                };
                checked += 1;
                assert!(!message.contains('\n'), "{text}: {message}");
                for word in RUST_WORDS {
                    assert!(
                        !message.contains(word),
                        "{format:?} {text}: `{word}` in {message}"
                    );
                }
            }
        }
        assert!(checked > 300, "only {checked} refusals checked");
    }

    /// The TOML form of a one-line JSON object document, when TOML can say
    /// it: `"key": value` becomes `"key" = value` (inline tables and arrays
    /// inside), top-level pairs one per line. TOML has no null.
    fn json_to_toml_shape(json: &str) -> Option<String> {
        let body = json.strip_prefix('{')?.strip_suffix('}')?;
        if json.contains("null") {
            return None;
        }
        let mut out = String::new();
        let mut depth = 0;
        let mut in_string = false;
        for c in body.chars() {
            match c {
                '"' => in_string = !in_string,
                _ if in_string => {}
                ':' => {
                    out.push_str(" =");
                    continue;
                }
                '{' | '[' => depth += 1,
                '}' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    out.push('\n');
                    continue;
                }
                _ => {}
            }
            out.push(c);
        }
        Some(out)
    }

    #[test]
    fn unreadable_file_names_the_path() {
        let err = load("/nonexistent/rtlab/x.toml").unwrap_err().to_string();
        assert!(
            err.starts_with("/nonexistent/rtlab/x.toml: cannot read: "),
            "{err}"
        );
    }

    proptest::proptest! {
        /// No input makes the loader panic: arbitrary text, and valid files
        /// with a random slice replaced by random text.
        #[test]
        fn never_panics_on_arbitrary_text(text in "\\PC{0,300}") {
            let _ = parse_str(&text, Format::Toml, "f", "f");
            let _ = parse_str(&text, Format::Json, "f", "f");
        }

        #[test]
        fn never_panics_on_mutated_files(
            at in 0usize..400,
            cut in 0usize..20,
            insert in "[\\[\\]{}\",=.0-9a-z\\- \n]{0,12}",
        ) {
            let set = parse_str(GOOD, Format::Toml, "x", "x").unwrap().set;
            for (text, format) in [(GOOD.to_string(), Format::Toml), (to_json_string(&set), Format::Json)] {
                let mut bytes = text.into_bytes();
                let start = at.min(bytes.len());
                let end = (start + cut).min(bytes.len());
                bytes.splice(start..end, insert.bytes());
                if let Ok(mutated) = String::from_utf8(bytes) {
                    match parse_str(&mutated, format, "m", "m") {
                        Ok(loaded) => proptest::prop_assert!(loaded.set.errors().is_empty()),
                        Err(e) => proptest::prop_assert!(!e.to_string().contains('\n'), "{}", e),
                    }
                }
            }
        }
    }

    const PLATFORM: &str = "name = \"p\"\nprocessors = 4\nclusters = [[0, 1], [2, 3]]\n\
        [[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"2ms\"\ncpu = 3\n\
        [[task]]\nname = \"b\"\nperiod = \"10ms\"\nwcet = \"2ms\"\n";

    #[test]
    fn platform_fields_are_read_and_written_back() {
        let set = parse_str(PLATFORM, Format::Toml, "p.toml", "p")
            .unwrap()
            .set;
        assert_eq!(set.platform.processors, 4);
        assert_eq!(set.platform.clusters, vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(set.tasks[0].cpu, Some(3));
        assert_eq!(set.tasks[1].cpu, None);
        let toml = to_toml_string(&set);
        assert!(
            toml.starts_with("name = \"p\"\nprocessors = 4\nclusters = [[0, 1], [2, 3]]\n"),
            "{toml}"
        );
        assert_eq!(parse_str(&toml, Format::Toml, "y", "y").unwrap().set, set);
        let json = to_json_string(&set);
        assert_eq!(parse_str(&json, Format::Json, "z", "z").unwrap().set, set);
    }

    #[test]
    fn one_processor_files_do_not_change() {
        let set = parse_str(GOOD, Format::Toml, "x.toml", "x").unwrap().set;
        assert!(set.platform.is_default());
        for text in [to_toml_string(&set), to_json_string(&set)] {
            assert!(
                !text.contains("processors") && !text.contains("cpu"),
                "{text}"
            );
        }
    }

    #[test]
    fn platform_errors_name_their_place() {
        let bad = |from: &str, to: &str| toml_err(&PLATFORM.replace(from, to));
        assert_eq!(
            bad("processors = 4", "processors = 0"),
            "set.toml:2:14: `processors` is 0: a platform needs at least 1 processor"
        );
        assert_eq!(
            bad("processors = 4", "processors = 1025"),
            "set.toml:2:14: `processors` is 1025: rtlab models at most 1024 processors"
        );
        assert_eq!(
            bad("processors = 4", "processors = -2"),
            "set.toml:2:14: `processors` must be a whole number from 1 to 1024, not -2"
        );
        assert_eq!(
            bad("[2, 3]]", "[2, 7]]"),
            "set.toml:3:25: cluster #2 names processor 7, which does not exist (processors = 4 numbers them 0 to 3) (and 1 more error)"
        );
        assert_eq!(
            bad("[2, 3]]", "[1, 2, 3]]"),
            "set.toml:3:22: processor 1 is in cluster #1 and cluster #2: clusters must not overlap"
        );
        assert_eq!(
            bad("[[0, 1], [2, 3]]", "[[0, 1]]"),
            "set.toml:3:12: processors 2, 3 are in no cluster: clusters must cover every processor (write a processor alone as a cluster of its own)"
        );
        assert_eq!(
            bad("cpu = 3", "cpu = 4"),
            "set.toml:8:7: task `a`: cpu 4 does not exist (processors = 4 numbers them 0 to 3)"
        );
        assert_eq!(
            bad("cpu = 3", "cpu = \"x\""),
            "set.toml:8:7: `cpu` must be a processor number (0, 1, ...), not the string \"x\""
        );
        assert_eq!(
            bad("[[0, 1], [2, 3]]", "[0, 1]"),
            "set.toml:3:13: `clusters` must be an array of arrays of processor numbers, e.g. [[0, 1], [2, 3]], not 0 in it (and 1 more error)"
        );
        let json = "{\"processors\": 2,\n \"task\": [{\"name\": \"a\", \"period\": \"1ms\", \"wcet\": \"1us\", \"cpu\": 2}]}";
        assert_eq!(
            json_err(json),
            "set.json:2:64: task `a`: cpu 2 does not exist (processors = 2 numbers them 0 to 1)"
        );
    }

    #[test]
    fn with_processors_overrides_and_rechecks() {
        let set = parse_str(PLATFORM, Format::Toml, "p.toml", "p")
            .unwrap()
            .set;
        let mut no_clusters = set.clone();
        no_clusters.platform.clusters.clear();
        assert_eq!(no_clusters.with_processors(8).unwrap().processors(), 8);
        assert_eq!(
            no_clusters.with_processors(2).unwrap_err().message,
            "task `a`: cpu 3 does not exist (processors = 2 numbers them 0 to 1)"
        );
        assert_eq!(
            set.with_processors(0).unwrap_err().message,
            "`processors` is 0: a platform needs at least 1 processor"
        );
        assert!(
            set.with_processors(8).is_err(),
            "clusters no longer cover 8"
        );
        assert_eq!(set.assignment(), None);
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncµd", 6), (2, 3));
        assert_eq!(line_column("", 10), (1, 1));
    }
}
