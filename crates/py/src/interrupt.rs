//! Long calls: the work runs on a worker thread with the GIL released,
//! inside a [`rtlab_model::cancel`] scope, while the calling thread waits
//! and checks for Ctrl-C every [`POLL`]. On Ctrl-C (or any exception a
//! poll raises) the flag is raised, the core's loops stop at their next
//! poll, the partial result is thrown away and the exception returned.

use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use pyo3::prelude::*;
use rtlab_model::cancel::{self, Cancel};

/// How often the waiting thread checks for Ctrl-C (and reports progress).
pub const POLL: Duration = Duration::from_millis(50);

/// The worker's stack: the main thread's usual 8 MiB, not a spawned
/// thread's 2 MiB, so a call is not short of stack only because it runs
/// here.
const WORKER_STACK: usize = 8 << 20;

/// Work below this many task-set tasks (tasks x sets for the generators)
/// runs on the calling thread with the GIL released and no worker: it
/// ends in well under a poll, and a thread per call would cost more than
/// the call (a 10-task analysis takes microseconds).
pub const BRIEF_TASKS: usize = 2_000;

/// [`interruptible`] for work of `size` tasks: below [`BRIEF_TASKS`] it
/// runs here, with the GIL released, and Ctrl-C is seen when it returns.
pub fn interruptible_sized<T: Send>(
    py: Python<'_>,
    size: usize,
    work: impl FnOnce(&Cancel) -> T + Send,
) -> PyResult<T> {
    if size < BRIEF_TASKS {
        let flag = Cancel::new();
        return Ok(py.detach(|| work(&flag)));
    }
    interruptible(py, None, work)
}

/// What the waiting thread calls at each check, with the GIL.
pub type Poll<'a> = dyn Fn(Python<'_>) -> PyResult<()> + Sync + 'a;

/// Runs `work` as described in the module docs; `poll` (e.g. a progress
/// bar's update) is called with the GIL at each check. `work` is given
/// the flag too, for threads of its own that the scope does not reach
/// (rayon's).
pub fn interruptible<T: Send>(
    py: Python<'_>,
    poll: Option<&Poll<'_>>,
    work: impl FnOnce(&Cancel) -> T + Send,
) -> PyResult<T> {
    let flag = Cancel::new();
    let flag = &flag;
    py.detach(|| {
        std::thread::scope(|scope| {
            // The worker says when it is done, so a short call returns at
            // once rather than at the next poll.
            let (finished, wait) = channel::<()>();
            let worker = std::thread::Builder::new()
                .name("rtlab-call".into())
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || {
                    let out = cancel::scope(flag, || work(flag));
                    let _ = finished.send(());
                    out
                })
                .map_err(|e| {
                    pyo3::exceptions::PyRuntimeError::new_err(format!(
                        "cannot start a worker thread: {e}"
                    ))
                })?;
            let mut interrupted: Option<PyErr> = None;
            while let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(POLL) {
                if interrupted.is_some() {
                    continue;
                }
                let checked = Python::attach(|py| {
                    py.check_signals()?;
                    poll.map_or(Ok(()), |p| p(py))
                });
                if let Err(e) = checked {
                    flag.cancel();
                    interrupted = Some(e);
                }
            }
            let out = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            match interrupted {
                Some(e) => Err(e),
                None => Ok(out),
            }
        })
    })
}
