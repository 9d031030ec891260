//! Jobs: one release of a task, as the engine tracks it.

use rtlab_model::Nanos;

use crate::scheduler::Priority;

/// A job's slot in the engine's job table.
///
/// Slots are reused once a job has left the system, so an id names one job
/// from the moment it becomes known to the scheduler (its release) until the
/// scheduler's `on_complete` hook for it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub(crate) u32);

impl JobId {
    /// The id of slot `index` of an engine's job table.
    pub fn new(index: u32) -> JobId {
        JobId(index)
    }

    /// The slot number (dense, small: at most the number of live jobs).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a job is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    /// Released, but an earlier job of the same task has not finished yet
    /// (a task is one thread: its jobs run one after the other).
    Pending,
    /// Ready to run (it may be the running job).
    Ready,
    /// Waiting for a lock held by another job.
    Blocked,
    /// Completed or aborted; the slot is free.
    Done,
}

/// One job of a periodic task.
#[derive(Clone, Debug)]
pub struct Job {
    /// Index of its task in the simulated task list.
    pub task: usize,
    /// Which release of its task this is (0 for the first).
    pub index: u64,
    /// Release (arrival) time. With a tick the scheduler may notice it later;
    /// response times are measured from this instant.
    pub release: Nanos,
    /// Absolute deadline: release + relative deadline.
    pub deadline: Nanos,
    /// Execution time this job needs (WCET, a seeded draw, or scaled by an
    /// overload phase).
    pub demand: Nanos,
    /// Execution time received so far.
    pub executed: Nanos,
    /// When it was first dispatched (`None` until then).
    pub start: Option<Nanos>,
    /// Times another job was dispatched while this one was ready and running.
    pub preemptions: u64,
    /// Its state.
    pub state: JobState,
    /// Priority raised by a locking protocol (inheritance, ceiling or deadline
    /// floor); the effective priority is the larger of this and the base one.
    pub boost: Option<Priority>,
    /// Unique over the whole run (slots are reused, uids are not).
    pub(crate) uid: u64,
    /// Next lock operation of its task's critical sections.
    pub(crate) op_cursor: usize,
    /// Resources it holds, in locking order.
    pub(crate) held: Vec<usize>,
    /// Boosts saved at each lock (ceiling protocols restore them on unlock).
    pub(crate) boost_stack: Vec<Option<Priority>>,
    /// The resource it waits for while [`JobState::Blocked`].
    pub(crate) blocked_on: Option<usize>,
    /// Since when it waits for `blocked_on`.
    pub(crate) blocked_since: Option<Nanos>,
    /// Time spent [`JobState::Blocked`] in waits that ended (its lock wait).
    pub(crate) blocked: Nanos,
}

impl Job {
    /// A job of task `task` (its `index`-th), released at `release` with
    /// absolute `deadline`, needing `demand`; pending, nothing executed,
    /// no lock held. An engine marks it [`JobState::Ready`] when its task's
    /// earlier jobs are done.
    pub fn new(task: usize, index: u64, release: Nanos, deadline: Nanos, demand: Nanos) -> Job {
        Job {
            task,
            index,
            release,
            deadline,
            demand,
            executed: Nanos::ZERO,
            start: None,
            preemptions: 0,
            state: JobState::Pending,
            boost: None,
            uid: 0,
            op_cursor: 0,
            held: Vec::new(),
            boost_stack: Vec::new(),
            blocked_on: None,
            blocked_since: None,
            blocked: Nanos::ZERO,
        }
    }

    /// Makes this finished job's slot the new job `Job { uid,
    /// ..Job::new(task, index, release, deadline, demand) }` in place,
    /// keeping the (empty) lock lists' memory.
    #[inline]
    pub(crate) fn reuse(
        &mut self,
        task: usize,
        index: u64,
        release: Nanos,
        deadline: Nanos,
        demand: Nanos,
        uid: u64,
    ) {
        self.task = task;
        self.index = index;
        self.release = release;
        self.deadline = deadline;
        self.demand = demand;
        self.executed = Nanos::ZERO;
        self.start = None;
        self.preemptions = 0;
        self.state = JobState::Pending;
        self.boost = None;
        self.uid = uid;
        self.op_cursor = 0;
        self.held.clear();
        self.boost_stack.clear();
        self.blocked_on = None;
        self.blocked_since = None;
        self.blocked = Nanos::ZERO;
    }

    /// Its lock wait at `now`: the waits that ended plus the current one.
    pub fn lock_wait(&self, now: Nanos) -> Nanos {
        let current = self
            .blocked_since
            .map_or(Nanos::ZERO, |since| now.saturating_sub(since));
        self.blocked.saturating_add(current)
    }
}

impl Job {
    /// True once it has been dispatched at least once.
    pub fn started(&self) -> bool {
        self.start.is_some()
    }

    /// Execution time still needed.
    pub fn remaining(&self) -> Nanos {
        self.demand.saturating_sub(self.executed)
    }

    /// True while it holds at least one lock.
    pub fn holds_locks(&self) -> bool {
        !self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_slot_is_the_new_job() {
        let (ms, s) = (Nanos::from_ms, Nanos::from_secs);
        let mut slot = Job {
            uid: 3,
            ..Job::new(1, 4, ms(10), ms(20), ms(2))
        };
        slot.executed = ms(1);
        slot.start = Some(ms(11));
        slot.preemptions = 2;
        slot.state = JobState::Done;
        slot.boost = Some(Priority(9));
        slot.op_cursor = 2;
        slot.held.push(0);
        slot.boost_stack.push(None);
        slot.blocked_on = Some(1);
        slot.blocked_since = Some(ms(12));
        slot.blocked = ms(3);
        slot.reuse(2, 7, s(1), s(2), ms(5), 8);
        let fresh = Job {
            uid: 8,
            ..Job::new(2, 7, s(1), s(2), ms(5))
        };
        assert_eq!(format!("{slot:?}"), format!("{fresh:?}"));
    }
}
