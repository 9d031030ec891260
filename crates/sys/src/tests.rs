//! The wrappers report the kernel's errors instead of ignoring them.

use std::io;

use super::fd::isatty;
use super::resource::getrlimit;
use super::sched::{sched_getaffinity, sched_getcpu, CpuSet};
use super::signal::SigSet;
use super::time::{clock_gettime, clock_nanosleep_until};

#[test]
fn an_unknown_clock_is_an_error_not_time_zero() {
    let err = clock_gettime(-1_000).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    let err = clock_nanosleep_until(-1_000, rtlab_model::Nanos::ZERO).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn a_monotonic_sleep_to_a_past_time_returns_at_once() {
    let now = clock_gettime(libc::CLOCK_MONOTONIC).unwrap();
    clock_nanosleep_until(libc::CLOCK_MONOTONIC, now).unwrap();
    assert!(clock_gettime(libc::CLOCK_MONOTONIC).unwrap() >= now);
}

#[test]
fn a_cpu_set_holds_what_was_inserted_and_ignores_cpus_past_its_capacity() {
    let mut set = CpuSet::empty();
    set.insert(0);
    set.insert(5);
    set.insert(CpuSet::CAPACITY);
    assert_eq!(set.cpus().collect::<Vec<_>>(), vec![0, 5]);
    assert!(!set.contains(CpuSet::CAPACITY));
}

#[test]
fn the_current_cpu_is_in_the_affinity() {
    let allowed = sched_getaffinity().unwrap();
    assert!(allowed.contains(sched_getcpu().unwrap() as usize));
}

#[test]
fn a_bad_signal_number_is_einval() {
    let err = SigSet::of(&[libc::SIGINT, 100_000]).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn a_regular_file_is_not_a_terminal() {
    use std::os::fd::AsRawFd;
    let file = tempfile::tempfile().unwrap();
    let err = isatty(file.as_raw_fd()).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOTTY));
}

#[test]
fn an_unknown_resource_is_an_error() {
    let err: io::Error = getrlimit(10_000).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn a_futex_wait_on_a_changed_word_returns_at_once_and_a_wait_times_out() {
    use super::futex::{futex_wait, futex_wake};
    use std::sync::atomic::AtomicU32;
    let word = AtomicU32::new(0);
    let err = futex_wait(&word, 1, rtlab_model::Nanos::from_secs(5)).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EAGAIN));
    let started = std::time::Instant::now();
    let err = futex_wait(&word, 0, rtlab_model::Nanos::from_ms(20)).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ETIMEDOUT));
    assert!(started.elapsed() >= std::time::Duration::from_millis(20));
    assert_eq!(futex_wake(&word, 1).unwrap(), 0);
}

#[test]
fn the_coarse_clock_resolution_is_a_tick() {
    use super::time::clock_getres;
    let res = clock_getres(libc::CLOCK_MONOTONIC_COARSE).unwrap();
    // CONFIG_HZ is 100..=1000 on every kernel rtlab runs on.
    assert!((1_000_000..=10_000_000).contains(&res.as_ns()), "{res}");
    assert_eq!(
        clock_getres(-1_000).unwrap_err().raw_os_error(),
        Some(libc::EINVAL)
    );
}

#[test]
fn mutexes_of_every_protocol_initialise_and_plain_and_inheriting_ones_lock() {
    use super::mutex::{MutexProtocol, PthreadMutex};
    for protocol in [MutexProtocol::None, MutexProtocol::Inherit] {
        let m = PthreadMutex::new(protocol).unwrap();
        m.lock().unwrap();
        m.unlock().unwrap();
    }
    PthreadMutex::new(MutexProtocol::Protect { ceiling: 50 }).unwrap();
    // glibc checks the ceiling against SCHED_FIFO's range.
    let err = PthreadMutex::new(MutexProtocol::Protect { ceiling: 200 })
        .err()
        .unwrap();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    // An inheriting mutex knows its owner: unlocking it unheld is refused.
    let m = PthreadMutex::new(MutexProtocol::Inherit).unwrap();
    assert_eq!(m.unlock().unwrap_err().raw_os_error(), Some(libc::EPERM));
}
