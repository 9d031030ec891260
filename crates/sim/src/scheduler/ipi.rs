//! The I+PI control scheduler (`ipi`), paper 002 §3.1.1, Algorithm 6, with
//! the defaults of the Miosix implementation.
//!
//! Rule: time is divided into **rounds**. In a round every active task (one
//! with a ready job) runs once, in declaration order, for at most its
//! **burst** `b_i`; a task that finishes or blocks early loses the rest, and a
//! task that wakes after its turn waits for the next round. At each round
//! end two regulators run on the CPU times `τ_t,i` measured in the round:
//!
//! - outer PI on the round duration `τ_r = Σ τ_t,i` against its set point
//!   `τ_r° = nominal burst × number of tasks`:
//!   `b_c(k) = b_c(k-1) + k_rr·e(k-1) − k_rr·z_rr·e(k-2)`, `e = τ_r° − τ_r`,
//!   saturated to `[−τ_r, b_max·n]`; while every active task sits at `b_max`
//!   only decreases are applied (anti-windup);
//! - inner I per task: `b_i(k) = b_i(k-1) + k_pi·(α_i·(τ_r + b_c) − τ_t,i)`,
//!   saturated to `[b_min, b_max]`.
//!
//! **Reinitialisation and feed-forward**: when the set of active tasks
//! changes, the shares `α` are renormalised over the active tasks only and at
//! the next round start the regulators restart from `b_i = α_i·τ_r°`.
//! Defaults: `k_pi = 0.5`, `k_rr = 0.9`, `z_rr = 0.88`, nominal burst 4 ms per
//! task, `b_min = 200 us`, `b_max = 20 ms`, shares from `1/T`. All arithmetic
//! is integer (gains as exact fractions).
//!
//! Parameters: `ipi:burst=4ms,bmin=200us,bmax=20ms,share=rate|util|equal|given`.

use std::fmt;

use rtlab_model::{Nanos, Task};
use serde::Serialize;

use super::{parse_params, Scheduler, System};
use crate::error::SimError;
use crate::job::JobId;

/// How the CPU shares `α_i` are derived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Share {
    /// Proportional to the rate `1/T` (default).
    #[default]
    Rate,
    /// Proportional to the utilization `C/T`.
    Utilization,
    /// Equal shares.
    Equal,
    /// Proportional to the tasks' `priority` fields (weights).
    Given,
}

impl Share {
    pub(crate) fn parse(text: &str) -> Result<Share, String> {
        match text {
            "rate" => Ok(Share::Rate),
            "util" => Ok(Share::Utilization),
            "equal" => Ok(Share::Equal),
            "given" => Ok(Share::Given),
            _ => Err(format!("share `{text}`: use rate, util, equal or given")),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Share::Rate => "rate",
            Share::Utilization => "util",
            Share::Equal => "equal",
            Share::Given => "given",
        }
    }

    /// Integer weights, one per task.
    pub(crate) fn weights(self, tasks: &[Task]) -> Result<Vec<u64>, SimError> {
        tasks
            .iter()
            .map(|t| {
                Ok(match self {
                    Share::Rate => (1_000_000_000_000_000u64 / t.period.as_ns().max(1)).max(1),
                    Share::Utilization => {
                        let w = u128::from(t.wcet.as_ns()) * 1_000_000_000
                            / u128::from(t.period.as_ns().max(1));
                        u64::try_from(w).unwrap_or(u64::MAX).max(1)
                    }
                    Share::Equal => 1,
                    Share::Given => {
                        t.priority
                            .map(u64::from)
                            .filter(|&w| w > 0)
                            .ok_or_else(|| SimError::Setup {
                                scheduler: "share=given".into(),
                                why: format!("task `{}` needs a priority > 0 (its weight)", t.name),
                            })?
                    }
                })
            })
            .collect()
    }
}

/// `x · w / total`, exactly rounded down, in i64.
pub(crate) fn portion(x: i64, w: u64, total: u64) -> i64 {
    if total == 0 {
        return 0;
    }
    let v = i128::from(x) * i128::from(w) / i128::from(total);
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// Parameters of [`Ipi`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpiParams {
    /// Nominal burst per task (the round set point is this times the number
    /// of tasks).
    pub burst: Nanos,
    /// Lower burst saturation.
    pub b_min: Nanos,
    /// Upper burst saturation.
    pub b_max: Nanos,
    /// How shares are derived.
    pub share: Share,
}

impl Default for IpiParams {
    fn default() -> IpiParams {
        IpiParams {
            burst: Nanos::from_ms(4),
            b_min: Nanos::from_us(200),
            b_max: Nanos::from_ms(20),
            share: Share::Rate,
        }
    }
}

impl IpiParams {
    /// Parses `key=value,...` (empty for the defaults).
    pub fn parse(arg: &str) -> Result<IpiParams, String> {
        let mut p = IpiParams::default();
        for (k, v) in parse_params(arg)? {
            let dur = || v.parse::<Nanos>().map_err(|e| format!("{k}: {e}"));
            match k {
                "burst" => p.burst = dur()?,
                "bmin" => p.b_min = dur()?,
                "bmax" => p.b_max = dur()?,
                "share" => p.share = Share::parse(v)?,
                _ => {
                    return Err(format!(
                        "unknown parameter `{k}` (burst, bmin, bmax, share)"
                    ))
                }
            }
        }
        if p.burst.is_zero() || p.b_min > p.b_max || p.b_max.is_zero() {
            return Err("need burst > 0 and 0 < bmin <= bmax".into());
        }
        Ok(p)
    }
}

impl fmt::Display for IpiParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == IpiParams::default() {
            return f.write_str("ipi");
        }
        write!(
            f,
            "ipi:burst={},bmin={},bmax={},share={}",
            self.burst,
            self.b_min,
            self.b_max,
            self.share.name()
        )
    }
}

/// One round, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    /// Round number (0 first).
    pub index: u64,
    /// When it ended.
    pub end: Nanos,
    /// Its duration: CPU time the tasks used in it.
    pub duration: Nanos,
    /// The set point.
    pub set_point: Nanos,
    /// The burst correction computed at its end.
    pub correction: i64,
}

/// Rounds kept in the report (the first ones).
pub(crate) const ROUNDS_KEPT: usize = 2000;

/// The scheduler data of an I+PI or multiburst report: the number of
/// rounds and the first [`ROUNDS_KEPT`] of them. Fields are declared in
/// alphabetical order, the order the report has always printed them in.
#[derive(Serialize)]
struct RoundsData {
    first_rounds: Vec<RoundData>,
    rounds: u64,
}

/// One [`Round`] in the report (alphabetical field order, as above).
#[derive(Serialize)]
struct RoundData {
    correction_ns: i64,
    duration_ns: u64,
    end_ns: u64,
    round: u64,
    set_point_ns: u64,
}

pub(crate) fn rounds_json(rounds: &[Round], total: u64) -> Option<serde_json::Value> {
    let data = RoundsData {
        first_rounds: rounds
            .iter()
            .map(|r| RoundData {
                correction_ns: r.correction,
                duration_ns: r.duration.as_ns(),
                end_ns: r.end.as_ns(),
                round: r.index,
                set_point_ns: r.set_point.as_ns(),
            })
            .collect(),
        rounds: total,
    };
    serde_json::to_value(data).ok()
}

/// A scheduler that serves its tasks in rounds of bursts, one task's burst
/// after another's ([`Ipi`], `Multiburst`): what [`pick_in_rounds`] needs.
pub(crate) trait BurstRounds {
    /// Positions in the current round.
    fn round_len(&self) -> usize;
    /// The task at position `k` of the round.
    fn task_at(&self, k: usize) -> usize;
    /// The position the round has reached.
    fn cursor(&mut self) -> &mut usize;
    /// Per task: its current job, its burst in this round and what it has
    /// used of it, ns.
    fn bursts(&self) -> (&[Option<JobId>], &[i64], &[i64]);
    /// Closes the round at `now`: the controller sets the next bursts.
    fn regulate(&mut self, now: Nanos);

    /// Task `i`'s current job, if it has one.
    fn job_of(&self, i: usize) -> Option<JobId> {
        self.bursts().0[i]
    }

    /// What is left of task `i`'s burst in this round, ns (burst - used).
    fn burst_left(&self, i: usize) -> i64 {
        let (_, burst, used) = self.bursts();
        burst[i] - used[i]
    }
}

/// The next job of a burst round-robin and when its burst ends: from the
/// cursor on, the first task with a job, burst left and leave to start;
/// past the round's end the round is closed ([`BurstRounds::regulate`]) and
/// the scan starts again at position 0. At most two rounds are scanned
/// (2 n + 2 positions for n at the start), so a round in which no task may
/// start ends the pick with `None`.
pub(crate) fn pick_in_rounds(s: &mut impl BurstRounds, sys: &System<'_>) -> Option<(JobId, Nanos)> {
    for _ in 0..=2 * s.round_len() + 1 {
        if *s.cursor() >= s.round_len() {
            s.regulate(sys.now());
            *s.cursor() = 0;
        }
        let k = *s.cursor();
        let i = s.task_at(k);
        if let Some(job) = s.job_of(i) {
            let left = s.burst_left(i);
            if left > 0 && sys.may_start(job) {
                return Some((job, sys.now().saturating_add(Nanos::from_ns(left as u64))));
            }
        }
        *s.cursor() += 1;
    }
    None
}

/// The I+PI scheduler.
#[derive(Debug, Clone)]
pub struct Ipi {
    params: IpiParams,
    weights: Vec<u64>,
    job_of: Vec<Option<JobId>>,
    burst: Vec<i64>,
    used: Vec<i64>,
    cursor: usize,
    set_point: i64,
    correction: i64,
    last_error: i64,
    reinit: bool,
    in_round: bool,
    burst_end: Option<Nanos>,
    rounds: Vec<Round>,
    round_count: u64,
}

impl Ipi {
    /// I+PI for `tasks`.
    pub fn new(params: IpiParams, tasks: &[Task]) -> Result<Ipi, SimError> {
        let n = tasks.len();
        Ok(Ipi {
            weights: params.share.weights(tasks)?,
            set_point: params.burst.as_ns() as i64 * n as i64,
            params,
            job_of: vec![None; n],
            burst: vec![0; n],
            used: vec![0; n],
            cursor: n,
            correction: 0,
            last_error: 0,
            reinit: true,
            in_round: false,
            burst_end: None,
            rounds: Vec::new(),
            round_count: 0,
        })
    }

    fn active_weight(&self) -> u64 {
        (0..self.job_of.len())
            .filter(|&i| self.job_of[i].is_some())
            .map(|i| self.weights[i])
            .sum()
    }

    fn saturate(&self, b: i64) -> i64 {
        b.clamp(
            self.params.b_min.as_ns() as i64,
            self.params.b_max.as_ns() as i64,
        )
    }

    /// Algorithm 6 at a round boundary.
    fn regulate(&mut self, now: Nanos) {
        let tr: i64 = self.used.iter().sum();
        let total = self.active_weight();
        let n = self.job_of.len() as i64;
        if self.in_round {
            self.round_count += 1;
        }
        if self.reinit {
            self.reinit = false;
            self.correction = 0;
            self.last_error = 0;
            for i in 0..self.job_of.len() {
                self.burst[i] = if self.job_of[i].is_some() {
                    self.saturate(portion(self.set_point, self.weights[i], total))
                } else {
                    0
                };
            }
        } else {
            let error = self.set_point - tr;
            // k_rr = 0.9 = 9/10, k_rr * z_rr = 0.792 = 99/125.
            let bc = self.correction + error * 9 / 10 - self.last_error * 99 / 125;
            let b_max = self.params.b_max.as_ns() as i64;
            let all_saturated = (0..self.job_of.len())
                .filter(|&i| self.job_of[i].is_some())
                .all(|i| self.burst[i] >= b_max);
            if !all_saturated || bc < self.correction {
                self.correction = bc;
            }
            self.correction = self.correction.clamp(-tr, b_max * n);
            self.last_error = error;
            let next_round = tr + self.correction;
            for i in 0..self.job_of.len() {
                if self.job_of[i].is_some() {
                    let target = portion(next_round, self.weights[i], total);
                    // k_pi = 0.5
                    let b = self.burst[i] + (target - self.used[i]) / 2;
                    self.burst[i] = self.saturate(b);
                } else {
                    self.burst[i] = 0;
                }
            }
        }
        if self.in_round && self.rounds.len() < ROUNDS_KEPT {
            self.rounds.push(Round {
                index: self.round_count - 1,
                end: now,
                duration: Nanos::from_ns(tr.max(0) as u64),
                set_point: Nanos::from_ns(self.set_point.max(0) as u64),
                correction: self.correction,
            });
        }
        self.used.iter_mut().for_each(|u| *u = 0);
        self.in_round = true;
    }

    fn set_active(&mut self, task: usize, job: Option<JobId>) {
        if task < self.job_of.len() && self.job_of[task].is_some() != job.is_some() {
            self.reinit = true;
        }
        if let Some(slot) = self.job_of.get_mut(task) {
            *slot = job;
        }
    }
}

impl BurstRounds for Ipi {
    fn round_len(&self) -> usize {
        self.job_of.len()
    }

    fn task_at(&self, k: usize) -> usize {
        k
    }

    fn cursor(&mut self) -> &mut usize {
        &mut self.cursor
    }

    fn bursts(&self) -> (&[Option<JobId>], &[i64], &[i64]) {
        (&self.job_of, &self.burst, &self.used)
    }

    fn regulate(&mut self, now: Nanos) {
        Ipi::regulate(self, now);
    }
}

impl Scheduler for Ipi {
    fn name(&self) -> String {
        self.params.to_string()
    }

    fn on_release(&mut self, job: JobId, sys: &System<'_>) {
        self.set_active(sys.job(job).task, Some(job));
    }

    fn on_unblock(&mut self, job: JobId, sys: &System<'_>) {
        self.set_active(sys.job(job).task, Some(job));
    }

    fn on_complete(&mut self, job: JobId, sys: &System<'_>) {
        self.set_active(sys.job(job).task, None);
    }

    fn on_block(&mut self, job: JobId, sys: &System<'_>) {
        self.set_active(sys.job(job).task, None);
    }

    fn on_executed(&mut self, job: JobId, amount: Nanos) {
        if let Some(task) = self.job_of.iter().position(|&j| j == Some(job)) {
            self.used[task] += amount.as_ns() as i64;
        }
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        let n = self.job_of.len();
        self.burst_end = None;
        if self.job_of.iter().all(Option::is_none) {
            self.cursor = n;
            return None;
        }
        let (job, burst_end) = pick_in_rounds(self, sys)?;
        self.burst_end = Some(burst_end);
        Some(job)
    }

    fn callback_at(&self) -> Option<Nanos> {
        self.burst_end
    }

    fn data(&self) -> Option<serde_json::Value> {
        rounds_json(&self.rounds, self.round_count)
    }
}
