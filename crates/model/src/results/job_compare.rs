//! Job for job: a run by rtlab's dispatcher held against the simulation of
//! the same scheduler (`rtlab compare --dispatcher`). Both engines run the
//! same scheduler object on the same releases, so each job `k` of task `i`
//! exists on both sides; they agree when the release is the same, both met
//! or both missed the deadline, and the response times differ by at most
//! a tolerance (the dispatch latency's p99.9: what one dispatch may cost
//! beyond the simulator's model of it).

use serde::Serialize;

use super::JobRecord;
use crate::Nanos;

/// One job on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobDifference {
    /// Task index.
    pub task: usize,
    /// Job number.
    pub job: u64,
    /// Response on real threads (ns; null: unfinished).
    pub real_response_ns: Option<u64>,
    /// Response in the simulator (ns; null: unfinished).
    pub sim_response_ns: Option<u64>,
    /// Missed on real threads.
    pub real_missed: bool,
    /// Missed in the simulator.
    pub sim_missed: bool,
}

impl JobDifference {
    /// Real minus simulated response (ns), when both finished.
    pub fn delta_ns(&self) -> Option<i64> {
        Some(self.real_response_ns? as i64 - self.sim_response_ns? as i64)
    }
}

/// What the job-for-job comparison found (`rtlab compare --dispatcher
/// --json`: `jobs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct JobAgreement {
    /// Jobs recorded on real threads.
    pub real_jobs: u64,
    /// Jobs the simulator recorded.
    pub sim_jobs: u64,
    /// Jobs on both sides (same task and number).
    pub matched: u64,
    /// Of those, released at the same time.
    pub releases_agree: u64,
    /// Of those, both met or both missed their deadline.
    pub misses_agree: u64,
    /// Of those, finished on both sides.
    pub responses_compared: u64,
    /// Of those, responses within `tolerance_ns` of each other.
    pub responses_within: u64,
    /// The response tolerance (ns).
    pub tolerance_ns: u64,
    /// The median and the 99th percentile of |real - simulated| response
    /// over the jobs finished on both sides (ns; nearest rank).
    pub difference_p50_ns: u64,
    /// See `difference_p50_ns`.
    pub difference_p99_ns: u64,
    /// The largest response difference.
    pub largest: Option<JobDifference>,
    /// The first job (by task, then number) whose miss differs.
    pub first_miss_difference: Option<JobDifference>,
}

impl JobAgreement {
    /// Every job on both sides, every release, miss and response agreeing.
    pub fn agrees(&self) -> bool {
        self.real_jobs == self.sim_jobs
            && self.matched == self.real_jobs
            && self.releases_agree == self.matched
            && self.misses_agree == self.matched
            && self.responses_within == self.responses_compared
    }
}

/// Every job of either side, paired by task and number (each side's
/// records in any order), in task then number order: `(real, simulated)`,
/// `None` where a side has no such job.
pub fn pair_jobs<'a>(
    real: &'a [JobRecord],
    sim: &'a [JobRecord],
) -> Vec<(Option<&'a JobRecord>, Option<&'a JobRecord>)> {
    let key = |j: &&JobRecord| (j.task, j.job);
    let mut r: Vec<&JobRecord> = real.iter().collect();
    let mut s: Vec<&JobRecord> = sim.iter().collect();
    r.sort_by_key(key);
    s.sort_by_key(key);
    let mut pairs = Vec::with_capacity(r.len().max(s.len()));
    let (mut i, mut k) = (0, 0);
    while i < r.len() || k < s.len() {
        let order = match (r.get(i), s.get(k)) {
            (Some(a), Some(b)) => (a.task, a.job).cmp(&(b.task, b.job)),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                pairs.push((Some(r[i]), None));
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                pairs.push((None, Some(s[k])));
                k += 1;
            }
            std::cmp::Ordering::Equal => {
                pairs.push((Some(r[i]), Some(s[k])));
                i += 1;
                k += 1;
            }
        }
    }
    pairs
}

/// Compares `real` and `sim` job for job (each side's records in any
/// order); `ended` is how long the runs lasted (an unfinished job missed
/// when its deadline was reached), `tolerance` the response tolerance.
pub fn compare_jobs(
    real: &[JobRecord],
    sim: &[JobRecord],
    ended: Nanos,
    tolerance: Nanos,
) -> JobAgreement {
    let mut out = JobAgreement {
        real_jobs: real.len() as u64,
        sim_jobs: sim.len() as u64,
        tolerance_ns: tolerance.as_ns(),
        ..JobAgreement::default()
    };
    let mut deltas: Vec<u64> = Vec::new();
    for pair in pair_jobs(real, sim) {
        let (Some(a), Some(b)) = pair else { continue };
        out.matched += 1;
        out.releases_agree += u64::from(a.release == b.release);
        let d = JobDifference {
            task: a.task,
            job: a.job,
            real_response_ns: a.response().map(Nanos::as_ns),
            sim_response_ns: b.response().map(Nanos::as_ns),
            real_missed: a.missed(ended),
            sim_missed: b.missed(ended),
        };
        if d.real_missed == d.sim_missed {
            out.misses_agree += 1;
        } else if out.first_miss_difference.is_none() {
            out.first_miss_difference = Some(d);
        }
        if let Some(delta) = d.delta_ns() {
            deltas.push(delta.unsigned_abs());
            out.responses_compared += 1;
            if delta.unsigned_abs() <= tolerance.as_ns() {
                out.responses_within += 1;
            }
            let larger = out
                .largest
                .and_then(|l| l.delta_ns())
                .is_none_or(|l| delta.unsigned_abs() > l.unsigned_abs());
            if larger {
                out.largest = Some(d);
            }
        }
    }
    deltas.sort_unstable();
    let rank = |q: f64| {
        let n = deltas.len();
        (n > 0).then(|| deltas[((q * n as f64).ceil() as usize).clamp(1, n) - 1])
    };
    out.difference_p50_ns = rank(0.5).unwrap_or(0);
    out.difference_p99_ns = rank(0.99).unwrap_or(0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn done(task: usize, job: u64, release: u64, finish: u64) -> JobRecord {
        JobRecord {
            start: Some(ms(release)),
            finish: Some(ms(finish)),
            ..JobRecord::unstarted(task, job, ms(release), ms(release + 10))
        }
    }

    /// Two tasks, three jobs each side; one response 2 ms off (beyond a
    /// 1 ms tolerance), one job missed on one side only, one job only on
    /// the real side.
    #[test]
    fn jobs_are_matched_by_task_and_number_and_judged_one_by_one() {
        let real = vec![
            done(0, 0, 0, 3),
            done(0, 1, 10, 15),
            done(1, 0, 0, 12),
            done(1, 1, 20, 22),
        ];
        let sim = vec![done(1, 0, 0, 9), done(0, 1, 10, 13), done(0, 0, 0, 3)];
        let a = compare_jobs(&real, &sim, ms(30), ms(1));
        assert_eq!((a.real_jobs, a.sim_jobs, a.matched), (4, 3, 3));
        assert_eq!(a.releases_agree, 3);
        // Task 1 job 0: finished at 12 > deadline 10 on real threads only.
        assert_eq!(a.misses_agree, 2);
        let first = a.first_miss_difference.unwrap();
        assert_eq!((first.task, first.job, first.real_missed), (1, 0, true));
        assert_eq!(a.responses_compared, 3);
        assert_eq!(a.responses_within, 1);
        let largest = a.largest.unwrap();
        assert_eq!((largest.task, largest.job), (1, 0));
        assert_eq!(largest.delta_ns(), Some(ms(3).as_ns() as i64));
        // |deltas| 0, 2 ms, 3 ms: the median is 2 ms, the 99th the largest.
        assert_eq!(a.difference_p50_ns, ms(2).as_ns());
        assert_eq!(a.difference_p99_ns, ms(3).as_ns());
        assert!(!a.agrees());
        let same = compare_jobs(&sim, &sim, ms(30), Nanos::ZERO);
        assert!(same.agrees(), "{same:?}");
        // Paired in task then number order, the real-only job with nothing
        // beside it.
        let pairs: Vec<_> = pair_jobs(&real, &sim)
            .into_iter()
            .map(|(a, b)| (a.map(|j| (j.task, j.job)), b.map(|j| (j.task, j.job))))
            .collect();
        assert_eq!(
            pairs,
            [
                (Some((0, 0)), Some((0, 0))),
                (Some((0, 1)), Some((0, 1))),
                (Some((1, 0)), Some((1, 0))),
                (Some((1, 1)), None),
            ]
        );
    }
}
