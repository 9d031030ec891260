//! Signal masks, `sigwaitinfo`, dispositions and `_exit`.

use std::io;

/// A `sigset_t`, always initialised.
#[derive(Clone, Copy)]
pub struct SigSet(libc::sigset_t);

impl std::fmt::Debug for SigSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigSet")
    }
}

impl SigSet {
    /// The empty set.
    pub fn empty() -> SigSet {
        // SAFETY: an all-zero sigset_t is a valid buffer for sigemptyset.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid, writable sigset_t; sigemptyset cannot
        // fail on one.
        unsafe { libc::sigemptyset(&mut set) };
        SigSet(set)
    }

    /// The set of `signals`. Fails with EINVAL on a number that is no signal.
    pub fn of(signals: &[libc::c_int]) -> io::Result<SigSet> {
        let mut set = SigSet::empty();
        for &s in signals {
            // SAFETY: `set.0` is an initialised sigset_t; an invalid signal
            // number is reported as EINVAL, not undefined behaviour.
            super::check_zero(unsafe { libc::sigaddset(&mut set.0, s) })?;
        }
        Ok(set)
    }

    /// Blocks the set in the calling thread (`pthread_sigmask(SIG_BLOCK)`)
    /// and returns the mask it had before.
    pub fn block(&self) -> io::Result<SigSet> {
        let mut old = SigSet::empty();
        // SAFETY: both sets are initialised sigset_t values; this changes
        // only the calling thread's mask.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &self.0, &mut old.0) };
        // pthread_sigmask returns the error number instead of setting errno.
        match rc {
            0 => Ok(old),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Makes the set the calling thread's whole mask (`SIG_SETMASK`).
    pub fn set_as_mask(&self) -> io::Result<()> {
        // SAFETY: the set is an initialised sigset_t; no old mask is asked
        // for; only the calling thread's mask changes.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
        match rc {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Waits for one signal of the set (which must be blocked) and returns
    /// its number (`sigwaitinfo`). A signal outside the set ends the wait
    /// with [`io::ErrorKind::Interrupted`].
    pub fn wait(&self) -> io::Result<libc::c_int> {
        // SAFETY: the set is an initialised sigset_t; no siginfo is asked for.
        let signal = unsafe { libc::sigwaitinfo(&self.0, std::ptr::null_mut()) };
        if signal < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(signal)
        }
    }
}

/// Gives `signal` its default disposition (`signal(signal, SIG_DFL)`).
pub fn set_default_disposition(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: SIG_DFL installs no handler, so no Rust code runs in signal
    // context.
    let previous = unsafe { libc::signal(signal, libc::SIG_DFL) };
    if previous == libc::SIG_ERR {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Ends the process at once with `status` (`_exit`): no destructors, no
/// atexit handlers, no stdio flush.
pub fn exit_now(status: libc::c_int) -> ! {
    // SAFETY: _exit never returns and touches no Rust state; skipping
    // destructors is the point (the caller has done what they would do).
    unsafe { libc::_exit(status) }
}

/// Sends `signal` to process `pid` (`kill(2)`).
pub fn send_signal(pid: u32, signal: libc::c_int) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: kill takes plain integers and touches no memory of ours.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// True when `signal` is ignored (`SIG_IGN`) in this process, as a shell
/// leaves SIGINT and SIGQUIT for a `&` job and `nohup` leaves SIGHUP.
pub fn is_ignored(signal: libc::c_int) -> io::Result<bool> {
    // SAFETY: an all-zero sigaction is a valid buffer for the old action.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into `old`.
    super::check_zero(unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) })?;
    Ok(old.sa_sigaction == libc::SIG_IGN)
}

/// The handler of [`install_wake_handler`]: does nothing, so only its
/// effect on sleeps remains.
extern "C" fn do_nothing(_: libc::c_int) {}

/// Gives `signal` a handler that does nothing, with `SA_RESTART`: a system
/// call it interrupts is restarted (read, write, futex waits), except the
/// sleeps that Linux never restarts (`clock_nanosleep`, `nanosleep`,
/// `poll`: signal(7)), which return EINTR. So sending `signal` to a thread
/// wakes it from a sleep and changes nothing else.
pub fn install_wake_handler(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: an all-zero sigaction is valid (empty mask, no flags).
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = do_nothing as extern "C" fn(libc::c_int) as libc::sighandler_t;
    action.sa_flags = libc::SA_RESTART;
    // SAFETY: the handler touches nothing (async-signal-safe); no old
    // action is asked for.
    super::check_zero(unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) })
}

/// Sends `signal` to thread `tid` of this process (`tgkill(2)`).
pub fn signal_thread(tid: libc::pid_t, signal: libc::c_int) -> io::Result<()> {
    let pid = libc::pid_t::try_from(std::process::id())
        .map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: tgkill (by number: glibc has no wrapper before 2.30) takes
    // plain integers and touches no memory of ours.
    let rc = unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
