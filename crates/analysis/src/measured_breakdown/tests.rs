use super::*;
use rtlab_model::TaskSet;
use std::cell::RefCell;

/// What the scripts below are: a run of the set scaled by α, and its U.
trait Script {
    type Error;
    fn run(&mut self, alpha_ppb: u64) -> Result<StepOutcome, Self::Error>;
    fn utilization(&self, alpha_ppb: u64) -> f64;
}

/// [`super::search`] with `script` as its oracle.
fn search<S: Script>(script: &mut S, cfg: &SearchConfig) -> Search<S::Error> {
    let script = RefCell::new(script);
    super::search(
        cfg,
        |a| script.borrow().utilization(a),
        |a| script.borrow_mut().run(a),
        |_| {},
    )
}

/// α in ppb from thousandths, for readable expectations.
fn milli(a: u64) -> u64 {
    a * 1_000_000
}

/// A runner whose breakdown is `breakdown`: a run at α misses iff α
/// exceeds it. With `noise`, a run at a passing α also misses with
/// probability `noise` (SplitMix64 from `seed`, deterministic).
struct Scripted {
    breakdown: u64,
    noise: f64,
    state: u64,
    /// Fail these (α, run index at that α) pairs whatever the breakdown.
    fail_at: Vec<(u64, u32)>,
    runs_at: Vec<(u64, u32)>,
    /// Interrupt the n-th run (0-based).
    interrupt_at: Option<usize>,
    runs: usize,
}

impl Scripted {
    fn new(breakdown: u64) -> Scripted {
        Scripted {
            breakdown,
            noise: 0.0,
            state: 0,
            fail_at: Vec::new(),
            runs_at: Vec::new(),
            interrupt_at: None,
            runs: 0,
        }
    }

    fn noisy(breakdown: u64, noise: f64, seed: u64) -> Scripted {
        Scripted {
            noise,
            state: seed,
            ..Scripted::new(breakdown)
        }
    }

    fn uniform(&mut self) -> f64 {
        // SplitMix64.
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    }
}

impl Script for Scripted {
    type Error = String;

    fn run(&mut self, alpha_ppb: u64) -> Result<StepOutcome, String> {
        let n = self.runs;
        self.runs += 1;
        let k = match self.runs_at.iter_mut().find(|(a, _)| *a == alpha_ppb) {
            Some((_, k)) => {
                *k += 1;
                *k
            }
            None => {
                self.runs_at.push((alpha_ppb, 1));
                1
            }
        };
        let noisy = self.noise > 0.0 && self.uniform() < self.noise;
        let forced = self.fail_at.contains(&(alpha_ppb, k));
        let misses = u64::from(alpha_ppb > self.breakdown || noisy || forced);
        Ok(StepOutcome {
            misses,
            jobs: 100,
            interrupted: self.interrupt_at == Some(n),
            ..StepOutcome::default()
        })
    }

    fn utilization(&self, alpha_ppb: u64) -> f64 {
        alpha_ppb as f64 / ONE_PPB as f64 * 0.5
    }
}

fn config(bracket: (u64, u64)) -> SearchConfig {
    SearchConfig::around(bracket)
}

/// (phase, α in ppb, repeat, pass) of every step.
fn trail(r: &MeasuredBreakdown) -> Vec<(Phase, u64, u32, bool)> {
    r.steps
        .iter()
        .map(|s| (s.phase, s.alpha_ppb, s.repeat, s.pass))
        .collect()
}

#[test]
fn bisection_follows_the_exact_trail_to_the_resolution() {
    let mut runner = Scripted::new(914_000_000);
    let found = search(&mut runner, &config((milli(800), milli(1000))));
    assert!(found.error.is_none());
    let r = found.result;
    use Phase::*;
    let pass3 = |p, a| [(p, a, 1, true), (p, a, 2, true), (p, a, 3, true)];
    let mut expected = Vec::new();
    expected.extend(pass3(Bracket, 800_000_000));
    expected.push((Bracket, 1_000_000_000, 1, false));
    expected.extend(pass3(Bisect, 900_000_000));
    expected.push((Bisect, 950_000_000, 1, false));
    expected.push((Bisect, 925_000_000, 1, false));
    expected.extend(pass3(Bisect, 912_500_000));
    expected.push((Bisect, 918_750_000, 1, false));
    expected.push((Bisect, 915_625_000, 1, false));
    expected.extend(pass3(Confirm, 912_500_000));
    assert_eq!(trail(&r), expected);
    assert_eq!(r.alpha_ppb, Some(912_500_000));
    assert_eq!(r.alpha, Some(0.9125));
    assert_eq!(r.utilization, Some(0.9125 * 0.5));
    assert_eq!(r.failing_alpha, Some(0.915625));
    assert!(r.confirmed && !r.capped && !r.interrupted);
    assert_eq!(r.steps[0].utilization, 0.4);
    assert_eq!(r.steps[0].jobs, 100);
}

#[test]
fn the_result_is_within_one_resolution_below_the_true_breakdown() {
    for b in [
        milli(123),
        milli(500),
        666_666_666,
        milli(999),
        milli(1000),
        1_234_567_891,
    ] {
        for bracket in [
            (milli(800), milli(1000)),
            (milli(100), milli(200)),
            (milli(1500), milli(1600)),
            (milli(900), milli(900)),
        ] {
            let mut runner = Scripted::new(b);
            let r = search(&mut runner, &config(bracket)).result;
            let a = r.alpha_ppb.unwrap();
            assert!(
                a <= b && b - a <= DEFAULT_RESOLUTION_PPB,
                "b {b} bracket {bracket:?}: {a}"
            );
            let hi = (r.failing_alpha.unwrap() * ONE_PPB as f64).round() as u64;
            assert!(hi > b && hi - a <= DEFAULT_RESOLUTION_PPB, "{hi}");
            assert!(r.confirmed);
            assert_eq!(r.steps.last().unwrap().phase, Phase::Confirm);
        }
    }
}

#[test]
fn a_wrong_bracket_is_widened_from_its_width() {
    use Phase::*;
    // Both ends fail: lo moves down by the width (0.1), then 0.2.
    let mut runner = Scripted::new(milli(620));
    let r = search(&mut runner, &config((milli(900), milli(1000)))).result;
    let tried: Vec<(Phase, u64)> = r
        .steps
        .iter()
        .filter(|s| s.repeat == 1)
        .map(|s| (s.phase, s.alpha_ppb))
        .take(3)
        .collect();
    assert_eq!(
        tried,
        [
            (Bracket, milli(900)),
            (Widen, milli(800)),
            (Widen, milli(600))
        ]
    );
    assert_eq!(r.failing_alpha.map(|_| ()), Some(()));
    assert!(r.alpha_ppb.unwrap() <= milli(620));
    // Both ends pass: hi moves up by 0.1, then 0.2, 0.4.
    let mut runner = Scripted::new(milli(1310));
    let r = search(&mut runner, &config((milli(800), milli(900)))).result;
    let ups: Vec<u64> = r
        .steps
        .iter()
        .filter(|s| s.repeat == 1 && matches!(s.phase, Bracket | Widen))
        .map(|s| s.alpha_ppb)
        .collect();
    assert_eq!(ups, [milli(800), milli(900), milli(1100), milli(1500)]);
    assert!(r.alpha_ppb.unwrap() <= milli(1310));
}

#[test]
fn nothing_passes_and_everything_passes() {
    let mut runner = Scripted::new(0);
    let r = search(&mut runner, &config((milli(800), milli(1000)))).result;
    assert_eq!(r.alpha, None);
    assert_eq!(r.utilization, None);
    assert!(!r.confirmed);
    let last = r.steps.last().unwrap();
    assert_eq!((last.alpha_ppb, last.pass), (DEFAULT_RESOLUTION_PPB, false));

    let mut runner = Scripted::new(u64::MAX);
    let r = search(&mut runner, &config((milli(800), milli(1000)))).result;
    assert_eq!(r.alpha_ppb, Some(4 * ONE_PPB));
    assert!(r.capped && r.confirmed);
    assert_eq!(r.failing_alpha, None);
}

#[test]
fn an_alpha_passes_only_when_every_repeat_passes() {
    // The second run at 0.9 misses: 0.9 fails although it is below the
    // breakdown, and the third run at 0.9 is not made.
    let mut runner = Scripted::new(914_000_000);
    runner.fail_at.push((milli(900), 2));
    let r = search(&mut runner, &config((milli(800), milli(1000)))).result;
    let at_09: Vec<(u32, bool)> = r
        .steps
        .iter()
        .filter(|s| s.alpha_ppb == milli(900))
        .map(|s| (s.repeat, s.pass))
        .collect();
    assert_eq!(at_09, [(1, true), (2, false)]);
    assert!(r.alpha_ppb.unwrap() < milli(900));
    // With one repeat the same runner finds 0.9 passing.
    let mut runner = Scripted::new(914_000_000);
    runner.fail_at.push((milli(900), 2));
    let mut cfg = config((milli(800), milli(1000)));
    cfg.repeat = 1;
    let r = search(&mut runner, &cfg).result;
    assert_eq!(r.alpha_ppb, Some(912_500_000));
}

#[test]
fn a_noisy_runner_never_reports_above_the_true_breakdown() {
    for seed in 0..50 {
        let b = 870_000_000;
        let mut runner = Scripted::noisy(b, 0.1, seed);
        let r = search(&mut runner, &config((milli(800), milli(1000)))).result;
        if let Some(a) = r.alpha_ppb {
            assert!(a <= b, "seed {seed}: {a}");
        }
        // The repeat rule in the record: a passing α has `repeat` passing
        // runs 1..=3 in a row; a failing one stops at its first failure.
        let mut i = 0;
        while i < r.steps.len() {
            let first = &r.steps[i];
            let run: Vec<&Step> = r.steps[i..]
                .iter()
                .take_while(|s| s.alpha_ppb == first.alpha_ppb && s.phase == first.phase)
                .take(3)
                .collect();
            let repeats: Vec<u32> = run.iter().map(|s| s.repeat).collect();
            assert_eq!(repeats, (1..=run.len() as u32).collect::<Vec<_>>());
            assert!(run[..run.len() - 1].iter().all(|s| s.pass), "seed {seed}");
            assert!(run.len() == 3 || !run.last().unwrap().pass, "seed {seed}");
            i += run.len();
        }
        // A confirmation that failed sent the search down again.
        let confirms: Vec<&Step> = r
            .steps
            .iter()
            .filter(|s| s.phase == Phase::Confirm && !s.pass)
            .collect();
        if let Some(c) = confirms.first() {
            if r.confirmed {
                assert!(r.alpha_ppb.unwrap() < c.alpha_ppb, "seed {seed}");
            }
        }
    }
}

#[test]
fn a_failed_confirmation_moves_the_result_down() {
    // Everything up to 0.914 passes, except the confirming run at 0.9125.
    let mut runner = Scripted::new(914_000_000);
    runner.fail_at.push((912_500_000, 4));
    let r = search(&mut runner, &config((milli(800), milli(1000)))).result;
    assert!(r.confirmed);
    assert_eq!(r.alpha_ppb, Some(907_500_000));
    assert_eq!(r.failing_alpha, Some(0.9125));
    let confirms: Vec<(u64, bool)> = r
        .steps
        .iter()
        .filter(|s| s.phase == Phase::Confirm && (s.repeat == 1 || !s.pass))
        .map(|s| (s.alpha_ppb, s.pass))
        .collect();
    // The fourth run at 0.9125 is its first confirming run.
    assert_eq!(confirms, [(912_500_000, false), (907_500_000, true)]);
}

#[test]
fn ctrl_c_keeps_what_was_measured() {
    let mut runner = Scripted::new(914_000_000);
    runner.interrupt_at = Some(6); // the third run at 0.9
    let r = search(&mut runner, &config((milli(800), milli(1000)))).result;
    assert!(r.interrupted && !r.confirmed);
    assert_eq!(r.steps.len(), 7);
    assert!(r.steps[6].interrupted && !r.steps[6].pass);
    assert_eq!(r.alpha_ppb, Some(milli(800)));
    assert_eq!(r.failing_alpha, Some(1.0));
}

#[test]
fn a_runner_error_ends_the_search_and_is_returned() {
    struct Failing(u32);
    impl Script for Failing {
        type Error = String;
        fn run(&mut self, _: u64) -> Result<StepOutcome, String> {
            self.0 += 1;
            if self.0 == 2 {
                return Err("lost thread".into());
            }
            Ok(StepOutcome {
                jobs: 1,
                ..StepOutcome::default()
            })
        }
        fn utilization(&self, a: u64) -> f64 {
            a as f64 / 1e9
        }
    }
    let found = search(&mut Failing(0), &config((milli(800), milli(1000))));
    assert_eq!(found.error.as_deref(), Some("lost thread"));
    assert!(found.result.interrupted);
    assert_eq!(found.result.steps.len(), 1);
}

#[test]
fn a_refused_run_fails_its_alpha() {
    let outcome = StepOutcome {
        refused: Some("admission".into()),
        ..StepOutcome::default()
    };
    assert!(!outcome.passed());
    assert!(StepOutcome::default().passed());
}

#[test]
fn a_scaled_set_oracle_scales_every_wcet() {
    use crate::breakdown::scale_wcets;
    use rtlab_model::{Nanos, Task};
    let ms = Nanos::from_ms;
    let set = TaskSet::new(
        "s",
        vec![Task::new("a", ms(10), ms(2)), Task::new("b", ms(20), ms(4))],
    );
    let mut seen = Vec::new();
    let utilization = |a| scale_wcets(&set, a).utilization();
    assert!((utilization(2_500_000_000) - 1.0).abs() < 1e-12);
    let r = super::search(
        &config((milli(1000), milli(2000))),
        utilization,
        |a| {
            let s = scale_wcets(&set, a);
            seen.push(s.tasks[1].wcet);
            Ok::<_, ()>(StepOutcome {
                misses: u64::from(s.utilization() > 0.5),
                jobs: 3,
                ..StepOutcome::default()
            })
        },
        |_| {},
    )
    .result;
    // U = 0.4 α: the breakdown is α = 1.25.
    assert_eq!(r.alpha_ppb, Some(1_250_000_000));
    assert_eq!(seen[0], ms(4));
    assert_eq!(seen[3], ms(8));
}

#[test]
fn best_of_repeat_passes_an_alpha_at_its_first_clean_run() {
    // Runs 1 and 2 at 0.9 miss (a stall), run 3 does not: under `any` 0.9
    // passes after three runs; 0.95 (above the breakdown) fails after all
    // three; a passing α below needs one run.
    let mut runner = Scripted::new(914_000_000);
    runner.fail_at.extend([(milli(900), 1), (milli(900), 2)]);
    let mut cfg = config((milli(800), milli(1000)));
    cfg.rule = PassRule::Any;
    let r = search(&mut runner, &cfg).result;
    let at = |a: u64| -> Vec<(u32, bool)> {
        r.steps
            .iter()
            .filter(|s| s.alpha_ppb == a)
            .map(|s| (s.repeat, s.pass))
            .collect()
    };
    assert_eq!(at(milli(900)), [(1, false), (2, false), (3, true)]);
    assert_eq!(at(milli(950)), [(1, false), (2, false), (3, false)]);
    assert_eq!(at(milli(800)), [(1, true)]);
    assert_eq!(r.alpha_ppb, Some(912_500_000));
    assert!(r.confirmed);
    // The same stall under `all` fails 0.9.
    let mut runner = Scripted::new(914_000_000);
    runner.fail_at.extend([(milli(900), 1), (milli(900), 2)]);
    let r = search(&mut runner, &config((milli(800), milli(1000)))).result;
    assert!(r.alpha_ppb.unwrap() < milli(900));
}

#[test]
fn best_of_repeat_sees_through_stalls_that_all_of_repeat_cannot() {
    // Every run misses with probability 0.5 whatever α (stalls): `all`
    // finds far less than the breakdown, `any` of 8 finds it.
    let b = 870_000_000;
    let mut cfg = config((milli(800), milli(1000)));
    cfg.repeat = 8;
    cfg.rule = PassRule::Any;
    let mut found = 0;
    for seed in 0..20 {
        let r = search(&mut Scripted::noisy(b, 0.5, seed), &cfg).result;
        let a = r.alpha_ppb.unwrap();
        assert!(a <= b);
        found += u32::from(b - a <= DEFAULT_RESOLUTION_PPB);
    }
    assert!(found >= 18, "{found} of 20");
}
