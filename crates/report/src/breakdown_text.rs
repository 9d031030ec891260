//! `rtlab breakdown` (paper 004's validation experiment, §5) as text: the
//! breakdowns per time scale beside each other ([`describe`]), every
//! measured step, and the progress line of each step. The document is
//! [`BreakdownDocument`] (`rtlab_analysis::breakdown_experiment`), printed
//! as it is by `--json`.

use rtlab_analysis::breakdown_experiment::{BreakdownDocument, ScaleResult};
use rtlab_analysis::measured_breakdown::{MeasuredBreakdown, Step};
use rtlab_model::{printable, Nanos};

use crate::table;

/// The line said on a terminal after each measured step.
pub fn progress_line(scale: f64, s: &Step) -> String {
    format!(
        "time scale {scale}: {:?} alpha {:.4} (U {:.2}%) run {}: {} misses of {} jobs{}{}{}",
        s.phase,
        s.alpha,
        s.utilization * 100.0,
        s.repeat,
        s.misses,
        s.jobs,
        if s.pass { "" } else { ": fail" },
        s.kernel_trace.as_ref().map_or(String::new(), |k| format!(
            "; {}",
            crate::kernel_trace::misses_line(k)
        )),
        s.rerun
            .as_ref()
            .map_or(String::new(), |r| format!("; rerun: {}", r.describe()))
    )
}

fn percent(u: Option<f64>) -> String {
    u.map_or("-".into(), |u| format!("{:.2}%", u * 100.0))
}

fn points(e: Option<f64>) -> String {
    e.map_or("-".into(), |e| format!("{e:+.2}"))
}

fn measured_cell(m: &MeasuredBreakdown) -> String {
    let mut cell = percent(m.utilization);
    if m.capped {
        cell.insert_str(0, ">= ");
    }
    if m.utilization.is_some() && !m.confirmed {
        cell.push_str(" (unconfirmed)");
    }
    cell
}

/// The human summary: the breakdowns per time scale, then every step.
pub fn describe(doc: &BreakdownDocument) -> String {
    let mut out = format!(
        "{} ({}) under {}: breakdown utilization U* (every C scaled by alpha), overheads {} ({}{}), {} runs per alpha (pass: {}), resolution {}, CPU {}, RT throttling {}{}\n\n",
        printable(&doc.taskset),
        printable(&doc.origin),
        doc.policy,
        printable(&doc.overheads),
        doc.timer,
        doc.throttling_model
            .as_ref()
            .map_or(String::new(), |m| format!("; throttling modelled: {m}")),
        doc.repeat,
        doc.pass_rule.name(),
        doc.resolution,
        doc.cpu.map_or("-".into(), |c| c.to_string()),
        doc.rt_throttling,
        if doc.no_rt_throttling { " (switched off for each run)" } else { "" },
    );
    let header = [
        "time scale",
        "U",
        "step",
        "ideal",
        "overhead-aware",
        "simulated",
        "measured",
        "err ideal",
        "err overhead",
        "err sim",
        "runs",
    ];
    let mut t = table::new(&header, &header[1..]);
    for s in &doc.scales {
        t.add_row(vec![
            s.time_scale.to_string(),
            percent(Some(s.utilization)),
            Nanos::from_ns(s.duration_per_step_ns).to_string(),
            percent(s.ideal.map(|p| p.utilization)),
            percent(s.overhead_aware.map(|p| p.utilization)),
            measured_cell(&s.simulated),
            measured_cell(&s.measured),
            points(s.prediction_error.ideal_pp),
            points(s.prediction_error.overhead_aware_pp),
            points(s.prediction_error.simulated_pp),
            s.measured.steps.len().to_string(),
        ]);
    }
    out.push_str(&table::render(&t));
    out.push_str("\n(err: measured minus predicted U*, percentage points; positive = the platform did better than predicted)\n");
    for s in &doc.scales {
        out.push_str(&steps_table(s));
    }
    let capped: Vec<String> = doc
        .scales
        .iter()
        .filter(|s| s.throttling_may_cap)
        .map(|s| s.time_scale.to_string())
        .collect();
    if !capped.is_empty() {
        out.push_str(&format!(
            "\nnote: RT throttling ({}{}) or the fair server (Linux 6.12+: 50 ms per second for starved SCHED_OTHER tasks, not lifted by --no-rt-throttling) may have capped the measured breakdown at time scale {}: its first failing alpha came within 0.05 of the limit{}\n",
            doc.rt_throttling,
            if doc.no_rt_throttling { ", switched off" } else { "" },
            capped.join(", "),
            if doc.no_rt_throttling {
                "; keep other work off the CPU to avoid the fair server"
            } else {
                "; rerun with --no-rt-throttling, and keep other work off the CPU"
            }
        ));
    }
    if doc.interrupted {
        out.push_str(
            "\nnote: interrupted: the last time scale is partial, later ones were not run\n",
        );
    }
    table::fit_text(&out)
}

fn steps_table(s: &ScaleResult) -> String {
    let header = ["phase", "alpha", "U", "run", "misses", "jobs", "verdict"];
    let mut t = table::new(&header, &header[1..6]);
    for step in &s.measured.steps {
        let verdict = match (&step.refused, step.interrupted, step.pass) {
            (Some(why), _, _) => format!("refused: {}", why.chars().take(60).collect::<String>()),
            (None, true, _) => "interrupted".into(),
            (None, false, true) => "pass".into(),
            (None, false, false) => "fail".into(),
        };
        t.add_row(vec![
            format!("{:?}", step.phase).to_lowercase(),
            format!("{:.4}", step.alpha),
            format!("{:.2}%", step.utilization * 100.0),
            step.repeat.to_string(),
            step.misses.to_string(),
            step.jobs.to_string(),
            verdict,
        ]);
    }
    let mut out = format!(
        "\nmeasured steps at time scale {} ({} each):\n{}\n",
        s.time_scale,
        Nanos::from_ns(s.duration_per_step_ns),
        table::render(&t)
    );
    for step in &s.measured.steps {
        if let Some(k) = &step.kernel_trace {
            out.push_str(&format!(
                "kernel trace, {:?} alpha {:.4} run {}: {}\n",
                step.phase,
                step.alpha,
                step.repeat,
                crate::kernel_trace::misses_line(k)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_analysis::breakdown_experiment::{Predicted, PredictionError};
    use rtlab_analysis::measured_breakdown::{PassRule, Phase};

    fn step(phase: Phase, pass: bool, interrupted: bool, refused: Option<&str>) -> Step {
        Step {
            phase,
            alpha: 1.25,
            alpha_ppb: 1_250_000_000,
            utilization: 0.625,
            repeat: 1,
            misses: u64::from(!pass),
            jobs: 40,
            pass,
            interrupted,
            refused: refused.map(str::to_string),
            kernel_trace: None,
            rerun: None,
        }
    }

    fn breakdown(utilization: Option<f64>, capped: bool, confirmed: bool) -> MeasuredBreakdown {
        MeasuredBreakdown {
            alpha: utilization.map(|u| u * 2.0),
            alpha_ppb: None,
            utilization,
            failing_alpha: None,
            confirmed,
            capped,
            interrupted: false,
            steps: Vec::new(),
        }
    }

    /// A refusal longer than the 60 characters the table keeps.
    const REFUSAL: &str = "sched_setattr: SCHED_DEADLINE admission refused the set: the total bandwidth is above the limit";

    fn document() -> BreakdownDocument {
        let mut measured = breakdown(Some(0.5), true, false);
        measured.steps = vec![
            step(Phase::Bracket, true, false, None),
            step(Phase::Bracket, false, false, None),
            step(Phase::Bisect, false, false, Some(REFUSAL)),
            step(Phase::Confirm, false, true, None),
        ];
        BreakdownDocument {
            taskset: "ins".into(),
            origin: "builtin:ins".into(),
            policy: "edf".into(),
            overheads: "rtmach".into(),
            timer: "periodic tick".into(),
            throttling_model: None,
            repeat: 1,
            pass_rule: PassRule::All,
            resolution: 0.01,
            cpu: Some(1),
            rt_throttling: "unlimited".into(),
            no_rt_throttling: false,
            interrupted: true,
            scales: vec![ScaleResult {
                time_scale: 0.1,
                time_scale_ppb: 100_000_000,
                utilization: 0.25,
                duration_per_step_ns: 500_000_000,
                ideal: Some(Predicted {
                    alpha: 4.0,
                    utilization: 1.0,
                }),
                overhead_aware: None,
                simulated: breakdown(Some(0.875), false, true),
                measured,
                prediction_error: PredictionError {
                    ideal_pp: Some(-50.0),
                    overhead_aware_pp: None,
                    simulated_pp: Some(-37.5),
                },
                throttling_may_cap: false,
            }],
        }
    }

    /// The breakdowns row and the steps table say what the document holds:
    /// a capped, unconfirmed measurement, a missing prediction, each step's
    /// verdict (a refusal cut to 60 characters).
    #[test]
    fn the_text_marks_capped_unconfirmed_and_refused() {
        let text = describe(&document());
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("0.1 "))
            .unwrap_or_else(|| panic!("{text}"));
        let cells: Vec<&str> = row
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            cells,
            [
                "0.1",
                "25.00%",
                "500ms",
                "100.00%",
                "-",
                "87.50%",
                ">= 50.00% (unconfirmed)",
                "-50.00",
                "-",
                "-37.50",
                "4"
            ],
            "{text}"
        );
        assert!(
            text.contains("measured steps at time scale 0.1 (500ms each):"),
            "{text}"
        );
        let verdicts: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("measured steps"))
            .skip(3)
            .take(4)
            .map(|l| l.trim_end().rsplit("  ").next().unwrap())
            .collect();
        let refused = format!("refused: {}", &REFUSAL[..60]);
        assert_eq!(
            verdicts,
            ["pass", "fail", refused.as_str(), "interrupted"],
            "{text}"
        );
        assert!(text.ends_with(
            "\nnote: interrupted: the last time scale is partial, later ones were not run\n"
        ));
    }
}
