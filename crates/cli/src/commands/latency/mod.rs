//! `rtlab latency`: wake-up latency and period jitter of timer threads (the
//! cyclictest measurement), idle or under load.

mod flags;

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use rtlab_host::{interrupt, RtThrottling};
use rtlab_model::kernel_trace::KernelTraceSummary;
use rtlab_model::Nanos;
use rtlab_probe::cyclictest_json::{self, CyclictestRun, SysInfo};
use rtlab_probe::latency::{self, Affinity};
use rtlab_report::latency_text::{self, Measured};
use serde_json::Value;

pub use flags::LatencyArgs;
use flags::{distance_warning, probe_config};

use crate::setup::{set_up, start_load};

/// Runs `rtlab latency`.
pub fn run(args: &LatencyArgs) -> anyhow::Result<ExitCode> {
    measure(args).map(|(code, _)| code)
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
    if let Some(warning) = distance_warning(args.distance()) {
        crate::setup::say(&warning);
    }
    let threads = cfg.threads;
    let mut saver = args.save.begin(rtlab_store::RunKind::Latency, None)?;
    let stop = interrupt::install_interrupt_flag();
    let pinned = match &cfg.affinity {
        Affinity::RoundRobin(cpus) => Some(cpus.as_slice()),
        Affinity::Unpinned => None,
    };
    let measured = crate::setup::measured_cpus(pinned);
    args.isolate.check(&measured)?;
    let _measuring = args.cpu_lock.hold(pinned)?;
    let guards = set_up(args.mlock, !args.no_dma_latency)?;
    let _shield = args.isolate.raise(&measured)?;
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
    let window = rtlab_host::disturbance::Window::open_process(&measured);
    let result = latency::run_probe_with_tap(&cfg, stop, series, tap);
    let disturbance = window.close(&[]);
    let ended = std::time::SystemTime::now();
    let kernel_trace = match (request, recording) {
        (Some(request), Some(recording)) => Some(match request.finish_without_jobs(recording) {
            Ok(traced) => {
                crate::kernel_trace::said(&traced, &args.kernel);
                KernelTraceSummary::Read(traced.summary)
            }
            Err(e) => KernelTraceSummary::Unread {
                error: e.to_string(),
            },
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
    let mut doc = latency_text::document(measured);
    doc.disturbance = Some(disturbance);
    // The trace's summary joins the document (only with the flag: the
    // untraced document keeps its field order).
    let traced_doc = match &kernel_trace {
        Some(k) => {
            let mut d = serde_json::to_value(&doc)?;
            d["kernel_trace"] = serde_json::to_value(k)?;
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
        if let Some(d) = &doc.disturbance {
            out!(
                "{}",
                rtlab_report::table::fit_text(&format!(
                    "# {}\n",
                    rtlab_report::disturbance_text::verdict_line(d)
                ))
            );
        }
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

#[cfg(test)]
mod tests;
