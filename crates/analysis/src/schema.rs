//! The JSON documents of `rtlab analyze --json` and `rtlab sweep --json`
//! (README, "JSON outputs"), as plain structs that serialize with serde.
//!
//! Fields are declared in **alphabetical order**: these documents used to
//! be `serde_json::Value` objects, which sort their keys (the workspace does
//! not enable serde_json's `preserve_order`), and the documented output must
//! not change by a byte. Maps keyed by a test name are `BTreeMap`s for the
//! same reason.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::overhead_rta::TimerModel;

/// The `timer` and `periodic_tick_ns` fields of an overhead-aware result:
/// set for Linux's model ([`TimerModel::Hrtimer`]) only, so that documents
/// with the tick-driven or tickless model (which `tick_ns` describes) read
/// exactly as before the model existed.
pub fn linux_timer_fields(timer: Option<TimerModel>) -> (Option<String>, Option<u64>) {
    match timer {
        Some(t @ TimerModel::Hrtimer { tick }) => (Some(t.to_string()), tick.map(|t| t.as_ns())),
        _ => (None, None),
    }
}

/// `rtlab analyze --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnalyzeDocument {
    /// Breakdown utilizations, present only with `--breakdown`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Vec<BreakdownEntry>>,
    /// Where the task set came from (a path or `builtin:NAME`).
    pub origin: String,
    /// The overheads profile's name, if any.
    pub overheads: Option<String>,
    /// One row per task and policy, with the exact test's response times.
    pub tasks: Vec<AnalyzedTask>,
    /// The task set's name.
    pub taskset: String,
    /// One row per test run, in the order run.
    pub tests: Vec<TestVerdict>,
    /// Linux's limits the overhead-aware tests charge (the overheads
    /// file's `[throttling]`, `rt 950ms per 1s, fair server 50ms per 1s`);
    /// absent when it states none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttling: Option<String>,
    /// The task set's utilization `Σ Ci/Ti`.
    pub utilization: f64,
}

/// One breakdown utilization of `rtlab analyze --breakdown`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakdownEntry {
    /// The overheads profile's name (`None`: ideal analysis).
    pub overheads: Option<String>,
    /// The periodic tick of Linux's model (`hrtimer + tick`); absent for
    /// the other models.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub periodic_tick_ns: Option<u64>,
    /// The policy's name.
    pub policy: &'static str,
    /// The largest schedulable scale of the execution times.
    pub scale: Option<f64>,
    /// The tick of the timer-driven model, if any.
    pub tick_ns: Option<u64>,
    /// Linux's timer model, `hrtimer` or `hrtimer + tick 4ms`; absent for
    /// the tick-driven and tickless models (`tick_ns` says which).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<String>,
    /// The breakdown utilization (`None`: no scale is schedulable).
    pub utilization: Option<f64>,
}

/// One task's row of `rtlab analyze --json` under one policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnalyzedTask {
    /// Its blocking term `Bi`, when the policy computes one.
    pub blocking_ns: Option<u64>,
    /// Its relative deadline `Di`.
    pub deadline_ns: u64,
    /// Its name.
    pub name: String,
    /// Its period `Ti`.
    pub period_ns: u64,
    /// The policy's name.
    pub policy: &'static str,
    /// Its priority level under a fixed-priority policy.
    pub priority: Option<u32>,
    /// The verdict for this task (`None`: inconclusive).
    pub schedulable: Option<bool>,
    /// Its execution time `Ci`.
    pub wcet_ns: u64,
    /// Its worst-case response time, when the exact test computed it.
    pub wcrt_ns: Option<u64>,
}

/// One test's verdict in `rtlab analyze --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestVerdict {
    /// The periodic tick of Linux's model (`hrtimer + tick`); absent for
    /// the other models.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub periodic_tick_ns: Option<u64>,
    /// The policy's name.
    pub policy: &'static str,
    /// The verdict (`None`: inconclusive).
    pub schedulable: Option<bool>,
    /// The test's name.
    pub test: &'static str,
    /// The tick of the timer-driven model, if any.
    pub tick_ns: Option<u64>,
    /// Linux's timer model, `hrtimer` or `hrtimer + tick 4ms`; absent for
    /// the tick-driven and tickless models (`tick_ns` says which).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<String>,
}

/// `rtlab sweep --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepDocument {
    /// Processors m, absent on one (the utilization steps are the total U;
    /// plots draw U/m).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// The deadline model of the generator.
    pub deadlines: String,
    /// The utilization method of the generator.
    pub method: String,
    /// The periodic tick of Linux's model for the overhead-aware tests;
    /// absent for the other models.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub periodic_tick_ns: Option<u64>,
    /// One row per utilization step.
    pub rows: Vec<SweepRowDocument>,
    /// The generator's seed.
    pub seed: u64,
    /// Task sets per step.
    pub sets_per_step: u64,
    /// How the sets share resources (locking sweeps); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<crate::sweep::SharingSpec>,
    /// Tasks per set.
    pub tasks: usize,
    /// The tests' names, in column order.
    pub tests: Vec<String>,
    /// Linux's timer model of the overhead-aware tests (`hrtimer + tick
    /// 4ms`); absent for the tick-driven and tickless models.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<String>,
}

/// One utilization step of `rtlab sweep --json`, keyed by test name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRowDocument {
    /// Sets each test accepted.
    pub accepted: BTreeMap<String, u64>,
    /// Sets each test could not decide.
    pub inconclusive: BTreeMap<String, u64>,
    /// `accepted / sets` per test.
    pub ratio: BTreeMap<String, f64>,
    /// Sets generated at this step.
    pub sets: u64,
    /// The step's total utilization.
    pub utilization: f64,
}

/// `rtlab analyze --json` on more than one processor (or with `--test`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultiprocessorAnalyzeDocument {
    /// Per processor of the set's own `cpu` assignment (every task has a
    /// `cpu`), each with the P-EDF and P-DM verdicts; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignment: Option<Vec<ProcessorDocument>>,
    /// Where the task set came from.
    pub origin: String,
    /// The number of processors `m` analysed.
    pub processors: u32,
    /// One row per task.
    pub tasks: Vec<MultiprocessorTaskDocument>,
    /// The task set's name.
    pub taskset: String,
    /// One row per test, in the order run.
    pub tests: Vec<MultiprocessorTestDocument>,
    /// `Σ Ci/Ti`.
    pub utilization: f64,
}

/// One test of [`MultiprocessorAnalyzeDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultiprocessorTestDocument {
    /// The processor of each task in the partition found (partitioned
    /// tests that placed every task); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignment: Option<Vec<u32>>,
    /// The response-time analysis reached its work cap
    /// ([`crate::global::WORK_CAP`]) and gave up: `schedulable` is `null`
    /// for that reason. Absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gave_up: bool,
    /// The paper.
    pub paper: &'static str,
    /// `true` proven, `null` not proven, `false` infeasible (`U > m`).
    pub schedulable: Option<bool>,
    /// The test's name (`gedf:bcl`, `pedf:ff-decreasing`, ...).
    pub test: String,
    /// Partitioned tests: the first task no processor admitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unplaced: Option<String>,
}

/// One task of [`MultiprocessorAnalyzeDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultiprocessorTaskDocument {
    /// Its `cpu` field, if any.
    pub cpu: Option<u32>,
    /// `Di`.
    pub deadline_ns: u64,
    /// Its name.
    pub name: String,
    /// `Ti`.
    pub period_ns: u64,
    /// Response-time bound per RTA test name (`null`: not bounded within D).
    pub response_ns: BTreeMap<String, Option<u64>>,
    /// Devi & Anderson's G-EDF tardiness bound (implicit deadlines, U <= m).
    pub tardiness_bound_ns: Option<u64>,
    /// `Ci`.
    pub wcet_ns: u64,
}

/// One processor of a partition (`rtlab partition`, `analyze` on a set
/// with `cpu` fields).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessorDocument {
    /// The processor's number.
    pub cpu: u32,
    /// The verdict of each uniprocessor test on its tasks, by test name.
    pub schedulable: BTreeMap<String, Option<bool>>,
    /// Its tasks' names, in set order.
    pub tasks: Vec<String>,
    /// `Σ Ci/Ti` of its tasks.
    pub utilization: f64,
}

/// `rtlab partition --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionDocument {
    /// True when every task was placed.
    pub fits: bool,
    /// The heuristic's name.
    pub heuristic: String,
    /// Where the task set came from.
    pub origin: String,
    /// One row per processor.
    pub processors: Vec<ProcessorDocument>,
    /// Each task and its processor (`null`: not placed).
    pub tasks: Vec<PlacedTaskDocument>,
    /// The task set's name.
    pub taskset: String,
    /// The uniprocessor test admitting each processor (`edf:edf-demand`).
    pub test: String,
    /// The first task no processor admitted.
    pub unplaced: Option<String>,
}

/// One task of [`PartitionDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacedTaskDocument {
    /// Its processor, `null` when not placed.
    pub cpu: Option<u32>,
    /// Its name.
    pub name: String,
    /// `Ci/Ti`.
    pub utilization: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::schema::keys_in_sorted_order;

    #[test]
    fn analyze_document_fields_are_in_sorted_order() {
        let doc = AnalyzeDocument {
            breakdown: Some(vec![BreakdownEntry {
                overheads: Some("rtmach".into()),
                periodic_tick_ns: Some(1),
                policy: "rm",
                scale: Some(1.5),
                tick_ns: Some(1),
                timer: Some("hrtimer + tick 1ns".into()),
                utilization: Some(0.9),
            }]),
            origin: "builtin:x".into(),
            overheads: None,
            tasks: vec![AnalyzedTask {
                blocking_ns: Some(1),
                deadline_ns: 2,
                name: "a".into(),
                period_ns: 3,
                policy: "rm",
                priority: Some(1),
                schedulable: Some(true),
                wcet_ns: 1,
                wcrt_ns: Some(1),
            }],
            taskset: "x".into(),
            tests: vec![TestVerdict {
                periodic_tick_ns: Some(1),
                policy: "rm",
                schedulable: None,
                test: "rta",
                tick_ns: None,
                timer: Some("hrtimer + tick 1ns".into()),
            }],
            throttling: Some("rt 950ms per 1s".into()),
            utilization: 0.5,
        };
        assert!(keys_in_sorted_order(&doc));
        let without = AnalyzeDocument {
            breakdown: None,
            ..doc
        };
        assert!(!serde_json::to_string(&without)
            .unwrap()
            .contains("breakdown"));
    }

    #[test]
    fn multiprocessor_documents_are_in_sorted_order() {
        let processor = ProcessorDocument {
            cpu: 0,
            schedulable: BTreeMap::from([("edf:edf-demand".to_string(), Some(true))]),
            tasks: vec!["a".into()],
            utilization: 0.5,
        };
        assert!(keys_in_sorted_order(&MultiprocessorAnalyzeDocument {
            assignment: Some(vec![processor.clone()]),
            origin: "o".into(),
            processors: 2,
            tasks: vec![MultiprocessorTaskDocument {
                cpu: Some(0),
                deadline_ns: 1,
                name: "a".into(),
                period_ns: 1,
                response_ns: BTreeMap::from([("gedf:rta".to_string(), Some(1))]),
                tardiness_bound_ns: None,
                wcet_ns: 1,
            }],
            taskset: "s".into(),
            tests: vec![MultiprocessorTestDocument {
                assignment: Some(vec![0]),
                gave_up: true,
                paper: "p",
                schedulable: None,
                test: "pedf:ff".into(),
                unplaced: Some("a".into()),
            }],
            utilization: 0.5,
        }));
        assert!(keys_in_sorted_order(&PartitionDocument {
            fits: true,
            heuristic: "ff".into(),
            origin: "o".into(),
            processors: vec![processor],
            tasks: vec![PlacedTaskDocument {
                cpu: None,
                name: "a".into(),
                utilization: 0.5,
            }],
            taskset: "s".into(),
            test: "edf:edf-demand".into(),
            unplaced: None,
        }));
    }

    #[test]
    fn sweep_document_fields_are_in_sorted_order() {
        let by_test = |v| BTreeMap::from([("rm rta".to_string(), v), ("edf".to_string(), v)]);
        assert!(keys_in_sorted_order(&SweepDocument {
            cpus: Some(4),
            deadlines: "implicit".into(),
            method: "uunifast".into(),
            rows: vec![SweepRowDocument {
                accepted: by_test(1),
                inconclusive: by_test(0),
                ratio: BTreeMap::from([("edf".to_string(), 0.5)]),
                sets: 2,
                utilization: 0.7,
            }],
            seed: 1,
            sets_per_step: 2,
            sharing: Some(crate::sweep::SharingSpec::default()),
            tasks: 3,
            tests: vec!["edf".into()],
            periodic_tick_ns: Some(1),
            timer: Some("hrtimer".into()),
        }));
    }
}
