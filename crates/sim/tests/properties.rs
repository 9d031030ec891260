//! Property tests tying the simulator to the analysis (SchedCAT's use of a
//! simulator: to falsify analyses). Synchronous release, WCET execution,
//! implicit deadlines, one hyperperiod.

use proptest::prelude::*;
use rtlab_model::{Nanos, Task, TaskSet};
use rtlab_sim::{simulate, SchedulerSpec, SimConfig};

/// Periods whose hyperperiod is at most 120 us, so a run is tiny.
const PERIODS_US: [u64; 10] = [4, 5, 6, 8, 10, 12, 15, 20, 24, 30];

fn task_sets() -> impl Strategy<Value = TaskSet> {
    prop::collection::vec((0..PERIODS_US.len(), 1u64..=600), 1..=6).prop_map(|specs| {
        let tasks = specs
            .into_iter()
            .enumerate()
            .map(|(i, (p, per_mille))| {
                let period = Nanos::from_us(PERIODS_US[p]);
                let wcet = (period.as_ns() * per_mille / 1000).max(1);
                Task::new(format!("t{i}"), period, Nanos::from_ns(wcet))
            })
            .collect();
        TaskSet::new("prop", tasks)
    })
}

/// Exact response-time analysis (Joseph & Pandya 1986) with RM priorities,
/// ties by declaration order: `R = C_i + Σ_{j in hp(i)} ⌈R / T_j⌉ C_j`.
/// `None` when the iteration passes the deadline.
fn rta(set: &TaskSet) -> Vec<Option<u64>> {
    let t = &set.tasks;
    (0..t.len())
        .map(|i| {
            let hp: Vec<usize> = (0..t.len())
                .filter(|&j| (t[j].period, t[j].deadline, j) < (t[i].period, t[i].deadline, i))
                .collect();
            let mut r = t[i].wcet.as_ns();
            loop {
                let next = t[i].wcet.as_ns()
                    + hp.iter()
                        .map(|&j| r.div_ceil(t[j].period.as_ns()) * t[j].wcet.as_ns())
                        .sum::<u64>();
                if next > t[i].deadline.as_ns() {
                    return None;
                }
                if next == r {
                    return Some(r);
                }
                r = next;
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// EDF misses a deadline over the hyperperiod iff U > 1 (implicit
    /// deadlines: the demand test reduces to the utilization test).
    #[test]
    fn edf_misses_iff_utilization_exceeds_one(set in task_sets()) {
        let h = set.hyperperiod().unwrap();
        let demand: u64 = set.tasks.iter().map(|t| h.as_ns() / t.period.as_ns() * t.wcet.as_ns()).sum();
        let report = simulate(&set, &SchedulerSpec::Edf, &SimConfig::new(h)).unwrap();
        prop_assert_eq!(report.deadline_misses > 0, demand > h.as_ns(), "demand {} in {}", demand, h);
    }

    /// Preemptive RM misses iff RTA says unschedulable, and when it is
    /// schedulable the largest observed response of each task equals its
    /// RTA bound (the synchronous release is the critical instant).
    #[test]
    fn rm_matches_response_time_analysis(set in task_sets()) {
        let h = set.hyperperiod().unwrap();
        let bounds = rta(&set);
        let report = simulate(&set, &"fp:rm".parse().unwrap(), &SimConfig::new(h)).unwrap();
        let schedulable = bounds.iter().all(Option::is_some);
        prop_assert_eq!(report.deadline_misses == 0, schedulable);
        if schedulable {
            for (m, r) in report.tasks.iter().zip(&bounds) {
                prop_assert_eq!(m.max_response_ns, *r, "task {}", m.name);
            }
        }
    }

    /// No policy loses or invents work: every released job is completed or
    /// still there at the end, and busy time never exceeds the run.
    #[test]
    fn every_policy_conserves_jobs(set in task_sets(), which in 0usize..7) {
        let spec = ["fp:rm", "fp:dm", "edf", "fifo", "np-edf", "rr:3us", "hybrid"][which];
        let h = set.hyperperiod().unwrap();
        let report = simulate(&set, &spec.parse().unwrap(), &SimConfig::new(h)).unwrap();
        let unfinished: u64 = report.tasks.iter().map(|t| t.unfinished).sum();
        prop_assert_eq!(report.released, report.completed + unfinished);
        let work: u64 = set.tasks.iter().map(|t| h.as_ns() / t.period.as_ns() * t.wcet.as_ns()).sum();
        prop_assert!(report.idle_ns <= h.as_ns());
        prop_assert!(report.idle_ns + work >= h.as_ns(), "executed more than released");
    }
}
