//! rtlab's discrete-event scheduling simulator.
//!
//! Simulates a periodic task set on one processor under any scheduler —
//! including ones Linux does not have (I+PI, Multiburst, the EDF/FPS hybrid,
//! non-preemptive EDF) — with an overhead model, locking protocols, a
//! periodic tick and overload phases, deterministically: integer
//! nanoseconds, a documented tie-break for events at the same instant
//! ([`queue`]), and seeded ChaCha8 streams for execution times. The same
//! inputs give the same report, byte for byte.
//!
//! ```
//! use rtlab_model::{Nanos, Task, TaskSet};
//! use rtlab_sim::{simulate, SchedulerSpec, SimConfig};
//!
//! let ms = Nanos::from_ms;
//! // The classic pair: RM misses, EDF does not (U = 0.4 + 4/7 = 0.97).
//! let set = TaskSet::new("pair", vec![Task::new("a", ms(5), ms(2)), Task::new("b", ms(7), ms(4))]);
//! let config = SimConfig::new(ms(35));
//! let rm = simulate(&set, &"fp:rm".parse().unwrap(), &config).unwrap();
//! let edf = simulate(&set, &SchedulerSpec::Edf, &config).unwrap();
//! assert!(rm.deadline_misses > 0);
//! assert_eq!(edf.deadline_misses, 0);
//! ```
//!
//! Modules: [`engine`] (the event loop and its model), [`scheduler`] (the
//! trait and one module per policy), [`config`] (what else a run needs),
//! [`metrics`] (the report), [`trace`] (Chrome trace and SVG Gantt),
//! [`runner`] (the simulator as the experiments' `Runner`), [`sweep_test`]
//! (the simulator as a sweep's `:sim` test).

#![forbid(unsafe_code)]

pub mod config;
pub mod engine;
pub mod error;
pub mod job;
pub mod kernel_servers;
mod lifecycle;
pub mod metrics;
pub mod mp_locking;
pub mod multi;
pub mod queue;
pub mod registry;
mod run;
pub mod runner;
pub mod schedule_spans;
pub mod scheduler;
pub mod sweep_test;
pub mod trace;

pub use config::{
    check_phases, ExecModel, JitterModel, LockingProtocol, MissRule, Phase, Scale, SimConfig,
    TraceWindow,
};
pub use engine::{simulate, BacklogStop, Simulator, MAX_PENDING_JOBS};
pub use error::SimError;
pub use job::{Job, JobId, JobState};
pub use metrics::{Deadlock, DeadlockLink, ProcessorMetrics, SimReport, TaskMetrics};
pub use registry::{SchedulerEntry, SchedulerSpec, SCHEDULERS};
pub use run::{run, run_with, Finished, OpenOutput, Outputs, RunError};
pub use scheduler::{Hooks, PolicyKind, Priority, Scheduler, System};
pub use trace::{Trace, TraceRecord, MAX_KEPT_RECORDS};
