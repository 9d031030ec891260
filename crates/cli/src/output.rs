//! Standard output, the one way every command writes to it.
//!
//! A write to standard output can fail: the reader of a pipe went away
//! (`rtlab ... | head`: EPIPE, since SIGPIPE is ignored as Rust programs
//! ignore it), or the disk is full (`> /dev/full`: ENOSPC). `println!`
//! panics on both (exit 101), and the default SIGPIPE action ends the
//! process before it restores the kernel settings it changed. Here a
//! failed write is remembered instead (the first error only, later writes
//! do nothing), the command carries on — a measuring command restores its
//! settings and saves its run — and `main` turns it into one line on
//! standard error and exit status 1 ([`take_error`]).
//!
//! `outln!` and `out!` are `println!` and `print!` through it;
//! [`Stdout`] is an `io::Write` for code that streams. `main.rs` denies
//! `clippy::print_stdout`, so no command can print around it.

use std::fmt;
use std::io::{self, Write};
use std::sync::{Mutex, PoisonError};

/// The first error writing to standard output, if any.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// `println!` that never panics: see the module docs.
macro_rules! outln {
    () => {
        $crate::output::write_fmt(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that never panics: see the module docs.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_fmt(format_args!($($arg)*))
    };
}

/// Writes `args` to standard output unless a write already failed, and
/// remembers the error when this one fails.
pub fn write_fmt(args: fmt::Arguments<'_>) {
    let _ = Stdout.write_fmt(args);
}

/// Standard output as an `io::Write` sharing the sticky error: a failed
/// write or flush is remembered and returned; after one, every write
/// succeeds without writing (so a caller that stops at the first error
/// and one that carries on both end up with the one error in `main`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stdout;

impl Stdout {
    fn attempt<T>(&self, default: T, op: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        let mut failed = FAILED.lock().unwrap_or_else(PoisonError::into_inner);
        if failed.is_some() {
            return Ok(default);
        }
        match op() {
            Ok(v) => Ok(v),
            Err(e) => {
                let kind = e.kind();
                let text = e.to_string();
                *failed = Some(e);
                Err(io::Error::new(kind, text))
            }
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.attempt(buf.len(), || io::stdout().lock().write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.attempt((), || io::stdout().lock().write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.attempt((), || io::stdout().lock().flush())
    }
}

/// Flushes standard output and returns the first write error of the whole
/// run, which `main` reports as `writing to stdout: ...` with exit 1.
pub fn take_error() -> Option<io::Error> {
    let _ = Stdout.flush();
    FAILED.lock().unwrap_or_else(PoisonError::into_inner).take()
}
