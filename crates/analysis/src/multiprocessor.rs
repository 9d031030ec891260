//! Every multiprocessor test by one name, for `rtlab analyze --cpus`,
//! `rtlab sweep --cpus` and the simulator's soundness tests.
//!
//! | name | scheduler | test |
//! | --- | --- | --- |
//! | `gedf:gfb` | global EDF | [`global::gfb`] |
//! | `gedf:bak` | global EDF | [`global::bak`] |
//! | `gedf:bcl` | global EDF | [`global::bcl`] |
//! | `gedf:rta` | global EDF | [`global::edf_rta`] |
//! | `gfp-ORDER:rta` | global FP | [`global::fp_rta`] |
//! | `gfp-ORDER:rta-lc` | global FP | [`global::rta_lc`] |
//! | `pedf:HEURISTIC` | partitioned EDF | [`partition`] with `edf:edf-demand` per processor |
//! | `pfp-ORDER:HEURISTIC` | partitioned FP | [`partition`] with `ORDER:rta` per processor |
//!
//! `ORDER` is `rm`, `dm`, `given` or (global only) `dkc`; `gfp:` and `pfp:`
//! without one mean DM (the usual order for constrained deadlines).
//! `HEURISTIC` is a [`Heuristic`] name (`ff-decreasing`, `wf`, ...).
//! `p-edf:` is accepted for `pedf:`.

use rtlab_model::TaskSet;

use crate::error::AnalysisError;
use crate::global::priority::GlobalPriority;
use crate::global::{self, bak, bcl, edf_rta, fp_rta, gfb, rta_lc, Work};
use crate::partition::{self, Heuristic, Partition};
use crate::schema::{
    MultiprocessorAnalyzeDocument, MultiprocessorTaskDocument, MultiprocessorTestDocument,
    ProcessorDocument,
};
use crate::suite::Options;
use crate::sweep::{run_test, SweepTest};
use crate::verdict::{Response, Test, Verdict};
use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};

/// A global EDF test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GedfTest {
    /// Goossens, Funk & Baruah's density bound.
    Gfb,
    /// Baker 2003.
    Bak,
    /// Bertogna, Cirinei & Lipari 2009.
    Bcl,
    /// Bertogna & Cirinei 2007 RTA with slack iteration.
    Rta,
}

/// A global fixed-priority test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GfpTest {
    /// Bertogna & Cirinei 2007 RTA.
    Rta,
    /// Guan, Stigge, Yi & Yu 2009 RTA with limited carry-in.
    RtaLc,
}

/// The uniprocessor scheduler of each processor of a partitioned test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Partitioned {
    /// EDF, admitted by the exact demand test.
    Edf,
    /// Fixed priorities (RM, DM or given), admitted by exact RTA.
    Fixed(PriorityAssignment),
}

impl Partitioned {
    /// The uniprocessor test admitting each processor.
    pub fn uniprocessor_test(self) -> SweepTest {
        match self {
            Partitioned::Edf => SweepTest {
                policy: AnalysedPolicy::Edf,
                test: Test::EdfDemand,
            },
            Partitioned::Fixed(p) => SweepTest {
                policy: AnalysedPolicy::Fixed(p),
                test: Test::Rta,
            },
        }
    }
}

/// A schedulability test on `m` processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MultiprocessorTest {
    /// Global EDF.
    Gedf(GedfTest),
    /// Global fixed priorities in an order.
    Gfp(GlobalPriority, GfpTest),
    /// Partitioned by a heuristic, each processor uniprocessor-exact.
    Partitioned(Partitioned, Heuristic),
}

impl MultiprocessorTest {
    /// The tests `rtlab analyze --cpus M` runs, cheapest first.
    pub const ALL: [MultiprocessorTest; 10] = [
        MultiprocessorTest::Gedf(GedfTest::Gfb),
        MultiprocessorTest::Gedf(GedfTest::Bak),
        MultiprocessorTest::Gedf(GedfTest::Bcl),
        MultiprocessorTest::Gedf(GedfTest::Rta),
        MultiprocessorTest::Gfp(GlobalPriority::Dm, GfpTest::Rta),
        MultiprocessorTest::Gfp(GlobalPriority::Dm, GfpTest::RtaLc),
        MultiprocessorTest::Gfp(GlobalPriority::Dkc, GfpTest::Rta),
        MultiprocessorTest::Gfp(GlobalPriority::Dkc, GfpTest::RtaLc),
        MultiprocessorTest::Partitioned(Partitioned::Edf, Heuristic::FIRST_FIT_DECREASING),
        MultiprocessorTest::Partitioned(
            Partitioned::Fixed(PriorityAssignment::DeadlineMonotonic),
            Heuristic::FIRST_FIT_DECREASING,
        ),
    ];

    /// The stable name (`gedf:bcl`, `gfp-dkc:rta-lc`, `pedf:ff-decreasing`).
    pub fn name(self) -> String {
        match self {
            MultiprocessorTest::Gedf(t) => format!(
                "gedf:{}",
                match t {
                    GedfTest::Gfb => "gfb",
                    GedfTest::Bak => "bak",
                    GedfTest::Bcl => "bcl",
                    GedfTest::Rta => "rta",
                }
            ),
            MultiprocessorTest::Gfp(order, t) => format!(
                "gfp-{}:{}",
                order.name(),
                match t {
                    GfpTest::Rta => "rta",
                    GfpTest::RtaLc => "rta-lc",
                }
            ),
            MultiprocessorTest::Partitioned(Partitioned::Edf, h) => format!("pedf:{}", h.name()),
            MultiprocessorTest::Partitioned(Partitioned::Fixed(p), h) => {
                format!("pfp-{}:{}", p.name(), h.name())
            }
        }
    }

    /// Parses a name; `Err` says what is accepted.
    pub fn from_name(text: &str) -> Result<MultiprocessorTest, String> {
        let usage = || {
            format!(
                "invalid multiprocessor test `{text}`: write gedf:gfb|bak|bcl|rta, \
                 gfp[:rm|:dm|:given|:dkc]:rta|rta-lc, pedf:HEURISTIC or pfp[:rm|:dm|:given]:HEURISTIC (or gfp-dm, pfp-dm, ...) \
                 (HEURISTIC: {})",
                Heuristic::names()
            )
        };
        // The scheduler as the simulator spells it (`gfp:dm:rta`) or with a
        // dash (`gfp-dm:rta`): the test is after the last `:`.
        let (scheduler, test) = text.rsplit_once(':').ok_or_else(usage)?;
        let fixed = |order: &str| match order {
            "" | "-dm" | ":dm" => Some(PriorityAssignment::DeadlineMonotonic),
            "-rm" | ":rm" => Some(PriorityAssignment::RateMonotonic),
            "-given" | ":given" => Some(PriorityAssignment::Given),
            _ => None,
        };
        if scheduler == "gedf" {
            let t = match test {
                "gfb" => GedfTest::Gfb,
                "bak" => GedfTest::Bak,
                "bcl" => GedfTest::Bcl,
                "rta" => GedfTest::Rta,
                _ => return Err(usage()),
            };
            return Ok(MultiprocessorTest::Gedf(t));
        }
        if let Some(order) = scheduler.strip_prefix("gfp") {
            let order = match order {
                "" => GlobalPriority::Dm,
                o => o
                    .strip_prefix(['-', ':'])
                    .and_then(GlobalPriority::from_name)
                    .ok_or_else(usage)?,
            };
            let t = match test {
                "rta" => GfpTest::Rta,
                "rta-lc" => GfpTest::RtaLc,
                _ => return Err(usage()),
            };
            return Ok(MultiprocessorTest::Gfp(order, t));
        }
        let heuristic = Heuristic::from_name(test).ok_or_else(usage)?;
        let kind = match scheduler {
            "pedf" | "p-edf" => Partitioned::Edf,
            s => Partitioned::Fixed(
                s.strip_prefix("pfp")
                    .or_else(|| s.strip_prefix("p-fp"))
                    .and_then(fixed)
                    .ok_or_else(usage)?,
            ),
        };
        Ok(MultiprocessorTest::Partitioned(kind, heuristic))
    }

    /// True for the global tests (which ignore `cpu` fields, and so are
    /// refused for a set whose every task has one).
    pub fn is_global(self) -> bool {
        !matches!(self, MultiprocessorTest::Partitioned(..))
    }

    /// The paper, for tables.
    pub fn paper(self) -> &'static str {
        match self {
            MultiprocessorTest::Gedf(GedfTest::Gfb) => "Goossens, Funk & Baruah 2003",
            MultiprocessorTest::Gedf(GedfTest::Bak) => "Baker 2003",
            MultiprocessorTest::Gedf(GedfTest::Bcl) => "Bertogna, Cirinei & Lipari 2009",
            MultiprocessorTest::Gedf(GedfTest::Rta) | MultiprocessorTest::Gfp(_, GfpTest::Rta) => {
                "Bertogna & Cirinei 2007"
            }
            MultiprocessorTest::Gfp(_, GfpTest::RtaLc) => "Guan, Stigge, Yi & Yu 2009",
            MultiprocessorTest::Partitioned(..) => "bin packing + exact uniprocessor test",
        }
    }
}

impl std::fmt::Display for MultiprocessorTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&self.name())
    }
}

impl MultiprocessorTest {
    /// True when the test reads the tasks' `priority` fields (`gfp-given`,
    /// `pfp-given`).
    pub fn reads_priorities(self) -> bool {
        matches!(
            self,
            MultiprocessorTest::Gfp(GlobalPriority::Given, _)
                | MultiprocessorTest::Partitioned(Partitioned::Fixed(PriorityAssignment::Given), _)
        )
    }

    /// Refuses a set the test cannot read (a task without a priority under
    /// a `-given` test), instead of a verdict of "not proven".
    pub fn check(self, set: &TaskSet) -> Result<(), AnalysisError> {
        match self {
            MultiprocessorTest::Partitioned(kind, _) => {
                kind.uniprocessor_test().check(set, &Options::default())
            }
            _ if self.reads_priorities() => {
                crate::priority::assign(set, PriorityAssignment::Given).map(|_| ())
            }
            _ => Ok(()),
        }
    }
}

/// A multiprocessor test's result on one set.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiprocessorOutcome {
    /// The test.
    pub test: MultiprocessorTest,
    /// `Some(true)` proven schedulable, `None` not proven, `Some(false)`
    /// infeasible (`U > m`) or, partitioned, a task fits no processor is
    /// still `None` (another partition might exist).
    pub schedulable: Verdict,
    /// Response-time bounds (the RTAs), in task order; empty otherwise.
    pub responses: Vec<Response>,
    /// The partition found (partitioned tests).
    pub partition: Option<Partition>,
    /// The analysis reached its [`global::WORK_CAP`] and gave up: what it
    /// did not bound is "not proven" for that reason.
    pub gave_up: bool,
}

/// Runs `test` on `set` on `m` processors (the set's own platform is not
/// read: pass `set.processors()` or the `--cpus` override).
pub fn analyse(set: &TaskSet, m: u32, test: MultiprocessorTest) -> MultiprocessorOutcome {
    let mut out = MultiprocessorOutcome {
        test,
        schedulable: None,
        responses: Vec::new(),
        partition: None,
        gave_up: false,
    };
    match test {
        MultiprocessorTest::Gedf(GedfTest::Gfb) => out.schedulable = gfb::verdict(set, m),
        MultiprocessorTest::Gedf(GedfTest::Bak) => out.schedulable = bak::verdict(set, m),
        MultiprocessorTest::Gedf(GedfTest::Bcl) => out.schedulable = bcl::verdict(set, m),
        // Each RTA once, its verdict from its bounds, within its work cap.
        MultiprocessorTest::Gedf(GedfTest::Rta) => {
            let work = Work::default();
            out.responses = edf_rta::response_times_within(set, m, &work);
            out.schedulable = global::verdict_of(set, m, &out.responses);
            out.gave_up = work.gave_up();
        }
        MultiprocessorTest::Gfp(order, GfpTest::Rta) => {
            let work = Work::default();
            out.responses = fp_rta::response_times_within(set, m, order, &work);
            out.schedulable = global::verdict_of(set, m, &out.responses);
            out.gave_up = work.gave_up();
        }
        MultiprocessorTest::Gfp(order, GfpTest::RtaLc) => {
            let work = Work::default();
            out.responses = rta_lc::response_times_within(set, m, order, &work);
            out.schedulable = global::verdict_of(set, m, &out.responses);
            out.gave_up = work.gave_up();
        }
        MultiprocessorTest::Partitioned(kind, heuristic) => {
            if global::exceeds_processors(set, m) {
                out.schedulable = Some(false);
            }
            let found = partition::partition(
                set,
                m,
                heuristic,
                kind.uniprocessor_test(),
                &Options::default(),
            )
            .ok();
            if out.schedulable.is_none() {
                out.schedulable = found.as_ref().and_then(|p| p.fits().then_some(true));
            }
            out.partition = found;
        }
    }
    out
}

/// The verdict of `test` on `set` on `m` processors (what a sweep counts).
pub fn decide(set: &TaskSet, m: u32, test: MultiprocessorTest) -> Verdict {
    match test {
        MultiprocessorTest::Gedf(GedfTest::Rta) => edf_rta::verdict(set, m),
        MultiprocessorTest::Gfp(order, GfpTest::Rta) => fp_rta::verdict(set, m, order),
        MultiprocessorTest::Gfp(order, GfpTest::RtaLc) => rta_lc::verdict(set, m, order),
        _ => analyse(set, m, test).schedulable,
    }
}

/// The uniprocessor tests `analyze` applies to each processor of a set's
/// own `cpu` assignment: P-EDF (exact demand) and P-DM (exact RTA).
pub fn assignment_tests() -> [SweepTest; 2] {
    [
        Partitioned::Edf.uniprocessor_test(),
        Partitioned::Fixed(PriorityAssignment::DeadlineMonotonic).uniprocessor_test(),
    ]
}

/// The processors of a partition as documents: their tasks, utilization
/// and the verdict of each of `tests` on them.
pub fn processor_documents(
    set: &TaskSet,
    bins: &[Vec<usize>],
    tests: &[SweepTest],
) -> Vec<ProcessorDocument> {
    bins.iter()
        .enumerate()
        .map(|(cpu, tasks)| {
            let on_it = TaskSet::new(
                set.name.clone(),
                tasks.iter().map(|&i| set.tasks[i].clone()).collect(),
            );
            ProcessorDocument {
                cpu: cpu as u32,
                schedulable: tests
                    .iter()
                    .map(|&t| {
                        let verdict = if tasks.is_empty() {
                            Some(true)
                        } else {
                            run_test(&on_it, t, &Options::default())
                        };
                        (t.name(), verdict)
                    })
                    .collect(),
                tasks: tasks.iter().map(|&i| set.tasks[i].name.clone()).collect(),
                // An empty sum of f64 is -0.0; a processor without tasks has 0.
                utilization: on_it.utilization() + 0.0,
            }
        })
        .collect()
}

/// `rtlab analyze` on `m` processors: every test of `tests`, the response
/// bounds of the RTAs, Devi & Anderson's tardiness bounds and, when every
/// task has a `cpu`, the verdicts of that assignment. A test the set cannot
/// be read by ([`MultiprocessorTest::check`]) is refused.
pub fn analyze_document(
    set: &TaskSet,
    origin: &str,
    m: u32,
    tests: &[MultiprocessorTest],
) -> Result<MultiprocessorAnalyzeDocument, AnalysisError> {
    for test in tests {
        test.check(set)?;
    }
    let outcomes: Vec<MultiprocessorOutcome> = tests.iter().map(|&t| analyse(set, m, t)).collect();
    let tardiness = global::tardiness::bounds(set, m);
    let assignment = set.assignment().and_then(|cpus| {
        let mut bins = vec![Vec::new(); m as usize];
        for (task, &cpu) in cpus.iter().enumerate() {
            bins.get_mut(cpu as usize)?.push(task);
        }
        Some(processor_documents(set, &bins, &assignment_tests()))
    });
    let tasks = set
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| MultiprocessorTaskDocument {
            cpu: t.cpu,
            deadline_ns: t.deadline.as_ns(),
            name: t.name.clone(),
            period_ns: t.period.as_ns(),
            response_ns: outcomes
                .iter()
                .filter(|o| !o.responses.is_empty())
                .map(|o| (o.test.name(), o.responses[i].wcrt().map(|r| r.as_ns())))
                .collect(),
            tardiness_bound_ns: tardiness.as_ref().map(|b| b[i].as_ns()),
            wcet_ns: t.wcet.as_ns(),
        })
        .collect();
    Ok(MultiprocessorAnalyzeDocument {
        assignment,
        origin: origin.to_string(),
        processors: m,
        tasks,
        taskset: set.name.clone(),
        tests: outcomes
            .iter()
            .map(|o| MultiprocessorTestDocument {
                assignment: o.partition.as_ref().and_then(Partition::assignment),
                paper: o.test.paper(),
                schedulable: o.schedulable,
                test: o.test.name(),
                unplaced: o
                    .partition
                    .as_ref()
                    .and_then(|p| p.unplaced)
                    .map(|i| set.tasks[i].name.clone()),
                gave_up: o.gave_up,
            })
            .collect(),
        utilization: set.utilization(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::global::testing::set;

    #[test]
    fn names_round_trip() {
        for t in MultiprocessorTest::ALL {
            assert_eq!(MultiprocessorTest::from_name(&t.name()), Ok(t), "{t}");
        }
        for order in GlobalPriority::ALL {
            for t in [GfpTest::Rta, GfpTest::RtaLc] {
                let test = MultiprocessorTest::Gfp(order, t);
                assert_eq!(MultiprocessorTest::from_name(&test.name()), Ok(test));
            }
        }
        for h in Heuristic::all() {
            for kind in [
                Partitioned::Edf,
                Partitioned::Fixed(PriorityAssignment::RateMonotonic),
            ] {
                let test = MultiprocessorTest::Partitioned(kind, h);
                assert_eq!(MultiprocessorTest::from_name(&test.name()), Ok(test));
            }
        }
        assert_eq!(
            MultiprocessorTest::from_name("gfp:rta").unwrap().name(),
            "gfp-dm:rta"
        );
        assert_eq!(
            MultiprocessorTest::from_name("p-edf:ff-decreasing")
                .unwrap()
                .name(),
            "pedf:ff-decreasing"
        );
        assert_eq!(
            MultiprocessorTest::from_name("pfp:wf").unwrap().name(),
            "pfp-dm:wf"
        );
        for bad in [
            "gedf",
            "gedf:x",
            "gfp-opa:rta",
            "pfp-dkc:ff",
            "pedf:zz",
            "x:rta",
        ] {
            assert!(MultiprocessorTest::from_name(bad).is_err(), "{bad}");
        }
    }

    /// Every test refuses `U > m`: four tasks of u = 0.6 on m = 2.
    #[test]
    fn every_test_rejects_more_than_m() {
        let over = set(&[(6, 10, 10); 4]);
        for test in MultiprocessorTest::ALL {
            assert_eq!(decide(&over, 2, test), Some(false), "{test}");
        }
    }

    /// `decide` agrees with `analyse` on every test.
    #[test]
    fn decide_is_analyse_verdict() {
        let s = set(&[(1, 2, 2), (1, 3, 3), (2, 4, 4), (1, 8, 8)]);
        for test in MultiprocessorTest::ALL {
            assert_eq!(
                decide(&s, 2, test),
                analyse(&s, 2, test).schedulable,
                "{test}"
            );
        }
    }

    /// The scheduler part spelt as the simulator spells it (`gfp:dm`) names
    /// the same test as the dashed spelling (`gfp-dm`).
    #[test]
    fn a_test_reads_the_simulators_spelling_of_its_scheduler() {
        for (colon, dash) in [
            ("gfp:dm:rta", "gfp-dm:rta"),
            ("gfp:rm:rta-lc", "gfp-rm:rta-lc"),
            ("pfp:dm:wf-decreasing", "pfp-dm:wf-decreasing"),
            ("pfp:given:ff", "pfp-given:ff"),
        ] {
            assert_eq!(
                MultiprocessorTest::from_name(colon),
                MultiprocessorTest::from_name(dash),
                "{colon}"
            );
            assert!(MultiprocessorTest::from_name(colon).is_ok(), "{colon}");
        }
        assert!(MultiprocessorTest::from_name("gfp:xx:rta").is_err());
    }
}
