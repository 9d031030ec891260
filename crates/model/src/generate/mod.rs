//! Random task sets for schedulability experiments, deterministic per seed.
//!
//! A [`GeneratorConfig`] describes a stream of task sets; [`generate_set`]
//! returns set number `index` of that stream and depends on `(seed, index)`
//! alone, so set 5 generated on its own equals set 5 of a batch of 100 from
//! [`generate_sets`], on any machine.
//!
//! Set `index` is built in this order (which is part of the reproducibility
//! contract: changing it changes every generated set):
//!
//! 1. a [`ChaCha8Rng`](rand_chacha::ChaCha8Rng) keyed from `seed` and set to
//!    stream `index` (see `crate::random::stream_rng`);
//! 2. the utilization vector u_1..u_n, by the [`UtilizationMethod`];
//! 3. for each task i = 1..n in turn: its period T_i from the
//!    [`PeriodDistribution`], then C_i = round(u_i · T_i) clamped to
//!    [1 ns, T_i], then the random part of its deadline from the
//!    [`DeadlineModel`] (x of a constrained deadline);
//! 4. the set is held to its target: while Σ C_i/T_i exceeds U (decided
//!    exactly, see [`exceeds`]), the last task's C is lowered by the
//!    nanoseconds that bring it back (then the one before it, should C
//!    reach 1 ns), [`hold_utilization`];
//! 5. each deadline from its C, T and x.
//!
//! Tasks are named `t1..tn` and the set `{name_prefix}-{index:04}`. Rounding
//! C_i to whole nanoseconds moves each task's utilization by at most
//! 0.5 ns / T_i (1 ns / T_i when the 1 ns floor applies), and step 4 only
//! lowers it, so the set's utilization is **never above the target** and
//! within Σ 1 ns / T_i + 1 ns / T_n of it. (Before issue 36 step 4 did not
//! exist and about half the sets of a target U = 1 were a few ns above it,
//! which EDF's exact tests rightly refused.)
//!
//! The utilization algorithms are also available on their own:
//! [`uunifast`], [`uunifast_discard`] and [`randfixedsum`].

mod deadlines;
mod error;
mod periods;
mod utilization;

pub use deadlines::DeadlineModel;
pub use error::GenerateError;
use periods::PeriodPlan;
pub use periods::{PeriodDistribution, PeriodKind};
use utilization::UtilizationPlan;
pub use utilization::{
    randfixedsum, randfixedsum_table_entries, uunifast, uunifast_discard, UtilizationMethod,
    DEFAULT_DISCARD_ATTEMPTS, MAX_TASKS, RANDFIXEDSUM_MAX_TABLE_ENTRIES, RANDFIXEDSUM_MAX_TASKS,
};

use crate::{Nanos, Task, TaskSet};

/// Everything that defines a stream of random task sets.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorConfig {
    /// Tasks per set, n ≥ 1 (`--tasks`).
    pub tasks: usize,
    /// Total utilization U of each set, > 0 (`--utilization`).
    pub utilization: f64,
    /// How the utilization vector is drawn (`--method`).
    pub method: UtilizationMethod,
    /// Largest utilization of one task, in (0, 1] (`--max-task-utilization`).
    /// U must not exceed `tasks × max_task_utilization`.
    pub max_task_utilization: f64,
    /// How periods are drawn (`--periods`, `--period-min`, ...).
    pub periods: PeriodDistribution,
    /// How deadlines are drawn (`--deadlines`).
    pub deadlines: DeadlineModel,
    /// Seed of the stream (`--seed`).
    pub seed: u64,
    /// Sets are named `{name_prefix}-{index:04}`.
    pub name_prefix: String,
}

impl Default for GeneratorConfig {
    /// 10 tasks at U = 0.75 by RandFixedSum with cap 1, log-uniform periods
    /// in [10 ms, 1 s] at 1 ms, implicit deadlines, seed 0, prefix `gen`.
    fn default() -> Self {
        GeneratorConfig {
            tasks: 10,
            utilization: 0.75,
            method: UtilizationMethod::default(),
            max_task_utilization: 1.0,
            periods: PeriodDistribution::default(),
            deadlines: DeadlineModel::default(),
            seed: 0,
            name_prefix: "gen".to_string(),
        }
    }
}

impl GeneratorConfig {
    /// Checks every setting; the message names the offending flag.
    ///
    /// n ≥ 1; U > 0; cap in (0, 1]; U ≤ n × cap (and U ≤ cap for plain
    /// UUniFast); a valid period distribution; a valid deadline range.
    pub fn validate(&self) -> Result<(), GenerateError> {
        let cap = self.max_task_utilization;
        utilization::check_target(self.tasks, self.utilization, cap)?;
        if cap > 1.0 {
            return Err(GenerateError::invalid(
                "max-task-utilization",
                format!("must be at most 1 (got {cap}): a task above 1 cannot meet its deadline"),
            ));
        }
        if self.method == UtilizationMethod::UUniFast && self.utilization > cap {
            return Err(GenerateError::invalid_naming(
                "utilization",
                &["max-task-utilization", "method"],
                format!(
                    "{} exceeds max-task-utilization {cap}, which plain uunifast cannot respect; \
                     use method uunifast-discard or randfixedsum",
                    self.utilization
                ),
            ));
        }
        self.periods.validate()?;
        self.deadlines.validate()
    }
}

/// Task set number `index` of the stream described by `config`.
///
/// Deterministic in `(config, index)`: the same on every machine and
/// independent of any other set generated. See the [module docs](self) for
/// the construction. Errors are those of [`GeneratorConfig::validate`] and
/// [`GenerateError::DiscardExhausted`].
pub fn generate_set(config: &GeneratorConfig, index: u64) -> Result<TaskSet, GenerateError> {
    SetGenerator::new(config)?.generate(index).cloned()
}

/// Sets `0..count` of the stream: `generate_sets(c, n)[i] == generate_set(c, i)`.
///
/// They are all held at once, so `count × tasks` may not exceed
/// [`MAX_TASKS`] (about 400 MB); generate larger batches set by set with
/// [`generate_set`] or a [`SetGenerator`].
pub fn generate_sets(config: &GeneratorConfig, count: u64) -> Result<Vec<TaskSet>, GenerateError> {
    config.validate()?;
    let total = count.saturating_mul(config.tasks as u64);
    if total > MAX_TASKS as u64 {
        return Err(GenerateError::invalid(
            "count",
            format!(
                "{count} sets of {} tasks is {total} tasks, above the limit of {MAX_TASKS} tasks \
                 generated at once",
                config.tasks
            ),
        ));
    }
    let mut generator = SetGenerator::new(config)?;
    // Stops between sets when the caller's flag is raised (crate::cancel):
    // the sets drawn so far are then all there is, and the caller, which
    // raised it, throws them away.
    (0..count)
        .take_while(|_| !crate::cancel::requested())
        .map(|index| generator.generate(index).cloned())
        .collect()
}

/// The stream of one [`GeneratorConfig`], for drawing many sets: the
/// settings are checked once, what every set would recompute (RandFixedSum's
/// transition table, the period bounds' logarithms) is kept, and each set is
/// written over the previous one in place, so a set costs no allocation.
/// `SetGenerator::new(c)?.generate(i)` is exactly [`generate_set`]`(c, i)`
/// (which is written that way).
#[derive(Debug, Clone)]
pub struct SetGenerator {
    seed: u64,
    name_prefix: String,
    utilizations: UtilizationPlan,
    periods: PeriodPlan,
    deadlines: DeadlineModel,
    /// The utilization vector of the set being drawn.
    drawn: Vec<f64>,
    /// The random part of each task's deadline in the set being drawn.
    fractions: Vec<Option<f64>>,
    /// The target U, to hold every set to.
    target: f64,
    /// The last set generated; its task names `t1..tn` never change.
    set: TaskSet,
}

impl SetGenerator {
    /// Checks `config` ([`GeneratorConfig::validate`] and the utilization
    /// method's own limits) and prepares its stream.
    pub fn new(config: &GeneratorConfig) -> Result<SetGenerator, GenerateError> {
        config.validate()?;
        let utilizations = UtilizationPlan::new(
            config.method,
            config.tasks,
            config.utilization,
            config.max_task_utilization,
        )?;
        // Placeholders: every field a set draws is written by `generate`.
        let tasks = (1..=config.tasks)
            .map(|i| Task::new(format!("t{i}"), Nanos::from_ns(1), Nanos::from_ns(1)))
            .collect();
        Ok(SetGenerator {
            seed: config.seed,
            name_prefix: config.name_prefix.clone(),
            utilizations,
            periods: PeriodPlan::new(&config.periods),
            deadlines: config.deadlines,
            drawn: Vec::with_capacity(config.tasks),
            fractions: Vec::with_capacity(config.tasks),
            target: config.utilization,
            set: TaskSet::new(String::new(), tasks),
        })
    }

    /// Set number `index` of the stream (see the [module docs](self) for
    /// the construction), valid until the next call. The only error is
    /// [`GenerateError::DiscardExhausted`].
    pub fn generate(&mut self, index: u64) -> Result<&TaskSet, GenerateError> {
        use std::fmt::Write;
        let mut rng = crate::random::stream_rng(self.seed, index);
        self.utilizations.draw_into(&mut rng, &mut self.drawn)?;
        self.fractions.clear();
        for (task, &u) in self.set.tasks.iter_mut().zip(&self.drawn) {
            let period = self.periods.draw(&mut rng);
            task.period = period;
            task.wcet = wcet_for(u, period);
            self.fractions.push(self.deadlines.draw_fraction(&mut rng));
        }
        hold_utilization(&mut self.set.tasks, self.target);
        for (task, &x) in self.set.tasks.iter_mut().zip(&self.fractions) {
            task.deadline = DeadlineModel::deadline(x, task.period, task.wcet);
        }
        self.set.name.clear();
        // Writing to a String cannot fail.
        let _ = write!(self.set.name, "{}-{index:04}", self.name_prefix);
        Ok(&self.set)
    }
}

/// 2^64 as the unit of [`exceeds`]' fixed point.
const ONE: u128 = 1 << 64;

/// `target` in units of 2^-64, rounded down (exact for every f64 target
/// of 2^-12 and above, whose last bit is worth at least 2^-64).
fn target_units(target: f64) -> u128 {
    // Scaling by a power of two is exact; `as` saturates and maps NaN to 0.
    libm::floor(target * 18_446_744_073_709_551_616.0) as u128
}

/// C/T in units of 2^-64, rounded up (C ≤ T < 2^64, so C · 2^64 fits).
fn share_units(task: &Task) -> u128 {
    let period = u128::from(task.period.as_ns().max(1));
    (u128::from(task.wcet.as_ns()) * ONE).div_ceil(period)
}

/// By how much Σ C_i/T_i exceeds `target`, in units of 2^-64 (0 when it
/// does not). Each share is rounded up and the target down, so a set this
/// says is at or under its target is, exactly; one it says exceeds may be
/// under by at most n · 2^-64, which only costs a nanosecond of C.
#[cfg(test)]
fn exceeds(tasks: &[Task], target: f64) -> u128 {
    let sum: u128 = tasks.iter().map(share_units).sum();
    sum.saturating_sub(target_units(target))
}

/// Lowers C, from the last task backwards, until Σ C_i/T_i ≤ `target`
/// ([`exceeds`] is 0): each step takes from one task the whole nanoseconds
/// that cover the excess, k = ⌈excess / ⌊2^64/T⌋⌉ (each ns of C is worth
/// at least ⌊2^64/T⌋ units), never below 1 ns. Rounding C_i = round(u_i T_i)
/// leaves a set at most Σ 0.5 ns / T_i above U, so this moves a few ns of
/// one task; a set already under its target is not touched. Every task
/// at 1 ns and still above (a target below Σ 1 ns / T_i): left as it is,
/// the least any task can do. O(n).
fn hold_utilization(tasks: &mut [Task], target: f64) {
    let limit = target_units(target);
    let mut sum: u128 = tasks.iter().map(share_units).sum();
    for task in tasks.iter_mut().rev() {
        while sum > limit && task.wcet.as_ns() > 1 {
            let per_ns = (ONE / u128::from(task.period.as_ns().max(1))).max(1);
            let k = u64::try_from((sum - limit).div_ceil(per_ns))
                .unwrap_or(u64::MAX)
                .min(task.wcet.as_ns() - 1);
            let before = share_units(task);
            task.wcet = Nanos::from_ns(task.wcet.as_ns() - k);
            sum = sum - before + share_units(task);
        }
        if sum <= limit {
            return;
        }
    }
}

/// C = round(u · T), at least 1 ns and at most T.
fn wcet_for(utilization: f64, period: Nanos) -> Nanos {
    // `as` saturates (and maps NaN to 0), so the clamp bounds every case.
    let ns = libm::round(utilization * period.as_ns() as f64) as u64;
    Nanos::from_ns(ns.clamp(1, period.as_ns()))
}

#[cfg(test)]
mod tests;
