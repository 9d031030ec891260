//! The control schedulers (paper 002) and the hybrid (paper 001).

use rtlab_model::{file, Nanos, Task, TaskSet};
use rtlab_sim::{simulate, MissRule, Phase, SchedulerSpec, SimConfig, SimReport};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

fn run(set: &TaskSet, spec: &str, config: &SimConfig) -> SimReport {
    simulate(set, &spec.parse::<SchedulerSpec>().unwrap(), config).unwrap()
}

/// Paper 002 §4.1: two batch threads and a periodic one (about 10 ms
/// active, 20 ms asleep), nominal burst 1 ms each (set point 3 ms), equal
/// shares, then 20/40/40 % from round 50.
fn section_4_1() -> TaskSet {
    TaskSet::new(
        "paper-002-4.1",
        vec![
            Task::new("batch1", ms(1000), ms(1000)),
            Task::new("batch2", ms(1000), ms(1000)),
            Task::new("periodic", ms(30), Nanos::from_us(3_333)),
        ],
    )
}

fn rounds(r: &SimReport) -> Vec<(u64, u64)> {
    let data = r.scheduler_data.as_ref().unwrap();
    data["first_rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["duration_ns"].as_u64().unwrap(),
                x["set_point_ns"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn multiburst_round_duration_tracks_its_set_point() {
    let r = run(
        &section_4_1(),
        "multiburst:burst=1ms,share=equal,reshare=50:1/2/2",
        &SimConfig::new(ms(300)),
    );
    let rounds = rounds(&r);
    assert!(rounds.len() >= 100, "{} rounds", rounds.len());
    assert!(rounds.iter().all(|&(_, sp)| sp == ms(3).as_ns()));
    // Before any disturbance the rounds are exact.
    assert!(rounds[..3].iter().all(|&(d, _)| d == ms(3).as_ns()));
    // Each time the periodic thread sleeps the round shortens, and within
    // six rounds the regulator brings it back within 1 % of 3 ms.
    let near = |d: u64| d.abs_diff(ms(3).as_ns()) <= 30_000;
    for (k, w) in rounds[..100].windows(7).enumerate() {
        assert!(
            w.iter().any(|&(d, _)| near(d)),
            "rounds {k}..{} never near the set point",
            k + 7
        );
    }
    let share_near = rounds[..100].iter().filter(|&&(d, _)| near(d)).count();
    assert!(
        share_near >= 50,
        "only {share_near} of 100 rounds within 1 %"
    );
    // The periodic thread still gets its work done every period.
    assert_eq!(r.tasks[2].misses, 0);
}

#[test]
fn ipi_shares_the_processor_in_rounds() {
    // Three equal CPU-bound tasks: I+PI settles on its 12 ms set point
    // (4 ms nominal burst x 3), every task gets a third.
    let set = TaskSet::new(
        "cpu",
        (0..3)
            .map(|i| Task::new(format!("c{i}"), ms(1000), ms(1000)))
            .collect(),
    );
    let r = run(&set, "ipi:share=equal", &SimConfig::new(ms(600)));
    let rounds = rounds(&r);
    assert!(rounds.len() >= 40);
    assert!(
        rounds[5..]
            .iter()
            .all(|&(d, sp)| d == sp && sp == ms(12).as_ns()),
        "{:?}",
        &rounds[..8]
    );
    // One switch per burst: three per round.
    let per_round = r.context_switches / rounds.len() as u64;
    assert_eq!(
        per_round,
        3,
        "{} switches in {} rounds",
        r.context_switches,
        rounds.len()
    );
}

#[test]
fn control_schedulers_meet_hartstone_baseline() {
    let set = file::load("builtin:hartstone-ph").unwrap().set;
    for spec in [
        "ipi",
        "multiburst",
        "multiburst:wake=immediate",
        "multiburst:wake=next-burst",
    ] {
        let r = run(&set, spec, &SimConfig::new(ms(4000)));
        assert_eq!(
            r.released,
            r.completed + r.tasks.iter().map(|t| t.unfinished).sum::<u64>(),
            "{spec}"
        );
        assert!(r.completed > 200, "{spec}");
        assert_eq!(r.deadline_misses, 0, "{spec}");
    }
}

#[test]
fn hybrid_is_edf_when_feasible_and_fixed_priority_under_overload() {
    // Feasible: identical to EDF, job for job.
    let set = file::load("builtin:lf-scenario-4").unwrap().set;
    let config = SimConfig::new(ms(200));
    let h = run(&set, "hybrid:dm", &config);
    let e = run(&set, "edf", &config);
    assert_eq!(h.tasks, e.tasks);
    assert_eq!(h.scheduler_data.as_ref().unwrap()["mode_switches"], 0);

    // Extended Hartstone: EDF's domino effect versus FP's graceful
    // degradation; the hybrid follows FP in the overload.
    let set = file::load("builtin:hartstone-ph").unwrap().set;
    let mut config = SimConfig::new(Nanos::from_secs(60));
    config.phases = Phase::extended_hartstone();
    config.on_miss = MissRule::Skip;
    let edf = run(&set, "edf", &config);
    let fp = run(&set, "fp:rm", &config);
    let hybrid = run(&set, "hybrid", &config);
    assert!(
        edf.deadline_misses > 10 * fp.deadline_misses,
        "edf {} fp {}",
        edf.deadline_misses,
        fp.deadline_misses
    );
    assert!(hybrid.deadline_misses <= fp.deadline_misses);
    assert!(hybrid.first_miss_ns >= Some(Nanos::from_secs(30).as_ns()));
}

/// Found by the `scheduler_spec` fuzz target: the spec (and a `wake=` task
/// name) was quoted raw in its error, so a carriage return or newline in it
/// broke the one-line promise.
#[test]
fn scheduler_spec_errors_stay_one_line_whatever_the_input() {
    for text in [
        "i=p1im:bursrr:06\r\r\r\rt=1ms,burst=2ms",
        "rr:1\nxs",
        "ipi:burst=\n",
        "multiburst:wake=t1:imm\u{1b}ediate",
        "fp:\u{202e}rm",
    ] {
        let message = text.parse::<SchedulerSpec>().unwrap_err().to_string();
        assert!(
            !message.contains(['\n', '\r', '\u{1b}', '\u{202e}']),
            "{message:?}"
        );
    }
    let set = rtlab_model::file::load("builtin:lf-scenario-4")
        .unwrap()
        .set;
    let spec: SchedulerSpec = "multiburst:wake=t2:immediate/r:2ri\n\ni:\n\nfXp\0ta1:next-burst"
        .parse()
        .unwrap();
    let message = spec
        .build_for(&set)
        .err()
        .expect("no task r:2ri...")
        .to_string();
    assert!(!message.contains(['\n', '\0']), "{message:?}");
    assert!(
        message.starts_with("scheduler multiburst: wake: no task named `r:2ri\\n"),
        "{message}"
    );
}
