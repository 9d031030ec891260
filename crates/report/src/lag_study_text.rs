//! `rtlab lag-study` (paper 000 section 4.1) as a document, a text table and
//! CSV: [`LagStudyDocument`] is `--json`, [`human`] the text, [`csv()`] the
//! `--csv` file; the table and the CSV read the document's cells.
//!
//! Fields are declared in **alphabetical order**: these documents used to
//! be `serde_json::Value` objects, which sort their keys (the workspace does
//! not enable serde_json's `preserve_order`), and the documented output must
//! not change by a byte (`rtlab_model::schema::keys_in_sorted_order` checks
//! it in the tests below, `crates/cli/tests/json_pins.rs` against the binary).

use std::fmt::Display;

use rtlab_host::RtThrottling;
use rtlab_model::disturbance::DisturbanceAccount;
use rtlab_model::schema::RtThrottlingDocument;
use rtlab_model::Nanos;
use rtlab_rt::lag_study::{CellResult, StudyConfig};
use serde::Serialize;

use crate::table;

/// `rtlab lag-study --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LagStudyDocument {
    /// One entry per measured cell.
    pub cells: Vec<LagCellDocument>,
    /// The study's settings.
    pub config: LagStudyConfigDocument,
    /// What else ran on the measured CPUs over the whole study (its cells
    /// and the cool-downs between them), and its verdict
    /// (`rtlab_host::disturbance`); absent only in documents built without
    /// a measurement. Its own keys keep the account's order, as in `rtlab
    /// run --json`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<DisturbanceAccount>,
    /// Whether it ended before every cell was measured in full.
    pub interrupted: bool,
    /// The RT throttling limits, when readable.
    pub rt_throttling: Option<RtThrottlingDocument>,
    /// Warnings printed at the start.
    pub warnings: Vec<String>,
}

/// The `config` of a [`LagStudyDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LagStudyConfigDocument {
    /// The controllers compared.
    pub controllers: Vec<&'static str>,
    /// The pause between cells.
    pub cooldown_ns: u64,
    /// The CPU it is pinned to, if any.
    pub cpu: Option<usize>,
    /// The controller's integral gain.
    pub ki: f64,
    /// The measuring thread's policy.
    pub policy: &'static str,
    /// Its priority.
    pub priority: u8,
    /// Rounds over the grid.
    pub rounds: u32,
    /// Samples per cell.
    pub samples: u64,
    /// The robust controller's spin budget, a share of the period.
    pub spin_share: f64,
    /// The outlier threshold given (`None`: each cell's period).
    pub threshold_ns: Option<u64>,
}

/// One cell of a [`LagStudyDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LagCellDocument {
    /// Share of lags below 10 µs.
    pub below_10us: f64,
    /// Share of lags below 20 µs.
    pub below_20us: f64,
    /// Time spent busy-waiting.
    pub busy_wait_ns: u64,
    /// Busy-waiting as a share of the cell's wall time.
    pub busy_wait_share: f64,
    /// Whether a controller was on.
    pub controller: bool,
    /// Which controller.
    pub controller_kind: &'static str,
    /// The controller's final control value.
    pub final_control_ns: u64,
    /// The controller's final outlier threshold.
    pub final_threshold_ns: u64,
    /// The largest lag.
    pub max_lag_ns: u64,
    /// Whether the largest lag is worse than with the controller off.
    pub max_worse_than_off: Option<bool>,
    /// The mean lag.
    pub mean_lag_ns: u64,
    /// The median lag.
    pub p50_lag_ns: u64,
    /// The 99.9th percentile lag.
    pub p999_lag_ns: u64,
    /// The 99th percentile lag.
    pub p99_lag_ns: u64,
    /// Whether the 99th percentile is worse than with the controller off.
    pub p99_worse_than_off: Option<bool>,
    /// The cell's period.
    pub period_ns: u64,
    /// Samples measured.
    pub samples: u64,
    /// Whether the cell can hit RT throttling.
    pub throttle_risk: bool,
    /// The cell's utilization, a share.
    pub utilization: f64,
    /// The cell's wall time.
    pub wall_ns: u64,
}

/// The text of `rtlab lag-study`: the warnings (unless they went to
/// standard error already: `warnings_shown`), a heading with the settings
/// (`policy` as the run set it), a note when it stopped before its
/// `planned_cells`, and the [`describe`] table; every line ends in a newline.
pub fn human(
    doc: &LagStudyDocument,
    policy: impl Display,
    planned_cells: usize,
    warnings_shown: bool,
) -> String {
    let mut out = String::new();
    if !warnings_shown {
        for w in &doc.warnings {
            out += &format!("# {w}\n");
        }
    }
    let cfg = &doc.config;
    out += &format!(
        "# lag study: {} samples per cell in {} round(s), {}, {}, Ki {}, robust spin budget {}% of the period\n",
        cfg.samples,
        cfg.rounds,
        policy,
        cfg.cpu
            .map_or("unpinned".into(), |c| format!("pinned to CPU {c}")),
        cfg.ki,
        100.0 * cfg.spin_share
    );
    if doc.interrupted {
        out += &format!(
            "# interrupted: {} of {planned_cells} cells\n",
            doc.cells.len()
        );
    }
    out += &describe(&doc.cells);
    out.push('\n');
    if let Some(d) = &doc.disturbance {
        out += &format!("# {}\n", crate::disturbance_text::verdict_line(d));
    }
    table::fit_text(&out)
}

/// The progress of one measured cell of round `round` (from 0) of
/// `rounds`: `round 1/5: 1ms 50% robust: mean lag 3.2us, p99 8us`.
pub fn progress(round: u32, rounds: u32, cell: &LagCellDocument) -> String {
    format!(
        "round {}/{rounds}: {} {}% {}: mean lag {}, p99 {}",
        round + 1,
        Nanos::from_ns(cell.period_ns),
        cell.percent(),
        cell.controller_kind,
        Nanos::from_ns(cell.mean_lag_ns),
        Nanos::from_ns(cell.p99_lag_ns)
    )
}

fn pct(f: f64) -> String {
    format!("{:.1}", 100.0 * f)
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

impl LagCellDocument {
    /// The cell's utilization in percent, as it was asked (a whole number:
    /// `utilization` is that number / 100).
    fn percent(&self) -> u32 {
        (100.0 * self.utilization).round() as u32
    }

    /// Whether a tail figure is above the plain sleep's of the same run.
    fn any_worse(&self) -> bool {
        self.p99_worse_than_off == Some(true) || self.max_worse_than_off == Some(true)
    }
}

/// `p99`, `max`, `p99,max` where a controlled cell's tail is above its
/// plain cell's; empty otherwise.
fn worse(c: &LagCellDocument) -> String {
    let parts: Vec<&str> = [(c.p99_worse_than_off, "p99"), (c.max_worse_than_off, "max")]
        .iter()
        .filter(|(w, _)| *w == Some(true))
        .map(|(_, name)| *name)
        .collect();
    parts.join(",")
}

/// The table: one row per cell; `worse than off` names the tail figures a
/// controller made worse than the plain sleep of the same run; `!` marks
/// cells that can hit RT throttling.
pub fn describe(cells: &[LagCellDocument]) -> String {
    let header = [
        "period",
        "U%",
        "controller",
        "samples",
        "<10us %",
        "<20us %",
        "mean lag us",
        "p99 us",
        "p99.9 us",
        "max lag us",
        "busy-wait %",
        "control us",
        "threshold us",
        "worse than off",
        "",
    ];
    let mut t = table::new(&header, &header[1..13]);
    for c in cells {
        t.add_row(vec![
            Nanos::from_ns(c.period_ns).to_string(),
            c.percent().to_string(),
            c.controller_kind.to_string(),
            c.samples.to_string(),
            pct(c.below_10us),
            pct(c.below_20us),
            us(c.mean_lag_ns),
            us(c.p99_lag_ns),
            us(c.p999_lag_ns),
            us(c.max_lag_ns),
            pct(c.busy_wait_share),
            us(c.final_control_ns),
            if c.controller {
                us(c.final_threshold_ns)
            } else {
                "-".into()
            },
            worse(c),
            if c.throttle_risk { "!" } else { "" }.to_string(),
        ]);
    }
    let mut out = table::render(&t);
    if cells.iter().any(LagCellDocument::any_worse) {
        out += "\nworse than off: p99 or max lag above the plain sleep's in this run";
    }
    if cells.iter().any(|c| c.throttle_risk) {
        out += "\n! can hit RT throttling";
    }
    out
}

/// The columns of `--csv`.
const CSV_HEADER: &str = "period_ns,utilization,controller,samples,below_10us,below_20us,mean_lag_ns,p99_lag_ns,max_lag_ns,busy_wait_share,final_control_ns,throttle_risk,controller_kind,p999_lag_ns,final_threshold_ns,p99_worse_than_off,max_worse_than_off";

/// CSV with the JSON cell fields (the columns added later at the end; an
/// empty `*_worse_than_off` where there is nothing to compare).
pub fn csv(cells: &[LagCellDocument]) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = out.write_record(CSV_HEADER.split(','));
    let flag = |f: Option<bool>| f.map_or(String::new(), |b| b.to_string());
    for c in cells {
        let _ = out.write_record([
            c.period_ns.to_string(),
            c.utilization.to_string(),
            c.controller.to_string(),
            c.samples.to_string(),
            format!("{:.6}", c.below_10us),
            format!("{:.6}", c.below_20us),
            c.mean_lag_ns.to_string(),
            c.p99_lag_ns.to_string(),
            c.max_lag_ns.to_string(),
            format!("{:.6}", c.busy_wait_share),
            c.final_control_ns.to_string(),
            c.throttle_risk.to_string(),
            c.controller_kind.to_string(),
            c.p999_lag_ns.to_string(),
            c.final_threshold_ns.to_string(),
            flag(c.p99_worse_than_off),
            flag(c.max_worse_than_off),
        ]);
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The study's document (`--json`): its configuration, the RT throttling
/// limit read before it, whether it was cut short, the warnings said, and
/// every measured cell.
pub fn document(
    cfg: &StudyConfig,
    throttling: Option<RtThrottling>,
    interrupted: bool,
    warnings: &[String],
    cells: &[CellResult],
) -> LagStudyDocument {
    LagStudyDocument {
        config: LagStudyConfigDocument {
            samples: cfg.samples,
            rounds: cfg.rounds,
            cooldown_ns: cfg.cooldown.as_ns(),
            ki: cfg.ki,
            threshold_ns: cfg.threshold.map(Nanos::as_ns),
            controllers: cfg.waiters.iter().map(|w| w.name()).collect(),
            spin_share: cfg.spin_share,
            policy: cfg.policy.short_name(),
            priority: cfg.policy.priority(),
            cpu: cfg.cpu,
        },
        rt_throttling: throttling.map(RtThrottlingDocument::from),
        disturbance: None,
        interrupted,
        warnings: warnings.to_vec(),
        cells: cells.iter().map(cell_document).collect(),
    }
}

/// A measured cell as its document.
pub fn cell_document(c: &CellResult) -> LagCellDocument {
    LagCellDocument {
        period_ns: c.cell.period.as_ns(),
        utilization: f64::from(c.cell.utilization) / 100.0,
        controller: c.cell.waiter.is_controlled(),
        controller_kind: c.cell.waiter.name(),
        samples: c.samples,
        below_10us: c.below_10us,
        below_20us: c.below_20us,
        mean_lag_ns: c.lag.mean().as_ns(),
        p50_lag_ns: c.lag.p50.as_ns(),
        p99_lag_ns: c.lag.p99.as_ns(),
        p999_lag_ns: c.lag.p999.as_ns(),
        max_lag_ns: c.lag.max.as_ns(),
        busy_wait_share: c.busy_wait_share,
        busy_wait_ns: c.busy_wait.as_ns(),
        final_control_ns: c.final_control.as_ns(),
        final_threshold_ns: c.final_threshold.as_ns(),
        p99_worse_than_off: c.tail_vs_off.map(|t| t.p99_worse),
        max_worse_than_off: c.tail_vs_off.map(|t| t.max_worse),
        throttle_risk: c.throttle_risk,
        wall_ns: c.wall.as_ns(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::schema::keys_in_sorted_order;

    /// The table shows the percent the cell was asked with, read back from
    /// the document's share (`percent / 100` as f64) for every percent.
    #[test]
    fn the_table_reads_back_every_whole_percent() {
        for percent in 0..=100u32 {
            let cell = LagCellDocument {
                utilization: f64::from(percent) / 100.0,
                ..cell_document()
            };
            assert_eq!(cell.percent(), percent);
        }
    }

    #[test]
    fn the_progress_line_names_the_cell_and_its_lags() {
        let cell = LagCellDocument {
            mean_lag_ns: 3_200,
            p99_lag_ns: 8_000,
            utilization: 0.07,
            ..cell_document()
        };
        assert_eq!(
            progress(0, 5, &cell),
            "round 1/5: 1ms 7% paper: mean lag 3.2us, p99 8us"
        );
    }

    fn cell_document() -> LagCellDocument {
        LagCellDocument {
            below_10us: 0.5,
            below_20us: 0.9,
            busy_wait_ns: 1,
            busy_wait_share: 0.1,
            controller: true,
            controller_kind: "paper",
            final_control_ns: 1,
            final_threshold_ns: 2,
            max_lag_ns: 3,
            max_worse_than_off: Some(false),
            mean_lag_ns: 1,
            p50_lag_ns: 1,
            p999_lag_ns: 3,
            p99_lag_ns: 2,
            p99_worse_than_off: None,
            period_ns: 1_000_000,
            samples: 10,
            throttle_risk: false,
            utilization: 0.5,
            wall_ns: 1,
        }
    }

    #[test]
    fn lag_study_document_keeps_sorted_keys() {
        let cell = cell_document();
        assert!(keys_in_sorted_order(&LagStudyDocument {
            cells: vec![cell],
            config: LagStudyConfigDocument {
                controllers: vec!["off", "paper"],
                cooldown_ns: 1,
                cpu: None,
                ki: 0.1,
                policy: "fifo",
                priority: 90,
                rounds: 1,
                samples: 10,
                spin_share: 0.2,
                threshold_ns: None,
            },
            disturbance: None,
            interrupted: false,
            rt_throttling: None,
            warnings: vec!["w".into()],
        }));
    }

    #[test]
    fn the_csv_pins_the_documented_columns_and_number_formats() {
        use rtlab_rt::lag_study::{Cell, CellResult, TailVsOff};
        use rtlab_rt::stats::Summary;
        let cell = |waiter, tail_vs_off| CellResult {
            cell: Cell {
                period: Nanos::from_us(1000),
                utilization: 50,
                waiter,
            },
            samples: 2000,
            below_10us: 0.25,
            below_20us: 2.0 / 3.0,
            lag: Summary {
                mean_ns: 12_345.6,
                p99: Nanos::from_us(40),
                p999: Nanos::from_us(55),
                max: Nanos::from_us(70),
                ..Summary::default()
            },
            busy_wait: Nanos::from_ms(3),
            busy_wait_share: 0.0125,
            final_control: Nanos::from_us(9),
            final_threshold: Nanos::from_us(30),
            tail_vs_off,
            throttle_risk: false,
            wall: Nanos::from_ms(2000),
            cut_short: false,
        };
        let tail = TailVsOff {
            p99_worse: true,
            max_worse: false,
        };
        let text = csv(&[
            super::cell_document(&cell(rtlab_rt::lag_study::WaiterKind::Off, None)),
            super::cell_document(&cell(rtlab_rt::lag_study::WaiterKind::Robust, Some(tail))),
        ]);
        assert_eq!(
            text,
            "period_ns,utilization,controller,samples,below_10us,below_20us,mean_lag_ns,p99_lag_ns,max_lag_ns,busy_wait_share,final_control_ns,throttle_risk,controller_kind,p999_lag_ns,final_threshold_ns,p99_worse_than_off,max_worse_than_off\n\
             1000000,0.5,false,2000,0.250000,0.666667,12346,40000,70000,0.012500,9000,false,off,55000,30000,,\n\
             1000000,0.5,true,2000,0.250000,0.666667,12346,40000,70000,0.012500,9000,false,robust,55000,30000,true,false\n"
        );
    }
}
