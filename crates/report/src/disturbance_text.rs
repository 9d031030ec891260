//! The disturbance account and verdict of a real run as people read them
//! ([`rtlab_model::disturbance`]): the one-line verdict under a run's
//! summary, the account in full, and the notes of a series' iterations
//! (verdict, confirming rerun).

use std::fmt::Write;

use rtlab_model::disturbance::{human_ns, DisturbanceAccount, Pressure};
use rtlab_model::hartstone::IterationResult;

fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// `verdict: clean` or `verdict: disturbed: CPU 1: ...`, then `(isolated)`
/// when a shield was up.
pub fn verdict_line(a: &DisturbanceAccount) -> String {
    let shield = if a.shield.is_some() {
        " (CPUs shielded with --isolate)"
    } else {
        ""
    };
    format!("verdict: {}{shield}", a.verdict.summary)
}

/// The account in full, one item per line, for `rtlab run` and `compare`.
pub fn account_text(a: &DisturbanceAccount) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Disturbance over the measured {} (guide: how-to/trust-a-real-result.md):",
        human_ns(a.window_ns)
    );
    for c in &a.cpus {
        let others = c
            .other_threads_ns
            .map_or_else(|| "unknown".to_string(), human_ns);
        let _ = writeln!(
            out,
            "  CPU {}: host steal {}, interrupts {} + softirqs {}, run's own threads {}, other threads {}",
            c.cpu,
            human_ns(c.steal_ns),
            human_ns(c.irq_ns),
            human_ns(c.softirq_ns),
            human_ns(c.own_ns),
            others
        );
        for t in &c.culprits {
            let _ = writeln!(
                out,
                "    {} (pid {}, tid {}, {}): {}",
                rtlab_model::printable(&t.name),
                t.pid,
                t.tid,
                t.policy,
                human_ns(t.cpu_ns)
            );
        }
    }
    let pressure = |p: &Option<Pressure>| {
        p.map_or_else(
            || "n/a".to_string(),
            |p| match p.full {
                Some(f) => format!("some {} full {}", percent(p.some), percent(f)),
                None => format!("some {}", percent(p.some)),
            },
        )
    };
    let _ = writeln!(
        out,
        "  pressure: memory {}, cpu {}, io {}",
        pressure(&a.memory_pressure),
        pressure(&a.cpu_pressure),
        pressure(&a.io_pressure)
    );
    let mut machine = Vec::new();
    if let Some(b) = a.other_cpus_busy {
        machine.push(format!("other CPUs {} busy", percent(b)));
    }
    if let Some(l) = a.load_average {
        machine.push(format!("load average {l:.2}"));
    }
    if let Some(w) = a.lock_wait_ns {
        machine.push(format!("waited {} for the CPU lock", human_ns(w)));
    }
    if let Some(t) = &a.rt_throttling {
        machine.push(format!("RT throttling {t}"));
    }
    if !machine.is_empty() {
        let _ = writeln!(out, "  machine: {}", machine.join(", "));
    }
    if let Some(s) = &a.shield {
        let _ = writeln!(
            out,
            "  shield: {} threads and {} interrupts moved off, {} threads and {} interrupts could not be",
            s.threads_moved, s.irqs_moved, s.threads_pinned, s.irqs_pinned
        );
    }
    for u in &a.unseen {
        let _ = writeln!(out, "  not seen: {u}");
    }
    let _ = writeln!(out, "  {}", verdict_line(a));
    out
}

/// A task whose real and simulated misses differ, for [`compare_note`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DifferingTask {
    /// Its name, printable.
    pub name: String,
    /// Its misses on real threads.
    pub real: u64,
    /// Its misses in the simulation.
    pub simulated: u64,
    /// Of its real misses, those the kernel trace found late mostly from
    /// outside the set (another thread, an interrupt, the host); `None`
    /// without a kernel trace.
    pub disturbed: Option<u64>,
}

/// What `rtlab compare` adds under its table: the real run's verdict;
/// when real and simulated disagree on the misses of a disturbed run, that
/// the tasks named may differ because of the machine, not the scheduler;
/// and with `--kernel-trace`, per such task, how many of its real misses
/// were jobs a disturbance made late (their largest share of lateness from
/// outside the set), and so how many the scheduler's own.
pub fn compare_note(a: &DisturbanceAccount, differing: &[DifferingTask]) -> String {
    let mut out = format!("{}\n", verdict_line(a));
    if a.verdict.is_disturbed() && !differing.is_empty() {
        let names: Vec<&str> = differing.iter().map(|t| t.name.as_str()).collect();
        let _ = writeln!(
            out,
            "real and simulated disagree on the misses of {} in a DISTURBED run: the difference may be the \
             machine's, not the scheduler's; rerun (--repeat 3) or shield the CPU (--isolate) before drawing \
             a conclusion",
            names.join(", ")
        );
    }
    let per_job: Vec<String> = differing
        .iter()
        .filter_map(|t| {
            let d = t.disturbed?;
            Some(format!(
                "{} missed {} real vs {} simulated, {d} of the {} late mostly from outside the set",
                t.name, t.real, t.simulated, t.real
            ))
        })
        .collect();
    if !per_job.is_empty() {
        let _ = writeln!(
            out,
            "disturbed jobs (kernel trace: a miss whose largest share of lateness was another thread, an \
             interrupt or the host): {}",
            per_job.join("; ")
        );
    }
    out
}

/// What follows an iteration's progress line: `; disturbed: ...` when its
/// verdict is, and its confirming rerun.
pub fn iteration_note(r: &IterationResult) -> String {
    let mut out = String::new();
    if let Some(v) = r.verdict.as_deref().filter(|v| *v != "clean") {
        let _ = write!(out, "; {v}");
    }
    if let Some(rerun) = &r.rerun {
        let _ = write!(out, "; rerun: {}", rerun.describe());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_names_the_disturbed_jobs_of_each_task_that_differs() {
        let mut disturbed = DisturbanceAccount::default();
        disturbed.verdict.kind = rtlab_model::disturbance::VerdictKind::Disturbed;
        disturbed.verdict.summary = "disturbed: CPU 1: 38 ms stolen by the host".into();
        let t1 = DifferingTask {
            name: "T1".into(),
            real: 3,
            simulated: 0,
            disturbed: Some(2),
        };
        let note = compare_note(&disturbed, std::slice::from_ref(&t1));
        assert!(
            note.starts_with("verdict: disturbed: CPU 1: 38 ms stolen by the host\n"),
            "{note}"
        );
        assert!(
            note.contains("disagree on the misses of T1 in a DISTURBED run"),
            "{note}"
        );
        assert!(
            note.ends_with(
                "T1 missed 3 real vs 0 simulated, 2 of the 3 late mostly from outside the set\n"
            ),
            "{note}"
        );
        // Without a kernel trace, no per-job line; a clean run with no
        // difference, only its verdict.
        let untraced = DifferingTask {
            disturbed: None,
            ..t1
        };
        assert!(!compare_note(&disturbed, &[untraced]).contains("disturbed jobs"));
        let mut clean = DisturbanceAccount::default();
        clean.verdict.summary = "clean".into();
        assert_eq!(compare_note(&clean, &[]), "verdict: clean\n");
    }
    use rtlab_model::disturbance::{CpuDisturbance, Culprit, Rerun};

    #[test]
    fn an_account_names_the_cpu_the_culprits_and_the_verdict() {
        let a = DisturbanceAccount {
            window_ns: 2_000_000_000,
            cpus: vec![CpuDisturbance {
                cpu: 1,
                steal_ns: 40_000_000,
                own_ns: 500_000_000,
                busy_ns: Some(620_000_000),
                other_threads_ns: Some(120_000_000),
                culprits: vec![Culprit {
                    name: "cc1".into(),
                    pid: 5687,
                    tid: 5687,
                    policy: "other".into(),
                    cpu_ns: 118_000_000,
                }],
                ..CpuDisturbance::default()
            }],
            load_average: Some(3.5),
            ..DisturbanceAccount::default()
        }
        .with_verdict();
        let text = account_text(&a);
        assert!(text.contains("CPU 1: host steal 40 ms"), "{text}");
        assert!(
            text.contains("cc1 (pid 5687, tid 5687, other): 118 ms"),
            "{text}"
        );
        assert!(text.contains("load average 3.50"), "{text}");
        assert!(text.ends_with(
            "verdict: disturbed: CPU 1: 40 ms stolen by the host, 120 ms of other threads (cc1, pid 5687)\n"
        ));
    }

    #[test]
    fn an_iteration_note_says_the_rerun() {
        let r = IterationResult {
            verdict: Some("clean".into()),
            rerun: Some(Rerun {
                first_misses: 1,
                first_verdict: "disturbed: CPU 1: 30 ms stolen by the host".into(),
                rerun_misses: 0,
                rerun_verdict: "clean".into(),
                confirmed: false,
                rerun_disturbed: false,
            }),
            ..IterationResult::default()
        };
        assert_eq!(
            iteration_note(&r),
            "; rerun: missed 1 (disturbed: CPU 1: 30 ms stolen by the host), rerun passed (clean): the first run was disturbed"
        );
    }
}
