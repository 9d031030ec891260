//! `rtlab drift` on paper: the summary table, the JSON document, the CSV
//! time series and the plot of lag against time, from a
//! [`DriftRun`](rtlab_model::results::drift::DriftRun) (`rtlab_rt::drift` measures it).

use rtlab_model::disturbance::DisturbanceAccount;
use rtlab_model::results::drift::{DriftLoop as LoopReport, DriftRun as DriftReport, SleepKind};
use rtlab_model::Nanos;
use serde::Serialize;

use crate::plot::{self, PlotResult};
use crate::series::Line;
use crate::table;

/// One loop in the `--json` document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftLoopDocument {
    /// `absolute`, `relative` or `compensated`.
    pub kind: &'static str,
    /// The call it sleeps with.
    pub call: &'static str,
    /// Kernel thread id.
    pub tid: i32,
    /// Wake-ups.
    pub wakeups: u64,
    /// Grid periods skipped (absolute only).
    pub skipped: u64,
    /// Mean overshoot of its sleeps (`woke - target`).
    pub latency_avg_ns: u64,
    /// Largest overshoot.
    pub latency_max_ns: u64,
    /// Lag of the last wake-up behind the grid.
    pub final_lag_ns: u64,
    /// Largest lag.
    pub max_lag_ns: u64,
    /// Slope of the least-squares line of lag against time, per hour.
    pub drift_per_hour_ns: f64,
    /// Its phase offset behind the absolute loop at the end (`None`
    /// without an absolute loop, or for it).
    pub offset_from_absolute_ns: Option<i64>,
    /// Drift per hour of that offset.
    pub offset_drift_per_hour_ns: Option<f64>,
}

/// The `rtlab drift --json` document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftDocument {
    /// The period of every loop.
    pub period_ns: u64,
    /// The run length asked for.
    pub duration_ns: u64,
    /// Policy of the loop threads.
    pub policy: &'static str,
    /// Their priority (0 for SCHED_OTHER).
    pub priority: u8,
    /// CPU they are pinned to, if any.
    pub cpu: Option<usize>,
    /// CPU time burnt after each wake-up.
    pub work_ns: u64,
    /// The background load.
    pub load: String,
    /// Window of the CSV series.
    pub window_ns: u64,
    /// Whether Ctrl-C ended it early.
    pub interrupted: bool,
    /// Wall time of the run.
    pub wall_ns: u64,
    /// One per loop.
    pub loops: Vec<DriftLoopDocument>,
    /// What else ran on the loops' CPUs while they ran, and its verdict
    /// (`rtlab_host::disturbance`): the latencies and lags of a
    /// `disturbed` run hold the disturbance's time.
    pub disturbance: DisturbanceAccount,
}

fn loop_document(report: &DriftReport, l: &LoopReport) -> DriftLoopDocument {
    let offset = (l.kind != SleepKind::Absolute)
        .then(|| report.offset(l.kind, SleepKind::Absolute))
        .flatten();
    DriftLoopDocument {
        kind: l.kind.name(),
        call: l.kind.call(),
        tid: l.tid,
        wakeups: l.wakeups,
        skipped: l.skipped,
        latency_avg_ns: l.latency_avg.as_ns(),
        latency_max_ns: l.latency_max.as_ns(),
        final_lag_ns: l.final_lag.as_ns(),
        max_lag_ns: l.max_lag.as_ns(),
        drift_per_hour_ns: l.fit.per_hour_ns().round(),
        offset_from_absolute_ns: offset.map(|o| o.0),
        offset_drift_per_hour_ns: offset.map(|o| o.1.round()),
    }
}

/// The `--json` document of a run under `load`, with its disturbance
/// account.
pub fn document(
    report: &DriftReport,
    load: &str,
    disturbance: &DisturbanceAccount,
) -> DriftDocument {
    let c = report;
    DriftDocument {
        period_ns: c.period.as_ns(),
        duration_ns: c.duration.as_ns(),
        policy: c.policy_name,
        priority: c.priority,
        cpu: c.cpu,
        work_ns: c.work.as_ns(),
        load: load.to_string(),
        window_ns: report.window.as_ns(),
        interrupted: report.interrupted,
        wall_ns: report.wall.as_ns(),
        loops: report
            .loops
            .iter()
            .map(|l| loop_document(report, l))
            .collect(),
        disturbance: disturbance.clone(),
    }
}

/// `ns` rounded to three significant digits, in its unit (`9.37s`).
fn rounded(ns: u64) -> Nanos {
    let digits = ns.checked_ilog10().unwrap_or(0);
    let unit = 10u64.pow(digits.saturating_sub(2));
    Nanos::from_ns((ns + unit / 2) / unit * unit)
}

/// A signed amount of nanoseconds per hour, three significant digits
/// (`-621us/h`, `9.37s/h`).
fn per_hour(ns: f64) -> String {
    let sign = if ns < 0.0 { "-" } else { "" };
    format!("{sign}{}/h", rounded(ns.abs().round() as u64))
}

fn signed(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    format!("{sign}{}", rounded(ns.unsigned_abs()))
}

/// The human summary: what ran, one row per loop, the observation and the
/// disturbance verdict.
pub fn text(report: &DriftReport, load: &str, disturbance: &DisturbanceAccount) -> String {
    let c = report;
    let mut out = format!(
        "# rtlab drift: period {}, {}, {}, {}, work {} a period, load {}\n",
        c.period,
        c.duration,
        c.policy,
        c.cpu
            .map_or("unpinned".to_string(), |cpu| format!("CPU {cpu}")),
        c.work,
        load,
    );
    if report.interrupted {
        out += "# interrupted: results so far\n";
    }
    for l in &report.loops {
        out += &format!("# {:<11} {}\n", l.kind.name(), l.kind.call());
    }
    out.push('\n');
    let header = [
        "loop",
        "wake-ups",
        "skipped",
        "latency avg",
        "latency max",
        "lag at end",
        "drift",
        "behind absolute",
        "its drift",
    ];
    let mut rows = table::new(&header, &header[1..]);
    for l in &report.loops {
        let d = loop_document(report, l);
        rows.add_row(vec![
            l.kind.name().to_string(),
            l.wakeups.to_string(),
            l.skipped.to_string(),
            rounded(l.latency_avg.as_ns()).to_string(),
            rounded(l.latency_max.as_ns()).to_string(),
            rounded(l.final_lag.as_ns()).to_string(),
            per_hour(d.drift_per_hour_ns),
            d.offset_from_absolute_ns.map_or("-".into(), signed),
            d.offset_drift_per_hour_ns.map_or("-".into(), per_hour),
        ]);
    }
    out +=
        "lag = wake-up - (start + n x period); drift = least-squares slope of the lag, per hour\n";
    out += &table::render(&rows);
    out.push('\n');
    if let (Some(rel), Some(abs)) = (
        report.of(SleepKind::Relative),
        report.of(SleepKind::Absolute),
    ) {
        out += &format!(
            "\nThe relative loop fell {} behind the grid in {} wake-ups ({} a period, {}); \
             the absolute loop stayed on it, its lag never above {} (its latency).\n",
            rounded(rel.final_lag.as_ns()),
            rel.wakeups,
            rounded(rel.final_lag.as_ns() / rel.wakeups.max(1)),
            per_hour(rel.fit.per_hour_ns()),
            rounded(abs.max_lag.as_ns()),
        );
    }
    out += &format!("\n{}\n", crate::disturbance_text::verdict_line(disturbance));
    table::fit_text(&out)
}

/// The CSV time series: `time_s` (grid time at the window's end) and, per
/// loop, the lag of its last wake-up in the window (`<kind>_lag_ns`), then
/// for every loop but the absolute one its offset behind the absolute one
/// (`<kind>_minus_absolute_ns`). A loop with no wake-up in a window leaves
/// its cell empty.
pub fn csv(report: &DriftReport) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let absolute = report.of(SleepKind::Absolute);
    let others: Vec<&LoopReport> = report
        .loops
        .iter()
        .filter(|l| absolute.is_some() && l.kind != SleepKind::Absolute)
        .collect();
    let mut header = vec!["time_s".to_string()];
    header.extend(
        report
            .loops
            .iter()
            .map(|l| format!("{}_lag_ns", l.kind.name())),
    );
    header.extend(
        others
            .iter()
            .map(|l| format!("{}_minus_absolute_ns", l.kind.name())),
    );
    w.write_record(&header)?;
    let windows = report
        .loops
        .iter()
        .map(|l| l.series.len())
        .max()
        .unwrap_or(0);
    let cell = |v: Option<Nanos>| v.map_or(String::new(), |n| n.as_ns().to_string());
    for i in 0..windows {
        let at = |l: &LoopReport| l.series.get(i).copied().flatten();
        if report.loops.iter().all(|l| at(l).is_none()) {
            continue;
        }
        let t = report.window.as_ns().saturating_mul(i as u64 + 1) as f64 / 1e9;
        let mut row = vec![format!("{t}")];
        row.extend(report.loops.iter().map(|l| cell(at(l))));
        row.extend(
            others
                .iter()
                .map(|l| match (at(l), absolute.and_then(&at)) {
                    (Some(x), Some(a)) => (x.as_ns() as i64 - a.as_ns() as i64).to_string(),
                    _ => String::new(),
                }),
        );
        w.write_record(&row)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The plot: each loop's lag behind the grid (ms) against time (s); the
/// relative line climbs, the absolute one stays on the floor.
pub fn plot(report: &DriftReport) -> PlotResult {
    let lines: Vec<Line> = report
        .loops
        .iter()
        .map(|l| Line {
            label: format!("{} ({})", l.kind.name(), per_hour(l.fit.per_hour_ns())),
            points: l
                .series
                .iter()
                .enumerate()
                .filter_map(|(i, lag)| {
                    lag.map(|lag| {
                        let t = report.window.as_ns().saturating_mul(i as u64 + 1) as f64 / 1e9;
                        (t, lag.as_ns() as f64 / 1e6)
                    })
                })
                .collect(),
        })
        .collect();
    plot::lines(
        &lines,
        "time (s)",
        "lag behind start + n x period (ms)",
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::results::drift::LagFit;

    fn report() -> DriftReport {
        let ms = Nanos::from_ms;
        let mut rel_fit = LagFit::default();
        let mut abs_fit = LagFit::default();
        for k in 1..=3u64 {
            rel_fit.add((k * 1_000_000_000) as f64, (k * 2_000_000) as f64);
            abs_fit.add((k * 1_000_000_000) as f64, 20_000.0);
        }
        let loop_of = |kind, lags: Vec<Option<Nanos>>, fit| LoopReport {
            kind,
            tid: 7,
            wakeups: 3000,
            skipped: 0,
            latency_avg: Nanos::ZERO,
            latency_max: Nanos::ZERO,
            final_lag: lags.iter().flatten().last().copied().unwrap_or(Nanos::ZERO),
            max_lag: lags.iter().flatten().max().copied().unwrap_or(Nanos::ZERO),
            fit,
            series: lags,
        };
        DriftReport {
            period: ms(1),
            duration: Nanos::from_secs(3),
            policy: "SCHED_FIFO priority 80".into(),
            policy_name: "fifo",
            priority: 80,
            cpu: Some(0),
            work: Nanos::ZERO,
            window: Nanos::from_secs(1),
            loops: vec![
                loop_of(
                    SleepKind::Absolute,
                    vec![Some(Nanos::from_us(20)); 3],
                    abs_fit,
                ),
                loop_of(
                    SleepKind::Relative,
                    vec![Some(ms(2)), Some(ms(4)), None],
                    rel_fit,
                ),
            ],
            interrupted: false,
            wall: Nanos::from_secs(3),
        }
    }

    #[test]
    fn figures_keep_three_significant_digits() {
        assert_eq!(per_hour(9_365_674_027.0), "9.37s/h");
        assert_eq!(per_hour(-620_580.0), "-621us/h");
        assert_eq!(per_hour(0.0), "0ns/h");
        assert_eq!(signed(-42), "-42ns");
        assert_eq!(rounded(12_495_536), Nanos::from_us(12_500));
    }

    #[test]
    fn csv_has_a_row_per_window_with_the_offset() {
        assert_eq!(
            csv(&report()).unwrap(),
            "time_s,absolute_lag_ns,relative_lag_ns,relative_minus_absolute_ns\n\
             1,20000,2000000,1980000\n\
             2,20000,4000000,3980000\n\
             3,20000,,\n"
        );
    }

    /// 2 ms of lag per second of time is 7.2 s per hour.
    #[test]
    fn text_and_document_show_the_drift_per_hour() {
        let r = report();
        let doc = document(&r, "none", &DisturbanceAccount::default());
        assert_eq!(doc.loops[1].drift_per_hour_ns, 7.2e9);
        assert_eq!(
            doc.loops[1].offset_from_absolute_ns,
            Some(4_000_000 - 20_000)
        );
        assert_eq!(doc.loops[1].offset_drift_per_hour_ns, Some(7.2e9));
        assert_eq!(doc.loops[0].offset_from_absolute_ns, None);
        let text = text(&r, "none", &DisturbanceAccount::default());
        assert!(text.contains("7.2s/h"), "{text}");
        assert!(
            text.contains("The relative loop fell 4ms behind the grid in 3000 wake-ups"),
            "{text}"
        );
        let svg = plot(&r).unwrap();
        assert!(svg.contains("relative (7.2s/h)"), "{svg}");
    }
}
