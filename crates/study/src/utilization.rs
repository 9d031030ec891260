//! Paper 001's first question: which scheduler reaches the higher
//! schedulable utilization, per task-set type (its table "highest
//! schedulable utilization": delta, max CPU load, RC/DM/PR for EDF and FPS).
//!
//! # Task-set types
//!
//! A type is a deadline kind x a period class ([`SET_TYPES`], six types).
//! Periods are log-uniform (every order of magnitude equally likely) in the
//! class's range, multiples of [`PERIOD_GRANULARITY`] (100 us):
//!
//! | class | range | made of |
//! | --- | --- | --- |
//! | `short-mid` | 1 ms .. 100 ms | short (1..10 ms) and mid (10..100 ms) |
//! | `mid` | 10 ms .. 100 ms | mid only |
//! | `all` | 1 ms .. 1 s | short, mid and long (100 ms .. 1 s) |
//!
//! Deadlines: `implicit` (D = T) or `constrained`: D = C + x (T - C) with x
//! uniform in [0.5, 1] ([`CONSTRAINED_X`]), drawn once at generation and
//! kept while the load is raised.
//!
//! Each set: `tasks` tasks whose utilizations sum to 1 (UUniFast-discard,
//! no task above [`MAX_TASK_UTILIZATION`] = 0.5, so that scaled WCETs stay
//! under the deadlines up to a load of 120 %), generated with rtlab's
//! generators (`rtlab_model::generate`, set `i` of stream `seed`, one
//! stream per type).
//!
//! # The search
//!
//! At load L every WCET is scaled: C_i(L) = max(1 ns, round(C_i x L)); as
//! the set's utilization is 1 (to within sum 1 ns / T_i of rounding), its
//! utilization at load L is L. For each set, loads `from, from + step, ...
//! <= to` are run in turn, under EDF and under FPS (deadline-monotonic
//! priorities) separately, each until its first miss:
//!
//! * the **highest schedulable utilization** (HSU) of a scheduler is the
//!   last load run without a deadline miss before its first miss (none when
//!   it missed at `from`; `to` and *capped* when it never missed);
//! * a load at which some C_i(L) exceeds D_i is a miss for every scheduler
//!   without a run (no job of that task can meet its deadline);
//! * the **decisive load** of a set is the first load at which either
//!   scheduler missed (when neither did: the last load both ran, or the
//!   last load run when no load ran both); the RC, DM
//!   and PR of a type are summed over its sets, each set counted at its
//!   decisive load, where both schedulers ran the same set at the same load;
//! * per type: mean HSU per scheduler, **delta HSU** = mean over sets of
//!   HSU(EDF) - HSU(FPS) in percentage points (sets where either has no HSU
//!   left out), and the **max CPU load** = the highest HSU of either
//!   scheduler over the type's sets.
//!
//! A run the runner refuses ([`Runner::refusal`], e.g. SCHED_DEADLINE admission
//! on real threads) or a stop signal cuts short ends that scheduler's search for that set: its HSU is
//! the last load that ran without a miss, and the reason is kept.
//!
//! Simulated misses are those within the run: a load just above 100 % may
//! run a whole (finite) run without a miss, which is why the max CPU load
//! can exceed 100 % (paper 001's table shows the same, up to 105.5 %).

use rayon::prelude::*;
use rtlab_model::generate::{
    generate_set, DeadlineModel, GenerateError, GeneratorConfig, PeriodDistribution,
    UtilizationMethod,
};
use rtlab_model::{Nanos, TaskSet};
use serde::Serialize;

use crate::runner::{name, plain, Runner, TaskCounts, EDF};
use rtlab_sim::runner::SimRunner;

/// Parts per million: a load of 100 % is `ONE_PPM`.
pub const ONE_PPM: u64 = 1_000_000;

/// Periods are multiples of this (100 us).
pub const PERIOD_GRANULARITY: Nanos = Nanos::from_us(100);

/// No task's utilization at load 100 % exceeds this.
pub const MAX_TASK_UTILIZATION: f64 = 0.5;

/// Constrained deadlines: D = C + x (T - C), x uniform in this range.
pub const CONSTRAINED_X: (f64, f64) = (0.5, 1.0);

/// Default run length: this many times the set's longest period.
pub const DEFAULT_PERIODS_PER_RUN: u64 = 5;

/// The most loads one search may try.
pub const MAX_LOADS: u64 = 10_000;

/// Implicit or constrained deadlines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeadlineKind {
    /// D = C + x (T - C), x uniform in [`CONSTRAINED_X`].
    Constrained,
    /// D = T.
    Implicit,
}

impl DeadlineKind {
    /// `constrained` or `implicit`.
    pub fn name(self) -> &'static str {
        match self {
            DeadlineKind::Constrained => "constrained",
            DeadlineKind::Implicit => "implicit",
        }
    }

    /// The generator's deadline model.
    pub fn model(self) -> DeadlineModel {
        match self {
            DeadlineKind::Constrained => {
                DeadlineModel::constrained(CONSTRAINED_X.0, CONSTRAINED_X.1)
            }
            DeadlineKind::Implicit => DeadlineModel::Implicit,
        }
    }
}

/// Which periods a set draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeriodClass {
    /// Short and mid: 1 ms .. 100 ms.
    ShortMid,
    /// Mid only: 10 ms .. 100 ms.
    Mid,
    /// Short, mid and long: 1 ms .. 1 s.
    All,
}

impl PeriodClass {
    /// `short-mid`, `mid` or `all`.
    pub fn name(self) -> &'static str {
        match self {
            PeriodClass::ShortMid => "short-mid",
            PeriodClass::Mid => "mid",
            PeriodClass::All => "all",
        }
    }

    /// Shortest and longest period.
    pub fn range(self) -> (Nanos, Nanos) {
        match self {
            PeriodClass::ShortMid => (Nanos::from_ms(1), Nanos::from_ms(100)),
            PeriodClass::Mid => (Nanos::from_ms(10), Nanos::from_ms(100)),
            PeriodClass::All => (Nanos::from_ms(1), Nanos::from_secs(1)),
        }
    }

    /// Log-uniform over [`PeriodClass::range`] at [`PERIOD_GRANULARITY`].
    pub fn distribution(self) -> PeriodDistribution {
        let (min, max) = self.range();
        PeriodDistribution::LogUniform {
            min,
            max,
            granularity: PERIOD_GRANULARITY,
        }
    }
}

/// A task-set type: deadline kind x period class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SetType {
    /// Deadline kind.
    pub deadlines: DeadlineKind,
    /// Period class.
    pub periods: PeriodClass,
}

/// The six types, constrained first.
pub const SET_TYPES: [SetType; 6] = [
    SetType::new(DeadlineKind::Constrained, PeriodClass::ShortMid),
    SetType::new(DeadlineKind::Constrained, PeriodClass::Mid),
    SetType::new(DeadlineKind::Constrained, PeriodClass::All),
    SetType::new(DeadlineKind::Implicit, PeriodClass::ShortMid),
    SetType::new(DeadlineKind::Implicit, PeriodClass::Mid),
    SetType::new(DeadlineKind::Implicit, PeriodClass::All),
];

/// `50`, `50%` or `50.5`: a load in percent (of the set's own utilization),
/// held in ppm as [`LoadSteps`] holds it.
pub fn load_ppm(text: &str) -> Result<u64, String> {
    let number = text.trim().trim_end_matches('%');
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage like 50 or 50%"))?;
    if !(value > 0.0 && value <= 1000.0) {
        return Err(format!(
            "`{text}`: use a percentage above 0 and at most 1000"
        ));
    }
    let ppm = (value * 1e4).round() as u64;
    if ppm == 0 {
        return Err(format!("`{text}`: the smallest load is 0.0001%"));
    }
    Ok(ppm)
}

impl std::str::FromStr for SetType {
    type Err = String;

    /// `implicit/mid`, ... (one of [`SET_TYPES`]).
    fn from_str(text: &str) -> Result<SetType, String> {
        SET_TYPES
            .into_iter()
            .find(|t| t.name() == text.trim())
            .ok_or_else(|| {
                let names: Vec<String> = SET_TYPES.iter().map(|t| t.name()).collect();
                format!(
                    "`{}`: use {}",
                    rtlab_model::printable(text),
                    names.join(", ")
                )
            })
    }
}

impl SetType {
    /// The type of these deadlines and periods.
    pub const fn new(deadlines: DeadlineKind, periods: PeriodClass) -> SetType {
        SetType { deadlines, periods }
    }

    /// `constrained/short-mid`, ...
    pub fn name(self) -> String {
        format!("{}/{}", self.deadlines.name(), self.periods.name())
    }

    /// The generator of this type's sets: `tasks` tasks at U = 1.
    pub fn generator(self, tasks: usize, seed: u64) -> GeneratorConfig {
        GeneratorConfig {
            tasks,
            utilization: 1.0,
            method: UtilizationMethod::UUniFastDiscard,
            max_task_utilization: MAX_TASK_UTILIZATION,
            periods: self.periods.distribution(),
            deadlines: self.deadlines.model(),
            seed,
            name_prefix: format!("{}-{}", self.deadlines.name(), self.periods.name()),
        }
    }
}

/// The loads tried: `from, from + step, ... <= to`, in ppm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LoadSteps {
    /// First load.
    pub from_ppm: u64,
    /// Increment.
    pub step_ppm: u64,
    /// Last load (included when on the grid).
    pub to_ppm: u64,
}

impl LoadSteps {
    /// Every load, in order.
    pub fn loads(&self) -> impl Iterator<Item = u64> + '_ {
        (self.from_ppm..=self.to_ppm).step_by(self.step_ppm.max(1) as usize)
    }

    fn validate(&self) -> Result<(), UtilizationError> {
        let bad = |m: String| Err(UtilizationError::Setting(m));
        if self.from_ppm == 0 {
            return bad("--from must be above 0 %".into());
        }
        if self.step_ppm == 0 {
            return bad("--step must be above 0 %".into());
        }
        if self.to_ppm < self.from_ppm {
            return bad("--to must not be below --from".into());
        }
        let count = (self.to_ppm - self.from_ppm) / self.step_ppm + 1;
        if count > MAX_LOADS {
            return bad(format!(
                "--from/--to/--step give {count} loads; at most {MAX_LOADS}"
            ));
        }
        Ok(())
    }
}

/// What the section runs.
#[derive(Clone, Debug, PartialEq)]
pub struct UtilizationConfig {
    /// Sets per type.
    pub sets: u64,
    /// Tasks per set (at least 2).
    pub tasks: usize,
    /// Seed of the generator streams.
    pub seed: u64,
    /// Loads tried.
    pub loads: LoadSteps,
    /// Length of every run; `None`: [`DEFAULT_PERIODS_PER_RUN`] times the
    /// set's longest period.
    pub duration: Option<Nanos>,
    /// The types, in output order.
    pub types: Vec<SetType>,
}

/// Why the section could not run.
#[derive(Debug, thiserror::Error)]
pub enum UtilizationError {
    /// A setting is out of range; the message names the flag.
    #[error("{0}")]
    Setting(String),
    /// The generator refused.
    #[error("generating {set_type} sets: {source}")]
    Generate {
        /// The type.
        set_type: String,
        /// Why.
        source: GenerateError,
    },
    /// A run failed (not a refusal).
    #[error("{set} at load {load}% under {scheduler}: {message}")]
    Run {
        /// The set.
        set: String,
        /// The load, percent.
        load: f64,
        /// The scheduler.
        scheduler: &'static str,
        /// The runner's error.
        message: String,
    },
}

/// One scheduler's search on one set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SchedulerSearch {
    /// Highest schedulable utilization, ppm (`None`: missed at the first load).
    pub hsu_ppm: Option<u64>,
    /// First load with a miss, ppm (`None`: no miss up to the last load run).
    pub first_miss_ppm: Option<u64>,
    /// Why the search ended without a miss, when a run was refused.
    pub refused: Option<String>,
    /// Runs made.
    pub runs: u64,
    /// Real runs that missed and were run once more before they counted
    /// ([`crate::confirm`]), with their load (ppm); absent when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reruns: Vec<(u64, rtlab_model::disturbance::Rerun)>,
}

impl SchedulerSearch {
    fn searching(&self) -> bool {
        self.first_miss_ppm.is_none() && self.refused.is_none()
    }
}

/// One set's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SetResult {
    /// The set's name.
    pub name: String,
    /// Run length.
    pub duration_ns: u64,
    /// EDF's search.
    pub edf: SchedulerSearch,
    /// FPS's search.
    pub fps: SchedulerSearch,
    /// First load at which either missed (else the last load both ran),
    /// ppm; `None` when no load was run.
    pub decisive_load_ppm: Option<u64>,
    /// EDF's counts at the decisive load (`None`: not run there).
    pub edf_counts: Option<TaskCounts>,
    /// FPS's counts at the decisive load.
    pub fps_counts: Option<TaskCounts>,
}

/// The WCETs scaled to load `load_ppm`: C_i = max(1 ns, round(C_i x L));
/// `None` when some C_i would exceed D_i.
pub fn scale_to_load(set: &TaskSet, load_ppm: u64) -> Option<TaskSet> {
    let mut scaled = set.clone();
    for task in &mut scaled.tasks {
        let c = u128::from(task.wcet.as_ns()) * u128::from(load_ppm);
        let c = (c + u128::from(ONE_PPM / 2)) / u128::from(ONE_PPM);
        let c = u64::try_from(c).unwrap_or(u64::MAX).max(1);
        if c > task.deadline.as_ns() {
            return None;
        }
        task.wcet = Nanos::from_ns(c);
        task.bcet = task.bcet.map(|b| b.min(task.wcet));
    }
    Some(scaled)
}

/// The run length for `set`: `duration`, or [`DEFAULT_PERIODS_PER_RUN`]
/// times its longest period. A run shorter than some task's first deadline
/// could never see that task miss: an error naming `--duration`.
pub fn run_length(set: &TaskSet, duration: Option<Nanos>) -> Result<Nanos, UtilizationError> {
    let longest = set.longest_period();
    let first_deadlines = set.last_first_deadline();
    match duration {
        Some(d) if d < first_deadlines => Err(UtilizationError::Setting(format!(
            "--duration {d} is shorter than the last first deadline of set {} ({first_deadlines}): \
             that task could never be seen to miss"
        , set.name))),
        Some(d) => Ok(d),
        None => Ok(Nanos::from_ns(
            longest.as_ns().saturating_mul(DEFAULT_PERIODS_PER_RUN),
        )),
    }
}

/// Raises the load on `set` under EDF and FPS until each misses (see the
/// [module docs](self) for the rules).
pub fn search_set<R>(
    runner: &mut R,
    set: &TaskSet,
    loads: &LoadSteps,
    duration: Nanos,
) -> Result<SetResult, UtilizationError>
where
    R: Runner,
{
    let mut result = SetResult {
        name: set.name.clone(),
        duration_ns: duration.as_ns(),
        edf: SchedulerSearch::default(),
        fps: SchedulerSearch::default(),
        decisive_load_ppm: None,
        edf_counts: None,
        fps_counts: None,
    };
    let mut last: Option<(u64, Option<TaskCounts>, Option<TaskCounts>)> = None;
    for load in loads.loads() {
        if !result.edf.searching() && !result.fps.searching() {
            break;
        }
        let scaled = scale_to_load(set, load);
        let mut at_load = [None, None];
        for (slot, scheduler) in [EDF, crate::runner::FPS].into_iter().enumerate() {
            let search = match scheduler {
                EDF => &mut result.edf,
                _ => &mut result.fps,
            };
            if !search.searching() {
                continue;
            }
            let Some(scaled) = &scaled else {
                search.first_miss_ppm = Some(load);
                continue;
            };
            search.runs += 1;
            match crate::confirm::run_confirmed(runner, scaled, &plain(scheduler, duration), true) {
                Ok(c) if c.counts.interrupted => search.refused = Some("interrupted".into()),
                Ok(crate::confirm::Confirmed { counts, rerun }) => {
                    if let Some(r) = rerun {
                        search.reruns.push((load, r));
                    }
                    let totals = counts.totals();
                    if totals.deadline_misses == 0 {
                        search.hsu_ppm = Some(load);
                    } else {
                        search.first_miss_ppm = Some(load);
                    }
                    at_load[slot] = Some(totals);
                }
                Err(e) => match runner.refusal(&e) {
                    Some(why) => search.refused = Some(why),
                    None => {
                        return Err(UtilizationError::Run {
                            set: set.name.clone(),
                            load: load as f64 / 1e4,
                            scheduler: name(scheduler),
                            message: e.to_string(),
                        })
                    }
                },
            }
        }
        let [edf, fps] = at_load;
        if result.decisive_load_ppm.is_none() {
            let both = edf.is_some() && fps.is_some();
            if both || last.as_ref().is_none_or(|l| l.1.is_none() || l.2.is_none()) {
                last = Some((load, edf.clone(), fps.clone()));
            }
            if result.edf.first_miss_ppm.is_some() || result.fps.first_miss_ppm.is_some() {
                result.decisive_load_ppm = Some(load);
                result.edf_counts = edf;
                result.fps_counts = fps;
            }
        }
    }
    if result.decisive_load_ppm.is_none() {
        if let Some((load, edf, fps)) = last {
            result.decisive_load_ppm = Some(load);
            result.edf_counts = edf;
            result.fps_counts = fps;
        }
    }
    Ok(result)
}

/// Fraction of a type's sets schedulable at one load.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoadPoint {
    /// The load, percent.
    pub load: f64,
    /// Sets whose EDF HSU is at least this load, over all sets.
    pub edf_schedulable: f64,
    /// The same for FPS.
    pub fps_schedulable: f64,
}

/// One type's row of the table, and its sets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypeResult {
    /// `constrained/short-mid`, ...
    pub name: String,
    /// The type.
    #[serde(flatten)]
    pub set_type: SetType,
    /// Shortest period of the class, ns.
    pub period_min_ns: u64,
    /// Longest period of the class, ns.
    pub period_max_ns: u64,
    /// Mean EDF HSU, percent, over sets with one.
    pub mean_hsu_edf: Option<f64>,
    /// Mean FPS HSU, percent.
    pub mean_hsu_fps: Option<f64>,
    /// Mean of HSU(EDF) - HSU(FPS), percentage points, over sets where both
    /// have one.
    pub delta_hsu_pp: Option<f64>,
    /// Highest HSU of either scheduler over the sets, percent.
    pub max_cpu_load: Option<f64>,
    /// EDF's counts summed over sets at their decisive loads.
    pub edf: TaskCounts,
    /// FPS's counts.
    pub fps: TaskCounts,
    /// Sets whose EDF counts are in `edf` (a set whose EDF run was refused
    /// at its decisive load has none).
    pub edf_counted_sets: u64,
    /// Sets whose FPS counts are in `fps`.
    pub fps_counted_sets: u64,
    /// Sets where neither scheduler missed up to the last load.
    pub sets_capped: u64,
    /// Sets where a run was refused.
    pub sets_refused: u64,
    /// Schedulable fraction against load.
    pub curve: Vec<LoadPoint>,
    /// Every set.
    pub sets: Vec<SetResult>,
}

/// The section's document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UtilizationSection {
    /// Sets per type.
    pub sets: u64,
    /// Tasks per set.
    pub tasks: usize,
    /// Generator seed.
    pub seed: u64,
    /// Loads, ppm.
    pub loads: LoadSteps,
    /// Fixed run length, or null for the default rule.
    pub duration_ns: Option<u64>,
    /// The rule for the default run length.
    pub duration_rule: String,
    /// One row per type.
    pub types: Vec<TypeResult>,
}

/// The sets of `set_type`.
pub fn type_sets(
    config: &UtilizationConfig,
    set_type: SetType,
) -> Result<Vec<TaskSet>, UtilizationError> {
    let generator = set_type.generator(config.tasks, config.seed);
    (0..config.sets)
        .map(|i| {
            generate_set(&generator, i).map_err(|source| UtilizationError::Generate {
                set_type: set_type.name(),
                source,
            })
        })
        .collect()
}

fn check(config: &UtilizationConfig) -> Result<(), UtilizationError> {
    config.loads.validate()?;
    if config.tasks < 2 {
        return Err(UtilizationError::Setting(format!(
            "--tasks {}: use at least 2 (no task may exceed utilization {MAX_TASK_UTILIZATION} of the set's 1)",
            config.tasks
        )));
    }
    if config.sets == 0 {
        return Err(UtilizationError::Setting(
            "--sets must be at least 1".into(),
        ));
    }
    Ok(())
}

/// Runs the section with one runner, set after set (real threads).
pub fn run<R>(
    config: &UtilizationConfig,
    runner: &mut R,
) -> Result<UtilizationSection, UtilizationError>
where
    R: Runner,
{
    check(config)?;
    let mut types = Vec::new();
    for &set_type in &config.types {
        let mut sets = Vec::new();
        for set in type_sets(config, set_type)? {
            let duration = run_length(&set, config.duration)?;
            sets.push(search_set(runner, &set, &config.loads, duration)?);
        }
        types.push(summarize(set_type, &config.loads, sets));
    }
    Ok(section(config, types))
}

/// Runs the section in the simulator, sets in parallel (rayon); the result
/// does not depend on the number of threads.
pub fn simulate(config: &UtilizationConfig) -> Result<UtilizationSection, UtilizationError> {
    check(config)?;
    let mut types = Vec::new();
    for &set_type in &config.types {
        let sets = type_sets(config, set_type)?
            .par_iter()
            .map(|set| {
                let duration = run_length(set, config.duration)?;
                search_set(&mut SimRunner::new(), set, &config.loads, duration)
            })
            .collect::<Result<Vec<_>, _>>()?;
        types.push(summarize(set_type, &config.loads, sets));
    }
    Ok(section(config, types))
}

fn section(config: &UtilizationConfig, types: Vec<TypeResult>) -> UtilizationSection {
    UtilizationSection {
        sets: config.sets,
        tasks: config.tasks,
        seed: config.seed,
        loads: config.loads,
        duration_ns: config.duration.map(Nanos::as_ns),
        duration_rule: format!("{DEFAULT_PERIODS_PER_RUN} x the set's longest period"),
        types,
    }
}

fn percent(ppm: u64) -> f64 {
    ppm as f64 / 1e4
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0u64), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The type's row from its sets' results (see the module docs).
pub fn summarize(set_type: SetType, loads: &LoadSteps, sets: Vec<SetResult>) -> TypeResult {
    let (min, max) = set_type.periods.range();
    let mut edf = TaskCounts {
        name: "edf".into(),
        ..TaskCounts::default()
    };
    let mut fps = TaskCounts {
        name: "fps".into(),
        ..TaskCounts::default()
    };
    for s in &sets {
        if let Some(c) = &s.edf_counts {
            edf.add(c);
        }
        if let Some(c) = &s.fps_counts {
            fps.add(c);
        }
    }
    let n = sets.len().max(1) as f64;
    let curve = loads
        .loads()
        .map(|load| {
            let share = |f: &dyn Fn(&SetResult) -> Option<u64>| {
                sets.iter()
                    .filter(|s| f(s).is_some_and(|h| h >= load))
                    .count() as f64
                    / n
            };
            LoadPoint {
                load: percent(load),
                edf_schedulable: share(&|s| s.edf.hsu_ppm),
                fps_schedulable: share(&|s| s.fps.hsu_ppm),
            }
        })
        .collect();
    TypeResult {
        name: set_type.name(),
        set_type,
        period_min_ns: min.as_ns(),
        period_max_ns: max.as_ns(),
        mean_hsu_edf: mean(sets.iter().filter_map(|s| s.edf.hsu_ppm).map(percent)),
        mean_hsu_fps: mean(sets.iter().filter_map(|s| s.fps.hsu_ppm).map(percent)),
        delta_hsu_pp: mean(
            sets.iter()
                .filter_map(|s| Some(percent(s.edf.hsu_ppm?) - percent(s.fps.hsu_ppm?))),
        ),
        max_cpu_load: sets
            .iter()
            .flat_map(|s| [s.edf.hsu_ppm, s.fps.hsu_ppm])
            .flatten()
            .max()
            .map(percent),
        edf,
        fps,
        edf_counted_sets: sets.iter().filter(|s| s.edf_counts.is_some()).count() as u64,
        fps_counted_sets: sets.iter().filter(|s| s.fps_counts.is_some()).count() as u64,
        sets_capped: sets
            .iter()
            .filter(|s| {
                s.edf.first_miss_ppm.is_none()
                    && s.fps.first_miss_ppm.is_none()
                    && s.edf.refused.is_none()
                    && s.fps.refused.is_none()
            })
            .count() as u64,
        sets_refused: sets
            .iter()
            .filter(|s| s.edf.refused.is_some() || s.fps.refused.is_some())
            .count() as u64,
        curve,
        sets,
    }
}

#[cfg(test)]
mod tests;
