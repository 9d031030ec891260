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
//!
//! [`SpinShareBudget`] is the second bucket: it holds the thread's
//! **average** busy-wait to a share `s` of wall time (5 % by default),
//! whatever the platform's latency spread, so a controller that covers a
//! high quantile of wide latencies cannot turn into a spinner:
//!
//! ```text
//! rate s, capacity C_s = 10 x the per-wait cap
//! at each call: tokens = min(tokens + s x dt, C_s); after a wait that
//! spun b: tokens = max(tokens - b, -C_s); a spin may last max(tokens, 0)
//! ```
//!
//! so the time spun up to any moment is at most `s T + C_s` (plus the last
//! clock read of each spin).

use rtlab_model::Nanos;

use rtlab_host::policy::RtThrottling;

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

    /// Forgets when the last call was, keeping the tokens: the thread was
    /// deliberately away (not running, not waiting on this bucket), so the
    /// time until its next call is neither busy nor earned.
    pub fn resume(&mut self) {
        self.last_call = None;
    }

    /// The bucket's capacity `C`.
    pub fn capacity(&self) -> Nanos {
        Nanos::from_ns(self.capacity as u64)
    }
}

/// The average busy-wait bucket of the module docs, in integer
/// nanoseconds.
#[derive(Debug, Clone)]
pub struct SpinShareBudget {
    /// `s` in parts per million.
    share_ppm: u64,
    capacity: i64,
    tokens: i64,
    last_call: Option<Nanos>,
}

impl SpinShareBudget {
    /// Waits per-wait cap's worth of tokens the bucket holds at most.
    pub const CAPACITY_IN_WAITS: u64 = 10;

    /// A bucket earning `share` (0..=1) of wall time, holding at most
    /// [`Self::CAPACITY_IN_WAITS`] x `per_wait_cap`. It starts empty.
    pub fn new(share: f64, per_wait_cap: Nanos) -> SpinShareBudget {
        let capacity = per_wait_cap.as_ns().saturating_mul(Self::CAPACITY_IN_WAITS);
        SpinShareBudget {
            share_ppm: (share.clamp(0.0, 1.0) * 1e6).round() as u64,
            capacity: i64::try_from(capacity).unwrap_or(i64::MAX),
            tokens: 0,
            last_call: None,
        }
    }

    /// Earns `s x` the time since the previous call (the first call only
    /// starts the clock).
    pub fn on_call(&mut self, now: Nanos) {
        if let Some(last) = self.last_call {
            let dt = u128::from(now.saturating_sub(last).as_ns());
            let earned = dt * u128::from(self.share_ppm) / 1_000_000;
            self.tokens = self
                .tokens
                .saturating_add(i64::try_from(earned).unwrap_or(i64::MAX))
                .min(self.capacity);
        }
        self.last_call = Some(now);
    }

    /// Forgets when the last call was, keeping the tokens (see
    /// [`RtSpinBudget::resume`]).
    pub fn resume(&mut self) {
        self.last_call = None;
    }

    /// Pays for a busy-wait of `spun`.
    pub fn spend(&mut self, spun: Nanos) {
        let spun = i64::try_from(spun.as_ns()).unwrap_or(i64::MAX);
        self.tokens = self.tokens.saturating_sub(spun).max(-self.capacity);
    }

    /// The longest busy-wait allowed now: `max(tokens, 0)`.
    pub fn allowance(&self) -> Nanos {
        Nanos::from_ns(self.tokens.max(0) as u64)
    }

    /// The bucket's capacity `C_s`.
    pub fn capacity(&self) -> Nanos {
        Nanos::from_ns(self.capacity as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_bucket_earns_its_rate_and_pays_for_spins() {
        // 5 % of wall time, per-wait cap 100 us: capacity 1 ms.
        let mut b = SpinShareBudget::new(0.05, us(100));
        assert_eq!(b.capacity(), Nanos::from_ms(1));
        b.on_call(us(0));
        assert_eq!(b.allowance(), Nanos::ZERO, "starts empty");
        // 1 ms: +50 us.
        b.on_call(us(1000));
        assert_eq!(b.allowance(), us(50));
        b.spend(us(30));
        assert_eq!(b.allowance(), us(20));
        // A 100 ms sleep fills it to the capacity only.
        b.on_call(us(101_000));
        assert_eq!(b.allowance(), Nanos::from_ms(1));
        // Spending more than held (a clock read past the allowance) goes
        // into debt, paid back by later earnings.
        b.spend(Nanos::from_ms(1) + us(10));
        assert_eq!(b.allowance(), Nanos::ZERO);
        b.on_call(us(101_200));
        assert_eq!(b.allowance(), Nanos::ZERO, "10 us of debt, 10 us earned");
        b.on_call(us(101_400));
        assert_eq!(b.allowance(), us(10));
    }

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
