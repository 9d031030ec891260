//! The simulator's one entry: [`run`] simulates a task set under any
//! scheduler of the registry and picks the engine, the only place that
//! does. The uniprocessor engine ([`crate::engine`]) runs a uniprocessor
//! scheduler on one processor; every multiprocessor scheduler, and any
//! scheduler on several processors (refused with its counterparts when
//! it schedules one), goes through [`crate::multi`] (the global engine, or
//! uniprocessor sub-runs merged).

use std::io;

use rtlab_model::results::JobSink;
use rtlab_model::TaskSet;

use crate::config::SimConfig;
use crate::engine::{BacklogStop, Simulator};
use crate::error::SimError;
use crate::metrics::SimReport;
use crate::registry::SchedulerSpec;
use crate::trace::Trace;

/// Where a run's outputs go besides its report.
#[derive(Default)]
pub struct Outputs {
    /// Every job record, as the job leaves the run (completed, aborted, or
    /// unfinished at the end).
    pub jobs: Option<Box<dyn JobSink>>,
    /// Opens where the Chrome trace-event document of the configured
    /// window ([`SimConfig::trace`]) goes: called once the run is set up
    /// (nothing is created for a run refused), then streamed as the run
    /// goes on one processor, written after the run on several, by the
    /// same writer.
    pub chrome: Option<OpenOutput>,
    /// Keep the window's records in memory ([`Finished::trace`], for a
    /// Gantt chart); without it a streamed trace keeps none.
    pub keep_trace: bool,
}

/// Opens an output file (or any writer) when the run needs it.
pub type OpenOutput = Box<dyn FnOnce() -> io::Result<Box<dyn io::Write + Send>>>;

/// Why [`run_with`] did not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The simulation could not be set up.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// The Chrome trace's output could not be opened (nothing ran).
    #[error("{0}")]
    Output(io::Error),
}

/// A finished run.
pub struct Finished {
    /// The report.
    pub report: SimReport,
    /// The window's records, when a window was configured (and, with a
    /// Chrome stream, `keep_trace` asked for them).
    pub trace: Option<Trace>,
    /// Why the run stopped before its duration, if it did.
    pub stopped: Option<BacklogStop>,
    /// How the job sink's output went.
    pub jobs_written: io::Result<()>,
    /// How the Chrome document's output went.
    pub trace_written: io::Result<()>,
}

/// True when `spec` on `set`'s processors runs in the uniprocessor engine.
fn uniprocessor_engine(set: &TaskSet, spec: &SchedulerSpec) -> bool {
    !spec.is_multiprocessor() && set.processors() == 1
}

/// Simulates `set` under `spec` with `config`, every job record to
/// `sink`.
pub fn run(
    set: &TaskSet,
    spec: &SchedulerSpec,
    config: &SimConfig,
    sink: Option<Box<dyn JobSink>>,
) -> Result<Finished, SimError> {
    let outputs = Outputs {
        jobs: sink,
        ..Outputs::default()
    };
    run_with(set, spec, config, outputs).map_err(|e| match e {
        RunError::Sim(e) => e,
        // No Chrome output was asked for, so none was opened.
        RunError::Output(e) => SimError::Config(e.to_string()),
    })
}

/// Simulates `set` under `spec` with `config`, its outputs to `outputs`.
pub fn run_with(
    set: &TaskSet,
    spec: &SchedulerSpec,
    config: &SimConfig,
    outputs: Outputs,
) -> Result<Finished, RunError> {
    let Outputs {
        jobs,
        chrome,
        keep_trace,
    } = outputs;
    if uniprocessor_engine(set, spec) {
        let mut sim = Simulator::new(set, spec, config.clone())?;
        if let Some(sink) = jobs {
            sim.with_sink(sink);
        }
        let streamed = chrome.is_some();
        if let Some(open) = chrome {
            sim.stream_chrome_trace(open().map_err(RunError::Output)?, keep_trace);
        }
        sim.run();
        let report = sim.report();
        let trace_written = sim.finish_trace();
        let jobs_written = sim.finish_jobs();
        let trace = sim.take_trace().filter(|_| keep_trace || !streamed);
        return Ok(Finished {
            report,
            trace,
            stopped: sim.stopped(),
            jobs_written,
            trace_written,
        });
    }
    let out = crate::multi::run(set, spec, config, jobs)?;
    let trace_written = match (chrome, &out.trace) {
        (Some(open), Some(trace)) => open().and_then(|w| trace.write_chrome(w)),
        (Some(open), None) => open().and_then(|mut w| w.flush()),
        (None, _) => Ok(()),
    };
    Ok(Finished {
        report: out.report,
        trace: out.trace,
        stopped: out.stopped,
        jobs_written: out.jobs_written,
        trace_written,
    })
}
