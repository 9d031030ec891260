//! `--partition HEURISTIC` (`rtlab sim`, `rtlab taskset export`): every
//! task's `cpu` placed by rtlab-analysis's bin-packing heuristics.

use rtlab_model::{printable, TaskSet};
use rtlab_sim::{PartitionedPolicy, SchedulerSpec};

use crate::usage::usage;

/// `set` with every task's `cpu` placed by `--partition HEURISTIC`, each
/// processor admitted by the exact uniprocessor test of the partitioned
/// scheduler's policy (rtlab-analysis's `partition`).
pub fn partitioned(
    set: &rtlab_model::TaskSet,
    spec: &SchedulerSpec,
    heuristic: &str,
) -> anyhow::Result<rtlab_model::TaskSet> {
    use rtlab_analysis::partition::{partition, Heuristic};
    let SchedulerSpec::Partitioned(policy) = spec else {
        return Err(usage(format!(
            "--partition places tasks for a partitioned scheduler (pedf, pfp:rm|dm|given), not {spec}"
        )));
    };
    let h = Heuristic::from_name(heuristic).ok_or_else(|| {
        usage(format!(
            "--partition `{}`: use {}",
            printable(heuristic),
            Heuristic::names()
        ))
    })?;
    let test = match policy {
        PartitionedPolicy::Edf => "edf:edf-demand".to_string(),
        PartitionedPolicy::Fp(p) => format!("{}:rta", p.name()),
    };
    let test = rtlab_analysis::sweep::SweepTest::parse(&test).map_err(anyhow::Error::msg)?;
    let m = set.processors();
    let placed = partition(set, m, h, test, &rtlab_analysis::suite::Options::default())?;
    if let Some(task) = placed.unplaced {
        anyhow::bail!(
            "--partition {}: task `{}` fits on none of the {m} processors ({} admits each processor); nothing was done",
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
