//! Clocks and sleeping, behind traits so that the logic built on them (the
//! lag controller, the probes) can be tested with a [`ScriptedClock`].
//!
//! The real implementation is [`MonotonicClock`]: `CLOCK_MONOTONIC` read with
//! `clock_gettime` and slept on with `clock_nanosleep(TIMER_ABSTIME)`, the way
//! cyclictest does it. Absolute sleeps do not drift: a late wake-up does not
//! push the next one later.

use std::cell::{Cell, RefCell};

use rtlab_model::Nanos;

use crate::time::{clock_gettime, clock_nanosleep_until, ClockId};

/// A monotonic time source, in nanoseconds since an arbitrary origin.
pub trait Clock {
    /// The current time.
    fn now(&self) -> Nanos;
}

/// A clock that can also block until an absolute time.
pub trait Sleeper: Clock {
    /// Blocks until the clock reads at least `t` (may return later, never
    /// earlier; returns at once when `t` has passed). Interruptions by
    /// signals are retried, except that [`MonotonicClock`] returns early
    /// after a stop signal (see [`wait_until`]).
    fn sleep_until(&mut self, t: Nanos);
}

/// `CLOCK_MONOTONIC`, slept on with `clock_nanosleep(TIMER_ABSTIME)`.
#[derive(Debug, Default, Clone, Copy)]
pub struct MonotonicClock;

impl Clock for MonotonicClock {
    fn now(&self) -> Nanos {
        read_clock(libc::CLOCK_MONOTONIC)
    }
}

impl Sleeper for MonotonicClock {
    fn sleep_until(&mut self, t: Nanos) {
        wait_until(t);
    }
}

/// Sleeps until `CLOCK_MONOTONIC` reads `t`, retrying when a signal
/// interrupts the sleep (the target is absolute, so a retry loses nothing),
/// except after a stop signal: the stop handler wakes every sleeper
/// (`rtlab_host::interrupt`), and the sleep then returns early so that the
/// caller sees its stop flag at once. Callers check their flag after the
/// sleep and record nothing for an early wake-up.
pub fn wait_until(t: Nanos) {
    while let Err(e) = clock_nanosleep_until(libc::CLOCK_MONOTONIC, t) {
        if e.kind() != std::io::ErrorKind::Interrupted || crate::stop_flag::interrupted() {
            return;
        }
    }
}

/// `CLOCK_MONOTONIC` now.
pub fn monotonic_now() -> Nanos {
    read_clock(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`): time
/// spent preempted or asleep does not count.
pub fn thread_cpu_time() -> Nanos {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The clock ids used here exist on every Linux since 2.6, so the call
/// cannot fail; if it did, the time would read 0.
#[inline]
fn read_clock(id: ClockId) -> Nanos {
    clock_gettime(id).unwrap_or(Nanos::ZERO)
}

/// A clock for tests: time moves only when the code under test sleeps or
/// reads it.
///
/// * `sleep_until(t)` jumps to `t + lag`, where `lag` is the next value of
///   the script (the last value repeats; an empty script means 0), or stays
///   put when `t` has passed; so a sleep never returns early, as the kernel
///   guarantees.
/// * every `now()` advances the clock by `read_cost` after reading it, which
///   is how a busy-wait loop makes progress.
#[derive(Debug)]
pub struct ScriptedClock {
    now: Cell<u64>,
    read_cost: u64,
    lags: Vec<Nanos>,
    next_lag: usize,
    sleeps: RefCell<Vec<Nanos>>,
}

impl ScriptedClock {
    /// A clock at `start` whose reads each cost `read_cost`, whose sleeps
    /// overshoot by the successive values of `lags`.
    pub fn new(start: Nanos, read_cost: Nanos, lags: Vec<Nanos>) -> ScriptedClock {
        ScriptedClock {
            now: Cell::new(start.as_ns()),
            read_cost: read_cost.as_ns(),
            lags,
            next_lag: 0,
            sleeps: RefCell::new(Vec::new()),
        }
    }

    /// The targets passed to `sleep_until`, in order.
    pub fn sleeps(&self) -> Vec<Nanos> {
        self.sleeps.borrow().clone()
    }

    /// Moves the clock forward by `d` (work done between waits).
    pub fn advance(&self, d: Nanos) {
        self.now.set(self.now.get() + d.as_ns());
    }

    /// The time without advancing it.
    pub fn peek(&self) -> Nanos {
        Nanos::from_ns(self.now.get())
    }
}

impl Clock for ScriptedClock {
    fn now(&self) -> Nanos {
        let t = self.now.get();
        self.now.set(t + self.read_cost);
        Nanos::from_ns(t)
    }
}

impl Sleeper for ScriptedClock {
    fn sleep_until(&mut self, t: Nanos) {
        self.sleeps.borrow_mut().push(t);
        let lag = match self.lags.get(self.next_lag) {
            Some(l) => {
                self.next_lag += 1;
                *l
            }
            None => self.lags.last().copied().unwrap_or(Nanos::ZERO),
        };
        if t.as_ns() > self.now.get() {
            self.now.set(t.as_ns() + lag.as_ns());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_moves_forward_and_sleeps_at_least_until_the_target() {
        let mut clock = MonotonicClock;
        let a = clock.now();
        let target = a + Nanos::from_us(200);
        clock.sleep_until(target);
        let b = clock.now();
        assert!(b >= target, "woke at {b}, before {target}");
        // A target in the past returns at once.
        clock.sleep_until(a);
        assert!(clock.now() >= b);
    }

    #[test]
    fn thread_cpu_time_does_not_count_sleep() {
        let cpu0 = thread_cpu_time();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let slept = thread_cpu_time() - cpu0;
        assert!(slept < Nanos::from_ms(10), "sleeping used {slept} of CPU");
    }

    #[test]
    fn scripted_clock_follows_its_script() {
        let mut c = ScriptedClock::new(
            Nanos::from_us(100),
            Nanos::from_ns(10),
            vec![Nanos::from_us(5), Nanos::from_us(7)],
        );
        assert_eq!(c.now(), Nanos::from_us(100));
        assert_eq!(c.peek(), Nanos::from_ns(100_010));
        c.sleep_until(Nanos::from_us(200));
        assert_eq!(c.peek(), Nanos::from_us(205));
        c.sleep_until(Nanos::from_us(300));
        assert_eq!(c.peek(), Nanos::from_us(307));
        c.sleep_until(Nanos::from_us(400)); // last lag repeats
        assert_eq!(c.peek(), Nanos::from_us(407));
        c.sleep_until(Nanos::from_us(1)); // in the past: no jump
        assert_eq!(c.peek(), Nanos::from_us(407));
        assert_eq!(c.sleeps().len(), 4);
    }
}
