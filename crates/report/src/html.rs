//! The report: one self-contained HTML file (inline CSS and SVG, no
//! script, nothing fetched), readable on a laptop and printable. Every
//! text taken from a run (task names, command lines, host strings) is
//! HTML-escaped.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use crate::figures::{figures, Figure};
use crate::view::RunView;

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
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.kv th { width: 16rem; }
.scroll { overflow-x: auto; }
.meta { color: #555; }
.interrupted { color: #b00; font-weight: bold; }
figure.plot { margin: 1rem 0; }
figure.plot svg { display: block; max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 13px; margin-top: .3rem; }
p.missing { color: #777; font-style: italic; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  h2 { break-before: page; }
  section.run:first-of-type h2 { break-before: auto; }
  figure.plot, table { break-inside: avoid; }
  details > pre { display: none; }
  a { color: inherit; text-decoration: none; }
}
"#;

/// The whole report of `runs`, in the given order.
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
        "<p class=\"meta\">{} run{}: {}</p>",
        runs.len(),
        plural(runs.len()),
        escape(
            &runs
                .iter()
                .map(|r| format!("#{} {}", r.id, r.kind))
                .collect::<Vec<_>>()
                .join(", ")
        )
    );
    let hosts = distinct_hosts(runs);
    if hosts.len() == 1 {
        out.push_str("<h2>Host</h2>\n");
        out.push_str(&key_value_table(hosts[0]));
    }
    for (index, run) in runs.iter().enumerate() {
        let run = load(run)?;
        out.push_str(&run_section(&run, index, hosts.len() > 1));
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

/// A run: its heading, metadata, summary tables and plots.
fn run_section(run: &RunView, index: usize, with_host: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<section class=\"run\" id=\"run-{}\">\n<h2>{}</h2>",
        index + 1,
        escape(&heading(run))
    );
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
        out.push_str(&key_value_table(&run.host));
    }
    out.push_str("<h3>Summary</h3>\n");
    out.push_str(&key_value_table(&run.document));
    for key in ["tasks", "threads", "cells", "rows", "tests", "breakdown"] {
        if let Some(items) = run.document.get(key).and_then(Value::as_array) {
            out.push_str(&items_table(key, items));
        }
    }
    for figure in figures(run) {
        out.push_str(&figure_html(&figure));
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

/// `#ID kind — task set (policy or scheduler)`; no id for an unsaved run.
fn heading(run: &RunView) -> String {
    let text = |key: &str| run.document.get(key).and_then(Value::as_str);
    let mut out = if run.id > 0 {
        format!("#{} {}", run.id, run.kind)
    } else {
        run.kind.clone()
    };
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
/// `outer.inner`) as a two-column table; arrays are left to
/// [`items_table`].
fn key_value_table(value: &Value) -> String {
    let mut rows = Vec::new();
    if let Some(map) = value.as_object() {
        for (key, v) in map {
            match v {
                Value::Object(inner) => {
                    for (k, v) in inner {
                        if let Some(text) = scalar(v) {
                            rows.push((format!("{key}.{k}"), text));
                        }
                    }
                }
                Value::Array(items) if items.iter().all(|i| scalar(i).is_some()) => {
                    let texts: Vec<String> = items.iter().filter_map(scalar).collect();
                    rows.push((key.clone(), texts.join(", ")));
                }
                _ => {
                    if let Some(text) = scalar(v) {
                        rows.push((key.clone(), text));
                    }
                }
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

/// An array of objects as a table: one column per scalar field (in order
/// of first appearance; a `[real, sim]` pair shows as `real / sim`), at
/// most [`MAX_TABLE_ROWS`] rows.
fn items_table(name: &str, items: &[Value]) -> String {
    let mut columns: Vec<String> = Vec::new();
    for item in items.iter().filter_map(Value::as_object) {
        for (k, v) in item {
            if cell(v).is_some() && !columns.contains(k) {
                columns.push(k.clone());
            }
        }
    }
    if columns.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<h3>{}</h3>\n<div class=\"scroll\"><table>\n<tr>",
        escape(name)
    );
    for c in &columns {
        let _ = write!(out, "<th>{}</th>", escape(c));
    }
    out.push_str("</tr>\n");
    for item in items.iter().take(MAX_TABLE_ROWS) {
        out.push_str("<tr>");
        for c in &columns {
            let v = item.get(c).and_then(cell).unwrap_or_default();
            let numeric = |v: &Value| match v {
                Value::Array(items) => items.iter().all(|i| i.is_number() || i.is_null()),
                other => other.is_number(),
            };
            let class = if item.get(c).is_some_and(numeric) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(&v));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    if items.len() > MAX_TABLE_ROWS {
        let _ = writeln!(
            out,
            "<p class=\"meta\">the first {MAX_TABLE_ROWS} of {} rows</p>",
            items.len()
        );
    }
    out
}

/// Entries an object may have to show in one table cell.
const MAX_CELL_ENTRIES: usize = 6;

/// A table cell: a scalar, an array of scalars joined by ` / `, or a
/// small object of scalars (a sweep row's ratio per test) as `key: value`
/// pairs.
fn cell(v: &Value) -> Option<String> {
    match v {
        Value::Object(map)
            if !map.is_empty()
                && map.len() <= MAX_CELL_ENTRIES
                && map.values().all(|i| scalar(i).is_some()) =>
        {
            Some(
                map.iter()
                    .filter_map(|(k, v)| Some(format!("{k}: {}", scalar(v)?)))
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(|i| scalar(i).is_some()) => {
            Some(
                items
                    .iter()
                    .filter_map(scalar)
                    .collect::<Vec<_>>()
                    .join(" / "),
            )
        }
        other => scalar(other),
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some("—".to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
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
