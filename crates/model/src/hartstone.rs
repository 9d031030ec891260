//! The Hartstone PH benchmark (Weiderman & Kamenoff, Real-Time Systems
//! 4(4), 1992) as paper 002 (chapter 4) runs it: four tests that grow the
//! baseline pool of Table 4.1 one iteration at a time until the first
//! deadline miss, and the extended Hartstone (§4.3) that holds 48 %, 120 %
//! and 48 % utilization over 120 s.
//!
//! Pure: pools are [`TaskSet`]s; the series are driven through a
//! [`crate::runner::Runner`] (the simulator, real threads, or a script in
//! tests) by `rtlab_study::hartstone`.
//!
//! # The pools
//!
//! The baseline (Table 4.1): tasks 1..5 at 2, 4, 8, 16, 32 Hz with 32, 16,
//! 8, 4, 2 kilo-whets per period; a kilo-whet is `kilo_whet` of execution
//! time (paper 002: a 1.25 ms busy wait, so U = 0.40). Deadlines equal
//! periods; priorities are rate monotonic (larger = more urgent, equal
//! periods share one). A frequency f (kept exactly, in millihertz) gives
//! the period `floor(1e12 / mHz)` ns. At iteration k (k = 0 is the
//! baseline):
//!
//! | test | pool at iteration k |
//! | --- | --- |
//! | 1 | task 5 at 32 + 8k Hz |
//! | 2 | every frequency × (1 + k/10) |
//! | 3 | every workload + k kilo-whets |
//! | 4 | the baseline plus k copies of task 3 (8 Hz, 8 kilo-whets) |

pub mod document;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::phase::{Phase, Scale};
use crate::task::{Task, TaskSet};
use crate::time::Nanos;

/// Table 4.1: (frequency in Hz, kilo-whets per period) of tasks 1..5.
pub const BASELINE: [(u64, u64); 5] = [(2, 32), (4, 16), (8, 8), (16, 4), (32, 2)];

/// Tasks a pool may have at most (test 4 adds one per iteration; memory
/// stays bounded whatever iteration is asked for).
pub const MAX_POOL_TASKS: usize = 10_000;

/// The shortest iteration window: the baseline's longest period (task 1,
/// 2 Hz). In a shorter window no deadline of task 1 falls, so its misses
/// would go uncounted and a series could grow far past overload.
pub const MIN_WINDOW: Nanos = Nanos::from_ms(500);

/// Iterations a test runs at most when no miss ends it first (a guard for
/// a tiny kilo-whet or a window too short to see a miss).
pub const DEFAULT_MAX_ITERATIONS: u32 = 200;

/// One of the four PH tests (paper 002 §4.2.1-4.2.4); serialised as its
/// number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HartstoneTest {
    /// Test 1, asymmetric pool: task 5's frequency +8 Hz per iteration.
    Frequency5,
    /// Test 2, balanced workloads: all frequencies × 1.1, 1.2, ...
    Frequencies,
    /// Test 3, unbalanced workload growth: every workload +1 kilo-whet.
    Workloads,
    /// Test 4, task pool growth: one more copy of task 3 per iteration.
    Tasks,
}

impl HartstoneTest {
    /// All four, in order.
    pub const ALL: [HartstoneTest; 4] = [
        HartstoneTest::Frequency5,
        HartstoneTest::Frequencies,
        HartstoneTest::Workloads,
        HartstoneTest::Tasks,
    ];

    /// 1..4, as paper 002 numbers them.
    pub fn number(self) -> u8 {
        match self {
            HartstoneTest::Frequency5 => 1,
            HartstoneTest::Frequencies => 2,
            HartstoneTest::Workloads => 3,
            HartstoneTest::Tasks => 4,
        }
    }

    /// What grows, in a few words.
    pub fn growth(self) -> &'static str {
        match self {
            HartstoneTest::Frequency5 => "task 5's frequency +8 Hz",
            HartstoneTest::Frequencies => "all frequencies x(1 + k/10)",
            HartstoneTest::Workloads => "every workload +1 kilo-whet",
            HartstoneTest::Tasks => "one more copy of task 3",
        }
    }
}

impl Serialize for HartstoneTest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.number())
    }
}

impl fmt::Display for HartstoneTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "test {}", self.number())
    }
}

impl FromStr for HartstoneTest {
    type Err = String;
    fn from_str(s: &str) -> Result<HartstoneTest, String> {
        match s.trim() {
            "1" => Ok(HartstoneTest::Frequency5),
            "2" => Ok(HartstoneTest::Frequencies),
            "3" => Ok(HartstoneTest::Workloads),
            "4" => Ok(HartstoneTest::Tasks),
            other => Err(format!(
                "unknown Hartstone test `{other}` (use 1, 2, 3, 4 or all)"
            )),
        }
    }
}

/// Why a pool could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HartstoneError {
    /// A number overflowed (an absurd iteration or kilo-whet).
    #[error("{test}, iteration {iteration}: the pool's numbers overflow")]
    Overflow {
        /// The test.
        test: HartstoneTest,
        /// The iteration.
        iteration: u32,
    },
    /// The pool is not a valid task set (e.g. C > D: no job can meet it).
    #[error("{test}, iteration {iteration}: {message}")]
    Invalid {
        /// The test.
        test: HartstoneTest,
        /// The iteration.
        iteration: u32,
        /// What is wrong.
        message: String,
    },
    /// The extended profile's target utilization cannot be reached along
    /// the test's dimension.
    #[error("extended {test}: {message}")]
    Unreachable {
        /// The test.
        test: HartstoneTest,
        /// Why.
        message: String,
    },
    /// More than [`MAX_POOL_TASKS`] tasks.
    #[error("{test}: {tasks} tasks is more than the {MAX_POOL_TASKS} a pool may have")]
    TooManyTasks {
        /// The test.
        test: HartstoneTest,
        /// How many it would need.
        tasks: u64,
    },
    /// The kilo-whet is zero.
    #[error("the kilo-whet must be longer than 0")]
    ZeroKiloWhet,
}

/// One task of a pool before it becomes a [`Task`]: frequency in mHz and
/// execution time.
#[derive(Debug, Clone, Copy)]
struct Member {
    millihertz: u64,
    work: Nanos,
}

/// A frequency in mHz as text: `2`, `2.2`, `35.2`.
fn hz_text(millihertz: u64) -> String {
    let whole = millihertz / 1000;
    match millihertz % 1000 {
        0 => whole.to_string(),
        frac => format!("{whole}.{}", format!("{frac:03}").trim_end_matches('0')),
    }
}

/// Builds the task set: names `t<i>-<hz>hz`, periods `floor(1e12 / mHz)`
/// ns, D = T, rate-monotonic priorities (1 + the number of distinct
/// periods longer than the task's).
fn build(
    name: String,
    members: &[Member],
    test: HartstoneTest,
    iteration: u32,
) -> Result<TaskSet, HartstoneError> {
    let mut periods = Vec::with_capacity(members.len());
    for m in members {
        if m.millihertz == 0 {
            return Err(HartstoneError::Invalid {
                test,
                iteration,
                message: "a task's frequency rounds to 0 Hz".into(),
            });
        }
        periods.push(Nanos::from_ns(1_000_000_000_000 / m.millihertz));
    }
    let mut distinct = periods.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let tasks = members
        .iter()
        .zip(&periods)
        .enumerate()
        .map(|(i, (m, &period))| {
            let longer = distinct.iter().filter(|&&p| p > period).count() as u32;
            let name = format!("t{}-{}hz", i + 1, hz_text(m.millihertz));
            Task::new(name, period, m.work).with_priority(1 + longer)
        })
        .collect();
    let set = TaskSet::new(name, tasks);
    if let Some(e) = set.errors().first() {
        return Err(HartstoneError::Invalid {
            test,
            iteration,
            message: e.message.clone(),
        });
    }
    Ok(set)
}

/// `kilo_whet * count`, or the overflow error.
fn work(
    kilo_whet: Nanos,
    count: u64,
    test: HartstoneTest,
    iteration: u32,
) -> Result<Nanos, HartstoneError> {
    kilo_whet
        .checked_mul(count)
        .ok_or(HartstoneError::Overflow { test, iteration })
}

/// The pool of `test` at iteration `k` (k = 0: the baseline), a kilo-whet
/// lasting `kilo_whet`; see the module's table.
pub fn pool(test: HartstoneTest, k: u32, kilo_whet: Nanos) -> Result<TaskSet, HartstoneError> {
    if kilo_whet.is_zero() {
        return Err(HartstoneError::ZeroKiloWhet);
    }
    let overflow = HartstoneError::Overflow { test, iteration: k };
    let k64 = u64::from(k);
    let added = if test == HartstoneTest::Tasks { k64 } else { 0 };
    if added + 5 > MAX_POOL_TASKS as u64 {
        return Err(HartstoneError::TooManyTasks {
            test,
            tasks: added + 5,
        });
    }
    let mut members = Vec::with_capacity(5 + added as usize);
    for (i, &(hz, whets)) in BASELINE.iter().enumerate() {
        let (millihertz, whets) = match test {
            HartstoneTest::Frequency5 if i == 4 => (
                k64.checked_mul(8)
                    .and_then(|d| d.checked_add(hz))
                    .and_then(|f| f.checked_mul(1000))
                    .ok_or(overflow.clone())?,
                whets,
            ),
            HartstoneTest::Frequencies => (
                hz.checked_mul(100)
                    .and_then(|f| f.checked_mul(k64 + 10))
                    .ok_or(overflow.clone())?,
                whets,
            ),
            HartstoneTest::Workloads => (hz * 1000, whets + k64),
            _ => (hz * 1000, whets),
        };
        members.push(Member {
            millihertz,
            work: work(kilo_whet, whets, test, k)?,
        });
    }
    if test == HartstoneTest::Tasks {
        let (hz, whets) = BASELINE[2];
        for _ in 0..k {
            members.push(Member {
                millihertz: hz * 1000,
                work: work(kilo_whet, whets, test, k)?,
            });
        }
    }
    let name = format!("hartstone-ph-test{}-k{k}", test.number());
    build(name, &members, test, k)
}

/// What one iteration measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IterationResult {
    /// Deadline misses in the window.
    pub misses: u64,
    /// The earliest missed deadline: task name and time (ns from the
    /// window's start).
    pub first_miss: Option<(String, u64)>,
    /// Context switches in the window.
    pub context_switches: u64,
    /// Preemptions in the window.
    pub preemptions: u64,
    /// Jobs released in the window.
    pub jobs: u64,
    /// How long the window lasted (ns).
    pub duration_ns: u64,
    /// The kernel's account of a real run (`--kernel-trace`: events,
    /// losses, misses by cause); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_trace: Option<crate::kernel_trace::KernelTraceSummary>,
    /// A real iteration's disturbance verdict (`clean`, `disturbed: ...`);
    /// absent when simulated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// A real iteration that missed and was run once more before it
    /// counted ([`crate::disturbance::Rerun`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<crate::disturbance::Rerun>,
}

/// How a test series is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestConfig {
    /// Which test.
    pub test: HartstoneTest,
    /// Execution time of one kilo-whet.
    pub kilo_whet: Nanos,
    /// Length of each iteration.
    pub window: Nanos,
    /// Iterations run at most ([`DEFAULT_MAX_ITERATIONS`]).
    pub max_iterations: u32,
    /// Run a real iteration that missed once more before it ends the
    /// series (on by default; simulated iterations are never rerun).
    pub confirm: bool,
}

/// One iteration as the series reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IterationRecord {
    /// k (0 = the baseline).
    pub iteration: u32,
    /// The pool's utilization.
    pub utilization: f64,
    /// Tasks in the pool.
    pub tasks: usize,
    /// What the runner measured.
    #[serde(flatten)]
    pub result: IterationResult,
}

/// The miss that ended a series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndingMiss {
    /// The iteration it happened in.
    pub iteration: u32,
    /// The task whose deadline was missed first.
    pub task: String,
    /// Its deadline, ns from the iteration's start.
    pub at_ns: u64,
}

/// Why a series stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A deadline was missed (Hartstone's stop rule).
    Miss,
    /// `max_iterations` ran without a miss.
    Cap,
    /// The next pool is not a valid task set (its message).
    InvalidPool(String),
    /// The runner refused the next pool ([`crate::runner::Runner::refusal`]).
    Refused(String),
}

/// A test series' result: paper 002's figures 4.3-4.6 per scheduler.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestOutcome {
    /// Which test.
    pub test: HartstoneTest,
    /// Iterations run without a miss (the baseline counts as one).
    pub iterations_completed: u32,
    /// Utilization of the last pool that met every deadline (null when the
    /// baseline missed).
    pub utilization_reached: Option<f64>,
    /// Context switches per second over every iteration run, the one that
    /// missed included.
    pub context_switches_per_s: f64,
    /// Preemptions over every iteration run.
    pub preemptions: u64,
    /// The miss that ended the series.
    pub ending_miss: Option<EndingMiss>,
    /// Why it stopped.
    pub end: EndReason,
    /// Every iteration run, in order.
    pub iterations: Vec<IterationRecord>,
}

/// The first iteration of `test` whose pool's utilization is above 1 (no
/// scheduler can meet it over a window of a few periods), or `None` when
/// none is before `max_iterations`: an upper bound on the iterations a
/// series runs, for telling the user how long it may take.
pub fn overload_iteration(
    test: HartstoneTest,
    kilo_whet: Nanos,
    max_iterations: u32,
) -> Option<u32> {
    (0..max_iterations)
        .find(|&k| pool(test, k, kilo_whet).map_or(true, |set| set.utilization() > 1.0))
}

/// Ranks runs of one test: more iterations first, then fewer context
/// switches per second (paper 002: "a good scheduler should score high
/// results for the number of iterations, while minimizing the number of
/// context switches"). Returns indices into `runs`.
pub fn rank(runs: &[&TestOutcome]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| {
        runs[b]
            .iterations_completed
            .cmp(&runs[a].iterations_completed)
            .then(
                runs[a]
                    .context_switches_per_s
                    .total_cmp(&runs[b].context_switches_per_s),
            )
    });
    order
}

/// Ranks extended runs of one test: fewer misses first, then fewer context
/// switches per second.
pub fn rank_extended(runs: &[&ExtendedResult]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| {
        runs[a].misses.cmp(&runs[b].misses).then(
            runs[a]
                .context_switches_per_s
                .total_cmp(&runs[b].context_switches_per_s),
        )
    });
    order
}

/// Paper 002's extended Hartstone ranking (§4.3, figures 4.7 and 4.8, by
/// deadline misses over 120 s; it ran EDF, RR, I+PI and Multiburst, not
/// fixed priorities), shown beside the measured rankings.
pub const PAPER_EXTENDED_RANKING: &str = "Multiburst misses the fewest deadlines in every test; I+PI fewer than EDF in tests 2-4, more in test 1; RR the most in every test, with by far the most context switches";

/// Length of the extended Hartstone (paper 002 §4.3).
pub const EXTENDED_LENGTH: Nanos = Nanos::from_secs(120);
/// Start of its overload.
pub const OVERLOAD_START: Nanos = Nanos::from_secs(30);
/// End of its overload.
pub const OVERLOAD_END: Nanos = Nanos::from_secs(45);
/// Its normal load, parts per million (48 %).
pub const NORMAL_PPM: u64 = 480_000;
/// Its overload, parts per million (120 %).
pub const OVERLOAD_PPM: u64 = 1_200_000;

/// One load level of the extended Hartstone: the target, the pool that
/// reaches it along the test's dimension, and the solved setting.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtendedLevel {
    /// Target utilization, parts per million.
    pub target_ppm: u64,
    /// The pool.
    pub set: TaskSet,
    /// The solved value of the test's dimension, as text
    /// (`task 5 at 64 Hz`, `frequencies x1.2`, `+1.290323ms per job`,
    /// `+1 task`).
    pub setting: String,
}

/// The extended Hartstone of one test: 48 % for [0, 30) s, 120 % for
/// [30, 45) s, 48 % for [45, 120) s.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtendedProfile {
    /// Which test's dimension carries the load.
    pub test: HartstoneTest,
    /// The 48 % pool.
    pub normal: ExtendedLevel,
    /// The 120 % pool.
    pub overload: ExtendedLevel,
}

impl ExtendedProfile {
    /// The overload window of a run of `length`: paper 002's [30, 45) s of
    /// 120 s, scaled, `[length / 4, 3 length / 8)` (a run shortened with
    /// `--extended-length` keeps the proportions).
    pub fn overload_window(length: Nanos) -> (Nanos, Nanos) {
        let part = |num: u64| {
            Nanos::from_ns(
                u64::try_from(u128::from(length.as_ns()) * u128::from(num) / 8).unwrap_or(u64::MAX),
            )
        };
        (part(2), part(3))
    }

    /// The extended Hartstone as one run of `length` with one phase, read
    /// identically by the simulator and the real-thread executor
    /// ([`crate::phase::PhasePlan`]): the 48 % pool is the set; the phase
    /// over [`Self::overload_window`] suspends the set's tasks that the
    /// 120 % pool does not have (same name, period and execution time) and
    /// adds the 120 % pool's tasks that the 48 % pool does not have.
    /// Execution times are not scaled. Test 1 thus replaces task 5, tests 2
    /// and 3 every task, and test 4 adds tasks.
    pub fn run_setup(&self, length: Nanos) -> (TaskSet, Vec<Phase>) {
        let (start, end) = Self::overload_window(length);
        let base = &self.normal.set;
        let suspended = base
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| !self.overload.set.tasks.contains(t))
            .map(|(i, _)| i)
            .collect();
        let tasks = self
            .overload
            .set
            .tasks
            .iter()
            .filter(|t| !base.tasks.contains(t))
            .cloned()
            .collect();
        let phase = Phase {
            start,
            end,
            scale: Scale::UNCHANGED,
            tasks,
            suspended,
        };
        (base.clone(), vec![phase])
    }

    /// The three phases: `(start, end, level)`.
    pub fn phases(&self) -> [(Nanos, Nanos, &ExtendedLevel); 3] {
        [
            (Nanos::ZERO, OVERLOAD_START, &self.normal),
            (OVERLOAD_START, OVERLOAD_END, &self.overload),
            (OVERLOAD_END, EXTENDED_LENGTH, &self.normal),
        ]
    }
}

/// What one scheduler did in an extended Hartstone run (paper 002's
/// figures 4.7 and 4.8).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtendedResult {
    /// Which test's dimension carried the load.
    pub test: HartstoneTest,
    /// The 48 % setting ([`ExtendedLevel::setting`]).
    pub normal: String,
    /// The 120 % setting.
    pub overload: String,
    /// Deadline misses over the 120 s.
    pub misses: u64,
    /// Context switches over the 120 s.
    pub context_switches: u64,
    /// `context_switches` per second.
    pub context_switches_per_s: f64,
    /// Preemptions over the 120 s.
    pub preemptions: u64,
    /// Jobs released.
    pub jobs: u64,
    /// The kernel's account of a real run (`--kernel-trace`: events,
    /// losses, misses by cause); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_trace: Option<crate::kernel_trace::KernelTraceSummary>,
}

/// `round(num / den)` for `den > 0`, half up.
fn round_div(num: u128, den: u128) -> u128 {
    (num + den / 2) / den
}

/// The extended Hartstone profile of `test` for a kilo-whet of
/// `kilo_whet`. With q = the kilo-whet in ns and U the target (ppm / 1e6),
/// each level is solved along the test's own dimension:
///
/// - test 1: task 5's frequency f5 = (U·1e9 − 256 q) / (2 q) Hz, rounded to
///   the nearest Hz (tasks 1-4 carry 4 × 64 q ns per second; task 5 has 2
///   kilo-whets). q = 1.25 ms: 64 Hz and 352 Hz, exactly 48 % and 120 %.
/// - test 2: all frequencies × s, s = U·1e9 / (320 q) rounded to the nearest
///   1/1000. q = 1.25 ms: ×1.2 and ×3.0, exact.
/// - test 3: every job's execution + e ns, e = (U·1e9 − 320 q) / 62 rounded
///   to the nearest ns (the frequencies sum to 62 Hz); a fraction of a
///   kilo-whet. q = 1.25 ms: +1.290323 ms (1.03 kilo-whets, U = 0.48000003)
///   and +12.903226 ms (10.32 kilo-whets, U = 1.20000001).
/// - test 4: n = (U·1e9 − 320 q) / (64 q) copies of task 3, rounded to the
///   nearest whole task. q = 1.25 ms: 1 and 10, exact.
///
/// A target below the baseline's load (U < 320 q / 1e9) cannot be reached
/// by growing, and is refused.
pub fn extended_profile(
    test: HartstoneTest,
    kilo_whet: Nanos,
) -> Result<ExtendedProfile, HartstoneError> {
    Ok(ExtendedProfile {
        test,
        normal: extended_level(test, NORMAL_PPM, kilo_whet)?,
        overload: extended_level(test, OVERLOAD_PPM, kilo_whet)?,
    })
}

/// One level of [`extended_profile`].
pub fn extended_level(
    test: HartstoneTest,
    target_ppm: u64,
    kilo_whet: Nanos,
) -> Result<ExtendedLevel, HartstoneError> {
    if kilo_whet.is_zero() {
        return Err(HartstoneError::ZeroKiloWhet);
    }
    let q = u128::from(kilo_whet.as_ns());
    // Target load in ns of execution per second.
    let target = u128::from(target_ppm) * 1000;
    let base = 320 * q;
    let pct = format!("{}%", target_ppm as f64 / 10_000.0);
    let unreachable = |what: &str| HartstoneError::Unreachable {
        test,
        message: format!(
            "{pct} is below the baseline's {}% with a {kilo_whet} kilo-whet{what}",
            base as f64 / 1e7
        ),
    };
    let overflow = HartstoneError::Overflow { test, iteration: 0 };
    let to_u64 = |v: u128| u64::try_from(v).map_err(|_| overflow.clone());
    let whet = |count: u64| {
        kilo_whet
            .checked_mul(count)
            .ok_or(HartstoneError::Overflow { test, iteration: 0 })
    };
    let mut members: Vec<Member> = Vec::with_capacity(16);
    for &(hz, whets) in &BASELINE {
        members.push(Member {
            millihertz: hz * 1000,
            work: whet(whets)?,
        });
    }
    let setting = match test {
        HartstoneTest::Frequency5 => {
            let others = 256 * q;
            if target <= others {
                return Err(unreachable(""));
            }
            let hz = to_u64(round_div(target - others, 2 * q))?;
            members[4].millihertz = hz.checked_mul(1000).ok_or(overflow.clone())?;
            format!("task 5 at {hz} Hz")
        }
        HartstoneTest::Frequencies => {
            if target < base {
                return Err(unreachable(""));
            }
            let permille = to_u64(round_div(target * 1000, base))?;
            for m in &mut members {
                m.millihertz = (m.millihertz / 1000)
                    .checked_mul(permille)
                    .ok_or(overflow.clone())?;
            }
            format!("frequencies x{}", hz_text(permille))
        }
        HartstoneTest::Workloads => {
            if target < base {
                return Err(unreachable(""));
            }
            let extra = Nanos::from_ns(to_u64(round_div(target - base, 62))?);
            for m in &mut members {
                m.work = m.work.checked_add(extra).ok_or(overflow.clone())?;
            }
            format!("+{extra} per job")
        }
        HartstoneTest::Tasks => {
            if target < base {
                return Err(unreachable(""));
            }
            let n = to_u64(round_div(target - base, 64 * q))?;
            if n.saturating_add(5) > MAX_POOL_TASKS as u64 {
                return Err(HartstoneError::TooManyTasks {
                    test,
                    tasks: n.saturating_add(5),
                });
            }
            let (hz, whets) = BASELINE[2];
            for _ in 0..n {
                members.push(Member {
                    millihertz: hz * 1000,
                    work: whet(whets)?,
                });
            }
            format!("+{n} task{}", if n == 1 { "" } else { "s" })
        }
    };
    let name = format!(
        "hartstone-ph-extended-test{}-{}pct",
        test.number(),
        target_ppm / 10_000
    );
    let set = build(name, &members, test, 0)?;
    Ok(ExtendedLevel {
        target_ppm,
        set,
        setting,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KW: Nanos = Nanos::from_us(1250);

    /// (name, period ns, wcet ns, priority) of every task.
    fn shape(set: &TaskSet) -> Vec<(String, u64, u64, u32)> {
        set.tasks
            .iter()
            .map(|t| {
                assert_eq!(t.deadline, t.period, "{}: D = T", t.name);
                (
                    t.name.clone(),
                    t.period.as_ns(),
                    t.wcet.as_ns(),
                    t.priority.unwrap(),
                )
            })
            .collect()
    }

    fn row(name: &str, period: u64, wcet: u64, prio: u32) -> (String, u64, u64, u32) {
        (name.to_string(), period, wcet, prio)
    }

    const MS: u64 = 1_000_000;

    fn baseline_rows() -> Vec<(String, u64, u64, u32)> {
        vec![
            row("t1-2hz", 500 * MS, 40 * MS, 1),
            row("t2-4hz", 250 * MS, 20 * MS, 2),
            row("t3-8hz", 125 * MS, 10 * MS, 3),
            row("t4-16hz", 62_500_000, 5 * MS, 4),
            row("t5-32hz", 31_250_000, 2_500_000, 5),
        ]
    }

    #[test]
    fn every_test_starts_from_table_4_1() {
        for test in HartstoneTest::ALL {
            let set = pool(test, 0, KW).unwrap();
            assert_eq!(shape(&set), baseline_rows(), "{test}");
            assert!((set.utilization() - 0.40).abs() < 1e-12);
        }
    }

    #[test]
    fn test_1_raises_task_5_by_8_hz() {
        let mut rows = baseline_rows();
        rows[4] = row("t5-40hz", 25 * MS, 2_500_000, 5);
        assert_eq!(
            shape(&pool(HartstoneTest::Frequency5, 1, KW).unwrap()),
            rows
        );
        // 48 Hz: 1e9 / 48 = 20833333.3 ns, rounded down.
        rows[4] = row("t5-48hz", 20_833_333, 2_500_000, 5);
        assert_eq!(
            shape(&pool(HartstoneTest::Frequency5, 2, KW).unwrap()),
            rows
        );
    }

    #[test]
    fn test_2_scales_every_frequency_by_tenths() {
        let k1 = vec![
            row("t1-2.2hz", 454_545_454, 40 * MS, 1),
            row("t2-4.4hz", 227_272_727, 20 * MS, 2),
            row("t3-8.8hz", 113_636_363, 10 * MS, 3),
            row("t4-17.6hz", 56_818_181, 5 * MS, 4),
            row("t5-35.2hz", 28_409_090, 2_500_000, 5),
        ];
        assert_eq!(shape(&pool(HartstoneTest::Frequencies, 1, KW).unwrap()), k1);
        let k2 = vec![
            row("t1-2.4hz", 416_666_666, 40 * MS, 1),
            row("t2-4.8hz", 208_333_333, 20 * MS, 2),
            row("t3-9.6hz", 104_166_666, 10 * MS, 3),
            row("t4-19.2hz", 52_083_333, 5 * MS, 4),
            row("t5-38.4hz", 26_041_666, 2_500_000, 5),
        ];
        assert_eq!(shape(&pool(HartstoneTest::Frequencies, 2, KW).unwrap()), k2);
    }

    #[test]
    fn test_3_adds_a_kilo_whet_to_every_task() {
        let k1 = vec![
            row("t1-2hz", 500 * MS, 41_250_000, 1),
            row("t2-4hz", 250 * MS, 21_250_000, 2),
            row("t3-8hz", 125 * MS, 11_250_000, 3),
            row("t4-16hz", 62_500_000, 6_250_000, 4),
            row("t5-32hz", 31_250_000, 3_750_000, 5),
        ];
        assert_eq!(shape(&pool(HartstoneTest::Workloads, 1, KW).unwrap()), k1);
        let k2 = vec![
            row("t1-2hz", 500 * MS, 42_500_000, 1),
            row("t2-4hz", 250 * MS, 22_500_000, 2),
            row("t3-8hz", 125 * MS, 12_500_000, 3),
            row("t4-16hz", 62_500_000, 7_500_000, 4),
            row("t5-32hz", 31_250_000, 5_000_000, 5),
        ];
        assert_eq!(shape(&pool(HartstoneTest::Workloads, 2, KW).unwrap()), k2);
        // U grows by 62 Hz x 1.25 ms = 0.0775 per iteration.
        let u2 = pool(HartstoneTest::Workloads, 2, KW).unwrap().utilization();
        assert!((u2 - 0.555).abs() < 1e-12, "{u2}");
    }

    #[test]
    fn test_4_adds_copies_of_task_3() {
        let mut rows = baseline_rows();
        rows.push(row("t6-8hz", 125 * MS, 10 * MS, 3));
        assert_eq!(shape(&pool(HartstoneTest::Tasks, 1, KW).unwrap()), rows);
        rows.push(row("t7-8hz", 125 * MS, 10 * MS, 3));
        assert_eq!(shape(&pool(HartstoneTest::Tasks, 2, KW).unwrap()), rows);
    }

    #[test]
    fn pools_that_cannot_be_run_are_refused_not_built() {
        assert_eq!(
            pool(HartstoneTest::Tasks, 0, Nanos::ZERO).unwrap_err(),
            HartstoneError::ZeroKiloWhet
        );
        // 16 ms kilo-whets: task 1 needs 512 ms in a 500 ms period.
        let e = pool(HartstoneTest::Frequency5, 0, Nanos::from_ms(16)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("test 1, iteration 0: task `t1-2hz`"),
            "{e}"
        );
        assert!(matches!(
            pool(HartstoneTest::Frequencies, u32::MAX, KW),
            Err(HartstoneError::Invalid { .. })
        ));
        assert_eq!(
            pool(HartstoneTest::Tasks, u32::MAX, KW)
                .unwrap_err()
                .to_string(),
            "test 4: 4294967300 tasks is more than the 10000 a pool may have"
        );
    }

    #[test]
    fn overload_iterations_and_rankings() {
        // U > 1: test 1 at f5 = 272 Hz (k = 30; U = 1 exactly in Hz, but
        // the period floor(1e9 / 272) = 3676470 ns is rounded down, so
        // 1.00000007), test 2 at x2.6 (k = 16), test 3 at k = 8 (1.02),
        // test 4 at k = 8 (1.04).
        let first = HartstoneTest::ALL.map(|t| overload_iteration(t, KW, 200));
        assert_eq!(first, [Some(30), Some(16), Some(8), Some(8)]);
        assert_eq!(overload_iteration(HartstoneTest::Tasks, KW, 8), None);
        let outcome = |iterations, cs| TestOutcome {
            test: HartstoneTest::Tasks,
            iterations_completed: iterations,
            utilization_reached: None,
            context_switches_per_s: cs,
            preemptions: 0,
            ending_miss: None,
            end: EndReason::Miss,
            iterations: Vec::new(),
        };
        let (a, b, c) = (outcome(5, 90.0), outcome(7, 120.0), outcome(7, 100.0));
        assert_eq!(rank(&[&a, &b, &c]), vec![2, 1, 0]);
        let ext = |misses, cs| ExtendedResult {
            test: HartstoneTest::Tasks,
            normal: String::new(),
            overload: String::new(),
            misses,
            context_switches: 0,
            context_switches_per_s: cs,
            preemptions: 0,
            jobs: 0,
            kernel_trace: None,
        };
        assert_eq!(
            rank_extended(&[&ext(9, 1.0), &ext(3, 5.0), &ext(3, 4.0)]),
            vec![2, 1, 0]
        );
    }

    /// Utilization in parts per billion, rounded. The expected values were
    /// computed with exact fractions (Python's `Fraction`) from the periods
    /// `floor(1e12 / mHz)`: the only error is the rounding of periods down
    /// to whole ns (and test 3's rounding of the extra work to whole ns).
    fn ppb(set: &TaskSet) -> u64 {
        (set.utilization() * 1e9).round() as u64
    }

    #[test]
    fn the_extended_profile_holds_48_120_48_percent_along_each_dimension() {
        let expected = [
            // test, normal setting, overload setting, normal ppb, overload ppb
            (
                HartstoneTest::Frequency5,
                "task 5 at 64 Hz",
                "task 5 at 352 Hz",
                480_000_000,
                1_200_000_028,
            ),
            (
                HartstoneTest::Frequencies,
                "frequencies x1.2",
                "frequencies x3",
                480_000_004,
                1_200_000_025,
            ),
            (
                HartstoneTest::Workloads,
                "+1.290323ms per job",
                "+12.903226ms per job",
                480_000_026,
                1_200_000_012,
            ),
            (
                HartstoneTest::Tasks,
                "+1 task",
                "+10 tasks",
                480_000_000,
                1_200_000_000,
            ),
        ];
        for (test, normal, overload, normal_ppb, overload_ppb) in expected {
            let p = extended_profile(test, KW).unwrap();
            assert_eq!(p.normal.setting, normal);
            assert_eq!(p.overload.setting, overload);
            let phases = p.phases();
            let spans: Vec<(u64, u64, u64)> = phases
                .iter()
                .map(|(a, b, level)| {
                    (
                        a.as_ns() / 1_000_000_000,
                        b.as_ns() / 1_000_000_000,
                        ppb(&level.set),
                    )
                })
                .collect();
            assert_eq!(
                spans,
                vec![
                    (0, 30, normal_ppb),
                    (30, 45, overload_ppb),
                    (45, 120, normal_ppb)
                ],
                "{test}"
            );
        }
        let t4 = extended_profile(HartstoneTest::Tasks, KW).unwrap();
        assert_eq!(
            (t4.normal.set.tasks.len(), t4.overload.set.tasks.len()),
            (6, 15)
        );
        let t1 = extended_profile(HartstoneTest::Frequency5, KW).unwrap();
        assert_eq!(t1.overload.set.tasks[4].period, Nanos::from_ns(2_840_909));
    }

    #[test]
    fn an_extended_target_below_the_baseline_is_refused() {
        // 2.5 ms kilo-whets: the baseline alone is 80 %.
        let e = extended_level(HartstoneTest::Tasks, NORMAL_PPM, Nanos::from_us(2500))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "extended test 4: 48% is below the baseline's 80% with a 2.5ms kilo-whet"
        );
    }

    #[test]
    fn tests_parse_by_number() {
        assert_eq!("3".parse::<HartstoneTest>(), Ok(HartstoneTest::Workloads));
        assert!("5".parse::<HartstoneTest>().is_err());
    }

    /// 120 s: paper 002's [30, 45) s; 12 s: [3, 4.5) s. Test 1's phase
    /// swaps task 5 (64 Hz) for its 352 Hz version.
    #[test]
    fn the_extended_run_keeps_its_proportions_at_any_length() {
        let s = Nanos::from_secs;
        assert_eq!(ExtendedProfile::overload_window(s(120)), (s(30), s(45)));
        assert_eq!(
            ExtendedProfile::overload_window(s(12)),
            (s(3), Nanos::from_ms(4500))
        );
        let profile = extended_profile(HartstoneTest::Frequency5, KW).unwrap();
        let (set, phases) = profile.run_setup(s(12));
        assert_eq!(set, profile.normal.set);
        assert_eq!(
            (phases[0].start, phases[0].end),
            (s(3), Nanos::from_ms(4500))
        );
        assert_eq!(phases[0].suspended, vec![4]);
        assert_eq!(phases[0].tasks[0].name, "t5-352hz");
    }
}
