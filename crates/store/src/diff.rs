//! Two runs' documents side by side: every leaf (number, string, bool,
//! null) whose value differs, by its path.
//!
//! Paths are dotted keys; an array element is named by its `name` (or
//! `task`) field when it has one — `tasks[video].max_response_ns` — so the
//! per-task rows of two runs line up even when their order differs, and by
//! its index otherwise (`threads[0].max_ns`).

use serde::Serialize;
use serde_json::Value;

/// One differing leaf.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffLine {
    /// Where, e.g. `tasks[video].misses`.
    pub path: String,
    /// Its value in the first document (`None`: absent there).
    pub left: Option<Value>,
    /// Its value in the second document.
    pub right: Option<Value>,
    /// `right - left` when both are numbers.
    pub change: Option<f64>,
}

/// The leaves of `left` and `right` that differ, in `left`'s order, then
/// those only in `right`.
pub fn diff(left: &Value, right: &Value) -> Vec<DiffLine> {
    let mut a = Vec::new();
    let mut b = Vec::new();
    flatten(left, String::new(), &mut a);
    flatten(right, String::new(), &mut b);
    let mut out = Vec::new();
    for (path, l) in &a {
        let r = b.iter().find(|(p, _)| p == path).map(|(_, v)| v);
        if r != Some(l) {
            out.push(line(path, Some(l), r));
        }
    }
    for (path, r) in &b {
        if !a.iter().any(|(p, _)| p == path) {
            out.push(line(path, None, Some(r)));
        }
    }
    out
}

/// Every leaf of `document` by its path (as [`diff`] names them), in
/// document order: what `rtlab results show` lists.
pub fn leaves(document: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    flatten(document, String::new(), &mut out);
    out
}

fn line(path: &str, left: Option<&Value>, right: Option<&Value>) -> DiffLine {
    let change = match (left.and_then(Value::as_f64), right.and_then(Value::as_f64)) {
        (Some(l), Some(r)) => Some(r - l),
        _ => None,
    };
    DiffLine {
        path: path.to_string(),
        left: left.cloned(),
        right: right.cloned(),
        change,
    }
}

fn flatten(v: &Value, path: String, out: &mut Vec<(String, Value)>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(v, join(k), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let name = ["name", "task"]
                    .iter()
                    .find_map(|k| item.get(k).and_then(Value::as_str));
                let key = name.map_or_else(|| i.to_string(), str::to_string);
                flatten(item, format!("{path}[{key}]"), out);
            }
        }
        leaf => out.push((path, leaf.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tasks_line_up_by_name_and_only_differences_are_listed() {
        let a = json!({"policy": "rm", "tasks": [{"name": "a", "misses": 0}, {"name": "b", "misses": 2}]});
        let b = json!({"policy": "rm", "tasks": [{"name": "b", "misses": 5}, {"name": "a", "misses": 0}], "extra": true});
        let d = diff(&a, &b);
        assert_eq!(
            d,
            vec![
                DiffLine {
                    path: "tasks[b].misses".into(),
                    left: Some(json!(2)),
                    right: Some(json!(5)),
                    change: Some(3.0)
                },
                DiffLine {
                    path: "extra".into(),
                    left: None,
                    right: Some(json!(true)),
                    change: None
                },
            ]
        );
        assert!(diff(&a, &a).is_empty());
    }

    #[test]
    fn unnamed_array_elements_are_matched_by_index() {
        let d = diff(
            &json!({"t": [{"max": 1}, {"max": 2}]}),
            &json!({"t": [{"max": 1}]}),
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, "t[1].max");
        assert_eq!(d[0].right, None);
    }
}
