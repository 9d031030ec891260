//! POSIX mutexes with a locking protocol: `pthread_mutexattr_setprotocol`
//! (`PTHREAD_PRIO_NONE`, `PTHREAD_PRIO_INHERIT`, `PTHREAD_PRIO_PROTECT`),
//! `pthread_mutexattr_setprioceiling`, `pthread_mutex_init`, `_lock`,
//! `_unlock` and `_destroy`: the critical sections of `rtlab run`.
//!
//! On Linux (glibc), `PTHREAD_PRIO_INHERIT` is a PI futex: the kernel's
//! rt-mutex boosts the owner to the priority (or, for SCHED_DEADLINE, the
//! deadline) of its most urgent waiter. `PTHREAD_PRIO_PROTECT` is done by
//! glibc in user space: the locker's priority is raised to the ceiling with
//! `sched_setscheduler` at lock and restored at unlock.

use std::cell::UnsafeCell;
use std::io;

extern "C" {
    // glibc exports it (since 2.4); the libc crate declares it only for AIX.
    fn pthread_mutexattr_setprioceiling(
        attr: *mut libc::pthread_mutexattr_t,
        prioceiling: libc::c_int,
    ) -> libc::c_int;
}

/// The protocol of a [`PthreadMutex`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MutexProtocol {
    /// `PTHREAD_PRIO_NONE`: a plain mutex.
    None,
    /// `PTHREAD_PRIO_INHERIT`: priority (and deadline) inheritance.
    Inherit,
    /// `PTHREAD_PRIO_PROTECT` with this SCHED_FIFO/RR ceiling (1..=99).
    Protect {
        /// The priority a locker runs at while it holds the mutex.
        ceiling: u8,
    },
}

/// An initialised pthread mutex. It lives in a `Box` from its creation to
/// its destruction and is never moved (POSIX forbids moving an initialised
/// mutex); share it by reference.
pub struct PthreadMutex {
    raw: UnsafeCell<libc::pthread_mutex_t>,
}

// SAFETY: a pthread mutex is made to be locked and unlocked from any
// thread; every access to `raw` goes through the pthread functions, which
// synchronise internally.
unsafe impl Sync for PthreadMutex {}
// SAFETY: as above; glibc's mutexes carry no thread-local state (the owner
// is recorded by tid inside the mutex).
unsafe impl Send for PthreadMutex {}

/// `Ok(())` when a pthread call returned 0, else its error number.
fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

impl PthreadMutex {
    /// A mutex with `protocol`, initialised in place in its box.
    pub fn new(protocol: MutexProtocol) -> io::Result<Box<PthreadMutex>> {
        let mutex = Box::new(PthreadMutex {
            raw: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
        });
        // SAFETY: an all-zero pthread_mutexattr_t is a valid place for
        // pthread_mutexattr_init to write into.
        let mut attr: libc::pthread_mutexattr_t = unsafe { std::mem::zeroed() };
        // SAFETY: `attr` is writable and outlives the call.
        check(unsafe { libc::pthread_mutexattr_init(&mut attr) })?;
        let configured = Self::configure(&mut attr, protocol).and_then(|()| {
            // SAFETY: `mutex.raw` is boxed (it will not move) and not yet in
            // use; `attr` was initialised above.
            check(unsafe { libc::pthread_mutex_init(mutex.raw.get(), &attr) })
        });
        // SAFETY: `attr` was initialised and is not used after this.
        unsafe { libc::pthread_mutexattr_destroy(&mut attr) };
        configured.map(|()| mutex)
    }

    fn configure(attr: &mut libc::pthread_mutexattr_t, protocol: MutexProtocol) -> io::Result<()> {
        let kind = match protocol {
            MutexProtocol::None => libc::PTHREAD_PRIO_NONE,
            MutexProtocol::Inherit => libc::PTHREAD_PRIO_INHERIT,
            MutexProtocol::Protect { .. } => libc::PTHREAD_PRIO_PROTECT,
        };
        // SAFETY: `attr` is an initialised attribute object (borrowed).
        check(unsafe { libc::pthread_mutexattr_setprotocol(attr, kind) })?;
        if let MutexProtocol::Protect { ceiling } = protocol {
            // SAFETY: as above; the ceiling is a plain integer glibc checks
            // against SCHED_FIFO's range.
            check(unsafe { pthread_mutexattr_setprioceiling(attr, libc::c_int::from(ceiling)) })?;
        }
        Ok(())
    }

    /// `pthread_mutex_lock`: blocks until the calling thread holds it.
    /// Errors: `EINVAL` for a `Protect` mutex whose ceiling is below the
    /// caller's priority, `EDEADLK` with a PI mutex the caller holds.
    #[inline]
    pub fn lock(&self) -> io::Result<()> {
        // SAFETY: `raw` was initialised in `new` and lives as long as `self`.
        check(unsafe { libc::pthread_mutex_lock(self.raw.get()) })
    }

    /// `pthread_mutex_unlock`; the caller must hold it (`EPERM` otherwise
    /// for PI and PP mutexes).
    #[inline]
    pub fn unlock(&self) -> io::Result<()> {
        // SAFETY: `raw` was initialised in `new` and lives as long as `self`.
        check(unsafe { libc::pthread_mutex_unlock(self.raw.get()) })
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: `raw` was initialised; `&mut self` means no thread can
        // hold or wait for it any more.
        unsafe { libc::pthread_mutex_destroy(self.raw.get()) };
    }
}
