//! Every applicable test for one scheduling policy, cheapest first, in one
//! report (what `rtlab analyze` prints), plus the exact verdict and the
//! breakdown searches built on it.

use rtlab_model::overheads::Overheads;
use rtlab_model::{Nanos, TaskSet};

use crate::blocking::{self, EdfBlocking, LockingProtocol};
use crate::breakdown::{self, Breakdown};
use crate::error::AnalysisError;
use crate::overhead_rta::{self, Platform, TimerModel};
use crate::priority::{self, Priorities};
use crate::verdict::{Outcome, Verdict};
use crate::{audsley, edf_demand, edf_overheads, edf_utilization, hyperbolic, liu_layland, rta};
use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};

/// What the suite assumes beyond the task set.
#[derive(Debug, Clone)]
pub struct Options {
    /// Locking protocol under fixed priorities (default PCP).
    pub fixed_protocol: LockingProtocol,
    /// Locking protocol under EDF (default SRP; DFP has the same bound).
    pub edf_protocol: LockingProtocol,
    /// Scheduler overheads for the paper-004 test, if any.
    pub overheads: Option<Overheads>,
    /// The timer models to run the overhead-aware test with (one outcome
    /// each); empty means the overheads file's own model
    /// ([`TimerModel::for_overheads`]: tickless when the file says nothing).
    pub timers: Vec<TimerModel>,
    /// Threads `n` for the overhead costs (default: the number of tasks).
    pub threads: Option<usize>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            fixed_protocol: LockingProtocol::Ipcp,
            edf_protocol: LockingProtocol::Srp,
            overheads: None,
            timers: Vec::new(),
            threads: None,
        }
    }
}

impl Options {
    /// The options with `protocol` as the locking protocol of the policies
    /// it applies to: `none`, `npp`, `pip`, `ipcp` under fixed priorities,
    /// `srp`, `dfp` under EDF (the other keeps its default).
    pub fn with_locking(mut self, protocol: LockingProtocol) -> Options {
        match protocol {
            LockingProtocol::None
            | LockingProtocol::Npp
            | LockingProtocol::Pip
            | LockingProtocol::Ipcp => self.fixed_protocol = protocol,
            LockingProtocol::Srp | LockingProtocol::Dfp => self.edf_protocol = protocol,
        }
        self
    }

    /// The timer models the overhead-aware test runs with: `timers` when
    /// any was given, else the overheads file's model (tickless without a
    /// file, or when the file states none).
    pub fn timer_models(&self) -> Vec<TimerModel> {
        match (&self.overheads, self.timers.is_empty()) {
            (Some(o), true) => vec![TimerModel::for_overheads(o)],
            (None, true) => vec![TimerModel::Tickless],
            (_, false) => self.timers.clone(),
        }
    }

    /// The platforms of the overhead-aware test: the overheads profile under
    /// each timer model, in order; none without a profile.
    pub fn platforms(&self) -> impl Iterator<Item = Platform<'_>> + '_ {
        self.overheads.iter().flat_map(move |overheads| {
            self.timer_models().into_iter().map(move |timer| Platform {
                overheads,
                timer,
                threads: self.threads,
            })
        })
    }
}

/// One test's outcome, with the timer model for the overhead-aware tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    /// The outcome.
    pub outcome: Outcome,
    /// The timer model (only for the overhead-aware tests).
    pub timer: Option<TimerModel>,
}

/// Every applicable test of one policy on one task set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyReport {
    /// The policy.
    pub policy: AnalysedPolicy,
    /// The priorities used (fixed-priority policies only).
    pub priorities: Option<Priorities>,
    /// Per-task blocking from critical sections (fixed priorities), or
    /// `max B(t)` for every task (EDF).
    pub blocking: Vec<Nanos>,
    /// The outcomes, cheapest test first.
    pub runs: Vec<TestRun>,
    /// The index in `runs` of the exact test (`rta` or `edf-demand`).
    pub exact: usize,
    /// Something the reader should know (e.g. OPA found no order).
    pub note: Option<String>,
}

impl PolicyReport {
    /// The exact test's outcome.
    pub fn exact_outcome(&self) -> &Outcome {
        &self.runs[self.exact].outcome
    }
}

/// The priorities of a fixed-priority policy; OPA falls back to DM (with a
/// note) when no order passes RTA.
fn priorities_for(
    set: &TaskSet,
    policy: PriorityAssignment,
) -> Result<(Priorities, Option<String>), AnalysisError> {
    if policy == PriorityAssignment::Audsley {
        if set.tasks.is_empty() {
            return Err(AnalysisError::EmptySet);
        }
        return Ok(match audsley::assign(set) {
            Some(p) => (p, None),
            None => (
                priority::assign(set, PriorityAssignment::DeadlineMonotonic)?,
                Some(
                    "OPA found no priority order that passes RTA; showing deadline-monotonic order"
                        .into(),
                ),
            ),
        });
    }
    Ok((priority::assign(set, policy)?, None))
}

/// Runs every applicable test of `policy` on `set` (never modifies it).
pub fn analyse(
    set: &TaskSet,
    policy: AnalysedPolicy,
    options: &Options,
) -> Result<PolicyReport, AnalysisError> {
    if set.tasks.is_empty() {
        return Err(AnalysisError::EmptySet);
    }
    if let Some(t) = set
        .tasks
        .iter()
        .find(|t| t.period.is_zero() || t.deadline.is_zero() || t.wcet.is_zero())
    {
        return Err(AnalysisError::ZeroParameter(t.name.clone()));
    }
    match policy {
        AnalysedPolicy::Edf => {
            let b = edf_blocking(set, options);
            let runs = test_runs(
                [
                    edf_utilization::utilization(set, &b),
                    edf_utilization::density(set, &b),
                    edf_demand::analyse(set, &b),
                ],
                options,
                |platform| edf_overheads::analyse(set, &b, platform),
            );
            Ok(PolicyReport {
                policy,
                priorities: None,
                blocking: vec![Nanos::from_ns(b.max()); set.tasks.len()],
                runs,
                exact: 2,
                note: None,
            })
        }
        AnalysedPolicy::Fixed(rule) => {
            let (priorities, note) = priorities_for(set, rule)?;
            let b = blocking::fixed_priority(set, &priorities, options.fixed_protocol);
            let runs = test_runs(
                [
                    liu_layland::analyse(set, &priorities, &b),
                    hyperbolic::analyse(set, &priorities, &b),
                    rta::analyse(set, &priorities, &b),
                ],
                options,
                |platform| overhead_rta::analyse(set, &priorities, &b, platform),
            );
            Ok(PolicyReport {
                policy,
                priorities: Some(priorities),
                blocking: b,
                runs,
                exact: 2,
                note,
            })
        }
    }
}

/// The ideal tests' outcomes, then the overhead-aware test's on each of
/// `options`' platforms.
fn test_runs(
    ideal: impl IntoIterator<Item = Outcome>,
    options: &Options,
    with_overheads: impl Fn(&Platform) -> Outcome,
) -> Vec<TestRun> {
    let ideal = ideal.into_iter().map(|outcome| TestRun {
        outcome,
        timer: None,
    });
    let costed = options.platforms().map(|platform| TestRun {
        outcome: with_overheads(&platform),
        timer: Some(platform.timer),
    });
    ideal.chain(costed).collect()
}

fn edf_blocking(set: &TaskSet, _options: &Options) -> EdfBlocking {
    // SRP and DFP share Baruah's bound; PIP/PCP under EDF are analysed as SRP.
    EdfBlocking::of(set)
}

/// The exact verdict of `policy` on `set` (RTA with blocking, or EDF
/// demand with blocking); with `platform`, the overhead-aware test instead
/// (paper 004's Theorem 1 for fixed priorities, [`edf_overheads`] for EDF).
pub fn exact_verdict(
    set: &TaskSet,
    policy: AnalysedPolicy,
    options: &Options,
    platform: Option<&Platform>,
) -> Verdict {
    match policy {
        AnalysedPolicy::Edf => match platform {
            Some(p) => edf_overheads::verdict(set, &edf_blocking(set, options), p),
            None => edf_demand::verdict(set, &edf_blocking(set, options)),
        },
        AnalysedPolicy::Fixed(rule) => {
            let (priorities, _) = priorities_for(set, rule).ok()?;
            let b = blocking::fixed_priority(set, &priorities, options.fixed_protocol);
            match platform {
                None if b.iter().all(|b| b.is_zero()) => rta::is_schedulable(set, &priorities),
                None => rta::analyse(set, &priorities, &b).schedulable,
                Some(p) => overhead_rta::analyse(set, &priorities, &b, p).schedulable,
            }
        }
    }
}

/// One breakdown search: which policy, with which overheads and tick.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakdownRun {
    /// The policy.
    pub policy: AnalysedPolicy,
    /// The overheads profile name, or `None` for the ideal analysis.
    pub overheads: Option<String>,
    /// The tick for the timer-driven model (`None`: ideal, tickless or
    /// Linux's hrtimer model).
    pub tick: Option<Nanos>,
    /// The timer model of the overhead-aware search (`None`: ideal).
    pub timer: Option<TimerModel>,
    /// The result; `None` when no scale is schedulable.
    pub result: Option<Breakdown>,
}

/// The ideal breakdown utilization of `policy`, then (when
/// `options.overheads` is set) one per timer model with overheads.
pub fn breakdowns(set: &TaskSet, policy: AnalysedPolicy, options: &Options) -> Vec<BreakdownRun> {
    let mut out = vec![BreakdownRun {
        policy,
        overheads: None,
        tick: None,
        timer: None,
        result: breakdown::breakdown(set, |s| {
            exact_verdict(s, policy, options, None) == Some(true)
        }),
    }];
    for platform in options.platforms() {
        out.push(BreakdownRun {
            policy,
            overheads: Some(platform.overheads.name.clone()),
            tick: platform.timer.tick(),
            timer: Some(platform.timer),
            result: breakdown::breakdown(set, |s| {
                exact_verdict(s, policy, options, Some(&platform)) == Some(true)
            }),
        });
    }
    out
}
