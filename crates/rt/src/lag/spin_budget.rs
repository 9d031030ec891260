//! How much busy-waiting a real-time thread can afford without running into
//! RT throttling.
//!
//! Linux lets SCHED_FIFO/RR threads run at most `sched_rt_runtime_us` in
//! every `sched_rt_period_us` per CPU (950 ms per 1 s by default) and then
//! stops them until the period ends: lags of tens of ms (paper 000 section
//! 4.1 saw 50 ms at 1 ms / 95 %). A lag controller that busy-waits adds to
//! the thread's run time, so it must never spend the headroom the thread's
//! own work leaves.
//!
//! [`RtSpinBudget`] is a token bucket over the thread's **busy time** (all
//! the time it did not sleep: its work and its spinning):
//!
//! ```text
//! rate     r = limit - MARGIN          limit = runtime_us / period_us
//! capacity C = MARGIN x period         (period = sched_rt_period_us)
//! at each wait_until call, with dt the time since the previous call and
//! slept the time the thread slept in between:
//!   tokens = clamp(tokens + r x dt - (dt - slept), -C, C)
//! the next busy-wait may last at most max(tokens, 0)
//! ```
//!
//! Spinning only on tokens means that, up to each spin, the thread's busy
//! time over any interval T is at most `r T + C`; over one throttling
//! period that is `(limit - MARGIN) P + MARGIN P = limit P`, the kernel's
//! runtime. Work the thread does anyway is counted too, so a thread whose
//! work alone is near the limit (1 ms at 95 %) gets no spin at all and
//! waits like a plain sleep; time it was throttled or preempted counts as
//! busy, so after a stall it stops spinning until the headroom is back.
//! `MARGIN` (2 % of the CPU, 20 ms per second) covers what the accounting
//! does not see: the sleep's system calls and wake-up path (about 10-20 us
//! per period at 1 ms on the reference VM) and interrupts. The bucket sees
//! one thread: other RT threads on the same CPU (several tasks of
//! `rtlab run`) share the kernel's limit but not this bucket.
//!
//! Paper 000 has no such guard: its busy-wait is bounded only by the
//! control value (up to the smallest period), which is how a wound-up
//! controller spun the thread into throttling (issue 10 section 4).

use rtlab_model::Nanos;

use crate::policy::RtThrottling;

/// Share of the CPU kept free below the RT-throttling limit (2 %), as
/// parts of [`MARGIN_DEN`].
const MARGIN_NUM: u64 = 1;
const MARGIN_DEN: u64 = 50;

/// The token bucket of the module docs, in integer nanoseconds.
#[derive(Debug, Clone)]
pub struct RtSpinBudget {
    /// `r = rate_num / rate_den`.
    rate_num: u64,
    rate_den: u64,
    capacity: i64,
    tokens: i64,
    last_call: Option<Nanos>,
}

impl RtSpinBudget {
    /// The budget under `throttling`; `None` when RT throttling is off
    /// (`sched_rt_runtime_us = -1`) or its settings are unusable.
    pub fn new(throttling: RtThrottling) -> Option<RtSpinBudget> {
        let runtime = u64::try_from(throttling.runtime_us).ok()?;
        let period = throttling.period_us;
        if period == 0 {
            return None;
        }
        // r = runtime / period - 1/50 = (50 runtime - period) / (50 period).
        let rate_num = (runtime.min(period) * MARGIN_DEN).saturating_sub(period * MARGIN_NUM);
        let capacity_us = period * MARGIN_NUM / MARGIN_DEN;
        Some(RtSpinBudget {
            rate_num,
            rate_den: period * MARGIN_DEN,
            capacity: i64::try_from(capacity_us.saturating_mul(1000)).unwrap_or(i64::MAX),
            tokens: 0,
            last_call: None,
        })
    }

    /// Accounts the time since the previous call at `now`, of which the
    /// thread slept `slept`. The first call only starts the clock (the
    /// bucket starts empty: no spin before the thread's load is known).
    pub fn on_call(&mut self, now: Nanos, slept: Nanos) {
        if let Some(last) = self.last_call {
            let dt = now.saturating_sub(last).as_ns();
            let busy = dt.saturating_sub(slept.as_ns());
            let earned = u128::from(dt) * u128::from(self.rate_num) / u128::from(self.rate_den);
            let earned = i64::try_from(earned).unwrap_or(i64::MAX);
            let busy = i64::try_from(busy).unwrap_or(i64::MAX);
            self.tokens = self
                .tokens
                .saturating_add(earned)
                .saturating_sub(busy)
                .clamp(-self.capacity, self.capacity);
        }
        self.last_call = Some(now);
    }

    /// The longest busy-wait allowed now: `max(tokens, 0)`.
    pub fn allowance(&self) -> Nanos {
        Nanos::from_ns(self.tokens.max(0) as u64)
    }

    /// The bucket's capacity `C`.
    pub fn capacity(&self) -> Nanos {
        Nanos::from_ns(self.capacity as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINUX_DEFAULT: RtThrottling = RtThrottling {
        runtime_us: 950_000,
        period_us: 1_000_000,
    };

    fn us(n: u64) -> Nanos {
        Nanos::from_us(n)
    }

    #[test]
    fn tokens_follow_rate_minus_busy_time_within_the_capacity() {
        // r = 0.95 - 0.02 = 0.93, C = 20 ms.
        let mut b = RtSpinBudget::new(LINUX_DEFAULT).unwrap();
        assert_eq!(b.capacity(), Nanos::from_ms(20));
        b.on_call(us(0), Nanos::ZERO);
        assert_eq!(b.allowance(), Nanos::ZERO, "starts empty");
        // 1 ms, 500 us asleep: +930 - 500 = 430 us.
        b.on_call(us(1000), us(500));
        assert_eq!(b.allowance(), us(430));
        // 1 ms, 50 us asleep (950 us busy): 430 + 930 - 950 = 410 us.
        b.on_call(us(2000), us(50));
        assert_eq!(b.allowance(), us(410));
        // 1 ms without sleeping: 410 + 930 - 1000 = 340 us.
        b.on_call(us(3000), Nanos::ZERO);
        assert_eq!(b.allowance(), us(340));
        // A 400 ms stall (throttled, busy as far as we know): 340 + 372 000
        // - 400 000 < -C: clamped to -20 ms, no spin.
        b.on_call(us(403_000), Nanos::ZERO);
        assert_eq!(b.allowance(), Nanos::ZERO);
        // Back to 1 ms periods at 50 %: +430 us each; 20 ms of debt takes
        // 47 periods (47 x 430 = 20 210 us).
        for k in 1..=46 {
            b.on_call(us(403_000 + 1000 * k), us(500));
            assert_eq!(b.allowance(), Nanos::ZERO, "period {k}");
        }
        b.on_call(us(403_000 + 47_000), us(500));
        assert_eq!(b.allowance(), us(210));
        // A long sleep fills the bucket up to C only.
        b.on_call(us(10_000_000), us(9_000_000));
        assert_eq!(b.allowance(), Nanos::from_ms(20));
    }

    #[test]
    fn work_at_the_limit_leaves_nothing_to_spin() {
        // 1 ms at 95 % work: 930 - 950 < 0 every period.
        let mut b = RtSpinBudget::new(LINUX_DEFAULT).unwrap();
        for k in 0..2000u64 {
            b.on_call(us(1000 * k), us(50));
            assert_eq!(b.allowance(), Nanos::ZERO);
        }
    }

    #[test]
    fn no_budget_without_throttling() {
        let off = RtThrottling {
            runtime_us: -1,
            period_us: 1_000_000,
        };
        assert!(RtSpinBudget::new(off).is_none());
        let bad = RtThrottling {
            runtime_us: 950_000,
            period_us: 0,
        };
        assert!(RtSpinBudget::new(bad).is_none());
    }
}
