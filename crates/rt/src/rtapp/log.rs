//! rt-app's per-thread log (`<logdir>/<log_basename>-<thread>-<index>.log`):
//! one row per execution of the thread's phase, i.e. one job of a periodic
//! thread, in rt-app 1.0's layout (`rt-app_utils.c`, `log_timing`):
//!
//! ```text
//! # Policy : SCHED_FIFO priority : 14
//! #idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat
//!    0    62500     1295     9736     18622498067     18622507844           12938       7984       1250      10000         26
//! ```
//!
//! All times are microseconds: `run` is the wall-clock time spent in the
//! job's `run` events (it includes preemption), `period` the phase's
//! length, `start`/`end` absolute CLOCK_MONOTONIC, `rel_st` from rt-app's
//! start, `slack` the time from the end of the job's events to the timer's
//! next expiry (negative when the job overran it), `c_duration` the
//! requested `run` total (C), `c_period` the timer period (T) and `wu_lat`
//! how late the thread woke from that timer.
//!
//! With the absolute timer `rtlab taskset export` writes, job k is released
//! at t₀ + offset + k·T and its timer expires at the next release, so its
//! response time is exactly `R = c_period - slack` (µs resolution).

use std::fmt;

/// The column names rt-app 1.0 writes, in order.
pub const COLUMNS: [&str; 11] = [
    "#idx",
    "perf",
    "run",
    "period",
    "start",
    "end",
    "rel_st",
    "slack",
    "c_duration",
    "c_period",
    "wu_lat",
];

/// One row: one job (times in µs, as logged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogRow {
    /// Thread index.
    pub idx: u32,
    /// Loops of rt-app's busy function executed.
    pub perf: u64,
    /// Wall-clock time in `run` events.
    pub run_us: u64,
    /// Length of the phase (job plus the wait for the next release).
    pub period_us: u64,
    /// Phase start, CLOCK_MONOTONIC µs.
    pub start_us: u64,
    /// Phase end, CLOCK_MONOTONIC µs.
    pub end_us: u64,
    /// Phase start relative to rt-app's start.
    pub rel_st_us: u64,
    /// Next timer expiry minus the end of the job's events.
    pub slack_us: i64,
    /// Requested run time (C).
    pub c_duration_us: u64,
    /// Timer period (T).
    pub c_period_us: u64,
    /// Wake-up latency from the timer (0 when the job overran it).
    pub wu_lat_us: u64,
}

impl LogRow {
    /// Response time `c_period - slack` in ns (release to the end of the
    /// job's events), valid for an absolute timer.
    pub fn response_ns(&self) -> u64 {
        let r = i128::from(self.c_period_us) - i128::from(self.slack_us);
        u64::try_from(r.max(0) * 1_000).unwrap_or(u64::MAX)
    }

    /// True when the thread slept until the timer (the job ended before
    /// the next release), so `wu_lat` is a measured wake-up latency.
    pub fn slept(&self) -> bool {
        self.slack_us > 0
    }
}

/// One thread's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadLog {
    /// The policy line (`SCHED_FIFO priority : 14`), as written.
    pub policy: String,
    /// The rows, in order.
    pub rows: Vec<LogRow>,
}

/// A log that is not rt-app 1.0's layout: line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError {
    /// 1-based line.
    pub line: usize,
    /// One line.
    pub message: String,
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parses a thread's log. The column header must be rt-app 1.0's
/// ([`COLUMNS`]); a row with a missing or non-numeric field is an error
/// (a last line cut short by a killed rt-app is dropped).
pub fn parse(text: &str) -> Result<ThreadLog, LogError> {
    let mut policy = String::new();
    let mut header = false;
    let mut rows = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let number = i + 1;
        if let Some(rest) = line.strip_prefix("# Policy : ") {
            policy = rest.trim().to_string();
            continue;
        }
        if line.starts_with("#idx") {
            let names: Vec<&str> = line.split_whitespace().collect();
            if names != COLUMNS {
                return Err(LogError {
                    line: number,
                    message: format!(
                        "columns `{}` are not rt-app 1.0's `{}`",
                        names.join(" "),
                        COLUMNS.join(" ")
                    ),
                });
            }
            header = true;
            continue;
        }
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if !header {
            return Err(LogError {
                line: number,
                message: "a row before the `#idx perf run ...` header".into(),
            });
        }
        match row(line) {
            Some(r) => rows.push(r),
            None if number == lines.len() && !text.ends_with('\n') => {}
            None => {
                return Err(LogError {
                    line: number,
                    message: format!("not a row of {} numbers: `{}`", COLUMNS.len(), line.trim()),
                })
            }
        }
    }
    if !header {
        return Err(LogError {
            line: 1,
            message: "no `#idx perf run ...` header: not an rt-app log".into(),
        });
    }
    Ok(ThreadLog { policy, rows })
}

fn row(line: &str) -> Option<LogRow> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() != COLUMNS.len() {
        return None;
    }
    let u = |i: usize| f[i].parse::<u64>().ok();
    Some(LogRow {
        idx: f[0].parse().ok()?,
        perf: u(1)?,
        run_us: u(2)?,
        period_us: u(3)?,
        start_us: u(4)?,
        end_us: u(5)?,
        rel_st_us: u(6)?,
        slack_us: f[7].parse().ok()?,
        c_duration_us: u(8)?,
        c_period_us: u(9)?,
        wu_lat_us: u(10)?,
    })
}
