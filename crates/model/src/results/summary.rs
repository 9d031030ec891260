//! The per-task summary of a run, computed online: [`TaskSummary::record`]
//! folds one job in with O(1) arithmetic and no allocation, so a real-time
//! task thread can keep its summary up to date on its real-time path, the
//! simulator can fold each job as it leaves, and a run of any length
//! summarises in constant memory.
//!
//! Rules (one for both worlds):
//! * a job **misses** when it finished after its deadline, was aborted at
//!   it, or is unfinished while the run, which lasted `ended`, reached its
//!   deadline (`deadline <= ended`);
//! * a **start miss** (paper 000's view) when it started after its deadline,
//!   or had not started by a deadline the run reached (or was aborted);
//! * an aborted job is neither completed nor unfinished;
//! * response `finish - release` and lateness `finish - deadline` over
//!   completed jobs (lateness exact within ±292 years, saturated beyond:
//!   [`lateness_ns`]); lag `start - release` over started jobs; means are
//!   exact sums divided by the count, rounded down;
//! * lock wait ([`JobRecord::blocked`]): the largest and the sum over the
//!   jobs that have the figure (tasks with critical sections); `None` for a
//!   task none of whose jobs has it.

use crate::time::lateness_ns;
use crate::Nanos;

use super::job::JobRecord;
use super::metrics::TaskMetrics;

/// Running totals of one task's jobs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskSummary {
    released: u64,
    completed: u64,
    misses: u64,
    aborted: u64,
    skipped: u64,
    unfinished: u64,
    start_deadline_misses: u64,
    preemptions: u64,
    voluntary_switches: u64,
    first_miss_ns: Option<u64>,
    response_sum_ns: u128,
    min_response_ns: Option<u64>,
    max_response_ns: Option<u64>,
    max_lateness_ns: Option<i64>,
    started: u64,
    lag_sum_ns: u128,
    max_lag_ns: Option<u64>,
    blocked_sum_ns: u128,
    max_blocked_ns: Option<u64>,
    max_remote_blocked_ns: Option<u64>,
    max_local_blocked_ns: Option<u64>,
    migrations: u64,
}

impl TaskSummary {
    /// The summary of `jobs`, as folding them in one by one gives.
    pub fn from_jobs<'a>(jobs: impl IntoIterator<Item = &'a JobRecord>, ended: Nanos) -> Self {
        let mut summary = TaskSummary::default();
        for job in jobs {
            summary.record(job, ended);
        }
        summary
    }

    /// Folds in one released job. `ended` (how long the run lasted) matters
    /// only for a job without a finish time: it decides whether the run
    /// reached its deadline.
    #[inline]
    pub fn record(&mut self, job: &JobRecord, ended: Nanos) {
        self.released += 1;
        self.preemptions += job.involuntary_switches;
        self.voluntary_switches += job.voluntary_switches;
        self.migrations += job.migrations;
        if let Some(blocked) = job.blocked {
            let b = blocked.as_ns();
            self.blocked_sum_ns += u128::from(b);
            self.max_blocked_ns = self.max_blocked_ns.max(Some(b));
        }
        if let Some(b) = job.remote_blocked {
            self.max_remote_blocked_ns = self.max_remote_blocked_ns.max(Some(b.as_ns()));
        }
        if let Some(b) = job.local_blocked {
            self.max_local_blocked_ns = self.max_local_blocked_ns.max(Some(b.as_ns()));
        }
        if job.missed(ended) {
            self.count_misses(1, job.deadline);
        }
        if job.missed_start_deadline(ended) {
            self.start_deadline_misses += 1;
        }
        if let Some(lag) = job.lag() {
            let lag = lag.as_ns();
            self.started += 1;
            self.lag_sum_ns += u128::from(lag);
            self.max_lag_ns = self.max_lag_ns.max(Some(lag));
        }
        match (job.response(), job.finish) {
            (Some(response), Some(finish)) => {
                let r = response.as_ns();
                self.completed += 1;
                self.response_sum_ns += u128::from(r);
                self.min_response_ns = Some(self.min_response_ns.map_or(r, |m| m.min(r)));
                self.max_response_ns = self.max_response_ns.max(Some(r));
                let lateness = lateness_ns(finish, job.deadline);
                self.max_lateness_ns =
                    Some(self.max_lateness_ns.map_or(lateness, |m| m.max(lateness)));
            }
            _ if job.aborted => self.aborted += 1,
            _ => self.unfinished += 1,
        }
    }

    /// Folds in one job that started at `start` and completed at `finish`
    /// with no voluntary switch and no lock wait: exactly what
    /// [`record`](Self::record) gives for that [`JobRecord`], without
    /// building it or testing the fields such a job cannot have (the
    /// simulator's global engine folds every completion so when no job
    /// sink asks for the records).
    #[inline]
    pub fn record_completed(
        &mut self,
        release: Nanos,
        deadline: Nanos,
        start: Nanos,
        finish: Nanos,
        preemptions: u64,
        migrations: u64,
    ) {
        self.released += 1;
        self.preemptions += preemptions;
        self.migrations += migrations;
        if finish > deadline {
            self.count_misses(1, deadline);
        }
        if start > deadline {
            self.start_deadline_misses += 1;
        }
        let lag = start.saturating_sub(release).as_ns();
        self.started += 1;
        self.lag_sum_ns += u128::from(lag);
        self.max_lag_ns = Some(self.max_lag_ns.map_or(lag, |m| m.max(lag)));
        let r = finish.saturating_sub(release).as_ns();
        self.completed += 1;
        self.response_sum_ns += u128::from(r);
        self.min_response_ns = Some(self.min_response_ns.map_or(r, |m| m.min(r)));
        self.max_response_ns = Some(self.max_response_ns.map_or(r, |m| m.max(r)));
        let lateness = lateness_ns(finish, deadline);
        self.max_lateness_ns = Some(self.max_lateness_ns.map_or(lateness, |m| m.max(lateness)));
    }

    /// Counts `count` releases skipped because the previous job was late
    /// (the `skip` overrun rule); they are not released jobs.
    pub fn record_skipped(&mut self, count: u64) {
        self.skipped += count;
    }

    /// Folds in `count` jobs released at `first_release + j * period`
    /// (j = 0..count) with deadlines `relative_deadline` later, none of which
    /// started before the run ended at `ended`: exactly what `count` calls
    /// of [`record`](Self::record) with unstarted jobs give, in O(1).
    ///
    /// Job j misses (both views) when `first_release + j T + D <= ended`,
    /// so the misses are `min(count, floor((ended - first_release - D) / T) + 1)`
    /// when `first_release + D <= ended`, else none; the first of them is
    /// the earliest deadline, `first_release + D`.
    pub fn record_unstarted(
        &mut self,
        first_release: Nanos,
        period: Nanos,
        relative_deadline: Nanos,
        count: u64,
        ended: Nanos,
    ) {
        if count == 0 {
            return;
        }
        self.released += count;
        self.unfinished += count;
        let first_deadline = first_release.saturating_add(relative_deadline);
        if first_deadline > ended {
            return;
        }
        let reached = match ended
            .saturating_sub(first_deadline)
            .as_ns()
            .checked_div(period.as_ns())
        {
            Some(later) => later.saturating_add(1).min(count),
            None => count, // period 0: every deadline is the first
        };
        self.count_misses(reached, first_deadline);
        self.start_deadline_misses += reached;
    }

    #[inline]
    fn count_misses(&mut self, misses: u64, earliest_deadline: Nanos) {
        self.misses += misses;
        let d = earliest_deadline.as_ns();
        self.first_miss_ns = Some(self.first_miss_ns.map_or(d, |f| f.min(d)));
    }

    /// Jobs folded in so far.
    pub fn released(&self) -> u64 {
        self.released
    }

    /// The summary as reported, for task `name`.
    pub fn metrics(&self, name: &str) -> TaskMetrics {
        TaskMetrics {
            name: name.to_string(),
            released: self.released,
            completed: self.completed,
            misses: self.misses,
            aborted: self.aborted,
            skipped: self.skipped,
            unfinished: self.unfinished,
            preemptions: self.preemptions,
            min_response_ns: self.min_response_ns,
            mean_response_ns: mean(self.response_sum_ns, self.completed),
            max_response_ns: self.max_response_ns,
            max_lateness_ns: self.max_lateness_ns,
            first_miss_ns: self.first_miss_ns,
            max_blocked_ns: self.max_blocked_ns,
            total_blocked_ns: self
                .max_blocked_ns
                .map(|_| u64::try_from(self.blocked_sum_ns).unwrap_or(u64::MAX)),
            max_remote_blocked_ns: self.max_remote_blocked_ns,
            max_local_blocked_ns: self.max_local_blocked_ns,
            migrations: self.migrations,
        }
    }

    /// Largest start - release.
    pub fn max_lag_ns(&self) -> Option<u64> {
        self.max_lag_ns
    }

    /// Mean start - release of started jobs, rounded down.
    pub fn mean_lag_ns(&self) -> Option<u64> {
        mean(self.lag_sum_ns, self.started)
    }

    /// Jobs that started after release + D or not at all (paper 000's view).
    pub fn start_deadline_misses(&self) -> u64 {
        self.start_deadline_misses
    }

    /// Voluntary context switches during jobs.
    pub fn voluntary_switches(&self) -> u64 {
        self.voluntary_switches
    }
}

/// `sum / n` rounded down, `None` for no sample.
fn mean(sum: u128, n: u64) -> Option<u64> {
    match n {
        0 => None,
        n => u64::try_from(sum / u128::from(n)).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    /// Everything a summary reports: the shared metrics and the real-thread
    /// extras (max lag, mean lag, start misses, voluntary switches).
    type Reported = (TaskMetrics, Option<u64>, Option<u64>, u64, u64);

    /// The summary as `rtlab run` computed it before it was online: a batch
    /// pass over every stored job (kept as the oracle; aborts added).
    fn batch(name: &str, jobs: &[JobRecord], skipped: u64, ended: Nanos) -> Reported {
        let mut m = TaskMetrics {
            name: name.to_string(),
            released: jobs.len() as u64,
            skipped,
            ..TaskMetrics::default()
        };
        let (mut response_sum, mut lag_sum, mut started) = (0u128, 0u128, 0u64);
        let (mut max_lag, mut start_misses, mut voluntary) = (None, 0, 0);
        for job in jobs {
            m.preemptions += job.involuntary_switches;
            voluntary += job.voluntary_switches;
            if job.missed(ended) {
                m.misses += 1;
                let d = job.deadline.as_ns();
                m.first_miss_ns = Some(m.first_miss_ns.map_or(d, |f| f.min(d)));
            }
            if job.missed_start_deadline(ended) {
                start_misses += 1;
            }
            if let Some(lag) = job.lag() {
                started += 1;
                lag_sum += u128::from(lag.as_ns());
                max_lag = max_lag.max(Some(lag.as_ns()));
            }
            match (job.response(), job.finish) {
                (Some(r), Some(f)) => {
                    m.completed += 1;
                    let r = r.as_ns();
                    response_sum += u128::from(r);
                    m.min_response_ns = Some(m.min_response_ns.map_or(r, |x| x.min(r)));
                    m.max_response_ns = m.max_response_ns.max(Some(r));
                    let lateness = lateness_ns(f, job.deadline);
                    m.max_lateness_ns =
                        Some(m.max_lateness_ns.map_or(lateness, |x| x.max(lateness)));
                }
                _ if job.aborted => m.aborted += 1,
                _ => m.unfinished += 1,
            }
        }
        if m.completed > 0 {
            m.mean_response_ns = u64::try_from(response_sum / u128::from(m.completed)).ok();
        }
        let mean_lag = (started > 0).then(|| (lag_sum / u128::from(started)) as u64);
        (m, max_lag, mean_lag, start_misses, voluntary)
    }

    fn reported(s: &TaskSummary) -> Reported {
        (
            s.metrics("t"),
            s.max_lag_ns(),
            s.mean_lag_ns(),
            s.start_deadline_misses(),
            s.voluntary_switches(),
        )
    }

    fn online(jobs: &[JobRecord], skipped: u64, ended: Nanos) -> Reported {
        let mut s = TaskSummary::from_jobs(jobs, ended);
        s.record_skipped(skipped);
        reported(&s)
    }

    /// Job k of a task with T = 10 ms, D = 5 ms.
    fn job(k: u64, start: Option<u64>, finish: Option<u64>, switches: u64) -> JobRecord {
        JobRecord {
            start: start.map(ms),
            finish: finish.map(ms),
            voluntary_switches: switches / 2,
            involuntary_switches: switches,
            cpu: finish.map(|_| 1),
            start_cpu: None,
            migrations: 0,
            ..JobRecord::unstarted(0, k, ms(10 * k), ms(10 * k + 5))
        }
    }

    fn aborted(k: u64, start: Option<u64>) -> JobRecord {
        JobRecord {
            aborted: true,
            ..job(k, start, None, 1)
        }
    }

    #[test]
    fn lock_waits_give_the_largest_and_the_sum_and_none_without_sections() {
        let waited = |k: u64, b: Option<u64>| JobRecord {
            blocked: b.map(ms),
            ..job(k, Some(10 * k), Some(10 * k + 2), 0)
        };
        let s = TaskSummary::from_jobs(
            &[waited(0, Some(3)), waited(1, Some(0)), waited(2, Some(4))],
            ms(30),
        );
        let m = s.metrics("t");
        assert_eq!(
            (m.max_blocked_ns, m.total_blocked_ns),
            (Some(ms(4).as_ns()), Some(ms(7).as_ns()))
        );
        let m = TaskSummary::from_jobs(&[waited(0, None)], ms(30)).metrics("t");
        assert_eq!((m.max_blocked_ns, m.total_blocked_ns), (None, None));
        let json = serde_json::to_string(&m).unwrap();
        assert!(!json.contains("blocked"), "{json}");
    }

    #[test]
    fn online_equals_batch_on_hand_made_lists() {
        let lists: Vec<(Vec<JobRecord>, Nanos)> = vec![
            (vec![], ms(100)),
            // met, late, started late and cut, never started
            (
                vec![
                    job(0, Some(1), Some(3), 1),
                    job(1, Some(12), Some(16), 0),
                    job(2, Some(26), None, 3),
                    job(3, None, None, 0),
                ],
                ms(31),
            ),
            // the unstarted job's deadline (35) reached by the end (35)
            (
                vec![job(2, Some(20), Some(24), 2), job(3, None, None, 0)],
                ms(35),
            ),
            // finishing exactly at the deadline is not a miss
            (
                vec![job(0, Some(0), Some(5), 0), job(1, Some(15), Some(15), 0)],
                ms(20),
            ),
            // all late: lateness and first miss are the extremes
            (
                vec![
                    job(0, Some(4), Some(30), 5),
                    job(1, Some(30), Some(50), 5),
                    job(2, Some(50), Some(58), 5),
                ],
                ms(60),
            ),
            // aborted at the deadline, started or not
            (vec![aborted(0, Some(1)), aborted(1, None)], ms(15)),
        ];
        for (jobs, ended) in lists {
            assert_eq!(
                online(&jobs, 3, ended),
                batch("t", &jobs, 3, ended),
                "{jobs:?}"
            );
        }
    }

    #[test]
    fn the_example_counts_misses_the_way_the_simulator_does() {
        let jobs = [
            job(0, Some(1), Some(3), 1),
            job(1, Some(12), Some(16), 1),
            job(2, Some(26), None, 1),
            job(3, None, None, 1),
        ];
        let (m, max_lag, mean_lag, start_misses, _) = online(&jobs, 2, ms(31));
        assert_eq!((m.released, m.completed, m.unfinished), (4, 2, 2));
        assert_eq!(m.misses, 2);
        assert_eq!(m.first_miss_ns, Some(ms(15).as_ns()));
        assert_eq!(start_misses, 1);
        assert_eq!(m.min_response_ns, Some(ms(3).as_ns()));
        assert_eq!(m.max_response_ns, Some(ms(6).as_ns()));
        assert_eq!(m.mean_response_ns, Some(4_500_000));
        assert_eq!(m.max_lateness_ns, Some(ms(1).as_ns() as i64));
        assert_eq!(max_lag, Some(ms(6).as_ns()));
        assert_eq!(mean_lag, Some(ms(3).as_ns()));
        assert_eq!(m.preemptions, 4);
        assert_eq!(m.skipped, 2);
    }

    #[test]
    fn an_aborted_job_is_a_miss_neither_completed_nor_unfinished() {
        let (m, ..) = online(&[aborted(2, Some(21))], 0, ms(100));
        assert_eq!((m.released, m.completed, m.unfinished), (1, 0, 0));
        assert_eq!((m.aborted, m.misses, m.preemptions), (1, 1, 1));
        assert_eq!(m.first_miss_ns, Some(ms(25).as_ns()));
        assert_eq!(m.max_response_ns, None);
    }

    #[test]
    fn a_run_of_unstarted_jobs_counts_like_the_jobs_one_by_one() {
        let (t, d) = (ms(10), ms(25));
        for (first_k, count, ended) in [
            (3, 5, 0),
            (3, 5, 54),
            (3, 5, 55),
            (3, 5, 56),
            (3, 5, 100),
            (0, 1, 25),
            (7, 0, 500),
        ] {
            let ended = ms(ended);
            let one_by_one: Vec<JobRecord> = (first_k..first_k + count)
                .map(|k| JobRecord::unstarted(0, k, ms(10 * k), ms(10 * k) + d))
                .collect();
            let mut s = TaskSummary::default();
            s.record(&job(0, Some(0), Some(1), 0), ended);
            s.record_unstarted(ms(10 * first_k), t, d, count, ended);
            let mut all = vec![job(0, Some(0), Some(1), 0)];
            all.extend(one_by_one);
            assert_eq!(
                reported(&s),
                batch("t", &all, 0, ended),
                "{first_k} {count} {ended}"
            );
        }
    }

    fn arbitrary_job() -> impl Strategy<Value = JobRecord> {
        (
            0u64..50,
            0u64..3_000,
            proptest::option::of((0u64..2_000, proptest::option::of(0u64..2_000))),
            0u64..4,
            proptest::bool::weighted(0.1),
        )
            .prop_map(|(k, d, run, switches, abort)| {
                let release = Nanos::from_us(100 * k);
                let (start, finish) = match run {
                    None => (None, None),
                    Some((lag, None)) => (Some(release + Nanos::from_us(lag)), None),
                    Some((lag, Some(r))) => (
                        Some(release + Nanos::from_us(lag)),
                        Some(release + Nanos::from_us(lag + r)),
                    ),
                };
                JobRecord {
                    start,
                    finish,
                    aborted: abort && finish.is_none(),
                    voluntary_switches: switches,
                    involuntary_switches: switches * 3,
                    ..JobRecord::unstarted(0, k, release, release + Nanos::from_us(d))
                }
            })
    }

    proptest! {
        #[test]
        fn online_equals_batch_on_any_list(
            jobs in proptest::collection::vec(arbitrary_job(), 0..40),
            ended_us in 0u64..8_000,
            skipped in 0u64..5,
        ) {
            let ended = Nanos::from_us(ended_us);
            prop_assert_eq!(online(&jobs, skipped, ended), batch("t", &jobs, skipped, ended));
        }

        /// `record_completed` folds a completed job as `record` folds its
        /// record, among jobs of every kind (unstarted, unfinished,
        /// aborted ones through `record` in both folds).
        #[test]
        fn record_completed_equals_record(
            jobs in proptest::collection::vec((arbitrary_job(), 0u64..3), 0..40),
            ended_us in 0u64..8_000,
        ) {
            let ended = Nanos::from_us(ended_us);
            let (mut by_record, mut by_fields) = (TaskSummary::default(), TaskSummary::default());
            for (job, migrations) in jobs {
                let job = JobRecord { voluntary_switches: 0, migrations, ..job };
                by_record.record(&job, ended);
                match (job.start, job.finish) {
                    (Some(start), Some(finish)) => by_fields.record_completed(
                        job.release,
                        job.deadline,
                        start,
                        finish,
                        job.involuntary_switches,
                        job.migrations,
                    ),
                    _ => by_fields.record(&job, ended),
                }
            }
            prop_assert_eq!(by_fields, by_record);
        }
    }
}
