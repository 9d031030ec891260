//! Where job records go as a run goes, one at a time: a run's outputs
//! (`--jobs` CSV, `--trace` Chrome trace events) implement [`JobSink`], so
//! memory does not depend on the length of the run.

use std::io;

use crate::results::JobRecord;
use crate::Nanos;

/// Receives every recorded job of a run, on the writer thread.
pub trait JobSink: Send {
    /// One job. `ended` is how long the run lasted; it decides whether an
    /// unfinished job missed its deadline, and is final for every job
    /// without a finish time.
    fn job(&mut self, job: &JobRecord, ended: Nanos) -> io::Result<()>;

    /// After the last job: complete and flush the output.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}
