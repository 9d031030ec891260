//! The JSON documents of `rtlab taskset show|list|validate|gen --json`
//! (README, "JSON outputs"), as plain structs that serialize with serde, and
//! the fragments of the real-run documents that describe the host
//! ([`RtThrottlingDocument`], [`LoadDocument`]; `rtlab_host` and `rtlab_rt`
//! convert their readings into them).
//!
//! Fields are declared in **alphabetical order**: these documents used to
//! be `serde_json::Value` objects, which sort their keys (the workspace does
//! not enable serde_json's `preserve_order`), and the documented output must
//! not change by a byte. [`keys_in_sorted_order`] checks a document for that.

use serde::Serialize;

/// Whether `doc` serializes with the keys of every object in sorted order,
/// the order a `serde_json::Value` prints them in: its text is the same
/// directly and through a `Value`. `false` also when it does not serialize.
pub fn keys_in_sorted_order<T: Serialize>(doc: &T) -> bool {
    let direct = serde_json::to_string(doc);
    let sorted = serde_json::to_value(doc).and_then(|v| serde_json::to_string(&v));
    matches!((direct, sorted), (Ok(a), Ok(b)) if a == b)
}

/// The RT throttling limits read at the start (`sched_rt_runtime_us`,
/// `sched_rt_period_us`), in `rtlab latency --json` and `rtlab lag-study
/// --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RtThrottlingDocument {
    /// The period.
    pub period_us: u64,
    /// RT threads' runtime per period (`-1`: unlimited).
    pub runtime_us: i64,
}

/// `rtlab load --json`, and the `load` of `rtlab latency --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadDocument {
    /// How long it ran.
    pub elapsed_ns: u64,
    /// Messages passed.
    pub messages: u64,
    /// The load as given (`hackbench:2:pipe`, ...).
    pub spec: String,
    /// Spin rounds done.
    pub spin_rounds: u64,
    /// Load threads.
    pub threads: usize,
}

/// `rtlab taskset show --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TasksetDocument {
    /// The clusters of processors, when the file gives them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<Vec<u32>>,
    /// `implicit`, `constrained` or `arbitrary`.
    pub deadlines: &'static str,
    /// `Σ Ci/min(Di, Ti)`.
    pub density: f64,
    /// The hyperperiod, `None` when it overflows.
    pub hyperperiod_ns: Option<u64>,
    /// The set's name.
    pub name: String,
    /// The file's notes (warnings), as printed.
    pub notes: Vec<String>,
    /// Where the set came from (a path or `builtin:NAME`).
    pub origin: String,
    /// The processor count, when not 1 (absent on one processor, so
    /// one-processor documents are unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processors: Option<u32>,
    /// Number of tasks.
    pub task_count: usize,
    /// The tasks, in file order.
    pub tasks: Vec<TaskDocument>,
    /// `Σ Ci/Ti`.
    pub utilization: f64,
}

/// One task of [`TasksetDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskDocument {
    /// Best-case execution time, if given.
    pub bcet_ns: Option<u64>,
    /// The processor it is fixed to, when it has a `cpu` field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
    /// Its critical sections.
    pub critical_sections: Vec<CriticalSectionDocument>,
    /// Relative deadline `Di`.
    pub deadline_ns: u64,
    /// Release jitter `Ji`.
    pub jitter_ns: u64,
    /// Its name.
    pub name: String,
    /// First release `Oi`.
    pub offset_ns: u64,
    /// Period `Ti`.
    pub period_ns: u64,
    /// The given priority, if any.
    pub priority: Option<u32>,
    /// `Ci/Ti`.
    pub utilization: f64,
    /// Execution time `Ci`.
    pub wcet_ns: u64,
}

/// One critical section of a [`TaskDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalSectionDocument {
    /// How long the resource is held.
    pub length_ns: u64,
    /// The resource's name.
    pub resource: String,
    /// Execution time before the section starts.
    pub start_ns: u64,
}

/// One row of `rtlab taskset list --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatalogRow {
    /// The built-in set's name (without `builtin:`).
    pub name: &'static str,
    /// Its `?NAME=VALUE` parameters.
    pub parameters: Vec<ParameterDocument>,
    /// Where it comes from.
    pub source: &'static str,
    /// What it is.
    pub summary: &'static str,
    /// Number of tasks with the default parameters.
    pub tasks: usize,
    /// Its utilization with the default parameters.
    pub utilization: f64,
}

/// One parameter of a [`CatalogRow`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParameterDocument {
    /// Its default value.
    pub default: &'static str,
    /// What it changes.
    pub meaning: &'static str,
    /// Its name.
    pub name: &'static str,
}

/// One file's entry of `rtlab taskset validate --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidationDocument {
    /// The errors; empty when valid.
    pub errors: Vec<DiagnosticDocument>,
    /// The file as given.
    pub file: String,
    /// The notes (warnings).
    pub notes: Vec<DiagnosticDocument>,
    /// Errors beyond the first 100 (`MAX_LISTED_ERRORS`), counted but not
    /// listed; absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub unlisted_errors: usize,
    /// Whether the file holds a valid task set.
    pub valid: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One error or note of a [`ValidationDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagnosticDocument {
    /// 1-based column.
    pub column: usize,
    /// 1-based line.
    pub line: usize,
    /// The message alone.
    pub message: String,
    /// The whole line as printed (`file:line:col: severity: message`).
    pub text: String,
}

/// One set of `rtlab taskset gen --out DIR --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeneratedSetDocument {
    /// The file written.
    pub file: String,
    /// The hyperperiod, `None` when it overflows.
    pub hyperperiod_ns: Option<u64>,
    /// The set's name.
    pub name: String,
    /// Number of tasks.
    pub tasks: usize,
    /// `Σ Ci/Ti`.
    pub utilization: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_order_check_tells_declared_order_apart() {
        #[derive(Serialize)]
        struct Unsorted {
            b: u8,
            a: u8,
        }
        assert!(!keys_in_sorted_order(&Unsorted { b: 1, a: 2 }));
        assert!(keys_in_sorted_order(&ParameterDocument {
            default: "1ms",
            meaning: "m",
            name: "n",
        }));
    }

    #[test]
    fn taskset_documents_keep_sorted_keys() {
        let task = TaskDocument {
            bcet_ns: None,
            critical_sections: vec![CriticalSectionDocument {
                length_ns: 1,
                resource: "r".into(),
                start_ns: 0,
            }],
            cpu: Some(1),
            deadline_ns: 2,
            jitter_ns: 0,
            name: "a".into(),
            offset_ns: 0,
            period_ns: 2,
            priority: Some(1),
            utilization: 0.5,
            wcet_ns: 1,
        };
        assert!(keys_in_sorted_order(&TasksetDocument {
            clusters: vec![vec![0], vec![1]],
            deadlines: "implicit",
            density: 0.5,
            hyperperiod_ns: Some(2),
            name: "s".into(),
            notes: vec![],
            origin: "s.toml".into(),
            processors: Some(2),
            task_count: 1,
            tasks: vec![task],
            utilization: 0.5,
        }));
        assert!(keys_in_sorted_order(&CatalogRow {
            name: "x",
            parameters: vec![],
            source: "paper",
            summary: "s",
            tasks: 1,
            utilization: 0.5,
        }));
        let diagnostic = DiagnosticDocument {
            column: 1,
            line: 2,
            message: "m".into(),
            text: "t".into(),
        };
        assert!(keys_in_sorted_order(&ValidationDocument {
            errors: vec![diagnostic.clone()],
            file: "f".into(),
            notes: vec![diagnostic],
            unlisted_errors: 1,
            valid: false,
        }));
        assert!(keys_in_sorted_order(&GeneratedSetDocument {
            file: "f".into(),
            hyperperiod_ns: None,
            name: "n".into(),
            tasks: 1,
            utilization: 0.5,
        }));
    }
}
