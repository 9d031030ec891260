//! The disturbance account of a real run: what else the machine did on the
//! measured CPUs while the run was measured, from the kernel's counters
//! read once before and once after the measured window (no tracefs, a few
//! milliseconds of reading off the real-time path).
//!
//! * **Host steal, interrupts, softirqs**: `/proc/stat`'s per-CPU `steal`,
//!   `irq` and `softirq` columns (in `USER_HZ` ticks, 10 ms each). The
//!   steal column is exact to the tick under paravirtual steal accounting;
//!   irq and softirq are sampled at the tick when the kernel has no
//!   `CONFIG_IRQ_TIME_ACCOUNTING` (then a handler's time is charged to the
//!   thread it interrupted, and said so in [`DisturbanceAccount::unseen`]).
//! * **Other threads on a measured CPU**: the CPU's busy time (`/proc/stat`
//!   user + nice + system, tick-sampled) minus the run's own threads' CPU
//!   time (`/proc/self/task/TID/schedstat`, exact). Which threads: every
//!   thread of the machine is sampled (`/proc/PID/task/TID/stat` for its
//!   name, policy and last CPU, `.../schedstat` for its CPU time); one that
//!   ran during the window and was last seen on a measured CPU, at the start
//!   or at the end, is named with its CPU time.
//! * **The other CPUs' load**: their non-idle share of the window
//!   (`/proc/stat`), and the load average at the end (`/proc/loadavg`).
//! * **Pressure**: PSI's `total` stall times (`/proc/pressure/{memory,cpu,io}`)
//!   over the window.
//! * **RT throttling** in force when the window starts; its and the fair
//!   server's engagements are not visible without the kernel trace here
//!   (`/proc/sched_debug` moved to debugfs, whose scheduler files refuse
//!   reads on some kernels): said in `unseen`.
//!
//! [`Window::open`] reads the "before" sample; [`Window::close`] the
//! "after" one and returns the account with its verdict. Any real run
//! calls them around its measured window (the executor does, for `run`,
//! `compare` and every experiment; a dispatcher can do the same).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use rtlab_model::disturbance::{
    CpuDisturbance, Culprit, DisturbanceAccount, Pressure, ShieldSummary, MAX_CULPRITS,
};

/// `USER_HZ`: `/proc/stat` counts in hundredths of a second on Linux.
const TICK_NS: u64 = 10_000_000;

/// One CPU's `/proc/stat` line, in ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// user + nice + system (+ guest, which user already holds).
    pub busy: u64,
    /// idle + iowait.
    pub idle: u64,
    /// irq.
    pub irq: u64,
    /// softirq.
    pub softirq: u64,
    /// steal.
    pub steal: u64,
}

/// `/proc/stat`'s `cpuN` lines: CPU number and its times.
pub fn parse_proc_stat(text: &str) -> BTreeMap<usize, CpuTimes> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(cpu) = fields
            .next()
            .and_then(|h| h.strip_prefix("cpu"))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let v: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        out.insert(
            cpu,
            CpuTimes {
                busy: at(0) + at(1) + at(2),
                idle: at(3) + at(4),
                irq: at(5),
                softirq: at(6),
                steal: at(7),
            },
        );
    }
    out
}

/// PSI totals of one resource (microseconds stalled since boot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PsiTotals {
    /// `some total=`.
    pub some_us: u64,
    /// `full total=` (absent for CPU on older kernels).
    pub full_us: Option<u64>,
}

/// A `/proc/pressure/*` file.
pub fn parse_pressure(text: &str) -> Option<PsiTotals> {
    let total = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))?
            .split_whitespace()
            .find_map(|f| f.strip_prefix("total="))?
            .parse::<u64>()
            .ok()
    };
    Some(PsiTotals {
        some_us: total("some ")?,
        full_us: total("full "),
    })
}

/// What one thread's `/proc/PID/task/TID/stat` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadStat {
    /// `comm`.
    pub name: String,
    /// The CPU it last ran on.
    pub processor: usize,
    /// `other`, `fifo:50`, ...
    pub policy: String,
    /// A kernel thread (its parent is kthreadd, pid 2, or it is kthreadd).
    pub kernel: bool,
}

/// Parses a thread's `stat` line (the name may hold spaces and
/// parentheses: the fields start after the last `)`).
pub fn parse_thread_stat(text: &str) -> Option<ThreadStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let pid: i32 = text.get(..open)?.trim().parse().ok()?;
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state): field N is rest[N - 3].
    let field = |n: usize| rest.get(n - 3).and_then(|f| f.parse::<i64>().ok());
    let ppid = field(4)?;
    let processor = field(39)? as usize;
    let rt_priority = field(40).unwrap_or(0);
    let policy = match field(41).unwrap_or(0) {
        1 => format!("fifo:{rt_priority}"),
        2 => format!("rr:{rt_priority}"),
        3 => "batch".into(),
        5 => "idle".into(),
        6 => "deadline".into(),
        _ => "other".into(),
    };
    Some(ThreadStat {
        name,
        processor,
        policy,
        kernel: ppid == 2 || pid == 2,
    })
}

/// The first field of a `schedstat` file: CPU time in ns.
fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// One thread at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSample {
    /// Its process.
    pub pid: i32,
    /// `stat`.
    pub stat: ThreadStat,
    /// CPU time so far (ns).
    pub cpu_ns: u64,
}

/// The machine at one instant, as the account needs it.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// CLOCK_MONOTONIC (ns).
    pub at_ns: u64,
    /// `/proc/stat` per CPU.
    pub cpus: BTreeMap<usize, CpuTimes>,
    /// memory, cpu, io.
    pub pressure: [Option<PsiTotals>; 3],
    /// Every thread by tid.
    pub threads: BTreeMap<i32, ThreadSample>,
}

impl Sample {
    /// Reads the machine now.
    pub fn read() -> Sample {
        let pressure = ["memory", "cpu", "io"].map(|r| {
            fs::read_to_string(format!("/proc/pressure/{r}"))
                .ok()
                .as_deref()
                .and_then(parse_pressure)
        });
        Sample {
            at_ns: rtlab_sys::clock::monotonic_now().as_ns(),
            cpus: fs::read_to_string("/proc/stat")
                .map(|t| parse_proc_stat(&t))
                .unwrap_or_default(),
            pressure,
            threads: read_threads(Path::new("/proc")),
        }
    }
}

/// Every thread under `proc` (a thread or process that ends while it is
/// read is skipped).
fn read_threads(proc: &Path) -> BTreeMap<i32, ThreadSample> {
    let mut out = BTreeMap::new();
    let Ok(procs) = fs::read_dir(proc) else {
        return out;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(tasks) = fs::read_dir(p.path().join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let dir = t.path();
            let stat = fs::read_to_string(dir.join("stat"))
                .ok()
                .and_then(|s| parse_thread_stat(&s));
            let cpu_ns = fs::read_to_string(dir.join("schedstat"))
                .ok()
                .and_then(|s| parse_schedstat(&s));
            if let (Some(stat), Some(cpu_ns)) = (stat, cpu_ns) {
                out.insert(tid, ThreadSample { pid, stat, cpu_ns });
            }
        }
    }
    out
}

/// A measured window being accounted: the CPUs, the run's own threads and
/// the sample taken when it opened.
#[derive(Debug)]
pub struct Window {
    cpus: Vec<usize>,
    own: Vec<i32>,
    before: Sample,
    rt_throttling: Option<String>,
    /// The whole process is the run's own ([`Window::open_process`]): its
    /// CPU time from `getrusage` when the window opened (ns).
    process_cpu_ns: Option<u64>,
}

impl Window {
    /// Opens the window over `cpus` (the measured CPUs) for a run whose
    /// own threads are `own` (their time is not a disturbance), reading
    /// the "before" sample and RT throttling in force now.
    pub fn open(cpus: &[usize], own: &[i32]) -> Window {
        let rt_throttling = crate::policy::RtThrottling::read().ok().map(|t| {
            if t.runtime_us < 0 {
                "off".to_string()
            } else {
                format!("{}/{} us", t.runtime_us, t.period_us)
            }
        });
        Window {
            cpus: cpus.to_vec(),
            own: own.to_vec(),
            before: Sample::read(),
            rt_throttling,
            process_cpu_ns: None,
        }
    }

    /// Opens the window over `cpus` for a measurement whose own threads
    /// are this whole process's, started and ended inside the window (the
    /// latency probe, drift loops): their CPU time is the process's
    /// (`getrusage`), shared evenly among the measured CPUs, and no thread
    /// of this process is named as another.
    pub fn open_process(cpus: &[usize]) -> Window {
        Window {
            process_cpu_ns: crate::usage::process_cpu_ns(),
            ..Window::open(cpus, &[])
        }
    }

    /// Closes the window: reads the "after" sample and returns the
    /// account with its verdict. `ended_own`: the CPU time at their end
    /// of the run's threads that have ended since (no longer in `/proc`).
    pub fn close(self, ended_own: &[(i32, u64)]) -> DisturbanceAccount {
        let mut after = Sample::read();
        for &(tid, cpu_ns) in ended_own {
            if let (Some(b), false) = (
                self.before.threads.get(&tid),
                after.threads.contains_key(&tid),
            ) {
                after.threads.insert(
                    tid,
                    ThreadSample {
                        cpu_ns,
                        ..b.clone()
                    },
                );
            }
        }
        let load = fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok());
        let mut account = account(&self.before, &after, &self.cpus, &self.own);
        if let (Some(b), Some(a)) = (self.process_cpu_ns, crate::usage::process_cpu_ns()) {
            let me = std::process::id() as i32;
            let share = a.saturating_sub(b) / self.cpus.len().max(1) as u64;
            for c in &mut account.cpus {
                c.own_ns = share;
                c.other_threads_ns = c.busy_ns.map(|busy| busy.saturating_sub(share));
                c.culprits.retain(|t| t.pid != me);
            }
        }
        // A thread the shield confined to the other CPUs last ran on a
        // measured one before the shield went up, not in the window.
        let confined = crate::shield::confined_threads();
        for c in &mut account.cpus {
            c.culprits.retain(|t| !confined.contains(&t.tid));
        }
        account.load_average = load;
        account.rt_throttling = self.rt_throttling;
        account.shield = crate::shield::in_force();
        account.unseen = unseen();
        account.with_verdict()
    }
}

/// Whether the kernel accounts interrupt time apart from threads
/// (`CONFIG_IRQ_TIME_ACCOUNTING=y`); false when its configuration cannot
/// be read (the common case, and this machine kind's).
pub fn irq_time_accounted() -> bool {
    let release = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    crate::platform::sources::kernel_config(release.trim())
        .ok()
        .and_then(|(c, _)| {
            crate::platform::sources::config_value(&c, "CONFIG_IRQ_TIME_ACCOUNTING")
                .map(|v| v == "y")
        })
        .unwrap_or(false)
}

/// What this kernel does not let the account see.
fn unseen() -> Vec<String> {
    let mut out = vec![
        "RT throttling's and the fair server's engagements: not counted by any file this kernel \
         exposes (/proc/sched_debug is in debugfs); --kernel-trace shows them as throttled:rt"
            .to_string(),
    ];
    if !irq_time_accounted() {
        out.push(
            "interrupt time: sampled at the tick (no CONFIG_IRQ_TIME_ACCOUNTING): a handler's time \
             is charged to the thread it interrupted"
                .into(),
        );
    }
    out
}

/// The account of the window between two samples (pure: no verdict, no
/// load average, throttling or shield yet).
pub fn account(before: &Sample, after: &Sample, cpus: &[usize], own: &[i32]) -> DisturbanceAccount {
    let window_ns = after.at_ns.saturating_sub(before.at_ns);
    let ticks = |t: u64| t.saturating_mul(TICK_NS);
    let delta = |cpu: usize| -> Option<CpuTimes> {
        let (b, a) = (before.cpus.get(&cpu)?, after.cpus.get(&cpu)?);
        Some(CpuTimes {
            busy: a.busy.saturating_sub(b.busy),
            idle: a.idle.saturating_sub(b.idle),
            irq: a.irq.saturating_sub(b.irq),
            softirq: a.softirq.saturating_sub(b.softirq),
            steal: a.steal.saturating_sub(b.steal),
        })
    };
    // Per thread that ran: its CPU time in the window and where it was seen.
    let ran: Vec<(i32, &ThreadSample, u64, [usize; 2])> = after
        .threads
        .iter()
        .filter_map(|(tid, a)| {
            let b = before.threads.get(tid);
            let ns = a.cpu_ns.saturating_sub(b.map_or(0, |b| b.cpu_ns));
            let seen = [
                b.map_or(a.stat.processor, |b| b.stat.processor),
                a.stat.processor,
            ];
            (ns > 0).then_some((*tid, a, ns, seen))
        })
        .collect();
    let own_ns_on = |cpu: usize| -> u64 {
        ran.iter()
            .filter(|(tid, _, _, seen)| own.contains(tid) && seen.contains(&cpu))
            .map(|(_, _, ns, _)| *ns)
            .sum()
    };
    let mut out = Vec::new();
    for &cpu in cpus {
        let d = delta(cpu).unwrap_or_default();
        let own_ns = own_ns_on(cpu);
        let busy_ns = before.cpus.contains_key(&cpu).then(|| ticks(d.busy));
        let mut culprits: Vec<Culprit> = ran
            .iter()
            .filter(|(tid, _, _, seen)| !own.contains(tid) && seen.contains(&cpu))
            .map(|(tid, t, ns, _)| Culprit {
                name: t.stat.name.clone(),
                pid: t.pid,
                tid: *tid,
                policy: t.stat.policy.clone(),
                cpu_ns: *ns,
            })
            .collect();
        culprits.sort_by(|a, b| b.cpu_ns.cmp(&a.cpu_ns).then(a.tid.cmp(&b.tid)));
        culprits.truncate(MAX_CULPRITS);
        out.push(CpuDisturbance {
            cpu,
            steal_ns: ticks(d.steal),
            irq_ns: ticks(d.irq),
            softirq_ns: ticks(d.softirq),
            busy_ns,
            own_ns,
            other_threads_ns: busy_ns.map(|b| b.saturating_sub(own_ns)),
            culprits,
        });
    }
    let others: Vec<CpuTimes> = before
        .cpus
        .keys()
        .filter(|c| !cpus.contains(c))
        .filter_map(|&c| delta(c))
        .collect();
    let other_cpus_busy = (!others.is_empty()).then(|| {
        let busy: u64 = others.iter().map(|d| d.busy + d.irq + d.softirq).sum();
        let all: u64 = others
            .iter()
            .map(|d| d.busy + d.irq + d.softirq + d.idle + d.steal)
            .sum();
        if all == 0 {
            0.0
        } else {
            busy as f64 / all as f64
        }
    });
    let window_us = (window_ns / 1000).max(1) as f64;
    let pressure = |i: usize| -> Option<Pressure> {
        let (b, a) = (before.pressure[i]?, after.pressure[i]?);
        let share = |x: u64, y: u64| (y.saturating_sub(x) as f64 / window_us).min(1.0);
        Some(Pressure {
            some: share(b.some_us, a.some_us),
            full: match (b.full_us, a.full_us) {
                (Some(x), Some(y)) => Some(share(x, y)),
                _ => None,
            },
        })
    };
    DisturbanceAccount {
        window_ns,
        cpus: out,
        other_cpus_busy,
        memory_pressure: pressure(0),
        cpu_pressure: pressure(1),
        io_pressure: pressure(2),
        ..DisturbanceAccount::default()
    }
}

/// A [`ShieldSummary`] for an account, from what a shield moved.
pub fn shield_summary(
    cpus: &[usize],
    threads_moved: usize,
    threads_pinned: usize,
    irqs_moved: usize,
    irqs_pinned: usize,
) -> ShieldSummary {
    ShieldSummary {
        cpus: cpus.to_vec(),
        threads_moved,
        threads_pinned,
        irqs_moved,
        irqs_pinned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::disturbance::VerdictKind;

    const STAT_BEFORE: &str = "cpu  93521 12798 17410 49584 1995 0 180 157 0 0\n\
cpu0 46806 6430 8799 24642 1041 0 66 76 0 0\n\
cpu1 46714 6368 8610 24941 953 0 114 81 0 0\n\
intr 862565 0 0\n";

    #[test]
    fn proc_stat_lines_give_each_cpus_times() {
        let cpus = parse_proc_stat(STAT_BEFORE);
        assert_eq!(cpus.len(), 2);
        assert_eq!(
            cpus[&1],
            CpuTimes {
                busy: 46714 + 6368 + 8610,
                idle: 24941 + 953,
                irq: 0,
                softirq: 114,
                steal: 81,
            }
        );
    }

    #[test]
    fn pressure_files_give_their_totals() {
        let mem = "some avg10=0.00 avg60=0.14 avg300=0.46 total=4146343\n\
full avg10=0.00 avg60=0.05 avg300=0.22 total=2306492\n";
        assert_eq!(
            parse_pressure(mem),
            Some(PsiTotals {
                some_us: 4146343,
                full_us: Some(2306492)
            })
        );
        assert_eq!(
            parse_pressure("some avg10=1 total=7\n").unwrap().full_us,
            None
        );
        assert_eq!(parse_pressure("nonsense"), None);
    }

    /// A name with a space and a parenthesis; SCHED_FIFO 50 (field 41 = 1,
    /// field 40 = 50), last on CPU 1 (field 39).
    #[test]
    fn a_thread_stat_line_gives_name_cpu_and_policy() {
        let mut fields: Vec<String> = (3..=52).map(|_| "0".to_string()).collect();
        fields[0] = "R".into();
        fields[4 - 3] = "1234".into();
        fields[39 - 3] = "1".into();
        fields[40 - 3] = "50".into();
        fields[41 - 3] = "1".into();
        let line = format!("5687 (cc1 (x)) {}", fields.join(" "));
        let t = parse_thread_stat(&line).unwrap();
        assert_eq!(t.name, "cc1 (x)");
        assert_eq!(t.processor, 1);
        assert_eq!(t.policy, "fifo:50");
        assert!(!t.kernel);
    }

    fn thread(pid: i32, name: &str, cpu: usize, ns: u64) -> ThreadSample {
        ThreadSample {
            pid,
            stat: ThreadStat {
                name: name.into(),
                processor: cpu,
                policy: "other".into(),
                kernel: false,
            },
            cpu_ns: ns,
        }
    }

    /// Over 1 s on CPU 1: 30 busy ticks (300 ms) of which the run's own
    /// thread had 100 ms, so 200 ms of others; cc1 ran 180 ms and was seen
    /// there, make on CPU 0 is not named; 2 ticks of steal (20 ms); memory
    /// stalled 120 ms (12 %). CPU 0 was busy 50 of its 100 ticks.
    #[test]
    fn the_account_subtracts_the_runs_own_time_and_names_the_others() {
        let mut before = Sample {
            at_ns: 1_000_000_000,
            ..Sample::default()
        };
        before.cpus.insert(
            0,
            CpuTimes {
                busy: 0,
                idle: 0,
                ..CpuTimes::default()
            },
        );
        before.cpus.insert(1, CpuTimes::default());
        before.pressure[0] = Some(PsiTotals {
            some_us: 1000,
            full_us: Some(0),
        });
        before.threads.insert(10, thread(10, "rtlab-t1", 1, 0));
        before.threads.insert(20, thread(20, "cc1", 1, 5_000_000));
        before.threads.insert(30, thread(30, "make", 0, 0));
        let mut after = Sample {
            at_ns: 2_000_000_000,
            ..Sample::default()
        };
        after.cpus.insert(
            0,
            CpuTimes {
                busy: 50,
                idle: 50,
                ..CpuTimes::default()
            },
        );
        after.cpus.insert(
            1,
            CpuTimes {
                busy: 30,
                idle: 68,
                steal: 2,
                ..CpuTimes::default()
            },
        );
        after.pressure[0] = Some(PsiTotals {
            some_us: 121_000,
            full_us: Some(10_000),
        });
        after
            .threads
            .insert(10, thread(10, "rtlab-t1", 1, 100_000_000));
        after.threads.insert(20, thread(20, "cc1", 1, 185_000_000));
        after.threads.insert(30, thread(30, "make", 0, 400_000_000));
        let a = account(&before, &after, &[1], &[10]).with_verdict();
        assert_eq!(a.window_ns, 1_000_000_000);
        let c = &a.cpus[0];
        assert_eq!(c.busy_ns, Some(300_000_000));
        assert_eq!(c.own_ns, 100_000_000);
        assert_eq!(c.other_threads_ns, Some(200_000_000));
        assert_eq!(c.steal_ns, 20_000_000);
        assert_eq!(c.culprits.len(), 1);
        assert_eq!(c.culprits[0].name, "cc1");
        assert_eq!(c.culprits[0].cpu_ns, 180_000_000);
        assert_eq!(a.other_cpus_busy, Some(0.5));
        let m = a.memory_pressure.unwrap();
        assert!((m.some - 0.12).abs() < 1e-9, "{m:?}");
        assert_eq!(a.verdict.kind, VerdictKind::Disturbed);
        assert_eq!(
            a.verdict.summary,
            "disturbed: CPU 1: 20 ms stolen by the host, 200 ms of other threads (cc1, pid 20); memory pressure 12 %"
        );
    }

    /// The machine read for real: this process's own thread is found, and
    /// the account of an empty window on CPU 0 is well formed.
    #[test]
    fn the_machine_can_be_read() {
        let me = rtlab_sys::sched::gettid();
        let s = Sample::read();
        assert!(s.threads.contains_key(&me), "own thread {me} not sampled");
        assert!(!s.cpus.is_empty());
        let a = Window::open(&[0], &[me]).close(&[]);
        assert_eq!(a.cpus.len(), 1);
        assert!(!a.verdict.summary.is_empty());
    }
}
