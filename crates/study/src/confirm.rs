//! Confirming reruns: a real run that missed, whose miss would end a
//! series (a Hartstone iteration, a breakdown step, a study cell), is run
//! once more through the same [`Runner`] before it counts. A rerun that
//! passes says the first run was disturbed (the machine, not the
//! scheduler), and the rerun's result counts; a rerun that misses too
//! confirms the miss, as the scheduler's when the rerun was clean (when it
//! was disturbed too, the miss counts and the output says it may be the
//! machine's).
//!
//! Only real runs are rerun: their counts carry a disturbance account
//! ([`RunCounts::disturbance`]); the simulator's do not, and rerunning a
//! deterministic simulation would only repeat it.

use rtlab_model::disturbance::Rerun;
use rtlab_model::runner::{RunCounts, RunSpec, Runner};
use rtlab_model::TaskSet;

/// How many times a miss is rerun before it counts (documented default).
pub const CONFIRMING_RERUNS: u32 = 1;

/// A run's counts after confirmation, with the rerun when there was one.
#[derive(Debug, Clone, Default)]
pub struct Confirmed {
    /// The counts that count: the rerun's when there was one.
    pub counts: RunCounts,
    /// The rerun, when the first run missed.
    pub rerun: Option<Rerun>,
}

fn verdict_of(counts: &RunCounts) -> String {
    counts
        .disturbance
        .as_ref()
        .map_or_else(|| "no account".into(), |d| d.verdict.summary.clone())
}

/// Runs `set` as `spec` says; when `confirm` is on and the run is real and
/// missed, runs it once more and keeps the rerun's counts. An interrupted
/// first run or rerun is returned as it is.
pub fn run_confirmed<R: Runner>(
    runner: &mut R,
    set: &TaskSet,
    spec: &RunSpec,
    confirm: bool,
) -> Result<Confirmed, R::Error> {
    let first = runner.run(set, spec)?;
    let missed = first.deadline_misses() > 0;
    if !confirm || !missed || first.interrupted || first.disturbance.is_none() {
        return Ok(Confirmed {
            counts: first,
            rerun: None,
        });
    }
    let again = runner.run(set, spec)?;
    if again.interrupted {
        return Ok(Confirmed {
            counts: again,
            rerun: None,
        });
    }
    let rerun = Rerun {
        first_misses: first.deadline_misses(),
        first_verdict: verdict_of(&first),
        rerun_misses: again.deadline_misses(),
        rerun_verdict: verdict_of(&again),
        confirmed: again.deadline_misses() > 0,
        rerun_disturbed: again
            .disturbance
            .as_ref()
            .is_some_and(|d| d.verdict.is_disturbed()),
    };
    Ok(Confirmed {
        counts: again,
        rerun: Some(rerun),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::disturbance::DisturbanceAccount;
    use rtlab_model::policy::ModelScheduler;
    use rtlab_model::runner::TaskCounts;
    use rtlab_model::{Nanos, Task};

    /// Misses as scripted, one entry per run; `real` gives the counts an
    /// account, as real runs have.
    struct Script {
        misses: Vec<u64>,
        real: bool,
        runs: usize,
    }

    impl Runner for Script {
        type Error = String;
        fn run(&mut self, _: &TaskSet, _: &RunSpec) -> Result<RunCounts, String> {
            let m = self.misses[self.runs];
            self.runs += 1;
            Ok(RunCounts {
                tasks: vec![TaskCounts {
                    name: "t".into(),
                    released: 10,
                    deadline_misses: m,
                    ..TaskCounts::default()
                }],
                disturbance: self.real.then(|| DisturbanceAccount {
                    verdict: DisturbanceAccount::default().judge(),
                    ..DisturbanceAccount::default()
                }),
                ..RunCounts::default()
            })
        }
    }

    fn go(misses: &[u64], real: bool) -> (Confirmed, usize) {
        let set = TaskSet::new(
            "s",
            vec![Task::new("t", Nanos::from_ms(10), Nanos::from_ms(1))],
        );
        let spec = RunSpec {
            scheduler: ModelScheduler::Edf,
            duration: Nanos::from_ms(100),
            phases: Vec::new(),
        };
        let mut r = Script {
            misses: misses.to_vec(),
            real,
            runs: 0,
        };
        let c = run_confirmed(&mut r, &set, &spec, true).unwrap();
        (c, r.runs)
    }

    #[test]
    fn a_real_miss_that_passes_on_the_rerun_was_a_disturbance() {
        let (c, runs) = go(&[2, 0], true);
        assert_eq!(runs, 2);
        assert_eq!(c.counts.deadline_misses(), 0);
        let r = c.rerun.unwrap();
        assert!(!r.confirmed);
        assert_eq!(
            r.describe(),
            "missed 2 (clean), rerun passed (clean): the miss did not repeat, so it is not counted as the scheduler's (a disturbance the account did not see)"
        );
    }

    #[test]
    fn a_real_miss_that_misses_again_is_the_schedulers() {
        let (c, runs) = go(&[2, 1], true);
        assert_eq!(runs, 2);
        assert_eq!(c.counts.deadline_misses(), 1);
        assert!(c.rerun.unwrap().confirmed);
    }

    #[test]
    fn passes_and_simulated_misses_are_not_rerun() {
        assert_eq!(go(&[0], true).1, 1);
        let (c, runs) = go(&[3], false);
        assert_eq!(runs, 1);
        assert!(c.rerun.is_none());
    }
}
