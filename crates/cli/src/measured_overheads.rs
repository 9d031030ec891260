//! The overheads profile `rtlab breakdown` measures first when it is given
//! no `--overheads`: `rtlab characterize` with its defaults. Here, outside
//! `commands/`, so that breakdown does not import another command.

use anyhow::Context;
use rtlab_host::interrupt;
use rtlab_model::overheads::Overheads;
use rtlab_probe::characterize::fit::Statistic;
use rtlab_probe::characterize::{self, document, CharacterizeConfig};

use crate::setup::{say, set_up};

/// Measures this machine with the defaults on `cpu` and returns the fitted
/// profile (p99.9, named `characterized`): how `rtlab breakdown` measures
/// first when it is given no `--overheads`. Notes go to standard error.
pub fn default_profile(cpu: usize) -> anyhow::Result<Overheads> {
    let cfg = CharacterizeConfig::new(cpu);
    cfg.validate().context("rtlab characterize")?;
    characterize::check_privilege(&cfg).context("rtlab characterize")?;
    let stop = interrupt::install_interrupt_flag();
    let guards = set_up(true, true)?;
    for note in &guards.notes {
        say(note);
    }
    let measured =
        characterize::characterize(&cfg, stop, &mut |_, _, _| {}).context("rtlab characterize")?;
    drop(guards);
    if measured.interrupted {
        anyhow::bail!("interrupted while measuring the platform's costs (nothing was run)");
    }
    let stat = Statistic::P999;
    let source = document::source_line(
        &document::hostname(),
        &rtlab_host::platform::host_metadata(),
        &document::now_utc(),
        &measured,
        stat,
        &cfg.threads,
    );
    let (profile, notes) = measured
        .fit_inputs()
        .fit(stat)
        .overheads("characterized", &source, measured.fit_inputs().tick)
        .map_err(|why| anyhow::anyhow!("rtlab characterize: {why}"))?;
    let (throttling, throttling_notes) = rtlab_host::platform::linux_throttling(cfg.cpu);
    for note in notes.into_iter().chain(throttling_notes) {
        say(&format!("note: {note}"));
    }
    Ok(Overheads {
        throttling,
        ..profile
    })
}
