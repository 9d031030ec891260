//! Where job records go as a run goes, one at a time: a run's outputs
//! (`--jobs` CSV, `--trace` Chrome trace events) implement [`JobSink`], so
//! memory does not depend on the length of the run.

use std::io;

use crate::results::JobRecord;
use crate::Nanos;

/// Receives every recorded job of a run: on the writer thread of a real
/// run (the executor asks for `Box<dyn JobSink + Send>`), as the job leaves
/// the simulation in the simulator (both engines, [`rtlab_sim::run`]).
///
/// [`rtlab_sim::run`]: https://docs.rs/rtlab-sim
pub trait JobSink {
    /// One job. `ended` is how long the run lasted; it decides whether an
    /// unfinished job missed its deadline, and is final for every job
    /// without a finish time.
    fn job(&mut self, job: &JobRecord, ended: Nanos) -> io::Result<()>;

    /// After the last job: complete and flush the output.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A closure as a sink, for callers that only look at the records (it
/// cannot fail): `EachJob(|job: &JobRecord| ...)`.
pub struct EachJob<F>(pub F);

impl<F: FnMut(&JobRecord)> JobSink for EachJob<F> {
    fn job(&mut self, job: &JobRecord, _ended: Nanos) -> io::Result<()> {
        (self.0)(job);
        Ok(())
    }
}
