//! The process's stop flag: raised by the first stop signal in a command
//! that measures (`rtlab_host::interrupt` takes the signals and sets it),
//! read by sleeps ([`crate::clock::wait_until`]) so that they return early.
//! It lives here, below the clocks, so that the clocks need nothing above
//! this crate.

use std::sync::atomic::{AtomicBool, Ordering};

/// Raised once by the first stop signal of a measuring command.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// True once a stop signal arrived (after `rtlab_host::interrupt::install_interrupt_flag`).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
