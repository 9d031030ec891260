//! A sweep as data: [`SweepSpec`] holds what `rtlab sweep`'s flags say, is
//! read from and written to JSON (unknown keys refused), and checks itself
//! into a [`Prepared`] sweep that the shard runner executes.

use rtlab_model::generate::sections::SharingModel;
use rtlab_model::generate::{
    DeadlineModel, GenerateError, GeneratorConfig, SetGenerator, UtilizationMethod,
};
use rtlab_model::overheads::Overheads;
use rtlab_model::Nanos;
use serde::{Deserialize, Serialize};

use std::sync::Arc;

use super::{Simulate, SweepColumn, SweepError, MAX_SWEEP_TASKS};
use crate::overhead_rta::TimerModel;
use crate::partition::Heuristic;
use crate::suite::Options;

/// Most utilization steps one sweep may have.
pub const MAX_SWEEP_STEPS: u64 = 10_000;

/// Everything that decides a sweep's numbers: the flags of `rtlab sweep`
/// as data. Two runs of the same spec give the same counts, however they
/// are split into shards.
///
/// In JSON every key is optional (its default is the flag's default) and an
/// unknown key is refused:
///
/// ```text
/// {"tasks": 10, "from": 0.05, "to": 1.0, "step": 0.05, "sets": 1000,
///  "seed": 0, "method": "randfixedsum", "deadlines": "implicit",
///  "tests": ["rm:liu-layland", "rm:hyperbolic", "rm:rta", "dm:rta", "edf:edf-demand"],
///  "overheads": null, "tick": null, "cpus": 1}
/// ```
///
/// The utilization axis is the total utilization U of a set. Without
/// `tests`, the tests are the flag's default for the spec's `cpus`
/// ([`SweepSpec::default_tests`]), as on the command line; for locking
/// sweeps, `"sharing": {...}` ([`SharingSpec`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "SpecKeys")]
pub struct SweepSpec {
    /// Tasks per generated set (`--tasks`).
    pub tasks: usize,
    /// First utilization step (`--from`), > 0.
    pub from: f64,
    /// Last utilization step, included (`--to`).
    pub to: f64,
    /// Utilization increment (`--step`), > 0.
    pub step: f64,
    /// Random task sets per utilization step (`--sets`), ≥ 1.
    pub sets: u64,
    /// The generator's seed (`--seed`).
    pub seed: u64,
    /// How utilization vectors are drawn (`--method`).
    #[serde(with = "as_text")]
    pub method: UtilizationMethod,
    /// How deadlines are drawn (`--deadlines`).
    #[serde(with = "as_text")]
    pub deadlines: DeadlineModel,
    /// The tests counted, in column order (`--test`): uniprocessor tests
    /// when `cpus` is 1, multiprocessor ones (on `cpus` processors) else.
    pub tests: Vec<SweepColumn>,
    /// Overheads for the overhead-aware tests: a file or `builtin:NAME`
    /// (`--overheads`). Every machine running a shard must read the same
    /// file.
    pub overheads: Option<String>,
    /// The tick of paper 004's timer-driven model for the overhead-aware
    /// tests (`--tick`, as `"1ms"`); needs `overheads`.
    pub tick: Option<Nanos>,
    /// Processors m (`--cpus`), 1 to 1024. With m > 1 the tests are
    /// multiprocessor tests and the utilization steps are the total U
    /// (from 0 to m), plotted as U/m.
    pub cpus: u32,
    /// Critical sections added to every generated set, for the locking
    /// protocols' columns (`--locking`); absent for none (so sweeps
    /// without it write the documents they wrote before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<SharingSpec>,
}

/// How a sweep's sets share resources
/// ([`rtlab_model::generate::sections::SharingModel`]), and how the
/// partitioned protocols place them. In JSON every key is optional:
///
/// ```text
/// {"cs_max": "100us", "cs_min": "10us", "heuristic": "wf-decreasing",
///  "requests": 1, "resources": 2, "sharing": 0.5}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SharingSpec {
    /// Longest section (`--cs-length ..MAX`).
    pub cs_max: Nanos,
    /// Shortest section (`--cs-length MIN..`).
    pub cs_min: Nanos,
    /// The partitioned protocols' placement, a heuristic of
    /// [`crate::partition`] (`--partition`).
    pub heuristic: String,
    /// Sections per job on each resource a task uses (`--requests`).
    pub requests: u32,
    /// Resources shared (`--resources`).
    pub resources: u32,
    /// Probability that a task uses a resource (`--sharing`).
    pub sharing: f64,
}

impl Default for SharingSpec {
    /// [`SharingModel::default`], placed by wf-decreasing (worst fit spreads the
    /// load and leaves every processor slack for blocking; first fit fills a
    /// processor to the brim and leaves it none).
    fn default() -> Self {
        let m = SharingModel::default();
        SharingSpec {
            resources: m.resources,
            sharing: m.sharing,
            requests: m.requests,
            cs_min: m.length_min,
            cs_max: m.length_max,
            heuristic: "wf-decreasing".into(),
        }
    }
}

impl SharingSpec {
    /// The generator's model.
    pub fn model(&self) -> SharingModel {
        SharingModel {
            resources: self.resources,
            sharing: self.sharing,
            requests: self.requests,
            length_min: self.cs_min,
            length_max: self.cs_max,
        }
    }

    /// The heuristic, or an error naming the setting.
    pub fn heuristic(&self) -> Result<Heuristic, GenerateError> {
        Heuristic::from_name(&self.heuristic).ok_or_else(|| {
            GenerateError::invalid(
                "partition",
                format!("`{}`: use {}", self.heuristic, Heuristic::names()),
            )
        })
    }
}

impl Default for SweepSpec {
    /// `rtlab sweep`'s defaults: 10 tasks, U from 0.05 to 1 by 0.05, 1000
    /// sets a step, seed 0, RandFixedSum, implicit deadlines, the tests
    /// rm:liu-layland, rm:hyperbolic, rm:rta, dm:rta and edf:edf-demand, one
    /// processor.
    fn default() -> SweepSpec {
        SweepSpec {
            tasks: 10,
            from: 0.05,
            to: 1.0,
            step: 0.05,
            sets: 1000,
            seed: 0,
            method: UtilizationMethod::default(),
            deadlines: DeadlineModel::default(),
            tests: SweepSpec::default_tests(1),
            overheads: None,
            tick: None,
            cpus: 1,
            sharing: None,
        }
    }
}

/// A spec as written: every key optional, unknown keys refused. A missing
/// key takes the flag's default ([`SweepSpec::default`]); missing `tests`
/// take the default tests of the spec's `cpus`, as `--test` does.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecKeys {
    #[serde(default, deserialize_with = "present")]
    tasks: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    from: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    to: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    step: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    sets: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    seed: Option<u64>,
    #[serde(default, deserialize_with = "as_text::present")]
    method: Option<UtilizationMethod>,
    #[serde(default, deserialize_with = "as_text::present")]
    deadlines: Option<DeadlineModel>,
    #[serde(default, deserialize_with = "present")]
    tests: Option<Vec<SweepColumn>>,
    #[serde(default)]
    overheads: Option<String>,
    #[serde(default)]
    tick: Option<Nanos>,
    #[serde(default, deserialize_with = "present")]
    cpus: Option<u32>,
    #[serde(default)]
    sharing: Option<SharingSpec>,
}

/// A key that is there must hold a value (`null` is refused, as for a key
/// of a plain type); a missing key is `None` (`#[serde(default)]`).
fn present<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

impl From<SpecKeys> for SweepSpec {
    fn from(keys: SpecKeys) -> SweepSpec {
        let d = SweepSpec::default();
        let cpus = keys.cpus.unwrap_or(d.cpus);
        SweepSpec {
            tasks: keys.tasks.unwrap_or(d.tasks),
            from: keys.from.unwrap_or(d.from),
            to: keys.to.unwrap_or(d.to),
            step: keys.step.unwrap_or(d.step),
            sets: keys.sets.unwrap_or(d.sets),
            seed: keys.seed.unwrap_or(d.seed),
            method: keys.method.unwrap_or(d.method),
            deadlines: keys.deadlines.unwrap_or(d.deadlines),
            tests: keys.tests.unwrap_or_else(|| SweepSpec::default_tests(cpus)),
            overheads: keys.overheads,
            tick: keys.tick,
            cpus,
            sharing: keys.sharing,
        }
    }
}

/// The tests a sweep counts when none is named.
pub const DEFAULT_TESTS: [&str; 5] = [
    "rm:liu-layland",
    "rm:hyperbolic",
    "rm:rta",
    "dm:rta",
    "edf:edf-demand",
];

/// The tests a sweep on more than one processor counts when none is named
/// (the comparison of Bertogna, Cirinei & Lipari 2009 and Davis & Burns'
/// survey, 2011: global EDF bounds and RTA, global DM RTA, partitioned EDF).
pub const DEFAULT_MULTIPROCESSOR_TESTS: [&str; 5] = [
    "gedf:gfb",
    "gedf:bcl",
    "gedf:rta",
    "gfp:rta",
    "pedf:ff-decreasing",
];

impl SweepSpec {
    /// The default tests on `cpus` processors: [`DEFAULT_TESTS`] on one,
    /// [`DEFAULT_MULTIPROCESSOR_TESTS`] on more.
    pub fn default_tests(cpus: u32) -> Vec<SweepColumn> {
        let names: &[&str] = if cpus > 1 {
            &DEFAULT_MULTIPROCESSOR_TESTS
        } else {
            &DEFAULT_TESTS
        };
        names
            .iter()
            .filter_map(|t| SweepColumn::parse(t).ok())
            .collect()
    }

    /// Reads a spec from JSON; unknown keys and ill-typed values are
    /// refused with serde's line and column.
    pub fn from_json(text: &str) -> Result<SweepSpec, SweepError> {
        SweepError::read_object("sweep spec", text)
    }

    /// The spec as compact JSON (keys in declaration order).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The utilization steps `from, from + step, ..., to` (to 1e-9), each
    /// rounded to 9 decimals so that 0.1 + 2 × 0.1 prints as 0.3.
    pub fn utilizations(&self) -> Result<Vec<f64>, SweepError> {
        let (from, to, step) = (self.from, self.to, self.step);
        let check = |ok: bool, error: GenerateError| if ok { Ok(()) } else { Err(error) };
        // A number as the user can read it: 1e308 in exponent form.
        let shown = |x: f64| {
            if x.abs() >= 1e9 {
                format!("{x:e}")
            } else {
                x.to_string()
            }
        };
        check(
            from.is_finite() && to.is_finite() && step.is_finite(),
            GenerateError::invalid_naming("from", &["to", "step"], ", to and step must be numbers"),
        )?;
        check(
            from > 0.0,
            GenerateError::invalid("from", format!("must be greater than 0 (got {from})")),
        )?;
        check(
            to >= from,
            GenerateError::invalid_naming(
                "to",
                &["from"],
                format!("({}) must not be below from ({})", shown(to), shown(from)),
            ),
        )?;
        check(
            step > 0.0,
            GenerateError::invalid("step", format!("must be greater than 0 (got {step})")),
        )?;
        // A task's utilization is at most 1, so a set's at most its task
        // count: above it the generator has nothing to draw (and near 1e308
        // a step rounded to 9 decimals is infinite).
        let most = self.tasks.max(1) as f64;
        check(
            to <= most,
            GenerateError::invalid(
                "to",
                format!(
                    "{} is above the most a set of {} tasks can reach ({most}: a task's utilization is at most 1)",
                    shown(to),
                    self.tasks
                ),
            ),
        )?;
        // Counted as a float first: a tiny step (1e-20) makes more steps
        // than a u64 holds, and the cast would saturate then overflow.
        let steps = ((to - from) / step + 1e-9).floor() + 1.0;
        check(
            steps <= MAX_SWEEP_STEPS as f64,
            GenerateError::invalid(
                "step",
                format!("{step} gives {steps:.0} utilization steps, above the limit of {MAX_SWEEP_STEPS}; raise it"),
            ),
        )?;
        let count = steps as u64;
        Ok((0..count)
            .map(|k| ((from + k as f64 * step) * 1e9).round() / 1e9)
            .collect())
    }

    /// Task sets in the whole sweep: steps × sets.
    pub fn samples(&self) -> Result<u64, SweepError> {
        let steps = self.utilizations()?.len() as u64;
        Ok(steps.saturating_mul(self.sets))
    }

    /// Checks every setting and loads the overheads: the sweep ready to run.
    /// Setting errors are [`SweepError::Setting`] (naming the key, which a
    /// command line spells as its flag); an overheads file that cannot be
    /// read is [`SweepError::Overheads`].
    pub fn prepare(&self) -> Result<Prepared, SweepError> {
        let invalid =
            |setting, problem: String| Err(GenerateError::invalid(setting, problem).into());
        if self.sets == 0 {
            return invalid("sets", "must be at least 1".into());
        }
        if self.tasks > MAX_SWEEP_TASKS {
            return invalid(
                "tasks",
                format!(
                    "{} is above the sweep's limit of {MAX_SWEEP_TASKS} tasks per set (its exact tests take \
                     O(n²) time per set, about 4 s at 10000 tasks); analyse one large set with rtlab analyze",
                    self.tasks
                ),
            );
        }
        if self.cpus == 0 {
            return invalid("cpus", "must be at least 1".into());
        }
        if self.cpus > rtlab_model::MAX_PROCESSORS {
            return invalid(
                "cpus",
                format!(
                    "is {}: rtlab models at most {} processors",
                    self.cpus,
                    rtlab_model::MAX_PROCESSORS
                ),
            );
        }
        if self.cpus > 1 {
            if let Some(t) = self.tests.iter().find(|t| t.is_uniprocessor()) {
                return Err(GenerateError::invalid_naming(
                    "test",
                    &["cpus"],
                    format!(
                        "{} is a uniprocessor test; with cpus {} name multiprocessor tests, e.g. {}",
                        t.name(),
                        self.cpus,
                        DEFAULT_MULTIPROCESSOR_TESTS.join(",")
                    ),
                )
                .into());
            }
        }
        if self.tests.is_empty() {
            return invalid("test", "needs at least one POLICY:TEST".into());
        }
        let has_overheads = |t: &SweepColumn| match t {
            SweepColumn::Uniprocessor(t) => t.test.has_overheads(),
            SweepColumn::Multiprocessor(_)
            | SweepColumn::Locking(_)
            | SweepColumn::Simulated(_) => false,
        };
        if let Some(t) = self.tests.iter().find(|t| has_overheads(t)) {
            if self.overheads.is_none() {
                return Err(GenerateError::invalid_naming(
                    "test",
                    &["overheads"],
                    format!("{} needs overheads", t.name()),
                )
                .into());
            }
        }
        // A setting no test reads would be ignored while looking applied.
        if let Some(overheads) = &self.overheads {
            if !self.tests.iter().any(has_overheads) {
                return invalid(
                    "overheads",
                    format!(
                        "{overheads} is read by none of the tests counted: only the uniprocessor \
                         rta-overheads and edf-demand-overheads charge overheads"
                    ),
                );
            }
        }
        let reads_priorities = |t: &SweepColumn| match t {
            SweepColumn::Uniprocessor(t) => t.reads_priorities(),
            SweepColumn::Multiprocessor(t) => t.reads_priorities(),
            // The simulated tests assign RM or DM; the locking protocols'
            // partitioned sets run under RM.
            SweepColumn::Locking(_) | SweepColumn::Simulated(_) => false,
        };
        if let Some(t) = self.tests.iter().find(|t| reads_priorities(t)) {
            return invalid(
                "test",
                format!(
                    "{} reads each task's priority, and generated sets have none: use rm, dm or opa \
                     (or gfp, gfp-dkc, pfp-rm, pfp-dm)",
                    t.name()
                ),
            );
        }
        match self.tick {
            Some(_) if self.overheads.is_none() => {
                return Err(GenerateError::invalid_naming(
                    "tick",
                    &["overheads"],
                    "needs overheads",
                )
                .into())
            }
            Some(t) if t.is_zero() => return invalid("tick", "must be longer than 0".into()),
            _ => {}
        }
        let sharing = match &self.sharing {
            Some(spec) => {
                spec.model().validate()?;
                Some((spec.model(), spec.heuristic()?))
            }
            None => None,
        };
        let utilizations = self.utilizations()?;
        let generators = utilizations
            .iter()
            .map(|&utilization| {
                let config = GeneratorConfig {
                    tasks: self.tasks,
                    utilization,
                    method: self.method,
                    deadlines: self.deadlines,
                    seed: self.seed,
                    name_prefix: "sweep".into(),
                    ..GeneratorConfig::default()
                };
                config.validate().map(|()| config)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let streams = generators
            .iter()
            .map(SetGenerator::new)
            .collect::<Result<Vec<_>, _>>()?;
        let overheads = self
            .overheads
            .as_deref()
            .map(Overheads::load)
            .transpose()
            .map_err(SweepError::Overheads)?;
        let options = Options {
            overheads,
            timers: self.tick.map(TimerModel::Tick).into_iter().collect(),
            ..Options::default()
        };
        // The overhead-aware tests' timer model (one: a sweep takes one tick).
        let timer = self
            .tests
            .iter()
            .any(has_overheads)
            .then(|| options.platforms().next().map(|p| p.timer))
            .flatten();
        Ok(Prepared {
            spec: self.clone(),
            generators,
            streams,
            options,
            timer,
            sharing,
            simulator: None,
        })
    }
}

/// A checked spec with its overheads loaded, ready to run.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The spec it was made from.
    pub spec: SweepSpec,
    /// One generator per utilization step, in order.
    pub generators: Vec<GeneratorConfig>,
    /// Their streams, ready to draw (cloned by each worker).
    pub(crate) streams: Vec<SetGenerator>,
    /// What the tests assume beyond the set (the overheads).
    pub options: Options,
    /// The overhead-aware tests' timer model, when any such test is counted.
    pub timer: Option<TimerModel>,
    /// The sections added to every set and the partitioned protocols'
    /// heuristic, when the spec shares resources.
    pub sharing: Option<(SharingModel, Heuristic)>,
    /// What runs the `:sim` columns ([`Prepared::with_simulator`]).
    pub simulator: Option<Arc<dyn Simulate>>,
}

impl Prepared {
    /// The sweep with `simulator` running its `:sim` columns (without one
    /// a shard with such a column is refused).
    pub fn with_simulator(mut self, simulator: Arc<dyn Simulate>) -> Prepared {
        self.simulator = Some(simulator);
        self
    }

    /// The first `:sim` column when no simulator was given.
    pub(crate) fn missing_simulator(&self) -> Option<&SweepColumn> {
        if self.simulator.is_some() {
            return None;
        }
        self.spec
            .tests
            .iter()
            .find(|t| matches!(t, SweepColumn::Simulated(_)))
    }

    /// Task sets in the whole sweep: steps × sets per step.
    pub fn samples(&self) -> u64 {
        (self.generators.len() as u64).saturating_mul(self.spec.sets)
    }
}

/// Serde through `Display` and `FromStr` (the command line's spelling).
mod as_text {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::{de, Deserialize, Deserializer, Serializer};

    pub fn serialize<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(value)
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        let text = String::deserialize(d)?;
        text.parse().map_err(de::Error::custom)
    }

    /// [`deserialize`] for a key that may be missing (`None`).
    pub fn present<'de, T, D>(d: D) -> Result<Option<T>, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        deserialize(d).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec's missing keys take the flags' defaults, the tests those of
    /// its `cpus` (issue 39: `"cpus": 4` alone counted uniprocessor tests);
    /// a key that is there must hold a value.
    #[test]
    fn missing_keys_take_the_flags_defaults_tests_by_cpus() {
        let spec = SweepSpec::from_json(r#"{"cpus": 4}"#).unwrap();
        assert_eq!(spec.tests, SweepSpec::default_tests(4));
        assert_eq!(
            SweepSpec {
                cpus: 4,
                tests: SweepSpec::default_tests(4),
                ..SweepSpec::default()
            },
            spec
        );
        assert_eq!(SweepSpec::from_json("{}").unwrap(), SweepSpec::default());
        let round = SweepSpec::from_json(&spec.to_json()).unwrap();
        assert_eq!(round, spec);
        assert!(SweepSpec::from_json(r#"{"tasks": null}"#).is_err());
        assert!(SweepSpec::from_json(r#"{"task": 3}"#).is_err());
        assert!(SweepSpec::from_json(r#"{"overheads": null, "tick": null}"#).is_ok());
    }

    /// A total utilization past what the set's tasks can reach names `to`
    /// (issue 39: `--from 1e308` said "--utilization must be > 0").
    #[test]
    fn a_utilization_no_set_can_reach_names_to() {
        let e = |from: f64, to: f64| match (SweepSpec {
            from,
            to,
            ..SweepSpec::default()
        })
        .utilizations()
        {
            Err(SweepError::Setting(e)) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            e(1e308, 1e308),
            "to 1e308 is above the most a set of 10 tasks can reach (10: a task's utilization is at most 1)"
        );
        assert!(e(0.5, 10.5).starts_with("to 10.5 is above the most a set of 10 tasks"));
    }

    /// Settings no test reads are refused, not ignored (issue 39).
    #[test]
    fn settings_no_test_reads_are_refused() {
        let setting = |spec: SweepSpec| match spec.prepare().unwrap_err() {
            SweepError::Setting(e) => e.to_string(),
            other => panic!("{other}"),
        };
        let gfb = SweepSpec::from_json(
            r#"{"cpus": 4, "tests": ["gedf:gfb"], "overheads": "builtin:rtmach"}"#,
        )
        .unwrap();
        assert!(setting(gfb)
            .starts_with("overheads builtin:rtmach is read by none of the tests counted"));
        let given = SweepSpec::from_json(r#"{"tests": ["given:rta"]}"#).unwrap();
        assert!(setting(given).contains("given:rta reads each task's priority"));
        let pfp = SweepSpec::from_json(r#"{"cpus": 2, "tests": ["pfp-given:ff"]}"#).unwrap();
        assert!(setting(pfp).contains("pfp-given:ff reads each task's priority"));
    }

    #[test]
    fn utilization_steps_are_exact_and_inclusive() {
        let steps = |from, to, step| {
            SweepSpec {
                from,
                to,
                step,
                ..SweepSpec::default()
            }
            .utilizations()
        };
        assert_eq!(
            steps(0.5, 1.0, 0.1).unwrap(),
            vec![0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
        );
        assert_eq!(steps(0.7, 0.7, 0.05).unwrap(), vec![0.7]);
        assert_eq!(steps(0.05, 1.0, 0.05).unwrap().len(), 20);
        assert!(steps(0.0, 1.0, 0.1).is_err());
        assert!(steps(0.5, 0.4, 0.1).is_err());
        assert!(steps(0.5, 1.0, 0.0).is_err());
        assert!(steps(0.5, f64::NAN, 0.1).is_err());
        assert!(steps(0.001, 100.0, 0.001).is_err());
    }

    #[test]
    fn json_round_trips_and_refuses_unknown_keys() {
        let spec = SweepSpec {
            tasks: 6,
            deadlines: DeadlineModel::constrained(0.5, 1.0),
            tick: Some(Nanos::from_ms(1)),
            overheads: Some("builtin:rtmach".into()),
            ..SweepSpec::default()
        };
        assert_eq!(SweepSpec::from_json(&spec.to_json()).unwrap(), spec);
        assert_eq!(
            SweepSpec::from_json("{}").unwrap(),
            SweepSpec::default(),
            "every key is optional"
        );
        let e = SweepSpec::from_json(r#"{"tasks": 5, "set": 10}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `set`"), "{e}");
        let e = SweepSpec::from_json(r#"{"tests": ["rm:edf-demand"]}"#).unwrap_err();
        assert!(e.to_string().contains("rm:edf-demand"), "{e}");
    }

    #[test]
    fn prepare_names_the_setting_at_fault() {
        let refused = |spec: SweepSpec| spec.prepare().unwrap_err().to_string();
        let base = SweepSpec::default;
        assert!(refused(SweepSpec { sets: 0, ..base() }).starts_with("sets "));
        assert!(refused(SweepSpec { cpus: 4, ..base() }).contains("is a uniprocessor test"));
        assert!(refused(SweepSpec {
            cpus: 1025,
            tests: SweepSpec::default_tests(4),
            ..base()
        })
        .contains("at most 1024"));
        assert!(SweepSpec {
            cpus: 4,
            tests: SweepSpec::default_tests(4),
            ..base()
        }
        .prepare()
        .is_ok());
        assert!(refused(SweepSpec {
            tests: vec![],
            ..base()
        })
        .starts_with("test "));
        assert_eq!(
            refused(SweepSpec {
                tests: vec![SweepColumn::parse("rm:rta-overheads").unwrap()],
                ..base()
            }),
            "test rm:rta-overheads needs overheads"
        );
        assert!(refused(SweepSpec {
            tick: Some(Nanos::from_ms(1)),
            ..base()
        })
        .starts_with("tick "));
        assert!(SweepSpec::default().prepare().is_ok());
    }
}
