//! What a reader takes in at once, per run: the verdict (missed deadlines,
//! schedulable or not, real and simulated agreeing) and the few figures
//! that matter, in human units; and the host in one line.

use serde_json::Value;

use crate::human;
use crate::view::RunView;

/// The verdict of a run: good (nothing missed, schedulable, agreeing) or
/// not, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Nothing went wrong.
    pub good: bool,
    /// `no deadline miss`, `20 deadline misses, the first at 45 ms`, ...
    pub text: String,
}

/// A run's headline.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Headline {
    /// The verdict, for runs that have one (not sweeps).
    pub verdict: Option<Verdict>,
    /// (what, value) pairs: (`jobs completed`, `220`).
    pub facts: Vec<(String, String)>,
}

/// The headline of `run`, by its kind.
pub fn of(run: &RunView) -> Headline {
    let doc = &run.document;
    let mut headline = match run.kind.as_str() {
        "sim" | "run" => schedule(doc),
        "compare" => compare(doc),
        "analyze" => analyze(doc),
        "sweep" => sweep(doc),
        "latency" => latency(doc),
        _ => generic(doc),
    };
    disturbance(&mut headline, doc);
    headline
}

/// A real run's disturbance verdict as a fact (`machine`: `clean` or
/// `disturbed: ...`), and a disturbed run's verdict marked as such.
fn disturbance(headline: &mut Headline, doc: &Value) {
    let account = doc
        .get("disturbance")
        .or_else(|| doc.get("real").and_then(|r| r.get("disturbance")));
    let Some(summary) = account
        .and_then(|a| a.get("verdict"))
        .and_then(|v| v.get("summary"))
        .and_then(Value::as_str)
    else {
        return;
    };
    headline.facts.push(("machine".into(), summary.to_string()));
    if summary.starts_with("disturbed") {
        if let Some(v) = &mut headline.verdict {
            v.text
                .push_str(" (on a DISTURBED machine: see \"machine\")");
        }
    }
}

fn num(doc: &Value, key: &str) -> Option<f64> {
    doc.get(key).and_then(Value::as_f64)
}

fn fact(facts: &mut Vec<(String, String)>, what: &str, doc: &Value, key: &str) {
    if let Some(v) = doc.get(key).filter(|v| !v.is_null()) {
        if let Some(text) = human::value(key, v) {
            facts.push((what.to_string(), text));
        }
    }
}

fn misses_verdict(doc: &Value) -> Option<Verdict> {
    let misses = num(doc, "deadline_misses")? as u64;
    Some(if misses == 0 {
        Verdict {
            good: true,
            text: "no deadline miss".into(),
        }
    } else {
        let first = num(doc, "first_miss_ns")
            .map(|ns| format!(", the first at {}", human::duration_ns(ns)))
            .unwrap_or_default();
        Verdict {
            good: false,
            text: format!("{misses} deadline miss{}{first}", plural_es(misses)),
        }
    })
}

fn plural_es(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "es"
    }
}

fn schedule(doc: &Value) -> Headline {
    let mut facts = Vec::new();
    fact(&mut facts, "run", doc, "duration_ns");
    fact(&mut facts, "jobs completed", doc, "completed");
    fact(&mut facts, "missed", doc, "deadline_misses");
    fact(&mut facts, "aborted", doc, "aborted");
    fact(&mut facts, "preemptions", doc, "preemptions");
    fact(
        &mut facts,
        "context switches / s",
        doc,
        "context_switches_per_s",
    );
    if let (Some(idle), Some(d)) = (num(doc, "idle_ns"), num(doc, "duration_ns")) {
        if d > 0.0 {
            facts.push(("idle".into(), human::percent(idle / d)));
        }
    }
    pinned(&mut facts, doc);
    Headline {
        verdict: misses_verdict(doc),
        facts,
    }
}

/// `CPU 1 pinned`, for real runs pinned to one CPU.
fn pinned(facts: &mut Vec<(String, String)>, doc: &Value) {
    if let Some(cpu) = doc.get("cpu").and_then(Value::as_u64) {
        facts.push(("pinned".into(), format!("CPU {cpu}")));
    }
}

fn compare(doc: &Value) -> Headline {
    let real = doc.get("real").cloned().unwrap_or(Value::Null);
    let sim = doc.get("sim").cloned().unwrap_or(Value::Null);
    let misses = |d: &Value| num(d, "deadline_misses").map_or("—".into(), |m| m.to_string());
    let agree = doc.get("misses_agree").and_then(Value::as_bool);
    let verdict = agree.map(|good| Verdict {
        good,
        text: format!(
            "real and simulated misses {} ({} real, {} simulated)",
            if good { "agree" } else { "differ" },
            misses(&real),
            misses(&sim)
        ),
    });
    let mut facts = Vec::new();
    fact(&mut facts, "run", &real, "duration_ns");
    fact(
        &mut facts,
        "jobs completed on real threads",
        &real,
        "completed",
    );
    let worst_delta = doc
        .get("tasks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| num(t, "max_response_delta_ns"))
        .fold(None, |m: Option<f64>, v| {
            Some(m.map_or(v, |m| m.max(v.abs())))
        });
    if let Some(d) = worst_delta {
        facts.push((
            "largest real - simulated worst response".into(),
            human::duration_ns(d),
        ));
    }
    pinned(&mut facts, &real);
    Headline { verdict, facts }
}

fn analyze(doc: &Value) -> Headline {
    let tests: Vec<&Value> = doc
        .get("tests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let is_overhead = |t: &&Value| {
        t.get("test")
            .and_then(Value::as_str)
            .is_some_and(|n| n.ends_with("-overheads"))
    };
    let (with_costs, ideal): (Vec<&Value>, Vec<&Value>) = tests.into_iter().partition(is_overhead);
    let ideal = policy_verdicts(&ideal);
    let with_costs = policy_verdicts(&with_costs);
    let mut parts = verdict_parts(&ideal);
    let costed = verdict_parts(&with_costs);
    if !costed.is_empty() {
        let overheads = doc
            .get("overheads")
            .and_then(Value::as_str)
            .unwrap_or("the overheads");
        parts.push(format!("with {overheads}: {}", costed.join(", ")));
    }
    let good = ideal
        .iter()
        .chain(&with_costs)
        .all(|(_, v)| *v == Some(true));
    let verdict = (!parts.is_empty()).then(|| Verdict {
        good,
        text: parts.join("; "),
    });
    let mut facts = Vec::new();
    fact(&mut facts, "utilization", doc, "utilization");
    fact(&mut facts, "processors", doc, "processors");
    let tasks = doc.get("tasks").and_then(Value::as_array);
    let distinct: Vec<&str> = tasks
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .fold(Vec::new(), |mut v, n| {
            if !v.contains(&n) {
                v.push(n);
            }
            v
        });
    if !distinct.is_empty() {
        facts.push(("tasks".into(), distinct.len().to_string()));
    }
    fact(&mut facts, "overheads", doc, "overheads");
    Headline { verdict, facts }
}

/// Per policy, in order: schedulable when one test proves it, not when a
/// test refutes it and none proves it, else no verdict (only sufficient
/// tests that failed). A multiprocessor analysis names no policy: its
/// tests' scheduler is the test's name up to the colon (`gedf` of
/// `gedf:bcl`, `pedf` of `pedf:ff-decreasing`).
fn policy_verdicts(tests: &[&Value]) -> Vec<(String, Option<bool>)> {
    let mut policies: Vec<(String, Option<bool>)> = Vec::new();
    for t in tests {
        let scheduler = t
            .get("test")
            .and_then(Value::as_str)
            .map(|name| name.split(':').next().unwrap_or(name));
        let Some(policy) = t.get("policy").and_then(Value::as_str).or(scheduler) else {
            continue;
        };
        let said = t.get("schedulable").and_then(Value::as_bool);
        match policies.iter_mut().find(|(p, _)| p == policy) {
            Some((_, verdict)) => {
                *verdict = match (*verdict, said) {
                    (Some(true), _) | (_, Some(true)) => Some(true),
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    _ => None,
                };
            }
            None => policies.push((policy.to_string(), said)),
        }
    }
    policies
}

/// `schedulable under rm, dm`, `not schedulable under edf`, ...
fn verdict_parts(policies: &[(String, Option<bool>)]) -> Vec<String> {
    let names = |want: Option<bool>| {
        policies
            .iter()
            .filter(|(_, v)| *v == want)
            .map(|(p, _)| p.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    [
        (Some(true), "schedulable under"),
        (Some(false), "not schedulable under"),
        (None, "no verdict under"),
    ]
    .into_iter()
    .filter_map(|(want, words)| {
        let n = names(want);
        (!n.is_empty()).then(|| format!("{words} {n}"))
    })
    .collect()
}

fn sweep(doc: &Value) -> Headline {
    let mut facts = Vec::new();
    fact(&mut facts, "tasks per set", doc, "tasks");
    fact(&mut facts, "sets per step", doc, "sets_per_step");
    let rows = doc.get("rows").and_then(Value::as_array);
    let us: Vec<f64> = rows
        .into_iter()
        .flatten()
        .filter_map(|r| num(r, "utilization"))
        .collect();
    if let (Some(lo), Some(hi)) = (
        us.iter().copied().reduce(f64::min),
        us.iter().copied().reduce(f64::max),
    ) {
        facts.push((
            "utilization".into(),
            format!("{} to {}", human::percent(lo), human::percent(hi)),
        ));
    }
    if let Some(last) = rows.and_then(|r| r.last()) {
        if let Some(ratio) = last.get("ratio").and_then(Value::as_object) {
            let best = ratio
                .iter()
                .filter_map(|(k, v)| Some((k, v.as_f64()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((test, r)) = best {
                facts.push((
                    format!("accepted by {test} at the highest utilization (best test)"),
                    human::percent(r),
                ));
            }
        }
    }
    Headline {
        verdict: None,
        facts,
    }
}

fn latency(doc: &Value) -> Headline {
    let threads: Vec<&Value> = doc
        .get("threads")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let max = threads
        .iter()
        .filter_map(|t| num(t, "max_ns"))
        .reduce(f64::max);
    let min = threads
        .iter()
        .filter_map(|t| num(t, "min_ns"))
        .reduce(f64::min);
    let p99 = threads
        .iter()
        .filter_map(|t| num(t, "p99_ns"))
        .reduce(f64::max);
    let mut facts = Vec::new();
    if let Some(m) = max {
        facts.push(("worst wake-up latency".into(), human::duration_ns(m)));
    }
    if let Some(m) = p99 {
        facts.push(("p99 (worst thread)".into(), human::duration_ns(m)));
    }
    if let Some(m) = min {
        facts.push(("best".into(), human::duration_ns(m)));
    }
    facts.push(("threads".into(), threads.len().to_string()));
    fact(&mut facts, "measured", doc, "wall_ns");
    Headline {
        verdict: None,
        facts,
    }
}

/// Any other kind: its first few scalars, in human units.
fn generic(doc: &Value) -> Headline {
    let mut facts = Vec::new();
    if let Some(map) = doc.as_object() {
        for (k, v) in map.iter().filter(|(_, v)| !v.is_null()).take(6) {
            if let Some(text) = human::value(k, v).filter(|_| !v.is_object()) {
                facts.push((human::label(k), text));
            }
        }
    }
    Headline {
        verdict: misses_verdict(doc),
        facts,
    }
}

/// The host in one line: CPU, kernel, preemption, HZ, virtualization, RT
/// throttling (what changes a measurement's meaning), from the host
/// object the store records.
pub fn host_line(host: &Value) -> String {
    let text = |path: &[&str]| {
        let mut v = host;
        for p in path {
            v = v.get(p)?;
        }
        match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    };
    let mut parts = Vec::new();
    if let Some(cpu) = text(&["cpu_model"]) {
        let cpus = text(&["cpus"])
            .map(|n| format!(" × {n}"))
            .unwrap_or_default();
        parts.push(format!("{cpu}{cpus}"));
    }
    if let Some(release) = text(&["kernel", "release"]).or_else(|| text(&["kernel_release"])) {
        parts.push(format!("Linux {release}"));
    }
    let model = text(&["preemption", "model"]);
    let mode = text(&["preemption", "mode"]);
    match (model, mode) {
        (Some(model), Some(mode)) if model == "dynamic" => {
            parts.push(format!("PREEMPT_DYNAMIC (now {mode})"))
        }
        (Some(model), _) => parts.push(format!("preemption {model}")),
        (None, Some(mode)) => parts.push(format!("preemption {mode}")),
        _ => {}
    }
    if let Some(hz) = text(&["kernel", "hz"]) {
        parts.push(format!("HZ {hz}"));
    }
    match text(&["virtualization", "hypervisor"]) {
        Some(h) => parts.push(format!("virtual machine ({h})")),
        None if text(&["virtualization", "virtual_machine"]).as_deref() == Some("false") => {
            parts.push("bare metal".into())
        }
        None => {}
    }
    match host.get("rt_throttling").and_then(|t| t.get("limit")) {
        Some(Value::Number(n)) => parts.push(format!(
            "RT throttling at {}",
            human::percent(n.as_f64().unwrap_or(0.0))
        )),
        Some(Value::Null) => parts.push("RT throttling off".into()),
        _ => {}
    }
    if parts.is_empty() {
        "host not recorded".into()
    } else {
        parts.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_analysis_says_apart_what_holds_ideally_and_with_overheads() {
        let doc = json!({
            "overheads": "rtmach", "utilization": 0.8301,
            "tests": [
                {"policy": "rm", "test": "liu-layland", "schedulable": null},
                {"policy": "rm", "test": "rta", "schedulable": true},
                {"policy": "rm", "test": "rta-overheads", "schedulable": false},
                {"policy": "edf", "test": "edf-demand", "schedulable": true}
            ]
        });
        let v = analyze(&doc).verdict.unwrap();
        assert_eq!(
            v.text,
            "schedulable under rm, edf; with rtmach: not schedulable under rm"
        );
        assert!(!v.good);
    }

    #[test]
    fn a_disturbed_real_run_says_so_in_its_headline() {
        let doc = json!({
            "deadline_misses": 3, "first_miss_ns": 45_000_000,
            "disturbance": {"verdict": {"kind": "disturbed", "summary": "disturbed: CPU 1: 38 ms stolen by the host"}}
        });
        let h = of(&RunView::unsaved("run", doc));
        assert!(h
            .verdict
            .unwrap()
            .text
            .ends_with("(on a DISTURBED machine: see \"machine\")"));
        assert!(h.facts.contains(&(
            "machine".into(),
            "disturbed: CPU 1: 38 ms stolen by the host".into()
        )));
    }

    #[test]
    fn a_run_with_misses_names_the_first() {
        let v =
            misses_verdict(&json!({"deadline_misses": 4, "first_miss_ns": 45_000_000})).unwrap();
        assert_eq!(v.text, "4 deadline misses, the first at 45 ms");
        assert!(!v.good);
        assert!(misses_verdict(&json!({"deadline_misses": 0})).unwrap().good);
    }
}
