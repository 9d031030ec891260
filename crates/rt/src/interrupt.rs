//! Stop signals as a flag, handled on a thread of their own.
//!
//! SIGINT, SIGTERM, SIGHUP and SIGQUIT all ask a command to stop: the first
//! one sets the flag that measuring loops check, so the command ends its
//! run, restores the kernel settings it changed (its guards drop) and prints
//! what it measured. A second one restores every setting this process still
//! has changed ([`crate::kernel_state::restore_this_process`]), says so on
//! standard error in one line, and exits at once with status 128 + the
//! signal number (130 for SIGINT). Whatever a restore cannot undo stays in
//! the state file, for the next rtlab command; after SIGKILL, which no
//! process can catch, the state file is all there is.
//!
//! **No handler runs on a real-time thread.** [`install_interrupt_flag`]
//! blocks the four signals in the calling thread, so every thread started
//! afterwards inherits the mask, and a thread of its own (`rtlab-signals`,
//! SCHED_OTHER) takes them with `sigwaitinfo` — the POSIX way for threaded
//! programs, and one that needs no async-signal-safe code (the restore runs
//! on an ordinary thread). Call it from the main thread before starting
//! other threads. `std::process::Command` clears the mask in children.
//!
//! **SIGHUP when the terminal is gone** (an SSH session dropping): a write
//! to a hung-up terminal fails with EIO, and `println!` panics on a failed
//! write. So on SIGHUP, each of standard input, output and error that was a
//! terminal at installation and now answers EIO is pointed at `/dev/null`:
//! the run still ends, restores and exits cleanly, and its summary goes
//! nowhere instead of panicking. Output redirected to a file or a pipe is
//! left alone and gets the summary.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Once;

use crate::sys::fd::{dup2, isatty};
use crate::sys::signal::{exit_now, set_default_disposition, SigSet};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

/// The signals that ask for a clean stop.
pub const STOP_SIGNALS: [libc::c_int; 4] =
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Blocks the [`STOP_SIGNALS`] in the calling thread (and so in every thread
/// it starts afterwards), starts the thread that takes them (idempotent),
/// and returns the flag the first one sets. Sleeps are not interrupted (the
/// signals are blocked), so measuring threads see the flag at their next
/// period. If the thread cannot be started the signals are unblocked again
/// and keep their default action (the state files still cover it).
pub fn install_interrupt_flag() -> &'static AtomicBool {
    INSTALL.call_once(|| {
        let terminals: Vec<libc::c_int> = (0..3).filter(|&fd| is_terminal(fd)).collect();
        let set = stop_set();
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

/// True once a stop signal arrived (after [`install_interrupt_flag`]).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
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

fn stop_set() -> SigSet {
    // The four signal numbers are valid, so this cannot fail.
    SigSet::of(&STOP_SIGNALS).unwrap_or_else(|_| SigSet::empty())
}

/// The body of `rtlab-signals`: first signal sets the flag, the second
/// restores and exits.
fn take_signals(set: SigSet, terminals: &[libc::c_int]) {
    loop {
        let Ok(signal) = set.wait() else {
            continue; // EINTR
        };
        if signal == libc::SIGHUP {
            detach_hung_up_terminals(terminals);
        }
        if !INTERRUPTED.swap(true, Ordering::SeqCst) {
            FIRST_SIGNAL.store(signal, Ordering::SeqCst);
            continue;
        }
        let restored = crate::kernel_state::restore_this_process();
        let mut line = format!(
            "rtlab: second stop signal ({}): exiting at once",
            name_of(signal)
        );
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

/// Lets a write to a closed pipe end the process quietly, as it ends `cat`
/// or `grep` (`rtlab ... | head`), instead of Rust's default of ignoring
/// SIGPIPE, which turns the write into an error that `println!` panics on.
/// Call it once, first thing in `main`.
pub fn restore_default_sigpipe() {
    // SIGPIPE is a valid signal, so this cannot fail.
    let _ = set_default_disposition(libc::SIGPIPE);
}

/// Blocks SIGPIPE in the calling thread, so a write to a pipe or socket
/// whose reader is gone fails with EPIPE instead of ending the process,
/// whatever the process-wide disposition (see [`restore_default_sigpipe`]).
/// A SIGPIPE raised by a write is directed at the writing thread, so blocking
/// it there is enough; it is discarded when the thread exits.
pub fn block_sigpipe_in_this_thread() {
    // SIGPIPE is a valid signal, so neither call can fail.
    if let Ok(set) = SigSet::of(&[libc::SIGPIPE]) {
        let _ = set.block();
    }
}
