//! The document of `rtlab analyze --json` built from the suite's reports,
//! shared by the CLI and the Python bindings (`rtlab.analyze(...).to_dict()`
//! is the same document, key for key).

use rtlab_model::{Nanos, TaskSet};

use crate::overhead_rta::TimerModel;
use crate::schema::{
    linux_timer_fields, AnalyzeDocument, AnalyzedTask, BreakdownEntry, TestVerdict,
};
use crate::suite::{BreakdownRun, Options, PolicyReport};
use crate::Response;
use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};

/// The policies `--policy all` analyses, in report order: rm, dm, given
/// (only when every task has a priority), opa, edf.
pub fn all_policies(set: &TaskSet) -> Vec<AnalysedPolicy> {
    let mut all = vec![
        AnalysedPolicy::Fixed(PriorityAssignment::RateMonotonic),
        AnalysedPolicy::Fixed(PriorityAssignment::DeadlineMonotonic),
    ];
    if set.tasks.iter().all(|t| t.priority.is_some()) {
        all.push(AnalysedPolicy::Fixed(PriorityAssignment::Given));
    }
    all.push(AnalysedPolicy::Fixed(PriorityAssignment::Audsley));
    all.push(AnalysedPolicy::Edf);
    all
}

/// The `rtlab analyze --json` document of `reports` (one per policy) on
/// `set`, loaded from `origin`; `breakdowns` only with `--breakdown`.
pub fn analyze_document(
    origin: &str,
    set: &TaskSet,
    options: &Options,
    reports: &[PolicyReport],
    breakdowns: Option<&[BreakdownRun]>,
) -> AnalyzeDocument {
    let tests = reports
        .iter()
        .flat_map(|report| {
            report.runs.iter().map(move |run| {
                let (timer, periodic_tick_ns) = linux_timer_fields(run.timer);
                TestVerdict {
                    test: run.outcome.test.name(),
                    policy: report.policy.name(),
                    schedulable: run.outcome.schedulable,
                    tick_ns: run.timer.and_then(TimerModel::tick).map(Nanos::as_ns),
                    timer,
                    periodic_tick_ns,
                }
            })
        })
        .collect();
    let tasks = reports
        .iter()
        .flat_map(|report| {
            let exact = report.exact_outcome();
            set.tasks.iter().enumerate().map(move |(i, task)| {
                let response = exact.responses.get(i).copied().unwrap_or(Response::Unknown);
                let schedulable = match (response, report.policy) {
                    (Response::Unknown, AnalysedPolicy::Edf) => exact.schedulable,
                    (r, _) => r.verdict(),
                };
                AnalyzedTask {
                    name: task.name.clone(),
                    policy: report.policy.name(),
                    priority: report.priorities.as_ref().map(|p| p.level(i)),
                    wcet_ns: task.wcet.as_ns(),
                    period_ns: task.period.as_ns(),
                    deadline_ns: task.deadline.as_ns(),
                    blocking_ns: report.blocking.get(i).map(|b| b.as_ns()),
                    wcrt_ns: response.wcrt().map(Nanos::as_ns),
                    schedulable,
                }
            })
        })
        .collect();
    AnalyzeDocument {
        taskset: set.name.clone(),
        origin: origin.to_string(),
        utilization: set.utilization(),
        overheads: options.overheads.as_ref().map(|o| o.name.clone()),
        tests,
        tasks,
        throttling: options
            .overheads
            .as_ref()
            .filter(|o| !o.throttling.is_none())
            .map(|o| o.throttling.to_string()),
        breakdown: breakdowns.map(|breakdowns| {
            breakdowns
                .iter()
                .map(|b| {
                    let (timer, periodic_tick_ns) = linux_timer_fields(b.timer);
                    BreakdownEntry {
                        policy: b.policy.name(),
                        overheads: b.overheads.clone(),
                        tick_ns: b.tick.map(Nanos::as_ns),
                        timer,
                        periodic_tick_ns,
                        utilization: b.result.map(|r| r.utilization),
                        scale: b.result.map(|r| r.scale),
                    }
                })
                .collect()
        }),
    }
}
