//! `rtlab sim`: simulate a task set under a scheduler (crate `rtlab-sim`).

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_model::overheads::Overheads;
use rtlab_model::{file, Nanos};
use rtlab_sim::{
    ExecModel, JitterModel, OnMiss, Phase, Protocol, SchedulerSpec, SimConfig, SimReport,
    Simulator, TraceWindow, MAX_KEPT_RECORDS,
};

use crate::table;

/// The `after_help` of `rtlab sim` (examples and the JSON schema).
pub const EXAMPLES: &str = "Examples:\n  \
    rtlab sim builtin:lf-scenario-4 --scheduler fp:dm --duration 100ms\n  \
    rtlab sim builtin:lf-scenario-4 --scheduler edf --duration 100ms --gantt s4.svg\n  \
    rtlab sim builtin:hartstone-ph --scheduler rr:2ms --duration 10s --json\n  \
    rtlab sim builtin:avionics -s fp:rm -d 2s --tick 1ms --overheads builtin:rtmach\n  \
    rtlab sim my-set.toml --scheduler fp:rm --protocol ipcp --trace trace.json\n  \
    rtlab sim builtin:hartstone-ph -s multiburst -d 120s --overload hartstone-extended --on-miss skip\n\n\
    Schedulers:\n  \
    fp:rm | fp:dm | fp:given | edf | fifo | np-edf | rr:QUANTUM | hybrid[:rm|dm]\n  \
    ipi[:burst=4ms,bmin=200us,bmax=20ms,share=rate]\n  \
    multiburst[:burst=..,wake=[POLICY/]TASK:POLICY/..,reshare=ROUND:W1/W2/..]\n  \
      (POLICY: immediate, next-burst or end-of-round)\n\n\
    The --json schema is in README (\"rtlab sim --json\").";

/// `rtlab sim`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct SimArgs {
    /// A task-set file (.toml or .json) or `builtin:NAME`.
    pub taskset: String,
    /// The scheduler: fp:rm|fp:dm|fp:given|edf|fifo|np-edf|rr:2ms|ipi|multiburst|hybrid.
    #[arg(long, short = 's')]
    pub scheduler: String,
    /// Simulated time (default: one hyperperiod, if at most 100 s).
    #[arg(long, short = 'd')]
    pub duration: Option<String>,
    /// Periodic timer tick: releases and quanta are noticed only at ticks (default: tickless).
    #[arg(long)]
    pub tick: Option<String>,
    /// Overheads profile (TOML file or builtin:rtmach, builtin:zero); its costs occupy the CPU.
    #[arg(long)]
    pub overheads: Option<String>,
    /// Locking protocol for critical sections: none, npp, pip, ipcp (fixed priority), srp, dfp (EDF).
    #[arg(long, default_value = "none")]
    pub protocol: String,
    /// Extra CPU time per lock or unlock operation.
    #[arg(long, default_value = "0")]
    pub lock_cost: String,
    /// What happens on a deadline miss: continue, abort, skip (Hartstone).
    #[arg(long, default_value = "continue")]
    pub on_miss: String,
    /// Execution time per job: wcet, or uniform in [bcet, wcet] drawn from the seed.
    #[arg(long, default_value = "wcet")]
    pub exec: String,
    /// Seed of the execution-time and jitter streams (same seed, same output).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Release jitter J of the task file: none (ignored), max (every job released J after
    /// its arrival) or uniform (a delay in [0, J] drawn from the seed).
    #[arg(long, default_value = "none")]
    pub jitter: String,
    /// Overload phase START..END:xFACTOR or START..END:UTIL% (repeatable), e.g. 30s..45s:120%.
    #[arg(long = "phase")]
    pub phases: Vec<String>,
    /// A named overload profile: hartstone-extended (48% for 30 s, 120% for 15 s, 48% to 120 s).
    #[arg(long)]
    pub overload: Option<String>,
    /// Print the JSON report instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Write a Chrome trace-event JSON of the window (open in ui.perfetto.dev).
    #[arg(long)]
    pub trace: Option<String>,
    /// Write an SVG Gantt chart of the window.
    #[arg(long)]
    pub gantt: Option<String>,
    /// Window for --trace/--gantt as FROM..TO (default: the first 200 ms, at most the run).
    #[arg(long)]
    pub window: Option<String>,
}

fn duration_flag(flag: &str, text: &str) -> anyhow::Result<Nanos> {
    text.parse::<Nanos>()
        .map_err(|e| anyhow::anyhow!("--{flag} `{text}`: {e}"))
}

/// Builds the configuration from the flags (errors name the flag).
fn config(args: &SimArgs, set: &rtlab_model::TaskSet) -> anyhow::Result<SimConfig> {
    let duration = match &args.duration {
        Some(d) => duration_flag("duration", d)?,
        None => match set.hyperperiod() {
            Ok(h) if h <= Nanos::from_secs(100) && !h.is_zero() => h,
            _ => anyhow::bail!(
                "--duration is needed: the hyperperiod of `{}` is over 100 s (write e.g. --duration 10s)",
                set.name
            ),
        },
    };
    let mut c = SimConfig::new(duration);
    c.tick = args
        .tick
        .as_deref()
        .map(|t| duration_flag("tick", t))
        .transpose()?;
    c.overheads = args
        .overheads
        .as_deref()
        .map(|o| Overheads::load(o).map_err(|e| anyhow::anyhow!("--overheads: {e}")))
        .transpose()?;
    c.protocol = args.protocol.parse::<Protocol>()?;
    c.lock_cost = duration_flag("lock-cost", &args.lock_cost)?;
    c.on_miss = args.on_miss.parse::<OnMiss>()?;
    c.exec = args.exec.parse::<ExecModel>()?;
    c.jitter = args.jitter.parse::<JitterModel>()?;
    c.seed = args.seed;
    match args.overload.as_deref() {
        None => {}
        Some("hartstone-extended") => c.phases.extend(Phase::extended_hartstone()),
        Some(other) => {
            anyhow::bail!("--overload `{other}`: the known profile is hartstone-extended")
        }
    }
    for p in &args.phases {
        c.phases.push(Phase::parse(p)?);
    }
    if args.trace.is_some() || args.gantt.is_some() {
        let window = match &args.window {
            Some(w) => {
                let (from, to) = w.split_once("..").ok_or_else(|| {
                    anyhow::anyhow!("--window `{w}`: write FROM..TO, e.g. 0ms..100ms")
                })?;
                let (from, to) = (duration_flag("window", from)?, duration_flag("window", to)?);
                anyhow::ensure!(from < to, "--window `{w}`: FROM must be before TO");
                TraceWindow { from, to }
            }
            None => TraceWindow {
                from: Nanos::ZERO,
                to: duration.min(Nanos::from_ms(200)),
            },
        };
        c.trace = Some(window);
    }
    Ok(c)
}

/// Runs `rtlab sim`.
pub fn run(args: &SimArgs) -> anyhow::Result<ExitCode> {
    let loaded = file::load(&args.taskset)?;
    let spec: SchedulerSpec = args.scheduler.parse()?;
    let config = config(args, &loaded.set)?;
    let mut sim = Simulator::new(&loaded.set, &spec, config)?;
    if let Some(path) = &args.trace {
        // Streamed as the run goes: memory does not grow with the window.
        let file =
            std::fs::File::create(path).with_context(|| format!("--trace: cannot write {path}"))?;
        sim.stream_chrome_trace(
            Box::new(std::io::BufWriter::new(file)),
            args.gantt.is_some(),
        );
    }
    sim.run();
    let report = sim.report();
    let trace_written = sim.finish_trace();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", describe(&report, &loaded.origin));
    }
    if let Some(path) = &args.trace {
        trace_written.with_context(|| format!("--trace: cannot write {path}"))?;
    }
    if let (Some(trace), Some(path)) = (sim.trace(), &args.gantt) {
        anyhow::ensure!(
            trace.dropped == 0,
            "--gantt: the window {}..{} holds more than {MAX_KEPT_RECORDS} records (bars, releases, \
             completions, misses), too many for one chart; narrow --window (--trace writes them all)",
            trace.window.from,
            trace.window.to
        );
        std::fs::write(path, trace.to_svg())
            .with_context(|| format!("--gantt: cannot write {path}"))?;
    }
    if let Some(stop) = sim.stopped() {
        anyhow::bail!("{stop}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The human summary: a headline, a table per task, and the totals.
pub fn describe(r: &SimReport, origin: &str) -> String {
    let tick = r.tick_ns.map_or("tickless".to_string(), |t| {
        format!("tick {}", Nanos::from_ns(t))
    });
    let mut out = format!(
        "{} ({origin}) under {} for {}: {tick}, protocol {}, on-miss {}, seed {}\n\n",
        r.taskset,
        r.scheduler,
        Nanos::from_ns(r.duration_ns),
        r.protocol,
        r.on_miss,
        r.seed
    );
    let header = [
        "task",
        "released",
        "completed",
        "misses",
        "aborted",
        "skipped",
        "preempted",
        "R min",
        "R mean",
        "R max",
        "max lateness",
        "first miss",
    ];
    let mut t = table::new(&header, &header[1..]);
    for m in &r.tasks {
        let lateness = m.max_lateness_ns.map_or("-".to_string(), |l| {
            if l < 0 {
                format!("-{}", Nanos::from_ns(l.unsigned_abs()))
            } else {
                Nanos::from_ns(l as u64).to_string()
            }
        });
        t.add_row(vec![
            m.name.clone(),
            m.released.to_string(),
            m.completed.to_string(),
            m.misses.to_string(),
            m.aborted.to_string(),
            m.skipped.to_string(),
            m.preemptions.to_string(),
            table::opt_ns(m.min_response_ns),
            table::opt_ns(m.mean_response_ns),
            table::opt_ns(m.max_response_ns),
            lateness,
            table::opt_ns(m.first_miss_ns),
        ]);
    }
    out.push_str(&table::render(&t));
    out.push_str(&format!(
        "\n\ntotal: {} released, {} completed, {} deadline misses{}, {} preemptions, {} context switches ({:.1}/s), overhead {}, idle {}\n",
        r.released,
        r.completed,
        r.deadline_misses,
        r.first_miss_ns.map_or(String::new(), |f| format!(" (first at {})", Nanos::from_ns(f))),
        r.preemptions,
        r.context_switches,
        r.context_switches_per_s,
        Nanos::from_ns(r.overhead_ns),
        Nanos::from_ns(r.idle_ns),
    ));
    out
}
