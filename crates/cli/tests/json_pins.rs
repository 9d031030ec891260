//! Pins the documented JSON outputs (issue 12: "the JSON outputs documented
//! in README are unchanged"; they are documented in the guide now,
//! docs/src/reference/json.md), so that moving the result model between crates
//! cannot change a byte of them unnoticed.
//!
//! * Deterministic commands (`sim`, `analyze`, `sweep`, `taskset show|list|gen`)
//!   are compared byte for byte with `tests/pins/<name>.json`.
//! * Real-thread commands (`run`, `compare`, `latency`, `lag-study`) are not
//!   deterministic: their *schema* is pinned instead, the ordered keys of
//!   every object at every level (`tests/pins/<name>.keys`). They need root
//!   (but `latency --policy other`): `#[ignore = "needs root"]`, run them
//!   as root with `-- --ignored` under the machine-wide real-time lock
//!   (`flock /tmp/rtlab-realtime.lock`).
//!
//! `RTLAB_UPDATE_PINS=1 cargo test -p rtlab-cli --test json_pins` rewrites
//! the pins from the current binary (then review the diff).

mod common;

use std::path::{Path, PathBuf};

use common::rtlab;

fn pins_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pins")
}

fn updating() -> bool {
    std::env::var_os("RTLAB_UPDATE_PINS").is_some_and(|v| v == "1")
}

/// Compares `actual` with the pin file `name`, or rewrites it when updating.
fn check_pin(name: &str, actual: &str) {
    let path = pins_dir().join(name);
    if updating() {
        std::fs::write(&path, actual).expect("pin written");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (RTLAB_UPDATE_PINS=1 writes it)", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} changed at line {}:\n  pinned: {}\n  now:    {}",
            line + 1,
            expected.lines().nth(line).unwrap_or("<end>"),
            actual.lines().nth(line).unwrap_or("<end>"),
        );
    }
}

/// Runs `rtlab ARGS` in `dir`, requires success, returns standard output.
fn stdout_of(dir: &Path, args: &[&str]) -> String {
    let out = rtlab()
        .current_dir(dir)
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).expect("UTF-8 output")
}

/// The deterministic commands and their pin names.
const PINNED: &[(&str, &[&str])] = &[
    (
        "sim-fp-dm",
        &[
            "sim",
            "builtin:lf-scenario-4",
            "--scheduler",
            "fp:dm",
            "--duration",
            "100ms",
            "--json",
        ],
    ),
    (
        "sim-edf",
        &[
            "sim",
            "builtin:lf-scenario-4",
            "--scheduler",
            "edf",
            "-d",
            "1s",
            "--json",
        ],
    ),
    (
        "sim-fp-rm-tick-overheads",
        &[
            "sim",
            "builtin:avionics",
            "-s",
            "fp:rm",
            "-d",
            "2s",
            "--tick",
            "1ms",
            "--overheads",
            "builtin:rtmach",
            "--json",
        ],
    ),
    (
        "sim-multiburst-overload-skip",
        &[
            "sim",
            "builtin:hartstone-ph",
            "-s",
            "multiburst",
            "-d",
            "120s",
            "--overload",
            "hartstone-extended",
            "--on-miss",
            "skip",
            "--json",
        ],
    ),
    (
        "sim-ipi",
        &[
            "sim",
            "builtin:hartstone-ph",
            "-s",
            "ipi",
            "-d",
            "2s",
            "--json",
        ],
    ),
    (
        "sim-rr",
        &[
            "sim",
            "builtin:lf-scenario-3",
            "-s",
            "rr:2ms",
            "-d",
            "500ms",
            "--json",
        ],
    ),
    (
        "sim-fifo",
        &[
            "sim",
            "builtin:lf-scenario-4",
            "-s",
            "fifo",
            "-d",
            "500ms",
            "--json",
        ],
    ),
    (
        "sim-np-edf-abort",
        &[
            "sim",
            "builtin:lf-scenario-4",
            "-s",
            "np-edf",
            "-d",
            "1s",
            "--on-miss",
            "abort",
            "--json",
        ],
    ),
    (
        "sim-hybrid-phase",
        &[
            "sim",
            "builtin:avionics",
            "-s",
            "hybrid:rm",
            "-d",
            "3s",
            "--phase",
            "1s..2s:x1.3",
            "--json",
        ],
    ),
    (
        "sim-lock-none-deadlock",
        &[
            "sim",
            "locking.toml",
            "-s",
            "fp:rm",
            "-d",
            "200ms",
            "--protocol",
            "none",
            "--json",
        ],
    ),
    (
        "sim-lock-ipcp-random",
        &[
            "sim",
            "locking.toml",
            "-s",
            "fp:rm",
            "-d",
            "400ms",
            "--protocol",
            "ipcp",
            "--lock-cost",
            "10us",
            "--exec",
            "uniform",
            "--jitter",
            "uniform",
            "--seed",
            "7",
            "--json",
        ],
    ),
    (
        "sim-lock-srp-abort",
        &[
            "sim",
            "locking.toml",
            "-s",
            "edf",
            "-d",
            "400ms",
            "--protocol",
            "srp",
            "--on-miss",
            "abort",
            "--exec",
            "uniform",
            "--seed",
            "3",
            "--json",
        ],
    ),
    (
        "sim-lock-pip-deadlock-abort",
        &[
            "sim",
            "locking.toml",
            "-s",
            "fp:dm",
            "-d",
            "300ms",
            "--protocol",
            "pip",
            "--on-miss",
            "abort",
            "--json",
        ],
    ),
    (
        "analyze-all",
        &[
            "analyze",
            "builtin:lf-scenario-4",
            "--policy",
            "all",
            "--json",
        ],
    ),
    (
        "analyze-overheads-breakdown",
        &[
            "analyze",
            "builtin:avionics",
            "--policy",
            "all",
            "--overheads",
            "builtin:rtmach",
            "--tick",
            "1ms,8ms",
            "--breakdown",
            "--json",
        ],
    ),
    (
        "analyze-locking",
        &["analyze", "locking.toml", "--policy", "all", "--json"],
    ),
    (
        "sweep",
        &[
            "sweep",
            "--tasks",
            "6",
            "--from",
            "0.6",
            "--to",
            "1.0",
            "--step",
            "0.1",
            "--sets",
            "40",
            "--seed",
            "5",
            "--deadlines",
            "constrained",
            "--json",
        ],
    ),
    (
        "hartstone",
        &[
            "hartstone",
            "--test",
            "2,4",
            "--scheduler",
            "edf,rr:2ms",
            "--iteration-duration",
            "1s",
            "--json",
        ],
    ),
    (
        "taskset-show",
        &["taskset", "show", "builtin:avionics", "--json"],
    ),
    ("taskset-list", &["taskset", "list", "--json"]),
];

#[test]
fn documented_json_outputs_are_byte_identical_to_their_pins() {
    for (name, args) in PINNED {
        let out = stdout_of(&pins_dir(), args);
        check_pin(&format!("{name}.json"), &out);
    }
}

#[test]
fn taskset_gen_json_is_byte_identical_to_its_pin() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = stdout_of(
        dir.path(),
        &[
            "taskset",
            "gen",
            "--tasks",
            "5",
            "--utilization",
            "0.8",
            "--count",
            "3",
            "--seed",
            "11",
            "--out",
            "sets",
            "--json",
        ],
    );
    check_pin("taskset-gen.json", &out);
}

/// A JSON value that keeps its objects' keys in document order
/// (`serde_json::Value` sorts them without the `preserve_order` feature,
/// which would change the binary's own output if enabled for the tests).
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Scalar,
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = a.next_entry()? {
                    entries.push(entry);
                }
                Ok(Ordered::Object(entries))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The ordered keys of every object in the JSON text `json`, one line per
/// object path (`.tasks[]` stands for every element of a list; an empty
/// list or a null says nothing about its elements).
/// A real run's schema without the parts of its disturbance account whose
/// presence depends on the machine at the time (the other threads named,
/// the verdict's reasons, the pressures where PSI is missing, the shield):
/// their keys are pinned by `rtlab_model::disturbance`'s own tests.
fn machine_independent(schema: &str) -> String {
    schema
        .lines()
        .filter(|l| {
            !["culprits[]", "reasons[]", "_pressure:", "shield:"]
                .iter()
                .any(|part| l.contains(".disturbance") && l.contains(part))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn schema(json: &[u8]) -> String {
    fn walk(path: &str, value: &Ordered, lines: &mut Vec<String>) {
        match value {
            Ordered::Object(entries) => {
                let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
                let at = if path.is_empty() { "." } else { path };
                let line = format!("{at}: {}", keys.join(", "));
                if !lines.contains(&line) {
                    lines.push(line);
                }
                for (k, v) in entries {
                    walk(&format!("{path}.{k}"), v, lines);
                }
            }
            Ordered::Array(items) => {
                for item in items {
                    walk(&format!("{path}[]"), item, lines);
                }
            }
            Ordered::Scalar => {}
        }
    }
    let doc: Ordered = serde_json::from_slice(json).expect("valid JSON on stdout");
    let mut lines = Vec::new();
    walk("", &doc, &mut lines);
    lines.join("\n") + "\n"
}

fn pin_schema(name: &str, args: &[&str]) {
    let out = rtlab()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    check_pin(&format!("{name}.keys"), &machine_independent(&schema(&out)));
}

#[test]
#[ignore = "needs root"]
fn run_and_compare_json_keep_their_schema() {
    let _one = common::real_time();
    pin_schema(
        "run-other",
        &[
            "run",
            "builtin:lf-scenario-4",
            "--policy",
            "other",
            "-d",
            "200ms",
            "--json",
        ],
    );
    pin_schema(
        "compare-rm",
        &[
            "compare",
            "builtin:lf-scenario-4",
            "--policy",
            "rm",
            "-d",
            "200ms",
            "--json",
        ],
    );
}

/// `latency` and `lag-study` measure real threads: their schema is pinned
/// like `run`'s (both keep at least one outlier and one cell, so every
/// object level is present in the output). `latency --policy other` needs
/// no privilege.
#[test]
fn latency_json_keeps_its_schema() {
    pin_schema(
        "latency-other",
        &[
            "latency",
            "--policy",
            "other",
            "--loops",
            "50",
            "--interval",
            "1ms",
            "--json",
        ],
    );
}

/// The lag study runs SCHED_FIFO threads.
#[test]
#[ignore = "needs root"]
fn lag_study_json_keeps_its_schema() {
    let _one = common::real_time();
    pin_schema(
        "lag-study",
        &[
            "lag-study",
            "--periods",
            "1ms",
            "--utilizations",
            "50",
            "--samples",
            "50",
            "--json",
        ],
    );
}

#[test]
fn schema_lists_ordered_keys_per_level() {
    let doc = br#"{"b": 1, "a": {"y": null, "x": [1]}, "l": [{"k": 1, "j": 2}, {"k": 3, "j": 4}], "e": []}"#;
    assert_eq!(schema(doc), ".: b, a, l, e\n.a: y, x\n.l[]: k, j\n");
}
