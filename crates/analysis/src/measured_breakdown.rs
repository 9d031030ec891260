//! The measured breakdown utilization: paper 004's experiment (§5) as a
//! search over α driven by a runner.
//!
//! Paper 004 scales every execution time by α (periods fixed), runs the set
//! "for a sufficient amount of time at each scaling level", and records
//! `U* = Σ α Ci / Ti` at the largest α with no missed deadline. Here the
//! search is a bisection over an oracle that runs the scaled set once and
//! counts misses: real threads (`rtlab breakdown`), the simulator (the
//! simulated breakdown), both as `rtlab_study::breakdown` drives them
//! through a `Runner`, or a script (the tests). α is an integer in parts per billion, as
//! in [`crate::breakdown`], so every step is an exact task set.
//!
//! # The search
//!
//! 1. **Bracket**: start from `bracket = (lo, hi)`, an α expected to pass
//!    and one expected to fail (from the analytic predictions). If `lo`
//!    fails, it becomes the failing end and `lo` moves down by the bracket's
//!    width, doubling each time, down to `min_alpha` (where a failure means
//!    no breakdown). If `hi` passes, it becomes the passing end and `hi`
//!    moves up the same way, up to `max_alpha` (where a pass means the
//!    breakdown is at least `max_alpha`: `capped`).
//! 2. **Bisect** between the passing `lo` and the failing `hi` until
//!    `hi - lo <= resolution`: `mid = lo + ⌊(hi - lo)/2⌋`.
//! 3. **Confirm**: run the final `lo` again. If the confirmation fails, `lo`
//!    is a failing α after all (the platform is noisy): it becomes `hi` and
//!    the search goes on downwards (widening by `resolution`, doubling),
//!    at most [`MAX_CONFIRMATIONS`] times; after that the result is
//!    reported unconfirmed.
//!
//! **The repeat rule** ([`PassRule::All`], the default): an α passes only
//! when `repeat` runs in a row all have zero misses; the first run with a
//! miss fails it (the remaining repeats are not run, since they cannot
//! change the verdict). Noise on a real machine can only add misses, so the
//! rule errs low, never high. [`PassRule::Any`] (best of `repeat`) passes
//! an α at its first run with zero misses and fails it only when every run
//! missed: on a platform whose stalls (a virtual machine, a busy kernel)
//! make misses at any load, it measures the scheduler rather than the
//! stalls, and can err high only when an overloaded α happens to miss
//! nothing in a run, which a run that starts at the critical instant makes
//! unlikely.
//!
//! Every run is recorded as a [`Step`] (α, U, which repeat, misses, jobs,
//! pass). An interrupted run (Ctrl-C) ends the search with what was
//! measured; a runner error ends it too and is handed back beside it.

use serde::Serialize;

use crate::breakdown::ONE_PPB;

/// The default bisection resolution in α: 0.005.
pub const DEFAULT_RESOLUTION_PPB: u64 = 5_000_000;

/// The default number of runs that must all pass at an α.
pub const DEFAULT_REPEAT: u32 = 3;

/// How many failed confirmations send the search down again before the
/// result is reported unconfirmed.
pub const MAX_CONFIRMATIONS: u32 = 3;

/// What one run of the scaled set gave.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StepOutcome {
    /// Jobs that missed their deadline (late, or unfinished past it).
    pub misses: u64,
    /// Jobs released.
    pub jobs: u64,
    /// The run was cut short (Ctrl-C): the search stops here.
    pub interrupted: bool,
    /// The platform refused to run the set at this α (e.g. SCHED_DEADLINE
    /// admission); counts as a failure.
    pub refused: Option<String>,
    /// The kernel's account of a real run (`--kernel-trace`: events,
    /// losses, misses by cause); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_trace: Option<rtlab_model::kernel_trace::KernelTraceSummary>,
    /// A real step that missed and was run once more before it counted
    /// (`rtlab_study::confirm`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<rtlab_model::disturbance::Rerun>,
}

impl StepOutcome {
    /// A run that passed: no miss, not refused, not interrupted.
    pub fn passed(&self) -> bool {
        self.misses == 0 && self.refused.is_none() && !self.interrupted
    }
}

/// When an α passes, given its runs (module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PassRule {
    /// Every one of `repeat` runs has no miss.
    #[default]
    All,
    /// At least one of `repeat` runs has no miss (best of `repeat`).
    Any,
}

impl PassRule {
    /// `all` or `any`.
    pub fn name(self) -> &'static str {
        match self {
            PassRule::All => "all",
            PassRule::Any => "any",
        }
    }
}

/// Where the search starts and how fine it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchConfig {
    /// (an α expected to pass, an α expected to fail), in ppb.
    pub bracket: (u64, u64),
    /// Stop bisecting when the bracket is at most this wide (ppb, >= 1).
    pub resolution_ppb: u64,
    /// Runs per α (>= 1).
    pub repeat: u32,
    /// How the runs of an α decide it.
    pub rule: PassRule,
    /// The smallest α tried (ppb, >= 1): failing there means no breakdown.
    pub min_alpha_ppb: u64,
    /// The largest α tried (ppb): passing there means `capped`.
    pub max_alpha_ppb: u64,
}

impl SearchConfig {
    /// The defaults around `bracket`: resolution 0.005, 3 repeats, α from
    /// the resolution up to 4.
    pub fn around(bracket: (u64, u64)) -> SearchConfig {
        SearchConfig {
            bracket,
            resolution_ppb: DEFAULT_RESOLUTION_PPB,
            repeat: DEFAULT_REPEAT,
            rule: PassRule::All,
            min_alpha_ppb: DEFAULT_RESOLUTION_PPB,
            max_alpha_ppb: 4 * ONE_PPB,
        }
    }
}

/// Which part of the search a step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The two ends of the starting bracket.
    Bracket,
    /// An end moved because the bracket was wrong.
    Widen,
    /// A bisection midpoint.
    Bisect,
    /// The confirming run at the final α.
    Confirm,
}

/// One run of the search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Which part of the search.
    pub phase: Phase,
    /// α.
    pub alpha: f64,
    /// α in parts per billion (exact).
    pub alpha_ppb: u64,
    /// U of the scaled set.
    pub utilization: f64,
    /// Which run at this α (1-based).
    pub repeat: u32,
    /// Deadline misses in the run.
    pub misses: u64,
    /// Jobs released in the run.
    pub jobs: u64,
    /// The run passed (no miss, not refused, not interrupted).
    pub pass: bool,
    /// The run was cut short by Ctrl-C.
    pub interrupted: bool,
    /// Why the platform refused to run it, if it did.
    pub refused: Option<String>,
    /// The kernel's account of a real run (`--kernel-trace`: events,
    /// losses, misses by cause); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_trace: Option<rtlab_model::kernel_trace::KernelTraceSummary>,
    /// A real step that missed and was run once more before it counted;
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<rtlab_model::disturbance::Rerun>,
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredBreakdown {
    /// The largest α that passed (`None`: none did).
    pub alpha: Option<f64>,
    /// The same in ppb.
    pub alpha_ppb: Option<u64>,
    /// `U*`: the utilization of the set scaled by `alpha`.
    pub utilization: Option<f64>,
    /// The smallest failing α above `alpha`, if one was seen.
    pub failing_alpha: Option<f64>,
    /// The final α passed its confirming run.
    pub confirmed: bool,
    /// `alpha` is `max_alpha`: the breakdown is at least this.
    pub capped: bool,
    /// The search was stopped (Ctrl-C or a runner error) before it ended.
    pub interrupted: bool,
    /// Every run, in order.
    pub steps: Vec<Step>,
}

/// A search's result, and the runner error that stopped it, if one did
/// (what was measured until then is in `result`).
#[derive(Debug)]
pub struct Search<E> {
    /// What was found.
    pub result: MeasuredBreakdown,
    /// The error that ended the search early.
    pub error: Option<E>,
}

/// Why a trial did not give a verdict.
enum Stop<E> {
    Interrupted,
    Failed(E),
}

/// The search's state: the oracle, the configuration and the steps.
struct Searcher<'r, E> {
    /// Runs the set scaled by α once.
    run: &'r mut dyn FnMut(u64) -> Result<StepOutcome, E>,
    /// U of the set scaled by α.
    utilization: &'r dyn Fn(u64) -> f64,
    /// Sees every step as it is made.
    observe: &'r mut dyn FnMut(&Step),
    cfg: SearchConfig,
    steps: Vec<Step>,
}

impl<E> Searcher<'_, E> {
    /// Runs α up to `repeat` times, stopping as soon as the rule has its
    /// verdict: at the first failing run under `All`, at the first passing
    /// run under `Any`.
    fn trial(&mut self, alpha_ppb: u64, phase: Phase) -> Result<bool, Stop<E>> {
        let utilization = (self.utilization)(alpha_ppb);
        for repeat in 1..=self.cfg.repeat.max(1) {
            let outcome = (self.run)(alpha_ppb).map_err(Stop::Failed)?;
            let step = Step {
                phase,
                alpha: alpha_ppb as f64 / ONE_PPB as f64,
                alpha_ppb,
                utilization,
                repeat,
                misses: outcome.misses,
                jobs: outcome.jobs,
                pass: outcome.passed(),
                interrupted: outcome.interrupted,
                refused: outcome.refused,
                kernel_trace: outcome.kernel_trace,
                rerun: outcome.rerun,
            };
            (self.observe)(&step);
            let (pass, interrupted) = (step.pass, step.interrupted);
            self.steps.push(step);
            if interrupted {
                return Err(Stop::Interrupted);
            }
            match (self.cfg.rule, pass) {
                (PassRule::All, false) => return Ok(false),
                (PassRule::Any, true) => return Ok(true),
                _ => {}
            }
        }
        Ok(self.cfg.rule == PassRule::All)
    }
}

/// The state of the bracket between trials.
#[derive(Debug, Clone, Copy)]
struct Bracket {
    /// The passing end (known to pass when `lo_known`).
    lo: u64,
    lo_known: bool,
    /// The failing end (known to fail when `hi_known`).
    hi: u64,
    hi_known: bool,
    /// How far the next widening moves an end.
    width: u64,
    capped: bool,
    confirmed: bool,
    /// False when `min_alpha` failed: there is no breakdown.
    found: bool,
}

/// Searches for the largest α at which `run` misses nothing (module
/// documentation): `run(α)` runs the set scaled by α once (the simulator,
/// real threads or a script: `rtlab_study::breakdown` hands it a
/// `Runner`), `utilization(α)` is the scaled set's U, and `observe` sees
/// every step as it is made.
pub fn search<E>(
    cfg: &SearchConfig,
    utilization: impl Fn(u64) -> f64,
    mut run: impl FnMut(u64) -> Result<StepOutcome, E>,
    mut observe: impl FnMut(&Step),
) -> Search<E> {
    let cfg = normalised(cfg);
    let (lo, hi) = cfg.bracket;
    let mut b = Bracket {
        lo,
        lo_known: false,
        hi,
        hi_known: false,
        width: (hi - lo).max(cfg.resolution_ppb),
        capped: false,
        confirmed: false,
        found: true,
    };
    let mut s = Searcher {
        run: &mut run,
        utilization: &utilization,
        observe: &mut observe,
        cfg,
        steps: Vec::new(),
    };
    let stop = run_search(&mut s, &mut b).err();
    let (interrupted, error) = match stop {
        None => (false, None),
        Some(Stop::Interrupted) => (true, None),
        Some(Stop::Failed(e)) => (true, Some(e)),
    };
    let alpha_ppb = (b.lo_known && b.found).then_some(b.lo);
    Search {
        result: MeasuredBreakdown {
            alpha: alpha_ppb.map(|a| a as f64 / ONE_PPB as f64),
            alpha_ppb,
            utilization: alpha_ppb.map(|a| (s.utilization)(a)),
            failing_alpha: b.hi_known.then(|| b.hi as f64 / ONE_PPB as f64),
            confirmed: b.confirmed,
            capped: b.capped && alpha_ppb.is_some(),
            interrupted,
            steps: s.steps,
        },
        error,
    }
}

/// The configuration with its ends ordered and inside `[min, max]`.
fn normalised(cfg: &SearchConfig) -> SearchConfig {
    let min = cfg.min_alpha_ppb.max(1);
    let max = cfg.max_alpha_ppb.max(min);
    let resolution = cfg.resolution_ppb.max(1);
    let lo = cfg.bracket.0.clamp(min, max);
    let mut hi = cfg.bracket.1.clamp(min, max);
    if hi <= lo {
        hi = lo.saturating_add(resolution).min(max);
    }
    SearchConfig {
        bracket: (lo, hi),
        resolution_ppb: resolution,
        repeat: cfg.repeat.max(1),
        rule: cfg.rule,
        min_alpha_ppb: min,
        max_alpha_ppb: max,
    }
}

fn run_search<E>(s: &mut Searcher<'_, E>, b: &mut Bracket) -> Result<(), Stop<E>> {
    let (min, max, resolution) = (
        s.cfg.min_alpha_ppb,
        s.cfg.max_alpha_ppb,
        s.cfg.resolution_ppb,
    );
    let mut confirmations = 0;
    let mut phase = Phase::Bracket;
    loop {
        // 1. A passing lower end, widening downwards while it fails.
        while !b.lo_known {
            if s.trial(b.lo, phase)? {
                b.lo_known = true;
            } else {
                (b.hi, b.hi_known) = (b.lo, true);
                if b.lo == min {
                    b.found = false;
                    return Ok(());
                }
                b.lo = b.lo.saturating_sub(b.width).max(min);
                b.width = b.width.saturating_mul(2);
                phase = Phase::Widen;
            }
        }
        // ... and a failing upper end, widening upwards while it passes.
        while !b.hi_known && !b.capped {
            if b.lo == max {
                b.capped = true;
                break;
            }
            if b.hi <= b.lo {
                b.hi = b.lo.saturating_add(b.width).min(max);
            }
            if s.trial(b.hi, phase)? {
                b.lo = b.hi;
                b.width = b.width.saturating_mul(2);
                b.hi = b.lo.saturating_add(b.width).min(max);
                phase = Phase::Widen;
            } else {
                b.hi_known = true;
            }
        }
        // 2. Bisection.
        while b.hi_known && b.hi - b.lo > resolution {
            let mid = b.lo + (b.hi - b.lo) / 2;
            if s.trial(mid, Phase::Bisect)? {
                b.lo = mid;
            } else {
                b.hi = mid;
            }
        }
        // 3. The confirming run.
        if s.trial(b.lo, Phase::Confirm)? {
            b.confirmed = true;
            return Ok(());
        }
        confirmations += 1;
        (b.hi, b.hi_known, b.capped) = (b.lo, true, false);
        if confirmations >= MAX_CONFIRMATIONS {
            // The last α that passed before failing its confirmation.
            return Ok(());
        }
        if b.lo == min {
            b.found = false;
            return Ok(());
        }
        b.width = resolution;
        b.lo = b.hi.saturating_sub(b.width).max(min);
        b.lo_known = false;
        phase = Phase::Widen;
    }
}

#[cfg(test)]
mod tests;
