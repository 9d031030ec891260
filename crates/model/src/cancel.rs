//! Stopping a long computation from outside it: a flag the caller raises
//! and the long loops poll.
//!
//! The Python bindings run a call (generating, analysing or simulating a
//! large set) on a worker thread while the interpreter's thread waits and
//! checks for Ctrl-C; on Ctrl-C it raises the flag. The worker runs its
//! work inside [`scope`], and the loops that can take seconds (the
//! generators between sets, response-time and processor-demand analysis,
//! both simulator engines) ask [`requested`] and stop early: what they
//! return then is meaningless, and the caller, which raised the flag,
//! throws it away.
//!
//! The flag is the worker thread's, set by [`scope`], so no signature
//! between the caller and the loops carries it; outside a scope
//! [`requested`] is always false (the command line never opens one: its
//! Ctrl-C ends the process).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag that asks the computations in its [`scope`] to stop; clones
/// share it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag not raised yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks every computation in this flag's scopes to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

/// Runs `work` on this thread with `cancel` as the flag [`requested`]
/// reads (the previous one, if any, is restored after).
pub fn scope<T>(cancel: &Cancel, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Cancel>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(cancel.clone())));
    work()
}

/// Whether the flag of the enclosing [`scope`] was raised: a long loop
/// stops when it is. Cheap (a thread-local read and a relaxed load), but
/// poll it once per unit of real work, not per instruction.
pub fn requested() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(Cancel::is_cancelled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_work_inside_a_raised_scope_is_asked_to_stop() {
        assert!(!requested());
        let flag = Cancel::new();
        scope(&flag, || {
            assert!(!requested());
            flag.cancel();
            assert!(requested());
            // A nested scope with its own flag hides the outer one.
            scope(&Cancel::new(), || assert!(!requested()));
            assert!(requested());
        });
        assert!(!requested());
        // Another thread has no scope.
        std::thread::spawn(|| assert!(!requested())).join().unwrap();
    }
}
