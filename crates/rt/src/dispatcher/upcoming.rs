//! Each task's next release, as both dispatcher engines (one CPU,
//! [`super::engine`]; m CPUs, [`super::global`]) keep them: at most one
//! per task (the next is scheduled when one is handled), handled in the
//! simulator's event-queue order (`rtlab_sim::queue`): by the instant it
//! is noticed (the release, or with a tick the next multiple of it), then
//! in the order the releases were scheduled.

use rtlab_model::phase::PhasePlan;
use rtlab_model::Nanos;

/// The tasks' next releases, with the order they were scheduled in.
#[derive(Debug, Clone)]
pub(super) struct Upcoming {
    /// Per task: the release time and its scheduling sequence number.
    next: Vec<Option<(Nanos, u64)>>,
    seq: u64,
}

impl Upcoming {
    /// No release scheduled, for tasks `0..n`.
    pub(super) fn new(n: usize) -> Upcoming {
        Upcoming {
            next: vec![None; n],
            seq: 0,
        }
    }

    /// Schedules task `i`'s release at `at` (period `period`), moved past
    /// suspensions by `plan`; none at or after `duration`.
    pub(super) fn schedule(
        &mut self,
        plan: &PhasePlan,
        i: usize,
        period: Nanos,
        at: Nanos,
        duration: Nanos,
    ) {
        self.next[i] = plan.release(i, period, at, duration).map(|r| {
            self.seq += 1;
            (r, self.seq)
        });
    }

    /// The first release noticed by `now` (`notice`: when a release at a
    /// time is noticed), taken out: its task and release time.
    pub(super) fn take_due(
        &mut self,
        now: Nanos,
        notice: impl Fn(Nanos) -> Nanos,
    ) -> Option<(usize, Nanos)> {
        let (_, _, i) = self
            .next
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.map(|(r, seq)| (notice(r), seq, i)))
            .filter(|&(noticed, _, _)| noticed <= now)
            .min()?;
        let (at, _) = self.next[i].take()?;
        Some((i, at))
    }

    /// When the first release is noticed, if any is scheduled.
    pub(super) fn first_notice(&self, notice: impl Fn(Nanos) -> Nanos) -> Option<Nanos> {
        self.next.iter().flatten().map(|&(r, _)| notice(r)).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_come_by_notice_time_then_scheduling_order() {
        let ms = Nanos::from_ms;
        let plan = PhasePlan::none(3);
        let mut u = Upcoming::new(3);
        let end = ms(100);
        u.schedule(&plan, 2, ms(10), ms(3), end);
        u.schedule(&plan, 0, ms(10), ms(2), end);
        u.schedule(&plan, 1, ms(10), ms(4), end);
        u.schedule(&plan, 1, ms(10), ms(100), end);
        let tick = |t: Nanos| ms(4).checked_mul(t.div_ceil(ms(4))).unwrap();
        assert_eq!(u.first_notice(|t| t), Some(ms(2)));
        assert_eq!(u.first_notice(tick), Some(ms(4)));
        assert_eq!(u.take_due(ms(3), tick), None);
        // Both noticed at the 4 ms tick: task 2's was scheduled first.
        assert_eq!(u.take_due(ms(4), tick), Some((2, ms(3))));
        assert_eq!(u.take_due(ms(4), tick), Some((0, ms(2))));
        assert_eq!(u.take_due(ms(4), tick), None);
        assert_eq!(
            u.first_notice(|t| t),
            None,
            "task 1's release at the end is not made"
        );
    }
}
