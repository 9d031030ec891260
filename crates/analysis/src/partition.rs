//! Partitioning a task set onto `m` processors with the classic bin-packing
//! heuristics, each processor admitted by an exact uniprocessor test
//! (Dhall & Liu, *On a real-time scheduling problem*, Operations Research
//! 26(1), 1978, for RM-FF; Lopez, Diaz & Garcia, *Utilization bounds for
//! EDF scheduling on real-time multiprocessor systems*, Real-Time Systems
//! 28(1), 2004, for the fit rules under EDF).
//!
//! A heuristic is a **fit rule** and a **task order**:
//!
//! - order: the file's (`ff`), or decreasing utilization `Ci/Ti`
//!   (`ff-decreasing`, also spelt `ff-decreasing-util`), or decreasing
//!   density `Ci/min(Di, Ti)` (`ff-decreasing-density`); ties keep file
//!   order (the sort is stable and compares the fractions exactly);
//! - fit, among the processors whose tasks *with the new one* pass the
//!   uniprocessor test:
//!   - `ff` first fit: the lowest-numbered;
//!   - `bf` best fit: the one with the **largest** utilization before
//!     placing (least remaining capacity);
//!   - `wf` worst fit: the one with the **smallest** utilization (most
//!     remaining capacity);
//!   - `nf` next fit: only the current processor; when it does not admit
//!     the task the current processor moves on to the next one, for good
//!     (never back).
//!
//!   Ties in utilization (compared in `f64`, summed in the order the tasks
//!   were placed) go to the lowest-numbered processor.
//!
//! A task that no processor admits stops the heuristic: the [`Partition`]
//! names it and keeps the tasks placed so far (a result, not an error).
//! `cpu` fields the set already has are ignored: every task is placed
//! afresh. Clusters are ignored too (partitioning uses every processor).

use std::cmp::Ordering;

use rtlab_model::TaskSet;

use crate::error::AnalysisError;
use crate::schema::{PartitionDocument, PlacedTaskDocument};
use crate::suite::Options;
use crate::sweep::{run_test, SweepTest};
use crate::verdict::Verdict;

/// Where a task goes among the processors that admit it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fit {
    /// The lowest-numbered processor that admits the task.
    First,
    /// The admitting processor with the largest utilization.
    Best,
    /// The admitting processor with the smallest utilization.
    Worst,
    /// The current processor, else the next one for good.
    Next,
}

/// The order tasks are placed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskOrder {
    /// The set's order.
    Given,
    /// Decreasing `Ci/Ti` (stable).
    DecreasingUtilization,
    /// Decreasing `Ci/min(Di, Ti)` (stable).
    DecreasingDensity,
}

/// A bin-packing heuristic: a fit rule and a task order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Heuristic {
    /// The fit rule.
    pub fit: Fit,
    /// The task order.
    pub order: TaskOrder,
}

impl Heuristic {
    /// First fit, decreasing utilization: the usual choice.
    pub const FIRST_FIT_DECREASING: Heuristic = Heuristic {
        fit: Fit::First,
        order: TaskOrder::DecreasingUtilization,
    };

    /// Every heuristic, in the order of [`Heuristic::name`]s in help texts.
    pub fn all() -> Vec<Heuristic> {
        let mut out = Vec::new();
        for fit in [Fit::First, Fit::Best, Fit::Worst, Fit::Next] {
            for order in [
                TaskOrder::Given,
                TaskOrder::DecreasingUtilization,
                TaskOrder::DecreasingDensity,
            ] {
                out.push(Heuristic { fit, order });
            }
        }
        out
    }

    /// `ff`, `bf-decreasing`, `wf-decreasing-density`, ...
    pub fn name(self) -> String {
        let fit = match self.fit {
            Fit::First => "ff",
            Fit::Best => "bf",
            Fit::Worst => "wf",
            Fit::Next => "nf",
        };
        let order = match self.order {
            TaskOrder::Given => "",
            TaskOrder::DecreasingUtilization => "-decreasing",
            TaskOrder::DecreasingDensity => "-decreasing-density",
        };
        format!("{fit}{order}")
    }

    /// The heuristic with this name; `-decreasing-util` is accepted for
    /// `-decreasing`.
    pub fn from_name(name: &str) -> Option<Heuristic> {
        let name = name.strip_suffix("-util").unwrap_or(name);
        Heuristic::all().into_iter().find(|h| h.name() == name)
    }

    /// The accepted names, for messages.
    pub fn names() -> String {
        "ff, bf, wf, nf, each optionally with -decreasing (utilization, also -decreasing-util) or -decreasing-density".into()
    }
}

/// One processor of a [`Partition`].
#[derive(Debug, Clone, PartialEq)]
pub struct Bin {
    /// The tasks on it, as indices into the set, in set order.
    pub tasks: Vec<usize>,
    /// `Σ Ci/Ti` of its tasks.
    pub utilization: f64,
    /// The uniprocessor test's verdict on its tasks (`Some(true)` for an
    /// empty processor).
    pub verdict: Verdict,
}

/// The result of a heuristic: every task's processor, or the first task
/// that no processor admitted.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    /// The heuristic used.
    pub heuristic: Heuristic,
    /// The uniprocessor test that admitted each processor.
    pub test: SweepTest,
    /// The processor of each task, in set order (`None`: not placed).
    pub cpu: Vec<Option<u32>>,
    /// The processors, `0 .. m`.
    pub bins: Vec<Bin>,
    /// The first task (index) that no processor admitted.
    pub unplaced: Option<usize>,
}

impl Partition {
    /// True when every task was placed.
    pub fn fits(&self) -> bool {
        self.unplaced.is_none()
    }

    /// The processor of every task when all were placed.
    pub fn assignment(&self) -> Option<Vec<u32>> {
        self.cpu.iter().copied().collect()
    }

    /// The set with each task's `cpu` set to its processor (unplaced tasks
    /// keep none) on `m` processors without clusters: a partitioned file.
    pub fn apply(&self, set: &TaskSet) -> TaskSet {
        let mut out = set.clone();
        out.platform = rtlab_model::Platform::new(self.bins.len() as u32);
        for (task, cpu) in out.tasks.iter_mut().zip(&self.cpu) {
            task.cpu = *cpu;
        }
        out
    }
}

impl Partition {
    /// The `rtlab partition --json` document of this partition of `set`.
    pub fn document(&self, set: &TaskSet, origin: &str) -> PartitionDocument {
        let bins: Vec<Vec<usize>> = self.bins.iter().map(|b| b.tasks.clone()).collect();
        PartitionDocument {
            fits: self.fits(),
            heuristic: self.heuristic.name(),
            origin: origin.to_string(),
            processors: crate::multiprocessor::processor_documents(set, &bins, &[self.test]),
            tasks: set
                .tasks
                .iter()
                .zip(&self.cpu)
                .map(|(t, &cpu)| PlacedTaskDocument {
                    cpu,
                    name: t.name.clone(),
                    utilization: t.utilization(),
                })
                .collect(),
            taskset: set.name.clone(),
            test: self.test.name(),
            unplaced: self.unplaced.map(|i| set.tasks[i].name.clone()),
        }
    }
}

/// The tasks `indices` of `set` as a set of their own, in set order.
fn subset(set: &TaskSet, indices: &[usize]) -> TaskSet {
    let mut sorted = indices.to_vec();
    sorted.sort_unstable();
    TaskSet::new(
        set.name.clone(),
        sorted.iter().map(|&i| set.tasks[i].clone()).collect(),
    )
}

/// Whether the tasks `indices` pass `test` on one processor.
fn admits(set: &TaskSet, indices: &[usize], test: SweepTest, options: &Options) -> bool {
    run_test(&subset(set, indices), test, options) == Some(true)
}

/// `a/b` against `c/d`, exactly.
fn cmp_fraction(a: u64, b: u64, c: u64, d: u64) -> Ordering {
    (u128::from(a) * u128::from(d)).cmp(&(u128::from(c) * u128::from(b)))
}

/// The order tasks are placed in under `order`.
pub fn placement_order(set: &TaskSet, order: TaskOrder) -> Vec<usize> {
    let mut indices: Vec<usize> = (0..set.tasks.len()).collect();
    let t = &set.tasks;
    match order {
        TaskOrder::Given => {}
        TaskOrder::DecreasingUtilization => indices.sort_by(|&a, &b| {
            cmp_fraction(
                t[b].wcet.as_ns(),
                t[b].period.as_ns(),
                t[a].wcet.as_ns(),
                t[a].period.as_ns(),
            )
        }),
        TaskOrder::DecreasingDensity => indices.sort_by(|&a, &b| {
            let window = |i: usize| t[i].deadline.min(t[i].period).as_ns();
            cmp_fraction(t[b].wcet.as_ns(), window(b), t[a].wcet.as_ns(), window(a))
        }),
    }
    indices
}

/// Places the tasks of `set` on `m` processors with `heuristic`, admitting
/// each processor by the uniprocessor `test` (e.g. `dm:rta`,
/// `edf:edf-demand`; any policy:test of `rtlab analyze` works, the
/// overhead-aware ones with `options`' overheads).
pub fn partition(
    set: &TaskSet,
    m: u32,
    heuristic: Heuristic,
    test: SweepTest,
    options: &Options,
) -> Result<Partition, AnalysisError> {
    if set.tasks.is_empty() {
        return Err(AnalysisError::EmptySet);
    }
    // A test that cannot read the set admits no processor: say why, rather
    // than "fits no processor".
    test.check(set, options)?;
    let m = m.max(1) as usize;
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); m];
    let mut load = vec![0.0f64; m];
    let mut cpu = vec![None; set.tasks.len()];
    let mut unplaced = None;
    let mut current = 0usize;
    for task in placement_order(set, heuristic.order) {
        // Each placement runs a processor's test (O(n) or more): stop when
        // the caller's flag is raised (rtlab_model::cancel), the partition
        // then incomplete and thrown away by the caller.
        if rtlab_model::cancel::requested() {
            unplaced = unplaced.or(Some(task));
            break;
        }
        let fits = |bins: &[Vec<usize>], k: usize| {
            let mut with = bins[k].clone();
            with.push(task);
            admits(set, &with, test, options)
        };
        let chosen = match heuristic.fit {
            Fit::First => (0..m).find(|&k| fits(&bins, k)),
            Fit::Next => {
                while current < m && !fits(&bins, current) {
                    current += 1;
                }
                (current < m).then_some(current)
            }
            Fit::Best | Fit::Worst => {
                let mut best: Option<usize> = None;
                for k in 0..m {
                    let better = match best {
                        None => true,
                        Some(b) if heuristic.fit == Fit::Best => load[k] > load[b],
                        Some(b) => load[k] < load[b],
                    };
                    if better && fits(&bins, k) {
                        best = Some(k);
                    }
                }
                best
            }
        };
        match chosen {
            Some(k) => {
                bins[k].push(task);
                load[k] += set.tasks[task].utilization();
                cpu[task] = Some(k as u32);
            }
            None => {
                unplaced = Some(task);
                break;
            }
        }
    }
    let bins = bins
        .into_iter()
        .map(|mut tasks| {
            tasks.sort_unstable();
            let verdict = if tasks.is_empty() {
                Some(true)
            } else {
                run_test(&subset(set, &tasks), test, options)
            };
            let utilization = tasks.iter().map(|&i| set.tasks[i].utilization()).sum();
            Bin {
                tasks,
                utilization,
                verdict,
            }
        })
        .collect();
    Ok(Partition {
        heuristic,
        test,
        cpu,
        bins,
        unplaced,
    })
}

/// The uniprocessor verdict of each processor of a given assignment (the
/// set's `cpu` fields): the [`Bin`]s of `m` processors. `None` when a task
/// has no `cpu` or names a processor at or above `m`.
pub fn check_assignment(
    set: &TaskSet,
    m: u32,
    test: SweepTest,
    options: &Options,
) -> Option<Vec<Bin>> {
    let assignment = set.assignment()?;
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); m as usize];
    for (task, &cpu) in assignment.iter().enumerate() {
        bins.get_mut(cpu as usize)?.push(task);
    }
    Some(
        bins.into_iter()
            .map(|tasks| Bin {
                utilization: tasks.iter().map(|&i| set.tasks[i].utilization()).sum(),
                verdict: if tasks.is_empty() {
                    Some(true)
                } else {
                    run_test(&subset(set, &tasks), test, options)
                },
                tasks,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::{Nanos, Task};

    fn set(tasks: &[(u64, u64)]) -> TaskSet {
        TaskSet::new(
            "s",
            tasks
                .iter()
                .enumerate()
                .map(|(i, &(c, t))| {
                    Task::new(format!("t{i}"), Nanos::from_ms(t), Nanos::from_ms(c))
                })
                .collect(),
        )
    }

    /// A test that cannot read the set refuses it, naming why, instead of
    /// "fits no processor" (issue 39).
    #[test]
    fn a_test_that_cannot_read_the_set_is_refused() {
        let s = set(&[(1, 10), (2, 20)]);
        let given = SweepTest::parse("given:rta").unwrap();
        let ff = Heuristic::from_name("ff").unwrap();
        assert_eq!(
            partition(&s, 2, ff, given, &Options::default()).unwrap_err(),
            AnalysisError::MissingPriority("t0".into())
        );
        let costs = SweepTest::parse("edf:edf-demand-overheads").unwrap();
        assert_eq!(
            partition(&s, 2, ff, costs, &Options::default()).unwrap_err(),
            AnalysisError::MissingOverheads("edf:edf-demand-overheads".into())
        );
    }

    fn run(s: &TaskSet, m: u32, h: &str, test: &str) -> Partition {
        partition(
            s,
            m,
            Heuristic::from_name(h).unwrap(),
            SweepTest::parse(test).unwrap(),
            &Options::default(),
        )
        .unwrap()
    }

    #[test]
    fn names_round_trip() {
        for h in Heuristic::all() {
            assert_eq!(Heuristic::from_name(&h.name()), Some(h));
        }
        assert_eq!(
            Heuristic::from_name("ff-decreasing-util"),
            Some(Heuristic::FIRST_FIT_DECREASING)
        );
        assert_eq!(Heuristic::from_name("xf"), None);
        assert_eq!(Heuristic::all().len(), 12);
    }

    /// Utilizations 0.5, 0.3, 0.4, 0.6 (periods 10 ms) on two processors
    /// under EDF (admit iff U <= 1), worked by hand:
    /// - ff: 0.5→P0, 0.3→P0 (0.8), 0.4→P1, 0.6→P1 (1.0);
    /// - ffd (0.6, 0.5, 0.4, 0.3): 0.6→P0, 0.5→P1, 0.4→P0 (1.0), 0.3→P1 (0.8);
    /// - bf: 0.5→P0 (tie: lowest), 0.3→P0 (fullest, 0.8), 0.4→P1, 0.6→P1;
    /// - wf: 0.5→P0, 0.3→P1, 0.4→P1 (0.3 < 0.5: emptiest, 0.7), 0.6 fits
    ///   neither (1.1, 1.3): unplaced;
    /// - nf: 0.5, 0.3→P0; 0.4 does not fit P0 → P1 for good; 0.6→P1.
    #[test]
    fn each_fit_rule_by_hand() {
        let s = set(&[(5, 10), (3, 10), (4, 10), (6, 10)]);
        let cpus = |p: &Partition| p.cpu.clone();
        let edf = "edf:edf-demand";
        assert_eq!(
            cpus(&run(&s, 2, "ff", edf)),
            [Some(0), Some(0), Some(1), Some(1)]
        );
        assert_eq!(
            cpus(&run(&s, 2, "ff-decreasing", edf)),
            [Some(1), Some(1), Some(0), Some(0)]
        );
        assert_eq!(
            cpus(&run(&s, 2, "bf", edf)),
            [Some(0), Some(0), Some(1), Some(1)]
        );
        let wf = run(&s, 2, "wf", edf);
        assert_eq!(cpus(&wf), [Some(0), Some(1), Some(1), None]);
        assert_eq!(wf.unplaced, Some(3));
        assert!(!wf.fits());
        assert_eq!(
            cpus(&run(&s, 2, "nf", edf)),
            [Some(0), Some(0), Some(1), Some(1)]
        );
        let ffd = run(&s, 2, "ff-decreasing", edf);
        assert!(ffd.fits());
        assert!((ffd.bins[0].utilization - 1.0).abs() < 1e-12);
        assert_eq!(ffd.bins[0].tasks, [2, 3]);
        assert_eq!(ffd.bins[1].verdict, Some(true));
    }

    /// Utilizations 0.2, 0.5, 0.4, 0.3 under EDF on two processors:
    /// - bf: 0.2→P0 (tie), 0.5→P0 (fuller, 0.7), 0.4→P1 (1.1 on P0),
    ///   0.3→P0 (fuller: 0.7 > 0.4; 1.0 fits);
    /// - wf: 0.2→P0 (tie), 0.5→P1 (emptier), 0.4→P0 (0.2 < 0.5, 0.6),
    ///   0.3→P1 (0.5 < 0.6, 0.8).
    #[test]
    fn best_and_worst_fit_pick_by_load() {
        let s = set(&[(2, 10), (5, 10), (4, 10), (3, 10)]);
        let edf = "edf:edf-demand";
        assert_eq!(
            run(&s, 2, "bf", edf).cpu,
            [Some(0), Some(0), Some(1), Some(0)]
        );
        assert_eq!(
            run(&s, 2, "wf", edf).cpu,
            [Some(0), Some(1), Some(0), Some(1)]
        );
    }

    /// Under RM the admission is the exact RTA, not U <= 1: C = (2, 3) with
    /// T = (4, 6) has U = 1 and RTA gives R2 = 3 + 2·⌈7/4⌉ = 7 > 6, so ff
    /// on RM puts them apart while EDF (U <= 1) keeps them together.
    #[test]
    fn admission_is_the_uniprocessor_test() {
        let s = set(&[(2, 4), (3, 6)]);
        assert_eq!(run(&s, 2, "ff", "rm:rta").cpu, [Some(0), Some(1)]);
        assert_eq!(run(&s, 2, "ff", "edf:edf-demand").cpu, [Some(0), Some(0)]);
        let applied = run(&s, 2, "ff", "rm:rta").apply(&s);
        assert_eq!(applied.processors(), 2);
        assert_eq!(applied.assignment(), Some(vec![0, 1]));
        let bins = check_assignment(
            &applied,
            2,
            SweepTest::parse("rm:rta").unwrap(),
            &Options::default(),
        )
        .unwrap();
        assert_eq!(
            bins.iter().map(|b| b.verdict).collect::<Vec<_>>(),
            [Some(true), Some(true)]
        );
    }
}
