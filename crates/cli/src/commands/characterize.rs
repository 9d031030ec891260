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
use rtlab_model::overheads::Overheads;
use rtlab_probe::characterize::document::{self, CharacterizeDocument, ConfigDocument};
use rtlab_probe::characterize::fit::Statistic;
use rtlab_probe::characterize::{self, CharacterizeConfig};

use crate::setup::{say, set_up};
use crate::usage::{naming_the_flag, usage};

const EXAMPLES: &str = "Examples:\n  \
    rtlab characterize --dispatcher --out my.toml\n  \
    rtlab characterize --threads 2,4,8 --samples 500 --stat max --dispatcher --json\n  \
    rtlab characterize --cpu 0 --samples 1000 --csv costs.csv --out my-vm.toml --name my-vm\n  \
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
    /// Print JSON (schema in the guide, "rtlab characterize").
    #[arg(long)]
    pub json: bool,
    /// Also measure rtlab's user-space dispatcher (`run --dispatcher`): its decision cost and
    /// dispatch latency per n, fitted like the other costs into the file's [dispatcher] table
    /// (read by `sim --dispatcher`). About one second per n.
    #[arg(long)]
    pub dispatcher: bool,
    #[command(flatten)]
    pub kernel: crate::kernel_trace::KernelTraceFlags,
    #[command(flatten)]
    pub save: crate::save::SaveFlags,
    #[command(flatten)]
    pub cpu_lock: crate::setup::CpuLockFlags,
    #[command(flatten)]
    pub isolate: crate::setup::IsolateFlags,
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
    args.isolate.check(&[cfg.cpu])?;
    let _measuring = args.cpu_lock.hold(Some(&[cfg.cpu]))?;
    let guards = set_up(true, true)?;
    let _shield = args.isolate.raise(&[cfg.cpu])?;
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
    let window = rtlab_host::disturbance::Window::open_process(&[cfg.cpu]);
    let measured = characterize::characterize(&cfg, stop, &mut |done, _, what| {
        if let Some(bar) = &bar {
            bar.set_position(done as u64);
            bar.set_message(format!("{what} done"));
        }
    })
    .context("rtlab characterize")?;
    let disturbance = window.close(&[]);
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
    let dispatcher = if args.dispatcher && !measured.interrupted {
        say("measuring rtlab's dispatcher (one second per n)");
        Some(
            characterize::dispatcher::measure(cfg.cpu, &cfg.threads, args.stat, stop)
                .context("rtlab characterize --dispatcher")?,
        )
    } else {
        None
    };

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
    let mut profile = profile.map(|o| Overheads { throttling, ..o });
    notes.extend(throttling_notes);
    if let (Some(p), Some((model, more))) = (
        profile.as_mut(),
        dispatcher.as_ref().and_then(|d| d.model()),
    ) {
        p.dispatcher = Some(model);
        notes.extend(more);
    }
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
        overheads_toml: profile
            .as_ref()
            .map(|o| document::overheads_file(o.to_toml_string(), &disturbance)),
        notes,
        disturbance,
        kernel_trace,
        dispatcher,
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        outln!("{}", rtlab_report::characterize_text::describe(&doc));
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
