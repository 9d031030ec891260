//! `getrusage`: a thread's context switches and the process's peak
//! resident memory.

/// (voluntary, involuntary) context switches of the calling thread so far
/// (`RUSAGE_THREAD`, Linux 2.6.26+); (0, 0) if the call fails.
pub fn thread_switches() -> (u64, u64) {
    match rusage(libc::RUSAGE_THREAD) {
        Some(u) => (u.ru_nvcsw as u64, u.ru_nivcsw as u64),
        None => (0, 0),
    }
}

/// The process's peak resident set size so far, in bytes (`ru_maxrss`,
/// which Linux gives in KiB).
pub fn peak_rss_bytes() -> Option<u64> {
    rusage(libc::RUSAGE_SELF).map(|u| (u.ru_maxrss as u64).saturating_mul(1024))
}

/// The process's CPU time so far, user plus system, every thread that ran
/// included (`RUSAGE_SELF`), in ns.
pub fn process_cpu_ns() -> Option<u64> {
    rusage(libc::RUSAGE_SELF).map(|u| {
        let us = |t: libc::timeval| (t.tv_sec as u64) * 1_000_000 + t.tv_usec as u64;
        (us(u.ru_utime) + us(u.ru_stime)) * 1000
    })
}

#[inline]
fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    rtlab_sys::resource::getrusage(who).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_rss_grows_with_touched_memory() {
        let before = peak_rss_bytes().unwrap();
        assert!(before > 0);
        let block = vec![1u8; 64 << 20];
        std::hint::black_box(&block);
        let after = peak_rss_bytes().unwrap();
        assert!(after >= before.max(64 << 20), "{before} -> {after}");
    }

    #[test]
    fn sleeping_is_a_voluntary_switch() {
        let (v0, _) = thread_switches();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (v1, _) = thread_switches();
        assert!(v1 > v0);
    }
}
