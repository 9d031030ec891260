//! Stop signals: one handler for every rtlab command, on a thread of its own.
//!
//! SIGINT, SIGTERM, SIGHUP and SIGQUIT all ask a command to stop.
//! [`install_stop_handler`] is the first thing `main` does after parsing,
//! for every command that measures or changes kernel settings, before any
//! other thread exists (a thread started earlier would not inherit the mask
//! below, and a signal the kernel hands to it would end the process at once
//! with the kernel settings changed). Other commands keep the default
//! actions, which end them at once as the handler would.
//!
//! * In a command that measures (it called [`install_interrupt_flag`]), the
//!   first stop sets the flag that measuring loops check and wakes every
//!   thread of the process from its sleep (below), so the command ends its
//!   run within a few milliseconds whatever its period, restores the kernel
//!   settings it changed (its guards drop), saves and prints what it
//!   measured, and exits 0 with `interrupted: true`.
//! * In any other command, and at a second stop, the handler restores every
//!   setting this process still has changed
//!   ([`crate::kernel_state::restore_this_process`]), says so on standard
//!   error in one line when there was one, and exits at once with status
//!   128 + the signal number (130 for SIGINT), as the default action would.
//!
//! Whatever a restore cannot undo stays in the state file, for the next
//! rtlab command; after SIGKILL, which no process can catch, the state file
//! is all there is.
//!
//! **Inherited ignores are kept.** A shell starts a `&` job of a
//! non-interactive script with SIGINT and SIGQUIT ignored, and `nohup`
//! starts its command with SIGHUP ignored: they ask that the job survive
//! those signals, so rtlab leaves a signal it finds ignored at start
//! ignored. SIGTERM (`kill PID`) is always handled.
//!
//! **No handler runs on a real-time thread.** The signals are blocked in
//! the calling thread, so every thread started afterwards inherits the
//! mask, and a thread of its own (`rtlab-signals`, SCHED_OTHER) takes them
//! with `sigwaitinfo` — the POSIX way for threaded programs, and one that
//! needs no async-signal-safe code (the restore runs on an ordinary
//! thread). `std::process::Command` clears the mask in children.
//!
//! **Waking the sleepers.** A measuring thread sleeps with
//! `clock_nanosleep(TIMER_ABSTIME)` until its next release, which can be a
//! minute away (`latency -i 60s`). At the first stop the handler sends
//! [`WAKE_SIGNAL`] to every other thread of the process (`tgkill`); its
//! handler does nothing and is installed with `SA_RESTART`, so the only
//! calls it cuts short are the sleeps Linux never restarts, which return
//! EINTR; [`rtlab_sys::clock::wait_until`] then returns early because the flag
//! is raised, and the loop sees the flag. SIGURG is the wake signal for
//! the reason the Go runtime picked it for preempting goroutines: its
//! default action is to ignore it and nothing else here uses it.
//!
//! **SIGHUP when the terminal is gone** (an SSH session dropping): a write
//! to a hung-up terminal fails with EIO. So on SIGHUP, each of standard
//! input, output and error that was a terminal at installation and now
//! answers EIO is pointed at `/dev/null`: the run still ends, restores and
//! exits cleanly, and its summary goes nowhere. Output redirected to a file
//! or a pipe is left alone and gets the summary.
//!
//! **SIGPIPE** keeps Rust's disposition (ignored): a write to a closed pipe
//! fails with EPIPE like any other write error, and the CLI reports it once
//! the kernel is restored and the run saved.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Once;

use rtlab_sys::fd::{dup2, isatty};
use rtlab_sys::signal::{exit_now, install_wake_handler, is_ignored, signal_thread, SigSet};
pub use rtlab_sys::stop_flag::interrupted;
use rtlab_sys::stop_flag::INTERRUPTED;

static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Set by [`install_interrupt_flag`]: the command checks the flag, so the
/// first stop ends its measurement instead of the process.
static MEASURING: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// The signals that ask for a clean stop.
pub const STOP_SIGNALS: [libc::c_int; 4] =
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The signal that wakes sleeping threads at the first stop (module docs).
pub const WAKE_SIGNAL: libc::c_int = libc::SIGURG;

/// Installs the one stop handler of the process (idempotent): blocks the
/// [`STOP_SIGNALS`] not ignored at start (SIGTERM always) in the calling
/// thread, and so in every thread it starts afterwards, and starts the
/// thread that takes them. Until the command calls
/// [`install_interrupt_flag`], a stop restores and exits at once. Call it
/// first thing in `main`. If the thread cannot be started the signals are
/// unblocked again and keep their default action (the state files still
/// cover it).
pub fn install_stop_handler() {
    INSTALL.call_once(|| {
        let terminals: Vec<libc::c_int> = (0..3).filter(|&fd| is_terminal(fd)).collect();
        let set = stop_set();
        // Without the wake handler a stop still ends the run, at the next
        // release instead of at once.
        let _ = install_wake_handler(WAKE_SIGNAL);
        // Blocking valid signals in the calling thread cannot fail.
        let Ok(old) = set.block() else { return };
        let spawned = std::thread::Builder::new()
            .name("rtlab-signals".into())
            .spawn(move || take_signals(set, &terminals));
        if spawned.is_err() {
            // Restores the mask saved above, in the same thread.
            let _ = old.set_as_mask();
        }
    });
}

/// Marks the command as one that ends its measurement at the first stop
/// (module docs), installs the handler if `main` did not, and returns the
/// flag the first stop sets. Sleeps in [`rtlab_sys::clock::wait_until`] return
/// early once it is set.
pub fn install_interrupt_flag() -> &'static AtomicBool {
    install_stop_handler();
    MEASURING.store(true, Ordering::SeqCst);
    &INTERRUPTED
}

/// Sleeps `d`, waking early when the interrupt flag is raised.
pub fn pause(d: rtlab_model::Nanos, flag: &AtomicBool) {
    let end = std::time::Instant::now() + std::time::Duration::from(d);
    while !flag.load(Ordering::Relaxed) {
        let now = std::time::Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(std::time::Duration::from_millis(10)));
    }
}

/// The name of the first stop signal received, e.g. `SIGHUP`.
pub fn signal_name() -> Option<&'static str> {
    match FIRST_SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        s => Some(name_of(s)),
    }
}

fn name_of(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        _ => "a signal",
    }
}

/// The stop signals to handle: all but those ignored at start, SIGTERM
/// always.
fn stop_set() -> SigSet {
    let handled: Vec<libc::c_int> = STOP_SIGNALS
        .into_iter()
        .filter(|&s| s == libc::SIGTERM || !is_ignored(s).unwrap_or(false))
        .collect();
    // The signal numbers are valid, so this cannot fail.
    SigSet::of(&handled).unwrap_or_else(|_| SigSet::empty())
}

/// The body of `rtlab-signals`: in a measuring command the first signal
/// sets the flag and wakes the sleepers; otherwise, and at the second, it
/// restores and exits.
fn take_signals(set: SigSet, terminals: &[libc::c_int]) {
    loop {
        let Ok(signal) = set.wait() else {
            continue; // EINTR
        };
        if signal == libc::SIGHUP {
            detach_hung_up_terminals(terminals);
        }
        let measuring = MEASURING.load(Ordering::SeqCst);
        if measuring && !INTERRUPTED.swap(true, Ordering::SeqCst) {
            FIRST_SIGNAL.store(signal, Ordering::SeqCst);
            wake_other_threads();
            continue;
        }
        let restored = crate::kernel_state::restore_this_process();
        if restored.is_empty() && !measuring {
            // What the default action would do, minus the core dump.
            exit_now(128 + signal);
        }
        let mut line = if measuring {
            format!(
                "rtlab: second stop signal ({}): exiting at once",
                name_of(signal)
            )
        } else {
            format!("rtlab: {}: exiting at once", name_of(signal))
        };
        if !restored.is_empty() {
            let what: Vec<String> = restored
                .iter()
                .map(|(c, r)| c.describe_restore(r))
                .collect();
            line += &format!(" after restoring the kernel settings: {}", what.join("; "));
        }
        let _ = writeln!(std::io::stderr(), "{line}");
        // No Rust destructors: the restore above made them unnecessary.
        exit_now(128 + signal);
    }
}

/// Sends [`WAKE_SIGNAL`] to every thread of the process but this one
/// (the threads listed in `/proc/self/task`).
fn wake_other_threads() {
    let me = rtlab_sys::sched::gettid();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for tid in tasks
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse::<i32>().ok())
    {
        if tid != me {
            // A thread that ended meanwhile (ESRCH) has nothing to wake.
            let _ = signal_thread(tid, WAKE_SIGNAL);
        }
    }
}

fn is_terminal(fd: libc::c_int) -> bool {
    isatty(fd).is_ok()
}

/// Points each descriptor in `terminals` whose terminal has hung up (isatty
/// fails with EIO) at /dev/null.
fn detach_hung_up_terminals(terminals: &[libc::c_int]) {
    for &fd in terminals {
        let hung_up = matches!(isatty(fd), Err(e) if e.raw_os_error() == Some(libc::EIO));
        if !hung_up {
            continue;
        }
        if let Ok(null) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
        {
            // Atomic: concurrent writers see either the terminal or
            // /dev/null, never a closed descriptor.
            let _ = dup2(&null, fd);
        }
    }
}

/// Blocks SIGPIPE in the calling thread, so a write to a pipe or socket
/// whose reader is gone fails with EPIPE instead of ending the process,
/// whatever the process-wide disposition.
/// A SIGPIPE raised by a write is directed at the writing thread, so blocking
/// it there is enough; it is discarded when the thread exits.
pub fn block_sigpipe_in_this_thread() {
    // SIGPIPE is a valid signal, so neither call can fail.
    if let Ok(set) = SigSet::of(&[libc::SIGPIPE]) {
        let _ = set.block();
    }
}
