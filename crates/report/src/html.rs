//! The report: one self-contained HTML file (inline CSS and SVG, no
//! script, nothing fetched), readable on a laptop and printable. Every
//! text taken from a run (task names, command lines, host strings) is
//! HTML-escaped.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use crate::figures::{figures, Figure};
use crate::view::RunView;
use crate::{headline, human};

/// Rows a per-item table (tasks, threads, cells, sweep rows) shows at most.
pub const MAX_TABLE_ROWS: usize = 200;

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1a1a1a; background: #fff; max-width: 1000px; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; }
h2 { font-size: 1.25rem; margin: 2.2rem 0 .4rem; border-bottom: 2px solid #1f77b4; padding-bottom: .2rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .3rem; }
code, pre { font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
pre { background: #f5f5f5; padding: .6rem; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
table { border-collapse: collapse; margin: .4rem 0 1rem; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: .15rem .45rem; text-align: left; vertical-align: top; }
th { background: #eef3f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.kv th { width: 16rem; }
.scroll { overflow-x: auto; }
.meta { color: #555; }
.interrupted { color: #b00; font-weight: bold; }
figure.plot { margin: 1rem 0; }
figure.plot svg { display: block; max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 13px; margin-top: .3rem; }
p.missing { color: #777; font-style: italic; }
nav.toc ol { margin: .3rem 0 1rem; padding-left: 1.6rem; }
nav.toc li { margin: .15rem 0; }
p.host { font-size: 14px; background: #f5f7fa; border-left: 4px solid #1f77b4; padding: .4rem .7rem; margin: .4rem 0; }
.headline { background: #f8f9fb; border: 1px solid #dde3ea; border-radius: 6px; padding: .5rem .9rem; margin: .6rem 0; }
.headline p.big { font-size: 1.15rem; margin: .1rem 0 .4rem; }
.verdict.good { color: #1a6b2a; font-weight: 600; }
.verdict.bad { color: #a11; font-weight: 600; }
ul.facts { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .3rem 1.6rem; }
ul.facts li { color: #444; }
span.fact { font-size: 1.1rem; font-weight: 600; color: #1a1a1a; font-variant-numeric: tabular-nums; }
details { margin: .3rem 0; }
details > summary { cursor: pointer; font-weight: 600; margin: .3rem 0; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  h2 { break-before: page; }
  section.run:first-of-type h2 { break-before: auto; }
  figure.plot, table { break-inside: avoid; }
  details > pre { display: none; }
  nav.toc { break-after: page; }
  a { color: inherit; text-decoration: none; }
}
"#;

/// The whole report of `runs`, in the given order: a title, the host in
/// one line (the rest folded), a table of contents with each run's
/// verdict, then per run its headline, plots and detail tables.
pub fn render_html(runs: &[RunView]) -> String {
    let borrowed: Result<String, std::convert::Infallible> =
        render_html_loading(runs, |run| Ok(Cow::Borrowed(run)));
    borrowed.unwrap_or_else(|never| match never {})
}

/// The whole report of `runs`, whose job and sample rows may be left
/// empty: each run's section is drawn from `load(run)`, the run with its
/// rows, called once per run in order and dropped before the next, so the
/// report holds the rows of one run at a time (ten stored runs of a
/// million jobs each held 1.35 GB when read all at once).
pub fn render_html_loading<'a, E>(
    runs: &'a [RunView],
    mut load: impl FnMut(&'a RunView) -> Result<Cow<'a, RunView>, E>,
) -> Result<String, E> {
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<title>rtlab report: {} run{}</title>",
        runs.len(),
        plural(runs.len())
    );
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    out.push_str("<h1>rtlab report</h1>\n");
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} run{}{}</p>",
        runs.len(),
        plural(runs.len()),
        created_range(runs)
    );
    let hosts = distinct_hosts(runs);
    if hosts.len() == 1 {
        out.push_str("<h2>Host</h2>\n");
        out.push_str(&host_block(hosts[0]));
    }
    out.push_str(&contents(runs));
    for (index, run) in runs.iter().enumerate() {
        let run = load(run)?;
        out.push_str(&run_section(&run, index, hosts.len() > 1));
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

/// ` · 2026-11-26T18:33:52Z to 2026-11-26T18:40:01Z` (or one time).
fn created_range(runs: &[RunView]) -> String {
    let times: Vec<&str> = runs
        .iter()
        .map(|r| r.created.as_str())
        .filter(|c| !c.is_empty())
        .collect();
    match (times.iter().min(), times.iter().max()) {
        (Some(a), Some(b)) if a == b => format!(" · {}", escape(a)),
        (Some(a), Some(b)) => format!(" · {} to {}", escape(a), escape(b)),
        _ => String::new(),
    }
}

/// The table of contents: one line per run, linked, with its verdict.
fn contents(runs: &[RunView]) -> String {
    let mut out = String::from("<nav class=\"toc\"><h2>Contents</h2>\n<ol>\n");
    for (index, run) in runs.iter().enumerate() {
        let head = headline::of(run);
        let verdict = head
            .verdict
            .as_ref()
            .map(|v| format!(" — {}", verdict_html(v)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<li><a href=\"#run-{}\">{}</a>{verdict}</li>",
            index + 1,
            escape(&heading(run, index))
        );
    }
    out.push_str("</ol></nav>\n");
    out
}

fn verdict_html(v: &headline::Verdict) -> String {
    format!(
        "<span class=\"verdict {}\">{} {}</span>",
        if v.good { "good" } else { "bad" },
        if v.good { "✔" } else { "✘" },
        escape(&v.text)
    )
}

/// The host in one line (CPU, kernel, preemption, HZ, virtualization,
/// throttling), every recorded field folded below it.
fn host_block(host: &Value) -> String {
    format!(
        "<p class=\"host\">{}</p>\n<details><summary>All host details</summary>\n{}</details>\n",
        escape(&headline::host_line(host)),
        key_value_table(host)
    )
}

/// A run: its heading, headline, plots, then the detail tables (long ones
/// folded) and the task set.
fn run_section(run: &RunView, index: usize, with_host: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<section class=\"run\" id=\"run-{}\">\n<h2>{}</h2>",
        index + 1,
        escape(&heading(run, index))
    );
    let head = headline::of(run);
    out.push_str("<div class=\"headline\">");
    if let Some(v) = &head.verdict {
        let _ = write!(out, "<p class=\"big\">{}</p>", verdict_html(v));
    }
    if !head.facts.is_empty() {
        out.push_str("<ul class=\"facts\">");
        for (what, value) in &head.facts {
            let _ = write!(
                out,
                "<li><span class=\"fact\">{}</span> {}</li>",
                escape(value),
                escape(what)
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</div>\n");
    let status = if run.status == "complete" {
        escape(&run.status)
    } else {
        format!("<span class=\"interrupted\">{}</span>", escape(&run.status))
    };
    let when = [
        escape(&run.created),
        format!("rtlab {}", escape(&run.rtlab_version)),
        status,
    ];
    let when: Vec<&str> = when
        .iter()
        .map(String::as_str)
        .filter(|p| !p.is_empty())
        .collect();
    let _ = writeln!(
        out,
        "<p class=\"meta\"><code>{}</code><br>{}</p>",
        escape(&run.command),
        when.join(" · ")
    );
    if with_host {
        out.push_str("<h3>Host</h3>\n");
        out.push_str(&host_block(&run.host));
    }
    for figure in figures(run) {
        out.push_str(&figure_html(&figure));
    }
    // A part of the run's own account that needs more than the summary's
    // rows (a real run's disturbance account and verdict, issue 35) goes
    // here, as a `<h3>` section of its own before the details; its verdict
    // beside the headline's (`headline::of`).
    out.push_str("<h3>Details</h3>\n");
    out.push_str(&folded("Summary", &key_value_table(&run.document), 0));
    for key in ["tasks", "threads", "cells", "rows", "tests", "breakdown"] {
        if let Some(items) = run.document.get(key).and_then(Value::as_array) {
            let table = if key == "rows" && run.kind == "sweep" {
                sweep_table(items)
            } else {
                items_table(items)
            };
            out.push_str(&folded(key, &table, items.len()));
        }
    }
    if let Some(text) = &run.taskset {
        let _ = writeln!(
            out,
            "<details><summary>Task set</summary><pre>{}</pre></details>",
            escape(text)
        );
    }
    out.push_str("</section>\n");
    out
}

/// Tables of up to this many rows are shown open; longer ones are folded.
pub const OPEN_TABLE_ROWS: usize = 12;

/// `table` under a `<details>` summary naming it (open when short).
fn folded(name: &str, table: &str, rows: usize) -> String {
    if table.is_empty() {
        return String::new();
    }
    let open = if rows <= OPEN_TABLE_ROWS { " open" } else { "" };
    let count = if rows > 0 {
        format!(" ({rows} row{})", plural(rows))
    } else {
        String::new()
    };
    format!(
        "<details{open}><summary>{}{count}</summary>\n{table}</details>\n",
        escape(&human::label(name))
    )
}

/// `#ID kind — task set (policy or scheduler)`; an unsaved run (id 0, as
/// in the demo's report) is numbered by its place in the report.
fn heading(run: &RunView, index: usize) -> String {
    let text = |key: &str| run.document.get(key).and_then(Value::as_str);
    let id = if run.id > 0 { run.id } else { index as i64 + 1 };
    let mut out = format!("#{id} {}", run.kind);
    if let Some(set) = text("taskset") {
        out.push_str(&format!(" — {set}"));
    }
    if let Some(how) = text("policy").or_else(|| text("scheduler")) {
        out.push_str(&format!(" ({how})"));
    }
    out
}

fn figure_html(figure: &Figure) -> String {
    match &figure.svg {
        Ok(svg) => format!(
            "<figure class=\"plot\">\n<h3>{}</h3>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
            escape(&figure.title),
            strip_xml_declaration(svg),
            escape(&figure.caption)
        ),
        Err(why) => format!(
            "<h3>{}</h3>\n<p class=\"missing\">Not drawn: {}</p>\n",
            escape(&figure.title),
            escape(why)
        ),
    }
}

/// The scalars of an object (and of objects inside it, one level down, as
/// `outer inner`) as a two-column table in human units, in reading order
/// ([`human::reading_order`]); arrays of objects are left to
/// [`items_table`], empty values are left out.
fn key_value_table(value: &Value) -> String {
    let mut rows = Vec::new();
    let mut push = |key: &str, full: &str, v: &Value| {
        if is_empty(v) {
            return;
        }
        if let Some(text) = human::value(full, v) {
            rows.push((human::label(key), text));
        }
    };
    if let Some(map) = value.as_object() {
        let mut keys: Vec<&String> = map.keys().collect();
        human::reading_order(&mut keys);
        for key in keys {
            match &map[key] {
                Value::Object(inner) => {
                    let mut inner_keys: Vec<&String> = inner.keys().collect();
                    human::reading_order(&mut inner_keys);
                    for k in inner_keys {
                        push(&format!("{key} {k}"), &format!("{key}.{k}"), &inner[k]);
                    }
                }
                v => push(key, key, v),
            }
        }
    }
    if rows.is_empty() {
        return "<p class=\"missing\">none recorded</p>\n".to_string();
    }
    let mut out = String::from("<table class=\"kv\">\n");
    for (k, v) in rows {
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(&k),
            escape(&v)
        );
    }
    out.push_str("</table>\n");
    out
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty() || a.iter().any(|i| i.is_object()),
        _ => false,
    }
}

/// Columns a detail table shows at most (the page is 1000 px wide); the
/// others are in its folded table of every field.
pub const MAX_TABLE_COLUMNS: usize = 10;

/// A column of an item table: its label and where its value is (`key`, or
/// `key` then `inner` for a field of an object inside the item, such as
/// a multiprocessor analysis' `response_ns` per test).
#[derive(Debug, Clone, PartialEq)]
struct Column {
    key: String,
    inner: Option<String>,
}

impl Column {
    fn value<'v>(&self, item: &'v Value) -> Option<&'v Value> {
        let v = item.get(&self.key)?;
        match &self.inner {
            Some(inner) => v.get(inner),
            None => Some(v),
        }
    }

    fn label(&self) -> String {
        match &self.inner {
            Some(inner) => format!("{} {inner}", human::label(&self.key)),
            None => human::label(&self.key),
        }
    }

    /// The cell of `item` in human units, and whether it is a number.
    fn cell(&self, item: &Value) -> (String, bool) {
        match self.value(item) {
            Some(v) => (
                human::value(&self.key, v).unwrap_or_default(),
                is_numeric(v),
            ),
            None => (String::new(), false),
        }
    }
}

/// An array of objects as a table in human units: one column per scalar
/// field (and per field of an object in the items), in reading order, at
/// most [`MAX_TABLE_ROWS`] rows. The columns that tell nothing (every
/// value zero, no or empty) are left out, and at most
/// [`MAX_TABLE_COLUMNS`] are shown, so the table fits the page; when any
/// is left out, a folded table below has every one.
fn items_table(items: &[Value]) -> String {
    let mut keys: Vec<String> = Vec::new();
    for item in items.iter().filter_map(Value::as_object) {
        for (k, v) in item {
            let shown = human::value(k, v).is_some() || v.is_object();
            if shown && !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    human::reading_order(&mut keys);
    let mut columns: Vec<Column> = Vec::new();
    for key in keys {
        let mut inner: Vec<String> = Vec::new();
        for item in items {
            if let Some(map) = item.get(&key).and_then(Value::as_object) {
                for (k, v) in map {
                    if human::value(&key, v).is_some() && !inner.contains(k) {
                        inner.push(k.clone());
                    }
                }
            }
        }
        let nested = items
            .iter()
            .any(|i| i.get(&key).is_some_and(Value::is_object));
        match nested {
            true => columns.extend(inner.into_iter().map(|k| Column {
                key: key.clone(),
                inner: Some(k),
            })),
            false => columns.push(Column { key, inner: None }),
        }
    }
    let telling: Vec<&Column> = columns
        .iter()
        .filter(|c| {
            human::is_verdict(&c.key)
                || items
                    .iter()
                    .any(|i| c.value(i).is_some_and(tells_something))
        })
        .take(MAX_TABLE_COLUMNS)
        .collect();
    let table = |columns: &[&Column]| {
        let rows: Vec<Vec<(String, bool)>> = items
            .iter()
            .take(MAX_TABLE_ROWS)
            .map(|item| columns.iter().map(|c| c.cell(item)).collect())
            .collect();
        let labels: Vec<String> = columns.iter().map(|c| c.label()).collect();
        table_html(&labels, &rows, items.len())
    };
    let mut out = table(&telling);
    if telling.len() < columns.len() {
        let all: Vec<&Column> = columns.iter().collect();
        let _ = write!(
            out,
            "<details class=\"all-fields\"><summary>every field ({} columns)</summary>\n{}</details>\n",
            all.len(),
            table(&all)
        );
    }
    out
}

/// Whether a value says anything: not zero, no, empty or missing.
fn tells_something(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(_) => true,
    }
}

/// A sweep's rows: the utilization, the sets, then each test's acceptance
/// ratio as a percentage, one column per test (not a dumped map).
fn sweep_table(items: &[Value]) -> String {
    let mut tests: Vec<String> = Vec::new();
    for item in items {
        if let Some(ratio) = item.get("ratio").and_then(Value::as_object) {
            for k in ratio.keys() {
                if !tests.contains(k) {
                    tests.push(k.clone());
                }
            }
        }
    }
    let mut labels = vec!["utilization".to_string(), "sets".to_string()];
    labels.extend(tests.iter().map(|t| format!("{t} accepts")));
    let rows: Vec<Vec<(String, bool)>> = items
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|item| {
            let mut row = vec![
                (
                    item.get("utilization")
                        .and_then(|v| human::value("utilization", v))
                        .unwrap_or_default(),
                    true,
                ),
                (
                    item.get("sets")
                        .and_then(|v| human::value("sets", v))
                        .unwrap_or_default(),
                    true,
                ),
            ];
            for t in &tests {
                let ratio = item.get("ratio").and_then(|r| r.get(t));
                row.push((
                    ratio
                        .and_then(|v| v.as_f64())
                        .map(human::percent)
                        .unwrap_or_default(),
                    true,
                ));
            }
            row
        })
        .collect();
    table_html(&labels, &rows, items.len())
}

fn table_html(labels: &[String], rows: &[Vec<(String, bool)>], total: usize) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let mut out = String::from("<div class=\"scroll\"><table>\n<tr>");
    for l in labels {
        let _ = write!(out, "<th>{}</th>", escape(l));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for (text, numeric) in row {
            let class = if *numeric { " class=\"num\"" } else { "" };
            let _ = write!(out, "<td{class}>{}</td>", escape(text));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    if total > MAX_TABLE_ROWS {
        let _ = writeln!(
            out,
            "<p class=\"meta\">the first {MAX_TABLE_ROWS} of {total} rows</p>"
        );
    }
    out
}

fn is_numeric(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().all(|i| i.is_number() || i.is_null()),
        other => other.is_number(),
    }
}

/// The distinct host objects of the runs, in order.
fn distinct_hosts(runs: &[RunView]) -> Vec<&Value> {
    let mut hosts: Vec<&Value> = Vec::new();
    for run in runs {
        if !hosts.contains(&&run.host) {
            hosts.push(&run.host);
        }
    }
    hosts
}

/// `s` with `&`, `<`, `>`, `"` and `'` as character references, so no
/// text from a run can open a tag or leave an attribute, and every control,
/// format or invisible character escaped as on a terminal
/// ([`rtlab_model::printable`]: a raw U+202E, U+200B, U+0085, U+009B or
/// U+007F in a name shows as `\u{202e}`...). Line breaks are kept (they are
/// blanks in HTML).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let visible: Vec<_> = s.split('\n').map(rtlab_model::printable).collect();
    for c in visible.join("\n").chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An SVG document to inline: without an `<?xml ...?>` line.
fn strip_xml_declaration(svg: &str) -> &str {
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest.find("?>").map_or(svg, |i| rest[i + 2..].trim_start()),
        None => svg,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    /// Issue 24: these reached the report's table cells raw.
    #[test]
    fn cells_escape_markup_and_invisible_characters() {
        assert_eq!(
            escape("<b>\u{202e}a\u{200b}\u{85}\u{9b}\u{7f}&'\"\nx"),
            "&lt;b&gt;\\u{202e}a\\u{200b}\\u{85}\\u{9b}\\u{7f}&amp;&#39;&quot;\nx"
        );
    }
}
