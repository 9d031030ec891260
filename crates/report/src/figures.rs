//! Which plots a run gets, by its kind. A new kind of run (breakdown,
//! Hartstone, ...) adds one function here that extracts its series
//! ([`crate::series`]) and draws them ([`crate::plot`]), and one line in
//! [`figures`].

use crate::plot::{self, PlotResult};
use crate::series::{self, MAX_GANTT_JOBS};
use crate::view::RunView;

/// One plot of a run: a title, the SVG or why there is none, and a
/// caption saying what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Heading.
    pub title: String,
    /// The SVG document, or why it is missing (no data of that kind).
    pub svg: Result<String, String>,
    /// One sentence on what is drawn.
    pub caption: String,
}

impl Figure {
    fn drawn(title: &str, drawing: PlotResult, caption: String) -> Figure {
        Figure {
            title: title.to_string(),
            svg: drawing.map_err(|e| e.to_string()),
            caption,
        }
    }

    fn missing(title: &str, why: &str) -> Figure {
        Figure {
            title: title.to_string(),
            svg: Err(why.to_string()),
            caption: String::new(),
        }
    }
}

/// The plots of a run, in the order the report shows them.
pub fn figures(run: &RunView) -> Vec<Figure> {
    match run.kind.as_str() {
        "latency" => latency(run),
        "lag-study" => lag_study(run),
        "run" | "sim" => schedule(run),
        "compare" => {
            let mut out = schedule(run);
            out.push(real_vs_sim(run));
            out
        }
        "sweep" => vec![sweep(run)],
        "analyze" => analyze(run),
        "hartstone" => hartstone(run),
        "breakdown" => vec![breakdown_experiment(run)],
        "study" => study(run),
        _ => Vec::new(),
    }
}

/// The one plot a user wants from a command's `--plot FILE.svg`:
/// latency's histogram, sweep's ratio curve, sim's and run's Gantt chart.
pub fn main_plot(run: &RunView) -> Option<Figure> {
    let mut all = figures(run);
    (!all.is_empty()).then(|| all.swap_remove(0))
}

fn latency(run: &RunView) -> Vec<Figure> {
    let histograms = series::latency_histograms(run);
    let hist = if histograms.iter().all(|h| h.buckets.is_empty()) {
        Figure::missing(
            "Latency histogram",
            "no histogram in the document and no samples stored",
        )
    } else {
        Figure::drawn(
            "Latency histogram",
            plot::latency_histogram(&histograms),
            format!("Wake-up latencies per thread in 1 us buckets, counts on a log scale (cyclictest's plot); the wake-ups beyond the measured histogram (its histogram_overflows) are counted from the stored samples, or else drawn as one bucket at the thread's maximum; from {} us on, the latency axis is logarithmic too.", plot::LONG_TAIL_US),
        )
    };
    let over_time = series::latency_over_time(run);
    let time = if over_time.is_empty() {
        Figure::missing(
            "Latency over time",
            "no per-sample rows stored for this run",
        )
    } else {
        Figure::drawn(
            "Latency over time",
            plot::lines(&over_time, "time (s)", "wake-up latency (us)", None),
            format!(
                "Each thread's wake-up latency against the time of the wake-up; above {} points, the maximum of each bin.",
                series::MAX_LINE_POINTS
            ),
        )
    };
    vec![hist, time]
}

fn lag_study(run: &RunView) -> Vec<Figure> {
    let bars = series::lag_bars(run);
    if bars.is_empty() {
        return vec![Figure::missing("Lags", "the document has no cells")];
    }
    [10, 20]
        .into_iter()
        .map(|us| {
            Figure::drawn(
                &format!("Lags under {us} us"),
                plot::lag_shares(&bars, us),
                format!("Share of lags (wake-up - release) under {us} us per period and utilization, one bar per controller (Soyer 2024, figures 4.1 and 4.5)."),
            )
        })
        .collect()
}

/// A real run's kernel schedule above the simulated one (runs saved with
/// `--kernel-trace`), before the job Gantt chart.
fn real_and_simulated(run: &RunView) -> Option<Figure> {
    let chart = series::schedule_chart(run)?;
    let simulated = if chart.lanes.iter().any(|l| l.starts_with("sim ")) {
        "below, the simulator's schedule of the same set under the matching scheduler for the same window"
    } else {
        "no simulated schedule (the simulator has no model of this policy)"
    };
    let misses = chart
        .spans
        .iter()
        .filter(|(_, _, s)| s.kind == rtlab_model::results::SpanKind::Miss)
        .count();
    Some(Figure::drawn(
        "Real and simulated schedule",
        plot::schedule(&chart),
        format!(
            "{:.1}..{:.1} ms of the run: above, the kernel's schedule of the run's CPUs (the set's jobs by task, other threads, interrupts, the set's throttled spans) from its --kernel-trace; {simulated}. {misses} deadline miss{} (red crosses at the deadline; the real ones labelled with the largest cause of their lateness).",
            chart.from_ns as f64 / 1e6,
            chart.to_ns as f64 / 1e6,
            if misses == 1 { "" } else { "es" },
        ),
    ))
}

fn schedule(run: &RunView) -> Vec<Figure> {
    let traced = real_and_simulated(run);
    let mut out: Vec<Figure> = traced.into_iter().collect();
    out.extend(job_schedule(run));
    out
}

fn job_schedule(run: &RunView) -> Vec<Figure> {
    if run.jobs.is_empty() {
        return vec![Figure::missing(
            "Gantt chart",
            "no per-job rows stored for this run",
        )];
    }
    let g = series::gantt(run);
    let cut = if g.total_jobs > g.bars.len() {
        format!(
            " The first {MAX_GANTT_JOBS} of {} jobs by release.",
            g.total_jobs
        )
    } else {
        String::new()
    };
    vec![
        Figure::drawn(
            "Gantt chart",
            plot::gantt(&g),
            format!("{}: the job's window release..deadline (pale), the job from start to finish, a tick at each release, preemptions as Np. A job that missed its deadline is red with a black outline and a cross at its deadline (red is no task's colour).{cut}", if g.lanes.first().is_some_and(|l| l.starts_with("cpu ")) { "Per CPU (the job's colour is its task's, the CPU the one it finished on)" } else { "Per task" }),
        ),
        Figure::drawn(
            "Response times",
            plot::lines(&series::responses(run), "release (ms)", "response time (ms)", None),
            "Finish - release of every completed job, per task, against its release.".into(),
        ),
    ]
}

fn real_vs_sim(run: &RunView) -> Figure {
    Figure::drawn(
        "Real vs simulated",
        plot::real_vs_sim(&series::real_vs_sim(run)),
        "Mean and maximum response time per task, on real threads and in the simulator, each task as a percentage of its own largest response time (named under it), so short and long tasks read alike.".into(),
    )
}

fn sweep(run: &RunView) -> Figure {
    let cpus = series::sweep_cpus(run);
    let (axis, caption) = if cpus > 1 {
        (
            format!("utilization / {cpus} processors (U/m)"),
            format!("The share of random task sets each test accepts on {cpus} processors, against their total utilization divided by {cpus}."),
        )
    } else {
        (
            "utilization".to_string(),
            "The share of random task sets each test accepts, against their utilization."
                .to_string(),
        )
    };
    Figure::drawn(
        "Schedulability ratio",
        plot::lines(
            &series::sweep_curves(run),
            &axis,
            "sets accepted (fraction)",
            Some(1.05),
        ),
        caption,
    )
}

/// Paper 002's figures 4.3-4.8: per test, one bar per scheduler or policy,
/// iterations to the first miss (or, for the extended Hartstone, deadline
/// misses), then context switches per second.
fn hartstone(run: &RunView) -> Vec<Figure> {
    let extended = run
        .document
        .get("extended")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let (title, metric, y, caption) = if extended {
        (
            "Extended Hartstone: deadline misses",
            "misses",
            "deadline misses in 120 s",
            "Deadline misses over the 120 s of 48 %, 120 % and 48 % load, per test (Golchin 2017 figure 4.7).",
        )
    } else {
        (
            "Hartstone: iterations to the first miss",
            "iterations_completed",
            "iterations without a miss",
            "Iterations each scheduler completed before the first deadline miss, per test (Golchin 2017 figures 4.3-4.6).",
        )
    };
    let switches = series::hartstone_bars(run, extended, "context_switches_per_s");
    vec![
        Figure::drawn(
            title,
            plot::bars(&series::hartstone_bars(run, extended, metric), y),
            caption.into(),
        ),
        Figure::drawn(
            "Context switches per second",
            plot::bars(&switches, "context switches / s"),
            "Context switches per second of each scheduler, per test (Golchin 2017 figures 4.3-4.6, 4.8).".into(),
        ),
    ]
}

/// Paper 004 section 5: breakdown utilization against the time scale.
fn breakdown_experiment(run: &RunView) -> Figure {
    Figure::drawn(
        "Breakdown utilization vs time scale",
        plot::breakdown_vs_time_scale(&series::breakdown_vs_time_scale(run)),
        "The largest scaling of every C with no deadline miss, as a utilization, predicted (ideal and overhead-aware analysis, simulation) and measured on real threads, against the factor every time of the set was multiplied by (Arakawa et al. 1993, section 5).".into(),
    )
}

fn study(run: &RunView) -> Vec<Figure> {
    let mut out: Vec<Figure> = series::study_schedulable(run)
        .into_iter()
        .map(|(name, lines)| {
            Figure::drawn(
                &format!("Schedulable sets vs load {name}"),
                plot::lines(&lines, "load (%)", "schedulable sets (%)", Some(105.0)),
                format!("Share of the {name} sets with no deadline miss at each load (every C scaled), under EDF and FPS (DM), simulated and, with --real, on real threads beside the simulation of the same sets (Carletto & Vardanega 2017, highest schedulable utilization)."),
            )
        })
        .collect();
    for (profile, lines) in series::study_overload(run) {
        out.push(Figure::drawn(
            &format!("Deadline misses vs load {profile} overload"),
            plot::lines(&lines, "load (%)", "deadline misses", None),
            format!("Total deadline misses of the overload base set against the load level, {profile} profile, under EDF, FPS (DM) and the hybrid (Carletto & Vardanega 2017: FPS degrades linearly, EDF depends on the nature of the overload)."),
        ));
    }
    let locking = series::study_locking(run);
    if !locking.is_empty() {
        out.push(Figure::drawn(
            "Lock overhead vs procedure length",
            plot::lines(&locking, "protected procedure length (ms)", "cumulative lock overhead (us)", None),
            "Processor time spent in lock and unlock operations per run, IPCP under FPS against the Deadline Floor Protocol under EDF (which also reads the clock), against the length of the protected procedure (Carletto & Vardanega 2017).".into(),
        ));
    }
    out
}

fn analyze(run: &RunView) -> Vec<Figure> {
    let mut out = Vec::new();
    let bounds = series::response_bounds(run);
    if !bounds.is_empty() {
        out.push(Figure::drawn(
            "Response times vs deadlines",
            plot::response_bounds(&bounds),
            if run.document.get("processors").and_then(serde_json::Value::as_u64) > Some(1) {
                "The response-time bound of each test per task on the set's processors (no bar: not proven), the deadline as a black mark.".into()
            } else {
                "Exact worst-case response time per task and policy (no bar: above D), the deadline as a black mark.".into()
            },
        ));
    }
    let b = series::breakdown(run);
    // A plot against the tick needs a curve over two ticks at least: the
    // ideal levels alone (analyze without overheads) are in the tables.
    if b.curves.iter().any(|c| c.points.len() >= 2) {
        out.push(Figure::drawn(
            "Breakdown utilization vs tick",
            plot::breakdown(&b),
            "The largest scaling of every C that stays schedulable, as a utilization, against the timer tick, with the ideal (no overheads) level.".into(),
        ));
    }
    out
}

/// Every figure of `run` as an SVG file's name (its title in lower case,
/// `-` for every other character, `.svg`) and its document, or why it was
/// not drawn (`TITLE: why`).
pub fn named_svgs(run: &RunView) -> Vec<(String, Result<String, String>)> {
    figures(run)
        .into_iter()
        .map(|figure| {
            let name: String = figure
                .title
                .chars()
                .map(|c| match c.is_ascii_alphanumeric() {
                    true => c.to_ascii_lowercase(),
                    false => '-',
                })
                .collect();
            let svg = figure.svg.map_err(|why| format!("{}: {why}", figure.title));
            (format!("{name}.svg"), svg)
        })
        .collect()
}
