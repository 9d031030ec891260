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
use rtlab_analysis::multiprocessor::{self, MultiprocessorTest};
use rtlab_analysis::overhead_rta::TimerModel;
use rtlab_analysis::schema::{AnalyzeDocument, MultiprocessorAnalyzeDocument};
use rtlab_analysis::suite::{self, BreakdownRun, Options, PolicyReport};
use rtlab_analysis::{Response, Test};
use rtlab_model::file::LoadedTaskSet;
use rtlab_model::overheads::Overheads;
use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};
use rtlab_model::{printable, Nanos, TaskSet};

use crate::usage::usage;
use serde_json::Value;

use rtlab_report::table;

/// Arguments of `rtlab analyze`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    rtlab analyze builtin:avionics --policy rm --breakdown\n  \
    rtlab analyze builtin:avionics --policy rm --breakdown --overheads builtin:rtmach --tick 1ms,2ms,4ms,8ms,16ms\n  \
    rtlab analyze builtin:avionics --policy edf --overheads builtin:rtmach --tick 8ms\n  \
    rtlab analyze sets/lf.toml --policy all --json
  \
    rtlab analyze builtin:dhall --cpus 2
  \
    rtlab analyze builtin:dhall --cpus 4 --test gedf:bcl,gedf:rta,gfp-dkc:rta-lc,pedf:ff-decreasing --json")]
pub struct AnalyzeArgs {
    /// Task-set file (TOML or JSON) or builtin:NAME.
    pub file: String,

    /// Scheduling policies to analyse, comma-separated (`rm,edf`); `all` is rm, dm, opa, edf,
    /// and given when every task has a priority. `sim`'s spellings (`fp:rm`, `--scheduler`) are
    /// accepted too.
    #[arg(
        long,
        alias = "scheduler",
        value_enum,
        value_delimiter = ',',
        default_value = "all"
    )]
    pub policy: Vec<PolicyArg>,

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

    /// Analyse on M processors (default: the file's `processors`): the
    /// global and partitioned tests of --test instead of the uniprocessor
    /// ones (--policy, --overheads and --breakdown are uniprocessor only).
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..=i64::from(rtlab_model::MAX_PROCESSORS)))]
    pub cpus: Option<u32>,

    /// Multiprocessor tests, comma-separated (default: all of them):
    /// gedf:gfb|bak|bcl|rta, gfp[-rm|-dm|-given|-dkc]:rta|rta-lc,
    /// pedf:HEURISTIC, pfp[-rm|-dm|-given]:HEURISTIC (e.g. pedf:ff-decreasing).
    #[arg(long, value_delimiter = ',', value_parser = MultiprocessorTest::from_name)]
    pub test: Vec<MultiprocessorTest>,

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
    #[value(alias = "fp:rm")]
    Rm,
    /// Deadline monotonic.
    #[value(alias = "fp:dm")]
    Dm,
    /// The priorities in the file.
    #[value(alias = "fp:given")]
    Given,
    /// Audsley's optimal priority assignment.
    #[value(alias = "fp:opa")]
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
    let m = args.cpus.unwrap_or(loaded.set.processors());
    if m > 1 || !args.test.is_empty() {
        return run_multiprocessor(args, &loaded, m);
    }
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

    let policies = policies(&args.policy, set)?;
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
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for note in &loaded.notes {
            eprintln!("{note}");
        }
        out!(
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

/// `rtlab analyze` on `m` processors (or with `--test`).
fn run_multiprocessor(args: &AnalyzeArgs, loaded: &LoadedTaskSet, m: u32) -> anyhow::Result<Value> {
    for (given, flag) in [
        (args.overheads.is_some(), "--overheads"),
        (args.breakdown, "--breakdown"),
        (args.locking.is_some(), "--locking"),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} is for one processor; the multiprocessor tests (--cpus {m}) model neither overheads, breakdown nor locking"
            )));
        }
    }
    let set = crate::flags::on_cpus(loaded.set.clone(), args.cpus)?;
    if set.assignment().is_some() {
        if let Some(global) = args.test.iter().find(|t| t.is_global()) {
            return Err(usage(format!(
                "--test {global}: a global test ignores the tasks' cpu fields, and every task of this set is fixed to a processor; ask pedf:/pfp: tests, or remove the cpu fields"
            )));
        }
    }
    let tests: Vec<MultiprocessorTest> = if args.test.is_empty() {
        MultiprocessorTest::ALL.to_vec()
    } else {
        args.test.clone()
    };
    let doc = multiprocessor::analyze_document(&set, &loaded.origin, m, &tests)?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for note in &loaded.notes {
            eprintln!("{note}");
        }
        out!("{}", multiprocessor_human(&set, &doc));
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

fn multiprocessor_human(set: &TaskSet, doc: &MultiprocessorAnalyzeDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}): {} tasks, U = {:.4} on {} processors\n",
        printable(&doc.taskset),
        printable(&doc.origin),
        doc.tasks.len(),
        doc.utilization,
        doc.processors
    );
    let mut t = table::new(&["test", "verdict", "paper"], &[]);
    for test in &doc.tests {
        let mut verdict = match test.schedulable {
            Some(true) => "schedulable".to_string(),
            Some(false) => "NOT schedulable (U > m)".to_string(),
            None => "not proven".to_string(),
        };
        if let Some(task) = &test.unplaced {
            let _ = write!(verdict, " (task `{}` fits no processor)", printable(task));
        }
        if test.gave_up {
            verdict.push_str(" (gave up: the analysis reached its work cap)");
        }
        if let Some(cpus) = &test.assignment {
            let cpus: Vec<String> = cpus.iter().map(u32::to_string).collect();
            let _ = write!(verdict, " (cpus {})", cpus.join(" "));
        }
        t.add_row(vec![test.test.clone(), verdict, test.paper.to_string()]);
    }
    out.push_str(&table::render(&t));
    out.push('\n');
    let rtas: Vec<&String> = doc
        .tasks
        .first()
        .map(|t| t.response_ns.keys().collect())
        .unwrap_or_default();
    let has_cpu = set.has_cpu_fields();
    let has_tardiness = doc.tasks.iter().any(|t| t.tardiness_bound_ns.is_some());
    let mut header: Vec<String> = ["task", "C", "D", "T"].map(String::from).to_vec();
    if has_cpu {
        header.push("cpu".into());
    }
    header.extend(rtas.iter().map(|name| format!("R {name}")));
    if has_tardiness {
        header.push("tardiness <=".into());
    }
    let names: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<&str> = names.iter().copied().filter(|h| *h != "task").collect();
    let mut t = table::new(&names, &right);
    for (task, row) in set.tasks.iter().zip(&doc.tasks) {
        let mut cells = vec![
            printable(&task.name).into_owned(),
            task.wcet.to_string(),
            task.deadline.to_string(),
            task.period.to_string(),
        ];
        if has_cpu {
            cells.push(task.cpu.map_or("-".into(), |c| c.to_string()));
        }
        for name in &rtas {
            let r = row.response_ns.get(*name).copied().flatten();
            cells.push(r.map_or("-".into(), |r| Nanos::from_ns(r).to_string()));
        }
        if has_tardiness {
            let b = row.tardiness_bound_ns;
            cells.push(b.map_or("-".into(), |b| Nanos::from_ns(b).to_string()));
        }
        t.add_row(cells);
    }
    out.push('\n');
    out.push_str(&table::render(&t));
    out.push('\n');
    if has_tardiness {
        out.push_str("tardiness <=: Devi & Anderson 2008's bound on how late a job finishes under G-EDF (soft real-time)\n");
    }
    if let Some(assignment) = &doc.assignment {
        out.push_str("\nthe file's assignment (cpu fields):\n");
        let tests: Vec<String> = assignment
            .first()
            .map(|p| p.schedulable.keys().cloned().collect())
            .unwrap_or_default();
        let mut header = vec!["cpu", "U"];
        header.extend(tests.iter().map(String::as_str));
        header.push("tasks");
        let mut t = table::new(&header, &["cpu", "U"]);
        for p in assignment {
            let mut cells = vec![p.cpu.to_string(), format!("{:.4}", p.utilization)];
            cells.extend(
                tests.iter().map(|name| {
                    verdict_word(p.schedulable.get(name).copied().flatten()).to_string()
                }),
            );
            let names: Vec<String> = p.tasks.iter().map(|n| printable(n).into_owned()).collect();
            cells.push(names.join(" "));
            t.add_row(cells);
        }
        out.push_str(&table::render(&t));
        out.push('\n');
    }
    out
}

/// The policies of `--policy A,B,...`, each once, in the order given.
fn policies(args: &[PolicyArg], set: &TaskSet) -> anyhow::Result<Vec<AnalysedPolicy>> {
    let mut out: Vec<AnalysedPolicy> = Vec::new();
    for &arg in args {
        for p in policies_of(arg, set) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

fn policies_of(arg: PolicyArg, set: &TaskSet) -> Vec<AnalysedPolicy> {
    let fixed = |p| AnalysedPolicy::Fixed(p);
    match arg {
        PolicyArg::Rm => vec![fixed(PriorityAssignment::RateMonotonic)],
        PolicyArg::Dm => vec![fixed(PriorityAssignment::DeadlineMonotonic)],
        PolicyArg::Given => vec![fixed(PriorityAssignment::Given)],
        PolicyArg::Opa => vec![fixed(PriorityAssignment::Audsley)],
        PolicyArg::Edf => vec![AnalysedPolicy::Edf],
        PolicyArg::All => all_policies(set),
    }
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
            Some(o) if !o.throttling.is_none() => format!(
                ", overheads {} (throttling modelled: {})",
                printable(&o.name),
                o.throttling
            ),
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
                (Response::Unknown, AnalysedPolicy::Edf) => match exact.schedulable {
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
