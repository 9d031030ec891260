//! `rtlab study global-vs-partitioned`: argument parsing and wiring for
//! the multiprocessor study (`rtlab_study::global_partitioned`; its text is
//! `rtlab_report::global_partitioned`'s).

use std::process::ExitCode;

use clap::Args;
use rtlab_host::interrupt;
use rtlab_model::{printable, Nanos};

use crate::flags::parse_nanos;
use crate::setup::{restore_left_state_first, say};
use crate::usage::usage;

pub const GVP_EXAMPLES: &str = "Examples:\n  \
    rtlab study global-vs-partitioned --cpus 2 --sets 5 --from 0.6 --to 2.0 --step 0.2\n  \
    rtlab study global-vs-partitioned --cpus 0,1 --sets 2 --tasks 4 --from 1.0 --to 1.4 --step 0.4 --duration 300ms --real\n\n\
    Random sets (UUniFast-discard, per-task U <= 0.8, periods 10-100ms, implicit deadlines) at rising\n\
    total utilization on m processors, under linux-dl, pedf, gfp:dm and pfp:dm: proven by the\n\
    analysis, met in the simulator, met on real threads (--real, root; SCHED_DEADLINE over\n\
    every CPU, exclusive cpusets per CPU, SCHED_FIFO floating or pinned), and the highest schedulable\n\
    utilization of each. With --real on 2 CPUs: Dhall's example (builtin:dhall-linux) under linux-dl\n\
    and pedf. The guide: \"Multiprocessor on real threads\".";

/// `rtlab study global-vs-partitioned`
#[derive(Debug, Args)]
pub struct GvpArgs {
    /// The CPUs: a count m (simulation and analysis only, or real on CPUs 0..m-1) or a list `0,1`.
    #[arg(long, default_value = "2")]
    pub cpus: String,
    /// Random task sets per utilization level.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub sets: u64,
    /// Tasks per set (at least 2).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u64).range(2..=200))]
    pub tasks: u64,
    /// First total utilization.
    #[arg(long, default_value_t = 0.6)]
    pub from: f64,
    /// Last total utilization (levels above m are left out).
    #[arg(long, default_value_t = 2.0)]
    pub to: f64,
    /// Step between levels.
    #[arg(long, default_value_t = 0.2)]
    pub step: f64,
    /// Seed of the generator (the same seed gives the same document without --real).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Length of each simulated and real run.
    #[arg(long, default_value = "1s", value_parser = parse_nanos)]
    pub duration: Nanos,
    /// Run every set on real threads too (root).
    #[arg(long)]
    pub real: bool,
    /// Lift RT throttling and SCHED_DEADLINE admission for the real runs.
    #[arg(long, requires = "real")]
    pub no_rt_throttling: bool,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub isolate: crate::setup::IsolateFlags,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
    /// Print the JSON document instead of the tables.
    #[arg(long)]
    pub json: bool,
}

/// Runs `rtlab study global-vs-partitioned`.
pub fn run(args: &GvpArgs) -> anyhow::Result<ExitCode> {
    args.kernel.needs(args.real, "--real")?;
    use rtlab_study::global_partitioned::{self as gvp, GvpConfig};
    let cpus: Vec<usize> = match args.cpus.trim().parse::<usize>() {
        // A count is checked before it sizes the list (1 to 64 below).
        Ok(m) if !args.cpus.contains(',') => (0..m.min(65)).collect(),
        _ => args
            .cpus
            .split(',')
            .map(|c| c.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| {
                usage(format!(
                    "--cpus `{}`: give a count (2) or a list (0,1)",
                    printable(&args.cpus)
                ))
            })?,
    };
    if cpus.is_empty() || cpus.len() > 64 {
        return Err(usage(format!(
            "--cpus `{}`: use 1 to 64 CPUs",
            printable(&args.cpus)
        )));
    }
    for (flag, v) in [
        ("--from", args.from),
        ("--to", args.to),
        ("--step", args.step),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(usage(format!("{flag} {v}: give a utilization above 0")));
        }
    }
    if args.to < args.from {
        return Err(usage(format!(
            "--to {} is below --from {}",
            args.to, args.from
        )));
    }
    if args.duration == Nanos::ZERO {
        return Err(usage("invalid --duration 0s: must be more than 0"));
    }
    let _measuring = if args.real {
        if rtlab_sys::resource::geteuid() != 0 {
            anyhow::bail!(
                "--real runs SCHED_DEADLINE and SCHED_FIFO threads on several CPUs and makes exclusive cpusets: \
                 it needs root (run it with sudo, or without --real)"
            );
        }
        let online = rtlab_host::platform::online_cpus();
        let allowed = rtlab_host::policy::allowed_cpus()?;
        rtlab_rt::executor::placement::check_cpus(&cpus, &online, &allowed)
            .map_err(|e| anyhow::anyhow!(crate::usage::naming_the_flag(&e)))?;
        interrupt::install_interrupt_flag();
        args.isolate.check(&cpus)?;
        let lock = args.cpu_lock.hold(Some(&cpus))?;
        restore_left_state_first();
        Some((lock, args.isolate.raise(&cpus)?))
    } else {
        None
    };
    let config = GvpConfig {
        cpus,
        tasks: args.tasks as usize,
        sets: args.sets,
        from: args.from,
        to: args.to,
        step: args.step,
        seed: args.seed,
        duration: args.duration,
        real: args.real,
        no_rt_throttling: args.no_rt_throttling,
        kernel_trace: args.kernel.request_per_run(),
    };
    let flag = interrupt::install_interrupt_flag();
    let doc = gvp::run(&config, flag, &|line| say(line)).map_err(|e| match e {
        gvp::GvpError::Setting(why) => usage(why),
        other => anyhow::Error::from(other).context("rtlab study global-vs-partitioned"),
    })?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", rtlab_report::global_partitioned::describe(&doc));
        out!(
            "{}",
            rtlab_report::kernel_trace::runs_text(&doc.kernel_traces)
        );
    }
    Ok(ExitCode::SUCCESS)
}
