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
//!       "tick_ns": 8000000 | null,            // *-overheads only: Arakawa et al. 1993's tick; null = tickless or hrtimer
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

use anyhow::Context;
use clap::{Args, ValueEnum};
use rtlab_analysis::analyze_document::{all_policies, analyze_document};
use rtlab_analysis::multiprocessor::{self, MultiprocessorTest};
use rtlab_analysis::overhead_rta::TimerModel;
use rtlab_analysis::schema::AnalyzeDocument;
use rtlab_analysis::suite::{self, BreakdownRun, Options, PolicyReport};
use rtlab_model::file::LoadedTaskSet;
use rtlab_model::overheads::Overheads;
use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};
use rtlab_model::{Nanos, TaskSet};

use crate::locking::LockingFlag;
use crate::usage::usage;
use serde_json::Value;

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

    /// Scheduling policies to analyse on one processor, comma-separated (`rm,edf`; default
    /// `all`: rm, dm, opa, edf, and given when every task has a priority). `sim`'s spellings
    /// (`fp:rm`, `--scheduler`) are accepted too. On several processors the tests of --test
    /// decide instead, and --policy is refused.
    #[arg(long, alias = "scheduler", value_enum, value_delimiter = ',')]
    pub policy: Vec<PolicyArg>,

    /// Scheduler overheads for Arakawa et al. 1993's cost model (rta-overheads under
    /// fixed priorities, edf-demand-overheads under EDF): an overheads TOML
    /// file or builtin:rtmach.
    #[arg(long, value_name = "FILE|builtin:rtmach")]
    pub overheads: Option<String>,

    /// Timer tick(s) for Arakawa et al. 1993's timer-driven model (releases wait for
    /// the next tick), comma-separated (e.g. 1ms,2ms,4ms); overrides the
    /// overheads file's `releases`/`tick`. Without it, the file's model
    /// (tickless when it states none).
    #[arg(long, value_delimiter = ',', value_parser = parse_tick, requires = "overheads")]
    pub tick: Vec<Nanos>,

    /// Number of threads n at which overhead costs a*n+b are evaluated
    /// (default: the number of tasks).
    #[arg(long, requires = "overheads")]
    pub threads: Option<usize>,

    /// Locking protocol for critical sections: on one processor none, npp, pip or ipcp (also
    /// pcp) under fixed priorities (default ipcp), srp or dfp under EDF (same bound); on --cpus
    /// M one or more of mpcp, dpcp, fmlp+, mrsp, msrp (partitioned fixed priorities, --test
    /// pfp[-rm|-dm|-given]:HEURISTIC, default pfp-rm:ff-decreasing) and omlp (global EDF), or
    /// all of them: each protocol's blocking bounds and response times per task.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(LockingFlag))]
    pub locking: Vec<LockingFlag>,

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
    /// gedf:gfb|bak|bcl|rta, gfp[:rm|:dm|:given|:dkc]:rta|rta-lc,
    /// pedf:HEURISTIC, pfp[:rm|:dm|:given]:HEURISTIC (e.g. pedf:ff-decreasing).
    #[arg(long, value_delimiter = ',', value_parser = MultiprocessorTest::from_name)]
    pub test: Vec<MultiprocessorTest>,

    /// Print the JSON document described in the guide instead of tables.
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
    let uniprocessor = match LockingFlag::split(&args.locking)? {
        (None, protocols) => return crate::locking::analyze(args, &loaded, m, &protocols),
        (Some(uni), _) => uni,
    };
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
    if let Some(protocol) = uniprocessor {
        options = options.with_locking(protocol);
    }

    // No --policy: every policy that applies.
    let asked: &[PolicyArg] = if args.policy.is_empty() {
        &[PolicyArg::All]
    } else {
        &args.policy
    };
    let policies = policies(asked, set)?;
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
            rtlab_report::analyze_text::describe(
                &loaded.origin,
                set,
                &options,
                &reports,
                &breakdowns
            )
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
    // A uniprocessor policy would be ignored here: the multiprocessor
    // tests name their own scheduler (gedf:..., pfp-dm:...).
    if let Some(policy) = args.policy.first() {
        let name = policy
            .to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_string());
        let why = if m > 1 {
            format!("the set is analysed on {m} processors")
        } else {
            "--test asks for the multiprocessor tests".to_string()
        };
        return Err(usage(format!(
            "--policy {name} is for one processor, and {why}: choose its tests with --test (e.g. --test gedf:rta,pedf:ff-decreasing), or analyse one processor with --cpus 1"
        )));
    }
    for (given, flag) in [
        (args.overheads.is_some(), "--overheads"),
        (args.breakdown, "--breakdown"),
        (!args.locking.is_empty(), "--locking"),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} is for one processor; the multiprocessor tests (--cpus {m}) model neither overheads, breakdown nor a uniprocessor protocol (locking on m processors is --locking {})",
                rtlab_model::mp_locking::MpProtocol::names()
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
        out!(
            "{}",
            rtlab_report::analyze_text::describe_multiprocessor(&set, &doc)
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

fn json_document(
    origin: &str,
    set: &TaskSet,
    options: &Options,
    reports: &[PolicyReport],
    breakdowns: Option<&Vec<BreakdownRun>>,
) -> AnalyzeDocument {
    analyze_document(origin, set, options, reports, breakdowns.map(Vec::as_slice))
}
