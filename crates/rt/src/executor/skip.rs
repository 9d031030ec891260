//! The `--on-miss skip` rule of the simulator, decided by a task thread
//! before each release: a release at r is skipped when the oldest job of
//! the task still pending at r (released earlier, finished after r, or
//! never) has its deadline at or before r. The thread decides release r
//! only once the jobs before it are done, so it knows their finish times.
//!
//! **Bounded.** Deadlines grow with releases, so the oldest pending job has
//! the earliest deadline; a release that is not skipped therefore finds
//! only jobs with deadlines after it pending, i.e. released in (r - D, r):
//! at most ceil(D/T) - 1 of them, ceil(D/T) once its own job is added.
//! [`Pending::capacity_for`] allocates that (plus one spare) before the
//! first release, and [`Pending::push`] never grows it.

use std::collections::VecDeque;

use rtlab_model::{Nanos, Task};

/// (deadline, finish) of the jobs that may still be pending, oldest first;
/// finishes increase (`Nanos::MAX`: never finished).
#[derive(Debug)]
pub struct Pending {
    jobs: VecDeque<(Nanos, Nanos)>,
}

impl Pending {
    /// Room for the jobs of `task` that can be pending at once in a run of
    /// `duration`: ceil(D/T) + 1, and no more than the run's releases + 1.
    pub fn capacity_for(task: &Task, duration: Nanos) -> usize {
        let per = |span: Nanos| {
            span.as_ns()
                .div_ceil(task.period.as_ns().max(1))
                .saturating_add(1)
        };
        usize::try_from(per(task.deadline).min(per(duration))).unwrap_or(usize::MAX)
    }

    /// Empty, with room for `capacity` jobs, allocated and written once
    /// now so that no page of it faults in later.
    pub fn with_capacity(capacity: usize) -> Pending {
        let mut jobs = VecDeque::with_capacity(capacity.max(1));
        while jobs.len() < jobs.capacity() {
            jobs.push_back((Nanos::ZERO, Nanos::ZERO));
        }
        jobs.clear();
        Pending { jobs }
    }

    /// Adds the job just made. Never allocates: at capacity (which the
    /// bound above rules out) the oldest entry gives way.
    pub fn push(&mut self, deadline: Nanos, finish: Nanos) {
        if self.jobs.len() == self.jobs.capacity() {
            debug_assert!(false, "more jobs pending than ceil(D/T) + 1");
            self.jobs.pop_front();
        }
        self.jobs.push_back((deadline, finish));
    }

    /// Whether the release at `release` is skipped (forgets jobs finished
    /// by then).
    pub fn skips(&mut self, release: Nanos) -> bool {
        while self.jobs.front().is_some_and(|&(_, f)| f <= release) {
            self.jobs.pop_front();
        }
        self.jobs.front().is_some_and(|&(d, _)| d <= release)
    }

    /// True when the oldest pending job never finishes and its deadline is
    /// at or before `release`: then this release and every later one is
    /// skipped.
    pub fn skips_all_from(&mut self, release: Nanos) -> bool {
        self.skips(release) && self.jobs.front().is_some_and(|&(_, f)| f == Nanos::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    /// C = 30, T = 10, D = 40, run back to back from 0: jobs finish at 30,
    /// 60, 90, 120; the release at 50 finds job 1 (deadline 50) pending, so
    /// it and later ones are skipped while a late job is pending, exactly
    /// as the simulator's `--on-miss skip` does.
    #[test]
    fn skip_replays_the_simulators_rule() {
        let mut p = Pending::with_capacity(8);
        p.push(ms(40), ms(30));
        assert!(!p.skips(ms(10)));
        p.push(ms(50), ms(60));
        assert!(!p.skips(ms(20)));
        p.push(ms(60), ms(90));
        assert!(!p.skips(ms(30)));
        p.push(ms(70), ms(120));
        assert!(!p.skips(ms(40)));
        assert!(p.skips(ms(50)), "job 1 (deadline 50) is pending at 50");
        assert!(p.skips(ms(60)), "job 2 (deadline 60) is pending at 60");
        assert!(p.skips(ms(110)), "job 3 (deadline 70) is pending at 110");
        assert!(!p.skips(ms(120)), "nothing pending at 120");
        p.push(ms(160), Nanos::MAX);
        assert!(!p.skips_all_from(ms(150)));
        assert!(p.skips_all_from(ms(160)));
        assert!(p.skips_all_from(ms(10_000)));
    }

    /// Back-to-back jobs of every length against every release pattern:
    /// the jobs pending at a release that is not skipped never exceed
    /// ceil(D/T) - 1 (so capacity ceil(D/T) + 1 is never reached).
    #[test]
    fn the_pending_jobs_stay_within_the_bound() {
        for (t, d) in [(10, 10), (10, 25), (10, 40), (7, 100)] {
            let task = Task::new("t", ms(t), ms(1)).with_deadline(ms(d));
            let capacity = Pending::capacity_for(&task, Nanos::from_secs(100));
            assert_eq!(capacity as u64, d.div_ceil(t) + 1);
            for c in [1, 9, 10, 11, 25, 33, 100] {
                let mut p = Pending::with_capacity(capacity);
                let mut busy_until = 0u64;
                for k in 0..400u64 {
                    let r = k * t;
                    if p.skips(ms(r)) {
                        continue;
                    }
                    assert!(
                        (p.jobs.len() as u64) < d.div_ceil(t),
                        "T={t} D={d} C={c} k={k}"
                    );
                    busy_until = busy_until.max(r) + c;
                    p.push(ms(r + d), ms(busy_until));
                }
            }
        }
        let short = Task::new("t", ms(10), ms(1)).with_deadline(ms(1000));
        assert_eq!(
            Pending::capacity_for(&short, ms(35)),
            5,
            "bounded by the run"
        );
    }
}
