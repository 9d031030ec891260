//! `rtlab latency`: wake-up latency and period jitter of timer threads (the
//! cyclictest measurement), idle or under load.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::Nanos;
use rtlab_probe::cyclictest_json::{self, CyclictestRun, SysInfo};
use rtlab_probe::latency::{self, Affinity, ProbeConfig, TimerMode};
use rtlab_report::latency_text::{self, Measured};
use rtlab_rt::load::LoadSpec;
use serde_json::Value;

use crate::flags::{
    parse_cpus, parse_load, parse_run_length, parse_thread_count, parse_us_or_duration, PolicyArgs,
};
use crate::setup::{set_up, start_load};
use crate::usage::{naming_the_flag, usage};

const EXAMPLES: &str = "Examples:\n  \
    rtlab latency --threads 2 --priority 99 --interval 1ms --mlock --affinity --duration 30s\n  \
    rtlab latency -t 2 -p 99 -i 1ms -m -a -D 10s --load hackbench --histogram hist.txt\n  \
    rtlab latency --policy other --loops 5000 --series lag.csv --json\n  \
    rtlab latency -t 2 -p 99 -i 1ms -m -a -D 10s --plot histogram.svg\n  \
    rtlab latency --policy deadline --runtime 100us --interval 1ms --duration 5s\n  \
    rtlab latency --relative -p 99 -i 1ms -m -a 0 -D 5s\n  \
    rtlab latency -q -m -p99 -i1000 -t2 -a -D 10 --json=ct.json\n\n\
    cyclictest's short options mean what they mean there (`-i 1000` is microseconds, `-D 10` seconds, `-h US` the histogram); --help is help.\n\
    Times are microseconds in the cyclictest lines and tables, nanoseconds (`_ns`) in JSON.\n\
    Ctrl-C stops the run early and still prints what was measured.";

/// `rtlab latency`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES, disable_help_flag = true)]
pub struct LatencyArgs {
    /// Measuring threads, 1..=1024; `-t` alone: one per CPU (cyclictest -t).
    #[arg(short = 't', long, default_value = "1", num_args = 0..=1, default_missing_value = "cpus", value_parser = parse_thread_count)]
    pub threads: u64,
    /// Interval of thread 0; a bare number is microseconds (cyclictest -i 1000).
    #[arg(short = 'i', long, default_value = "1ms", value_parser = parse_us_or_duration)]
    pub interval: Nanos,
    /// Added to the interval of each further thread; a bare number is microseconds (cyclictest -d).
    #[arg(short = 'd', long, default_value = "500us", value_parser = parse_us_or_duration)]
    pub distance: Nanos,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Pin the threads: without a value, thread i to the i-th allowed CPU;
    /// with a list (`1` or `0,1` or `0-3`), round-robin over it.
    #[arg(short = 'a', long, num_args = 0..=1, default_missing_value = "all", value_name = "CPUS")]
    pub affinity: Option<String>,
    /// Run length (default 10s unless --loops is given); a bare number is seconds, `m`, `h`, `d` after it minutes, hours, days (cyclictest -D).
    #[arg(short = 'D', long, value_parser = parse_run_length)]
    pub duration: Option<Nanos>,
    /// Loops per thread; 0 sets no loop limit (cyclictest -l 0).
    #[arg(short = 'l', long)]
    pub loops: Option<u64>,
    /// Relative timers (cyclictest -r): sleep the interval from a clock read before each sleep, so lateness accumulates; the latency is each sleep's overshoot, as cyclictest -r reports it.
    #[arg(short = 'r', long)]
    pub relative: bool,
    /// Lock all memory (mlockall) so no page fault lands in the measurement.
    #[arg(short = 'm', long)]
    pub mlock: bool,
    /// Background load during the run: none, cpu:N, hackbench[:GROUPS[:pipe|socket]].
    #[arg(long, default_value = "none", value_parser = parse_load)]
    pub load: LoadSpec,
    /// Do not hold /dev/cpu_dma_latency at 0 during the run.
    #[arg(long)]
    pub no_dma_latency: bool,
    /// Write the latency histogram in cyclictest's format (one line per microsecond).
    #[arg(long, value_name = "FILE")]
    pub histogram: Option<PathBuf>,
    /// Microsecond buckets of --histogram (cyclictest -h N); larger latencies count as overflows.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub histogram_buckets: u64,
    /// Write every sample as CSV: thread,loop,time_ns,latency_ns,jitter_ns.
    #[arg(long, value_name = "FILE.csv")]
    pub series: Option<PathBuf>,
    /// Worst wake-ups listed per thread (at most 1000).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(0..=latency::MAX_OUTLIERS as u64))]
    pub outliers: u64,
    /// Print the histogram in cyclictest's format on standard output after the run, US 1-microsecond buckets (cyclictest -h US).
    #[arg(short = 'h', value_name = "US", conflicts_with = "histogram_buckets", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub histogram_stdout: Option<u64>,
    /// Print only cyclictest's summary lines (cyclictest -q).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Print JSON (schema in README, "rtlab latency --json"); `--json=FILE` writes cyclictest's JSON layout to FILE instead (`--json=-`: on standard output).
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "FILE")]
    pub json: Option<Option<PathBuf>>,
    /// Print help (`-h` is cyclictest's histogram here).
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// Draw the latency histogram per thread (log-scale counts, cyclictest's plot) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
}

/// Runs `rtlab latency`.
pub fn run(args: &LatencyArgs) -> anyhow::Result<ExitCode> {
    measure(args).map(|(code, _)| code)
}

impl LatencyArgs {
    /// `--json` without a file: rtlab's document on standard output.
    fn json_stdout(&self) -> bool {
        matches!(self.json, Some(None))
    }

    /// `--json=FILE`: cyclictest's layout to FILE (`-`: standard output).
    fn cyclictest_json(&self) -> Option<&std::path::Path> {
        self.json.as_ref().and_then(|f| f.as_deref())
    }

    /// Standard output carries JSON only.
    fn stdout_is_json(&self) -> bool {
        self.json_stdout() || self.cyclictest_json() == Some(std::path::Path::new("-"))
    }
}

/// A `-d` this long is a run length typed with `run`'s and `sim`'s
/// meaning of `-d`, not a distance between the threads' intervals.
const DISTANCE_LOOKS_LIKE_A_DURATION: Nanos = Nanos::from_ms(100);

/// The warning for `-d 5s`: in `latency`, as in cyclictest, `-d` is the
/// thread distance and `-D` the run length.
fn distance_warning(distance: Nanos) -> Option<String> {
    (distance >= DISTANCE_LOOKS_LIKE_A_DURATION).then(|| {
        format!(
            "warning: -d/--distance {distance} is the distance between the threads' intervals (cyclictest's -d), \
             not the run length: for a run of {distance}, use -D {distance}"
        )
    })
}

/// The probe's configuration from the flags (every error names its flag).
fn probe_config(args: &LatencyArgs) -> anyhow::Result<ProbeConfig> {
    let threads = args.threads as usize;
    let affinity = match &args.affinity {
        None => Affinity::Unpinned,
        Some(text) => Affinity::RoundRobin(parse_cpus(text)?),
    };
    // cyclictest's `-l 0` means no loop limit.
    let loops = args.loops.filter(|&l| l > 0);
    let duration = match (args.duration, loops) {
        (None, None) => Some(Nanos::from_secs(10)),
        (d, _) => d,
    };
    if args.histogram_stdout.is_some() && args.stdout_is_json() {
        return Err(usage(
            "-h prints the histogram on standard output, where --json writes: use --histogram FILE, or --json=FILE",
        ));
    }
    args.policy.check()?;
    let cfg = ProbeConfig {
        threads,
        interval: args.interval,
        distance: args.distance,
        policy: args.policy.policy(args.interval),
        affinity,
        loops,
        duration,
        histogram_buckets: args.histogram_stdout.unwrap_or(args.histogram_buckets) as usize,
        outliers: args.outliers as usize,
        timer: if args.relative {
            TimerMode::Relative
        } else {
            TimerMode::Absolute
        },
    };
    // Every check of the configuration is about its flags.
    cfg.validate().map_err(|e| usage(naming_the_flag(&e)))?;
    Ok(cfg)
}

/// Runs `rtlab latency` and returns its exit status and its `--json`
/// document (printed only with `--json`).
pub fn measure(args: &LatencyArgs) -> anyhow::Result<(ExitCode, Value)> {
    measure_with_tap(args, None)
}

/// [`measure`], with every sample of the series also handed to `tap` (the
/// demo keeps them for its report).
pub fn measure_with_tap(
    args: &LatencyArgs,
    tap: Option<latency::SeriesTap>,
) -> anyhow::Result<(ExitCode, Value)> {
    let cfg = probe_config(args)?;
    // Refused before any real-time work.
    args.kernel.check()?;
    if let Some(warning) = distance_warning(args.distance) {
        crate::setup::say(&warning);
    }
    let threads = cfg.threads;
    let mut saver = args.save.begin(rtlab_store::RunKind::Latency, None)?;
    let stop = interrupt::install_interrupt_flag();
    let pinned = match &cfg.affinity {
        Affinity::RoundRobin(cpus) => Some(cpus.as_slice()),
        Affinity::Unpinned => None,
    };
    let _measuring = args.cpu_lock.hold(pinned)?;
    let guards = set_up(args.mlock, !args.no_dma_latency)?;
    let load = start_load(args.load)?;
    if !args.stdout_is_json() && !args.quiet && std::io::stderr().is_terminal() {
        eprintln!(
            "# measuring {} thread(s) for {}; Ctrl-C stops early",
            threads,
            match (cfg.duration, cfg.loops) {
                (Some(d), _) => d.to_string(),
                (None, Some(l)) => format!("{l} loops"),
                _ => String::new(),
            }
        );
    }
    let series = match &args.series {
        Some(path) => Some(Box::new(
            std::fs::File::create(path)
                .with_context(|| format!("--series: cannot create {}", path.display()))?,
        ) as Box<dyn std::io::Write + Send>),
        None => None,
    };
    let tap = match (saver.as_ref().map(crate::save::Saver::sample_tap), tap) {
        (Some(mut save), Some(mut extra)) => Some(Box::new(move |thread, point| {
            save(thread, point);
            extra(thread, point);
        }) as latency::SeriesTap),
        (save, extra) => save.or(extra),
    };
    // Elapsed of total on a terminal: the duration, or the loops of the
    // slowest thread (interval + (threads - 1) * distance each).
    let total = cfg.duration.or_else(|| {
        let slowest = cfg.interval.as_ns().saturating_add(
            cfg.distance
                .as_ns()
                .saturating_mul(cfg.threads.saturating_sub(1) as u64),
        );
        cfg.loops.map(|l| Nanos::from_ns(l.saturating_mul(slowest)))
    });
    let progress = total
        .filter(|_| !args.stdout_is_json() && !args.quiet)
        .and_then(|total| Some(crate::progress::RunProgress::timed(total)?.follow(total)));
    // The measured CPUs' schedule, the reader on the others: no per-sample
    // attribution, the events and what was lost (and the file when kept).
    let request = args.kernel.request();
    let recording = match &request {
        Some(r) => Some(r.start(pinned)?),
        None => None,
    };
    let started = std::time::SystemTime::now();
    let result = latency::run_probe_with_tap(&cfg, stop, series, tap);
    let ended = std::time::SystemTime::now();
    let kernel_trace = match (request, recording) {
        (Some(request), Some(recording)) => Some(match request.finish_without_jobs(recording) {
            Ok(traced) => {
                crate::kernel_trace::said(&traced, &args.kernel);
                serde_json::to_value(&traced.summary)?
            }
            Err(e) => serde_json::json!({ "error": e.to_string() }),
        }),
        _ => None,
    };
    if let Some(progress) = progress {
        progress.finish();
    }
    let load_stats = load.stop();
    let (report, series_written) = result?;

    if let Some(path) = &args.histogram {
        std::fs::write(path, latency::cyclictest_histogram(&report.threads))
            .with_context(|| format!("writing {}", path.display()))?;
        crate::wrote::wrote(path, "latency histogram in cyclictest's layout");
    }
    let dropped: u64 = report.threads.iter().map(|t| t.series_dropped).sum();
    if dropped > 0 {
        eprintln!(
            "warning: {dropped} samples were dropped from --series because the writer fell behind (the statistics still count them)"
        );
    }
    let throttling = RtThrottling::read().ok();
    let load_doc = load_stats.document(args.load);
    let measured = Measured {
        cfg: &cfg,
        report: &report,
        load: &load_doc,
        mlock: args.mlock,
        throttling,
        notes: &guards.notes,
        outliers_asked: args.outliers > 0,
    };
    let doc = latency_text::document(measured);
    // The trace's summary joins the document (only with the flag: the
    // untraced document keeps its field order).
    let traced_doc = match &kernel_trace {
        Some(k) => {
            let mut d = serde_json::to_value(&doc)?;
            d["kernel_trace"] = k.clone();
            Some(d)
        }
        None => None,
    };
    if args.json_stdout() {
        match &traced_doc {
            Some(d) => outln!("{}", serde_json::to_string_pretty(d)?),
            None => outln!("{}", serde_json::to_string_pretty(&doc)?),
        }
    } else if args.quiet {
        for t in &report.threads {
            outln!("{}", latency::cyclictest_line(t));
        }
    } else if !args.stdout_is_json() {
        out!("{}", latency_text::describe_measured(measured));
        if let Some(k) = &kernel_trace {
            outln!("{}", rtlab_report::kernel_trace::events_line(k));
        }
    }
    if args.histogram_stdout.is_some() {
        out!("{}", latency::cyclictest_histogram(&report.threads));
    }
    let doc = match traced_doc {
        Some(d) => d,
        None => serde_json::to_value(&doc)?,
    };
    if let Some(mut saver) = saver.take() {
        let measured: u64 = report.threads.iter().map(|t| t.loops).sum();
        saver.left_out(measured.saturating_sub(crate::save::MAX_SAVED_SAMPLES));
        saver.finish(&doc, report.interrupted)?;
    }
    if let Some(path) = &args.plot {
        let run = rtlab_report::view::RunView::unsaved("latency", doc.clone());
        crate::plot_file::write(path, &run)?;
    }
    if let Some(path) = &args.series {
        series_written.with_context(|| format!("--series: cannot write {}", path.display()))?;
    }
    let lost = !report.lost_threads.is_empty();
    if let Some(path) = args.cyclictest_json() {
        let run = CyclictestRun {
            cmdline: std::env::args().collect::<Vec<_>>().join(" "),
            started,
            ended,
            return_code: i32::from(lost),
        };
        let text = serde_json::to_string_pretty(&cyclictest_json::document(
            &report.threads,
            &run,
            SysInfo::read(),
        ))? + "\n";
        if path == std::path::Path::new("-") {
            out!("{text}");
        } else {
            std::fs::write(path, text)
                .with_context(|| format!("--json={}: cannot write", path.display()))?;
        }
    }
    let code = if lost {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    };
    Ok((code, doc))
}

#[cfg(test)]
mod tests;
