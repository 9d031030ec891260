//! Properties that tie the tests together, and a brute-force simulator
//! (1 ns steps, synchronous release) that the exact tests must agree with.

use proptest::prelude::*;
use rtlab_analysis::blocking::EdfBlocking;
use rtlab_analysis::priority::{assign, Priorities};
use rtlab_analysis::{
    audsley, edf_demand, edf_utilization, hyperbolic, liu_layland, rta, Response,
};
use rtlab_model::policy::PriorityAssignment;
use rtlab_model::{CriticalSection, Nanos, Task, TaskSet};

/// `(C, T, D)` triples in ns with small periods (short hyperperiods).
fn task_set(max_tasks: usize, deadlines: Deadlines) -> impl Strategy<Value = TaskSet> {
    prop::collection::vec((2u64..=12, 1u64..=100, 0u64..=100), 1..=max_tasks).prop_map(move |raw| {
        let tasks = raw
            .iter()
            .enumerate()
            .map(|(i, &(t, c_pct, d_pct))| {
                let c = (t * c_pct).div_ceil(100).clamp(1, t);
                let d = match deadlines {
                    Deadlines::Implicit => t,
                    Deadlines::Constrained => c + (t - c) * d_pct / 100,
                    Deadlines::Arbitrary => c + (2 * t - c) * d_pct / 100,
                };
                Task::new(format!("t{i}"), Nanos::from_ns(t), Nanos::from_ns(c))
                    .with_deadline(Nanos::from_ns(d))
            })
            .collect();
        TaskSet::new("p", tasks)
    })
}

/// Up to 4 tasks with small periods, arbitrary deadlines, release jitter
/// below the deadline and, for some, one critical section on a shared
/// resource.
fn demand_task_set() -> impl Strategy<Value = TaskSet> {
    let task = (
        2u64..=24,
        1u64..=60,
        0u64..=100,
        0u64..=100,
        prop::option::of((0u64..=100, 1u64..=100)),
    );
    prop::collection::vec(task, 1..=4).prop_map(|raw| {
        let tasks = raw
            .iter()
            .enumerate()
            .map(|(i, &(t, c_pct, d_pct, j_pct, cs))| {
                let c = (t * c_pct).div_ceil(100).clamp(1, t);
                let d = c + (2 * t - c) * d_pct / 100;
                let mut task = Task::new(format!("t{i}"), Nanos::from_ns(t), Nanos::from_ns(c))
                    .with_deadline(Nanos::from_ns(d));
                task.jitter = Nanos::from_ns((d - 1) * j_pct / 100 / 2);
                if let Some((start_pct, len_pct)) = cs {
                    let start = (c - 1) * start_pct / 100;
                    let length = ((c - start) * len_pct).div_ceil(100).max(1);
                    task.critical_sections = vec![CriticalSection {
                        resource: "r".into(),
                        start: Nanos::from_ns(start),
                        length: Nanos::from_ns(length),
                    }];
                }
                task
            })
            .collect();
        TaskSet::new("demand", tasks)
    })
}

/// The processor-demand criterion by brute force: `U > 1` (exactly, over
/// the hyperperiod) fails; otherwise `h(t) + B(t) <= t` at every integer `t`
/// up to two hyperperiods past the last deadline, `h` counted job by job as
/// their deadlines pass.
fn demand_by_brute_force(set: &TaskSet, blocking: &EdfBlocking) -> bool {
    let h = set.hyperperiod().unwrap().as_ns();
    let work: u64 = set
        .tasks
        .iter()
        .map(|t| h / t.period.as_ns() * t.wcet.as_ns())
        .sum();
    if work > h {
        return false;
    }
    let last = set.tasks.iter().map(|t| t.deadline.as_ns()).max().unwrap();
    // The next deadline of each task's jobs, from the synchronous release.
    let mut next: Vec<u64> = set
        .tasks
        .iter()
        .map(|t| (t.deadline - t.jitter).as_ns())
        .collect();
    let mut demand = 0;
    (1..=2 * h + last).all(|t| {
        for (deadline, task) in next.iter_mut().zip(&set.tasks) {
            if *deadline == t {
                demand += task.wcet.as_ns();
                *deadline += task.period.as_ns();
            }
        }
        demand == 0 || demand + blocking.at(t) <= t
    })
}

#[derive(Debug, Clone, Copy)]
enum Deadlines {
    Implicit,
    Constrained,
    Arbitrary,
}

fn zeros(set: &TaskSet) -> Vec<Nanos> {
    vec![Nanos::ZERO; set.tasks.len()]
}

fn rta_verdict(set: &TaskSet, p: &Priorities) -> Option<bool> {
    rta::analyse(set, p, &zeros(set)).schedulable
}

/// Worst response time per task over the jobs released in the first
/// hyperperiod of the synchronous schedule (`None`: not all finished).
/// `priority` orders the ready jobs: `Some(levels)` fixed priorities (FIFO
/// per task), `None` EDF (ties to the earlier release, then lower index).
fn simulate(set: &TaskSet, priority: Option<&Priorities>) -> Vec<Option<u64>> {
    let n = set.tasks.len();
    let h = set.hyperperiod().unwrap().as_ns();
    let horizon = 4 * h + 64;
    // (task, release, remaining)
    let mut ready: Vec<(usize, u64, u64)> = Vec::new();
    let mut worst = vec![Some(0u64); n];
    let mut pending_in_first = vec![0usize; n];
    for now in 0..horizon {
        for (i, t) in set.tasks.iter().enumerate() {
            if now < h && now % t.period.as_ns() == 0 {
                ready.push((i, now, t.wcet.as_ns()));
                pending_in_first[i] += 1;
            }
        }
        let pick = ready
            .iter()
            .enumerate()
            .min_by_key(|&(_, &(i, rel, _))| match priority {
                Some(p) => (u64::from(u32::MAX - p.level(i)), rel, i as u64),
                None => (rel + set.tasks[i].deadline.as_ns(), rel, i as u64),
            })
            .map(|(k, _)| k);
        if let Some(k) = pick {
            ready[k].2 -= 1;
            if ready[k].2 == 0 {
                let (i, rel, _) = ready.remove(k);
                let r = now + 1 - rel;
                worst[i] = worst[i].map(|w| w.max(r));
                pending_in_first[i] -= 1;
            }
        }
        if now >= h && ready.is_empty() {
            break;
        }
    }
    for i in 0..n {
        if pending_in_first[i] > 0 {
            worst[i] = None;
        }
    }
    worst
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Liu & Layland or hyperbolic accept ⇒ RTA accepts; hyperbolic
    /// dominates LL.
    #[test]
    fn bounds_imply_rta(set in task_set(6, Deadlines::Implicit)) {
        let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
        let z = zeros(&set);
        let ll = liu_layland::analyse(&set, &p, &z).schedulable;
        let hb = hyperbolic::analyse(&set, &p, &z).schedulable;
        if ll == Some(true) {
            prop_assert_eq!(hb, Some(true));
        }
        if ll == Some(true) || hb == Some(true) {
            prop_assert_eq!(rta_verdict(&set, &p), Some(true));
        }
    }

    /// EDF demand accepts whenever a fixed-priority test accepts.
    #[test]
    fn edf_dominates_fixed_priorities(set in task_set(5, Deadlines::Arbitrary)) {
        let fp_ok = [PriorityAssignment::RateMonotonic, PriorityAssignment::DeadlineMonotonic]
            .into_iter()
            .any(|rule| rta_verdict(&set, &assign(&set, rule).unwrap()) == Some(true))
            || audsley::assign(&set).is_some();
        if fp_ok {
            prop_assert_eq!(edf_demand::verdict(&set, &EdfBlocking::none()), Some(true));
        }
    }

    /// OPA succeeds whenever DM does, and exactly when some order passes
    /// RTA (brute force over all orders).
    #[test]
    fn opa_is_optimal(set in task_set(4, Deadlines::Arbitrary)) {
        let dm = assign(&set, PriorityAssignment::DeadlineMonotonic).unwrap();
        let opa = audsley::assign(&set);
        if rta_verdict(&set, &dm) == Some(true) {
            prop_assert!(opa.is_some());
        }
        if let Some(p) = &opa {
            prop_assert_eq!(rta_verdict(&set, p), Some(true));
        }
        let mut order: Vec<usize> = (0..set.tasks.len()).collect();
        let mut any = false;
        permute(&mut order, 0, &mut |o| {
            any |= rta_verdict(&set, &Priorities::from_order(o)) == Some(true);
        });
        prop_assert_eq!(opa.is_some(), any);
    }

    /// Deadline monotonic is optimal for constrained deadlines without
    /// jitter (Leung & Whitehead 1982): DM passes RTA iff OPA finds an order.
    #[test]
    fn dm_is_optimal_for_constrained_deadlines(set in task_set(5, Deadlines::Constrained)) {
        let dm = assign(&set, PriorityAssignment::DeadlineMonotonic).unwrap();
        prop_assert_eq!(rta_verdict(&set, &dm) == Some(true), audsley::assign(&set).is_some());
    }

    /// EDF utilization and demand agree on implicit deadlines.
    #[test]
    fn edf_utilization_equals_demand_for_implicit_deadlines(set in task_set(6, Deadlines::Implicit)) {
        let none = EdfBlocking::none();
        prop_assert_eq!(
            edf_utilization::utilization_verdict(&set, &none),
            edf_demand::verdict(&set, &none)
        );
    }

    /// RTA's response times are the simulated worst case (synchronous
    /// release is the critical instant), for any fixed-priority order.
    #[test]
    fn rta_matches_simulation(set in task_set(4, Deadlines::Arbitrary), rule in 0usize..2) {
        let p = assign(&set, [PriorityAssignment::RateMonotonic, PriorityAssignment::DeadlineMonotonic][rule]).unwrap();
        prop_assume!(set.utilization() <= 1.0);
        let simulated = simulate(&set, Some(&p));
        let analysed = rta::analyse(&set, &p, &zeros(&set)).responses;
        for (i, (sim, ana)) in simulated.iter().zip(&analysed).enumerate() {
            let d = set.tasks[i].deadline.as_ns();
            match ana {
                Response::Within(r) => prop_assert_eq!(*sim, Some(r.as_ns()), "task {}", i),
                Response::Exceeds => prop_assert!(sim.is_none_or(|s| s > d), "task {}: {:?}", i, sim),
                Response::Unknown => prop_assert!(false, "inconclusive"),
            }
        }
    }

    /// The EDF demand test agrees with an EDF simulation of the
    /// synchronous arrival sequence.
    #[test]
    fn edf_demand_matches_simulation(set in task_set(4, Deadlines::Arbitrary)) {
        prop_assume!(set.utilization() <= 1.0);
        let simulated = simulate(&set, None);
        let meets = simulated
            .iter()
            .zip(&set.tasks)
            .all(|(r, t)| r.is_some_and(|r| r <= t.deadline.as_ns()));
        prop_assert_eq!(edf_demand::verdict(&set, &EdfBlocking::none()), Some(meets));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// QPA with its interval bounds and forward scan decides every small set,
    /// and as the brute-force criterion does (jitter, arbitrary deadlines,
    /// SRP blocking, U on either side of 1).
    #[test]
    fn edf_demand_agrees_with_checking_every_point(set in demand_task_set()) {
        let blocking = EdfBlocking::of(&set);
        prop_assert_eq!(
            edf_demand::verdict(&set, &blocking),
            Some(demand_by_brute_force(&set, &blocking)),
            "{:?}", set
        );
        let none = EdfBlocking::none();
        prop_assert_eq!(
            edf_demand::verdict(&set, &none),
            Some(demand_by_brute_force(&set, &none))
        );
    }
}

fn permute(v: &mut Vec<usize>, k: usize, f: &mut impl FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permute(v, k + 1, f);
        v.swap(k, i);
    }
}
