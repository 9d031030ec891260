//! Calibrated busy work.
//!
//! Two kinds, for two questions:
//!
//! * [`burn_cpu`] consumes an exact amount of **CPU time** of the calling
//!   thread, measured on `CLOCK_THREAD_CPUTIME_ID`. Time spent preempted does
//!   not count, so a job that is preempted finishes later but has still
//!   executed exactly its WCET. This is what the executors and the lag study
//!   use.
//! * [`FixedWork`] performs a fixed **amount of computation** (a count of
//!   iterations of a Whetstone-style floating-point kernel), whose duration
//!   is measured once at start ([`FixedWork::calibrate`]). It is what
//!   Hartstone calls work: a kilo-whet is a fixed amount of computation, and
//!   its duration on this machine is an output of the calibration. Paper 002
//!   replaced it by a 1.25 ms busy wait; rtlab's catalog does the same by
//!   default (`builtin:hartstone-ph?kilo-whet=1.25ms`), and
//!   [`FixedWork::kilo_whet`] tells what to pass instead to match this
//!   machine.
//!
//! ## Calibration of the kilo-whet
//!
//! One pass of the classic Whetstone benchmark (Curnow and Wichmann, 1976)
//! with loop multiplier `I = 10` is defined as one million Whetstone
//! instructions. [`whetstone_pass`] runs modules 2, 3, 6, 7, 8, 9 and 11 of
//! that pass with their classic loop counts times `I` (modules 1, 4, 5 and 10
//! are integer/conditional jumps of negligible weight in the float mix and
//! are folded into module 6's integer arithmetic). The calibration runs a
//! pass with `I = 10` several times, takes the **median** CPU time of the
//! passes, and divides by 1000: that is the duration of one kilo-whet. The
//! median, not the mean, because a pass hit by an interrupt is an outlier.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

use rtlab_model::Nanos;

use rtlab_sys::clock::thread_cpu_time;

/// Consumes `amount` of CPU time of the calling thread (spinning, checking
/// `CLOCK_THREAD_CPUTIME_ID`); returns the CPU time actually consumed, which
/// is `amount` plus at most one clock read.
pub fn burn_cpu(amount: Nanos) -> Nanos {
    let start = thread_cpu_time();
    let mut used = Nanos::ZERO;
    let mut x = 1.0f64;
    while used < amount {
        // A little arithmetic between clock reads, so the loop is work, not
        // only system calls.
        for _ in 0..32 {
            x = black_box(x * 1.000_000_1 + 1e-9);
        }
        used = thread_cpu_time().saturating_sub(start);
    }
    black_box(x);
    used
}

/// [`burn_cpu`] that gives up when `stop` becomes true (checked between
/// clock reads, so within a microsecond): how the executor ends a run on
/// time even when a job overruns. Returns true when all of `amount` was
/// consumed.
pub fn burn_cpu_unless_stopped(amount: Nanos, stop: &AtomicBool) -> bool {
    burn_cpu_until_unless_stopped(thread_cpu_time(), amount, stop)
}

/// Burns until the calling thread's CPU time is `until` past `since` (a
/// reading of its `CLOCK_THREAD_CPUTIME_ID`), giving up when `stop`
/// becomes true: a job with critical sections burns to each lock step
/// measured from its start, so the time spent in the lock calls is part of
/// its execution time and the total stays its WCET. Returns true when the
/// point was reached (at once if it already was).
pub fn burn_cpu_until_unless_stopped(since: Nanos, until: Nanos, stop: &AtomicBool) -> bool {
    let mut x = 1.0f64;
    loop {
        if thread_cpu_time().saturating_sub(since) >= until {
            black_box(x);
            return true;
        }
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        for _ in 0..32 {
            x = black_box(x * 1.000_000_1 + 1e-9);
        }
    }
}

/// Runs one classic Whetstone pass with loop multiplier `i` (`i = 10` is one
/// million Whetstone instructions). Returns a checksum so the optimiser
/// keeps the work.
pub fn whetstone_pass(i: u32) -> f64 {
    let (t, t1, t2) = (0.499_975f64, 0.500_25f64, 2.0f64);
    let n2 = 12 * i;
    let n3 = 14 * i;
    let n6 = 210 * i;
    let n7 = 32 * i;
    let n8 = 899 * i;
    let n9 = 616 * i;
    let n11 = 93 * i;
    let mut e1 = [1.0f64, -1.0, -1.0, -1.0];
    // Module 2: array elements.
    for _ in 0..n2 {
        e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
        e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
        e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
        e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
        e1 = black_box(e1);
    }
    // Module 3: array as parameter.
    for _ in 0..n3 {
        pa(&mut e1, t, t2);
    }
    // Module 6: integer arithmetic.
    let (mut j, mut k, mut l) = (1i64, 2i64, 3i64);
    for _ in 0..n6 {
        j = j * (k - j) * (l - k);
        k = l * k - (l - j) * k;
        l = (l - k) * (k + j);
        e1[(l.rem_euclid(2)) as usize] = (j + k + l) as f64;
        e1[(k.rem_euclid(2)) as usize] = (j * k * l) as f64;
        (j, k, l) = black_box((j, k, l));
    }
    // Module 7: trigonometric functions.
    let (mut x, mut y) = (0.5f64, 0.5f64);
    for _ in 0..n7 {
        x = t * (t2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        y = t * (t2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        (x, y) = black_box((x, y));
    }
    // Module 8: procedure calls.
    let (mut z, mut xx, mut yy) = (1.0f64, 1.0f64, 1.0f64);
    for _ in 0..n8 {
        p3(&mut xx, &mut yy, &mut z, t, t2);
        (xx, yy) = black_box((xx, yy));
    }
    // Module 9: array references.
    let mut e = [1.0f64, 2.0, 3.0, 0.0];
    for _ in 0..n9 {
        e[0] = e[2];
        e[1] = e[0];
        e[2] = e[1];
        e = black_box(e);
    }
    // Module 11: standard functions.
    let mut w = 0.75f64;
    for _ in 0..n11 {
        w = (w.ln() / t1).exp().sqrt();
        w = black_box(w);
    }
    e1.iter().sum::<f64>() + x + y + z + e.iter().sum::<f64>() + w + (j + k + l) as f64
}

fn pa(e: &mut [f64; 4], t: f64, t2: f64) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
    *e = black_box(*e);
}

fn p3(x: &mut f64, y: &mut f64, z: &mut f64, t: f64, t2: f64) {
    let x1 = t * (*x + *y);
    let y1 = t * (x1 + *y);
    *z = (x1 + y1) / t2;
    *x = x1;
    *y = y1;
}

/// A fixed amount of computation, calibrated once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedWork {
    /// Median CPU time of one kilo-whet (1/1000 of a `I = 10` Whetstone pass).
    pub kilo_whet: Nanos,
    /// Passes timed for the calibration.
    pub passes: u32,
}

impl FixedWork {
    /// Times `passes` Whetstone passes of one million instructions each (at
    /// least 3) on the thread's CPU clock and keeps the median.
    pub fn calibrate(passes: u32) -> FixedWork {
        let passes = passes.max(3);
        let _ = black_box(whetstone_pass(1)); // warm caches and frequency
        let mut times: Vec<u64> = (0..passes)
            .map(|_| {
                let start = thread_cpu_time();
                black_box(whetstone_pass(10));
                (thread_cpu_time() - start).as_ns()
            })
            .collect();
        times.sort_unstable();
        FixedWork {
            kilo_whet: Nanos::from_ns((times[times.len() / 2] / 1000).max(1)),
            passes,
        }
    }

    /// Kilo-whets per second of CPU time (Hartstone's KWIPS capacity).
    pub fn kilo_whets_per_second(&self) -> f64 {
        1e9 / self.kilo_whet.as_ns() as f64
    }

    /// Performs `n` kilo-whets of computation: `n / 100` Whetstone passes of
    /// `I = 1` (100 kilo-whets each) and the remainder as CPU time at the
    /// calibrated rate. Returns the CPU time it took.
    pub fn do_kilo_whets(&self, n: u64) -> Nanos {
        let start = thread_cpu_time();
        for _ in 0..n / 100 {
            black_box(whetstone_pass(1));
        }
        let rest = self.kilo_whet.checked_mul(n % 100).unwrap_or(Nanos::MAX);
        burn_cpu(rest);
        thread_cpu_time() - start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burn_consumes_at_least_the_requested_cpu_time() {
        for amount in [Nanos::ZERO, Nanos::from_us(100), Nanos::from_ms(2)] {
            let used = burn_cpu(amount);
            assert!(used >= amount, "asked {amount}, used {used}");
        }
    }

    #[test]
    fn calibration_is_positive_and_scales() {
        let work = FixedWork::calibrate(3);
        assert!(work.kilo_whet > Nanos::ZERO);
        assert!(work.kilo_whets_per_second() > 0.0);
        let used = work.do_kilo_whets(150);
        assert!(used > Nanos::ZERO);
    }

    #[test]
    fn whetstone_is_deterministic() {
        assert_eq!(whetstone_pass(1).to_bits(), whetstone_pass(1).to_bits());
    }
}
