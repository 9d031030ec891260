//! The jobs of a trace window, one record each: when each job released in
//! the window was released, first ran and completed, and how often its
//! execution was split (what `rtlab sim --save` stores as job rows).

use rtlab_model::Nanos;

use crate::trace::{Trace, TraceRecord};

/// One job seen in a trace window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceJob {
    /// Task index.
    pub task: usize,
    /// Job index within the task.
    pub job: u64,
    /// Release time.
    pub release: Nanos,
    /// Absolute deadline: release + the task's relative deadline.
    pub deadline: Nanos,
    /// Start of its first execution interval in the window.
    pub start: Option<Nanos>,
    /// Completion, if it completed in the window.
    pub finish: Option<Nanos>,
    /// Times its execution resumed after a gap (another job or the kernel
    /// ran in between): its execution intervals that do not start where
    /// its previous one ended.
    pub preemptions: u64,
}

impl Trace {
    /// Every job whose release the window kept, by task then job, given
    /// each task's relative deadline (by task index). Jobs released before
    /// the window are left out (their release is not in it); memory is
    /// bounded by the kept records ([`crate::MAX_KEPT_RECORDS`]). When the
    /// window held more records than were kept ([`Trace::dropped`]), the
    /// jobs without a completion are left out too: their completion may be
    /// among the records not kept, so "unfinished" would be a guess.
    pub fn jobs(&self, relative_deadlines: &[Nanos]) -> Vec<TraceJob> {
        let mut jobs: Vec<TraceJob> = self
            .records
            .iter()
            .filter_map(|r| match *r {
                TraceRecord::Release { task, job, at } => Some(TraceJob {
                    task,
                    job,
                    release: at,
                    deadline: at + relative_deadlines.get(task).copied().unwrap_or(Nanos::ZERO),
                    start: None,
                    finish: None,
                    preemptions: 0,
                }),
                _ => None,
            })
            .collect();
        jobs.sort_by_key(|j| (j.task, j.job));
        let find = |jobs: &mut [TraceJob], task: usize, job: u64| {
            jobs.binary_search_by_key(&(task, job), |j| (j.task, j.job))
                .ok()
        };
        let mut last_end: Vec<Option<(u64, Nanos)>> = vec![None; self.tasks.len()];
        let mut runs: Vec<&TraceRecord> = self
            .records
            .iter()
            .filter(|r| matches!(r, TraceRecord::Run { .. }))
            .collect();
        runs.sort_by_key(|r| match r {
            TraceRecord::Run { start, .. } => *start,
            _ => Nanos::ZERO,
        });
        for r in runs {
            if let TraceRecord::Run {
                task,
                job,
                start,
                end,
            } = *r
            {
                let Some(i) = find(&mut jobs, task, job) else {
                    continue;
                };
                let j = &mut jobs[i];
                if j.start.is_none() {
                    j.start = Some(start);
                } else if let Some(Some((prev_job, prev_end))) = last_end.get(task) {
                    if *prev_job == job && *prev_end != start {
                        j.preemptions += 1;
                    }
                }
                if let Some(slot) = last_end.get_mut(task) {
                    *slot = Some((job, end));
                }
            }
        }
        for r in &self.records {
            if let TraceRecord::Complete { task, job, at } = *r {
                if let Some(i) = find(&mut jobs, task, job) {
                    jobs[i].finish = Some(at);
                }
            }
        }
        if self.dropped > 0 {
            jobs.retain(|j| j.finish.is_some());
        }
        jobs
    }
}

#[cfg(test)]
mod tests {
    use rtlab_model::{Task, TaskSet};

    use crate::{SchedulerSpec, SimConfig, Simulator, TraceWindow};

    /// Two tasks under RM: lo (C=5, T=10) is preempted by hi (C=2, T=5)
    /// at t=5 after 3 ms and resumes at 7, finishing at 9 (2 + 3 + 2 + 2).
    #[test]
    fn a_preempted_job_has_its_release_start_finish_and_one_preemption() {
        let ms = rtlab_model::Nanos::from_ms;
        let set = TaskSet::new(
            "t",
            vec![
                Task::new("hi", ms(5), ms(2)),
                Task::new("lo", ms(10), ms(5)),
            ],
        );
        let mut config = SimConfig::new(ms(10));
        config.trace = Some(TraceWindow {
            from: ms(0),
            to: ms(10),
        });
        let mut sim =
            Simulator::new(&set, &"fp:rm".parse::<SchedulerSpec>().unwrap(), config).unwrap();
        sim.run();
        let deadlines: Vec<_> = set.tasks.iter().map(|t| t.deadline).collect();
        let jobs = sim.trace().unwrap().jobs(&deadlines);
        assert_eq!(jobs.len(), 3, "{jobs:?}");
        let lo = jobs.iter().find(|j| j.task == 1).unwrap();
        assert_eq!((lo.release, lo.deadline), (ms(0), ms(10)));
        assert_eq!(lo.start, Some(ms(2)));
        assert_eq!(lo.finish, Some(ms(9)));
        assert_eq!(lo.preemptions, 1);
        let hi1 = jobs.iter().find(|j| j.task == 0 && j.job == 1).unwrap();
        assert_eq!(
            (hi1.start, hi1.finish, hi1.preemptions),
            (Some(ms(5)), Some(ms(7)), 0)
        );
    }
}
