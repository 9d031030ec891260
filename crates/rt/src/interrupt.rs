//! Ctrl-C as a flag: the first SIGINT (or SIGTERM) asks the run to stop and
//! report what it measured; a second one exits at once with status 130.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_signal: libc::c_int) {
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Installs the handler for SIGINT and SIGTERM (idempotent) and returns the
/// flag it sets. Sleeps interrupted by the signal are retried by
/// [`crate::clock::wait_until`], so measuring threads see the flag at their
/// next period.
pub fn install_interrupt_flag() -> &'static AtomicBool {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: an all-zero sigaction is valid (empty mask, no flags).
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: `action` is initialised and outlives the call; the handler
        // only touches an atomic and calls _exit.
        unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) };
    }
    &INTERRUPTED
}

/// True once SIGINT or SIGTERM arrived (after [`install_interrupt_flag`]).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Lets a write to a closed pipe end the process quietly, as it ends `cat`
/// or `grep` (`rtlab ... | head`), instead of Rust's default of ignoring
/// SIGPIPE, which turns the write into an error that `println!` panics on.
/// Call it once, first thing in `main`.
pub fn restore_default_sigpipe() {
    // SAFETY: setting the disposition of SIGPIPE to SIG_DFL touches no Rust
    // state; it is called before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Blocks SIGPIPE in the calling thread, so a write to a pipe or socket
/// whose reader is gone fails with EPIPE instead of ending the process,
/// whatever the process-wide disposition (see [`restore_default_sigpipe`]).
/// A SIGPIPE raised by a write is directed at the writing thread, so blocking
/// it there is enough; it is discarded when the thread exits.
pub fn block_sigpipe_in_this_thread() {
    // SAFETY: the set is initialised by sigemptyset before use, and
    // pthread_sigmask only changes the calling thread's signal mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}
