//! A real run held against a simulation of it (`rtlab compare`): per task,
//! real and simulated misses, response times and preemptions side by side,
//! the differences beyond a tolerance, and whether the misses agree.
//!
//! It lives with the result model because it compares two values of the
//! one per-task type, [`TaskMetrics`], whichever world produced them; the
//! simulator and the executor need not know each other.

use serde::Serialize;

use super::metrics::TaskMetrics;

/// A response-time difference below this never counts (timer noise).
pub const ABSOLUTE_FLOOR_NS: u64 = 100_000;

/// One task, real against simulated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskComparison {
    /// Task name.
    pub name: String,
    /// Deadline misses (real, simulated).
    pub misses: (u64, u64),
    /// Longest response (real, simulated).
    pub max_response_ns: (Option<u64>, Option<u64>),
    /// Mean response (real, simulated).
    pub mean_response_ns: (Option<u64>, Option<u64>),
    /// Preemptions (real involuntary switches during jobs, simulated preemptions).
    pub preemptions: (u64, u64),
    /// Real max response minus simulated (ns; null when either is missing).
    pub max_response_delta_ns: Option<i64>,
    /// Longest lock wait of a job (real: time inside `pthread_mutex_lock`;
    /// simulated: time blocked on a resource); absent from the JSON for a
    /// task without critical sections. Reported, never a difference: the
    /// real figure includes the lock calls' own cost and the simulator's is
    /// 0 whenever a protocol keeps the job from asking (IPCP).
    #[serde(skip_serializing_if = "neither")]
    pub max_blocked_ns: (Option<u64>, Option<u64>),
    /// Migrations (real: jobs that finished on another CPU than they
    /// started on; simulated: resumptions on another processor); absent
    /// from the JSON when both are 0 (always on one CPU).
    #[serde(skip_serializing_if = "both_zero")]
    pub migrations: (u64, u64),
    /// The fields that differ beyond the tolerance: `misses`,
    /// `max_response`, `mean_response`.
    pub differences: Vec<String>,
}

fn both_zero(pair: &(u64, u64)) -> bool {
    *pair == (0, 0)
}

fn neither(pair: &(Option<u64>, Option<u64>)) -> bool {
    pair.0.is_none() && pair.1.is_none()
}

impl TaskComparison {
    /// True when either side has a lock wait (the task has critical sections).
    pub fn locks(&self) -> bool {
        !neither(&self.max_blocked_ns)
    }

    /// True when the real and simulated runs missed as often.
    pub fn misses_agree(&self) -> bool {
        self.misses.0 == self.misses.1
    }
}

/// The comparison document (`rtlab compare --json`): the verdict per task
/// and both runs whole, `R` the real run's report and `S` the simulation's.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison<R, S> {
    /// The task set's name.
    pub taskset: String,
    /// The real run's policy.
    pub policy: String,
    /// The simulator's scheduler.
    pub scheduler: String,
    /// Whether real and simulated runs agree on the misses of every task.
    pub misses_agree: bool,
    /// Per task.
    pub tasks: Vec<TaskComparison>,
    /// The real run.
    pub real: R,
    /// The simulation.
    pub sim: S,
    /// Job for job (a run by the dispatcher against the simulation of the
    /// same scheduler); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<super::JobAgreement>,
}

/// Compares one task; `tolerance` is relative (0.1 = 10%). Misses differ
/// when they are not equal; a response time differs when exactly one side
/// has one, or when they differ by more than [`ABSOLUTE_FLOOR_NS`] *and* by
/// more than `tolerance` times the simulated value.
pub fn compare_task(real: &TaskMetrics, sim: &TaskMetrics, tolerance: f64) -> TaskComparison {
    let mut differences = Vec::new();
    if real.misses != sim.misses {
        differences.push("misses".to_string());
    }
    let off = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => {
            let d = a.abs_diff(b);
            d > ABSOLUTE_FLOOR_NS && d as f64 > tolerance * b as f64
        }
        (None, None) => false,
        _ => true,
    };
    if off(real.max_response_ns, sim.max_response_ns) {
        differences.push("max_response".to_string());
    }
    if off(real.mean_response_ns, sim.mean_response_ns) {
        differences.push("mean_response".to_string());
    }
    TaskComparison {
        name: real.name.clone(),
        misses: (real.misses, sim.misses),
        max_response_ns: (real.max_response_ns, sim.max_response_ns),
        mean_response_ns: (real.mean_response_ns, sim.mean_response_ns),
        preemptions: (real.preemptions, sim.preemptions),
        max_response_delta_ns: match (real.max_response_ns, sim.max_response_ns) {
            (Some(a), Some(b)) => Some(i64::try_from(i128::from(a) - i128::from(b)).unwrap_or(0)),
            _ => None,
        },
        max_blocked_ns: (real.max_blocked_ns, sim.max_blocked_ns),
        migrations: (real.migrations, sim.migrations),
        differences,
    }
}

/// Compares the tasks of two runs of one set pairwise, in declaration order
/// (a simulation's extra phase tasks, listed last, have no real pair and are
/// left out).
pub fn compare_tasks<'a, 'b>(
    real: impl IntoIterator<Item = &'a TaskMetrics>,
    sim: impl IntoIterator<Item = &'b TaskMetrics>,
    tolerance: f64,
) -> Vec<TaskComparison> {
    real.into_iter()
        .zip(sim)
        .map(|(r, s)| compare_task(r, s, tolerance))
        .collect()
}

impl<R, S> Comparison<R, S> {
    /// The document for `tasks` (from [`compare_tasks`]) and the two runs.
    pub fn new(
        taskset: String,
        policy: String,
        scheduler: String,
        tasks: Vec<TaskComparison>,
        real: R,
        sim: S,
    ) -> Self {
        Comparison {
            taskset,
            policy,
            scheduler,
            misses_agree: tasks.iter().all(TaskComparison::misses_agree),
            tasks,
            real,
            sim,
            jobs: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics(misses: u64, max: u64, mean: u64) -> TaskMetrics {
        TaskMetrics {
            name: "t".into(),
            misses,
            max_response_ns: Some(max),
            mean_response_ns: Some(mean),
            ..TaskMetrics::default()
        }
    }

    #[test]
    fn differences_need_both_the_relative_tolerance_and_the_floor() {
        // 50 us over 1 ms: 5%, and under the 100 us floor.
        let c = compare_task(
            &metrics(0, 1_050_000, 1_000_000),
            &metrics(0, 1_000_000, 1_000_000),
            0.1,
        );
        assert!(c.differences.is_empty());
        assert_eq!(c.max_response_delta_ns, Some(50_000));
        // 150 us over 1 ms: 15% and over the floor.
        let c = compare_task(
            &metrics(0, 1_150_000, 1_000_000),
            &metrics(0, 1_000_000, 1_000_000),
            0.1,
        );
        assert_eq!(c.differences, vec!["max_response"]);
        // 2 ms over 40 ms: 5%, over the floor but within the tolerance.
        let c = compare_task(
            &metrics(0, 42_000_000, 40_000_000),
            &metrics(0, 40_000_000, 40_000_000),
            0.1,
        );
        assert!(c.differences.is_empty());
    }

    #[test]
    fn any_difference_in_misses_counts() {
        let c = compare_task(&metrics(1, 10, 10), &metrics(0, 10, 10), 0.1);
        assert_eq!(c.differences, vec!["misses"]);
        assert_eq!(c.max_response_delta_ns, Some(0));
    }

    #[test]
    fn a_response_on_one_side_only_differs() {
        let none = TaskMetrics::default();
        let c = compare_task(&metrics(0, 10, 10), &none, 0.1);
        assert_eq!(c.differences, vec!["max_response", "mean_response"]);
        assert_eq!(c.max_response_delta_ns, None);
    }

    #[test]
    fn the_verdict_agrees_only_when_every_task_does() {
        let real = [metrics(0, 10, 10), metrics(2, 10, 10)];
        let sim = [metrics(0, 10, 10), metrics(2, 10, 10), metrics(5, 1, 1)];
        let tasks = compare_tasks(&real, &sim, 0.1);
        assert_eq!(tasks.len(), 2, "the phase task has no real pair");
        let c = Comparison::new("s".into(), "rm".into(), "fp:rm".into(), tasks, (), ());
        assert!(c.misses_agree);
        let c = Comparison::new(
            "s".into(),
            "rm".into(),
            "fp:rm".into(),
            compare_tasks(&real, &[metrics(0, 10, 10), metrics(1, 10, 10)], 0.1),
            (),
            (),
        );
        assert!(!c.misses_agree);
    }

    #[test]
    fn lock_waits_are_shown_side_by_side_and_absent_without_sections() {
        let real = TaskMetrics {
            max_blocked_ns: Some(9_200_000),
            ..metrics(0, 15_000_000, 15_000_000)
        };
        let sim = TaskMetrics {
            max_blocked_ns: Some(9_000_000),
            ..metrics(0, 15_000_000, 15_000_000)
        };
        let c = compare_task(&real, &sim, 0.1);
        assert_eq!(c.max_blocked_ns, (Some(9_200_000), Some(9_000_000)));
        assert!(c.locks() && c.differences.is_empty());
        let plain = compare_task(&metrics(0, 1, 1), &metrics(0, 1, 1), 0.1);
        assert!(!plain.locks());
        let json = serde_json::to_string(&plain).unwrap();
        assert!(!json.contains("blocked"), "{json}");
    }
}
