//! What rtlab's user-space dispatcher costs on this machine, as functions
//! of the number n of task threads (`rtlab characterize --dispatcher`):
//! the `[dispatcher]` table of the overheads file, which `rtlab sim
//! --dispatcher` charges and the analysis can read.
//!
//! For each n, one run of a synthetic set through the dispatcher (EDF,
//! n tasks with periods 2(i+2) ms and U = 0.4 in all, released together
//! at 0 so that every hyperperiod has preemptions, completions and idle
//! dispatches): the cost of each deciding turn (wake-up, hooks, `pick`,
//! the priority changes), the dispatch latency (decision to the chosen
//! thread running, its own clock reading) and how late its timer woke it
//! for releases, summarised as the other
//! scenarios are ([`CostStats`], the histogram's three significant
//! digits). The statistic `--stat` picks is fitted `a*n + b` by least
//! squares ([`fit_line`]), as C_preempt is.

use std::sync::atomic::AtomicBool;

use rtlab_model::overheads::DispatcherModel;
use rtlab_model::policy::RunPolicy;
use rtlab_model::{Nanos, Task, TaskSet};
use rtlab_rt::dispatcher::costs::Percentiles;
use rtlab_rt::dispatcher::{run_dispatched, DispatchConfig};
use rtlab_rt::executor::RunConfig;
use rtlab_rt::RtError;
use rtlab_sim::SchedulerSpec;
use serde::Serialize;

use super::fit::{fit_line, CostStats, LineFit, Statistic};

/// How long the set runs at each n.
pub const RUN_PER_N: Nanos = Nanos::from_secs(1);

/// The dispatcher at one n.
#[derive(Debug, Clone, Serialize)]
pub struct DispatcherPoint {
    /// Task threads.
    pub n: usize,
    /// A deciding turn.
    pub decision: CostStats,
    /// A decision to the chosen thread running.
    pub latency: CostStats,
    /// How late the dispatcher's timer woke it for releases.
    pub wake: CostStats,
    /// The dispatcher's share of the CPU.
    pub cpu_share: f64,
}

/// The dispatcher's points and lines.
#[derive(Debug, Clone, Serialize)]
pub struct DispatcherCharacterization {
    /// Per n.
    pub points: Vec<DispatcherPoint>,
    /// The statistic fitted.
    pub stat: Statistic,
    /// The decision cost's line.
    pub decision: Option<LineFit>,
    /// The dispatch latency's line.
    pub latency: Option<LineFit>,
    /// The timer wake-up's line.
    pub wake: Option<LineFit>,
}

impl DispatcherCharacterization {
    /// The `[dispatcher]` table (negative parts clamped to 0, with notes).
    pub fn model(&self) -> Option<(DispatcherModel, Vec<String>)> {
        let (decision, mut notes) = self.decision.as_ref()?.to_cost("dispatcher decision");
        let (latency, more) = self.latency.as_ref()?.to_cost("dispatcher latency");
        notes.extend(more);
        let (wake, more) = self.wake.as_ref()?.to_cost("dispatcher wake");
        notes.extend(more);
        Some((
            DispatcherModel {
                decision,
                latency,
                wake,
            },
            notes,
        ))
    }
}

fn stats(p: &Percentiles) -> CostStats {
    CostStats {
        count: p.count as usize,
        min_ns: p.min_ns,
        median_ns: p.p50_ns,
        p99_ns: p.p99_ns,
        p999_ns: p.p999_ns,
        max_ns: p.max_ns,
    }
}

/// The synthetic set of `n` tasks.
pub fn synthetic_set(n: usize) -> TaskSet {
    let tasks = (0..n)
        .map(|i| {
            let period = Nanos::from_ms(2 * (i as u64 + 2));
            let wcet = Nanos::from_ns((period.as_ns() as f64 * 0.4 / n as f64) as u64)
                .max(Nanos::from_us(20));
            Task::new(format!("d{i}"), period, wcet)
        })
        .collect();
    TaskSet::new(format!("dispatcher-{n}"), tasks)
}

/// Measures the dispatcher at every n of `threads` on `cpu`, fitting
/// `stat`; `stop` (Ctrl-C) ends it with what was measured.
pub fn measure(
    cpu: usize,
    threads: &[usize],
    stat: Statistic,
    stop: &AtomicBool,
) -> Result<DispatcherCharacterization, RtError> {
    let mut points = Vec::new();
    for &n in threads {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let set = synthetic_set(n);
        let mut cfg = RunConfig::new(RUN_PER_N, RunPolicy::FifoOrder);
        cfg.cpu = Some(cpu);
        let d = DispatchConfig::new(SchedulerSpec::Edf);
        let (report, _, _) = run_dispatched(&set, &cfg, &d, stop, Vec::new())?;
        let Some(costs) = report.dispatcher else {
            continue;
        };
        if costs.decision_cost.count == 0
            || costs.dispatch_latency.count == 0
            || costs.wake_latency.count == 0
        {
            continue;
        }
        points.push(DispatcherPoint {
            n,
            decision: stats(&costs.decision_cost),
            latency: stats(&costs.dispatch_latency),
            wake: stats(&costs.wake_latency),
            cpu_share: costs.cpu_share,
        });
    }
    let line = |f: fn(&DispatcherPoint) -> &CostStats| {
        let rows: Vec<(u64, u64)> = points
            .iter()
            .map(|p| (p.n as u64, f(p).get(stat)))
            .collect();
        fit_line(&rows)
    };
    Ok(DispatcherCharacterization {
        decision: line(|p| &p.decision),
        latency: line(|p| &p.latency),
        wake: line(|p| &p.wake),
        stat,
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_synthetic_set_has_n_tasks_at_forty_percent() {
        for n in [2, 8, 20] {
            let set = synthetic_set(n);
            assert_eq!(set.tasks.len(), n);
            assert!(
                (set.utilization() - 0.4).abs() < 0.01,
                "{n}: {}",
                set.utilization()
            );
            assert!(set.errors().is_empty());
        }
    }
}
