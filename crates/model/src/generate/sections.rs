//! Random critical sections for locking experiments: which tasks share
//! which resources, how often and for how long.
//!
//! Given a set (from the utilization generator), a [`SharingModel`] adds,
//! deterministically in `(seed, index)`, for each task and each of the
//! `resources` resources in turn: with probability `sharing` the task uses
//! the resource, with `requests` critical sections on it per job, each of
//! a length drawn uniformly in `[length_min, length_max]` (whole
//! nanoseconds). A task's sections are then laid out one after the other
//! in random order, never nested, with random gaps, inside its C: when
//! their total exceeds C they are shortened in proportion (at least 1 ns
//! each) so that they fit. This is the model of the locking experiments of
//! Brandenburg's thesis (2011) and of Burns & Wellings' MrsP evaluation:
//! a number of shared resources, an access probability, a number of
//! requests and a range of lengths.
//!
//! The draws come from their own stream (stream `index` of the seed mixed
//! with [`SECTION_STREAMS`]), so the same set gets the same periods and
//! execution times with or without sections.

use super::GenerateError;
use crate::random::{below, stream_rng, unit_open};
use crate::{CriticalSection, Nanos, TaskSet};

/// Mixed into the seed of the section streams (apart from the sets').
pub const SECTION_STREAMS: u64 = 0x5ec7_10c5_0000_0000;

/// The most resources, and requests per resource, a model may ask for.
pub const MAX_RESOURCES: u32 = 64;

/// How tasks share resources (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharingModel {
    /// Resources shared, named `r1..rN`.
    pub resources: u32,
    /// Probability that a task uses a given resource, in [0, 1].
    pub sharing: f64,
    /// Critical sections per job on each resource a task uses.
    pub requests: u32,
    /// Shortest section.
    pub length_min: Nanos,
    /// Longest section.
    pub length_max: Nanos,
}

impl Default for SharingModel {
    /// Two resources, each used by a task with probability 0.5, one
    /// section of 10 to 100 µs per job.
    fn default() -> Self {
        SharingModel {
            resources: 2,
            sharing: 0.5,
            requests: 1,
            length_min: Nanos::from_us(10),
            length_max: Nanos::from_us(100),
        }
    }
}

impl SharingModel {
    /// Checks the settings; the message names the setting.
    pub fn validate(&self) -> Result<(), GenerateError> {
        if self.resources > MAX_RESOURCES {
            return Err(GenerateError::invalid(
                "resources",
                format!("{} is above the limit of {MAX_RESOURCES}", self.resources),
            ));
        }
        if !(0.0..=1.0).contains(&self.sharing) {
            return Err(GenerateError::invalid(
                "sharing",
                format!("must be a probability from 0 to 1 (got {})", self.sharing),
            ));
        }
        if self.requests == 0 || self.requests > MAX_RESOURCES {
            return Err(GenerateError::invalid(
                "requests",
                format!("must be from 1 to {MAX_RESOURCES} (got {})", self.requests),
            ));
        }
        if self.length_min.is_zero() || self.length_min > self.length_max {
            return Err(GenerateError::invalid(
                "cs-length",
                format!(
                    "{}..{}: give MIN..MAX with 0 < MIN <= MAX",
                    self.length_min, self.length_max
                ),
            ));
        }
        Ok(())
    }

    /// `set` with sections drawn for sample `index` of `seed` (module
    /// docs); the tasks' own sections, if any, are replaced.
    pub fn apply(&self, set: &mut TaskSet, seed: u64, index: u64) {
        let mut rng = stream_rng(seed ^ SECTION_STREAMS, index);
        let span = self.length_max.as_ns() - self.length_min.as_ns() + 1;
        let mut drawn: Vec<(u32, u64)> = Vec::new();
        for task in &mut set.tasks {
            drawn.clear();
            for r in 1..=self.resources {
                if unit_open(&mut rng) < self.sharing {
                    for _ in 0..self.requests {
                        let len = self.length_min.as_ns() + below(&mut rng, span);
                        drawn.push((r, len));
                    }
                }
            }
            task.critical_sections.clear();
            if drawn.is_empty() {
                continue;
            }
            crate::random::shuffle(&mut drawn, &mut rng);
            let c = task.wcet.as_ns();
            let total: u128 = drawn.iter().map(|&(_, l)| u128::from(l)).sum();
            if total > u128::from(c) {
                let total = total.max(1);
                if drawn.len() as u64 > c {
                    drawn.truncate(c as usize);
                }
                for (_, l) in &mut drawn {
                    *l = (u128::from(*l) * u128::from(c) / total).max(1) as u64;
                }
                // Rounding up to 1 ns may overshoot by a few ns: trim the
                // longest.
                while drawn.iter().map(|&(_, l)| l).sum::<u64>() > c {
                    if let Some(longest) = drawn.iter_mut().max_by_key(|(_, l)| *l) {
                        longest.1 -= 1;
                    }
                }
            }
            let used: u64 = drawn.iter().map(|&(_, l)| l).sum();
            let free = c - used;
            // k + 1 gaps that add up to at most `free`.
            let mut cuts: Vec<u64> = (0..drawn.len())
                .map(|_| below(&mut rng, free.saturating_add(1)))
                .collect();
            cuts.sort_unstable();
            let mut at = 0u64;
            let mut previous_cut = 0u64;
            for (&(r, len), &cut) in drawn.iter().zip(&cuts) {
                at += cut - previous_cut;
                previous_cut = cut;
                task.critical_sections.push(CriticalSection {
                    resource: format!("r{r}"),
                    start: Nanos::from_ns(at),
                    length: Nanos::from_ns(len),
                });
                at += len;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Task, TaskSet};

    fn set() -> TaskSet {
        TaskSet::new(
            "s",
            (0..20)
                .map(|i| {
                    Task::new(
                        format!("t{i}"),
                        Nanos::from_ms(10),
                        Nanos::from_us(50 + i * 100),
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn sections_fit_in_c_and_are_deterministic() {
        let model = SharingModel {
            resources: 3,
            sharing: 0.7,
            requests: 2,
            length_min: Nanos::from_us(20),
            length_max: Nanos::from_us(200),
        };
        model.validate().unwrap();
        let mut a = set();
        model.apply(&mut a, 7, 3);
        let mut b = set();
        model.apply(&mut b, 7, 3);
        assert_eq!(a, b);
        let mut c = set();
        model.apply(&mut c, 7, 4);
        assert_ne!(a, c, "another sample, other sections");
        assert!(a.errors().is_empty(), "{:?}", a.errors());
        let users = a
            .tasks
            .iter()
            .filter(|t| !t.critical_sections.is_empty())
            .count();
        assert!(
            (8..=20).contains(&users),
            "{users} of 20 tasks use a resource"
        );
        // Each used resource has exactly `requests` sections.
        for t in &a.tasks {
            for r in ["r1", "r2", "r3"] {
                let k = t
                    .critical_sections
                    .iter()
                    .filter(|cs| cs.resource == r)
                    .count();
                assert!(k == 0 || k == 2 || t.wcet < Nanos::from_us(10), "{t:?}");
            }
        }
        // The 50 µs task cannot hold up to 12 sections of 20 µs: shortened.
        assert!(a.tasks[0]
            .critical_sections
            .iter()
            .all(|cs| cs.end().unwrap() <= a.tasks[0].wcet));
    }

    #[test]
    fn settings_are_checked() {
        let bad = |m: SharingModel| m.validate().unwrap_err().to_string();
        let base = SharingModel::default();
        assert!(bad(SharingModel {
            sharing: 1.5,
            ..base
        })
        .starts_with("sharing"));
        assert!(bad(SharingModel {
            requests: 0,
            ..base
        })
        .starts_with("requests"));
        assert!(bad(SharingModel {
            length_min: Nanos::from_us(5),
            length_max: Nanos::from_us(1),
            ..base
        })
        .starts_with("cs-length"));
        assert!(bad(SharingModel {
            resources: 65,
            ..base
        })
        .starts_with("resources"));
    }
}
