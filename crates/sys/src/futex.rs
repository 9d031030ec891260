//! `futex(FUTEX_WAIT_PRIVATE / FUTEX_WAIT_BITSET_PRIVATE /
//! FUTEX_WAKE_PRIVATE)`: the blocking hand-over of the context-switch
//! ping-pong (`rtlab characterize`) and of the real-time dispatcher (its
//! doorbell, the task threads' grants).

use std::io;
use std::sync::atomic::AtomicU32;

use rtlab_model::Nanos;

use crate::timespec::to_timespec;

/// Blocks while `word` holds `expected`, at most `timeout`
/// (`FUTEX_WAIT_PRIVATE`, relative timeout). Returns at once with
/// [`io::ErrorKind::WouldBlock`] (EAGAIN) when `word` holds another value,
/// with [`io::ErrorKind::TimedOut`] after `timeout`, and with
/// [`io::ErrorKind::Interrupted`] on a signal; the caller re-checks `word`.
#[inline]
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Nanos) -> io::Result<()> {
    let ts = to_timespec(timeout);
    // SAFETY: `word` is a live, aligned 32-bit atomic for the whole call
    // (borrowed); `ts` is a valid timespec that outlives it; the unused
    // arguments (uaddr2, val3) are ignored by FUTEX_WAIT.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Wakes at most `count` threads blocked in [`futex_wait`] on `word`
/// (`FUTEX_WAKE_PRIVATE`) and returns how many it woke.
#[inline]
pub fn futex_wake(word: &AtomicU32, count: i32) -> io::Result<usize> {
    // SAFETY: `word` is a live, aligned 32-bit atomic (borrowed); FUTEX_WAKE
    // reads no other argument than the count.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            count,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}

/// Blocks while `word` holds `expected`, at most until `CLOCK_MONOTONIC`
/// reads `deadline` (`FUTEX_WAIT_BITSET_PRIVATE` with every bit: the
/// timeout is **absolute** on the monotonic clock, so a loop that retries
/// after a signal does not drift). Woken by [`futex_wake`]. Returns at once
/// with [`io::ErrorKind::WouldBlock`] (EAGAIN) when `word` holds another
/// value, with [`io::ErrorKind::TimedOut`] at the deadline (also a deadline
/// already past), and with [`io::ErrorKind::Interrupted`] on a signal; the
/// caller re-checks `word` and the clock. What the real-time dispatcher
/// (`rtlab_rt::dispatcher`) sleeps on: its next timer event, or a task
/// thread's doorbell, whichever comes first.
#[inline]
pub fn futex_wait_until(word: &AtomicU32, expected: u32, deadline: Nanos) -> io::Result<()> {
    let ts = to_timespec(deadline);
    // SAFETY: `word` is a live, aligned 32-bit atomic for the whole call
    // (borrowed); `ts` is a valid timespec that outlives it; uaddr2 is
    // ignored by FUTEX_WAIT_BITSET, val3 is the bitset (all bits: any wake).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::monotonic_now;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    #[test]
    fn an_absolute_wait_ends_at_its_deadline_or_at_once_on_another_value() {
        let word = AtomicU32::new(7);
        let deadline = monotonic_now() + Nanos::from_ms(2);
        let err = futex_wait_until(&word, 7, deadline).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(monotonic_now() >= deadline);
        let err = futex_wait_until(&word, 8, monotonic_now() + Nanos::from_secs(5)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        // A deadline in the past: at once.
        let err = futex_wait_until(&word, 7, Nanos::from_ns(1)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn a_wake_ends_an_absolute_wait_early() {
        let word = Arc::new(AtomicU32::new(0));
        let waker = {
            let word = Arc::clone(&word);
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                word.store(1, Ordering::SeqCst);
                futex_wake(&word, 1).unwrap();
            })
        };
        let give_up = monotonic_now() + Nanos::from_secs(10);
        while word.load(Ordering::SeqCst) == 0 && monotonic_now() < give_up {
            let _ = futex_wait_until(&word, 0, give_up);
        }
        waker.join().unwrap();
        assert!(monotonic_now() < give_up, "the wake did not end the wait");
    }
}
