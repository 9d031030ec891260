//! Overload: how EDF, FPS and the hybrid behave when the load exceeds
//! 100 %, transiently and permanently (paper 001, Carletto & Vardanega,
//! Ada-Europe 2017, "Resilience to Overload Situations").
//!
//! Paper 001's claims: "FPS presents a linear behavior" and "EDF's
//! behaviour varies dramatically depending on the nature of the overload
//! situation (transient vs permanent)"; the proposal (`hybrid`) runs EDF
//! below 100 % and FPS above.
//!
//! # The experiment
//!
//! A base set at a base load `U` below 100 % (default: one generated set at
//! 80 %) is run, for each load level `L` (default 100 %..150 % by 10 %),
//! each [`Profile`] and each scheduler, for `duration`:
//!
//! * **transient**: the base set, a burst at `L` for
//!   `[burst_start, burst_start + burst_length)`, then the base set again;
//! * **permanent**: `L` throughout.
//!
//! At load `L` a job of the base set executes `ceil(C · L / U)` instead of
//! `C` ([`profile`]). What happens to a late job is the runner's choice;
//! under the simulator's default (`--on-miss continue`) it runs to
//! completion and delays its task's next jobs, which is what lets EDF's
//! domino effect show.
//!
//! # What is reported
//!
//! Per profile x level x scheduler ([`OverloadRow`]): jobs released, deadline
//! misses (per task in [`TaskMissRow`] and in total), the miss ratio
//! `misses / released`, and the indicators that test the claims:
//!
//! * **linearity**: per profile and scheduler, the least-squares line of
//!   total misses against load in percent ([`MissFit`], slope and R²; see
//!   [`fit`]). "FPS degrades linearly" holds when FPS's R² is close to 1;
//! * **domino effect**: the fraction of tasks with at least one miss
//!   (`tasks_missing_fraction`) and the fraction of all jobs missed (the
//!   miss ratio). Under permanent overload EDF's misses spread over every
//!   task (fraction near 1), while FPS's stay on the lowest-priority tasks:
//!   `misses_on_lowest_ranks` is true when the tasks that missed are
//!   exactly the `k` lowest in deadline-monotonic order (`k` = tasks
//!   missing), and `highest_missing_rank` is the deadline-monotonic rank
//!   (1 = most urgent) of the most urgent task that missed;
//! * **recovery** (transient only): `misses_after_burst`, the misses whose
//!   deadline falls after the burst, and `recovery_ns`, how long after the
//!   burst's end the last deadline was missed. Both come from runs of the
//!   same profile cut short at time `t`: such a run counts exactly the
//!   misses with deadline at or before `t` (a job released before `t` whose
//!   deadline is later is not counted; one whose deadline passed is, whether
//!   it finished late or not), so `m(t)` is non-decreasing and the last
//!   missed deadline is the least `t` with `m(t) = m(duration)`, found by
//!   bisection to `recovery_resolution`. The reported `recovery_ns` is that
//!   `t` minus the burst's end: the last miss lies in
//!   `(recovery_ns - resolution, recovery_ns]` after it.
//!   `recovered_before_end` is false when misses went on into the run's
//!   last `resolution`. A runner that records its missed deadlines
//!   ([`RunCounts::missed_deadlines`]) also gives `misses_in_burst`, the
//!   misses with a deadline in `[burst start, burst end]`; without a
//!   `recovery_resolution` (the real runs: a cut-short rerun on real
//!   threads would be another measurement, not a prefix of this one)
//!   recovery is read from that one run's deadlines, exactly, and
//!   `recovered_before_end` means the longest period passed without a miss
//!   before the end.
//!
//! Schedulers or profiles the runner cannot run ([`Runner::supports`];
//! real threads have no hybrid) are skipped and named in
//! [`OverloadSection::skipped`].

pub mod fit;
pub mod profile;

use rtlab_analysis::breakdown::scale_wcets;
use rtlab_analysis::priority::assign;
use rtlab_model::generate::{generate_set, GenerateError, GeneratorConfig, PeriodDistribution};
use rtlab_model::policy::PriorityAssignment;
use rtlab_model::{Nanos, TaskSet};
use serde::Serialize;

pub use profile::Profile;

use crate::runner::{counted, name, plain, RunCounts, RunSpec, Runner, EDF, FPS, HYBRID};
use rtlab_model::policy::ModelScheduler;

/// Parts per million of one processor in 100 %.
const FULL_PPM: u64 = 1_000_000;

/// Where the base set comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum BaseSet {
    /// Set 0 of this generator's stream, generated at the base load (the
    /// configuration's own `utilization` is replaced by it).
    Generated(GeneratorConfig),
    /// This set, its execution times scaled (rounded up, as
    /// `rtlab_analysis::breakdown::scale_wcets`) to the base load.
    Given(TaskSet),
}

/// What the overload section runs.
#[derive(Clone, Debug, PartialEq)]
pub struct OverloadConfig {
    /// The base set.
    pub base: BaseSet,
    /// Its load, in parts per million (below 1 000 000).
    pub base_load_ppm: u64,
    /// Overload levels, in parts per million.
    pub levels_ppm: Vec<u64>,
    /// Length of each run.
    pub duration: Nanos,
    /// When the transient burst starts.
    pub burst_start: Nanos,
    /// How long it lasts (it must end before the run does).
    pub burst_length: Nanos,
    /// Profiles to run.
    pub profiles: Vec<Profile>,
    /// Schedulers to compare.
    pub schedulers: Vec<ModelScheduler>,
    /// Resolution of the transient recovery time; `None` skips it (it costs
    /// about `log2((duration - burst end) / resolution) + 1` extra runs per
    /// transient row with misses).
    pub recovery_resolution: Option<Nanos>,
}

impl Default for OverloadConfig {
    /// Set 0 of seed 1: 10 tasks, RandFixedSum, log-uniform periods in
    /// [10 ms, 100 ms] at 1 ms, implicit deadlines, at 80 %; levels 100 %,
    /// 110 %, ..., 150 %; 10 s runs; the burst in [2 s, 3 s); both profiles;
    /// EDF, FPS and the hybrid; recovery to 10 ms.
    fn default() -> Self {
        OverloadConfig {
            base: BaseSet::Generated(GeneratorConfig {
                tasks: 10,
                utilization: 0.8,
                periods: PeriodDistribution::log_uniform(
                    Nanos::from_ms(10),
                    Nanos::from_ms(100),
                    Nanos::from_ms(1),
                ),
                seed: 1,
                name_prefix: "overload".into(),
                ..GeneratorConfig::default()
            }),
            base_load_ppm: 800_000,
            levels_ppm: (0..=5).map(|k| FULL_PPM + k * 100_000).collect(),
            duration: Nanos::from_secs(10),
            burst_start: Nanos::from_secs(2),
            burst_length: Nanos::from_secs(1),
            profiles: Profile::ALL.to_vec(),
            schedulers: vec![EDF, FPS, HYBRID],
            recovery_resolution: Some(Nanos::from_ms(10)),
        }
    }
}

/// Why the section could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OverloadError {
    /// A setting that cannot mean anything.
    #[error("overload: {setting}: {message}")]
    Config {
        /// The setting (as the CLI names it).
        setting: &'static str,
        /// What is wrong and what would do.
        message: String,
    },
    /// The base set could not be generated.
    #[error("overload: generating the base set: {0}")]
    Generate(#[from] GenerateError),
    /// A run failed.
    #[error("overload: {profile} {scheduler} run at {level_pct} %: {message}")]
    Run {
        /// Profile of the run.
        profile: &'static str,
        /// Scheduler of the run.
        scheduler: &'static str,
        /// Load level, in percent.
        level_pct: f64,
        /// The runner's message.
        message: String,
    },
}

/// One task of the base set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BaseTask {
    /// Name.
    pub name: String,
    /// Period.
    pub period_ns: u64,
    /// Relative deadline.
    pub deadline_ns: u64,
    /// Execution time at the base load.
    pub wcet_ns: u64,
    /// Deadline-monotonic rank, 1 = most urgent (ties: declared first).
    pub dm_rank: usize,
}

/// The base set run without overload, per scheduler.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BaselineRow {
    /// Scheduler.
    #[serde(serialize_with = "crate::runner::serialize_name")]
    pub scheduler: ModelScheduler,
    /// Jobs released.
    pub released: u64,
    /// Deadline misses.
    pub misses: u64,
}

/// One profile x level x scheduler.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverloadRow {
    /// Profile.
    pub profile: Profile,
    /// Load level in percent.
    pub load_pct: f64,
    /// Scheduler.
    #[serde(serialize_with = "crate::runner::serialize_name")]
    pub scheduler: ModelScheduler,
    /// Jobs released (all tasks).
    pub released: u64,
    /// Deadline misses (all tasks).
    pub misses: u64,
    /// `misses / released` (0 when nothing was released).
    pub miss_ratio: f64,
    /// Tasks with at least one miss.
    pub tasks_missing: usize,
    /// `tasks_missing / tasks`.
    pub tasks_missing_fraction: f64,
    /// Deadline-monotonic rank (1 = most urgent) of the most urgent task
    /// that missed; `None` without misses.
    pub highest_missing_rank: Option<usize>,
    /// True when the tasks that missed are exactly the `tasks_missing`
    /// least urgent (deadline monotonic); `None` without misses.
    pub misses_on_lowest_ranks: Option<bool>,
    /// Transient: misses with a deadline in the burst, `[start, end]`
    /// (when the runner records missed deadlines; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misses_in_burst: Option<u64>,
    /// Transient: misses with a deadline after the burst's end.
    pub misses_after_burst: Option<u64>,
    /// Transient: the last missed deadline after the burst's end, minus that
    /// end, rounded up to the recovery resolution (0 when no deadline after
    /// the burst was missed).
    pub recovery_ns: Option<u64>,
    /// Transient: false when deadlines were still missed in the run's last
    /// resolution step (the run ended before the set recovered).
    pub recovered_before_end: Option<bool>,
}

/// Misses of one task in one row (for the per-task table and CSV).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskMissRow {
    /// Profile.
    pub profile: Profile,
    /// Load level in percent.
    pub load_pct: f64,
    /// Scheduler.
    #[serde(serialize_with = "crate::runner::serialize_name")]
    pub scheduler: ModelScheduler,
    /// Task name.
    pub task: String,
    /// Its deadline-monotonic rank (1 = most urgent).
    pub dm_rank: usize,
    /// Jobs released.
    pub released: u64,
    /// Deadline misses.
    pub misses: u64,
}

/// Total misses against load for one profile and scheduler, fitted by
/// least squares ([`fit::least_squares`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MissFit {
    /// Profile.
    pub profile: Profile,
    /// Scheduler.
    #[serde(serialize_with = "crate::runner::serialize_name")]
    pub scheduler: ModelScheduler,
    /// Levels fitted.
    pub points: usize,
    /// Misses per percentage point of load.
    pub slope_misses_per_pct: f64,
    /// The line's value at 0 % (an extrapolation).
    pub intercept: f64,
    /// Coefficient of determination (1: exactly linear); `None` when the
    /// misses are the same at every level.
    pub r_squared: Option<f64>,
}

/// The overload section's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverloadSection {
    /// The base set's name.
    pub taskset: String,
    /// Its utilization as run (after rounding to whole nanoseconds).
    pub base_utilization: f64,
    /// Its tasks.
    pub tasks: Vec<BaseTask>,
    /// Length of each run.
    pub duration_ns: u64,
    /// The transient burst, `[start, end)`.
    pub burst_start_ns: u64,
    /// End of the burst.
    pub burst_end_ns: u64,
    /// Resolution of `recovery_ns`, when computed.
    pub recovery_resolution_ns: Option<u64>,
    /// The base set without overload, per scheduler.
    pub baseline: Vec<BaselineRow>,
    /// Profile x level x scheduler, in that nesting order.
    pub rows: Vec<OverloadRow>,
    /// The same runs per task.
    pub task_rows: Vec<TaskMissRow>,
    /// Misses against load, per profile and scheduler.
    pub fits: Vec<MissFit>,
    /// What the runner could not run, one sentence each.
    pub skipped: Vec<String>,
}

/// Runs the overload section with `runner`.
pub fn run<R: Runner>(
    runner: &mut R,
    config: &OverloadConfig,
) -> Result<OverloadSection, OverloadError> {
    check(config)?;
    let set = base_set(config)?;
    let ranks = dm_ranks(&set)?;
    let burst = (
        config.burst_start,
        config.burst_start.saturating_add(config.burst_length),
    );
    let mut section = OverloadSection {
        taskset: set.name.clone(),
        base_utilization: set.utilization(),
        tasks: set
            .tasks
            .iter()
            .zip(&ranks)
            .map(|(t, &dm_rank)| BaseTask {
                name: t.name.clone(),
                period_ns: t.period.as_ns(),
                deadline_ns: t.deadline.as_ns(),
                wcet_ns: t.wcet.as_ns(),
                dm_rank,
            })
            .collect(),
        duration_ns: config.duration.as_ns(),
        burst_start_ns: burst.0.as_ns(),
        burst_end_ns: burst.1.as_ns(),
        recovery_resolution_ns: config.recovery_resolution.map(Nanos::as_ns),
        baseline: Vec::new(),
        rows: Vec::new(),
        task_rows: Vec::new(),
        fits: Vec::new(),
        skipped: Vec::new(),
    };
    let base_spec = |scheduler| plain(scheduler, config.duration);
    for &scheduler in &config.schedulers {
        if !runner.supports(&base_spec(scheduler)) {
            section.skipped.push(format!(
                "{}: the runner cannot run it (no baseline, no overload rows)",
                name(scheduler)
            ));
            continue;
        }
        let counts = counted(runner.run(&set, &base_spec(scheduler)))
            .map_err(|e| run_error("baseline", scheduler, config.base_load_ppm, e))?;
        section.baseline.push(BaselineRow {
            scheduler,
            released: counts.tasks.iter().map(|t| t.released).sum(),
            misses: total_misses(&counts),
        });
    }
    for &profile in &config.profiles {
        for &level in &config.levels_ppm {
            for &scheduler in &config.schedulers {
                let spec = RunSpec {
                    scheduler,
                    duration: config.duration,
                    phases: profile::phases(profile, level, burst, config.duration),
                };
                if !runner.supports(&base_spec(scheduler)) {
                    continue;
                }
                if !runner.supports(&spec) {
                    let note = format!(
                        "{} {}: the runner cannot run overload phases with this scheduler",
                        profile.name(),
                        name(scheduler)
                    );
                    if !section.skipped.contains(&note) {
                        section.skipped.push(note);
                    }
                    continue;
                }
                let counts = counted(runner.run(&set, &spec))
                    .map_err(|e| run_error(profile.name(), scheduler, level, e))?;
                if counts.tasks.len() != set.tasks.len() {
                    return Err(run_error(
                        profile.name(),
                        scheduler,
                        level,
                        format!(
                            "the runner returned {} tasks for a set of {}",
                            counts.tasks.len(),
                            set.tasks.len()
                        ),
                    ));
                }
                let mut row = row_of(profile, level, scheduler, &counts, &ranks);
                let timeline = counts.missed_deadlines.as_deref();
                if let (Profile::Transient, Some(missed)) = (profile, timeline) {
                    row.misses_in_burst = Some(
                        missed
                            .iter()
                            .filter(|&&d| burst.0 <= d && d <= burst.1)
                            .count() as u64,
                    );
                }
                if let (Profile::Transient, None, Some(missed)) =
                    (profile, config.recovery_resolution, timeline)
                {
                    let recovery = recovery_from_timeline(missed, burst.1, config.duration, &set);
                    row.misses_after_burst = Some(recovery.misses_after_burst);
                    row.recovery_ns = Some(recovery.recovery.as_ns());
                    row.recovered_before_end = Some(recovery.recovered_before_end);
                } else if let (Profile::Transient, Some(resolution)) =
                    (profile, config.recovery_resolution)
                {
                    let recovery = recovery(
                        runner,
                        &set,
                        scheduler,
                        level,
                        burst,
                        config.duration,
                        resolution,
                        row.misses,
                    )
                    .map_err(|e| run_error(profile.name(), scheduler, level, e))?;
                    row.misses_after_burst = Some(recovery.misses_after_burst);
                    row.recovery_ns = Some(recovery.recovery.as_ns());
                    row.recovered_before_end = Some(recovery.recovered_before_end);
                }
                section.rows.push(row);
                section
                    .task_rows
                    .extend(
                        counts
                            .tasks
                            .iter()
                            .zip(&ranks)
                            .map(|(t, &dm_rank)| TaskMissRow {
                                profile,
                                load_pct: pct(level),
                                scheduler,
                                task: t.name.clone(),
                                dm_rank,
                                released: t.released,
                                misses: t.deadline_misses,
                            }),
                    );
            }
        }
    }
    section.fits = fits(&section.rows, &config.profiles, &config.schedulers);
    Ok(section)
}

/// Refuses settings [`run`] cannot mean (it calls this first; callers that
/// run other work before it can call it up front).
pub fn check(config: &OverloadConfig) -> Result<(), OverloadError> {
    let bad = |setting, message: String| Err(OverloadError::Config { setting, message });
    if config.base_load_ppm == 0 || config.base_load_ppm >= FULL_PPM {
        return bad(
            "base-load",
            format!(
                "must be above 0 % and below 100 % (got {} %): the base set must be schedulable load",
                pct(config.base_load_ppm)
            ),
        );
    }
    if config.levels_ppm.is_empty() || config.levels_ppm.contains(&0) {
        return bad(
            "levels",
            "give at least one load level, each above 0 % (e.g. 100,110,120)".into(),
        );
    }
    if config.duration.is_zero() {
        return bad("duration", "must be longer than 0".into());
    }
    if config.profiles.is_empty() || config.schedulers.is_empty() {
        return bad(
            "profiles",
            "give at least one profile and one scheduler".into(),
        );
    }
    let burst_end = config.burst_start.checked_add(config.burst_length);
    if config.profiles.contains(&Profile::Transient)
        && (config.burst_length.is_zero() || burst_end.is_none_or(|end| end >= config.duration))
    {
        return bad(
            "burst",
            format!(
                "the burst ({} from {}) must last longer than 0 and end before the run ({})",
                config.burst_length, config.burst_start, config.duration
            ),
        );
    }
    if config.recovery_resolution.is_some_and(Nanos::is_zero) {
        return bad("recovery-resolution", "must be longer than 0".into());
    }
    Ok(())
}

/// The base set at the base load.
fn base_set(config: &OverloadConfig) -> Result<TaskSet, OverloadError> {
    let base = config.base_load_ppm as f64 / FULL_PPM as f64;
    let set = match &config.base {
        BaseSet::Generated(generator) => {
            let generator = GeneratorConfig {
                utilization: base,
                ..generator.clone()
            };
            generate_set(&generator, 0)?
        }
        BaseSet::Given(set) => {
            let u = set.utilization();
            if set.tasks.is_empty() || u <= 0.0 {
                return Err(OverloadError::Config {
                    setting: "taskset",
                    message: "the base set has no task or no execution time".into(),
                });
            }
            let alpha_ppb = (base / u * 1e9).round() as u64;
            scale_wcets(set, alpha_ppb)
        }
    };
    if let Some(e) = set.errors().first() {
        return Err(OverloadError::Config {
            setting: "taskset",
            message: format!(
                "the base set at {} %: {}",
                pct(config.base_load_ppm),
                e.message
            ),
        });
    }
    Ok(set)
}

/// Deadline-monotonic rank of each task (1 = most urgent).
fn dm_ranks(set: &TaskSet) -> Result<Vec<usize>, OverloadError> {
    let priorities =
        assign(set, PriorityAssignment::DeadlineMonotonic).map_err(|e| OverloadError::Config {
            setting: "taskset",
            message: e.to_string(),
        })?;
    let mut ranks = vec![0; set.tasks.len()];
    for (k, i) in priorities.order().into_iter().enumerate() {
        ranks[i] = k + 1;
    }
    Ok(ranks)
}

fn pct(ppm: u64) -> f64 {
    ppm as f64 / 10_000.0
}

fn total_misses(counts: &RunCounts) -> u64 {
    counts.tasks.iter().map(|t| t.deadline_misses).sum()
}

fn run_error(
    profile: &'static str,
    scheduler: ModelScheduler,
    level: u64,
    message: impl std::fmt::Display,
) -> OverloadError {
    OverloadError::Run {
        profile,
        scheduler: name(scheduler),
        level_pct: pct(level),
        message: message.to_string(),
    }
}

/// The row of one run (recovery fields left empty).
fn row_of(
    profile: Profile,
    level: u64,
    scheduler: ModelScheduler,
    counts: &RunCounts,
    ranks: &[usize],
) -> OverloadRow {
    let released: u64 = counts.tasks.iter().map(|t| t.released).sum();
    let misses = total_misses(counts);
    let n = counts.tasks.len();
    let missing: Vec<usize> = counts
        .tasks
        .iter()
        .zip(ranks)
        .filter(|(t, _)| t.deadline_misses > 0)
        .map(|(_, &rank)| rank)
        .collect();
    let k = missing.len();
    let highest = missing.iter().copied().min();
    OverloadRow {
        profile,
        load_pct: pct(level),
        scheduler,
        released,
        misses,
        miss_ratio: if released == 0 {
            0.0
        } else {
            misses as f64 / released as f64
        },
        tasks_missing: k,
        tasks_missing_fraction: if n == 0 { 0.0 } else { k as f64 / n as f64 },
        highest_missing_rank: highest,
        misses_on_lowest_ranks: highest.map(|h| h == n - k + 1),
        misses_in_burst: None,
        misses_after_burst: None,
        recovery_ns: None,
        recovered_before_end: None,
    }
}

/// What the cut-short runs of a transient row found.
struct Recovery {
    misses_after_burst: u64,
    recovery: Nanos,
    recovered_before_end: bool,
}

/// Recovery read from the missed deadlines of one run (a runner that
/// records them, and no `recovery_resolution`: the real runs, where cut-short
/// reruns would each be a new, different measurement): the misses whose
/// deadline is after the burst's end, how long after it the last missed
/// deadline is (exact, to the ns), and whether a full period of the set's
/// longest task passed without a miss before the run ended.
fn recovery_from_timeline(
    missed: &[Nanos],
    burst_end: Nanos,
    duration: Nanos,
    set: &TaskSet,
) -> Recovery {
    let after: Vec<Nanos> = missed.iter().copied().filter(|&d| d > burst_end).collect();
    let longest = set
        .tasks
        .iter()
        .map(|t| t.period)
        .max()
        .unwrap_or(Nanos::ZERO);
    match after.last() {
        None => Recovery {
            misses_after_burst: 0,
            recovery: Nanos::ZERO,
            recovered_before_end: true,
        },
        Some(&last) => Recovery {
            misses_after_burst: after.len() as u64,
            recovery: last - burst_end,
            recovered_before_end: last.saturating_add(longest) <= duration,
        },
    }
}

/// Bisects the least `t` in `[burst end, duration]` (to `resolution`) at
/// which a run cut at `t` has already missed all `total` deadlines.
#[allow(clippy::too_many_arguments)]
fn recovery<R: Runner>(
    runner: &mut R,
    set: &TaskSet,
    scheduler: ModelScheduler,
    level: u64,
    burst: (Nanos, Nanos),
    duration: Nanos,
    resolution: Nanos,
    total: u64,
) -> Result<Recovery, String> {
    let mut misses_until = |t: Nanos| -> Result<u64, String> {
        let spec = RunSpec {
            scheduler,
            duration: t,
            phases: profile::phases(Profile::Transient, level, burst, t),
        };
        counted(runner.run(set, &spec)).map(|c| total_misses(&c))
    };
    let at_burst_end = if total == 0 {
        0
    } else {
        misses_until(burst.1)?
    };
    let after = total.saturating_sub(at_burst_end);
    if after == 0 {
        return Ok(Recovery {
            misses_after_burst: 0,
            recovery: Nanos::ZERO,
            recovered_before_end: true,
        });
    }
    let (mut lo, mut hi) = (burst.1, duration);
    while hi - lo > resolution {
        let mid = lo + Nanos::from_ns((hi - lo).as_ns() / 2);
        if misses_until(mid)? >= total {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Recovery {
        misses_after_burst: after,
        recovery: hi - burst.1,
        recovered_before_end: hi < duration,
    })
}

/// One least-squares line per profile and scheduler with two levels or more.
fn fits(rows: &[OverloadRow], profiles: &[Profile], schedulers: &[ModelScheduler]) -> Vec<MissFit> {
    let mut out = Vec::new();
    for &profile in profiles {
        for &scheduler in schedulers {
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.profile == profile && r.scheduler == scheduler)
                .map(|r| (r.load_pct, r.misses as f64))
                .collect();
            if let Some(line) = fit::least_squares(&points) {
                out.push(MissFit {
                    profile,
                    scheduler,
                    points: points.len(),
                    slope_misses_per_pct: line.slope,
                    intercept: line.intercept,
                    r_squared: line.r_squared,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
