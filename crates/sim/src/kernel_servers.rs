//! Linux's RT throttling and fair server as servers that take the
//! processor from the simulated real-time tasks (the overheads file's
//! `[throttling]` table; the analysis side is `rtlab_analysis::throttling`).
//!
//! Under fixed-priority schedulers only (SCHED_FIFO's world), per CPU
//! (partitioned runs add the CPUs' figures up); the engine leaves other
//! schedulers and global scheduling alone and says so in the report.
//!
//! - **RT throttling** (Q_rt per P_rt): windows `[k P_rt, (k+1) P_rt)` from
//!   time 0. Job execution in the current window is counted; the instant it
//!   reaches Q_rt the rest of the window is a blackout (no job runs).
//! - **The fair server** (Q_fs per P_fs, deferred as in Linux 6.12+):
//!   SCHED_OTHER work is assumed always runnable, so the processor's idle
//!   time is its background execution, charged to the server's budget `r`.
//!   The server starts with deadline `d = P_fs` and `r = Q_fs`. When `r`
//!   reaches 0 it waits for `d`, then `r = Q_fs`, `d += P_fs`. When
//!   `d − r = now` with `r > 0` (zero laxity; only while the processor is
//!   busy, since idle time moves `d − r` with `now`) it starts a new period
//!   (`d = now + P_fs`) and takes the processor for Q_fs in one piece, then
//!   waits for `d`. An RT-throttling blackout is SCHED_OTHER time, charged
//!   to `r` when it starts.
//!
//! Kernel overheads are neither job execution (they do not count towards
//! Q_rt) nor idle time (they do not feed the fair server).

use rtlab_model::overheads::{Reservation, Throttling};
use rtlab_model::Nanos;

/// What the servers did in a run: the document type lives in the result
/// model, beside [`SimReport`](rtlab_model::results::SimReport).
pub use rtlab_model::results::ThrottlingReport;

/// RT throttling's state: the current window and its job execution.
#[derive(Debug, Clone)]
struct RtThrottle {
    limit: Reservation,
    window_start: Nanos,
    used: Nanos,
    throttled: bool,
}

impl RtThrottle {
    fn window_end(&self) -> Nanos {
        self.window_start.saturating_add(self.limit.period)
    }
}

/// The deferred fair server's state.
#[derive(Debug, Clone)]
struct FairServer {
    limit: Reservation,
    deadline: Nanos,
    runtime: Nanos,
    /// Out of budget, waiting for `deadline`.
    waiting: bool,
}

impl FairServer {
    /// Background (SCHED_OTHER) execution of `amount`.
    fn consume(&mut self, amount: Nanos) {
        if self.waiting {
            return;
        }
        self.runtime = self.runtime.saturating_sub(amount);
        if self.runtime.is_zero() {
            self.waiting = true;
        }
    }
}

/// Both servers (either may be absent) and what they did.
#[derive(Debug, Clone)]
pub(crate) struct KernelServers {
    rt: Option<RtThrottle>,
    fair: Option<FairServer>,
    report: ThrottlingReport,
}

impl KernelServers {
    /// The servers `throttling` states, from time 0.
    pub(crate) fn new(throttling: &Throttling) -> KernelServers {
        KernelServers {
            rt: throttling.rt.map(|limit| RtThrottle {
                limit,
                window_start: Nanos::ZERO,
                used: Nanos::ZERO,
                throttled: false,
            }),
            fair: throttling.fair_server.map(|limit| FairServer {
                limit,
                deadline: limit.period,
                runtime: limit.runtime,
                waiting: false,
            }),
            report: ThrottlingReport {
                model: throttling.to_string(),
                ..ThrottlingReport::default()
            },
        }
    }

    /// Accounts `[from, to)`: `executed` of it was job execution and
    /// `idle` of it had nothing at all on the processor.
    pub(crate) fn account(&mut self, executed: Nanos, idle: Nanos) {
        if let Some(rt) = &mut self.rt {
            rt.used = rt.used.saturating_add(executed);
        }
        if let Some(fair) = &mut self.fair {
            fair.consume(idle);
        }
    }

    /// The next instant a server may act: a window's end, the instant the
    /// running job (executing from `exec_start`) would use up Q_rt, a fair
    /// server's replenishment or zero laxity.
    pub(crate) fn next_event(&self, exec_start: Option<Nanos>) -> Option<Nanos> {
        let rt = self.rt.as_ref().map(|rt| {
            let limit = exec_start
                .filter(|_| !rt.throttled)
                .map(|s| s.saturating_add(rt.limit.runtime.saturating_sub(rt.used)));
            limit.map_or(rt.window_end(), |l| l.min(rt.window_end()))
        });
        let fair = self.fair.as_ref().map(|f| {
            if f.waiting {
                f.deadline
            } else {
                f.deadline.saturating_sub(f.runtime)
            }
        });
        [rt, fair].into_iter().flatten().min()
    }

    /// Acts at `now`; returns the end of a blackout that starts at
    /// `max(now, busy_until)`, if one does.
    pub(crate) fn act(&mut self, now: Nanos, busy_until: Nanos) -> Option<Nanos> {
        let mut blackout_end: Option<Nanos> = None;
        if let Some(rt) = &mut self.rt {
            while rt.window_end() <= now {
                rt.window_start = rt.window_end();
                rt.used = Nanos::ZERO;
                rt.throttled = false;
            }
            if !rt.throttled && rt.used >= rt.limit.runtime && rt.limit.runtime < rt.limit.period {
                rt.throttled = true;
                let start = now.max(busy_until);
                let end = rt.window_end().max(start);
                self.report.rt_throttles += 1;
                self.report.rt_throttled_ns += (end - start).as_ns();
                if let Some(fair) = &mut self.fair {
                    fair.consume(end - start);
                }
                blackout_end = Some(end);
            }
        }
        if let Some(fair) = &mut self.fair {
            if fair.waiting && fair.deadline <= now {
                fair.waiting = false;
                fair.runtime = fair.limit.runtime;
                fair.deadline = fair.deadline.saturating_add(fair.limit.period);
            }
            if !fair.waiting && fair.deadline.saturating_sub(fair.runtime) <= now {
                let start = blackout_end.unwrap_or(now.max(busy_until));
                let end = start.saturating_add(fair.limit.runtime);
                fair.deadline = now.saturating_add(fair.limit.period);
                fair.runtime = Nanos::ZERO;
                fair.waiting = true;
                self.report.fair_server_runs += 1;
                self.report.fair_server_ns += fair.limit.runtime.as_ns();
                blackout_end = Some(end);
            }
        }
        blackout_end
    }

    /// Processor time the servers took.
    pub(crate) fn taken_ns(&self) -> u64 {
        self.report.rt_throttled_ns + self.report.fair_server_ns
    }

    /// What they did.
    pub(crate) fn report(&self) -> ThrottlingReport {
        self.report.clone()
    }
}
