//! What else happened on the machine while a real run was measured: the
//! disturbance account of a run's CPUs and its verdict, `clean` or
//! `disturbed` by what and how much.
//!
//! Plain data: `rtlab_host::disturbance` fills a [`DisturbanceAccount`]
//! from the kernel's counters read before and after the measured window,
//! and [`DisturbanceAccount::judge`] gives it its [`Verdict`] by the
//! thresholds below. Every real run carries one (`"disturbance"` in
//! `rtlab run --json`, in the store's document, in the report).
//!
//! **Thresholds** (per measured CPU, as a share of the window W; a share
//! at or above its threshold makes the run `disturbed`):
//!
//! | what | threshold | why |
//! |---|---|---|
//! | time stolen by the host (`/proc/stat` steal) | [`STEAL_SHARE`] 1 % | a vCPU not running is time no job can use |
//! | interrupts + softirqs (`/proc/stat` irq, softirq) | [`INTERRUPT_SHARE`] 2 % | handlers run above every thread |
//! | other threads on the CPU (`/proc/schedstat` minus the set's own) | [`OTHER_THREADS_SHARE`] 2 % | their kernel sections, caches and the fair server stand in the set's way |
//! | memory pressure (PSI `some`, machine-wide) | [`MEMORY_PRESSURE_SHARE`] 5 % | reclaim and compaction stall whoever touches memory |
//!
//! A share below 1 ms of the window is never a disturbance (the counters'
//! resolution: steal, irq and softirq come in `USER_HZ` ticks of 10 ms).
//! The load of the other CPUs, CPU and I/O pressure and the wait for the
//! measurement lock are reported but do not decide the verdict.

use serde::{Deserialize, Serialize};

/// Host steal at or above this share of the window disturbs the run.
pub const STEAL_SHARE: f64 = 0.01;
/// Interrupt plus softirq time at or above this share disturbs the run.
pub const INTERRUPT_SHARE: f64 = 0.02;
/// Other threads' time on a measured CPU at or above this share disturbs
/// the run.
pub const OTHER_THREADS_SHARE: f64 = 0.02;
/// Memory pressure (PSI `some`) at or above this share disturbs the run.
pub const MEMORY_PRESSURE_SHARE: f64 = 0.05;
/// Below this much time, a share is never a disturbance (ns).
pub const NEGLIGIBLE_NS: u64 = 1_000_000;
/// How many other threads an account names per CPU at most.
pub const MAX_CULPRITS: usize = 5;

/// What the kernel's counters say about a run's measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DisturbanceAccount {
    /// Length of the measured window (ns, monotonic clock).
    pub window_ns: u64,
    /// Per measured CPU.
    pub cpus: Vec<CpuDisturbance>,
    /// Share of the other CPUs' time they were busy (not idle) over the
    /// window; null when every CPU was measured.
    pub other_cpus_busy: Option<f64>,
    /// The 1-minute load average at the window's end (`/proc/loadavg`).
    pub load_average: Option<f64>,
    /// PSI memory pressure over the window (null without `/proc/pressure`).
    pub memory_pressure: Option<Pressure>,
    /// PSI CPU pressure over the window.
    pub cpu_pressure: Option<Pressure>,
    /// PSI I/O pressure over the window.
    pub io_pressure: Option<Pressure>,
    /// How long the command waited for the measurement lock of its CPUs
    /// before the window (ns; null when not known).
    pub lock_wait_ns: Option<u64>,
    /// RT throttling in force when the window started, as
    /// `RUNTIME/PERIOD us` or `off`.
    pub rt_throttling: Option<String>,
    /// The shield of `--isolate` in force over the window (null without).
    pub shield: Option<ShieldSummary>,
    /// What this kernel does not let rtlab see, in words.
    pub unseen: Vec<String>,
    /// Clean or disturbed, and why.
    pub verdict: Verdict,
}

/// One measured CPU over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuDisturbance {
    /// The CPU.
    pub cpu: usize,
    /// Time the host ran something else on this vCPU (`/proc/stat` steal).
    pub steal_ns: u64,
    /// Time in hard interrupt handlers (`/proc/stat` irq; sampled at the
    /// tick on a kernel without IRQ time accounting).
    pub irq_ns: u64,
    /// Time in softirqs (`/proc/stat` softirq; sampled likewise).
    pub softirq_ns: u64,
    /// Time any thread ran on the CPU (`/proc/schedstat` run time); null
    /// without schedstat.
    pub busy_ns: Option<u64>,
    /// CPU time of the run's own threads (their `schedstat`).
    pub own_ns: u64,
    /// `busy_ns - own_ns`: other threads on this CPU.
    pub other_threads_ns: Option<u64>,
    /// The other threads seen on this CPU (at the window's start or end)
    /// that ran during it, most CPU time first, at most [`MAX_CULPRITS`].
    pub culprits: Vec<Culprit>,
}

/// Another thread that ran on a measured CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Culprit {
    /// Its name (`comm`).
    pub name: String,
    /// Its process.
    pub pid: i32,
    /// The thread.
    pub tid: i32,
    /// Its policy: other, batch, idle, fifo:PRIO, rr:PRIO, deadline.
    pub policy: String,
    /// Its CPU time over the window (all of it: a thread that moved
    /// between CPUs is charged whole to the CPU it was seen on).
    pub cpu_ns: u64,
}

/// A PSI share over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// Share of the window some task stalled on the resource.
    pub some: f64,
    /// Share of the window all non-idle tasks stalled (null for CPU on
    /// kernels without it).
    pub full: Option<f64>,
}

/// What `--isolate` moved off the measured CPUs, and what it could not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShieldSummary {
    /// The shielded CPUs.
    pub cpus: Vec<usize>,
    /// Threads moved off them.
    pub threads_moved: usize,
    /// Threads that could not be moved (per-CPU kernel threads).
    pub threads_pinned: usize,
    /// Interrupts moved off them.
    pub irqs_moved: usize,
    /// Interrupts that could not be moved (per-CPU or managed).
    pub irqs_pinned: usize,
}

/// Clean or disturbed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// Nothing above its threshold.
    #[default]
    Clean,
    /// Something was.
    Disturbed,
}

/// The kind of a disturbance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonKind {
    /// Host steal.
    HostSteal,
    /// Interrupts and softirqs.
    Interrupts,
    /// Other threads on a measured CPU.
    OtherThreads,
    /// Memory pressure.
    MemoryPressure,
}

/// One disturbance above its threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    /// What.
    pub kind: ReasonKind,
    /// On which CPU (null: machine-wide).
    pub cpu: Option<usize>,
    /// How much time (ns; null for a pressure).
    pub ns: Option<u64>,
    /// Its share of the window.
    pub share: f64,
    /// In words: `38 ms stolen by the host`.
    pub text: String,
}

/// The verdict of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Clean or disturbed.
    pub kind: VerdictKind,
    /// Every disturbance above its threshold (empty when clean).
    pub reasons: Vec<Reason>,
    /// One line: `clean`, or `disturbed: CPU 1: 38 ms stolen by the host,
    /// 120 ms of other threads (cc1, pid 5687); memory pressure 12 %`.
    pub summary: String,
}

impl Verdict {
    /// True when disturbed.
    pub fn is_disturbed(&self) -> bool {
        self.kind == VerdictKind::Disturbed
    }
}

/// A real run that missed and was run once more before its result
/// counted (a Hartstone iteration, breakdown step or study cell that would
/// end its series on the miss).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rerun {
    /// Misses of the first run.
    pub first_misses: u64,
    /// The first run's verdict line (`clean`, `disturbed: ...`).
    pub first_verdict: String,
    /// Misses of the rerun.
    pub rerun_misses: u64,
    /// The rerun's verdict line.
    pub rerun_verdict: String,
    /// The rerun missed too: the miss counts (the scheduler's when the
    /// rerun was clean). False: the rerun passed, the first run was
    /// disturbed, the rerun counts.
    pub confirmed: bool,
    /// The rerun's verdict was `disturbed`: a confirmed miss may still be
    /// the machine's.
    pub rerun_disturbed: bool,
}

impl Rerun {
    /// In words: `missed 3 (disturbed: ...), rerun passed: the first run
    /// was disturbed` or `missed 3 (clean), rerun missed 2: the miss is the
    /// scheduler's`.
    pub fn describe(&self) -> String {
        let first = format!("missed {} ({})", self.first_misses, self.first_verdict);
        if self.confirmed && self.rerun_disturbed {
            format!(
                "{first}, rerun missed {} too ({}): both runs were disturbed, so the miss counts but may be the machine's",
                self.rerun_misses, self.rerun_verdict
            )
        } else if self.confirmed {
            format!(
                "{first}, rerun missed {} ({}): the miss is the scheduler's",
                self.rerun_misses, self.rerun_verdict
            )
        } else if self.first_verdict == "clean" {
            // The account saw nothing: a disturbance below its thresholds
            // (or one it does not measure, such as a late host timer).
            format!(
                "{first}, rerun passed ({}): the miss did not repeat, so it is not counted as the scheduler's (a disturbance the account did not see)",
                self.rerun_verdict
            )
        } else {
            format!(
                "{first}, rerun passed ({}): the first run was disturbed",
                self.rerun_verdict
            )
        }
    }
}

/// `38 ms`, `1.2 s`, `450 us`: a duration as a verdict says it.
pub fn human_ns(ns: u64) -> String {
    match ns {
        n if n >= 10_000_000_000 => format!("{:.0} s", n as f64 / 1e9),
        n if n >= 1_000_000_000 => format!("{:.1} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{} ms", (n + 500_000) / 1_000_000),
        n => format!("{} us", (n + 500) / 1_000),
    }
}

fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p >= 10.0 {
        format!("{p:.0} %")
    } else {
        format!("{p:.1} %")
    }
}

impl DisturbanceAccount {
    /// The verdict by the module's thresholds (does not store it: see
    /// [`DisturbanceAccount::with_verdict`]).
    pub fn judge(&self) -> Verdict {
        let w = self.window_ns.max(1) as f64;
        let mut reasons = Vec::new();
        let over = |ns: u64, threshold: f64| ns >= NEGLIGIBLE_NS && ns as f64 / w >= threshold;
        for c in &self.cpus {
            if over(c.steal_ns, STEAL_SHARE) {
                reasons.push(Reason {
                    kind: ReasonKind::HostSteal,
                    cpu: Some(c.cpu),
                    ns: Some(c.steal_ns),
                    share: c.steal_ns as f64 / w,
                    text: format!("{} stolen by the host", human_ns(c.steal_ns)),
                });
            }
            let irq = c.irq_ns + c.softirq_ns;
            if over(irq, INTERRUPT_SHARE) {
                reasons.push(Reason {
                    kind: ReasonKind::Interrupts,
                    cpu: Some(c.cpu),
                    ns: Some(irq),
                    share: irq as f64 / w,
                    text: format!("{} in interrupts", human_ns(irq)),
                });
            }
            if let Some(other) = c.other_threads_ns.filter(|&o| over(o, OTHER_THREADS_SHARE)) {
                let named: Vec<String> = c
                    .culprits
                    .iter()
                    .take(2)
                    .map(|t| format!("{}, pid {}", t.name, t.pid))
                    .collect();
                let who = if named.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", named.join("; "))
                };
                reasons.push(Reason {
                    kind: ReasonKind::OtherThreads,
                    cpu: Some(c.cpu),
                    ns: Some(other),
                    share: other as f64 / w,
                    text: format!("{} of other threads{who}", human_ns(other)),
                });
            }
        }
        if let Some(p) = self.memory_pressure {
            if p.some >= MEMORY_PRESSURE_SHARE {
                reasons.push(Reason {
                    kind: ReasonKind::MemoryPressure,
                    cpu: None,
                    ns: None,
                    share: p.some,
                    text: format!("memory pressure {}", percent(p.some)),
                });
            }
        }
        let kind = if reasons.is_empty() {
            VerdictKind::Clean
        } else {
            VerdictKind::Disturbed
        };
        let summary = summary_line(&reasons);
        Verdict {
            kind,
            reasons,
            summary,
        }
    }

    /// The account with its verdict filled in.
    pub fn with_verdict(mut self) -> Self {
        self.verdict = self.judge();
        self
    }
}

/// `clean`, or `disturbed: CPU 1: 38 ms stolen by the host, 120 ms of
/// other threads (cc1, pid 5687); memory pressure 12 %`.
fn summary_line(reasons: &[Reason]) -> String {
    if reasons.is_empty() {
        return "clean".into();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut cpus: Vec<usize> = reasons.iter().filter_map(|r| r.cpu).collect();
    cpus.dedup();
    for cpu in cpus {
        let texts: Vec<&str> = reasons
            .iter()
            .filter(|r| r.cpu == Some(cpu))
            .map(|r| r.text.as_str())
            .collect();
        parts.push(format!("CPU {cpu}: {}", texts.join(", ")));
    }
    parts.extend(
        reasons
            .iter()
            .filter(|r| r.cpu.is_none())
            .map(|r| r.text.clone()),
    );
    format!("disturbed: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(steal: u64, irq: u64, other: Option<u64>) -> CpuDisturbance {
        CpuDisturbance {
            cpu: 1,
            steal_ns: steal,
            irq_ns: irq,
            other_threads_ns: other,
            culprits: vec![Culprit {
                name: "cc1".into(),
                pid: 5687,
                tid: 5687,
                policy: "other".into(),
                cpu_ns: 120_000_000,
            }],
            ..CpuDisturbance::default()
        }
    }

    /// The example: 38 ms steal (1.9 % of 2 s), 120 ms of cc1
    /// (6 %), memory pressure 12 %: disturbed by all three, in that order.
    #[test]
    fn a_run_over_the_thresholds_is_disturbed_with_the_amounts() {
        let a = DisturbanceAccount {
            window_ns: 2_000_000_000,
            cpus: vec![cpu(38_000_000, 0, Some(120_000_000))],
            memory_pressure: Some(Pressure {
                some: 0.12,
                full: Some(0.01),
            }),
            ..DisturbanceAccount::default()
        };
        let v = a.judge();
        assert_eq!(v.kind, VerdictKind::Disturbed);
        assert_eq!(
            v.summary,
            "disturbed: CPU 1: 38 ms stolen by the host, 120 ms of other threads (cc1, pid 5687); memory pressure 12 %"
        );
        let kinds: Vec<ReasonKind> = v.reasons.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                ReasonKind::HostSteal,
                ReasonKind::OtherThreads,
                ReasonKind::MemoryPressure
            ]
        );
    }

    /// Just below each threshold is clean; at it, disturbed. 10 ms of
    /// steal is 1 % of 1 s; 20 ms of interrupts 2 %; below 1 ms nothing
    /// counts, even over a window of 10 ms.
    #[test]
    fn thresholds_are_inclusive_and_tiny_amounts_never_count() {
        let at = |c: CpuDisturbance, w: u64| {
            DisturbanceAccount {
                window_ns: w,
                cpus: vec![c],
                ..DisturbanceAccount::default()
            }
            .judge()
            .kind
        };
        let s = 1_000_000_000;
        assert_eq!(at(cpu(9_999_999, 0, None), s), VerdictKind::Clean);
        assert_eq!(at(cpu(10_000_000, 0, None), s), VerdictKind::Disturbed);
        assert_eq!(at(cpu(0, 19_999_999, None), s), VerdictKind::Clean);
        assert_eq!(at(cpu(0, 20_000_000, None), s), VerdictKind::Disturbed);
        assert_eq!(at(cpu(0, 0, Some(19_000_000)), s), VerdictKind::Clean);
        assert_eq!(at(cpu(0, 0, Some(20_000_000)), s), VerdictKind::Disturbed);
        assert_eq!(
            at(cpu(999_999, 0, Some(999_999)), 10_000_000),
            VerdictKind::Clean
        );
        let clean = DisturbanceAccount {
            window_ns: s,
            memory_pressure: Some(Pressure {
                some: 0.049,
                full: None,
            }),
            ..DisturbanceAccount::default()
        };
        assert_eq!(clean.judge().summary, "clean");
    }

    #[test]
    fn durations_read_as_a_verdict_says_them() {
        assert_eq!(human_ns(38_000_000), "38 ms");
        assert_eq!(human_ns(450_000), "450 us");
        assert_eq!(human_ns(1_234_000_000), "1.2 s");
    }

    #[test]
    fn the_json_names_the_verdict_in_snake_case() {
        let a = DisturbanceAccount {
            window_ns: 1_000_000_000,
            cpus: vec![cpu(20_000_000, 0, None)],
            ..DisturbanceAccount::default()
        }
        .with_verdict();
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["verdict"]["kind"], "disturbed");
        assert_eq!(v["verdict"]["reasons"][0]["kind"], "host_steal");
        let back: DisturbanceAccount = serde_json::from_value(v).unwrap();
        assert_eq!(back, a);
    }
}
