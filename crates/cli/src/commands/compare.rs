//! `rtlab compare`: the same task set on real threads and in the simulator
//! under the matching scheduler, side by side.
//!
//! The simulator runs the model with WCET execution, no overheads and the
//! same duration and overrun rule, so every difference is something the
//! model leaves out: wake-up latency, kernel and timer overheads, the cost
//! of the measurement itself, interference from the rest of the machine.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use rtlab_model::{printable, Nanos};
use rtlab_rt::executor::{rr_timeslice, RunReport, TaskRunMetrics};
use rtlab_sim::{OnMiss, SchedulerSpec, SimConfig, SimReport, TaskMetrics};
use serde::Serialize;

use crate::commands::run::{execute, RunFlags};
use crate::table;
use crate::usage::usage;

const EXAMPLES: &str = "Examples:\n  \
    rtlab compare builtin:hartstone-ph --policy rm --duration 10s\n  \
    rtlab compare builtin:lf-scenario-4 --policy dm --duration 1s\n  \
    rtlab compare builtin:lf-scenario-4 --policy edf --duration 1s --no-rt-throttling --json\n\n\
    Policy -> simulator: fifo-order -> fifo, rm -> fp:rm, dm -> fp:dm, given -> fp:given,\n\
    rr -> rr:<kernel RR timeslice>, edf -> edf (other has no simulator model).\n\
    A `!` marks a difference: misses that differ, or a response time off by more than\n\
    --tolerance (default 10%) and 100us.";

/// `rtlab compare`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct CompareArgs {
    #[command(flatten)]
    pub flags: RunFlags,
    /// Relative difference in response time that counts as a difference (percent).
    #[arg(long, default_value_t = 10.0)]
    pub tolerance: f64,
    /// Print the JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
}

/// A response-time difference below this never counts (timer noise).
const ABSOLUTE_FLOOR_NS: u64 = 100_000;

/// One task, real against simulated.
#[derive(Debug, Clone, Serialize)]
pub struct TaskComparison {
    /// Task name.
    pub name: String,
    /// Deadline misses (real, simulated).
    pub misses: (u64, u64),
    /// Longest response (real, simulated).
    pub max_response_ns: (Option<u64>, Option<u64>),
    /// Mean response (real, simulated).
    pub mean_response_ns: (Option<u64>, Option<u64>),
    /// Preemptions (real involuntary switches during jobs, simulated preemptions).
    pub preemptions: (u64, u64),
    /// Real max response minus simulated (ns; null when either is missing).
    pub max_response_delta_ns: Option<i64>,
    /// The fields that differ beyond the tolerance.
    pub differences: Vec<String>,
}

/// `rtlab compare --json`.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// The task set's name.
    pub taskset: String,
    /// `--policy`.
    pub policy: String,
    /// The simulator's scheduler.
    pub scheduler: String,
    /// Whether real and simulated runs agree on the misses of every task.
    pub misses_agree: bool,
    /// Per task.
    pub tasks: Vec<TaskComparison>,
    /// The real run (`rtlab run --json`).
    pub real: RunReport,
    /// The simulation (`rtlab sim --json`).
    pub sim: SimReport,
}

/// Compares one task; `tolerance` is relative (0.1 = 10%).
pub fn compare_task(real: &TaskRunMetrics, sim: &TaskMetrics, tolerance: f64) -> TaskComparison {
    let mut differences = Vec::new();
    if real.misses != sim.misses {
        differences.push("misses".to_string());
    }
    let off = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => {
            let d = a.abs_diff(b);
            d > ABSOLUTE_FLOOR_NS && d as f64 > tolerance * b as f64
        }
        (None, None) => false,
        _ => true,
    };
    if off(real.max_response_ns, sim.max_response_ns) {
        differences.push("max_response".to_string());
    }
    if off(real.mean_response_ns, sim.mean_response_ns) {
        differences.push("mean_response".to_string());
    }
    TaskComparison {
        name: real.name.clone(),
        misses: (real.misses, sim.misses),
        max_response_ns: (real.max_response_ns, sim.max_response_ns),
        mean_response_ns: (real.mean_response_ns, sim.mean_response_ns),
        preemptions: (real.preemptions, sim.preemptions),
        max_response_delta_ns: match (real.max_response_ns, sim.max_response_ns) {
            (Some(a), Some(b)) => Some(a as i64 - b as i64),
            _ => None,
        },
        differences,
    }
}

/// Runs `rtlab compare`.
pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        return Err(usage(format!(
            "--tolerance `{}`: give a percentage >= 0",
            args.tolerance
        )));
    }
    let cfg = args.flags.config()?;
    let Some(spec_text) = cfg.policy.simulator_spec(rr_timeslice()) else {
        return Err(usage(
            "--policy other: the simulator has no model of CFS/EEVDF; compare fifo-order, rm, dm, given, rr or edf",
        ));
    };
    let saver = args
        .save
        .begin(rtlab_store::RunKind::Compare, Some(&args.flags.taskset))?;
    let (set, origin, real, _) = execute(&args.flags, &[], Vec::new(), saver.as_ref())?;
    let spec: SchedulerSpec = spec_text.parse()?;
    let mut sim_cfg = SimConfig::new(Nanos::from_ns(real.ended_ns));
    sim_cfg.on_miss = match real.on_miss.as_str() {
        "skip" => OnMiss::Skip,
        _ => OnMiss::Continue,
    };
    let sim = rtlab_sim::simulate(&set, &spec, &sim_cfg)?;
    if sim.duration_ns < real.ended_ns {
        // The simulator stops an overloaded run at its backlog limit.
        eprintln!(
            "warning: the simulation stopped at {} with more than {} jobs waiting (an overloaded \
             set under --on-miss continue); its columns cover only that time",
            Nanos::from_ns(sim.duration_ns),
            rtlab_sim::MAX_PENDING_JOBS
        );
    }
    let tolerance = args.tolerance / 100.0;
    let tasks: Vec<TaskComparison> = real
        .tasks
        .iter()
        .zip(&sim.tasks)
        .map(|(r, s)| compare_task(r, s, tolerance))
        .collect();
    let comparison = Comparison {
        taskset: set.name.clone(),
        policy: real.policy.clone(),
        scheduler: spec_text,
        misses_agree: tasks.iter().all(|t| t.misses.0 == t.misses.1),
        tasks,
        real,
        sim,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        print!("{}", describe(&comparison, &origin, args.tolerance, color));
    }
    if let Some(saver) = saver {
        saver.finish(
            &serde_json::to_value(&comparison)?,
            comparison.real.interrupted,
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn signed_ns(v: Option<i64>) -> String {
    match v {
        None => "-".into(),
        Some(d) if d < 0 => format!("-{}", Nanos::from_ns(d.unsigned_abs())),
        Some(d) => format!("+{}", Nanos::from_ns(d as u64)),
    }
}

/// The side-by-side table; differing cells carry a `!` (bold red on a
/// terminal).
pub fn describe(c: &Comparison, origin: &str, tolerance_pct: f64, color: bool) -> String {
    let origin = printable(origin);
    let mark = |text: String, differs: bool| match (differs, color) {
        (false, _) => text,
        (true, false) => format!("{text} !"),
        (true, true) => format!("\x1b[1;31m{text} !\x1b[0m"),
    };
    let mut out = format!(
        "{} ({origin}): real threads under {} vs the simulator's {} for {}\n\n",
        printable(&c.taskset),
        c.policy,
        c.scheduler,
        Nanos::from_ns(c.real.ended_ns)
    );
    let header = [
        "task",
        "misses real",
        "misses sim",
        "R max real",
        "R max sim",
        "delta",
        "R mean real",
        "R mean sim",
        "preempted real",
        "preempted sim",
    ];
    let mut t = table::new(&header, &header[1..]);
    for task in &c.tasks {
        let differs = |f: &str| task.differences.iter().any(|d| d == f);
        t.add_row(vec![
            printable(&task.name).into_owned(),
            mark(task.misses.0.to_string(), differs("misses")),
            task.misses.1.to_string(),
            mark(
                table::opt_ns(task.max_response_ns.0),
                differs("max_response"),
            ),
            table::opt_ns(task.max_response_ns.1),
            signed_ns(task.max_response_delta_ns),
            mark(
                table::opt_ns(task.mean_response_ns.0),
                differs("mean_response"),
            ),
            table::opt_ns(task.mean_response_ns.1),
            task.preemptions.0.to_string(),
            task.preemptions.1.to_string(),
        ]);
    }
    out.push_str(&table::render(&t));
    let differing: Vec<std::borrow::Cow<str>> = c
        .tasks
        .iter()
        .filter(|t| !t.differences.is_empty())
        .map(|t| printable(&t.name))
        .collect();
    out.push_str(&format!(
        "\n\nmisses: real {} vs simulated {} ({}); response times within {tolerance_pct}%: {}\n",
        c.real.deadline_misses,
        c.sim.deadline_misses,
        if c.misses_agree { "agree" } else { "DIFFER" },
        if differing.is_empty() {
            "every task".to_string()
        } else {
            format!("not for {}", differing.join(", "))
        },
    ));
    out.push_str(
        "real R includes wake-up latency and kernel overheads the model leaves out; \
         real preemptions are involuntary context switches during jobs (interrupts and kernel threads count too)\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(misses: u64, max: u64, mean: u64) -> TaskRunMetrics {
        TaskRunMetrics {
            name: "t".into(),
            misses,
            max_response_ns: Some(max),
            mean_response_ns: Some(mean),
            ..TaskRunMetrics::default()
        }
    }

    fn sim(misses: u64, max: u64, mean: u64) -> TaskMetrics {
        let mut m = TaskMetrics::default();
        m.name = "t".into();
        m.misses = misses;
        m.max_response_ns = Some(max);
        m.mean_response_ns = Some(mean);
        m
    }

    #[test]
    fn differences_need_both_the_relative_tolerance_and_the_floor() {
        // 50 us over 1 ms: 5%, and under the 100 us floor.
        let c = compare_task(
            &real(0, 1_050_000, 1_000_000),
            &sim(0, 1_000_000, 1_000_000),
            0.1,
        );
        assert!(c.differences.is_empty());
        assert_eq!(c.max_response_delta_ns, Some(50_000));
        // 150 us over 1 ms: 15% and over the floor.
        let c = compare_task(
            &real(0, 1_150_000, 1_000_000),
            &sim(0, 1_000_000, 1_000_000),
            0.1,
        );
        assert_eq!(c.differences, vec!["max_response"]);
        // 2 ms over 40 ms: 5%, over the floor but within the tolerance.
        let c = compare_task(
            &real(0, 42_000_000, 40_000_000),
            &sim(0, 40_000_000, 40_000_000),
            0.1,
        );
        assert!(c.differences.is_empty());
    }

    #[test]
    fn any_difference_in_misses_counts() {
        let c = compare_task(&real(1, 10, 10), &sim(0, 10, 10), 0.1);
        assert_eq!(c.differences, vec!["misses"]);
        assert_eq!(c.max_response_delta_ns, Some(0));
    }
}
