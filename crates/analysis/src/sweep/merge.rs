//! Merging shards into the sweep's result, refusing any set of shards that
//! is not exactly one run of one spec.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::shard::{sha256_hex, Shard, SHARD_FORMAT};
use super::{ShardResult, SweepError, SweepRow, SweepSpec};
use crate::overhead_rta::TimerModel;
use crate::schema::{linux_timer_fields, SweepDocument, SweepRowDocument};

/// A whole sweep's counts: one shard's, or every shard's merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepResult {
    /// The spec that was run.
    pub spec: SweepSpec,
    /// The overhead-aware tests' timer model, when any such test ran.
    pub timer: Option<TimerModel>,
    /// One row per utilization step, in order.
    pub rows: Vec<SweepRow>,
}

impl SweepResult {
    /// The test names, in column order.
    pub fn test_names(&self) -> Vec<String> {
        self.spec.tests.iter().map(|t| t.name()).collect()
    }

    /// The document `rtlab sweep --json` prints.
    pub fn document(&self) -> SweepDocument {
        let (timer, periodic_tick_ns) = linux_timer_fields(self.timer);
        let names = self.test_names();
        let by_test = |value: &dyn Fn(usize) -> u64| {
            names
                .iter()
                .enumerate()
                .map(|(k, name)| (name.clone(), value(k)))
                .collect()
        };
        let rows = self
            .rows
            .iter()
            .map(|row| SweepRowDocument {
                utilization: row.utilization,
                sets: row.sets,
                accepted: by_test(&|k| row.accepted[k]),
                ratio: names
                    .iter()
                    .enumerate()
                    .map(|(k, name)| (name.clone(), row.ratio(k)))
                    .collect(),
                inconclusive: by_test(&|k| row.inconclusive[k]),
            })
            .collect();
        SweepDocument {
            cpus: (self.spec.cpus > 1).then_some(self.spec.cpus),
            tasks: self.spec.tasks,
            sets_per_step: self.spec.sets,
            seed: self.spec.seed,
            method: self.spec.method.to_string(),
            deadlines: self.spec.deadlines.to_string(),
            tests: names,
            rows,
            timer,
            periodic_tick_ns,
            sharing: self.spec.sharing.clone(),
        }
    }

    /// [`SweepResult::document`] as pretty JSON: exactly what `rtlab sweep
    /// --json` prints, without the final newline.
    pub fn document_json(&self) -> String {
        serde_json::to_string_pretty(&self.document()).unwrap_or_default()
    }

    /// `sha256:` and the hex SHA-256 of [`SweepResult::document_json`]: the
    /// sweep's fingerprint, equal however the sweep was split.
    pub fn digest(&self) -> String {
        sha256_hex(self.document_json().as_bytes())
    }

    /// This result as JSON (spec, timer model, rows with accepted, rejected
    /// and inconclusive counts).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads [`SweepResult::to_json`]'s output back.
    pub fn from_json(text: &str) -> Result<SweepResult, SweepError> {
        SweepError::read_object("sweep result", text)
    }
}

/// Runs the whole spec in this process (one shard of one) on all of
/// rayon's threads.
pub fn run(spec: &SweepSpec) -> Result<SweepResult, SweepError> {
    merge(&[super::run_shard(spec, 0, 1)?])
}

/// Merges the shards of one sweep, given in any order, into its result,
/// adding their counts in shard-index order.
///
/// Refused, naming the first shard at fault by its position in `shards`:
/// another format; a digest that does not match; a spec (or shard count, or
/// timer model) that differs from the first shard's, naming the differing
/// key; an index outside `0..N`, twice, or missing; rows that do not add up
/// to the samples the shard covers.
pub fn merge(shards: &[ShardResult]) -> Result<SweepResult, SweepError> {
    let first = shards.first().ok_or(SweepError::NoShards)?;
    let at = |position: usize, problem: String| SweepError::Merge { position, problem };
    let count = first.shard.count;
    let total = first.spec.samples()?;
    let utilizations = first.spec.utilizations()?;
    let tests = first.spec.tests.len();
    if count == 0 {
        return Err(at(0, format!("a shard count of {count} cannot be merged")));
    }
    // Positions by shard index. The count comes from a file: nothing is
    // sized by it (a count of 10^12 is one missing shard, not 16 TB).
    let mut by_index: BTreeMap<u64, usize> = BTreeMap::new();
    for (position, shard) in shards.iter().enumerate() {
        if shard.format != SHARD_FORMAT {
            return Err(at(
                position,
                format!("format `{}` is not `{SHARD_FORMAT}`", shard.format),
            ));
        }
        if shard.digest != shard.expected_digest() {
            return Err(at(
                position,
                "its digest does not match its contents: it was edited or damaged".into(),
            ));
        }
        if let Some((key, theirs, ours)) = differing_key(&first.spec, &shard.spec) {
            return Err(at(
                position,
                format!("its spec differs from the first shard's in `{key}`: {ours}, not {theirs}"),
            ));
        }
        if shard.shard.count != count {
            return Err(at(
                position,
                format!(
                    "it is one of {} shards, the first shard one of {count}",
                    shard.shard.count
                ),
            ));
        }
        if shard.timer != first.timer {
            return Err(at(
                position,
                "its overheads' timer model differs from the first shard's".into(),
            ));
        }
        let index = shard.shard.index;
        let expected = Shard::of(index, count, total).ok_or_else(|| {
            at(
                position,
                format!("its shard index {index} is outside 0..{count}"),
            )
        })?;
        if shard.shard != expected {
            return Err(at(
                position,
                format!(
                    "shard {index} of {count} should hold samples {}..{}, not {}..{}",
                    expected.first, expected.end, shard.shard.first, shard.shard.end
                ),
            ));
        }
        check_rows(shard, &utilizations, tests).map_err(|problem| at(position, problem))?;
        if let Some(earlier) = by_index.insert(index, position) {
            return Err(at(
                position,
                format!("shard {index} of {count} was given twice (also as shard #{earlier})"),
            ));
        }
    }
    // Indices are in 0..count and distinct: all are there when there are
    // count of them; else the first gap is the missing one.
    if by_index.len() as u64 != count {
        let missing = (0u64..)
            .zip(by_index.keys())
            .find(|&(k, &index)| k != index)
            .map_or(by_index.len() as u64, |(k, _)| k);
        return Err(SweepError::Merge {
            position: shards.len(),
            problem: format!("shard {missing} of {count} is missing"),
        });
    }
    let mut rows: Vec<SweepRow> = utilizations
        .iter()
        .map(|&u| SweepRow::empty(u, tests))
        .collect();
    for &position in by_index.values() {
        for (row, add) in rows.iter_mut().zip(&shards[position].rows) {
            row.merge(add);
        }
    }
    Ok(SweepResult {
        spec: first.spec.clone(),
        timer: first.timer,
        rows,
    })
}

/// The first key whose value differs, with `a`'s and `b`'s values as JSON.
fn differing_key(a: &SweepSpec, b: &SweepSpec) -> Option<(String, String, String)> {
    let (a, b) = (serde_json::to_value(a).ok()?, serde_json::to_value(b).ok()?);
    let (a, b) = (a.as_object()?, b.as_object()?);
    a.iter().find_map(|(key, value)| {
        let other = b.get(key).unwrap_or(&serde_json::Value::Null);
        (other != value).then(|| (key.clone(), value.to_string(), other.to_string()))
    })
}

/// One row per step, at the step's utilization (the spec fixes it); per
/// row, the samples of the shard that fall in that step, and per test
/// accepted + rejected + inconclusive = sets.
fn check_rows(shard: &ShardResult, utilizations: &[f64], tests: usize) -> Result<(), String> {
    let steps = utilizations.len();
    if shard.rows.len() != steps {
        return Err(format!(
            "it has {} rows for the spec's {steps} utilization steps",
            shard.rows.len()
        ));
    }
    let sets = shard.spec.sets;
    for (step, row) in shard.rows.iter().enumerate() {
        if row.utilization.to_bits() != utilizations[step].to_bits() {
            return Err(format!(
                "its row {step} is at utilization {}, where the spec's step {step} is {}",
                row.utilization, utilizations[step]
            ));
        }
        let (lo, hi) = (step as u64 * sets, (step as u64 + 1) * sets);
        let covered = shard
            .shard
            .end
            .min(hi)
            .saturating_sub(shard.shard.first.max(lo));
        if row.sets != covered {
            return Err(format!(
                "its row {step} counts {} sets where the shard covers {covered}",
                row.sets
            ));
        }
        let widths = [&row.accepted, &row.rejected, &row.inconclusive].map(Vec::len);
        if widths != [tests; 3] {
            return Err(format!(
                "its row {step} has counts for {widths:?} tests, not {tests}"
            ));
        }
        for k in 0..tests {
            if row.accepted[k] + row.rejected[k] + row.inconclusive[k] != row.sets {
                return Err(format!(
                    "its row {step}'s counts for test {k} do not add up to {} sets",
                    row.sets
                ));
            }
        }
    }
    Ok(())
}
