//! Textbook examples with published or hand-derived response times.

use rtlab_analysis::blocking::{self, LockingProtocol};
use rtlab_analysis::priority::{assign, Priorities};
use rtlab_analysis::suite::{analyse, Options};
use rtlab_analysis::{audsley, edf_demand, rta, Response};
use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};
use rtlab_model::{CriticalSection, Nanos, Task, TaskSet};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

fn set_ms(tasks: &[(&str, u64, u64, u64)]) -> TaskSet {
    TaskSet::new(
        "t",
        tasks
            .iter()
            .map(|&(n, c, t, d)| Task::new(n, ms(t), ms(c)).with_deadline(ms(d)))
            .collect(),
    )
}

fn wcrts(set: &TaskSet, p: &Priorities) -> Vec<Response> {
    rta::analyse(set, p, &vec![Nanos::ZERO; set.tasks.len()]).responses
}

fn within(v: &[u64]) -> Vec<Response> {
    v.iter().map(|&r| Response::Within(ms(r))).collect()
}

/// Burns & Wellings, *Real-Time Systems and Programming Languages* (4th ed.,
/// §11.5): a (T=7, C=3), b (T=12, C=3), c (T=20, C=5), RM priorities;
/// R = 3, 6, 20 (c meets its deadline exactly: w = 5, 11, 14, 17, 20, 20).
#[test]
fn burns_wellings_three_tasks() {
    let set = set_ms(&[("a", 3, 7, 7), ("b", 3, 12, 12), ("c", 5, 20, 20)]);
    let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
    assert_eq!(wcrts(&set, &p), within(&[3, 6, 20]));
    // One nanosecond more for c and it misses.
    let mut worse = set.clone();
    worse.tasks[2].wcet = Nanos::from_ns(5_000_001);
    assert_eq!(wcrts(&worse, &p)[2], Response::Exceeds);
}

/// Buttazzo, *Hard Real-Time Computing Systems* (3rd ed., §4.5, response
/// time analysis): τ1 (C=1, T=4), τ2 (C=2, T=6), τ3 (C=3, T=10), RM; the
/// recurrence for τ3 runs 6, 7, 9, 10, 10, so R = 1, 3, 10.
#[test]
fn buttazzo_response_time_example() {
    let set = set_ms(&[("t1", 1, 4, 4), ("t2", 2, 6, 6), ("t3", 3, 10, 10)]);
    let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
    assert_eq!(wcrts(&set, &p), within(&[1, 3, 10]));
    // U = 0.8833 is above the LL bound (0.7798) and the hyperbolic product
    // (1.25 * 1.333 * 1.3 = 2.1667): both inconclusive, RTA exact.
    let report = analyse(
        &set,
        AnalysedPolicy::Fixed(PriorityAssignment::RateMonotonic),
        &Options::default(),
    )
    .unwrap();
    let verdicts: Vec<_> = report
        .runs
        .iter()
        .map(|r| (r.outcome.test.name(), r.outcome.schedulable))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("liu-layland", None),
            ("hyperbolic", None),
            ("rta", Some(true))
        ]
    );
}

/// Tindell, Burns & Wellings 1994 (also Burns & Wellings, §11.8, arbitrary
/// deadlines): τ1 (C=26, T=70) above τ2 (C=62, T=100). τ2's level-2 busy
/// period holds 7 jobs with R(q) = 114, 102, 116, 104, 118, 106, 94, so
/// R2 = 118 > T2.
#[test]
fn tindell_arbitrary_deadline_example() {
    let set = set_ms(&[("t1", 26, 70, 70), ("t2", 62, 100, 200)]);
    let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
    assert_eq!(wcrts(&set, &p), within(&[26, 118]));
    // A deadline of 117 is missed by the fifth job (q = 4) only.
    let mut tight = set.clone();
    tight.tasks[1].deadline = ms(117);
    assert_eq!(wcrts(&tight, &p)[1], Response::Exceeds);
    // With D = 116, checking only the first job (R(0) = 114) would wrongly pass.
    assert_eq!(
        rta::response_time(
            &rta::Analysed {
                wcet: 62,
                period: 100,
                deadline: 116,
                jitter: 0,
                blocking: 0
            },
            &[rta::Interferer {
                period: 70,
                jitter: 0,
                cost: 26
            }],
        ),
        Response::Exceeds
    );
}

/// Release jitter (Tindell, Burns & Wellings 1994, eq. for R = w + J):
/// τ1 (C=1, T=4, J=2) above τ2 (C=3, T=12). w2 = 3 + ⌈(w + 2)/4⌉ → 5,
/// R2 = 5; τ1's own R = 1 + 2 = 3.
#[test]
fn jitter_adds_to_response_and_interference() {
    let mut set = set_ms(&[("t1", 1, 4, 4), ("t2", 3, 12, 12)]);
    set.tasks[0].jitter = ms(2);
    let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
    assert_eq!(wcrts(&set, &p), within(&[3, 5]));
}

/// Deadline monotonic is not optimal when D > T (Lehoczky 1990): here DM
/// puts a (D=4) above b (D=5) and b misses (R = 6), while Audsley's OPA puts
/// b on top and both meet their deadlines (R = 4 and 3).
#[test]
fn audsley_finds_an_order_dm_misses() {
    let set = set_ms(&[("a", 1, 2, 4), ("b", 3, 6, 5)]);
    let dm = assign(&set, PriorityAssignment::DeadlineMonotonic).unwrap();
    assert_eq!(
        wcrts(&set, &dm),
        vec![Response::Within(ms(1)), Response::Exceeds]
    );
    let opa = audsley::assign(&set).unwrap();
    assert_eq!(opa.0, vec![1, 2]);
    assert_eq!(wcrts(&set, &opa), within(&[4, 3]));
    // And when nothing works, OPA says so.
    let impossible = set_ms(&[("a", 2, 3, 3), ("b", 2, 3, 3)]);
    assert_eq!(audsley::assign(&impossible), None);
}

/// Priority ceiling blocking (Sha, Rajkumar & Lehoczky 1990): H (1/10),
/// M (2/20), L (4/40) share `s` (H 0.5 ms, L 3 ms). Under PCP H and M are
/// blocked once by L's 3 ms section: R_H = 1 + 3 = 4, R_M = 1 + 2 + 3 = 6,
/// R_L = 4 + 1 + 2 = 7.
#[test]
fn ceiling_blocking_extends_response_times() {
    let mut set = set_ms(&[("H", 1, 10, 10), ("M", 2, 20, 20), ("L", 4, 40, 40)]);
    let cs = |start_us: u64, len_us: u64| CriticalSection {
        resource: "s".into(),
        start: Nanos::from_us(start_us),
        length: Nanos::from_us(len_us),
    };
    set.tasks[0].critical_sections = vec![cs(0, 500)];
    set.tasks[2].critical_sections = vec![cs(500, 3000)];
    let p = assign(&set, PriorityAssignment::RateMonotonic).unwrap();
    let b = blocking::fixed_priority(&set, &p, LockingProtocol::Ipcp);
    assert_eq!(b, vec![ms(3), ms(3), ms(0)]);
    assert_eq!(rta::analyse(&set, &p, &b).responses, within(&[4, 6, 7]));
}

/// EDF with constrained deadlines (Buttazzo §4.6 processor demand): τ1
/// (C=2, D=4, T=6), τ2 (C=2, D=5, T=8), τ3 (C=3, D=7, T=9): U = 0.9167,
/// density = 1.3286 (inconclusive), h(t) <= t at 4, 5, 7, 10, 13, 16, ...
/// → schedulable; a τ3 with D=6 gives h(6) = 7 > 6.
#[test]
fn edf_processor_demand() {
    let set = set_ms(&[("t1", 2, 6, 4), ("t2", 2, 8, 5), ("t3", 3, 9, 7)]);
    let report = analyse(&set, AnalysedPolicy::Edf, &Options::default()).unwrap();
    let verdicts: Vec<_> = report.runs.iter().map(|r| r.outcome.schedulable).collect();
    assert_eq!(verdicts, vec![None, None, Some(true)]);
    assert_eq!(
        edf_demand::demand_at(&set, ms(7).as_ns()),
        u128::from(ms(7).as_ns())
    );
    let mut tight = set.clone();
    tight.tasks[2].deadline = ms(6);
    assert_eq!(
        edf_demand::verdict(&tight, &blocking::EdfBlocking::none()),
        Some(false)
    );
}

/// SRP/DFP blocking under EDF (Baruah 2006): a (C=2, D=T=5) and b (C=4,
/// D=T=10) with b holding `r` for 2 ms that a also uses. U = 0.8, but
/// h(5) + B(5) = 2 + 2 = 4 <= 5 and h(10) + B(10) = 8 <= 10: schedulable;
/// a 3.5 ms section makes h(5) + B(5) = 5.5 > 5.
#[test]
fn edf_with_srp_blocking() {
    let mut set = set_ms(&[("a", 2, 5, 5), ("b", 4, 10, 10)]);
    let cs = |len_us: u64| CriticalSection {
        resource: "r".into(),
        start: Nanos::ZERO,
        length: Nanos::from_us(len_us),
    };
    set.tasks[0].critical_sections = vec![cs(1000)];
    set.tasks[1].critical_sections = vec![cs(2000)];
    let b = blocking::EdfBlocking::of(&set);
    assert_eq!(edf_demand::verdict(&set, &b), Some(true));
    set.tasks[1].critical_sections = vec![cs(3500)];
    let b = blocking::EdfBlocking::of(&set);
    assert_eq!(edf_demand::verdict(&set, &b), Some(false));
}

#[test]
fn analyses_do_not_modify_their_input() {
    let set = set_ms(&[("a", 1, 2, 4), ("b", 3, 6, 5)]);
    let copy = set.clone();
    for policy in [
        AnalysedPolicy::Fixed(PriorityAssignment::RateMonotonic),
        AnalysedPolicy::Fixed(PriorityAssignment::Audsley),
        AnalysedPolicy::Edf,
    ] {
        let _ = analyse(&set, policy, &Options::default());
        let _ = rtlab_analysis::suite::breakdowns(&set, policy, &Options::default());
    }
    assert_eq!(set, copy);
}
