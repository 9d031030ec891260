//! `rtlab results`'s text: the stored runs ([`list`]), one run with its
//! host, task set and document ([`show`]), and the fields in which two
//! runs' documents differ ([`diff`]). Values are in their units, as in
//! every human output; `--json` keeps the exact numbers.

use rtlab_model::printable;
use rtlab_store::{DiffLine, RunSummary, StoredRun};
use serde_json::Value;

use crate::{human, table};

/// One row per stored run, the command last (wrapped between words).
pub fn list(runs: &[RunSummary]) -> String {
    let header = [
        "id", "created", "kind", "status", "jobs", "samples", "command",
    ];
    let mut t = table::new(&header, &["id", "jobs", "samples"]);
    for r in runs {
        t.add_row(vec![
            r.id.to_string(),
            r.created.clone(),
            r.kind.clone(),
            r.status.clone(),
            r.jobs.to_string(),
            r.samples.to_string(),
            printable(&r.command).into_owned(),
        ]);
    }
    t.wrapping("command").optional(&["samples", "status"]);
    t.render()
}

/// A leaf of a document as text in its unit (`3.042 ms`, `83.01 %`),
/// named by the last key of its path.
fn cell(path: &str, v: &Value) -> String {
    let key = path.rsplit(['.', ']']).next().unwrap_or(path);
    match v {
        Value::Object(_) | Value::Array(_) => printable(&v.to_string()).into_owned(),
        v => printable(&human::value(key, v).unwrap_or_else(|| v.to_string())).into_owned(),
    }
}

/// One run: how it was made, its rows, host, task set, then every field
/// of its document by path.
pub fn show(run: &StoredRun, summary: Option<&RunSummary>) -> String {
    let mut out = vec![
        format!(
            "run {} ({}, {}) saved {} by rtlab {}",
            run.id, run.kind, run.status, run.created, run.rtlab_version
        ),
        format!("command: {}", printable(&run.command)),
    ];
    if let Some(s) = summary {
        out.push(format!("rows: {} jobs, {} samples", s.jobs, s.samples));
    }
    out.push("\nhost:".into());
    if let Some(lines) = run.host["lines"].as_array() {
        for l in lines {
            if let (Some(k), Some(v)) = (l[0].as_str(), l[1].as_str()) {
                out.push(format!("  {k}: {}", printable(v)));
            }
        }
    }
    if let Some(text) = &run.taskset {
        out.push("\ntask set:".into());
        for line in text.trim_end().lines() {
            out.push(format!("  {}", printable(line)));
        }
    }
    out.push("\ndocument (every field; --json prints it exactly):".into());
    let mut t = table::new(&["field", "value"], &[]);
    for (path, v) in rtlab_store::leaves(&run.document) {
        t.add_row(vec![printable(&path).into_owned(), cell(&path, &v)]);
    }
    t.wrapping("value");
    out.push(t.render());
    table::fit_text(&(out.join("\n") + "\n"))
}

/// The fields in which the documents of runs `a` and `b` differ, with the
/// change of each number.
pub fn diff(a: &StoredRun, b: &StoredRun, lines: &[DiffLine]) -> String {
    let mut out = vec![
        format!("run {} ({}): {}", a.id, a.kind, printable(&a.command)),
        format!("run {} ({}): {}", b.id, b.kind, printable(&b.command)),
    ];
    if lines.is_empty() {
        out.push("\nthe documents are the same".into());
        return table::fit_text(&(out.join("\n") + "\n"));
    }
    let (ha, hb) = (format!("run {}", a.id), format!("run {}", b.id));
    let header = ["field", ha.as_str(), hb.as_str(), "change"];
    let mut t = table::new(&header, &header[1..]);
    for l in lines {
        let key = l.path.rsplit(['.', ']']).next().unwrap_or(&l.path);
        let side = |v: &Option<Value>| v.as_ref().map_or("-".to_string(), |v| cell(&l.path, v));
        let change = l.change.map_or(String::new(), |c| {
            let sign = if c < 0.0 { "-" } else { "+" };
            let magnitude = human::value(key, &serde_json::json!(c.abs()))
                .unwrap_or_else(|| format!("{}", c.abs()));
            format!("{sign}{magnitude}")
        });
        t.add_row(vec![
            printable(&l.path).into_owned(),
            side(&l.left),
            side(&l.right),
            change,
        ]);
    }
    t.wrapping(&ha).wrapping(&hb).optional(&["change"]);
    out.push(String::new());
    out.push(t.render());
    table::fit_text(&(out.join("\n") + "\n"))
}
