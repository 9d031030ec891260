//! The schedulability-ratio experiment: for each target utilization,
//! generate N random task sets and count how many each chosen test accepts,
//! rejects and leaves undecided (the classic plot of Bini & Buttazzo,
//! *Measuring the performance of schedulability tests*, Real-Time Systems
//! 30(1–2), 2005).
//!
//! A sweep is data, a [`SweepSpec`] (the flags of `rtlab sweep`). Its
//! samples are numbered globally: set `j` of utilization step `k` is sample
//! `g = k × sets + j`, generated from stream `(seed, g)` of
//! [`GeneratorConfig`] (with its `utilization` replaced by the step's), so a
//! sample depends on the seed and its index alone. A spec splits into
//! [`Shard`]s by sample index ([`SweepSpec::shards`]); [`run_shard`] counts
//! one shard's samples in parallel (rayon) into a [`ShardResult`] (integer
//! counts, the spec, a SHA-256 digest); [`merge`] checks and adds shards in
//! index order into a [`SweepResult`], whose [`SweepResult::document`] is
//! what `rtlab sweep --json` prints. The numbers never depend on the number
//! of shards or threads. A test "accepts" only on `Some(true)`; `None`
//! verdicts are counted apart as inconclusive.
//!
//! ```
//! use rtlab_analysis::sweep::{merge, run, run_shard, SweepSpec};
//!
//! let spec = SweepSpec::from_json(r#"{"tasks": 4, "from": 0.7, "to": 0.9, "step": 0.1, "sets": 30}"#)?;
//! let shards = (0..3)
//!     .map(|i| run_shard(&spec, i, 3))
//!     .collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(merge(&shards)?, run(&spec)?);
//! # Ok::<(), rtlab_analysis::sweep::SweepError>(())
//! ```

mod error;
mod merge;
mod shard;
pub mod simulated;
mod spec;

pub use error::SweepError;
pub use merge::{merge, run, SweepResult};
pub use shard::{run_prepared_shard, run_shard, sha256_hex, Shard, ShardResult, SHARD_FORMAT};
pub use simulated::{Horizon, Simulate, SimulatedScheduler, SimulatedTest};
pub use spec::{
    Prepared, SharingSpec, SweepSpec, DEFAULT_MULTIPROCESSOR_TESTS, DEFAULT_TESTS, MAX_SWEEP_STEPS,
};

use rtlab_model::TaskSet;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::blocking::EdfBlocking;
use crate::error::AnalysisError;
use crate::multiprocessor::{self, MultiprocessorTest};
use crate::overhead_rta;
use crate::priority;
use crate::suite::Options;
use crate::verdict::{Test, Verdict};
use crate::{audsley, edf_demand, edf_overheads, edf_utilization, hyperbolic, liu_layland, rta};
use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};

/// Most tasks per generated set a sweep accepts. Memory is not the limit
/// (a sweep holds one set per worker thread) but time: the exact tests take
/// O(n²) per set, about 4 s for one set of 10,000 tasks on a 2-core VM and
/// so some 6 minutes at 100,000, for each set of each step.
pub const MAX_SWEEP_TASKS: usize = 10_000;

/// Most worker threads a sweep starts (`rtlab sweep --threads`, Python's
/// `threads=`): a thread is a stack and a kernel task, and past the CPUs a
/// CPU-bound sweep gains nothing (65,535 took over a minute to start for
/// 2 sets, and under 1 GiB of address space aborted).
pub const MAX_SWEEP_THREADS: usize = 1024;

/// One column of the experiment: a test under a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SweepTest {
    /// The policy (priorities for fixed-priority tests).
    pub policy: AnalysedPolicy,
    /// The test.
    pub test: Test,
}

impl Serialize for SweepTest {
    /// As its name, `policy:test`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for SweepTest {
    /// From its name, `policy:test`, refused with [`SweepTest::parse`]'s words.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SweepTest, D::Error> {
        let name = String::deserialize(deserializer)?;
        SweepTest::parse(&name).map_err(serde::de::Error::custom)
    }
}

impl SweepTest {
    /// `policy:test`, e.g. `rm:rta`, `edf:edf-demand`.
    pub fn name(&self) -> String {
        format!("{}:{}", self.policy.name(), self.test.name())
    }

    /// True when the test reads the tasks' `priority` fields (policy
    /// `given`).
    pub fn reads_priorities(&self) -> bool {
        self.policy == AnalysedPolicy::Fixed(PriorityAssignment::Given)
    }

    /// Refuses what the test cannot read, instead of a verdict that only
    /// looks like one: policy `given` on a task without a priority, an
    /// overhead-aware test without overheads in `options`.
    pub fn check(&self, set: &TaskSet, options: &Options) -> Result<(), AnalysisError> {
        if self.reads_priorities() {
            priority::assign(set, PriorityAssignment::Given)?;
        }
        if self.test.has_overheads() && options.overheads.is_none() {
            return Err(AnalysisError::MissingOverheads(self.name()));
        }
        Ok(())
    }

    /// Parses `policy:test`; `Err` explains what is accepted.
    pub fn parse(text: &str) -> Result<SweepTest, String> {
        let usage = || {
            format!(
                "invalid test `{text}`: write POLICY:TEST, e.g. rm:rta or edf:edf-demand \
                 (policies rm, dm, given, opa, edf; tests {})",
                Test::ALL.map(Test::name).join(", ")
            )
        };
        let (p, t) = text.split_once(':').ok_or_else(usage)?;
        let policy = AnalysedPolicy::from_name(p).ok_or_else(usage)?;
        let test = Test::from_name(t).ok_or_else(usage)?;
        let edf_test = matches!(
            test,
            Test::EdfUtilization | Test::EdfDensity | Test::EdfDemand | Test::EdfDemandOverheads
        );
        if edf_test != (policy == AnalysedPolicy::Edf) {
            return Err(format!(
                "invalid test `{text}`: EDF tests go with policy edf, fixed-priority tests with rm, dm, given or opa"
            ));
        }
        Ok(SweepTest { policy, test })
    }
}

/// One column of a sweep: a uniprocessor test under a policy (`rm:rta`),
/// a test on `m` processors (`gedf:bcl`, `gfp:rta`, `pedf:ff-decreasing`;
/// see [`crate::multiprocessor`]), or a simulation (`edf:sim`, `gedf:sim`;
/// see [`simulated`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SweepColumn {
    /// A uniprocessor test (spec `cpus` = 1).
    Uniprocessor(SweepTest),
    /// A multiprocessor test, run on the spec's `cpus` processors.
    Multiprocessor(MultiprocessorTest),
    /// A multiprocessor locking protocol's analysis on the spec's `cpus`
    /// processors ([`crate::mp_locking::decide`]; the partitioned protocols
    /// place the set by the spec's sharing heuristic under RM), named by
    /// the protocol (`mpcp`, `omlp`, ...).
    Locking(rtlab_model::mp_locking::MpProtocol),
    /// The set simulated under a scheduler ([`simulated`]).
    Simulated(SimulatedTest),
}

impl SweepColumn {
    /// The test's name, as parsed.
    pub fn name(&self) -> String {
        match self {
            SweepColumn::Uniprocessor(t) => t.name(),
            SweepColumn::Multiprocessor(t) => t.name(),
            SweepColumn::Locking(p) => p.name().to_string(),
            SweepColumn::Simulated(t) => t.name(),
        }
    }

    /// Parses a uniprocessor `POLICY:TEST` or a multiprocessor name;
    /// `Err` explains what is accepted.
    pub fn parse(text: &str) -> Result<SweepColumn, String> {
        if let Some(p) = rtlab_model::mp_locking::MpProtocol::from_name(text) {
            return Ok(SweepColumn::Locking(p));
        }
        if let Some(simulated) = SimulatedTest::parse(text) {
            return simulated.map(SweepColumn::Simulated);
        }
        let uniprocessor = SweepTest::parse(text);
        if let Ok(t) = uniprocessor {
            return Ok(SweepColumn::Uniprocessor(t));
        }
        let policy = text.split_once(':').map_or(text, |(p, _)| p);
        match MultiprocessorTest::from_name(text) {
            Ok(t) => Ok(SweepColumn::Multiprocessor(t)),
            Err(e)
                if policy.starts_with("gedf")
                    || policy.starts_with("gfp")
                    || policy.starts_with("pedf")
                    || policy.starts_with("p-")
                    || policy.starts_with("pfp") =>
            {
                Err(e)
            }
            Err(_) => uniprocessor.map(SweepColumn::Uniprocessor),
        }
    }

    /// True for a uniprocessor test.
    pub fn is_uniprocessor(&self) -> bool {
        match self {
            SweepColumn::Uniprocessor(_) => true,
            SweepColumn::Multiprocessor(_) | SweepColumn::Locking(_) => false,
            SweepColumn::Simulated(t) => t.is_uniprocessor(),
        }
    }

    /// The uniprocessor test's verdict, the multiprocessor test's on `cpus`
    /// processors (a locking protocol's partitioned by ff-decreasing), or the
    /// simulation's by `simulator` (`None` without one).
    pub fn verdict(
        &self,
        set: &TaskSet,
        cpus: u32,
        options: &Options,
        simulator: Option<&dyn Simulate>,
    ) -> Verdict {
        self.verdict_placed(
            set,
            cpus,
            options,
            crate::partition::Heuristic::FIRST_FIT_DECREASING,
            simulator,
        )
    }

    /// [`SweepColumn::verdict`], a locking protocol's set placed by
    /// `heuristic`.
    pub fn verdict_placed(
        &self,
        set: &TaskSet,
        cpus: u32,
        options: &Options,
        heuristic: crate::partition::Heuristic,
        simulator: Option<&dyn Simulate>,
    ) -> Verdict {
        match *self {
            SweepColumn::Uniprocessor(t) => run_test(set, t, options),
            SweepColumn::Multiprocessor(t) => multiprocessor::decide(set, cpus, t),
            SweepColumn::Locking(p) => crate::mp_locking::decide(set, p, cpus, heuristic),
            SweepColumn::Simulated(t) => t.verdict(set, cpus, simulator?),
        }
    }
}

impl Serialize for SweepColumn {
    /// As its name.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for SweepColumn {
    /// From its name, refused with [`SweepColumn::parse`]'s words.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SweepColumn, D::Error> {
        let name = String::deserialize(deserializer)?;
        SweepColumn::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// The verdict of one test on one set (no critical sections assumed beyond
/// those in the set; the overhead-aware tests use the first timer model of
/// `options`).
pub fn run_test(set: &TaskSet, test: SweepTest, options: &Options) -> Verdict {
    let none = EdfBlocking::none();
    let priorities = match test.policy {
        AnalysedPolicy::Edf => None,
        AnalysedPolicy::Fixed(PriorityAssignment::Audsley) => {
            let found = audsley::assign(set);
            if test.test == Test::Rta {
                return Some(found.is_some());
            }
            Some(match found {
                Some(p) => p,
                None => priority::assign(set, PriorityAssignment::DeadlineMonotonic).ok()?,
            })
        }
        AnalysedPolicy::Fixed(rule) => Some(priority::assign(set, rule).ok()?),
    };
    let zeros = || vec![rtlab_model::Nanos::ZERO; set.tasks.len()];
    match (test.test, priorities) {
        (Test::EdfUtilization, _) => edf_utilization::utilization_verdict(set, &none),
        (Test::EdfDensity, _) => edf_utilization::density(set, &none).schedulable,
        (Test::EdfDemand, _) => edf_demand::verdict(set, &none),
        (Test::EdfDemandOverheads, _) => {
            let platform = options.platforms().next()?;
            edf_overheads::verdict(set, &none, &platform)
        }
        (Test::LiuLayland, Some(p)) => liu_layland::analyse(set, &p, &zeros()).schedulable,
        (Test::Hyperbolic, Some(p)) => hyperbolic::analyse(set, &p, &zeros()).schedulable,
        (Test::Rta, Some(p)) => rta::is_schedulable(set, &p),
        (Test::RtaOverheads, Some(p)) => {
            let platform = options.platforms().next()?;
            overhead_rta::analyse(set, &p, &zeros(), &platform).schedulable
        }
        _ => None,
    }
}

/// The counts of one utilization step, per test in the spec's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepRow {
    /// The target utilization of the generated sets.
    pub utilization: f64,
    /// Sets generated at this step.
    pub sets: u64,
    /// Sets each test accepted.
    pub accepted: Vec<u64>,
    /// Sets each test rejected (`Some(false)`).
    pub rejected: Vec<u64>,
    /// Sets on which each test gave no verdict (`None`: a sufficient test
    /// that did not pass, or an exact test that gave up).
    pub inconclusive: Vec<u64>,
}

impl SweepRow {
    /// A row of `tests` zero counts.
    pub fn empty(utilization: f64, tests: usize) -> SweepRow {
        SweepRow {
            utilization,
            sets: 0,
            accepted: vec![0; tests],
            rejected: vec![0; tests],
            inconclusive: vec![0; tests],
        }
    }

    /// Fraction of the sets test `k` accepted.
    pub fn ratio(&self, k: usize) -> f64 {
        if self.sets == 0 {
            0.0
        } else {
            self.accepted[k] as f64 / self.sets as f64
        }
    }

    /// Adds `samples` sets whose per-test counts are `[accepted, rejected,
    /// inconclusive]`.
    fn add(&mut self, samples: u64, tally: &[[u64; 3]]) {
        self.sets += samples;
        for (k, [accepted, rejected, inconclusive]) in tally.iter().enumerate() {
            self.accepted[k] += accepted;
            self.rejected[k] += rejected;
            self.inconclusive[k] += inconclusive;
        }
    }

    /// Adds another row's counts (same step, same tests).
    fn merge(&mut self, other: &SweepRow) {
        self.sets += other.sets;
        for (mine, theirs) in [
            (&mut self.accepted, &other.accepted),
            (&mut self.rejected, &other.rejected),
            (&mut self.inconclusive, &other.inconclusive),
        ] {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tests() -> Vec<SweepColumn> {
        [
            "rm:liu-layland",
            "rm:hyperbolic",
            "rm:rta",
            "opa:rta",
            "edf:edf-demand",
        ]
        .iter()
        .map(|t| SweepColumn::parse(t).unwrap())
        .collect()
    }

    #[test]
    fn parses_test_names() {
        assert_eq!(SweepTest::parse("rm:rta").unwrap().name(), "rm:rta");
        assert!(SweepTest::parse("rm:edf-demand").is_err());
        assert!(SweepTest::parse("edf:rta").is_err());
        assert!(SweepTest::parse("rta").unwrap_err().contains("POLICY:TEST"));
    }

    #[test]
    fn deterministic_and_ordered_by_dominance() {
        let spec = SweepSpec {
            tasks: 6,
            seed: 7,
            from: 0.6,
            to: 0.95,
            step: 0.175,
            sets: 40,
            tests: tests(),
            ..SweepSpec::default()
        };
        let a = run(&spec).unwrap();
        assert_eq!(a, run(&spec).unwrap());
        let us: Vec<f64> = a.rows.iter().map(|r| r.utilization).collect();
        assert_eq!(us, [0.6, 0.775, 0.95]);
        for row in &a.rows {
            // LL <= hyperbolic <= RTA(RM) <= OPA <= EDF demand.
            for pair in row.accepted.windows(2) {
                assert!(pair[0] <= pair[1], "{row:?}");
            }
        }
        assert_eq!(
            a.rows[0].accepted[4], 40,
            "EDF accepts every implicit set with U < 1"
        );
    }
}

#[cfg(test)]
mod locking_tests {
    use super::*;

    fn spec(sharing: Option<SharingSpec>) -> SweepSpec {
        SweepSpec {
            tasks: 6,
            from: 0.8,
            to: 2.4,
            step: 0.8,
            sets: 20,
            seed: 5,
            cpus: 3,
            tests: [
                "pfp-rm:wf-decreasing",
                "mpcp",
                "dpcp",
                "fmlp+",
                "mrsp",
                "msrp",
                "omlp",
            ]
            .iter()
            .map(|t| SweepColumn::parse(t).unwrap())
            .collect(),
            sharing,
            ..SweepSpec::default()
        }
    }

    /// A protocol proves only what the blocking-free test of its placement
    /// proves; with long sections shared widely it proves less; the spec
    /// round-trips through JSON, and a spec without sharing writes no key.
    #[test]
    fn blocking_only_ever_costs_and_the_spec_round_trips() {
        let sharing = SharingSpec {
            resources: 3,
            sharing: 0.6,
            cs_min: rtlab_model::Nanos::from_us(500),
            cs_max: rtlab_model::Nanos::from_ms(2),
            ..SharingSpec::default()
        };
        let locked = run(&spec(Some(sharing.clone()))).unwrap();
        for row in &locked.rows {
            for k in 1..row.accepted.len() - 1 {
                assert!(row.accepted[k] <= row.accepted[0], "{row:?}");
            }
        }
        let total =
            |r: &SweepResult, k: usize| r.rows.iter().map(|row| row.accepted[k]).sum::<u64>();
        let free = run(&spec(None)).unwrap();
        for k in 1..7 {
            assert!(total(&locked, k) < total(&free, k), "column {k}");
        }
        let s = spec(Some(sharing));
        assert_eq!(SweepSpec::from_json(&s.to_json()).unwrap(), s);
        assert!(!spec(None).to_json().contains("sharing"));
        assert!(SweepSpec::from_json(r#"{"sharing": {"sharing": 2}}"#)
            .unwrap()
            .prepare()
            .unwrap_err()
            .to_string()
            .starts_with("sharing"));
    }
}

#[cfg(test)]
mod shard_tests {
    use super::*;

    fn spec() -> SweepSpec {
        SweepSpec {
            tasks: 5,
            from: 0.7,
            to: 1.0,
            step: 0.1,
            sets: 13,
            seed: 3,
            ..SweepSpec::default()
        }
    }

    #[test]
    fn shards_merged_in_any_order_equal_one_run() {
        let whole = run(&spec()).unwrap();
        for count in [2, 5, 7, 60] {
            let mut shards: Vec<ShardResult> = (0..count)
                .map(|i| run_shard(&spec(), i, count).unwrap())
                .collect();
            shards.reverse();
            assert_eq!(merge(&shards).unwrap(), whole, "{count} shards");
        }
        for row in &whole.rows {
            assert_eq!(row.sets, 13);
            for k in 0..row.accepted.len() {
                assert_eq!(row.accepted[k] + row.rejected[k] + row.inconclusive[k], 13);
            }
        }
    }

    #[test]
    fn merge_refuses_mixed_missing_and_duplicate_shards() {
        let shards: Vec<ShardResult> = (0..3).map(|i| run_shard(&spec(), i, 3).unwrap()).collect();
        let problem = |shards: &[ShardResult]| match merge(shards).unwrap_err() {
            SweepError::Merge { position, problem } => (position, problem),
            other => panic!("{other}"),
        };
        let other_seed = run_shard(&SweepSpec { seed: 4, ..spec() }, 2, 3).unwrap();
        assert_eq!(
            problem(&[shards[0].clone(), shards[1].clone(), other_seed]),
            (
                2,
                "its spec differs from the first shard's in `seed`: 4, not 3".into()
            )
        );
        assert_eq!(problem(&shards[..2]), (2, "shard 2 of 3 is missing".into()));
        let twice = [shards[0].clone(), shards[1].clone(), shards[1].clone()];
        assert!(problem(&twice).1.contains("given twice"));
        let mut edited = shards.clone();
        edited[1].rows[0].accepted[0] += 1;
        assert!(problem(&edited).1.contains("digest"));
        let of_four = run_shard(&spec(), 3, 4).unwrap();
        assert!(problem(&[shards[0].clone(), of_four])
            .1
            .contains("one of 4 shards"));
        assert_eq!(merge(&[]).unwrap_err(), SweepError::NoShards);
    }

    /// A shard count comes from the user or a file: it never sizes an
    /// allocation (10^12 aborted for 16 TB, 2^64 - 1 panicked), whether the
    /// shard is a real empty one or an edited one with its digest redone.
    #[test]
    fn a_huge_shard_count_is_one_missing_shard_not_an_allocation() {
        for count in [1_000_000_000_000, u64::MAX] {
            let empty = run_shard(&spec(), 0, count).unwrap();
            assert!(empty.shard.is_empty());
            let problem = match merge(&[empty]).unwrap_err() {
                SweepError::Merge { problem, .. } => problem,
                other => panic!("{other}"),
            };
            assert_eq!(problem, format!("shard 1 of {count} is missing"));
            let mut edited = run_shard(&spec(), 0, 2).unwrap();
            edited.shard.count = count;
            edited.digest = edited.expected_digest();
            let problem = match merge(&[edited]).unwrap_err() {
                SweepError::Merge { problem, .. } => problem,
                other => panic!("{other}"),
            };
            assert_eq!(
                problem,
                format!("shard 0 of {count} should hold samples 0..0, not 0..26")
            );
        }
        let last = run_shard(&spec(), u64::MAX - 1, u64::MAX).unwrap();
        assert_eq!((last.shard.first, last.shard.end), (51, 52));
    }

    /// Issue 39: a row's utilization edited (its digest redone) was merged
    /// as if the spec said so; the spec fixes every step's utilization.
    #[test]
    fn a_row_at_another_utilization_than_the_specs_is_refused() {
        let mut edited = run_shard(&spec(), 0, 1).unwrap();
        edited.rows[1].utilization = 0.85;
        edited.digest = edited.expected_digest();
        let problem = match merge(&[edited]).unwrap_err() {
            SweepError::Merge { problem, .. } => problem,
            other => panic!("{other}"),
        };
        assert_eq!(
            problem,
            "its row 1 is at utilization 0.85, where the spec's step 1 is 0.8"
        );
    }

    /// Issue 39: a spec or shard given as a JSON array was read by position
    /// (`[1, 2]`: 1 task, from 2).
    #[test]
    fn documents_that_are_not_objects_are_refused() {
        for text in ["[1, 2]", "\"x\"", "3", "null"] {
            let e = SweepSpec::from_json(text).unwrap_err().to_string();
            assert!(
                e.contains("must be a JSON object of keys, not"),
                "{text}: {e}"
            );
            let e = ShardResult::from_json(text).unwrap_err().to_string();
            assert!(
                e.contains("must be a JSON object of keys, not"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn cancelling_stops_the_run() {
        let prepared = spec().prepare().unwrap();
        let e = run_prepared_shard(&prepared, 0, 1, &|_| false).unwrap_err();
        assert_eq!(e, SweepError::Cancelled);
    }
}
