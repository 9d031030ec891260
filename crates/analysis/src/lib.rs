//! Schedulability analysis for rtlab: utilization bounds, exact
//! response-time analysis, EDF processor demand, overhead-aware analysis
//! (paper 004) and breakdown utilization.
//!
//! One module per published test, each citing its source and stating its
//! formula; each returns an [`Outcome`] (a [`Verdict`] and, where computed,
//! per-task [`Response`]s) and never modifies the task set it is given.
//! Times are integer nanoseconds ([`rtlab_model::Nanos`]); comparisons of
//! utilizations against bounds are exact ([`exact`]).
//!
//! | module | test |
//! | --- | --- |
//! | [`priority`], [`audsley`] | RM, DM, given, Audsley's OPA |
//! | [`liu_layland`] | `U <= n(2^{1/n} − 1)` (with blocking) |
//! | [`hyperbolic`] | `Π(Ui + 1) <= 2` (with blocking) |
//! | [`rta`] | exact RTA with jitter, blocking, arbitrary deadlines |
//! | [`edf_utilization`] | EDF `U <= 1` and density |
//! | [`edf_demand`] | EDF `h(t) (+ B(t)) <= t` with QPA |
//! | [`demand_search`] | QPA and a forward scan over a step-function demand bound |
//! | [`blocking`] | PIP, PCP/IPCP, SRP/DFP blocking terms |
//! | [`overhead_rta`] | paper 004 Theorem 1, timer-driven and tickless |
//! | [`edf_overheads`] | the EDF demand test with paper 004's costs |
//! | [`breakdown`] | breakdown utilization by bisection on α |
//! | [`measured_breakdown`] | paper 004 §5: breakdown found by running the set (bisection with repeats) |
//! | [`breakdown_experiment`] | paper 004 §5 at one time scale: ideal, overhead-aware, simulated, measured |
//! | [`global`] | G-EDF (GFB, BAK, BCL, RTA) and G-FP (RTA, RTA-LC) tests, DkC, tardiness bound |
//! | [`multiprocessor`] | every multiprocessor test by name (`gedf:bcl`, `pedf:ff-decreasing`, ...) |
//! | [`partition`] | first/best/worst/next fit on m processors, each admitted by a uniprocessor test |
//! | [`suite`] | every test of a policy, cheapest first |
//! | [`schema`] | the `analyze` and `sweep` JSON documents |
//!
//! ```
//! use rtlab_analysis::suite::{analyse, Options};
//! use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};
//! use rtlab_model::{Nanos, Task, TaskSet};
//!
//! let ms = Nanos::from_ms;
//! let set = TaskSet::new("demo", vec![
//!     Task::new("a", ms(4), ms(1)),
//!     Task::new("b", ms(5), ms(2)),
//! ]);
//! let report = analyse(&set, AnalysedPolicy::Fixed(PriorityAssignment::RateMonotonic), &Options::default()).unwrap();
//! assert_eq!(report.exact_outcome().schedulable, Some(true));
//! assert_eq!(report.exact_outcome().responses[1].wcrt(), Some(ms(3)));
//! ```

#![forbid(unsafe_code)]

pub mod analyze_document;
pub mod audsley;
pub mod blocking;
pub mod breakdown;
pub mod breakdown_experiment;
pub mod demand_search;
pub mod edf_demand;
pub mod edf_overheads;
pub mod edf_utilization;
pub mod error;
pub mod exact;
pub mod global;
pub mod hyperbolic;
pub mod liu_layland;
pub mod measured_breakdown;
pub mod mp_locking;
pub mod multiprocessor;
pub mod overhead_rta;
pub mod partition;
pub mod priority;
pub mod rta;
pub mod schema;
pub mod suite;
pub mod sweep;
pub mod throttling;
pub mod verdict;

pub use error::AnalysisError;
pub use verdict::{Outcome, Response, Test, Verdict};
