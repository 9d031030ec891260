//! Hand-computed schedules, reproduced exactly (one integration-test binary
//! for the crate; each test names the schedule it guards).

use rtlab_model::overheads::{LinearCost, Overheads, Timing};
use rtlab_model::{file, CriticalSection, Nanos, Task, TaskSet};
use rtlab_sim::{
    simulate, ExecModel, LockingProtocol, MissRule, Phase, SchedulerSpec, SimConfig, SimReport,
    Simulator, TraceRecord, TraceWindow,
};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

fn us(v: u64) -> Nanos {
    Nanos::from_us(v)
}

fn spec(s: &str) -> SchedulerSpec {
    s.parse().unwrap()
}

fn builtin(name: &str) -> TaskSet {
    file::load(&format!("builtin:{name}")).unwrap().set
}

/// Runs and returns the report and the execution segments as
/// `(task name, start, end)`, adjacent pieces of the same task merged.
fn run_traced(
    set: &TaskSet,
    scheduler: &str,
    mut config: SimConfig,
) -> (SimReport, Vec<(String, Nanos, Nanos)>) {
    config.trace = Some(TraceWindow {
        from: Nanos::ZERO,
        to: config.duration,
    });
    let mut sim = Simulator::new(set, &spec(scheduler), config).unwrap();
    sim.run();
    let report = sim.report();
    let trace = sim.trace().unwrap();
    let mut segments: Vec<(String, Nanos, Nanos)> = Vec::new();
    for r in &trace.records {
        if let TraceRecord::Run {
            task, start, end, ..
        } = *r
        {
            let name = set_name(sim.tasks(), task);
            match segments.last_mut() {
                Some((n, _, e)) if *n == name && *e == start => *e = end,
                _ => segments.push((name, start, end)),
            }
        }
    }
    (report, segments)
}

fn set_name(tasks: &[Task], i: usize) -> String {
    tasks[i].name.clone()
}

fn segs(list: &[(&str, u64, u64)]) -> Vec<(String, Nanos, Nanos)> {
    list.iter()
        .map(|&(n, s, e)| (n.to_string(), ms(s), ms(e)))
        .collect()
}

fn first(segments: &[(String, Nanos, Nanos)], until: Nanos) -> Vec<(String, Nanos, Nanos)> {
    segments.iter().filter(|s| s.1 < until).cloned().collect()
}

fn task<'a>(r: &'a SimReport, name: &str) -> &'a rtlab_sim::TaskMetrics {
    r.tasks.iter().find(|t| t.name == name).unwrap()
}

// ---------------------------------------------------------------- classic pair

fn pair() -> TaskSet {
    TaskSet::new(
        "pair",
        vec![Task::new("a", ms(5), ms(2)), Task::new("b", ms(7), ms(4))],
    )
}

#[test]
fn classic_pair_rm_misses_b_at_7ms() {
    // a 0-2, b 2-5, a 5-7: b has 1 ms left at its deadline 7.
    let (r, s) = run_traced(&pair(), "fp:rm", SimConfig::new(ms(35)));
    assert_eq!(
        first(&s, ms(7)),
        segs(&[("a", 0, 2), ("b", 2, 5), ("a", 5, 7)])
    );
    assert_eq!(task(&r, "b").first_miss_ns, Some(ms(7).as_ns()));
    assert_eq!(task(&r, "a").misses, 0);
    assert!(task(&r, "b").misses >= 1);
}

#[test]
fn classic_pair_edf_meets_every_deadline_over_the_hyperperiod() {
    // a 0-2, b 2-6 (a's 2nd job, deadline 10, does not preempt b, deadline 7),
    // a 6-8, b 8-12 (deadline 14 beats a's 15), a 12-14.
    let (r, s) = run_traced(&pair(), "edf", SimConfig::new(ms(35)));
    assert_eq!(
        first(&s, ms(14)),
        segs(&[
            ("a", 0, 2),
            ("b", 2, 6),
            ("a", 6, 8),
            ("b", 8, 12),
            ("a", 12, 14)
        ])
    );
    assert_eq!(r.deadline_misses, 0);
    assert_eq!((r.released, r.completed), (12, 12));
}

// ---------------------------------------------------------------- least laxity first

/// a (C=4, D=10), b (C=1, D=8), c (C=1, D=3, released at 2); periods 20.
fn laxities() -> TaskSet {
    TaskSet::new(
        "laxities",
        vec![
            Task::new("a", ms(20), ms(4)).with_deadline(ms(10)),
            Task::new("b", ms(20), ms(1)).with_deadline(ms(8)),
            Task::new("c", ms(20), ms(1))
                .with_deadline(ms(3))
                .with_offset(ms(2)),
        ],
    )
}

/// LLF by hand, comparing `d - remaining` (laxity plus now). t=0: a 10-4=6,
/// b 8-1=7: a runs although b's deadline is earlier. t=2: c arrives, 5-1=4,
/// and preempts a (10-2=8). t=3: c done; b's 7 beats a's 8: b runs. t=4: a
/// resumes, done at 6. EDF on the same set runs b first (deadline 8 < 10).
#[test]
fn least_laxity_first_by_hand_and_against_edf() {
    let (r, s) = run_traced(&laxities(), "llf", SimConfig::new(ms(20)));
    assert_eq!(
        s,
        segs(&[("a", 0, 2), ("c", 2, 3), ("b", 3, 4), ("a", 4, 6)])
    );
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(r.scheduler, "llf");
    let (_, edf) = run_traced(&laxities(), "edf", SimConfig::new(ms(20)));
    assert_eq!(
        edf,
        segs(&[("b", 0, 1), ("a", 1, 2), ("c", 2, 3), ("a", 3, 6)])
    );
}

// ---------------------------------------------------------------- lf scenarios

#[test]
fn lf_scenario_4_dm_misses_t2_at_46ms_and_edf_meets() {
    let set = builtin("lf-scenario-4");
    let (r, s) = run_traced(&set, "fp:dm", SimConfig::new(ms(100)));
    assert_eq!(
        first(&s, ms(50)),
        segs(&[
            ("t2", 0, 1),
            ("t1", 1, 4),
            ("t2", 4, 26),
            ("t1", 26, 29),
            ("t2", 29, 46)
        ])
    );
    assert_eq!(task(&r, "t2").max_response_ns, Some(ms(46).as_ns()));
    assert_eq!(task(&r, "t2").misses, 2, "one per hyperperiod");
    assert_eq!(task(&r, "t2").first_miss_ns, Some(ms(45).as_ns()));
    assert_eq!(task(&r, "t1").misses, 0);

    let (r, s) = run_traced(&set, "edf", SimConfig::new(ms(100)));
    assert_eq!(
        first(&s, ms(50)),
        segs(&[("t2", 0, 1), ("t1", 1, 4), ("t2", 4, 43), ("t1", 43, 46)])
    );
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(task(&r, "t2").max_response_ns, Some(ms(43).as_ns()));
}

#[test]
fn lf_scenario_1_fifo_misses_t2_declared_second_dm_and_edf_meet() {
    let set = builtin("lf-scenario-1");
    let (r, s) = run_traced(&set, "fifo", SimConfig::new(ms(100)));
    assert_eq!(first(&s, ms(50)), segs(&[("t1", 0, 15), ("t2", 15, 38)]));
    assert_eq!((task(&r, "t2").misses, task(&r, "t1").misses), (2, 0));
    for sched in ["fp:dm", "edf"] {
        let (r, s) = run_traced(&set, sched, SimConfig::new(ms(100)));
        assert_eq!(
            first(&s, ms(50)),
            segs(&[("t2", 0, 23), ("t1", 23, 38)]),
            "{sched}"
        );
        assert_eq!(r.deadline_misses, 0, "{sched}");
    }
    // Declared the other way round, FIFO meets them (paper 000, Figure 4.7).
    let mut swapped = set.clone();
    swapped.tasks.reverse();
    let (r, _) = run_traced(&swapped, "fifo", SimConfig::new(ms(100)));
    assert_eq!(r.deadline_misses, 0);
}

#[test]
fn lf_scenario_2_fifo_misses_the_third_job_of_t2() {
    // t1 0-15, t2#0 15-28 (misses 25), t2#1 28-41, t1#1 50-65 (same release
    // as t2#2, declared first), t2#2 65-78 (misses 75), t2#3 78-91.
    let set = builtin("lf-scenario-2");
    let (r, s) = run_traced(&set, "fifo", SimConfig::new(ms(100)));
    assert_eq!(
        s,
        segs(&[
            ("t1", 0, 15),
            ("t2", 15, 41),
            ("t1", 50, 65),
            ("t2", 65, 91)
        ])
    );
    let t2 = task(&r, "t2");
    assert_eq!((t2.released, t2.completed, t2.misses), (4, 4, 2));
    assert_eq!(t2.max_response_ns, Some(ms(28).as_ns()));
    for sched in ["fp:dm", "edf", "np-edf"] {
        let (r, _) = run_traced(&set, sched, SimConfig::new(ms(100)));
        assert_eq!(r.deadline_misses, 0, "{sched}");
    }
}

#[test]
fn lf_scenario_3_fifo_misses_dm_and_edf_meet() {
    // FIFO: t1 0-15, t2 (released 1, deadline 26) 15-38. DM/EDF: t1 0-1,
    // t2 1-24, t1 24-38.
    let set = builtin("lf-scenario-3");
    let (r, s) = run_traced(&set, "fifo", SimConfig::new(ms(100)));
    assert_eq!(first(&s, ms(50)), segs(&[("t1", 0, 15), ("t2", 15, 38)]));
    assert_eq!(task(&r, "t2").misses, 2);
    for sched in ["fp:dm", "edf"] {
        let (r, s) = run_traced(&set, sched, SimConfig::new(ms(100)));
        assert_eq!(
            first(&s, ms(50)),
            segs(&[("t1", 0, 1), ("t2", 1, 24), ("t1", 24, 38)]),
            "{sched}"
        );
        assert_eq!(r.deadline_misses, 0, "{sched}");
    }
}

// ------------------------------------------------------------- RM and RTA

#[test]
fn rm_response_times_equal_hand_computed_rta() {
    // (C, T) = (1, 4), (2, 6), (3, 12): R1 = 1, R2 = 3,
    // R3: 6 -> 3+2+2 = 7 -> 3+2+4 = 9 -> 3+3+4 = 10 -> 10.
    let set = TaskSet::new(
        "rta3",
        vec![
            Task::new("t1", ms(4), ms(1)),
            Task::new("t2", ms(6), ms(2)),
            Task::new("t3", ms(12), ms(3)),
        ],
    );
    let (r, s) = run_traced(&set, "fp:rm", SimConfig::new(ms(12)));
    assert_eq!(
        s,
        segs(&[
            ("t1", 0, 1),
            ("t2", 1, 3),
            ("t3", 3, 4),
            ("t1", 4, 5),
            ("t3", 5, 6),
            ("t2", 6, 8),
            ("t1", 8, 9),
            ("t3", 9, 10)
        ])
    );
    let max: Vec<_> = r.tasks.iter().map(|t| t.max_response_ns.unwrap()).collect();
    assert_eq!(max, vec![ms(1).as_ns(), ms(3).as_ns(), ms(10).as_ns()]);
    assert_eq!(task(&r, "t3").preemptions, 2);

    // (20, 100), (40, 150), (100, 350): R3: 160 -> 220 -> 240 -> 240.
    let set = TaskSet::new(
        "rta-ll",
        vec![
            Task::new("a", ms(100), ms(20)),
            Task::new("b", ms(150), ms(40)),
            Task::new("c", ms(350), ms(100)),
        ],
    );
    let r = simulate(&set, &spec("fp:rm"), &SimConfig::new(ms(2100))).unwrap();
    let max: Vec<_> = r.tasks.iter().map(|t| t.max_response_ns.unwrap()).collect();
    assert_eq!(max, vec![ms(20).as_ns(), ms(60).as_ns(), ms(240).as_ns()]);
    assert_eq!(r.deadline_misses, 0);
}

// ---------------------------------------------------------------- round robin

#[test]
fn round_robin_alternates_by_quantum() {
    let set = TaskSet::new(
        "rr",
        vec![Task::new("a", ms(10), ms(3)), Task::new("b", ms(10), ms(3))],
    );
    let (r, s) = run_traced(&set, "rr:1ms", SimConfig::new(ms(10)));
    assert_eq!(
        s,
        segs(&[
            ("a", 0, 1),
            ("b", 1, 2),
            ("a", 2, 3),
            ("b", 3, 4),
            ("a", 4, 5),
            ("b", 5, 6)
        ])
    );
    assert_eq!(r.context_switches, 6);
    assert_eq!(
        (task(&r, "a").preemptions, task(&r, "b").preemptions),
        (2, 2)
    );
}

/// Linux SCHED_RR keeps a thread's timeslice across sleeps (`rr:Q:linux`);
/// `rr:Q` gives every dispatch a fresh quantum. a and b (T = 10 ms, C = 3
/// ms, released together), Q = 2 ms.
///
/// Period 1, both rules: a 0-2 (slice out, to the tail), b 2-4 (same),
/// a 4-5 and b 5-6 complete. Under `rr:2ms` period 2 repeats it. Under
/// Linux a and b sleep with 1 ms of slice left and start period 2 with
/// it: a 10-11 (out: refilled, to the tail), b 11-12 (same), a 12-14 and
/// b 14-16 complete, each using up its 2 ms refill exactly: R_a = 4 ms,
/// R_b = 6 ms. Period 3 starts from full slices, as period 1.
#[test]
fn linux_round_robin_keeps_the_timeslice_left_when_a_job_completes() {
    let set = TaskSet::new(
        "rr",
        vec![Task::new("a", ms(10), ms(3)), Task::new("b", ms(10), ms(3))],
    );
    let period_one = [("a", 0, 2), ("b", 2, 4), ("a", 4, 5), ("b", 5, 6)];
    let shifted = |list: &[(&'static str, u64, u64)], by: u64| {
        list.iter()
            .map(|&(n, from, to)| (n, from + by, to + by))
            .collect::<Vec<_>>()
    };
    let (plain, s) = run_traced(&set, "rr:2ms", SimConfig::new(ms(30)));
    let mut expected = period_one.to_vec();
    expected.extend(shifted(&period_one, 10));
    expected.extend(shifted(&period_one, 20));
    assert_eq!(s, segs(&expected));

    let (linux, s) = run_traced(&set, "rr:2ms:linux", SimConfig::new(ms(30)));
    assert_eq!(linux.scheduler, "rr:2ms:linux");
    let period_two = [("a", 10, 11), ("b", 11, 12), ("a", 12, 14), ("b", 14, 16)];
    let mut expected = period_one.to_vec();
    expected.extend(period_two);
    expected.extend(shifted(&period_one, 20));
    assert_eq!(s, segs(&expected));
    let mean = |r: &SimReport, t: &str| task(r, t).mean_response_ns;
    // a: 5, 4, 5 ms under Linux; 5 ms every period under rr:2ms.
    assert_eq!(mean(&linux, "a"), Some(ms(14).as_ns() / 3));
    assert_eq!(mean(&plain, "a"), Some(ms(5).as_ns()));
    assert_eq!(task(&linux, "b").max_response_ns, Some(ms(6).as_ns()));
}

/// Under Linux's rule a slice that runs out while its thread is alone is
/// only refilled, and a thread that wakes meanwhile joins the tail: it
/// waits for the running thread's slice to run out (counted from its last
/// refill), not for a quantum counted from its arrival. b (C = 8 ms) runs
/// alone from 0, its 2 ms slice running out and refilled at 2 and 4; a
/// (C = 1 ms) wakes at 5 and runs when b's slice runs out at 6: b 0-6,
/// a 6-7, b 7-9. Under `rr:2ms` b's quantum (0-2) expired alone, so it
/// rotates as soon as a waits: b 0-5, a 5-6, b 6-9.
#[test]
fn linux_round_robin_lets_the_running_slice_finish_when_a_thread_wakes() {
    let set = TaskSet::new(
        "rr",
        vec![
            Task::new("a", ms(20), ms(1)).with_offset(ms(5)),
            Task::new("b", ms(20), ms(8)),
        ],
    );
    let (_, s) = run_traced(&set, "rr:2ms:linux", SimConfig::new(ms(20)));
    assert_eq!(s, segs(&[("b", 0, 6), ("a", 6, 7), ("b", 7, 9)]));
    let (_, s) = run_traced(&set, "rr:2ms", SimConfig::new(ms(20)));
    assert_eq!(s, segs(&[("b", 0, 5), ("a", 5, 6), ("b", 6, 9)]));
}

#[test]
fn linux_round_robin_parses_prints_and_refuses_other_variants() {
    assert_eq!(spec("rr:2ms:linux").to_string(), "rr:2ms:linux");
    assert_eq!(spec("rr:2ms").to_string(), "rr:2ms");
    let e = "rr:2ms:posix"
        .parse::<SchedulerSpec>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown round-robin variant `posix`"), "{e}");
    assert!("rr:0ms:linux".parse::<SchedulerSpec>().is_err());
}

// ------------------------------------------------------------- miss policies

fn overloaded() -> TaskSet {
    // U = 0.4 + 0.7 > 1: under RM b's first job has 1 ms left at 10.
    TaskSet::new(
        "over",
        vec![Task::new("a", ms(5), ms(2)), Task::new("b", ms(10), ms(7))],
    )
}

#[test]
fn on_miss_abort_and_skip() {
    // RM: a 0-2, b 2-5, a 5-7, b 7-10: b has 1 ms left at 10.
    let mut c = SimConfig::new(ms(20));
    c.on_miss = MissRule::Abort;
    let (r, s) = run_traced(&overloaded(), "fp:rm", c);
    let b = task(&r, "b");
    assert_eq!((b.released, b.completed, b.misses, b.aborted), (2, 0, 2, 2));
    assert_eq!(
        first(&s, ms(10)),
        segs(&[("a", 0, 2), ("b", 2, 5), ("a", 5, 7), ("b", 7, 10)])
    );

    // Skip: b#0 continues (a 10-12 preempts, b resumes 12-13), the
    // release at 10 is skipped; next release 20.
    let mut c = SimConfig::new(ms(20));
    c.on_miss = MissRule::Skip;
    let (r, _) = run_traced(&overloaded(), "fp:rm", c);
    let b = task(&r, "b");
    assert_eq!((b.released, b.completed, b.misses, b.skipped), (1, 1, 1, 1));
    assert_eq!(b.max_response_ns, Some(ms(13).as_ns()));
}

// -------------------------------------------------------- tick and overheads

#[test]
fn tick_delays_releases_to_the_next_tick() {
    // a is released at 0.5 ms but noticed at the 1 ms tick; it preempts b
    // only then. Response = 1 - 0.5 + 2 = 2.5 ms.
    let set = TaskSet::new(
        "tick",
        vec![
            Task::new("a", ms(10), ms(2)).with_offset(us(500)),
            Task::new("b", ms(20), ms(4)),
        ],
    );
    let mut c = SimConfig::new(ms(10));
    c.tick = Some(ms(1));
    let (r, s) = run_traced(&set, "fp:rm", c);
    assert_eq!(s, segs(&[("b", 0, 1), ("a", 1, 3), ("b", 3, 6)]));
    assert_eq!(task(&r, "a").max_response_ns, Some(us(2500).as_ns()));
}

/// a (T = 10 ms, C = 2 ms, released at 0.5 ms) over b (T = 20 ms, C = 4
/// ms), with only C_timer = 100 us charged.
fn tick_pair_with_timer_cost() -> (TaskSet, Overheads) {
    let set = TaskSet::new(
        "tick",
        vec![
            Task::new("a", ms(10), ms(2)).with_offset(us(500)),
            Task::new("b", ms(20), ms(4)),
        ],
    );
    let mut o = Overheads::zero();
    o.timer = LinearCost::constant(us(100));
    (set, o)
}

#[test]
fn linux_timer_model_releases_at_once_while_the_tick_costs_c_timer() {
    // Linux (releases = "hrtimer", tick = 1 ms): the tick at 0 costs 100 us,
    // so b runs 0.1-0.5; a is released at 0.5 exactly (no wait for a tick)
    // and preempts; the ticks at 1 and 2 ms take 1.0-1.1 and 2.0-2.1, so a
    // runs 0.5-1.0, 1.1-2.0, 2.1-2.7 (0.5 + 0.9 + 0.6 = 2 ms): R_a = 2.2 ms.
    // b resumes at 2.7 with 3.6 ms left, around the ticks at 3..6 ms:
    // 2.7-3.0, 3.1-4.0, 4.1-5.0, 5.1-6.0, 6.1-6.7: R_b = 6.7 ms
    // (4 + 2 + seven ticks, 0..6 ms). Ticks at 0..9 ms: 1 ms of overhead.
    let (set, mut o) = tick_pair_with_timer_cost();
    o.timing = Timing::Hrtimer { tick: Some(ms(1)) };
    let mut c = SimConfig::new(ms(10));
    c.overheads = Some(o.clone());
    let (r, s) = run_traced(&set, "fp:rm", c.clone());
    let at = |a: u64, b: u64| (us(a), us(b));
    let expected: Vec<(String, Nanos, Nanos)> = [
        ("b", at(100, 500)),
        ("a", at(500, 1000)),
        ("a", at(1100, 2000)),
        ("a", at(2100, 2700)),
        ("b", at(2700, 3000)),
        ("b", at(3100, 4000)),
        ("b", at(4100, 5000)),
        ("b", at(5100, 6000)),
        ("b", at(6100, 6700)),
    ]
    .into_iter()
    .map(|(n, (from, to))| (n.to_string(), from, to))
    .collect();
    assert_eq!(s, expected);
    assert_eq!(task(&r, "a").max_response_ns, Some(us(2200).as_ns()));
    assert_eq!(task(&r, "b").max_response_ns, Some(us(6700).as_ns()));
    assert_eq!(r.overhead_ns, ms(1).as_ns());
    assert_eq!(r.tick_ns, None);
    assert_eq!(r.timer.as_deref(), Some("hrtimer + tick 1ms"));
    assert_eq!(r.periodic_tick_ns, Some(ms(1).as_ns()));

    // `tick` (the command line's --tick) overrides the file: paper 004's
    // model, a noticed at the 1 ms tick. Ticks cost 0.1 ms each: b runs
    // 0.1-1.0, a 1.1-2.0, 2.1-3.0, 3.1-3.3 around the ticks at 2 and 3 ms,
    // so R_a = 3.3 - 0.5 = 2.8 ms.
    c.tick = Some(ms(1));
    let (r, s) = run_traced(&set, "fp:rm", c);
    assert_eq!(
        first(&s, ms(3)),
        vec![
            ("b".to_string(), us(100), ms(1)),
            ("a".to_string(), us(1100), ms(2)),
            ("a".to_string(), us(2100), ms(3)),
        ]
    );
    assert_eq!(task(&r, "a").max_response_ns, Some(us(2800).as_ns()));
    assert_eq!((r.tick_ns, r.timer.as_deref()), (Some(ms(1).as_ns()), None));

    // A file that says releases = "tick" is paper 004's model without --tick.
    o.timing = Timing::Tick(ms(1));
    let mut c = SimConfig::new(ms(10));
    c.overheads = Some(o);
    let (r, s2) = run_traced(&set, "fp:rm", c);
    assert_eq!(s2, s);
    assert_eq!(task(&r, "a").max_response_ns, Some(us(2800).as_ns()));
}

#[test]
fn overheads_occupy_the_processor() {
    // Dispatch from idle costs `preempt` (100 us), completion costs `exit`
    // (50 us): the job runs 0.1-2.1 ms.
    let set = TaskSet::new("one", vec![Task::new("a", ms(10), ms(2))]);
    let mut o = Overheads::zero();
    o.preempt = LinearCost::constant(us(100));
    o.exit = LinearCost::constant(us(50));
    let mut c = SimConfig::new(ms(20));
    c.overheads = Some(o);
    let r = simulate(&set, &spec("fp:rm"), &c).unwrap();
    assert_eq!(task(&r, "a").max_response_ns, Some(us(2100).as_ns()));
    assert_eq!(r.overhead_ns, 2 * us(150).as_ns());

    // Overheads can cause misses: C = D - 50 us with a 100 us switch.
    let set = TaskSet::new("tight", vec![Task::new("a", ms(10), us(9950))]);
    let r = simulate(&set, &spec("edf"), &c).unwrap();
    assert_eq!(r.deadline_misses, 2);
}

#[test]
fn overheads_scale_with_the_number_of_tasks() {
    // rtmach: C_preempt = 0.79 us * n + 30.1 us = 31.68 us for n = 2.
    let set = TaskSet::new(
        "two",
        vec![
            Task::new("a", ms(10), ms(1)),
            Task::new("b", ms(10), ms(1)).with_offset(ms(5)),
        ],
    );
    let mut c = SimConfig::new(ms(10));
    c.overheads = Some(Overheads::rtmach());
    let r = simulate(&set, &spec("fp:rm"), &c).unwrap();
    // Per job: preempt (31.68 us) + exit (0.74*2 + 28.8 = 30.28 us).
    assert_eq!(task(&r, "a").max_response_ns, Some(ms(1).as_ns() + 31_680));
    assert_eq!(r.overhead_ns, 2 * (31_680 + 30_280));
}

// ------------------------------------------------------------------ locking

/// L (prio 1) locks R for 3 ms from 1 ms into its job; H (prio 3, released
/// at 2) needs R at once; M (prio 2, released at 3) does not use it.
fn inversion() -> TaskSet {
    let cs = |start, length| CriticalSection {
        resource: "R".into(),
        start: ms(start),
        length: ms(length),
    };
    let mut l = Task::new("L", ms(100), ms(4)).with_priority(1);
    l.critical_sections = vec![cs(1, 3)];
    let mut h = Task::new("H", ms(100), ms(2))
        .with_offset(ms(2))
        .with_priority(3)
        .with_deadline(ms(10));
    h.critical_sections = vec![cs(0, 1)];
    let m = Task::new("M", ms(100), ms(4))
        .with_offset(ms(3))
        .with_priority(2)
        .with_deadline(ms(50));
    TaskSet::new("inversion", vec![l, h, m])
}

fn with_protocol(p: LockingProtocol) -> SimConfig {
    let mut c = SimConfig::new(ms(20));
    c.protocol = p;
    c
}

#[test]
fn priority_inversion_unbounded_without_a_protocol() {
    // L 0-2, H blocks at 2, L 2-3, M preempts L 3-7, L 7-8 unlocks, H 8-10.
    let (r, s) = run_traced(
        &inversion(),
        "fp:given",
        with_protocol(LockingProtocol::None),
    );
    assert_eq!(
        s,
        segs(&[("L", 0, 3), ("M", 3, 7), ("L", 7, 8), ("H", 8, 10)])
    );
    assert_eq!(task(&r, "H").max_response_ns, Some(ms(8).as_ns()));
}

#[test]
fn pip_ipcp_and_npp_bound_blocking_to_the_critical_section() {
    // L 0-4 (inherits or holds the ceiling), H 4-6 (blocked 2 ms), M 6-10.
    for p in [
        LockingProtocol::Pip,
        LockingProtocol::Ipcp,
        LockingProtocol::Npp,
    ] {
        let (r, s) = run_traced(&inversion(), "fp:given", with_protocol(p));
        assert_eq!(s, segs(&[("L", 0, 4), ("H", 4, 6), ("M", 6, 10)]), "{p}");
        assert_eq!(task(&r, "H").max_response_ns, Some(ms(4).as_ns()), "{p}");
        assert_eq!(task(&r, "M").max_response_ns, Some(ms(7).as_ns()), "{p}");
    }
}

#[test]
fn edf_srp_and_dfp_bound_blocking() {
    // Deadlines H 12, M 53, L 100. None: same inversion as FP.
    let (_, s) = run_traced(&inversion(), "edf", with_protocol(LockingProtocol::None));
    assert_eq!(
        s,
        segs(&[("L", 0, 3), ("M", 3, 7), ("L", 7, 8), ("H", 8, 10)])
    );
    // DFP: L's deadline drops to 1 + 10 = 11 < 12 at the lock; SRP: H and M
    // may not start above the ceiling of R.
    for p in [LockingProtocol::Dfp, LockingProtocol::Srp] {
        let (r, s) = run_traced(&inversion(), "edf", with_protocol(p));
        assert_eq!(s, segs(&[("L", 0, 4), ("H", 4, 6), ("M", 6, 10)]), "{p}");
        assert_eq!(r.deadline_misses, 0);
    }
}

/// Every job record of a run, in the order they were emitted.
fn job_records(
    set: &TaskSet,
    scheduler: &str,
    config: SimConfig,
) -> (SimReport, Vec<rtlab_model::results::JobRecord>) {
    let mut sim = Simulator::new(set, &spec(scheduler), config).unwrap();
    let records = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let sink = std::rc::Rc::clone(&records);
    sim.on_job(move |job| sink.borrow_mut().push(*job));
    sim.run();
    let report = sim.report();
    let records = records.borrow().clone();
    (report, records)
}

/// `(task index, job, lock wait)` of every record, sorted.
fn lock_waits(records: &[rtlab_model::results::JobRecord]) -> Vec<(usize, u64, Option<Nanos>)> {
    let mut waits: Vec<_> = records.iter().map(|j| (j.task, j.job, j.blocked)).collect();
    waits.sort();
    waits
}

#[test]
fn lock_wait_per_job_is_the_time_spent_blocked_on_a_lock() {
    // Tasks L (0), H (1), M (2), one job each in 20 ms. None: H waits for R
    // from 2 to 8 (M's whole job inside). PIP: from 2 to 4. IPCP and NPP: H
    // never asks while L holds R (it cannot run), so it never waits: 0,
    // although it was delayed as long as under PIP. M has no section: None.
    let cases = [
        (LockingProtocol::None, 6),
        (LockingProtocol::Pip, 2),
        (LockingProtocol::Ipcp, 0),
        (LockingProtocol::Npp, 0),
    ];
    for (p, h_wait) in cases {
        let (r, records) = job_records(&inversion(), "fp:given", with_protocol(p));
        assert_eq!(
            lock_waits(&records),
            [(0, 0, Some(ms(0))), (1, 0, Some(ms(h_wait))), (2, 0, None)],
            "{p}"
        );
        let h = task(&r, "H");
        assert_eq!(h.max_blocked_ns, Some(ms(h_wait).as_ns()), "{p}");
        assert_eq!(h.total_blocked_ns, Some(ms(h_wait).as_ns()), "{p}");
        assert_eq!(task(&r, "M").max_blocked_ns, None, "{p}");
    }
}

#[test]
fn lock_wait_is_absent_from_the_json_of_sets_without_critical_sections() {
    let r = simulate(&pair(), &spec("fp:rm"), &SimConfig::new(ms(35))).unwrap();
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("blocked"), "{json}");
    let r = simulate(
        &inversion(),
        &spec("fp:given"),
        &with_protocol(LockingProtocol::Pip),
    )
    .unwrap();
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"max_blocked_ns\":2000000"), "{json}");
}

#[test]
fn the_priority_inversion_example_under_none_pip_and_ipcp() {
    // builtin:priority-inversion (T = 100 ms): low takes R at 2, high
    // arrives at 5 and asks for R at 6, mid arrives at 8.
    let set = builtin("priority-inversion");
    let cases = [
        // None: mid preempts low and runs its whole job while high waits.
        (
            LockingProtocol::None,
            vec![
                ("low", 0, 5),
                ("high", 5, 6),
                ("low", 6, 8),
                ("mid", 8, 38),
                ("low", 38, 45),
                ("high", 45, 50),
                ("low", 50, 56),
            ],
            (39, 45, 30),
        ),
        // PIP: low inherits high's priority at 6 and frees R at 15.
        (
            LockingProtocol::Pip,
            vec![
                ("low", 0, 5),
                ("high", 5, 6),
                ("low", 6, 15),
                ("high", 15, 20),
                ("mid", 20, 50),
                ("low", 50, 56),
            ],
            (9, 15, 42),
        ),
        // IPCP: low runs at the ceiling (high's priority) from 2 to 14.
        (
            LockingProtocol::Ipcp,
            vec![
                ("low", 0, 14),
                ("high", 14, 20),
                ("mid", 20, 50),
                ("low", 50, 56),
            ],
            (0, 15, 42),
        ),
    ];
    for (p, schedule, (wait, high_r, mid_r)) in cases {
        let mut config = SimConfig::new(ms(300));
        config.protocol = p;
        let (r, s) = run_traced(&set, "fp:dm", config.clone());
        assert_eq!(first(&s, ms(100)), segs(&schedule), "{p}");
        // Every period repeats the first.
        assert_eq!(s.len(), 3 * schedule.len(), "{p}");
        let high = task(&r, "high");
        assert_eq!(high.max_blocked_ns, Some(ms(wait).as_ns()), "{p}");
        assert_eq!(high.total_blocked_ns, Some(ms(3 * wait).as_ns()), "{p}");
        assert_eq!(high.max_response_ns, Some(ms(high_r).as_ns()), "{p}");
        assert_eq!(
            task(&r, "mid").max_response_ns,
            Some(ms(mid_r).as_ns()),
            "{p}"
        );
        assert_eq!(task(&r, "low").max_blocked_ns, Some(0), "{p}");
        assert_eq!(task(&r, "mid").max_blocked_ns, None, "{p}");
        // Only plain locks make high miss its 20 ms deadline.
        assert_eq!(
            high.misses,
            if p == LockingProtocol::None { 3 } else { 0 },
            "{p}"
        );
        let (_, records) = job_records(&set, "fp:dm", config);
        let high_waits: Vec<Option<Nanos>> = records
            .iter()
            .filter(|j| j.task == 0)
            .map(|j| j.blocked)
            .collect();
        assert_eq!(high_waits, vec![Some(ms(wait)); 3], "{p}");
    }
}

/// Two locks taken in opposite orders. b (T = 20, C = 6) holds r2 from 1 ms
/// into its job to 5 ms, with r1 nested at 3..4 ms; a (T = 10, C = 4,
/// offset 2 ms, more urgent) holds r1 from 1 ms to 3 ms, with r2 nested at
/// 2..2.5 ms.
fn opposite_orders() -> TaskSet {
    let cs = |resource: &str, start, length| CriticalSection {
        resource: resource.into(),
        start: us(start),
        length: us(length),
    };
    let mut a = Task::new("a", ms(10), ms(4)).with_offset(ms(2));
    a.critical_sections = vec![cs("r1", 1000, 2000), cs("r2", 2000, 500)];
    let mut b = Task::new("b", ms(20), ms(6));
    b.critical_sections = vec![cs("r2", 1000, 4000), cs("r1", 3000, 1000)];
    TaskSet::new("opposite", vec![a, b])
}

#[test]
fn opposite_lock_orders_deadlock_at_five_milliseconds() {
    // b runs 0-2 and takes r2 at 1; a preempts at 2, takes r1 at 3 and asks
    // for r2 at 4: blocked (under PIP b inherits a's priority). b resumes at
    // 4 and asks for r1 at 5 (3 ms into its job): a cycle.
    for p in [LockingProtocol::None, LockingProtocol::Pip] {
        let (r, s) = run_traced(&opposite_orders(), "fp:rm", with_protocol(p));
        assert_eq!(s, segs(&[("b", 0, 2), ("a", 2, 4), ("b", 4, 5)]), "{p}");
        let d = r.deadlock.as_ref().expect("a deadlock");
        assert_eq!(d.at_ns, ms(5).as_ns(), "{p}");
        let links: Vec<(&str, u64, &str, &str)> = d
            .cycle
            .iter()
            .map(|l| {
                (
                    l.task.as_str(),
                    l.job,
                    l.waits_for.as_str(),
                    l.held_by.as_str(),
                )
            })
            .collect();
        assert_eq!(links, [("b", 0, "r1", "a"), ("a", 0, "r2", "b")], "{p}");
        assert_eq!(d.count, 1, "{p}");
        assert_eq!(r.completed, 0, "{p}");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["deadlock"]["at_ns"], 5_000_000);
        assert_eq!(json["deadlock"]["cycle"][0]["waits_for"], "r1");
    }
}

#[test]
fn ceiling_protocol_runs_opposite_lock_orders_without_deadlock() {
    // IPCP: b takes r2 at 1 and runs at a's priority (the ceiling) until it
    // releases r2 at 5; a runs 5-9; b finishes 9-10.
    let (r, s) = run_traced(
        &opposite_orders(),
        "fp:rm",
        with_protocol(LockingProtocol::Ipcp),
    );
    assert_eq!(
        s,
        segs(&[("b", 0, 5), ("a", 5, 9), ("b", 9, 10), ("a", 12, 16)])
    );
    assert_eq!(r.deadlock, None);
    assert_eq!(r.deadline_misses, 0);
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("deadlock").is_none(), "absent when there is none");
}

#[test]
fn aborting_a_deadlocked_job_breaks_the_cycle_and_later_ones_are_counted() {
    // With --on-miss abort, a's job is removed at its deadline (12 ms),
    // releasing r1; b completes; the next jobs deadlock again.
    let mut c = with_protocol(LockingProtocol::None);
    c.on_miss = MissRule::Abort;
    c.duration = ms(100);
    let r = simulate(&opposite_orders(), &spec("fp:rm"), &c).unwrap();
    let d = r.deadlock.as_ref().expect("a deadlock");
    assert_eq!(d.at_ns, ms(5).as_ns());
    assert!(d.count > 1, "{d:?}");
    assert!(r.completed > 0);
}

#[test]
fn protocols_are_refused_where_they_do_not_apply() {
    let e = Simulator::new(
        &inversion(),
        &spec("edf"),
        with_protocol(LockingProtocol::Ipcp),
    )
    .err()
    .unwrap();
    assert!(
        e.to_string()
            .starts_with("protocol ipcp needs a fixed-priority scheduler"),
        "{e}"
    );
    let e = Simulator::new(
        &inversion(),
        &spec("fp:rm"),
        with_protocol(LockingProtocol::Dfp),
    )
    .err()
    .unwrap();
    assert!(
        e.to_string()
            .starts_with("protocol dfp needs an EDF scheduler"),
        "{e}"
    );
    let e = Simulator::new(
        &inversion(),
        &spec("rr:1ms"),
        with_protocol(LockingProtocol::Pip),
    )
    .err()
    .unwrap();
    assert!(e.to_string().starts_with("protocol pip needs"), "{e}");
}

// ----------------------------------------------------- determinism, overload

#[test]
fn same_seed_same_bytes() {
    let mut set = builtin("hartstone-ph");
    for t in &mut set.tasks {
        t.bcet = Some(Nanos::from_ns(t.wcet.as_ns() / 2));
    }
    let mut c = SimConfig::new(ms(5000));
    c.exec = ExecModel::Uniform;
    c.seed = 7;
    let json =
        |c: &SimConfig| serde_json::to_string(&simulate(&set, &spec("edf"), c).unwrap()).unwrap();
    let a = json(&c);
    assert_eq!(a, json(&c));
    c.seed = 8;
    assert_ne!(a, json(&c));
}

#[test]
fn overload_phase_scales_execution_times() {
    // x2 between 10 and 20 ms: the job released at 10 ms takes 4 ms.
    let set = TaskSet::new("p", vec![Task::new("a", ms(10), ms(2))]);
    let mut c = SimConfig::new(ms(30));
    c.phases = vec![Phase::parse("10ms..20ms:x2").unwrap()];
    let (_, s) = run_traced(&set, "edf", c);
    assert_eq!(s, segs(&[("a", 0, 2), ("a", 10, 14), ("a", 20, 22)]));
    // 48 % -> 120 % of a U = 0.2 set: factors 2.4 and 6.
    let mut c = SimConfig::new(ms(30));
    c.phases = vec![
        Phase::parse("0ms..10ms:48%").unwrap(),
        Phase::parse("10ms..30ms:120%").unwrap(),
    ];
    c.on_miss = MissRule::Abort;
    let r = simulate(&set, &spec("edf"), &c).unwrap();
    assert_eq!((r.released, r.completed, r.aborted), (3, 1, 2));
}

/// A phase that replaces a task: `a` (T = 10, C = 2 ms) is suspended in
/// [10, 25) ms and `b` (T = 5, C = 1 ms) exists only there. `a` releases at
/// 0, skips 10 and 20, and resumes at its first boundary at or after 25 ms,
/// 30 ms; `b` releases at 10, 15 and 20, none at 25.
#[test]
fn a_phase_suspends_a_task_and_releases_its_replacement() {
    let set = TaskSet::new("p", vec![Task::new("a", ms(10), ms(2))]);
    let mut c = SimConfig::new(ms(40));
    c.phases = vec![Phase {
        start: ms(10),
        end: ms(25),
        scale: rtlab_sim::Scale::UNCHANGED,
        tasks: vec![Task::new("b", ms(5), ms(1))],
        suspended: vec![0],
    }];
    let (r, s) = run_traced(&set, "edf", c.clone());
    assert_eq!(
        s,
        segs(&[
            ("a", 0, 2),
            ("b", 10, 11),
            ("b", 15, 16),
            ("b", 20, 21),
            ("a", 30, 32)
        ])
    );
    assert_eq!((r.released, r.deadline_misses), (5, 0));
    // A phase may only suspend tasks of the set.
    c.phases[0].suspended = vec![1];
    let e = simulate(&set, &spec("edf"), &c).unwrap_err().to_string();
    assert!(
        e.contains("suspends task index 1, but the set has 1 tasks"),
        "{e}"
    );
}

/// Release jitter, hand-computed. τ1 (C=1, T=4, J=2 ms, high priority) and
/// τ2 (C=2, T=8 ms). With `max`, every τ1 job arrives at 4k and is released
/// at 4k+2: τ2 runs [0,2), τ1 [2,3), ...; τ1's response counts from arrival,
/// so R1 = J + C = 3 ms (the analysis's R = w + J), and τ2 finishes at 2 ms.
/// Without jitter τ1 runs first: R1 = 1 ms, R2 = 3 ms.
#[test]
fn max_release_jitter_delays_every_release_and_counts_from_arrival() {
    let mut high = Task::new("t1", ms(4), ms(1)).with_priority(2);
    high.jitter = ms(2);
    let low = Task::new("t2", ms(8), ms(2)).with_priority(1);
    let set = TaskSet::new("jitter", vec![high, low]);

    let mut config = SimConfig::new(ms(16));
    config.jitter = "max".parse().unwrap();
    let (report, segments) = run_traced(&set, "fp:given", config);
    assert_eq!(
        first(&segments, ms(8)),
        segs(&[("t2", 0, 2), ("t1", 2, 3), ("t1", 6, 7)])
    );
    assert_eq!(task(&report, "t1").max_response_ns, Some(ms(3).as_ns()));
    assert_eq!(task(&report, "t1").min_response_ns, Some(ms(3).as_ns()));
    assert_eq!(task(&report, "t2").max_response_ns, Some(ms(2).as_ns()));
    assert_eq!(report.jitter, "max");
    assert_eq!(report.deadline_misses, 0);

    let (plain, _) = run_traced(&set, "fp:given", SimConfig::new(ms(16)));
    assert_eq!(task(&plain, "t1").max_response_ns, Some(ms(1).as_ns()));
    assert_eq!(task(&plain, "t2").max_response_ns, Some(ms(3).as_ns()));
}

/// `uniform` jitter draws each delay in [0, J] from the seed: the same seed
/// gives the same report, and every response lies in [C, C + J] for a task
/// that nothing can interfere with.
#[test]
fn uniform_release_jitter_is_seeded_and_bounded() {
    let mut alone = Task::new("t1", ms(10), ms(1));
    alone.jitter = ms(5);
    let set = TaskSet::new("jitter", vec![alone]);
    let mut config = SimConfig::new(Nanos::from_secs(2));
    config.jitter = "uniform".parse().unwrap();
    config.seed = 11;
    let a = simulate(&set, &spec("fp:rm"), &config).unwrap();
    let b = simulate(&set, &spec("fp:rm"), &config).unwrap();
    assert_eq!(a, b);
    let t1 = task(&a, "t1");
    assert_eq!(t1.released, 200);
    assert!(t1.min_response_ns.unwrap() >= ms(1).as_ns());
    assert!(t1.max_response_ns.unwrap() <= ms(6).as_ns());
    // 200 draws in [0, 5 ms]: not all the same.
    assert!(t1.max_response_ns > t1.min_response_ns);
}

// ------------------------------------------------ multiburst per-task wake-up

/// `wake=` takes a bare policy (the default), `TASK:POLICY` entries, or
/// both; the spec prints back in one canonical form that parses to the same
/// parameters.
#[test]
fn multiburst_per_task_wake_parses_and_round_trips() {
    use rtlab_sim::scheduler::multiburst::WakePolicy;
    let params = |s: &str| match spec(s) {
        SchedulerSpec::Multiburst(p) => p,
        other => panic!("{s} parsed as {other}"),
    };
    for (written, printed) in [
        ("multiburst", "multiburst"),
        ("multiburst:wake=next-burst", "multiburst:wake=next-burst"),
        ("multiburst:wake=end-of-round", "multiburst"),
        (
            "multiburst:wake=t1:immediate/t2:next-burst",
            "multiburst:wake=t1:immediate/t2:next-burst",
        ),
        (
            "multiburst:wake=next-burst/t3:immediate",
            "multiburst:wake=next-burst/t3:immediate",
        ),
        (
            "multiburst:wake=t3:immediate/next-burst",
            "multiburst:wake=next-burst/t3:immediate",
        ),
        (
            "multiburst:wake=end-of-round/t1:immediate",
            "multiburst:wake=t1:immediate",
        ),
        (
            "multiburst:wake=immediate/t2:end-of-round",
            "multiburst:wake=immediate/t2:end-of-round",
        ),
        (
            "multiburst:burst=2ms,wake=a:b:immediate,reshare=5:1/2",
            "multiburst:burst=2ms,wake=a:b:immediate,reshare=5:1/2",
        ),
    ] {
        let p = params(written);
        assert_eq!(p.to_string(), printed, "{written}");
        assert_eq!(spec(written).to_string(), printed, "{written}");
        assert_eq!(params(printed), p, "{written} -> {printed}");
    }
    let p = params("multiburst:wake=next-burst/t3:immediate/t1:end-of-round");
    assert_eq!(p.wake, WakePolicy::NextBurst);
    assert_eq!(
        p.wake_tasks,
        vec![
            ("t3".to_string(), WakePolicy::Immediate),
            ("t1".to_string(), WakePolicy::EndOfRound)
        ]
    );
    let p = params("multiburst:wake=a:b:immediate");
    assert_eq!(p.wake, WakePolicy::EndOfRound);
    assert_eq!(
        p.wake_tasks,
        vec![("a:b".to_string(), WakePolicy::Immediate)]
    );
}

/// Two CPU-bound tasks and a periodic one, 1 ms nominal bursts each (set
/// point 3 ms), equal shares. All three are released at 0 in the order b1,
/// b2, p. With `end-of-round` for all, p is appended: b1 0-1, b2 1-2, p 2-3,
/// b1 3-4, b2 4-5, p 5-6 (its 2 ms done: response 6 ms). Then b1 6-7, b2
/// 7-8 (round of 2 ms: the PI gives the next round 2 + 2·1 = 4 ms, 4/3 ms
/// each), b1 8-9.333..., and p's release at 10 ms, mid-round, waits for the
/// end of the round. With `wake=p:immediate` only p changes: at 0 it goes
/// before b1 (p 0-1, b1 1-2, b2 2-3, p 3-4: response 4 ms), and at 10 ms it
/// preempts b2 and starts at once. Naming b1 instead (never woken mid-round,
/// already first at 0) changes nothing.
#[test]
fn multiburst_immediate_for_one_task_runs_it_at_its_release() {
    let set = TaskSet::new(
        "wake",
        vec![
            Task::new("b1", ms(1000), ms(1000)),
            Task::new("b2", ms(1000), ms(1000)),
            Task::new("p", ms(10), ms(2)),
        ],
    );
    let base = "multiburst:burst=1ms,share=equal";
    let config = SimConfig::new(ms(40));
    let (all_end, s_end) = run_traced(&set, base, config.clone());
    let (one_imm, s_imm) = run_traced(&set, &format!("{base},wake=p:immediate"), config.clone());
    let (other, s_other) = run_traced(&set, &format!("{base},wake=b1:immediate"), config.clone());
    let (mixed, s_mixed) = run_traced(
        &set,
        &format!("{base},wake=immediate/p:end-of-round"),
        config.clone(),
    );
    assert_eq!(one_imm.scheduler, format!("{base},wake=p:immediate"));

    assert_eq!(
        first(&s_end, ms(8)),
        segs(&[
            ("b1", 0, 1),
            ("b2", 1, 2),
            ("p", 2, 3),
            ("b1", 3, 4),
            ("b2", 4, 5),
            ("p", 5, 6),
            ("b1", 6, 7),
            ("b2", 7, 8),
        ])
    );
    assert_eq!(
        first(&s_imm, ms(8)),
        segs(&[
            ("p", 0, 1),
            ("b1", 1, 2),
            ("b2", 2, 3),
            ("p", 3, 4),
            ("b1", 4, 5),
            ("b2", 5, 6),
            ("b1", 6, 7),
            ("b2", 7, 8),
        ])
    );
    // p's second job (released at 10 ms, mid-round): at once only when p
    // itself is `immediate`.
    let p_start_after = |s: &[(String, Nanos, Nanos)], t: Nanos| {
        s.iter()
            .find(|(n, start, _)| n == "p" && *start >= t)
            .map(|x| x.1)
            .unwrap()
    };
    assert_eq!(p_start_after(&s_imm, ms(10)), ms(10));
    assert!(p_start_after(&s_end, ms(10)) > ms(10));
    assert!(p_start_after(&s_mixed, ms(10)) > ms(10));
    assert_eq!(task(&one_imm, "p").min_response_ns, Some(ms(4).as_ns()));
    assert_eq!(task(&all_end, "p").min_response_ns, Some(ms(6).as_ns()));
    assert!(task(&one_imm, "p").max_response_ns < task(&all_end, "p").max_response_ns);
    // Only the named task's policy matters.
    assert_eq!(s_other, s_end);
    assert_eq!(other.tasks, all_end.tasks);
    assert_ne!(s_imm, s_end);
    // A bare default with an override: b2 goes first at 0 (immediate), p
    // stays end-of-round.
    assert_eq!(
        first(&s_mixed, ms(3)),
        segs(&[("b2", 0, 1), ("b1", 1, 2), ("p", 2, 3)])
    );
    assert_eq!(task(&mixed, "p").min_response_ns, Some(ms(6).as_ns()));
}

/// `ipi:burst=1ms,burst=2ms` used to run with the last value, silently.
#[test]
fn a_scheduler_parameter_given_twice_is_refused() {
    for text in [
        "ipi:burst=1ms,burst=2ms",
        "multiburst:share=equal,bmax=10ms,share=rate",
    ] {
        let e = text.parse::<SchedulerSpec>().unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("scheduler `{text}`: parameter `")),
            "{e}"
        );
        assert!(e.ends_with("` is given twice"), "{e}");
    }
    assert!("ipi:burst=1ms,bmax=30ms".parse::<SchedulerSpec>().is_ok());
}

/// A name no task has is a one-line configuration error when the scheduler
/// is built for the set; malformed `wake=` values fail when parsed.
#[test]
fn multiburst_wake_errors_name_the_problem() {
    let set = TaskSet::new(
        "two",
        vec![
            Task::new("t1", ms(10), ms(1)),
            Task::new("t2", ms(20), ms(2)),
        ],
    );
    let s = spec("multiburst:wake=t1:immediate/t9:next-burst");
    let e = Simulator::new(&set, &s, SimConfig::new(ms(20)))
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "scheduler multiburst: wake: no task named `t9` (tasks: t1, t2)"
    );
    let e = simulate(&set, &s, &SimConfig::new(ms(20))).unwrap_err();
    assert!(!e.to_string().contains('\n'), "{e}");
    // The same names resolve.
    assert!(simulate(
        &set,
        &spec("multiburst:wake=t1:immediate/t2:next-burst"),
        &SimConfig::new(ms(20))
    )
    .is_ok());

    for (bad, why) in [
        ("wake=t1:soon", "wake task `t1`: wake `soon`: use immediate"),
        ("wake=immediate/next-burst", "more than one default policy"),
        (
            "wake=t1:immediate/t1:next-burst",
            "task `t1` is given twice",
        ),
        ("wake=:immediate", "has no task name"),
        ("wake=t1:immediate/", "empty entry"),
    ] {
        let e = format!("multiburst:{bad}")
            .parse::<SchedulerSpec>()
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{bad}: {e}");
        assert!(!e.contains('\n'), "{bad}: {e}");
    }
}

/// `(job, finish)` of task 0's records, in job order.
fn finishes(records: &[rtlab_model::results::JobRecord]) -> Vec<(u64, Option<Nanos>)> {
    let mut out: Vec<_> = records
        .iter()
        .filter(|j| j.task == 0)
        .map(|j| (j.job, j.finish))
        .collect();
    out.sort();
    out
}

/// A config with no costs but the given `[throttling]` limits.
fn throttled(duration: Nanos, throttling: rtlab_model::overheads::Throttling) -> SimConfig {
    let mut config = SimConfig::new(duration);
    config.overheads = Some(rtlab_model::overheads::Overheads {
        throttling,
        ..rtlab_model::overheads::Overheads::zero()
    });
    config
}

/// RT throttling 6 ms per 10 ms, τ (C = 4 ms, T = D = 5 ms), fp:rm:
/// job 0 runs [0, 4); job 1 runs [5, 7), the window's 6 ms are used, the
/// rest of [0, 10) is a blackout; job 1 ends [10, 12) (late); job 2 runs
/// [12, 16) (late; 2 + 4 = 6 ms used at 16: blackout [16, 20)); job 3,
/// released at 15, runs [20, 24) (late). Two blackouts, 3 + 4 ms.
#[test]
fn rt_throttling_takes_the_rest_of_the_window_by_hand() {
    use rtlab_model::overheads::{Reservation, Throttling};
    let ms = Nanos::from_ms;
    let set = TaskSet::new("one", vec![Task::new("a", ms(5), ms(4))]);
    let limits = Throttling {
        rt: Some(Reservation::new(ms(6), ms(10)).unwrap()),
        fair_server: None,
    };
    let (report, records) = job_records(&set, "fp:rm", throttled(ms(25), limits));
    assert_eq!(
        finishes(&records),
        vec![
            (0, Some(ms(4))),
            (1, Some(ms(12))),
            (2, Some(ms(16))),
            (3, Some(ms(24))),
            (4, None)
        ]
    );
    let t = report.throttling.unwrap();
    assert_eq!((t.rt_throttles, t.rt_throttled_ns), (2, 7_000_000));
    assert_eq!(t.model, "rt 6ms per 10ms");
    // Without the table the same set meets every deadline and the report
    // has no throttling entry.
    let (plain, _) = job_records(&set, "fp:rm", SimConfig::new(ms(25)));
    assert_eq!(plain.deadline_misses, 0);
    assert!(plain.throttling.is_none());
}

/// The fair server 1 ms per 5 ms, τ (C = 4.5 ms, T = D = 5 ms), fp:rm.
/// The server starts with d = 5, r = 1: zero laxity at d − r = 4 while τ
/// runs, so it takes [4, 5) (new period, d = 9). Job 0 ends [5, 5.5)
/// (late), job 1 runs [5.5, 10) (on time). At 9 the server is replenished
/// (r = 1, d = 14): zero laxity at 13, it takes [13, 14) (d = 18); job 2
/// runs [10, 13) and [14, 15.5) (late). Job 3: [15.5, 16) at the end.
#[test]
fn the_fair_server_takes_the_processor_at_zero_laxity_by_hand() {
    use rtlab_model::overheads::{Reservation, Throttling};
    let (ms, us) = (Nanos::from_ms, Nanos::from_us);
    let set = TaskSet::new("one", vec![Task::new("a", ms(5), us(4_500))]);
    let limits = Throttling {
        rt: None,
        fair_server: Some(Reservation::new(ms(1), ms(5)).unwrap()),
    };
    let (report, records) = job_records(&set, "fp:rm", throttled(ms(16), limits));
    assert_eq!(
        finishes(&records),
        vec![
            (0, Some(us(5_500))),
            (1, Some(ms(10))),
            (2, Some(us(15_500))),
            (3, None)
        ]
    );
    let t = report.throttling.unwrap();
    assert_eq!((t.fair_server_runs, t.fair_server_ns), (2, 2_000_000));
    // τ with C = 4 ms: the server reaches zero laxity at 4 as τ's job
    // ends and runs in the idle [4, 5), as Linux's would; every job meets
    // its deadline.
    let light = TaskSet::new("one", vec![Task::new("a", ms(5), ms(4))]);
    let (report, _) = job_records(&light, "fp:rm", throttled(ms(50), limits));
    assert_eq!(report.deadline_misses, 0);
    // Under EDF the servers are not modelled, and the report says so.
    let (report, _) = job_records(&set, "edf", throttled(ms(16), limits));
    assert!(report
        .throttling
        .unwrap()
        .model
        .starts_with("not modelled under edf"));
}

/// An engine outside the simulator (the real-clock dispatcher) drives a
/// registry scheduler through the public view: jobs made with `Job::new`,
/// the view with `System::new`. EDF picks the earlier deadline; LLF the
/// smaller `d - remaining`, here the other job.
#[test]
fn an_outside_engine_drives_a_scheduler_through_the_public_view() {
    let tasks = vec![
        Task::new("a", ms(20), ms(4)).with_deadline(ms(10)),
        Task::new("b", ms(20), ms(1)).with_deadline(ms(8)),
    ];
    let mut jobs = vec![
        rtlab_sim::Job::new(0, 0, ms(0), ms(10), ms(4)),
        rtlab_sim::Job::new(1, 0, ms(0), ms(8), ms(1)),
    ];
    for job in &mut jobs {
        job.state = rtlab_sim::JobState::Ready;
    }
    let ready = [rtlab_sim::JobId::new(0), rtlab_sim::JobId::new(1)];
    let view = rtlab_sim::System::new(ms(0), &tasks, &jobs, &ready, None);
    let mut edf = spec("edf").build(&tasks).unwrap();
    assert_eq!(edf.pick(&view), Some(ready[1]));
    let mut llf = spec("llf").build(&tasks).unwrap();
    assert_eq!(llf.pick(&view), Some(ready[0]));
}

/// `wake` is charged once per instant with releases, `release` per
/// release (the dispatcher's one timer against Linux's per-thread ones).
/// a (T = 10 ms, C = 1 ms) and b (T = 20 ms, C = 1 ms) under fp:rm with
/// release = 10 us and wake = 100 us: at 0 and 20 ms both are released
/// (2 x 10 + 100 = 120 us before a runs), at 10 ms a alone (110 us). So a
/// finishes at 1.12, 11.11 and 21.12 ms, b at 2.12 and 22.12 ms.
#[test]
fn a_wake_up_is_charged_once_however_many_releases_coincide() {
    use rtlab_model::overheads::{LinearCost, Overheads};
    let (ms, us) = (Nanos::from_ms, Nanos::from_us);
    let set = TaskSet::new(
        "two",
        vec![Task::new("a", ms(10), ms(1)), Task::new("b", ms(20), ms(1))],
    );
    let mut config = SimConfig::new(ms(30));
    config.overheads = Some(Overheads {
        release: LinearCost::from_ps(0, 10_000_000),
        wake: LinearCost::from_ps(0, 100_000_000),
        ..Overheads::zero()
    });
    let (_, records) = job_records(&set, "fp:rm", config);
    let mut ends: Vec<_> = records.iter().map(|j| (j.task, j.job, j.finish)).collect();
    ends.sort();
    let at = |m: u64, u: u64| Some(ms(m) + us(u));
    assert_eq!(
        ends,
        vec![
            (0, 0, at(1, 120)),
            (0, 1, at(11, 110)),
            (0, 2, at(21, 120)),
            (1, 0, at(2, 120)),
            (1, 1, at(22, 120)),
        ]
    );
}

/// A call-back's amount counts from when the job gets the CPU, after the
/// overheads charged at the instant (as rtlab's dispatcher counts it on the
/// thread's CPU clock). a and b (C = 3 ms, T = 20 ms) under rr:2ms with
/// C_preempt = 100 us: a runs [0.1, 2.1] (a whole quantum after the switch's
/// cost), b [2.2, 4.2], a [4.3, 5.3] and ends, b [5.3, 6.3]. Counted from
/// the decision the quantum would lose the switch: a would end at 5.2.
#[test]
fn a_quantum_is_the_jobs_time_after_the_switch_is_charged() {
    use rtlab_model::overheads::{LinearCost, Overheads};
    let us = Nanos::from_us;
    let set = TaskSet::new(
        "two",
        vec![
            Task::new("a", Nanos::from_ms(20), Nanos::from_ms(3)),
            Task::new("b", Nanos::from_ms(20), Nanos::from_ms(3)),
        ],
    );
    let mut config = SimConfig::new(Nanos::from_ms(20));
    config.overheads = Some(Overheads {
        preempt: LinearCost::from_ps(0, 100_000_000),
        ..Overheads::zero()
    });
    let (_, records) = job_records(&set, "rr:2ms", config);
    let mut ends: Vec<_> = records
        .iter()
        .map(|j| (j.task, j.start, j.finish))
        .collect();
    ends.sort();
    assert_eq!(
        ends,
        vec![
            (0, Some(us(0)), Some(us(5300))),
            (1, Some(us(2100)), Some(us(6300))),
        ]
    );
}
