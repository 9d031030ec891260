//! One result model for every way rtlab runs a task set: the simulator and
//! the real-thread executor both produce [`JobRecord`]s, fold them into a
//! [`TaskSummary`] online (O(1) per job, no stored jobs), and report the
//! same per-task [`TaskMetrics`] and run [`Totals`]; [`compare`] holds a
//! real run against a simulation of it.
//!
//! All times are nanoseconds since the run's start.

pub mod compare;
pub mod drift;
mod job;
pub mod job_compare;
mod metrics;
pub mod schedule;
mod series;
pub mod sim_report;
mod sink;
mod summary;

pub use compare::{compare_task, compare_tasks, Comparison, TaskComparison};
pub use job::JobRecord;
pub use job_compare::{compare_jobs, pair_jobs, JobAgreement, JobDifference};
pub use metrics::{TaskMetrics, Totals};
pub use schedule::{ScheduleSpan, ScheduleWindow, SpanKind, SpanSource};
pub use series::SeriesPoint;
pub use sim_report::{SimReport, ThrottlingReport};
pub use sink::{EachJob, JobSink};
pub use summary::TaskSummary;

/// For `skip_serializing_if`: a counter that is 0 is left out of the JSON
/// (fields added for multiprocessor runs keep uniprocessor output as it was).
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}
