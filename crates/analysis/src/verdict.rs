//! What every test returns: a verdict and, where the test computes them,
//! per-task worst-case response times.
//!
//! A verdict is `Option<bool>`: `Some(true)` schedulable, `Some(false)` not
//! schedulable (an exact test said no, or a necessary condition such as
//! U <= 1 failed), `None` inconclusive (a sufficient test that did not pass,
//! or a test that does not apply to this task set).

use rtlab_model::Nanos;
use serde::Serialize;

/// Schedulable (`Some(true)`), not (`Some(false)`), or inconclusive (`None`).
pub type Verdict = Option<bool>;

/// The published tests rtlab implements, by their stable names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub enum Test {
    /// Liu & Layland utilization bound (sufficient, RM).
    LiuLayland,
    /// Hyperbolic bound of Bini, Buttazzo & Buttazzo (sufficient, RM).
    Hyperbolic,
    /// Exact response-time analysis (fixed priorities).
    Rta,
    /// Paper 004 Theorem 1: response-time analysis with scheduler overheads.
    RtaOverheads,
    /// EDF, U <= 1 (exact for implicit deadlines).
    EdfUtilization,
    /// EDF density test (sufficient).
    EdfDensity,
    /// EDF processor-demand criterion evaluated with QPA (exact).
    EdfDemand,
    /// The EDF demand criterion with paper 004's scheduler overheads.
    EdfDemandOverheads,
}

impl Test {
    /// Every test, cheapest first.
    pub const ALL: [Test; 8] = [
        Test::LiuLayland,
        Test::Hyperbolic,
        Test::EdfUtilization,
        Test::EdfDensity,
        Test::Rta,
        Test::EdfDemand,
        Test::RtaOverheads,
        Test::EdfDemandOverheads,
    ];

    /// The stable name used in JSON and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Test::LiuLayland => "liu-layland",
            Test::Hyperbolic => "hyperbolic",
            Test::Rta => "rta",
            Test::RtaOverheads => "rta-overheads",
            Test::EdfUtilization => "edf-utilization",
            Test::EdfDensity => "edf-density",
            Test::EdfDemand => "edf-demand",
            Test::EdfDemandOverheads => "edf-demand-overheads",
        }
    }

    /// True for the tests that charge scheduler overheads (paper 004's
    /// cost model, under some timer model).
    pub const fn has_overheads(self) -> bool {
        matches!(self, Test::RtaOverheads | Test::EdfDemandOverheads)
    }

    /// The test with this stable name.
    pub fn from_name(name: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == name)
    }

    /// True for tests that are exact (necessary and sufficient) under their
    /// assumptions.
    pub const fn is_exact(self) -> bool {
        matches!(self, Test::Rta | Test::EdfDemand | Test::EdfUtilization)
    }
}

impl std::fmt::Display for Test {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// The worst-case response time of one task, as far as a test knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// The worst-case response time R, with R <= D.
    Within(Nanos),
    /// R > D: the task can miss its deadline.
    Exceeds,
    /// The test could not decide (iteration cap, arithmetic overflow, or the
    /// test does not compute response times).
    Unknown,
}

impl Response {
    /// R when it is known and within the deadline.
    pub fn wcrt(self) -> Option<Nanos> {
        match self {
            Response::Within(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the task meets its deadline, if known.
    pub fn verdict(self) -> Verdict {
        match self {
            Response::Within(_) => Some(true),
            Response::Exceeds => Some(false),
            Response::Unknown => None,
        }
    }
}

/// The result of one test on one task set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Which test.
    pub test: Test,
    /// The verdict for the whole set.
    pub schedulable: Verdict,
    /// Per-task responses, in task-set order; empty when the test does not
    /// compute per-task results.
    pub responses: Vec<Response>,
}

impl Outcome {
    /// A verdict without per-task results.
    pub fn set_only(test: Test, schedulable: Verdict) -> Outcome {
        Outcome {
            test,
            schedulable,
            responses: Vec::new(),
        }
    }

    /// A verdict from per-task responses: false if any task exceeds its
    /// deadline, else unknown if any is unknown, else true.
    pub fn from_responses(test: Test, responses: Vec<Response>) -> Outcome {
        let schedulable = combine(responses.iter().map(|r| r.verdict()));
        Outcome {
            test,
            schedulable,
            responses,
        }
    }
}

/// Conjunction of verdicts: any `false` wins, then any `None`.
pub fn combine(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    let mut all = Some(true);
    for v in verdicts {
        match v {
            Some(false) => return Some(false),
            None => all = None,
            Some(true) => {}
        }
    }
    all
}
