//! The simulator as a sweep test: the [`Simulate`] behind `rtlab sweep
//! --test edf:sim,gedf:sim,...` and `rtlab.sweep` (the horizon, the
//! partitioning and what the verdict means are the analysis side's,
//! [`rtlab_analysis::sweep::simulated`]).
//!
//! ```
//! use rtlab_analysis::sweep::{run_prepared_shard, SweepSpec};
//!
//! let spec = SweepSpec::from_json(
//!     r#"{"tasks": 4, "from": 0.8, "to": 1.0, "step": 0.2, "sets": 5, "tests": ["edf:sim", "edf:edf-demand"]}"#,
//! )?;
//! let prepared = spec.prepare()?.with_simulator(rtlab_sim::sweep_test::simulator());
//! let shard = run_prepared_shard(&prepared, 0, 1, &|_| true)?;
//! // On one processor with implicit deadlines the simulation is exact: it
//! // accepts what the exact demand test accepts.
//! for row in &shard.rows {
//!     assert_eq!(row.accepted[0], row.accepted[1]);
//! }
//! # Ok::<(), rtlab_analysis::sweep::SweepError>(())
//! ```

use std::sync::Arc;

use rtlab_analysis::sweep::{Simulate, SimulatedScheduler};
use rtlab_model::{Nanos, TaskSet};

use crate::config::SimConfig;
use crate::registry::SchedulerSpec;

/// The simulator, for [`rtlab_analysis::sweep::Prepared::with_simulator`].
pub fn simulator() -> Arc<dyn Simulate> {
    Arc::new(SweepSimulator)
}

/// Runs a `:sim` column's set in this crate's engines.
#[derive(Debug, Clone, Copy, Default)]
pub struct SweepSimulator;

/// The registry's scheduler for a simulated test's.
pub fn scheduler_spec(scheduler: SimulatedScheduler) -> SchedulerSpec {
    match scheduler {
        SimulatedScheduler::Edf => SchedulerSpec::Edf,
        SimulatedScheduler::Fp(p) => SchedulerSpec::Fp(p),
        SimulatedScheduler::Gedf => SchedulerSpec::Gedf,
        SimulatedScheduler::Gfp(p) => SchedulerSpec::Gfp(p),
        SimulatedScheduler::Pedf => SchedulerSpec::Pedf,
        SimulatedScheduler::Pfp(p) => SchedulerSpec::Pfp(p),
    }
}

impl Simulate for SweepSimulator {
    fn meets_deadlines(
        &self,
        set: &TaskSet,
        scheduler: SimulatedScheduler,
        horizon: Nanos,
    ) -> Result<bool, String> {
        // Every job at its WCET, no jitter, misses counted, not aborted:
        // `SimConfig::new`'s defaults.
        let config = SimConfig::new(horizon);
        let run = crate::run(set, &scheduler_spec(scheduler), &config, None)
            .map_err(|e| e.to_string())?;
        // A run cut short by its backlog is overloaded.
        Ok(run.stopped.is_none() && run.report.totals.deadline_misses == 0)
    }
}
