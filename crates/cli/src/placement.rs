//! `--partition HEURISTIC`, shared by `rtlab sim`, `rtlab taskset export`
//! and the real-thread commands (`run`, `compare` with `--cpus`): every task's `cpu` placed by
//! rtlab-analysis's partitioning, each processor admitted by the exact
//! uniprocessor test of the partitioned scheduler's policy.

use rtlab_analysis::partition::{partition, Heuristic};
use rtlab_analysis::sweep::SweepTest;
use rtlab_model::{printable, TaskSet};
use rtlab_sim::SchedulerSpec;

use crate::usage::usage;

/// `set` with every task's `cpu` placed on its `processors` by the
/// heuristic named `heuristic`, each processor admitted by `test` (e.g.
/// `edf:edf-demand`, `dm:rta`). A task no processor admits is an error
/// naming it; `outcome` says what did not happen then ("nothing was
/// simulated").
pub fn partitioned(
    set: &TaskSet,
    heuristic: &str,
    test: &str,
    outcome: &str,
) -> anyhow::Result<TaskSet> {
    let h = Heuristic::from_name(heuristic).ok_or_else(|| {
        usage(format!(
            "--partition `{}`: use {}",
            printable(heuristic),
            Heuristic::names()
        ))
    })?;
    let test = SweepTest::parse(test).map_err(anyhow::Error::msg)?;
    let m = set.processors();
    let placed = partition(set, m, h, test, &rtlab_analysis::suite::Options::default())
        .map_err(|e| anyhow::anyhow!("--partition {}: {e}", h.name()))?;
    if let Some(task) = placed.unplaced {
        anyhow::bail!(
            "--partition {}: task `{}` fits on none of the {m} processors ({} admits each processor); {outcome}",
            h.name(),
            printable(&set.tasks[task].name),
            test.name()
        );
    }
    Ok(TaskSet {
        platform: set.platform.clone(),
        ..placed.apply(set)
    })
}

/// `set` placed by `--partition HEURISTIC` for the partitioned simulator
/// scheduler `spec` (pedf: EDF demand per processor; pfp: that order's RTA).
pub fn for_scheduler(
    set: &TaskSet,
    spec: &SchedulerSpec,
    heuristic: &str,
    outcome: &str,
) -> anyhow::Result<TaskSet> {
    // Each processor is admitted by the exact test of its uniprocessor
    // scheduler: EDF's demand, or RTA under that priority order.
    let test = match spec.per_processor() {
        Some(SchedulerSpec::Edf) => "edf:edf-demand".to_string(),
        Some(SchedulerSpec::Fp(p)) => format!("{}:rta", p.name()),
        _ => {
            return Err(usage(format!(
                "--partition places tasks for a partitioned scheduler (pedf, pfp:rm|dm|given), not {spec}"
            )))
        }
    };
    partitioned(set, heuristic, &test, outcome)
}
