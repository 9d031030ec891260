//! The flags of `rtlab latency` (cyclictest's options and their long
//! forms) and the probe's configuration from them: every refusal names
//! its flag.

use std::path::PathBuf;

use clap::Args;
use rtlab_model::Nanos;
use rtlab_probe::latency::{self, Affinity, ProbeConfig, TimerMode};
use rtlab_rt::load::LoadSpec;

use crate::flags::{
    parse_cpus, parse_load, parse_run_length, parse_thread_count, parse_us_or_duration, PolicyArgs,
};
use crate::usage::{naming_the_flag, usage};

pub const EXAMPLES: &str = "Examples:\n  \
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
    /// Added to the interval of each further thread (default 500us; 0 with -h, as cyclictest); a bare number is microseconds (cyclictest -d).
    #[arg(short = 'd', long, value_parser = parse_us_or_duration)]
    pub distance: Option<Nanos>,
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
    /// Print JSON (schema in the guide, "rtlab latency --json"); `--json=FILE` writes cyclictest's JSON layout to FILE instead (`--json=-`: on standard output).
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
    pub isolate: crate::setup::IsolateFlags,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
}

impl LatencyArgs {
    /// `--json` without a file: rtlab's document on standard output.
    pub fn json_stdout(&self) -> bool {
        matches!(self.json, Some(None))
    }

    /// `--json=FILE`: cyclictest's layout to FILE (`-`: standard output).
    pub fn cyclictest_json(&self) -> Option<&std::path::Path> {
        self.json.as_ref().and_then(|f| f.as_deref())
    }

    /// Standard output carries JSON only.
    pub fn stdout_is_json(&self) -> bool {
        self.json_stdout() || self.cyclictest_json() == Some(std::path::Path::new("-"))
    }

    /// The distance between the threads' intervals: `-d`, else 500 us, or
    /// 0 with `-h` (cyclictest.c: `if (!histogram) interval += distance`,
    /// so with a histogram every thread has the same interval).
    pub fn distance(&self) -> Nanos {
        match (self.distance, self.histogram_stdout) {
            (Some(d), _) => d,
            (None, Some(_)) => Nanos::ZERO,
            (None, None) => DEFAULT_DISTANCE,
        }
    }
}

/// cyclictest's default `-d`: 500 us.
const DEFAULT_DISTANCE: Nanos = Nanos::from_us(500);

/// A `-d` this long is a run length typed with `run`'s and `sim`'s
/// meaning of `-d`, not a distance between the threads' intervals.
const DISTANCE_LOOKS_LIKE_A_DURATION: Nanos = Nanos::from_ms(100);

/// A `-d` that is a run length typed with `run`'s meaning of `-d`: as
/// long as [`DISTANCE_LOOKS_LIKE_A_DURATION`], with no run length (`-D`,
/// `-l`) given. Refused: the run would take the default 10 s.
fn duration_typed_as_distance(distance: Nanos, args: &LatencyArgs) -> bool {
    distance >= DISTANCE_LOOKS_LIKE_A_DURATION && args.duration.is_none() && args.loops.is_none()
}

/// The warning for a long `-d` beside a run length (`-d 5s -D 30s`): in
/// `latency`, as in cyclictest, `-d` is the thread distance and `-D` the
/// run length.
pub fn distance_warning(distance: Nanos) -> Option<String> {
    (distance >= DISTANCE_LOOKS_LIKE_A_DURATION).then(|| {
        format!(
            "warning: -d/--distance {distance} is the distance between the threads' intervals (cyclictest's -d), \
             not the run length: for a run of {distance}, use -D {distance}"
        )
    })
}

/// The probe's configuration from the flags (every error names its flag).
pub fn probe_config(args: &LatencyArgs) -> anyhow::Result<ProbeConfig> {
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
    match (args.distance, args.histogram_stdout) {
        // cyclictest ignores -d with -h (every thread gets the same
        // interval), so a distance given with it would mean nothing.
        (Some(d), Some(_)) if !d.is_zero() => {
            return Err(usage(format!(
                "-d/--distance {d} means nothing with -h: as in cyclictest, -h gives every thread the same interval; drop -d"
            )));
        }
        // `-d 2s` typed for a run length: the run would take the default
        // 10 s, with a distance nobody asked for.
        (Some(d), _) if duration_typed_as_distance(d, args) => {
            return Err(usage(format!(
                "-d/--distance {d} is the distance between the threads' intervals (cyclictest's -d), not the run length: for a run of {d}, use -D {d}"
            )));
        }
        _ => {}
    }
    args.policy.check()?;
    let cfg = ProbeConfig {
        threads,
        interval: args.interval,
        distance: args.distance(),
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
