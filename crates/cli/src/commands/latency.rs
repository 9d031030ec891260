//! `rtlab latency`: wake-up latency and period jitter of timer threads (the
//! cyclictest measurement), idle or under load.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::schema::RtThrottlingDocument;
use rtlab_model::Nanos;
use rtlab_probe::cyclictest_json::{self, CyclictestRun, SysInfo};
use rtlab_probe::latency::{self, Affinity, ProbeConfig, ProbeReport, ThreadReport, TimerMode};
use rtlab_report::latency_text::{
    self, JitterDocument, LatencyConfigDocument, LatencyDocument, LatencyThreadDocument,
    OutlierDocument, TextContext,
};
use rtlab_rt::load::{LoadSpec, LoadStats};
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
    // Put at its path once complete (`series_place.commit()`, below).
    let (series, series_place) = match &args.series {
        Some(path) => {
            let (file, place) = rtlab_model::file::OutputFile::create(path)
                .with_context(|| format!("--series: cannot create {}", path.display()))?
                .into_parts();
            (
                Some(Box::new(file) as Box<dyn std::io::Write + Send>),
                Some(place),
            )
        }
        None => (None, None),
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
        rtlab_model::file::write_output(path, latency::cyclictest_histogram(&report.threads))
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
    let measured = Measured {
        args,
        cfg: &cfg,
        report: &report,
        load: &load_stats,
        throttling,
        notes: &guards.notes,
    };
    let doc = report_json(measured);
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
        out!("{}", describe(measured));
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
    if let (Some(path), Some(place)) = (&args.series, series_place) {
        series_written
            .and_then(|()| place.commit())
            .with_context(|| format!("--series: cannot write {}", path.display()))?;
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
            rtlab_model::file::write_output(path, text)
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

/// One finished measurement and what surrounded it: what [`describe`] and
/// [`report_json`] both render.
#[derive(Clone, Copy)]
struct Measured<'a> {
    args: &'a LatencyArgs,
    cfg: &'a ProbeConfig,
    report: &'a ProbeReport,
    load: &'a LoadStats,
    /// RT throttling as read after the run (None when unreadable).
    throttling: Option<RtThrottling>,
    /// Notes of the settings held for the run (e.g. DMA latency refused).
    notes: &'a [String],
}

/// The human output: cyclictest lines, then percentile tables and outliers
/// ([`latency_text::describe`] of the measurement's document).
fn describe(measured: Measured<'_>) -> String {
    let policy = measured.cfg.policy_of(0).to_string();
    let throttling_limit = measured.throttling.map(|t| t.describe_limit());
    let cyclictest_lines: Vec<String> = measured
        .report
        .threads
        .iter()
        .map(latency::cyclictest_line)
        .collect();
    latency_text::describe(
        &report_json(measured),
        TextContext {
            policy: &policy,
            throttling_limit: throttling_limit.as_deref(),
            cyclictest_lines: &cyclictest_lines,
            outliers_asked: measured.args.outliers > 0,
        },
    )
}

/// A measuring thread's report as its document.
fn thread_json(t: &ThreadReport) -> LatencyThreadDocument {
    let ns = |n: Nanos| n.as_ns();
    let l = &t.latency;
    let j = &t.jitter;
    LatencyThreadDocument {
        thread: t.index,
        tid: t.tid,
        cpu: t.cpu,
        drift_ns: t.drift.map(Nanos::as_ns),
        policy: t.policy.short_name(),
        priority: t.policy.priority(),
        interval_ns: ns(t.interval),
        loops: t.loops,
        requested_loops: t.requested_loops,
        min_ns: ns(l.min),
        avg_ns: ns(l.mean()),
        max_ns: ns(l.max),
        act_ns: ns(t.last),
        p50_ns: ns(l.p50),
        p90_ns: ns(l.p90),
        p99_ns: ns(l.p99),
        p999_ns: ns(l.p999),
        missed_periods: t.missed_periods,
        histogram_overflows: t.overflows,
        series_dropped: t.series_dropped,
        jitter: JitterDocument {
            min_ns: t.jitter_min_ns,
            max_ns: t.jitter_max_ns,
            avg_abs_ns: ns(j.mean()),
            p50_abs_ns: ns(j.p50),
            p90_abs_ns: ns(j.p90),
            p99_abs_ns: ns(j.p99),
            p999_abs_ns: ns(j.p999),
            max_abs_ns: ns(j.max),
        },
        outliers: t
            .outliers
            .iter()
            .map(|o| OutlierDocument {
                loop_index: o.loop_index,
                time_ns: ns(o.at),
                latency_ns: ns(o.latency),
            })
            .collect(),
        histogram_us: t
            .buckets_us
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(us, &n)| [us as u64, n])
            .collect(),
    }
}

/// The measurement as its document (`--json`).
fn report_json(m: Measured<'_>) -> LatencyDocument {
    let cfg = m.cfg;
    LatencyDocument {
        config: LatencyConfigDocument {
            threads: cfg.threads,
            timer: (cfg.timer == TimerMode::Relative).then_some(cfg.timer.name()),
            interval_ns: cfg.interval.as_ns(),
            distance_ns: cfg.distance.as_ns(),
            policy: cfg.policy.short_name(),
            priority: cfg.policy.priority(),
            duration_ns: cfg.duration.map(Nanos::as_ns),
            loops: cfg.loops,
            mlock: m.args.mlock,
            affinity: match &cfg.affinity {
                Affinity::Unpinned => None,
                Affinity::RoundRobin(c) => Some(c.clone()),
            },
        },
        rt_throttling: m.throttling.map(RtThrottlingDocument::from),
        load: m.load.document(m.args.load),
        interrupted: m.report.interrupted,
        lost_threads: m.report.lost_threads.clone(),
        wall_ns: m.report.wall.as_ns(),
        peak_rss_bytes: rtlab_host::usage::peak_rss_bytes(),
        notes: m.notes.to_vec(),
        threads: m.report.threads.iter().map(thread_json).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use rtlab_host::Policy;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: LatencyArgs,
    }

    fn parse(line: &str) -> Result<LatencyArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("latency").chain(line.split_whitespace()))
            .map(|c| c.args)
    }

    #[test]
    fn cyclictest_style_flags_parse() {
        let a = parse("-t 2 -p 99 -i 1ms -m -a -D 10s --load hackbench:2:pipe").unwrap();
        assert_eq!(a.threads, 2);
        assert_eq!(a.interval, Nanos::from_ms(1));
        assert_eq!(a.affinity.as_deref(), Some("all"));
        assert_eq!(a.duration, Some(Nanos::from_secs(10)));
        assert!(a.mlock);
        assert_eq!(
            a.load,
            LoadSpec::Hackbench {
                groups: 2,
                pipes: true
            }
        );
        let a = parse("--policy other --nice -5 --affinity 0").unwrap();
        assert_eq!(
            a.policy.policy(Nanos::from_ms(1)),
            Policy::Other { nice: -5 }
        );
        assert_eq!(a.affinity.as_deref(), Some("0"));
        let a = parse("--policy deadline --interval 2ms").unwrap();
        assert_eq!(
            a.policy.policy(a.interval),
            Policy::Deadline {
                runtime: Nanos::from_us(200),
                deadline: Nanos::from_ms(2),
                period: Nanos::from_ms(2)
            }
        );
    }

    /// The probe configuration and the output flags of a command line.
    fn config_of(line: &str) -> String {
        let args = parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let cfg = probe_config(&args).unwrap_or_else(|e| panic!("{line}: {e}"));
        format!(
            "{cfg:?} mlock={} quiet={} histogram_stdout={:?}",
            args.mlock, args.quiet, args.histogram_stdout
        )
    }

    /// cyclictest's options (`-t -p -i -d -D -l -m -a -h -q`) give the same
    /// configuration as rtlab's long forms, in cyclictest's units.
    #[test]
    fn cyclictest_options_mean_their_long_forms() {
        let cpus = std::thread::available_parallelism().unwrap().get();
        for (cyclictest, long) in [
            ("-t 4", "--threads 4"),
            ("-t4", "--threads 4"),
            ("-t", &format!("--threads {cpus}")),
            ("-p 80", "--priority 80"),
            ("-p80", "--priority 80"),
            ("-i 250", "--interval 250us"),
            ("-i250", "--interval 250us"),
            ("-i 2ms", "--interval 2000us"),
            ("-d 0", "--distance 0us"),
            ("-d0", "--distance 0ns"),
            ("-d 100", "--distance 100us"),
            ("-D 30", "--duration 30s"),
            ("-D30", "--duration 30s"),
            ("-D 2m", "--duration 120s"),
            ("-D 1h", "--duration 3600s"),
            ("-D 1d", "--duration 86400s"),
            ("-D 10s", "--duration 10s"),
            ("-D 500ms", "--duration 500ms"),
            ("-l 1000", "--loops 1000"),
            ("-l 0", ""),
            ("-l 0 -D 5", "--duration 5s"),
            ("-m", "--mlock"),
            ("-a", "--affinity"),
            ("-a 1", "--affinity 1"),
            ("-a 0-1", "--affinity 0,1"),
            ("-q", "--quiet"),
            (
                "-t2 -p99 -i1000 -d0 -m -a -D10",
                "--threads 2 --priority 99 --interval 1ms --distance 0ns --mlock --affinity --duration 10s",
            ),
        ] {
            assert_eq!(config_of(cyclictest), config_of(long), "{cyclictest} vs {long}");
        }
        // -h US: US buckets, as --histogram-buckets, and the histogram printed.
        let h = config_of("-h 200");
        assert_eq!(
            h.replace("histogram_stdout=Some(200)", ""),
            config_of("--histogram-buckets 200").replace("histogram_stdout=None", "")
        );
        assert!(
            parse("-h 200 --histogram-buckets 100").is_err(),
            "two bucket counts"
        );
        // --json is rtlab's document; --json=FILE cyclictest's layout in FILE.
        let json = |line: &str| parse(line).unwrap().json;
        assert_eq!(json("--json"), Some(None));
        assert_eq!(
            json("--json=out.json"),
            Some(Some(PathBuf::from("out.json")))
        );
        assert_eq!(json(""), None);
        let both = parse("-h 100 --json").unwrap();
        assert!(probe_config(&both)
            .unwrap_err()
            .to_string()
            .contains("-h prints the histogram"));
        assert!(probe_config(&parse("-h 100 --json=-").unwrap()).is_err());
        assert!(probe_config(&parse("-h 100 --json=f.json").unwrap()).is_ok());
    }

    #[test]
    fn bad_flags_give_one_line_errors() {
        for (line, needle) in [
            ("--priority 100", "100"),
            ("--interval 5x", "unknown unit"),
            ("--duration 5y", "unknown unit"),
            ("-t 0", "not in 1..=1024"),
            ("-h 0", "0"),
            ("--json out.json", "unexpected argument"),
            ("--policy batch", "batch"),
            ("--load spin", "cpu:N"),
            ("--threads 0", "0"),
        ] {
            let e = parse(line).unwrap_err();
            let first = e.to_string();
            let first = first.lines().next().unwrap();
            assert!(first.starts_with("error: "), "{line}: {first}");
            assert!(first.contains(needle), "{line}: {first}");
        }
        assert!(distance_warning(Nanos::from_us(500)).is_none());
        let w = distance_warning(Nanos::from_secs(5)).unwrap();
        assert!(w.contains("-D 5s") && w.contains("cyclictest's -d"), "{w}");
        assert!(parse_cpus("1-0").is_err());
        assert!(parse_cpus("x")
            .unwrap_err()
            .to_string()
            .contains("CPU numbers"));
        assert!(parse_cpus("4095")
            .unwrap_err()
            .to_string()
            .contains("not available"));
    }

    #[test]
    fn other_policy_run_prints_cyclictest_lines_and_json() {
        let args =
            parse("--policy other --loops 50 --interval 500us -t 2 --no-dma-latency").unwrap();
        let cfg = ProbeConfig {
            threads: 2,
            interval: args.interval,
            distance: args.distance,
            policy: args.policy.policy(args.interval),
            loops: args.loops,
            duration: None,
            ..ProbeConfig::default()
        };
        static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let report = latency::run_probe(&cfg, &STOP).unwrap();
        let measured = Measured {
            args: &args,
            cfg: &cfg,
            report: &report,
            load: &LoadStats::default(),
            throttling: None,
            notes: &[],
        };
        let text = describe(measured);
        assert!(text.contains("T: 0 ("), "{text}");
        assert!(text.contains("I:500 C:     50 Min:"), "{text}");
        let doc = report_json(measured);
        let doc = serde_json::to_value(doc).unwrap();
        let t0 = &doc["threads"][0];
        for key in [
            "tid",
            "policy",
            "priority",
            "interval_ns",
            "loops",
            "min_ns",
            "avg_ns",
            "max_ns",
            "p50_ns",
            "p99_ns",
            "p999_ns",
        ] {
            assert!(!t0[key].is_null(), "missing {key}");
        }
        assert_eq!(t0["loops"], 50);
        assert_eq!(t0["policy"], "other");
        // histogram_us: non-empty [us, count] buckets in order, counting
        // every loop that did not overflow.
        let buckets = t0["histogram_us"].as_array().unwrap();
        let counted: u64 = buckets.iter().map(|b| b[1].as_u64().unwrap()).sum();
        assert_eq!(counted + t0["histogram_overflows"].as_u64().unwrap(), 50);
        assert!(buckets.iter().all(|b| b[1].as_u64().unwrap() > 0));
        assert!(buckets
            .windows(2)
            .all(|w| w[0][0].as_u64() < w[1][0].as_u64()));
    }
}
