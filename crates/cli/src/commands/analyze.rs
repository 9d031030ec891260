//! `rtlab analyze`: every schedulability test of every chosen policy on one
//! task set, per-task response times, and optionally breakdown utilization.
//!
//! # JSON schema (`--json`)
//!
//! ```text
//! {
//!   "taskset": "avionics",                 // the set's name
//!   "origin": "builtin:avionics",          // path or builtin:NAME
//!   "utilization": 0.8301,                 // Σ C/T
//!   "overheads": "rtmach" | null,          // --overheads profile name
//!   "tests": [                             // every test of every policy
//!     { "test": "rta", "policy": "rm",
//!       "schedulable": true | false | null,   // null: sufficient test inconclusive
//!       "tick_ns": 8000000 | null,            // *-overheads only: paper 004's tick; null = tickless or hrtimer
//!       "timer": "hrtimer + tick 4ms",        // only for Linux's model (overheads file releases = "hrtimer")
//!       "periodic_tick_ns": 4000000 }         // only for Linux's model with a tick
//!   ],
//!   "tasks": [                             // one row per task per policy
//!     { "name": "t1", "policy": "rm",
//!       "priority": 15 | null,             // null under EDF; larger is more urgent
//!       "wcet_ns": 2000000, "period_ns": 25000000, "deadline_ns": 25000000,
//!       "blocking_ns": 0,
//!       "wcrt_ns": 2000000 | null,         // exact test (rta); null when above D or unknown
//!       "schedulable": true | false | null }
//!   ],
//!   "breakdown": [                         // only with --breakdown
//!     { "policy": "rm", "overheads": "rtmach" | null, "tick_ns": 8000000 | null,
//!       "timer": ..., "periodic_tick_ns": ...,   // as in "tests", Linux's model only
//!       "utilization": 0.8236 | null,      // U*; null when no scale is schedulable
//!       "scale": 0.9921 | null }           // α
//!   ]
//! }
//! ```
//!
//! Test names: `liu-layland`, `hyperbolic`, `rta`, `rta-overheads` (fixed
//! priorities), `edf-utilization`, `edf-density`, `edf-demand`,
//! `edf-demand-overheads` (EDF).

use std::fmt::Write as _;

use anyhow::Context;
use clap::{Args, ValueEnum};
use rtlab_analysis::analyze_document::{all_policies, analyze_document};
use rtlab_analysis::blocking::{self, LockingProtocol};
use rtlab_analysis::overhead_rta::TimerModel;
use rtlab_analysis::priority::PriorityPolicy;
use rtlab_analysis::schema::AnalyzeDocument;
use rtlab_analysis::suite::{self, BreakdownRun, Options, Policy, PolicyReport};
use rtlab_analysis::{Response, Test};
use rtlab_model::overheads::Overheads;
use rtlab_model::{printable, Nanos, TaskSet};
use serde_json::Value;

use rtlab_report::table;

/// Arguments of `rtlab analyze`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    rtlab analyze builtin:avionics --policy rm --breakdown\n  \
    rtlab analyze builtin:avionics --policy rm --breakdown --overheads builtin:rtmach --tick 1ms,2ms,4ms,8ms,16ms\n  \
    rtlab analyze builtin:avionics --policy edf --overheads builtin:rtmach --tick 8ms\n  \
    rtlab analyze sets/lf.toml --policy all --json")]
pub struct AnalyzeArgs {
    /// Task-set file (TOML or JSON) or builtin:NAME.
    pub file: String,

    /// Scheduling policy to analyse; `all` is rm, dm, opa, edf, and given
    /// when every task has a priority.
    #[arg(long, value_enum, default_value_t = PolicyArg::All)]
    pub policy: PolicyArg,

    /// Scheduler overheads for paper 004's cost model (rta-overheads under
    /// fixed priorities, edf-demand-overheads under EDF): an overheads TOML
    /// file or builtin:rtmach.
    #[arg(long, value_name = "FILE|builtin:rtmach")]
    pub overheads: Option<String>,

    /// Timer tick(s) for paper 004's timer-driven model (releases wait for
    /// the next tick), comma-separated (e.g. 1ms,2ms,4ms); overrides the
    /// overheads file's `releases`/`tick`. Without it, the file's model
    /// (tickless when it states none).
    #[arg(long, value_delimiter = ',', value_parser = parse_tick, requires = "overheads")]
    pub tick: Vec<Nanos>,

    /// Number of threads n at which overhead costs a*n+b are evaluated
    /// (default: the number of tasks).
    #[arg(long, requires = "overheads")]
    pub threads: Option<usize>,

    /// Locking protocol for critical sections: pip or pcp under fixed
    /// priorities (default pcp); srp or dfp under EDF (same bound).
    #[arg(long, value_enum)]
    pub locking: Option<LockingArg>,

    /// Also search the breakdown utilization (scale all C until a miss),
    /// ideal and, with --overheads, for each tick.
    #[arg(long)]
    pub breakdown: bool,

    /// Print the JSON document described in the README instead of tables.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
}

/// `--policy` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PolicyArg {
    /// Rate monotonic.
    Rm,
    /// Deadline monotonic.
    Dm,
    /// The priorities in the file.
    Given,
    /// Audsley's optimal priority assignment.
    Opa,
    /// Earliest deadline first.
    Edf,
    /// All of the above that apply.
    All,
}

/// `--locking` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LockingArg {
    /// Priority inheritance (fixed priorities).
    Pip,
    /// (Immediate) priority ceiling (fixed priorities).
    Pcp,
    /// Stack resource policy (EDF).
    Srp,
    /// Deadline floor protocol (EDF).
    Dfp,
}

fn parse_tick(text: &str) -> Result<Nanos, String> {
    let tick: Nanos = text.parse().map_err(|e| format!("{e}"))?;
    if tick.is_zero() {
        return Err("a tick must be longer than 0".into());
    }
    Ok(tick)
}

/// Loads the `--overheads` profile of `rtlab analyze` and `rtlab sweep`
/// (a TOML file or a built-in), if one was given.
pub fn load_overheads(arg: Option<&str>) -> anyhow::Result<Option<Overheads>> {
    arg.map(Overheads::load)
        .transpose()
        .context("cannot load the overheads")
}

/// Runs `rtlab analyze`.
pub fn run(args: &AnalyzeArgs) -> anyhow::Result<Value> {
    let loaded = rtlab_model::file::load(&args.file)?;
    let set = &loaded.set;
    let overheads = load_overheads(args.overheads.as_deref())?;
    let mut options = Options {
        overheads,
        timers: args.tick.iter().map(|&t| TimerModel::Tick(t)).collect(),
        threads: args.threads,
        ..Options::default()
    };
    match args.locking {
        Some(LockingArg::Pip) => options.fixed_protocol = LockingProtocol::Pip,
        Some(LockingArg::Pcp) | None => options.fixed_protocol = LockingProtocol::Pcp,
        Some(LockingArg::Srp) => options.edf_protocol = LockingProtocol::Srp,
        Some(LockingArg::Dfp) => options.edf_protocol = LockingProtocol::Dfp,
    }

    let policies = policies(args.policy, set)?;
    let reports = policies
        .iter()
        .map(|&p| suite::analyse(set, p, &options).with_context(|| format!("policy {}", p.name())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let breakdowns: Vec<BreakdownRun> = if args.breakdown {
        policies
            .iter()
            .flat_map(|&p| suite::breakdowns(set, p, &options))
            .collect()
    } else {
        Vec::new()
    };

    let doc = json_document(
        &loaded.origin,
        set,
        &options,
        &reports,
        args.breakdown.then_some(&breakdowns),
    );
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for note in &loaded.notes {
            eprintln!("{note}");
        }
        print!(
            "{}",
            human(&loaded.origin, set, &options, &reports, &breakdowns)
        );
    }
    let doc = serde_json::to_value(&doc)?;
    crate::save::save_document(
        &args.save,
        rtlab_store::RunKind::Analyze,
        Some(&args.file),
        &doc,
        false,
    )?;
    Ok(doc)
}

fn policies(arg: PolicyArg, set: &TaskSet) -> anyhow::Result<Vec<Policy>> {
    let fixed = |p| Policy::Fixed(p);
    Ok(match arg {
        PolicyArg::Rm => vec![fixed(PriorityPolicy::RateMonotonic)],
        PolicyArg::Dm => vec![fixed(PriorityPolicy::DeadlineMonotonic)],
        PolicyArg::Given => vec![fixed(PriorityPolicy::Given)],
        PolicyArg::Opa => vec![fixed(PriorityPolicy::Audsley)],
        PolicyArg::Edf => vec![Policy::Edf],
        PolicyArg::All => all_policies(set),
    })
}

fn verdict_word(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "schedulable",
        Some(false) => "NOT schedulable",
        None => "inconclusive",
    }
}

fn test_label(test: Test, timer: Option<TimerModel>) -> String {
    match timer {
        Some(timer) => format!("{test} ({timer})"),
        None => test.to_string(),
    }
}

fn human(
    origin: &str,
    set: &TaskSet,
    options: &Options,
    reports: &[PolicyReport],
    breakdowns: &[BreakdownRun],
) -> String {
    let origin = printable(origin);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({origin}): {} tasks, U = {:.4}{}",
        printable(&set.name),
        set.tasks.len(),
        set.utilization(),
        match &options.overheads {
            Some(o) => format!(", overheads {}", printable(&o.name)),
            None => String::new(),
        }
    );
    if blocking::has_critical_sections(set) {
        let _ = writeln!(
            out,
            "critical sections: {} under fixed priorities, {} under EDF",
            options.fixed_protocol.name(),
            options.edf_protocol.name()
        );
    }
    for report in reports {
        let _ = writeln!(out, "\npolicy {}", report.policy.name());
        let labels: Vec<String> = report
            .runs
            .iter()
            .map(|run| test_label(run.outcome.test, run.timer))
            .collect();
        let width = labels.iter().map(String::len).max().unwrap_or(0).max(28);
        for (run, label) in report.runs.iter().zip(&labels) {
            let _ = writeln!(
                out,
                "  {label:<width$} {}",
                verdict_word(run.outcome.schedulable)
            );
        }
        if let Some(note) = &report.note {
            let _ = writeln!(out, "  note: {note}");
        }
        let overhead_runs: Vec<_> = report
            .runs
            .iter()
            .filter(|r| r.outcome.test == Test::RtaOverheads)
            .collect();
        let mut header = vec!["task", "priority", "C", "T", "D", "R", "slack", "verdict"];
        let extra: Vec<String> = overhead_runs
            .iter()
            .map(|r| match r.timer {
                Some(TimerModel::Tick(t)) => format!("R@{t}"),
                _ => "R(oh)".to_string(),
            })
            .collect();
        header.extend(extra.iter().map(String::as_str));
        let mut right = header.clone();
        right.retain(|h| *h != "task" && *h != "verdict");
        let mut t = table::new(&header, &right);
        let exact = report.exact_outcome();
        for (i, task) in set.tasks.iter().enumerate() {
            let response = exact.responses.get(i).copied().unwrap_or(Response::Unknown);
            let (r, slack) = match response {
                Response::Within(r) => (r.to_string(), (task.deadline - r).to_string()),
                Response::Exceeds => ("> D".to_string(), "-".to_string()),
                Response::Unknown => ("-".to_string(), "-".to_string()),
            };
            let verdict = match (response, report.policy) {
                (Response::Unknown, Policy::Edf) => match exact.schedulable {
                    Some(true) => "ok",
                    Some(false) => "set misses",
                    None => "?",
                },
                (Response::Within(_), _) => "ok",
                (Response::Exceeds, _) => "MISS",
                (Response::Unknown, _) => "?",
            };
            let mut row = vec![
                printable(&task.name).into_owned(),
                report
                    .priorities
                    .as_ref()
                    .map_or("-".to_string(), |p| p.level(i).to_string()),
                task.wcet.to_string(),
                task.period.to_string(),
                task.deadline.to_string(),
                r,
                slack,
                verdict.to_string(),
            ];
            for run in &overhead_runs {
                row.push(match run.outcome.responses.get(i) {
                    Some(Response::Within(r)) => r.to_string(),
                    Some(Response::Exceeds) => "> D".to_string(),
                    _ => "-".to_string(),
                });
            }
            t.add_row(row);
        }
        let _ = writeln!(out, "{}", indent(&table::render(&t)));
    }
    if !breakdowns.is_empty() {
        let _ = writeln!(
            out,
            "\nbreakdown utilization (all C scaled by alpha, periods fixed; alpha to 1e-6)"
        );
        let mut t = table::new(
            &["policy", "overheads", "tick", "U*", "alpha"],
            &["U*", "alpha"],
        );
        for b in breakdowns {
            t.add_row(vec![
                b.policy.name().to_string(),
                b.overheads.clone().unwrap_or_else(|| "none (ideal)".into()),
                match b.timer {
                    Some(timer @ TimerModel::Hrtimer { .. }) => timer.to_string(),
                    _ => b.tick.map_or("-".to_string(), |t| t.to_string()),
                },
                b.result.map_or("unschedulable".into(), |r| {
                    format!("{:.2}%", r.utilization * 100.0)
                }),
                b.result.map_or("-".into(), |r| format!("{:.6}", r.scale)),
            ]);
        }
        let _ = writeln!(out, "{}", indent(&table::render(&t)));
    }
    out
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn json_document(
    origin: &str,
    set: &TaskSet,
    options: &Options,
    reports: &[PolicyReport],
    breakdowns: Option<&Vec<BreakdownRun>>,
) -> AnalyzeDocument {
    analyze_document(origin, set, options, reports, breakdowns.map(Vec::as_slice))
}
