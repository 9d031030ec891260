//! What `rtlab drift` measured, as the report renders it: relative versus
//! absolute sleeps (seed 003). The loops themselves are `rtlab_rt::drift`.

use crate::Nanos;

/// How a loop sleeps between its wake-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SleepKind {
    /// Until an absolute time on the grid (`delay until`, TIMER_ABSTIME).
    Absolute,
    /// A relative interval from a clock read after the wake-up (`delay`).
    Relative,
    /// A relative sleep of the time left to the next grid point
    /// (`delay Next - Clock`).
    Compensated,
}

impl SleepKind {
    /// Every kind, in the order the reports list them.
    pub const ALL: [SleepKind; 3] = [
        SleepKind::Absolute,
        SleepKind::Relative,
        SleepKind::Compensated,
    ];

    /// `absolute`, `relative` or `compensated`.
    pub fn name(self) -> &'static str {
        match self {
            SleepKind::Absolute => "absolute",
            SleepKind::Relative => "relative",
            SleepKind::Compensated => "compensated",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<SleepKind> {
        SleepKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What the loop calls, in words.
    pub fn call(self) -> &'static str {
        match self {
            SleepKind::Absolute => "clock_nanosleep(TIMER_ABSTIME, next); next += T (delay until)",
            SleepKind::Relative => "clock_nanosleep(relative, T) (delay T)",
            SleepKind::Compensated => {
                "clock_nanosleep(relative, next - now); next += T (delay Next - Clock)"
            }
        }
    }
}

/// The least-squares line `lag = intercept + slope * x` over every wake-up,
/// computed online with Welford's co-moments (numerically stable over
/// millions of points).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LagFit {
    n: u64,
    mean_x: f64,
    mean_y: f64,
    m2_x: f64,
    c_xy: f64,
}

impl LagFit {
    /// Adds one point (`x` grid time and `y` lag, both in ns).
    pub fn add(&mut self, x: f64, y: f64) {
        self.n += 1;
        let n = self.n as f64;
        let dx = x - self.mean_x;
        self.mean_x += dx / n;
        self.mean_y += (y - self.mean_y) / n;
        self.m2_x += dx * (x - self.mean_x);
        self.c_xy += dx * (y - self.mean_y);
    }

    /// Points fitted.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The slope (ns of lag per ns of grid time); 0 with fewer than two
    /// distinct x.
    pub fn slope(&self) -> f64 {
        if self.m2_x > 0.0 {
            self.c_xy / self.m2_x
        } else {
            0.0
        }
    }

    /// The slope as lag gained per hour.
    pub fn per_hour(&self) -> Nanos {
        Nanos::from_ns((self.slope().max(0.0) * 3.6e12).round() as u64)
    }

    /// The signed slope as nanoseconds per hour.
    pub fn per_hour_ns(&self) -> f64 {
        self.slope() * 3.6e12
    }
}

/// What one loop measured.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftLoop {
    /// Its kind.
    pub kind: SleepKind,
    /// Kernel thread id.
    pub tid: i32,
    /// Wake-ups.
    pub wakeups: u64,
    /// Grid periods skipped (absolute loop only).
    pub skipped: u64,
    /// Mean `woke - target` of its wake-ups: the sleeps' own overshoot.
    pub latency_avg: Nanos,
    /// Largest overshoot.
    pub latency_max: Nanos,
    /// Lag of the last wake-up.
    pub final_lag: Nanos,
    /// The largest lag.
    pub max_lag: Nanos,
    /// Lag against grid time, every wake-up.
    pub fit: LagFit,
    /// Lag of the last wake-up in each window (`None`: none in it).
    pub series: Vec<Option<Nanos>>,
}

/// What a drift run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftRun {
    /// The period of every loop.
    pub period: Nanos,
    /// The run length asked for.
    pub duration: Nanos,
    /// The loops' policy in words (`SCHED_FIFO priority 99`).
    pub policy: String,
    /// Its short name (`fifo`, `other`, ...).
    pub policy_name: &'static str,
    /// Its priority (0 for SCHED_OTHER).
    pub priority: u8,
    /// CPU every loop was pinned to, if any.
    pub cpu: Option<usize>,
    /// CPU time each loop burnt after each wake-up.
    pub work: Nanos,
    /// The window of [`DriftLoop::series`].
    pub window: Nanos,
    /// One per kind, in the order asked for.
    pub loops: Vec<DriftLoop>,
    /// Stopped early by the stop flag.
    pub interrupted: bool,
    /// Wall time of the run.
    pub wall: Nanos,
}

impl DriftRun {
    /// The loop of `kind`, if it ran.
    pub fn of(&self, kind: SleepKind) -> Option<&DriftLoop> {
        self.loops.iter().find(|l| l.kind == kind)
    }

    /// The phase offset of `a` behind `b` at the end (lag of `a` minus lag
    /// of `b`, ns) and its drift per hour (difference of the fitted
    /// slopes, ns per hour).
    pub fn offset(&self, a: SleepKind, b: SleepKind) -> Option<(i64, f64)> {
        let (a, b) = (self.of(a)?, self.of(b)?);
        Some((
            a.final_lag.as_ns() as i64 - b.final_lag.as_ns() as i64,
            a.fit.per_hour_ns() - b.fit.per_hour_ns(),
        ))
    }
}
