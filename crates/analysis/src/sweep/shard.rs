//! Shards: a sweep cut by global sample index, each part run on its own and
//! written with a digest.
//!
//! The sweep's samples are numbered `0..steps × sets`: sample `g` is set
//! `g mod sets` of utilization step `g div sets`, generated from stream
//! `(seed, g)` ([`rtlab_model::generate::generate_set`]). Shard `i` of `n`
//! holds samples `⌊i·total/n⌋ .. ⌊(i+1)·total/n⌋`, so the shards cover every
//! sample once, their sizes differ by at most one, and a sample's verdicts
//! do not depend on which shard (or thread) ran it.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::spec::Prepared;
use super::{SweepError, SweepRow, SweepSpec};
use crate::overhead_rta::TimerModel;

/// The `format` of a shard document; a different one is refused.
pub const SHARD_FORMAT: &str = "rtlab-sweep-shard/1";

/// Sets one worker analyses between progress reports.
const CHUNK: u64 = 256;

/// Pieces of work held at once (4096 × 256 = about a million sets).
const BATCH: usize = 4096;

/// Which samples one shard runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// The shard's index, `0..count`.
    pub index: u64,
    /// Shards in all.
    pub count: u64,
    /// Its first global sample index.
    pub first: u64,
    /// One past its last global sample index.
    pub end: u64,
}

impl Shard {
    /// Shard `index` of `count` over `total` samples; `None` when `index`
    /// is not in `0..count`.
    pub fn of(index: u64, count: u64, total: u64) -> Option<Shard> {
        if index >= count {
            return None;
        }
        let bound = |i: u64| (u128::from(i) * u128::from(total) / u128::from(count)) as u64;
        Some(Shard {
            index,
            count,
            first: bound(index),
            end: bound(index + 1),
        })
    }

    /// Samples in this shard.
    pub fn len(&self) -> u64 {
        self.end - self.first
    }

    /// True when the shard holds no sample (more shards than samples).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn check_count(count: u64) -> Result<(), SweepError> {
    if count == 0 {
        return Err(rtlab_model::generate::GenerateError::invalid(
            "shard",
            "count must be at least 1 (write I/N with N >= 1)",
        )
        .into());
    }
    Ok(())
}

/// One shard's counts, with the spec it ran and a digest of both.
///
/// Its JSON (what `rtlab sweep --shard I/N --out FILE` writes):
///
/// ```text
/// {"format": "rtlab-sweep-shard/1", "spec": {...}, "shard": {"index": 3, "count": 7,
///  "first": 8571, "end": 11428}, "timer": null,
///  "rows": [{"utilization": 0.05, "sets": 0, "accepted": [0, ...], "rejected": [...],
///            "inconclusive": [...]}, ...],
///  "digest": "sha256:..."}
/// ```
///
/// `rows` has one entry per utilization step of the spec (zeros for the
/// steps the shard does not reach), counts in the order of the spec's
/// tests. `digest` is the SHA-256 of the document's other keys as compact
/// JSON, so a truncated or edited file is refused when read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardResult {
    /// [`SHARD_FORMAT`].
    pub format: String,
    /// The spec the shard ran.
    pub spec: SweepSpec,
    /// Which samples it ran.
    pub shard: Shard,
    /// The overhead-aware tests' timer model, when any such test ran.
    pub timer: Option<TimerModel>,
    /// Counts per utilization step.
    pub rows: Vec<SweepRow>,
    /// `sha256:` and the hex SHA-256 of the rest ([`ShardResult::expected_digest`]).
    pub digest: String,
}

impl ShardResult {
    /// The digest the document's contents call for: `sha256:` and the hex
    /// SHA-256 of the document without its `digest` key, as compact JSON.
    pub fn expected_digest(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.remove("digest");
        }
        sha256_hex(value.to_string().as_bytes())
    }

    /// Reads a shard document, refusing one that is not JSON, is truncated,
    /// has unknown keys, another format, or a digest that does not match its
    /// contents.
    pub fn from_json(text: &str) -> Result<ShardResult, SweepError> {
        let shard: ShardResult = SweepError::read_object("sweep shard", text)?;
        if shard.format != SHARD_FORMAT {
            return Err(SweepError::whole_document(
                "sweep shard",
                format!(
                    "format `{}` is not `{SHARD_FORMAT}`; write shards and merge them with the same rtlab",
                    shard.format
                ),
            ));
        }
        if shard.digest != shard.expected_digest() {
            return Err(SweepError::whole_document(
                "sweep shard",
                "its digest does not match its contents: the file was edited or damaged; run the shard again",
            ));
        }
        Ok(shard)
    }

    /// The document as pretty JSON (what `--out` writes, without the final
    /// newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// `sha256:` followed by the lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Runs shard `index` of `count` of `spec` on all of rayon's threads.
/// `index` outside `0..count` is refused as a setting (`shard`).
pub fn run_shard(spec: &SweepSpec, index: u64, count: u64) -> Result<ShardResult, SweepError> {
    run_prepared_shard(&spec.prepare()?, index, count, &|_| true)
}

/// [`run_shard`] on a prepared spec, calling `progress(sets)` from worker
/// threads as sets are analysed (a few hundred at a time); when it returns
/// false the run stops with [`SweepError::Cancelled`].
pub fn run_prepared_shard(
    prepared: &Prepared,
    index: u64,
    count: u64,
    progress: &(dyn Fn(u64) -> bool + Sync),
) -> Result<ShardResult, SweepError> {
    check_count(count)?;
    if let Some(t) = prepared.missing_simulator() {
        return Err(rtlab_model::generate::GenerateError::invalid(
            "test",
            format!(
                "{} needs the simulator: run it from rtlab sweep or rtlab.sweep (in Rust, \
                 Prepared::with_simulator with rtlab_sim::sweep_test::simulator())",
                t.name()
            ),
        )
        .into());
    }
    let shard = Shard::of(index, count, prepared.samples()).ok_or_else(|| {
        rtlab_model::generate::GenerateError::invalid(
            "shard",
            format!("index {index} is outside 0..{count} (write I/N with 0 <= I < N)"),
        )
    })?;
    let rows = count_samples(prepared, shard.first, shard.end, progress)?;
    let mut result = ShardResult {
        format: SHARD_FORMAT.to_string(),
        spec: prepared.spec.clone(),
        shard,
        timer: prepared.timer,
        rows,
        digest: String::new(),
    };
    result.digest = result.expected_digest();
    Ok(result)
}

/// One piece of work: samples `first..end` of step `step`.
struct Piece {
    step: usize,
    first: u64,
    end: u64,
}

/// The counts of samples `first..end`, one row per utilization step.
fn count_samples(
    prepared: &Prepared,
    first: u64,
    end: u64,
    progress: &(dyn Fn(u64) -> bool + Sync),
) -> Result<Vec<SweepRow>, SweepError> {
    let sets = prepared.spec.sets;
    let tests = &prepared.spec.tests;
    let mut rows: Vec<SweepRow> = prepared
        .generators
        .iter()
        .map(|config| SweepRow::empty(config.utilization, tests.len()))
        .collect();
    // Pieces of at most CHUNK samples, none across a step boundary, made
    // lazily and run BATCH at a time, so memory stays bounded whatever
    // `sets` is while the steps still run in parallel.
    let mut g = first;
    let mut pieces = std::iter::from_fn(|| {
        (g < end).then(|| {
            let step = g / sets;
            let stop = end.min((step + 1) * sets).min(g + CHUNK);
            let piece = Piece {
                step: step as usize,
                first: g,
                end: stop,
            };
            g = stop;
            piece
        })
    });
    loop {
        let batch: Vec<Piece> = pieces.by_ref().take(BATCH).collect();
        if batch.is_empty() {
            break;
        }
        let counted = batch
            .par_iter()
            .map(|piece| {
                let mut stream = prepared.streams[piece.step].clone();
                // Per test: accepted, rejected, inconclusive.
                let mut tally = vec![[0u64; 3]; tests.len()];
                let mut shared = None;
                for sample in piece.first..piece.end {
                    let mut set = stream.generate(sample)?;
                    let mut heuristic = crate::partition::Heuristic::FIRST_FIT_DECREASING;
                    if let Some((model, h)) = &prepared.sharing {
                        let copy = shared.insert(set.clone());
                        model.apply(copy, prepared.spec.seed, sample);
                        set = copy;
                        heuristic = *h;
                    }
                    for (counts, test) in tally.iter_mut().zip(tests) {
                        let verdict = test.verdict_placed(
                            set,
                            prepared.spec.cpus,
                            &prepared.options,
                            heuristic,
                            prepared.simulator.as_deref(),
                        );
                        let slot = match verdict {
                            Some(true) => 0,
                            Some(false) => 1,
                            None => 2,
                        };
                        counts[slot] += 1;
                    }
                }
                if !progress(piece.end - piece.first) {
                    return Err(SweepError::Cancelled);
                }
                Ok((piece.step, piece.end - piece.first, tally))
            })
            .collect::<Result<Vec<_>, SweepError>>()?;
        for (step, samples, tally) in counted {
            rows[step].add(samples, &tally);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_sample_once_and_differ_by_at_most_one() {
        for (total, count) in [(100, 7), (3, 7), (0, 2), (20_000, 1), (u64::MAX, 3)] {
            let shards: Vec<Shard> = (0..count)
                .map(|i| Shard::of(i, count, total).unwrap())
                .collect();
            assert_eq!(shards[0].first, 0);
            assert_eq!(shards.last().unwrap().end, total);
            for pair in shards.windows(2) {
                assert_eq!(pair[0].end, pair[1].first);
            }
            let sizes: Vec<u64> = shards.iter().map(Shard::len).collect();
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(hi - lo <= 1, "{sizes:?}");
        }
        assert_eq!(Shard::of(7, 7, 100), None);
    }

    #[test]
    fn an_edited_or_truncated_shard_is_refused() {
        let spec = SweepSpec {
            tasks: 4,
            from: 0.8,
            to: 0.9,
            step: 0.1,
            sets: 10,
            ..SweepSpec::default()
        };
        let shard = run_shard(&spec, 1, 3).unwrap();
        let text = shard.to_json();
        assert_eq!(ShardResult::from_json(&text).unwrap(), shard);
        let edited = text.replacen("\"sets\": 10", "\"sets\": 11", 1);
        assert_ne!(edited, text);
        let e = ShardResult::from_json(&edited).unwrap_err().to_string();
        assert!(e.contains("digest does not match"), "{e}");
        let e = ShardResult::from_json(&text[..text.len() / 2]).unwrap_err();
        assert!(
            matches!(e, SweepError::Document { line, .. } if line > 0),
            "{e}"
        );
        let e = run_shard(&spec, 3, 3).unwrap_err().to_string();
        assert!(e.starts_with("shard index 3 is outside 0..3"), "{e}");
    }
}
