//! Paper 004's validation experiment (§5) at one time scale: the ideal and
//! overhead-aware analytic breakdowns, the simulated one and the measured
//! one, side by side, with the prediction errors (`rtlab breakdown`).
//!
//! | breakdown | how |
//! | --- | --- |
//! | ideal | [`crate::breakdown`] on the exact test (RTA for fixed priorities, EDF demand) |
//! | overhead-aware | the same on paper 004's Theorem 1 / [`crate::edf_overheads`] with the overheads file |
//! | simulated | [`crate::measured_breakdown::search`] with the simulator, the same overheads, as runner (one repeat: it is deterministic; resolution / [`SIM_RESOLUTION_DIVISOR`]) |
//! | measured | [`crate::measured_breakdown::search`] with real threads as runner |
//!
//! The runs are driven by `rtlab_study::breakdown::run_scale` through a `Runner`; this
//! module holds the predictions, the time scaling and the document.
//!
//! The measured search starts from the bracket `(min(overhead-aware,
//! simulated) − resolution, ideal + resolution)`: the overhead-aware test is
//! sufficient, so its α should pass, and no platform with costs should pass
//! above the ideal α. Both guesses are widened when wrong.
//!
//! **Prediction error** (percentage points) = `100 (U*_measured −
//! U*_predicted)`: positive when the platform did better than predicted,
//! as a sufficient test's prediction should.
//!
//! **Time scale**: [`scale_times`] multiplies every time of the set by a
//! factor, so a set can be moved to where a platform's costs (µs) matter
//! against its periods (paper 004's `ins_big` scaled INS up by ten; here
//! sets are scaled down).

use serde::Serialize;

use rtlab_model::overheads::Overheads;
use rtlab_model::{Nanos, TaskSet};

use crate::breakdown::ONE_PPB;
use crate::measured_breakdown::{MeasuredBreakdown, PassRule};
use crate::overhead_rta::TimerModel;
use crate::suite::{self, Options};
use rtlab_model::policy::AnalysedPolicy;

/// The simulated search bisects this many times finer than the measured
/// one: runs are cheap and deterministic, so the prediction is sharper than
/// what it is compared with.
pub const SIM_RESOLUTION_DIVISOR: u64 = 10;

/// `set` with every time — period, deadline, offset, jitter, C, best-case
/// C and critical sections — multiplied by `factor_ppb / 10^9`, each
/// rounded to the nearest nanosecond (halves up; periods, deadlines and
/// execution times at least 1 ns). One monotone rounding for all keeps
/// every order of the set: C <= D, sections nested and within C. Critical
/// sections scale their start and end, so their lengths follow.
pub fn scale_times(set: &TaskSet, factor_ppb: u64) -> TaskSet {
    let scale = |n: Nanos| -> Nanos {
        let v = (u128::from(n.as_ns()) * u128::from(factor_ppb) + u128::from(ONE_PPB / 2))
            / u128::from(ONE_PPB);
        Nanos::from_ns(u64::try_from(v).unwrap_or(u64::MAX))
    };
    let at_least_1 = |n: Nanos| scale(n).max(Nanos::from_ns(1));
    let mut scaled = set.clone();
    for task in &mut scaled.tasks {
        task.period = at_least_1(task.period);
        task.deadline = at_least_1(task.deadline);
        task.wcet = at_least_1(task.wcet).min(task.deadline.max(Nanos::from_ns(1)));
        task.bcet = task.bcet.map(|b| at_least_1(b).min(task.wcet));
        task.offset = scale(task.offset);
        task.jitter = scale(task.jitter);
        for cs in &mut task.critical_sections {
            let end = cs.end().map_or(Nanos::MAX, scale).min(task.wcet);
            cs.start = scale(cs.start).min(end);
            cs.length = end.saturating_sub(cs.start);
        }
    }
    scaled
}

/// An analytic breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Predicted {
    /// The largest schedulable α (to 1e-6).
    pub alpha: f64,
    /// `U*` at that α.
    pub utilization: f64,
}

/// `100 (U*_measured − U*_predicted)` per prediction; `None` where either
/// is missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PredictionError {
    /// Against the ideal analysis.
    pub ideal_pp: Option<f64>,
    /// Against the overhead-aware analysis.
    pub overhead_aware_pp: Option<f64>,
    /// Against the simulation.
    pub simulated_pp: Option<f64>,
}

/// How to run the experiment at one scale.
#[derive(Debug, Clone)]
pub struct ExperimentConfig {
    /// The policy analysed, simulated and run.
    pub policy: AnalysedPolicy,
    /// The costs for the overhead-aware analysis and the simulation.
    pub overheads: Overheads,
    /// Bisection resolution in α (ppb).
    pub resolution_ppb: u64,
    /// Runs per α on real threads.
    pub repeat: u32,
    /// How an α's runs decide it on real threads.
    pub pass_rule: PassRule,
    /// The utilization above which the platform stops real-time threads
    /// (RT throttling, 0.95; the fair server of Linux 6.12+, 0.95 while
    /// other tasks want the CPU), or `None` when nothing caps it.
    pub utilization_limit: Option<f64>,
}

/// The experiment at one time scale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScaleResult {
    /// The time scale.
    pub time_scale: f64,
    /// The same in ppb (exact).
    pub time_scale_ppb: u64,
    /// U of the time-scaled set at α = 1.
    pub utilization: f64,
    /// Each run's length, real and simulated.
    pub duration_per_step_ns: u64,
    /// The ideal analytic breakdown.
    pub ideal: Option<Predicted>,
    /// The overhead-aware analytic breakdown.
    pub overhead_aware: Option<Predicted>,
    /// The simulated breakdown, with its steps.
    pub simulated: MeasuredBreakdown,
    /// The measured breakdown, with its steps.
    pub measured: MeasuredBreakdown,
    /// Measured minus each prediction.
    pub prediction_error: PredictionError,
    /// The first failing α's utilization came within 0.05 of the
    /// platform's limit (RT throttling, the fair server): the limit, not the
    /// scheduler, may have capped the measured breakdown.
    pub throttling_may_cap: bool,
}

/// `rtlab breakdown --json`: the experiment at every time scale asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakdownDocument {
    /// The task set's name.
    pub taskset: String,
    /// Where it came from (path or `builtin:NAME`).
    pub origin: String,
    /// `rm`, `dm` or `edf`.
    pub policy: String,
    /// The overheads profile's name.
    pub overheads: String,
    /// The timer model of the overhead-aware test and the simulator
    /// (`tickless` or `tick 8ms`).
    pub timer: String,
    /// Linux's limits the overhead-aware test and the simulator charge (the
    /// overheads file's `[throttling]`, `rt 950ms per 1s, fair server 50ms
    /// per 1s`); absent when it states none, so such documents print as
    /// before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttling_model: Option<String>,
    /// Runs per α on real threads.
    pub repeat: u32,
    /// `all` (every run of an α without a miss) or `any` (best of `repeat`).
    pub pass_rule: PassRule,
    /// Bisection resolution in α.
    pub resolution: f64,
    /// The CPU the task threads were pinned to.
    pub cpu: Option<usize>,
    /// RT throttling in force when the command started (`950000/1000000`,
    /// `off`), and whether the command switched it off for each run.
    pub rt_throttling: String,
    /// `--no-rt-throttling`.
    pub no_rt_throttling: bool,
    /// Ctrl-C (or a failed run) ended the command early: the last scale is
    /// partial and later ones are missing.
    pub interrupted: bool,
    /// One entry per time scale, in the order given.
    pub scales: Vec<ScaleResult>,
}

/// The ideal and the overhead-aware analytic breakdowns of `set`.
pub fn predictions(
    set: &TaskSet,
    cfg: &ExperimentConfig,
) -> (Option<Predicted>, Option<Predicted>) {
    let options = Options {
        overheads: Some(cfg.overheads.clone()),
        timers: vec![TimerModel::for_overheads(&cfg.overheads)],
        ..Options::default()
    };
    let runs = suite::breakdowns(set, cfg.policy, &options);
    let predicted = |i: usize| {
        runs.get(i).and_then(|r| r.result).map(|b| Predicted {
            alpha: b.scale,
            utilization: b.utilization,
        })
    };
    (predicted(0), predicted(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::task::CriticalSection;
    use rtlab_model::Task;

    #[test]
    fn time_scale_multiplies_every_time_exactly() {
        let ms = Nanos::from_ms;
        let mut t = Task::new("a", ms(25), ms(3))
            .with_deadline(ms(23))
            .with_offset(ms(1));
        t.jitter = Nanos::from_us(500);
        t.bcet = Some(ms(2));
        t.critical_sections = vec![CriticalSection {
            resource: "bus".into(),
            start: ms(1),
            length: Nanos::from_us(500),
        }];
        let set = TaskSet::new(
            "s",
            vec![t, Task::new("b", Nanos::from_ns(1001), Nanos::from_ns(3))],
        );
        let s = scale_times(&set, 10_000_000); // x 0.01
        let a = &s.tasks[0];
        assert_eq!(a.period, Nanos::from_us(250));
        assert_eq!(a.deadline, Nanos::from_us(230));
        assert_eq!(a.wcet, Nanos::from_us(30));
        assert_eq!(a.offset, Nanos::from_us(10));
        assert_eq!(a.jitter, Nanos::from_us(5));
        assert_eq!(a.bcet, Some(Nanos::from_us(20)));
        assert_eq!(a.critical_sections[0].start, Nanos::from_us(10));
        assert_eq!(a.critical_sections[0].length, Nanos::from_us(5));
        // 1001 x 0.01 = 10.01 -> 10; 3 x 0.01 = 0.03 -> at least 1 ns.
        assert_eq!(s.tasks[1].period, Nanos::from_ns(10));
        assert_eq!(s.tasks[1].wcet, Nanos::from_ns(1));
        // Halves round up: 1001 x 0.5 = 500.5 -> 501.
        assert_eq!(
            scale_times(&set, 500_000_000).tasks[1].period,
            Nanos::from_ns(501)
        );
        // Up: x 10.
        let big = scale_times(&set, 10 * ONE_PPB);
        assert_eq!(big.tasks[0].period, ms(250));
        assert_eq!(big.tasks[0].wcet, ms(30));
        assert!(big.errors().is_empty() && s.errors().is_empty());
        assert_eq!(set.tasks[0].period, ms(25), "the input is not modified");
        assert_eq!(scale_times(&set, ONE_PPB), set);
    }
}
