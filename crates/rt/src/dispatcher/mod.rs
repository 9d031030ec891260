//! The dispatcher: any scheduler of the simulator's registry on real
//! threads.
//!
//! Linux runs only its own policies (SCHED_FIFO, SCHED_RR,
//! SCHED_DEADLINE); this kernel has no sched_ext, so a scheduler of
//! rtlab's own (I+PI, Multiburst, the EDF/FPS hybrid, a round robin with
//! any quantum) reaches real threads the way Mollison and Anderson
//! (RTAS 2013) put one on Linux without changing the kernel: a user-level
//! dispatcher. One thread per CPU, pinned, at the top SCHED_FIFO priority,
//! runs the simulator's own [`rtlab_sim::Scheduler`] object ([`engine`])
//! and enacts each decision by raising the chosen task thread to the
//! running priority and lowering the one it preempts ([`threads`]); it
//! sleeps on an absolute timer until its next event (a release, a burst or
//! quantum end, a tick) or until a task thread rings its doorbell (a job
//! done, a lock step). A watchdog on another CPU ends a run whose
//! dispatcher stalls or dies ([`watchdog`]). What it costs is measured on
//! every run ([`costs`]).

mod backlog;
pub mod costs;
pub mod engine;
pub mod global;
pub mod run;
pub mod threads;
mod upcoming;
pub mod virtual_platform;
pub mod watchdog;

pub use costs::DispatcherCosts;
pub use run::{check, run_dispatched, run_traced, DispatchConfig, DispatchedExtras};

#[cfg(test)]
mod global_tests;
#[cfg(test)]
mod virtual_cpus;
#[cfg(test)]
mod virtual_tests;
