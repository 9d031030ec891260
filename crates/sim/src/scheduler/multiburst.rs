//! The PI Multiburst control scheduler (`multiburst`), paper 002 §3.2,
//! Algorithms 7 and 8 and Listings 3.2-3.4.
//!
//! Rule: rounds as in I+PI ([`super::ipi`]) over a list of **active
//! threads** (tasks with a ready job), each running for at most its burst
//! per round, but:
//!
//! - one PI regulator on the round duration with `w1 = 2`, `w2 = −1`:
//!   `b_c(k) = b_c(k-1) + 2·e(k-1) − e(k-2)`, `e = τ_r° − τ_r`, and when a
//!   thread woke during the round `b_c = Σ τ_t / Σ_active α − τ_r`; `b_c` is
//!   saturated to `[−τ_r, b_max·n]` and every active thread gets
//!   `b_i = α_i·(τ_r + b_c)` saturated to `[b_min, b_max]` (no inner loop);
//! - a thread that **wakes mid-round** gets a burst from the remainder of the
//!   round, `α_i·(τ_r° − τ_r)`, and all bursts are renormalised so the round
//!   still ends on time (Algorithm 8);
//! - where the woken thread goes depends on its wake-up policy:
//!   `immediate` (runs now, then the preempted thread resumes),
//!   `next-burst` (right after the running thread) or `end-of-round`
//!   (appended; the default). The policy is per task.
//!
//! The shares `α_i` are normalised over all tasks (as Listing 3.3) and the
//! regulators restart from `b_i = α_i·τ_r°` when parameters change
//! (`reshare`). Parameters:
//! `multiburst:burst=4ms,bmin=200us,bmax=20ms,share=rate|util|equal|given,
//! wake=WAKE,reshare=ROUND:W1/W2/...`, where `WAKE` is `/`-separated
//! entries, each either a bare policy (`immediate`, `next-burst` or
//! `end-of-round`: the default for every task not named) or
//! `TASK:POLICY` for the task of that name:
//!
//! - `wake=next-burst`: every task;
//! - `wake=t1:immediate/t2:next-burst`: `t1` and `t2`, the others
//!   `end-of-round`;
//! - `wake=next-burst/t3:immediate`: `t3` immediate, the others next-burst.
//!
//! Task names are matched when the scheduler is built for the task set
//! (including `--phase` tasks); a name no task has is an error. A name may
//! contain `:` (the policy is after the last one) but not `/` or `,`.

use std::fmt;

use rtlab_model::{Nanos, Task};

use super::ipi::{pick_in_rounds, portion, rounds_json, BurstRounds, Round, Share, ROUNDS_KEPT};
use super::{parse_params, Scheduler, System};
use crate::error::SimError;
use crate::job::JobId;

/// Where a thread woken mid-round is put.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WakePolicy {
    /// Preempt the running thread at once; it resumes next.
    Immediate,
    /// Run right after the running thread's burst.
    NextBurst,
    /// Run at the end of the round.
    #[default]
    EndOfRound,
}

impl WakePolicy {
    fn parse(text: &str) -> Result<WakePolicy, String> {
        match text {
            "immediate" => Ok(WakePolicy::Immediate),
            "next-burst" => Ok(WakePolicy::NextBurst),
            "end-of-round" => Ok(WakePolicy::EndOfRound),
            _ => Err(format!(
                "wake `{text}`: use immediate, next-burst or end-of-round"
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            WakePolicy::Immediate => "immediate",
            WakePolicy::NextBurst => "next-burst",
            WakePolicy::EndOfRound => "end-of-round",
        }
    }
}

/// Parameters of [`Multiburst`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiburstParams {
    /// Nominal burst per task (round set point = this × number of tasks).
    pub burst: Nanos,
    /// Lower burst saturation.
    pub b_min: Nanos,
    /// Upper burst saturation.
    pub b_max: Nanos,
    /// How shares are derived.
    pub share: Share,
    /// Wake-up policy of every task not named in `wake_tasks`.
    pub wake: WakePolicy,
    /// Per-task wake-up policies by task name, in the order written
    /// (`wake=NAME:POLICY/...`); names are resolved by [`Multiburst::new`].
    pub wake_tasks: Vec<(String, WakePolicy)>,
    /// At the start of this round, switch to these weights (one per task).
    pub reshare: Option<(u64, Vec<u64>)>,
}

impl Default for MultiburstParams {
    fn default() -> MultiburstParams {
        MultiburstParams {
            burst: Nanos::from_ms(4),
            b_min: Nanos::from_us(200),
            b_max: Nanos::from_ms(20),
            share: Share::Rate,
            wake: WakePolicy::EndOfRound,
            wake_tasks: Vec::new(),
            reshare: None,
        }
    }
}

impl MultiburstParams {
    /// Parses `key=value,...` (empty for the defaults).
    pub fn parse(arg: &str) -> Result<MultiburstParams, String> {
        let mut p = MultiburstParams::default();
        for (k, v) in parse_params(arg)? {
            let dur = || v.parse::<Nanos>().map_err(|e| format!("{k}: {e}"));
            match k {
                "burst" => p.burst = dur()?,
                "bmin" => p.b_min = dur()?,
                "bmax" => p.b_max = dur()?,
                "share" => p.share = Share::parse(v)?,
                "wake" => (p.wake, p.wake_tasks) = parse_wake(v)?,
                "reshare" => {
                    let bad = || format!("reshare `{v}`: write ROUND:W1/W2/..., e.g. 50:1/2/2");
                    let (round, weights) = v.split_once(':').ok_or_else(bad)?;
                    let round = round.parse::<u64>().map_err(|_| bad())?;
                    let weights = weights
                        .split('/')
                        .map(|w| w.parse::<u64>().ok().filter(|&w| w > 0))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(bad)?;
                    p.reshare = Some((round, weights));
                }
                _ => {
                    return Err(format!(
                        "unknown parameter `{k}` (burst, bmin, bmax, share, wake, reshare)"
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

/// Parses the value of `wake=`: `/`-separated entries, each a bare policy
/// (the default, at most once) or `TASK:POLICY` (each task at most once).
fn parse_wake(v: &str) -> Result<(WakePolicy, Vec<(String, WakePolicy)>), String> {
    let mut default = None;
    let mut per_task: Vec<(String, WakePolicy)> = Vec::new();
    for entry in v.split('/').map(str::trim) {
        if entry.is_empty() {
            return Err(format!(
                "wake `{v}`: empty entry (write POLICY or TASK:POLICY, separated by /)"
            ));
        }
        match entry.rsplit_once(':') {
            None => {
                if default.is_some() {
                    return Err(format!(
                        "wake `{v}`: more than one default policy (name tasks as TASK:POLICY)"
                    ));
                }
                default = Some(WakePolicy::parse(entry)?);
            }
            Some((name, policy)) => {
                let name = name.trim();
                if name.is_empty() {
                    return Err(format!("wake `{v}`: `{entry}` has no task name"));
                }
                if per_task.iter().any(|(n, _)| n == name) {
                    return Err(format!("wake `{v}`: task `{name}` is given twice"));
                }
                let policy = WakePolicy::parse(policy.trim())
                    .map_err(|e| format!("wake task `{name}`: {e}"))?;
                per_task.push((name.to_string(), policy));
            }
        }
    }
    Ok((default.unwrap_or_default(), per_task))
}

impl fmt::Display for MultiburstParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = MultiburstParams::default();
        let mut parts = Vec::new();
        if self.burst != d.burst {
            parts.push(format!("burst={}", self.burst));
        }
        if self.b_min != d.b_min {
            parts.push(format!("bmin={}", self.b_min));
        }
        if self.b_max != d.b_max {
            parts.push(format!("bmax={}", self.b_max));
        }
        if self.share != d.share {
            parts.push(format!("share={}", self.share.name()));
        }
        if self.wake != d.wake || !self.wake_tasks.is_empty() {
            let mut entries = Vec::new();
            if self.wake != d.wake {
                entries.push(self.wake.name().to_string());
            }
            for (name, policy) in &self.wake_tasks {
                entries.push(format!("{name}:{}", policy.name()));
            }
            parts.push(format!("wake={}", entries.join("/")));
        }
        if let Some((round, w)) = &self.reshare {
            let w: Vec<String> = w.iter().map(u64::to_string).collect();
            parts.push(format!("reshare={round}:{}", w.join("/")));
        }
        if parts.is_empty() {
            f.write_str("multiburst")
        } else {
            write!(f, "multiburst:{}", parts.join(","))
        }
    }
}

/// The wake-up policy of each of `tasks`: its own if `params` names it, the
/// default otherwise. A name that no task has is an error.
fn wake_policies(params: &MultiburstParams, tasks: &[Task]) -> Result<Vec<WakePolicy>, SimError> {
    for (name, _) in &params.wake_tasks {
        if !tasks.iter().any(|t| t.name == *name) {
            let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
            return Err(SimError::Setup {
                scheduler: "multiburst".into(),
                why: format!("wake: no task named `{name}` (tasks: {})", names.join(", ")),
            });
        }
    }
    Ok(tasks
        .iter()
        .map(|t| {
            params
                .wake_tasks
                .iter()
                .find(|(name, _)| *name == t.name)
                .map_or(params.wake, |&(_, policy)| policy)
        })
        .collect())
}

/// The Multiburst scheduler.
#[derive(Debug, Clone)]
pub struct Multiburst {
    params: MultiburstParams,
    /// Wake-up policy of each task (resolved from the params).
    wake: Vec<WakePolicy>,
    weights: Vec<u64>,
    total_weight: u64,
    job_of: Vec<Option<JobId>>,
    /// Active threads in round order.
    active: Vec<usize>,
    /// Position of the current thread in `active` (== len: end of round).
    cursor: usize,
    burst: Vec<i64>,
    used: Vec<i64>,
    /// Threads that woke since the last decision (Algorithm 8 pending).
    woken: Vec<usize>,
    woken_in_round: bool,
    set_point: i64,
    correction: i64,
    last_error: i64,
    reinit: bool,
    in_round: bool,
    burst_end: Option<Nanos>,
    rounds: Vec<Round>,
    round_count: u64,
}

impl Multiburst {
    /// Multiburst for `tasks`.
    pub fn new(params: MultiburstParams, tasks: &[Task]) -> Result<Multiburst, SimError> {
        let n = tasks.len();
        let weights = params.share.weights(tasks)?;
        if let Some((_, w)) = &params.reshare {
            if w.len() != n {
                return Err(SimError::Setup {
                    scheduler: "multiburst".into(),
                    why: format!("reshare gives {} weights for {n} tasks", w.len()),
                });
            }
        }
        let wake = wake_policies(&params, tasks)?;
        Ok(Multiburst {
            total_weight: weights.iter().sum(),
            wake,
            weights,
            set_point: params.burst.as_ns() as i64 * n as i64,
            params,
            job_of: vec![None; n],
            active: Vec::new(),
            cursor: 0,
            burst: vec![0; n],
            used: vec![0; n],
            woken: Vec::new(),
            woken_in_round: false,
            correction: 0,
            last_error: 0,
            reinit: true,
            in_round: false,
            burst_end: None,
            rounds: Vec::new(),
            round_count: 0,
        })
    }

    fn saturate(&self, b: i64) -> i64 {
        b.clamp(
            self.params.b_min.as_ns() as i64,
            self.params.b_max.as_ns() as i64,
        )
    }

    fn alfa_of(&self, i: usize, x: i64) -> i64 {
        portion(x, self.weights[i], self.total_weight)
    }

    /// Algorithm 7 at a round boundary (Listing 3.3).
    fn regulate(&mut self, now: Nanos) {
        let tr: i64 = self.used.iter().sum();
        if self.in_round {
            self.round_count += 1;
            if self.rounds.len() < ROUNDS_KEPT {
                self.rounds.push(Round {
                    index: self.round_count - 1,
                    end: now,
                    duration: Nanos::from_ns(tr.max(0) as u64),
                    set_point: Nanos::from_ns(self.set_point.max(0) as u64),
                    correction: self.correction,
                });
            }
        }
        if let Some((round, w)) = &self.params.reshare {
            if *round == self.round_count && self.in_round {
                self.weights = w.clone();
                self.total_weight = self.weights.iter().sum();
                self.reinit = true;
            }
        }
        let n = self.job_of.len() as i64;
        let b_max = self.params.b_max.as_ns() as i64;
        if self.reinit {
            self.reinit = false;
            self.correction = 0;
            self.last_error = 0;
            for i in 0..self.job_of.len() {
                self.burst[i] = self.saturate(self.alfa_of(i, self.set_point));
            }
        } else {
            let error = self.set_point - tr;
            if self.woken_in_round {
                let active_weight: u64 = self.active.iter().map(|&i| self.weights[i]).sum();
                self.correction = if active_weight == 0 {
                    0
                } else {
                    portion(tr, self.total_weight, active_weight) - tr
                };
            } else {
                self.correction += 2 * error - self.last_error;
            }
            self.correction = self.correction.clamp(-tr, b_max * n);
            self.last_error = error;
            let next_round = tr + self.correction;
            for i in 0..self.job_of.len() {
                self.burst[i] = if self.job_of[i].is_some() {
                    self.saturate(self.alfa_of(i, next_round))
                } else {
                    0
                };
            }
        }
        self.woken_in_round = false;
        self.used.iter_mut().for_each(|u| *u = 0);
        self.in_round = true;
    }

    /// Algorithm 8: bursts for threads woken mid-round from the remainder.
    fn assign_woken(&mut self) {
        if self.woken.is_empty() {
            return;
        }
        let tr: i64 = self.used.iter().sum();
        let remainder = (self.set_point - tr).max(0);
        let mut total = remainder;
        for &i in &self.woken {
            self.burst[i] = self.alfa_of(i, remainder);
            total += self.burst[i];
        }
        if total > 0 {
            for i in 0..self.job_of.len() {
                let left = self.burst[i] - self.used[i];
                self.burst[i] = portion(left, remainder as u64, total as u64) + self.used[i];
            }
        }
        self.woken.clear();
    }

    fn wake(&mut self, task: usize, job: JobId) {
        if task >= self.job_of.len() {
            return;
        }
        self.job_of[task] = Some(job);
        if self.active.contains(&task) {
            return;
        }
        let at = match self.wake[task] {
            _ if self.cursor >= self.active.len() => self.active.len(),
            WakePolicy::Immediate => self.cursor,
            WakePolicy::NextBurst => self.cursor + 1,
            WakePolicy::EndOfRound => self.active.len(),
        };
        self.active.insert(at, task);
        if self.in_round {
            self.woken.push(task);
            self.woken_in_round = true;
        }
    }

    fn sleep(&mut self, task: usize) {
        if task >= self.job_of.len() {
            return;
        }
        self.job_of[task] = None;
        if let Some(pos) = self.active.iter().position(|&t| t == task) {
            self.active.remove(pos);
            if pos < self.cursor {
                self.cursor -= 1;
            }
        }
        self.woken.retain(|&t| t != task);
    }
}

impl BurstRounds for Multiburst {
    fn round_len(&self) -> usize {
        self.active.len()
    }

    fn task_at(&self, k: usize) -> usize {
        self.active[k]
    }

    fn cursor(&mut self) -> &mut usize {
        &mut self.cursor
    }

    fn bursts(&self) -> (&[Option<JobId>], &[i64], &[i64]) {
        (&self.job_of, &self.burst, &self.used)
    }

    fn regulate(&mut self, now: Nanos) {
        Multiburst::regulate(self, now);
    }
}

impl Scheduler for Multiburst {
    fn name(&self) -> String {
        self.params.to_string()
    }

    fn on_release(&mut self, job: JobId, sys: &System<'_>) {
        self.wake(sys.job(job).task, job);
    }

    fn on_unblock(&mut self, job: JobId, sys: &System<'_>) {
        self.wake(sys.job(job).task, job);
    }

    fn on_complete(&mut self, job: JobId, sys: &System<'_>) {
        self.sleep(sys.job(job).task);
    }

    fn on_block(&mut self, job: JobId, sys: &System<'_>) {
        self.sleep(sys.job(job).task);
    }

    fn on_executed(&mut self, job: JobId, amount: Nanos) {
        if let Some(task) = self.job_of.iter().position(|&j| j == Some(job)) {
            self.used[task] += amount.as_ns() as i64;
        }
    }

    fn pick(&mut self, sys: &System<'_>) -> Option<JobId> {
        self.burst_end = None;
        self.assign_woken();
        if self.active.is_empty() {
            self.cursor = 0;
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
