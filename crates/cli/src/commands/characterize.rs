//! `rtlab characterize`: this machine's scheduling costs in paper 004's
//! model, measured on one pinned CPU, fitted and written as an overheads
//! file (the measuring is `rtlab_probe::characterize`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rtlab_host::interrupt;
use rtlab_model::overheads::{LinearCost, Overheads};
use rtlab_probe::characterize::document::{self, CharacterizeDocument, ConfigDocument};
use rtlab_probe::characterize::fit::{CostStats, LineFit, Statistic};
use rtlab_probe::characterize::kernel::KernelCharacterization;
use rtlab_probe::characterize::{self, Characterization, CharacterizeConfig, ScenarioPoint};
use rtlab_report::table;

use crate::setup::{say, set_up};
use crate::usage::{naming_the_flag, usage};

const EXAMPLES: &str = "Examples:\n  \
    rtlab characterize --out my.toml\n  \
    rtlab characterize --threads 2,4,8 --samples 500 --stat max --json\n  \
    rtlab characterize --cpu 0 --samples 1000 --csv costs.csv --out my.toml --name my-vm\n  \
    rtlab characterize --threads 2,4 --samples 50 --kernel-trace\n\n\
    Needs root (SCHED_FIFO). The defaults take about half a minute. Then:\n  \
    rtlab analyze builtin:avionics --policy rm --overheads my.toml --breakdown\n\
    Ctrl-C stops early and still prints (and writes) what was measured.";

/// `rtlab characterize`
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct CharacterizeArgs {
    /// Thread counts n to measure each scenario at (comma-separated, each 2..=64).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,12,16,20")]
    pub threads: Vec<usize>,
    /// Samples per scenario and n (10..=100000).
    #[arg(long, default_value_t = characterize::DEFAULT_SAMPLES)]
    pub samples: usize,
    /// The statistic of each n the lines are fitted to: max, p999, p99 or median.
    #[arg(long, default_value = "p999", value_parser = parse_stat)]
    pub stat: Statistic,
    /// The CPU to measure on (default: the CPU `rtlab run` pins to).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// The profile's name in the file.
    #[arg(long, default_value = "characterized")]
    pub name: String,
    /// Write the overheads file (TOML, read by analyze, sweep and sim --overheads).
    #[arg(long, value_name = "FILE.toml")]
    pub out: Option<PathBuf>,
    /// Write the per-n statistics as CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub csv: Option<PathBuf>,
    /// Print JSON (schema in README, "rtlab characterize").
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
}

fn parse_stat(s: &str) -> Result<Statistic, String> {
    s.parse()
}

/// Runs `rtlab characterize`.
pub fn run(args: &CharacterizeArgs) -> anyhow::Result<ExitCode> {
    let mut threads = args.threads.clone();
    threads.sort_unstable();
    threads.dedup();
    let cfg = CharacterizeConfig {
        cpu: args.cpu.unwrap_or_else(rtlab_rt::executor::default_cpu),
        threads,
        samples: args.samples,
    };
    // Every check of the configuration is about its flags.
    cfg.validate().map_err(|e| usage(naming_the_flag(&e)))?;
    args.kernel.check()?;
    characterize::check_privilege(&cfg).context("rtlab characterize")?;
    let saver = args.save.begin(rtlab_store::RunKind::Characterize, None)?;
    let stop = interrupt::install_interrupt_flag();
    let _measuring = args.cpu_lock.hold(Some(&[cfg.cpu]))?;
    let guards = set_up(true, true)?;
    for note in &guards.notes {
        say(note);
    }
    let bar = (!args.json && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(cfg.steps() as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message("timer (finding the tick)");
        bar
    });
    let extra = characterize::kernel::extra_events();
    let recording = args.kernel.start_with(Some(&[cfg.cpu]), &extra)?;
    let measured = characterize::characterize(&cfg, stop, &mut |done, _, what| {
        if let Some(bar) = &bar {
            bar.set_position(done as u64);
            bar.set_message(format!("{what} done"));
        }
    })
    .context("rtlab characterize")?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let kernel_trace = match recording {
        Some(r) => {
            let (recorded, _temporary) = r.finish();
            if let Some(k) = args.kernel.keep() {
                crate::wrote::wrote(&k, "raw kernel trace: rtlab-ktrace pages");
            }
            Some(characterize::kernel::from_recording(
                &measured, &recorded, args.stat,
            )?)
        }
        None => None,
    };
    drop(guards);

    let host = rtlab_host::platform::host_metadata();
    let fits = measured.fit_inputs().fit(args.stat);
    let source = document::source_line(
        &document::hostname(),
        &host,
        &document::now_utc(),
        &measured,
        args.stat,
        &cfg.threads,
    );
    let tick = measured.fit_inputs().tick;
    let (profile, mut notes) = match fits.overheads(&args.name, &source, tick) {
        Ok((o, notes)) => (Some(o), notes),
        Err(why) => (None, vec![why]),
    };
    // The limits Linux puts on real-time threads on this CPU (`[throttling]`).
    let (throttling, throttling_notes) = rtlab_host::platform::linux_throttling(cfg.cpu);
    let profile = profile.map(|o| Overheads { throttling, ..o });
    notes.extend(throttling_notes);
    if measured.interrupted {
        notes.push("interrupted: the figures hold what was measured before the stop".into());
    }
    if let Some(path) = &args.csv {
        rtlab_model::file::write_output(path, document::csv(&measured))
            .with_context(|| format!("--csv: cannot write {}", path.display()))?;
        crate::wrote::wrote(path, "one row per measured point, CSV");
    }
    let doc = CharacterizeDocument {
        host,
        config: ConfigDocument::new(&cfg, args.stat, &args.name),
        measured,
        fits,
        overheads_toml: profile.as_ref().map(Overheads::to_toml_string),
        notes,
        kernel_trace,
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        outln!("{}", describe(&doc));
    }
    let mut code = ExitCode::SUCCESS;
    if let Some(path) = &args.out {
        match &doc.overheads_toml {
            Some(text) => {
                rtlab_model::file::write_output(path, text)
                    .with_context(|| format!("--out: cannot write {}", path.display()))?;
                if !args.json {
                    crate::wrote::wrote(path, "overheads profile, TOML");
                }
            }
            None => {
                say(&format!(
                    "error: --out {} not written: {}",
                    path.display(),
                    doc.notes.first().map_or("", String::as_str)
                ));
                code = ExitCode::FAILURE;
            }
        }
    }
    if let Some(saver) = saver {
        saver.finish(&serde_json::to_value(&doc)?, doc.measured.interrupted)?;
    }
    Ok(code)
}

fn us(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1000.0)
}

/// A fitted line as `0.79us*n + 30.1us`, with negative parts shown.
fn line(fit: Option<&LineFit>) -> String {
    fit.map_or("-".into(), |f| {
        let ps = |v: i128| {
            let text = rtlab_model::overheads::format_ps(v.unsigned_abs() as u64);
            if v < 0 {
                format!("-{text}")
            } else {
                text
            }
        };
        format!("{}*n + {}", ps(f.per_thread_ps), ps(f.base_ps))
    })
}

fn r2(fit: Option<&LineFit>) -> String {
    fit.and_then(|f| f.r_squared)
        .map_or("-".into(), |r| format!("{r:.3}"))
}

/// The human summary: per scenario and n the statistics beside paper 004's
/// RT Mach cost at that n, the fitted lines beside the paper's, the tick
/// and how it was found, the ping-pong, the notes.
fn describe(doc: &CharacterizeDocument) -> String {
    let m = &doc.measured;
    let rtmach = Overheads::rtmach();
    let stat = doc.fits.stat;
    let header = [
        "scenario",
        "n",
        "samples",
        "min us",
        "median us",
        "p99 us",
        "p99.9 us",
        "max us",
        "fit us",
        "RT Mach us",
    ];
    let mut t = table::new(&header, &header[1..]);
    let fitted = |fit: Option<&LineFit>, n: usize| {
        fit.map_or("-".into(), |f| {
            us(((f.per_thread_ps * n as i128 + f.base_ps).max(0) as u64).div_ceil(1000))
        })
    };
    let mut rows =
        |name: &str, points: &[ScenarioPoint], fit: Option<&LineFit>, paper: &LinearCost| {
            for p in points {
                let s = &p.stats;
                t.add_row(vec![
                    name.to_string(),
                    p.n.to_string(),
                    s.count.to_string(),
                    us(s.min_ns),
                    us(s.median_ns),
                    us(s.p99_ns),
                    us(s.p999_ns),
                    us(s.max_ns),
                    fitted(fit, p.n),
                    us(paper.at(p.n).as_ns()),
                ]);
            }
        };
    rows(
        "preempt",
        &m.preempt,
        doc.fits.preempt.as_ref(),
        &rtmach.preempt,
    );
    rows("exit", &m.exit, doc.fits.exit.as_ref(), &rtmach.exit);
    rows(
        "nonpreempt",
        &m.nonpreempt,
        doc.fits.nonpreempt.as_ref(),
        &rtmach.nonpreempt,
    );
    if let Some(s) = &m.timer.stats {
        t.add_row(vec![
            "timer".into(),
            "1".into(),
            s.count.to_string(),
            us(s.min_ns),
            us(s.median_ns),
            us(s.p99_ns),
            us(s.p999_ns),
            us(s.max_ns),
            doc.fits
                .timer_ps
                .map_or("-".into(), |ps| us(ps.div_ceil(1000))),
            us(rtmach.timer.at(1).as_ns()),
        ]);
    }
    let mut out = vec![
        format!(
            "# rtlab characterize: CPU {}, SCHED_FIFO, {} samples per scenario and n; fitted to the {stat} of each n",
            m.cpu, m.samples
        ),
        table::render(&t),
        String::new(),
    ];
    let fit_header = ["cost", "this machine", "R^2", "RT Mach (paper 004)"];
    let mut f = table::new(&fit_header, &[]);
    let timer = doc
        .fits
        .timer_ps
        .map_or("-".into(), rtlab_model::overheads::format_ps);
    f.add_row(vec![
        "C_timer".into(),
        timer,
        "-".into(),
        rtmach.timer.to_string(),
    ]);
    for (name, fit, paper) in [
        ("C_preempt", doc.fits.preempt.as_ref(), &rtmach.preempt),
        ("C_exit", doc.fits.exit.as_ref(), &rtmach.exit),
        (
            "C_nonpreempt",
            doc.fits.nonpreempt.as_ref(),
            &rtmach.nonpreempt,
        ),
    ] {
        f.add_row(vec![name.into(), line(fit), r2(fit), paper.to_string()]);
    }
    out.push(table::render(&f));
    out.push(String::new());
    out.push(tick_line(m));
    if let Some(p) = &m.pingpong {
        out.push(format!(
            "context switch (futex ping-pong, 2 threads): median {} us per switch, p99.9 {} us; less one FUTEX_WAIT ({} us): {} us",
            us(p.stats.median_ns),
            us(p.stats.p999_ns),
            p.futex_call_median_ns.map_or("-".into(), us),
            p.switch_median_ns.map_or("-".into(), us),
        ));
    }
    out.push(format!(
        "gap threshold {} ns (10 iterations of the stamping loop, {:.0} ns each)",
        m.gap_threshold_ns, m.loop_iteration_ns
    ));
    if let Some(k) = &doc.kernel_trace {
        out.push(String::new());
        out.push(describe_kernel(k, stat));
    }
    for note in &doc.notes {
        out.push(format!("note: {note}"));
    }
    out.join("\n")
}

/// `--kernel-trace`: each cost from user-space stamps beside the same cost
/// from kernel timestamps, the kernel's fitted lines, the host's stalls.
fn describe_kernel(k: &KernelCharacterization, stat: Statistic) -> String {
    let header = [
        "cost",
        "n",
        "user samples",
        "user p50 us",
        "user p99 us",
        "user p99.9 us",
        "kernel samples",
        "kernel p50 us",
        "kernel p99 us",
        "kernel p99.9 us",
    ];
    let mut t = table::new(&header, &header[1..]);
    for c in &k.costs {
        let kernel = |f: fn(&CostStats) -> u64| c.kernel.as_ref().map_or("-".into(), |s| us(f(s)));
        t.add_row(vec![
            format!("{} ({})", c.cost, c.scenario),
            c.n.to_string(),
            c.user.count.to_string(),
            us(c.user.median_ns),
            us(c.user.p99_ns),
            us(c.user.p999_ns),
            c.kernel.as_ref().map_or(0, |s| s.count).to_string(),
            kernel(|s| s.median_ns),
            kernel(|s| s.p99_ns),
            kernel(|s| s.p999_ns),
        ]);
    }
    let mut out = vec![
        format!(
            "# from the kernel trace ({} events, {} lost): release = timer expiry to switch-in, exit = the blocking call's entry to the switch out, switch = that entry to the next thread's return to user space",
            k.events, k.lost_events
        ),
        table::render(&t),
        format!(
            "kernel fit ({stat}): C_preempt (release) {} (R^2 {}), C_exit {} (R^2 {})",
            line(k.release_fit.as_ref()),
            r2(k.release_fit.as_ref()),
            line(k.exit_fit.as_ref()),
            r2(k.exit_fit.as_ref()),
        ),
        format!(
            "host stalls (no event for more than {} us while a measuring thread was in a system call or being switched in, or inside a sample): {}, total {} us, longest {} us; {} kernel samples left out for a stall inside; steal over the run (/proc/stat): {} us",
            us(k.stall_gap_ns),
            k.stalls.count,
            us(k.stalls.total_ns),
            us(k.stalls.longest_ns),
            k.excluded_samples,
            us(k.steal_ns),
        ),
    ];
    for n in &k.not_measured {
        out.push(format!("not from the trace: {n}"));
    }
    out.join("\n")
}

/// How the tick was found, in one line.
fn tick_line(m: &Characterization) -> String {
    let t = &m.timer;
    let Some(tick) = &t.tick else {
        return "tick: not found (no coarse-clock change was seen)".into();
    };
    let hz = tick
        .hz
        .map_or("no usual CONFIG_HZ within 2 %".into(), |hz| {
            format!("CONFIG_HZ {hz}")
        });
    format!(
        "tick: {} ({hz}): mode of {} intervals between CLOCK_MONOTONIC_COARSE changes, {} ({:.0} % in the modal bins); \
         clock_getres(CLOCK_MONOTONIC_COARSE) = {}; {} local timer interrupts/s (LOC) while spinning; \
         {} stalls of a tick or more left out (longest {} us); {} other gaps (other interrupts, the host), largest {} us",
        rtlab_model::Nanos::from_ns(tick.tick_ns),
        tick.intervals,
        rtlab_model::Nanos::from_ns(tick.measured_ns),
        100.0 * tick.modal_share,
        table::opt_ns(t.coarse_resolution_ns),
        t.loc_per_second.map_or("-".into(), |r| format!("{r:.0}")),
        t.stalls,
        us(t.stall_max_ns),
        t.other_gaps,
        us(t.other_gap_max_ns),
    )
}
