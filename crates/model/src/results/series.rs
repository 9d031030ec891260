//! The latency probe's time series (`rtlab latency --series`): one sample
//! per wake-up, written as the run goes.

use crate::Nanos;

/// One sample of the time series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeriesPoint {
    /// Loop number (0-based).
    pub loop_index: u64,
    /// When it should have woken, from the start of the run.
    pub at: Nanos,
    /// Wake-up latency.
    pub latency: Nanos,
    /// Period jitter: actual period minus the interval (0 for the first).
    pub jitter_ns: i64,
}
