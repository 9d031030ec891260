//! `rtlab breakdown`: paper 004's validation experiment (§5): the ideal and
//! overhead-aware analytic breakdowns, the simulated one and the one
//! measured on real threads, side by side (crate `rtlab-analysis`, modules
//! `breakdown_experiment` and `measured_breakdown`; real runs by
//! `rtlab-rt`'s executor, simulated ones by `rtlab-sim`).

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use rtlab_analysis::breakdown::ONE_PPB;
use rtlab_analysis::breakdown_experiment::{scale_times, BreakdownDocument, ExperimentConfig};
use rtlab_analysis::measured_breakdown::{PassRule, Step, DEFAULT_REPEAT};
use rtlab_analysis::overhead_rta::TimerModel;
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::overheads::Overheads;
use rtlab_model::policy::{AnalysedPolicy, ModelScheduler, PriorityAssignment, RunPolicy};
use rtlab_model::{file, printable, Nanos, TaskSet};
use rtlab_report::breakdown_text::{describe, progress_line};
use rtlab_report::view::RunView;
use rtlab_rt::executor::RunConfig;
use rtlab_study::breakdown::{run_scales, RealSetup};

use crate::flags::parse_nanos;
use crate::save::SaveFlags;
use crate::setup::{restore_left_state_first, say};
use crate::usage::usage;

const EXAMPLES: &str = "Examples:\n  \
    rtlab breakdown builtin:ins --policy rm --overheads builtin:rtmach --time-scale 0.1 --duration-per-step 1s --repeat 2\n  \
    rtlab breakdown builtin:avionics --policy rm --overheads my.toml --time-scale 0.01,0.02,0.05 --plot breakdown.svg\n  \
    rtlab breakdown builtin:ins-big --policy edf --overheads my.toml --time-scale 0.01 --no-rt-throttling --json\n\n\
    Every C is scaled by alpha (periods fixed) and the set is run on real threads (pinned, SCHED_FIFO for\n\
    rm/dm, SCHED_DEADLINE for edf, as `rtlab run`) for --duration-per-step at each alpha, --repeat times;\n\
    bisection to --resolution finds the largest alpha with no miss, then a confirming run. Beside it: the\n\
    ideal and overhead-aware analytic breakdowns and the simulated one (same overheads). Ctrl-C ends the\n\
    experiment and prints what was measured. The guide: \"Measured breakdown utilization\".";

/// The longest default step: one hyperperiod, but at most this.
const DEFAULT_STEP_CAP: Nanos = Nanos::from_secs(10);

/// `rtlab breakdown`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct BreakdownArgs {
    /// A task-set file (.toml or .json) or `builtin:NAME`.
    pub taskset: String,
    /// rm, dm or edf.
    #[arg(long, short = 'P')]
    pub policy: String,
    /// The platform's costs for the overhead-aware analysis and the simulation: an overheads
    /// TOML (e.g. from `rtlab characterize --out`) or builtin:rtmach / builtin:zero (default: measure this machine first, as
    /// `rtlab characterize` does with its defaults).
    #[arg(long, value_name = "FILE")]
    pub overheads: Option<String>,
    /// Multiply every period, deadline, offset and C by X before everything else; a comma list
    /// (0.01,0.02,0.05) runs the experiment at each.
    #[arg(long, value_name = "X[,Y...]", default_value = "1", value_delimiter = ',', value_parser = parse_factor)]
    pub time_scale: Vec<u64>,
    /// How long each run lasts (default: one hyperperiod of the time-scaled set, at most 10s, at
    /// least every task's first deadline).
    #[arg(long, value_parser = parse_nanos)]
    pub duration_per_step: Option<Nanos>,
    /// Runs that must all have no miss for an alpha to pass.
    #[arg(long, default_value_t = DEFAULT_REPEAT, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// When an alpha passes: all (every one of --repeat runs has no miss) or any (best of
    /// --repeat: one run with no miss; for platforms whose stalls cause misses at any load).
    #[arg(long, default_value = "all", value_parser = parse_pass_rule)]
    pub pass_rule: PassRule,
    /// Bisection resolution in alpha (0 < R < 1).
    #[arg(long, default_value = "0.005", value_parser = parse_resolution)]
    pub resolution: u64,
    #[command(flatten)]
    pub real_series: crate::real_run::RealSeriesFlags,
    /// Print the JSON document instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Draw predicted and measured breakdown utilization against the time scale as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub save: SaveFlags,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
    #[command(flatten)]
    pub isolate: crate::setup::IsolateFlags,
}

/// A positive decimal factor, held exactly in parts per billion.
fn parse_factor(text: &str) -> Result<u64, String> {
    let bad =
        || format!("`{text}` is not a positive decimal number like 0.01 or 2 (at most 9 decimals)");
    let (whole, frac) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    if frac.len() > 9
        || (whole.is_empty() && frac.is_empty())
        || !whole
            .bytes()
            .chain(frac.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().map_err(|_| bad())?
    };
    let ppb = whole
        .checked_mul(ONE_PPB)
        .and_then(|w| w.checked_add(frac))
        .filter(|&p| p > 0 && p <= 1_000 * ONE_PPB)
        .ok_or_else(|| format!("`{text}`: use a factor above 0 and at most 1000"))?;
    Ok(ppb)
}

/// `--pass-rule all|any`.
fn parse_pass_rule(text: &str) -> Result<PassRule, String> {
    match text {
        "all" => Ok(PassRule::All),
        "any" => Ok(PassRule::Any),
        _ => Err(format!("`{text}`: use all or any")),
    }
}

/// `--resolution`: a factor strictly between 0 and 1.
fn parse_resolution(text: &str) -> Result<u64, String> {
    let ppb = parse_factor(text)?;
    (ppb < ONE_PPB)
        .then_some(ppb)
        .ok_or_else(|| format!("`{text}`: the resolution must be below 1 (e.g. 0.005)"))
}

/// The analysis policy and the run policy `--policy` names.
fn policies(name: &str) -> anyhow::Result<(AnalysedPolicy, RunPolicy, ModelScheduler)> {
    let (policy, run) = match name {
        "rm" => (
            AnalysedPolicy::Fixed(PriorityAssignment::RateMonotonic),
            RunPolicy::RateMonotonic,
        ),
        "dm" => (
            AnalysedPolicy::Fixed(PriorityAssignment::DeadlineMonotonic),
            RunPolicy::DeadlineMonotonic,
        ),
        "edf" => (AnalysedPolicy::Edf, RunPolicy::Edf),
        other => {
            return Err(usage(format!(
                "--policy `{}`: use rm, dm or edf",
                printable(other)
            )))
        }
    };
    Ok((policy, run, ModelScheduler::from(policy)))
}

/// Runs `rtlab breakdown`.
pub fn run(args: &BreakdownArgs) -> anyhow::Result<ExitCode> {
    let (policy, run_policy, scheduler) = policies(&args.policy)?;
    let cpu = args.real_series.cpu();
    let loaded = file::load(&args.taskset)?;
    if loaded.set.tasks.is_empty() {
        return Err(anyhow::anyhow!("{}: the set has no task", args.taskset));
    }
    // Refused before any real-time work (the characterisation included).
    args.kernel.check()?;
    let trace = args.kernel.request_per_run();
    let scaled: Vec<(u64, TaskSet, Nanos)> = args
        .time_scale
        .iter()
        .map(|&x| {
            let set = scale_times(&loaded.set, x);
            step_duration(&set, args.duration_per_step).map(|d| (x, set, d))
        })
        .collect::<anyhow::Result<_>>()?;
    let mut overheads = match &args.overheads {
        Some(spec) => Overheads::load(spec).map_err(|e| anyhow::anyhow!("--overheads: {e}"))?,
        None => {
            say(&format!(
                "no --overheads: measuring this machine's costs on CPU {cpu} first (rtlab characterize, about half a minute; `rtlab characterize --out FILE` keeps them for --overheads FILE)"
            ));
            let profile = crate::measured_overheads::default_profile(cpu)?;
            say(&format!(
                "measured: timer {}, preempt {}, exit {}, nonpreempt {}, {}",
                profile.timer,
                profile.preempt,
                profile.exit,
                profile.nonpreempt,
                TimerModel::for_overheads(&profile)
            ));
            profile
        }
    };
    if args.real_series.no_rt_throttling {
        // Each run lifts RT throttling: the model must not charge it.
        overheads.throttling.rt = None;
    }
    let throttling = RtThrottling::read().ok();
    // What real-time threads may use of the CPU: RT throttling's share,
    // and in any case not what the fair server (Linux 6.12+) reserves for
    // starved SCHED_OTHER tasks, which --no-rt-throttling does not lift.
    // SCHED_DEADLINE admission refuses a set above its limit instead: those
    // steps are recorded as refused.
    let fair = 1.0 - rtlab_host::policy::fair_server_share();
    let limit = match (args.real_series.no_rt_throttling, run_policy.is_deadline()) {
        (_, true) => None,
        (true, false) => (fair < 1.0).then_some(fair),
        (false, false) => throttling.and_then(|t| t.limit()).map(|l| l.min(fair)),
    };
    let cfg = ExperimentConfig {
        policy,
        overheads: overheads.clone(),
        resolution_ppb: args.resolution,
        repeat: args.repeat,
        pass_rule: args.pass_rule,
        utilization_limit: limit,
    };
    let saver = args
        .save
        .begin(rtlab_store::RunKind::Breakdown, Some(&args.taskset))?;
    let flag = interrupt::install_interrupt_flag();
    args.isolate.check(&[cpu])?;
    let _measuring = args.cpu_lock.hold(Some(&[cpu]))?;
    restore_left_state_first();
    let _shield = args.isolate.raise(&[cpu])?;
    let progress = std::io::stderr().is_terminal();
    let mut doc = BreakdownDocument {
        taskset: loaded.set.name.clone(),
        origin: loaded.origin.clone(),
        policy: args.policy.clone(),
        overheads: overheads.name.clone(),
        timer: TimerModel::for_overheads(&overheads).to_string(),
        throttling_model: (!overheads.throttling.is_none())
            .then(|| overheads.throttling.to_string()),
        repeat: args.repeat,
        pass_rule: args.pass_rule,
        resolution: args.resolution as f64 / ONE_PPB as f64,
        cpu: Some(cpu),
        rt_throttling: throttling.map_or("unknown".into(), |t| t.describe_limit()),
        no_rt_throttling: args.real_series.no_rt_throttling,
        interrupted: false,
        scales: Vec::new(),
    };
    let mut run_cfg = RunConfig::new(Nanos::ZERO, run_policy);
    run_cfg.cpu = Some(cpu);
    run_cfg.no_rt_throttling = args.real_series.no_rt_throttling;
    run_cfg.kernel_trace = trace;
    let real = RealSetup {
        config: run_cfg,
        cooldown: args.real_series.cooldown,
        interrupt: flag,
    };
    let failure: Option<anyhow::Error> = run_scales(
        &mut doc,
        &scaled,
        &cfg,
        scheduler,
        &overheads,
        &real,
        |scale, step: &Step| {
            if progress {
                say(&progress_line(scale, step));
            }
        },
    );
    if doc.interrupted && failure.is_none() {
        say(&format!(
            "interrupted{}: what was measured until then follows",
            interrupt::signal_name().map_or(String::new(), |s| format!(" by {s}"))
        ));
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", describe(&doc));
    }
    let document = serde_json::to_value(&doc)?;
    if let Some(path) = &args.plot {
        let run = RunView::unsaved("breakdown", document.clone());
        crate::plot_file::write(path, &run)?;
    }
    // What was measured is out; now the store.
    if let Some(saver) = saver {
        saver.finish(&document, doc.interrupted || failure.is_some())?;
    }
    match failure {
        Some(e) => Err(e.context(format!("rtlab breakdown --policy {}", args.policy))),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The run length at one scale: `--duration-per-step`, else one hyperperiod
/// capped at 10 s; never shorter than every task's first deadline, which a
/// run must reach to judge that task at all.
fn step_duration(set: &TaskSet, asked: Option<Nanos>) -> anyhow::Result<Nanos> {
    let first_deadlines = set.last_first_deadline();
    match asked {
        Some(d) if d < first_deadlines => Err(usage(format!(
            "--duration-per-step {d}: shorter than the last first deadline of the (time-scaled) set, {first_deadlines}, so a task could never be seen to miss; use at least that"
        ))),
        Some(d) => Ok(d),
        None => {
            let h = set.hyperperiod().unwrap_or(DEFAULT_STEP_CAP);
            Ok(h.min(DEFAULT_STEP_CAP).max(first_deadlines))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_parse_exactly() {
        assert_eq!(parse_factor("0.01"), Ok(10_000_000));
        assert_eq!(parse_factor("2"), Ok(2 * ONE_PPB));
        assert_eq!(parse_factor("1.5"), Ok(1_500_000_000));
        assert_eq!(parse_factor(".25"), Ok(250_000_000));
        assert_eq!(parse_factor("0.000000001"), Ok(1));
        for bad in ["0", "-1", "abc", "0.0000000001", "1e-3", "", ".", "1001"] {
            assert!(parse_factor(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_resolution("0.005"), Ok(5_000_000));
        assert!(parse_resolution("1").is_err());
    }

    #[test]
    fn the_default_step_is_a_hyperperiod_capped_at_ten_seconds() {
        let ins = rtlab_model::catalog::build("ins").unwrap();
        // ins: hyperperiod 5 s.
        assert_eq!(step_duration(&ins, None).unwrap(), Nanos::from_secs(5));
        let avionics = rtlab_model::catalog::build("avionics").unwrap();
        assert_eq!(step_duration(&avionics, None).unwrap(), DEFAULT_STEP_CAP);
        let small = scale_times(&ins, 10_000_000);
        assert_eq!(step_duration(&small, None).unwrap(), Nanos::from_ms(50));
        assert!(step_duration(&ins, Some(Nanos::from_ms(100))).is_err());
    }
}
