//! The data of each plot, taken from a run's document and rows, apart from
//! drawing so that it can be checked number by number. Every function here
//! reads the fields that a command's `--json` documents (README, "JSON
//! output") and skips what is missing or null rather than failing: a
//! report of an old or partial run shows what there is.
//!
//! Sizes are bounded whatever the run's length: a line keeps at most
//! [`MAX_LINE_POINTS`] points (the maximum of each bin, so spikes stay
//! visible) and a Gantt chart at most [`MAX_GANTT_JOBS`] jobs.

use rtlab_model::results::{ScheduleSpan, ScheduleWindow, SpanKind, SpanSource};
use serde_json::Value;

use crate::view::{JobRow, RunView, SampleRow};

/// Points a line keeps at most; longer series are cut into this many
/// consecutive bins and each bin keeps its largest value.
pub const MAX_LINE_POINTS: usize = 1000;

/// Jobs a Gantt chart shows at most: the earliest released.
pub const MAX_GANTT_JOBS: usize = 400;

/// A named series of (x, y) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Legend label.
    pub label: String,
    /// Points in x order.
    pub points: Vec<(f64, f64)>,
}

/// A latency histogram of one thread: (latency in whole microseconds,
/// count) for each non-empty bucket, in latency order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    /// Legend label (`thread N`).
    pub label: String,
    /// Non-empty buckets.
    pub buckets: Vec<(u64, u64)>,
}

/// Per thread, the wake-up latency histogram: the document's
/// `threads[].histogram_us` when it has one, else counted from the
/// stored samples (bucket = latency_ns / 1000). The document's buckets end
/// where the measurement's histogram ended (`--histogram-buckets`): the
/// wake-ups beyond it (`histogram_overflows`) are counted from the stored
/// samples when the run has them, else they are one more bucket at the
/// thread's maximum (`max_ns`), so the histogram reaches it.
pub fn latency_histograms(run: &RunView) -> Vec<Histogram> {
    let overflowed = array(&run.document, "threads")
        .iter()
        .any(|t| t.get("histogram_overflows").and_then(Value::as_u64) > Some(0));
    let from_document: Vec<Histogram> = array(&run.document, "threads")
        .iter()
        .filter(|_| !overflowed || run.samples.is_empty())
        .filter_map(|t| {
            let buckets = t.get("histogram_us")?.as_array()?;
            let mut buckets: Vec<(u64, u64)> = buckets
                .iter()
                .filter_map(|b| Some((b.get(0)?.as_u64()?, b.get(1)?.as_u64()?)))
                .filter(|&(_, count)| count > 0)
                .collect();
            let overflows = t.get("histogram_overflows").and_then(Value::as_u64);
            let max_us = t.get("max_ns").and_then(Value::as_u64).map(|ns| ns / 1000);
            if let (Some(n @ 1..), Some(max_us)) = (overflows, max_us) {
                match buckets.last_mut() {
                    Some(last) if last.0 >= max_us => last.1 += n,
                    _ => buckets.push((max_us, n)),
                }
            }
            Some(Histogram {
                label: format!("thread {}", t.get("thread")?.as_u64()?),
                buckets,
            })
        })
        .collect();
    if !from_document.is_empty() || run.samples.is_empty() {
        return from_document;
    }
    by_thread(&run.samples)
        .into_iter()
        .map(|(thread, samples)| {
            let mut buckets = std::collections::BTreeMap::new();
            for s in samples {
                *buckets.entry(s.latency_ns / 1000).or_insert(0u64) += 1;
            }
            Histogram {
                label: format!("thread {thread}"),
                buckets: buckets.into_iter().collect(),
            }
        })
        .collect()
}

/// Per thread, wake-up latency (us) against time (s) from the stored
/// samples, at most [`MAX_LINE_POINTS`] points each (bin maxima).
pub fn latency_over_time(run: &RunView) -> Vec<Line> {
    by_thread(&run.samples)
        .into_iter()
        .map(|(thread, samples)| {
            let points: Vec<(f64, f64)> = samples
                .iter()
                .map(|s| (s.t_ns as f64 / 1e9, s.latency_ns as f64 / 1e3))
                .collect();
            Line {
                label: format!("thread {thread}"),
                points: bin_maxima(&points, MAX_LINE_POINTS),
            }
        })
        .collect()
}

/// One lag-study cell's bar values (paper 000, figures 4.1 and 4.5).
#[derive(Debug, Clone, PartialEq)]
pub struct LagBar {
    /// The cell's period.
    pub period_ns: u64,
    /// Its utilization, 0..1.
    pub utilization: f64,
    /// `off`, `paper` or `robust` (`on` for documents before there were two).
    pub controller: String,
    /// Share of lags under 10 us, 0..1.
    pub below_10us: f64,
    /// Share of lags under 20 us, 0..1.
    pub below_20us: f64,
}

/// The lag-study cells in document order.
pub fn lag_bars(run: &RunView) -> Vec<LagBar> {
    array(&run.document, "cells")
        .iter()
        .filter_map(|c| {
            let controller = match c.get("controller_kind").and_then(Value::as_str) {
                Some(kind) => kind.to_string(),
                None if c.get("controller")?.as_bool()? => "on".to_string(),
                None => "off".to_string(),
            };
            Some(LagBar {
                period_ns: c.get("period_ns")?.as_u64()?,
                utilization: c.get("utilization")?.as_f64()?,
                controller,
                below_10us: c.get("below_10us")?.as_f64()?,
                below_20us: c.get("below_20us")?.as_f64()?,
            })
        })
        .collect()
}

/// One job's bar in a Gantt chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GanttBar {
    /// Row: index into [`Gantt::lanes`].
    pub lane: usize,
    /// The job's task, by its place in the document's task order (its
    /// colour; the same as `lane` when lanes are tasks).
    pub task: usize,
    /// The job as stored.
    pub row: JobRow,
    /// Missed ([`JobRow::missed`]): finished after its deadline, aborted
    /// at it, or unfinished with the deadline passed by the end of the run.
    pub missed: bool,
}

/// The jobs of a run as a Gantt chart: one lane per task, or, for a
/// multiprocessor run (a document with `processors`), one lane per
/// processor holding the jobs that finished on it (unfinished ones on the
/// processor they started on, when the run recorded it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gantt {
    /// Task names, one per lane, in the document's task order.
    pub lanes: Vec<String>,
    /// The shown jobs, by release time.
    pub bars: Vec<GanttBar>,
    /// The time axis ends here: the last release, deadline or finish shown.
    pub end_ns: u64,
    /// Jobs recorded in all (more than `bars.len()` when cut).
    pub total_jobs: usize,
}

/// The CPUs a run's jobs ran on, by the numbers its job rows give: a
/// simulation on m processors says `processors` (0..m), a real run on
/// several CPUs `cpus` (the CPU numbers, `--cpus 2,3`); empty on one.
fn run_cpus(doc: &Value) -> Vec<u64> {
    let processors = array(doc, "processors").len();
    if processors > 1 {
        return (0..processors as u64).collect();
    }
    let real: Vec<u64> = array(doc, "cpus")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    if real.len() > 1 {
        return real;
    }
    Vec::new()
}

/// The first [`MAX_GANTT_JOBS`] jobs by release (ties by task order)
/// with their windows release..finish, start and preemptions.
pub fn gantt(run: &RunView) -> Gantt {
    let tasks = task_lanes(run);
    let cpus = run_cpus(&run.document);
    let lanes = if cpus.len() > 1 {
        cpus.iter().map(|c| format!("cpu {c}")).collect()
    } else {
        tasks.clone()
    };
    let ended = run_end_ns(&run.document);
    let mut jobs: Vec<&JobRow> = run.jobs.iter().collect();
    let task_of = |name: &str| tasks.iter().position(|l| l == name).unwrap_or(0);
    let lane_of = |j: &JobRow| match cpus.len() {
        0 | 1 => task_of(&j.task),
        _ => j
            .cpu
            .or(j.start_cpu)
            .and_then(|c| cpus.iter().position(|&p| p == u64::from(c)))
            .unwrap_or(0),
    };
    jobs.sort_by_key(|j| (j.release_ns, task_of(&j.task), j.job));
    let bars: Vec<GanttBar> = jobs
        .iter()
        .take(MAX_GANTT_JOBS)
        .map(|j| GanttBar {
            lane: lane_of(j),
            task: task_of(&j.task),
            row: (*j).clone(),
            missed: j.missed(ended.unwrap_or(0)),
        })
        .collect();
    let end_ns = bars
        .iter()
        .map(|b| b.row.finish_ns.unwrap_or(0).max(b.row.deadline_ns))
        .max()
        .unwrap_or(0);
    Gantt {
        lanes,
        bars,
        end_ns,
        total_jobs: run.jobs.len(),
    }
}

/// Per task, response time (finish - release, ms) of each completed job
/// against its release (s), at most [`MAX_LINE_POINTS`] points each.
pub fn responses(run: &RunView) -> Vec<Line> {
    task_lanes(run)
        .into_iter()
        .filter_map(|task| {
            let mut points: Vec<(f64, f64)> = run
                .jobs
                .iter()
                .filter(|j| j.task == task)
                .filter_map(|j| {
                    let response = j.finish_ns?.checked_sub(j.release_ns)?;
                    Some((j.release_ns as f64 / 1e6, response as f64 / 1e6))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (!points.is_empty()).then(|| Line {
                label: task,
                points: bin_maxima(&points, MAX_LINE_POINTS),
            })
        })
        .collect()
}

/// One task's response times on real threads and in the simulator (ns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealVsSim {
    /// Task name.
    pub task: String,
    /// Mean response, real.
    pub real_mean_ns: Option<u64>,
    /// Mean response, simulated.
    pub sim_mean_ns: Option<u64>,
    /// Max response, real.
    pub real_max_ns: Option<u64>,
    /// Max response, simulated.
    pub sim_max_ns: Option<u64>,
}

/// From `rtlab compare --json`: `tasks[].mean_response_ns` and
/// `max_response_ns`, each `[real, sim]`.
pub fn real_vs_sim(run: &RunView) -> Vec<RealVsSim> {
    let pair = |t: &Value, key: &str, i: usize| t.get(key)?.get(i)?.as_u64();
    array(&run.document, "tasks")
        .iter()
        .filter_map(|t| {
            Some(RealVsSim {
                task: t.get("name")?.as_str()?.to_string(),
                real_mean_ns: pair(t, "mean_response_ns", 0),
                sim_mean_ns: pair(t, "mean_response_ns", 1),
                real_max_ns: pair(t, "max_response_ns", 0),
                sim_max_ns: pair(t, "max_response_ns", 1),
            })
        })
        .collect()
}

/// From `rtlab sweep --json`: per test (in `tests` order), the accepted
/// ratio (0..1) against utilization, divided by the processors `cpus` when
/// the document has them (the U/m axis of multiprocessor papers).
pub fn sweep_curves(run: &RunView) -> Vec<Line> {
    let rows = array(&run.document, "rows");
    let cpus = sweep_cpus(run) as f64;
    array(&run.document, "tests")
        .iter()
        .filter_map(Value::as_str)
        .map(|test| Line {
            label: test.to_string(),
            points: rows
                .iter()
                .filter_map(|r| {
                    Some((
                        r.get("utilization")?.as_f64()? / cpus,
                        r.get("ratio")?.get(test)?.as_f64()?,
                    ))
                })
                .collect(),
        })
        .collect()
}

/// The processors of a sweep document (`cpus`, absent on one).
pub fn sweep_cpus(run: &RunView) -> u64 {
    run.document
        .get("cpus")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1)
}

/// A task's worst-case response time under one policy and its deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseBound {
    /// Task name.
    pub task: String,
    /// Priority policy (`rm`, `dm`, ...), or the test of a multiprocessor
    /// analysis (`gedf:rta`, ...).
    pub policy: String,
    /// Exact worst-case response time, or the test's bound (`None`: above
    /// D, not proven, or not computed).
    pub wcrt_ns: Option<u64>,
    /// Relative deadline.
    pub deadline_ns: u64,
}

/// From `rtlab analyze --json`: `tasks[]` of every fixed-priority policy
/// (EDF has no per-task response time there), or on m processors every
/// task's bound per response-time test (`response_ns`).
pub fn response_bounds(run: &RunView) -> Vec<ResponseBound> {
    let mut out = Vec::new();
    for t in array(&run.document, "tasks") {
        let (Some(task), Some(deadline_ns)) = (
            t.get("name").and_then(Value::as_str),
            t.get("deadline_ns").and_then(Value::as_u64),
        ) else {
            continue;
        };
        let bound = |policy: &str, wcrt_ns: Option<u64>| ResponseBound {
            task: task.to_string(),
            policy: policy.to_string(),
            wcrt_ns,
            deadline_ns,
        };
        // A multiprocessor analysis: a bound per response-time test.
        if let Some(per_test) = t.get("response_ns").and_then(Value::as_object) {
            out.extend(per_test.iter().map(|(test, r)| bound(test, r.as_u64())));
        } else if let Some(policy) = t.get("policy").and_then(Value::as_str) {
            if policy != "edf" {
                out.push(bound(policy, t.get("wcrt_ns").and_then(Value::as_u64)));
            }
        }
    }
    out
}

/// Breakdown utilization against the tick.
#[derive(Debug, Clone, PartialEq)]
pub struct Breakdown {
    /// Per policy with overheads: (tick in ms, breakdown utilization 0..1);
    /// a tickless entry is at tick 0.
    pub curves: Vec<Line>,
    /// Per policy, the ideal breakdown utilization (no overheads).
    pub ideal: Vec<(String, f64)>,
}

/// From `rtlab analyze --breakdown --json`: `breakdown[]`, entries whose
/// `utilization` is null (no schedulable scale) left out.
pub fn breakdown(run: &RunView) -> Breakdown {
    let mut curves: Vec<Line> = Vec::new();
    let mut ideal = Vec::new();
    for b in array(&run.document, "breakdown") {
        let (Some(policy), Some(u)) = (
            b.get("policy").and_then(Value::as_str),
            b.get("utilization").and_then(Value::as_f64),
        ) else {
            continue;
        };
        match b.get("overheads").and_then(Value::as_str) {
            None => ideal.push((policy.to_string(), u)),
            Some(overheads) => {
                let tick_ms = b.get("tick_ns").and_then(Value::as_u64).unwrap_or(0) as f64 / 1e6;
                let label = format!("{policy} with {overheads}");
                match curves.iter_mut().find(|c| c.label == label) {
                    Some(curve) => curve.points.push((tick_ms, u)),
                    None => curves.push(Line {
                        label,
                        points: vec![(tick_ms, u)],
                    }),
                }
            }
        }
    }
    for curve in &mut curves {
        curve.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Breakdown { curves, ideal }
}

/// From `rtlab breakdown --json`: breakdown utilization (0..1) against the
/// time scale, one line each for the ideal, overhead-aware, simulated and
/// measured breakdowns, in that order; scales where one is missing (null)
/// leave that point out.
pub fn breakdown_vs_time_scale(run: &RunView) -> Vec<Line> {
    let kinds = [
        ("ideal (analysis)", "/ideal/utilization"),
        ("overhead-aware (analysis)", "/overhead_aware/utilization"),
        ("simulated", "/simulated/utilization"),
        ("measured", "/measured/utilization"),
    ];
    let mut lines: Vec<Line> = kinds
        .iter()
        .map(|(label, _)| Line {
            label: (*label).to_string(),
            points: Vec::new(),
        })
        .collect();
    for scale in array(&run.document, "scales") {
        let Some(x) = scale.get("time_scale").and_then(Value::as_f64) else {
            continue;
        };
        for (line, (_, pointer)) in lines.iter_mut().zip(kinds) {
            if let Some(u) = scale.pointer(pointer).and_then(Value::as_f64) {
                line.points.push((x, u));
            }
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines.retain(|l| !l.points.is_empty());
    lines
}

/// `points` cut into at most `max` consecutive bins of equal count (the
/// last one shorter), each giving its point of largest y (the first on
/// ties); unchanged when it is short enough.
pub fn bin_maxima(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max == 0 {
        return points.to_vec();
    }
    let per_bin = points.len().div_ceil(max);
    points
        .chunks(per_bin)
        .filter_map(|bin| {
            bin.iter()
                .copied()
                .reduce(|best, p| if p.1 > best.1 { p } else { best })
        })
        .collect()
}

/// Task names in the document's order (`tasks[].name`), then any others
/// the job rows name, in order of first appearance.
fn task_lanes(run: &RunView) -> Vec<String> {
    let tasks = match run.document.get("real") {
        Some(real) => array(real, "tasks"),
        None => array(&run.document, "tasks"),
    };
    let mut lanes: Vec<String> = tasks
        .iter()
        .filter_map(|t| Some(t.get("name")?.as_str()?.to_string()))
        .collect();
    lanes.dedup();
    for job in &run.jobs {
        if !lanes.contains(&job.task) {
            lanes.push(job.task.clone());
        }
    }
    lanes
}

/// How long the run lasted: `ended_ns` (real runs) or `duration_ns`
/// (simulations), also inside a comparison's `real`.
fn run_end_ns(document: &Value) -> Option<u64> {
    rtlab_store::run_end_ns(document)
}

/// Samples grouped per thread, threads in increasing order, each in
/// stored order.
fn by_thread(samples: &[SampleRow]) -> Vec<(u32, Vec<&SampleRow>)> {
    let mut threads: std::collections::BTreeMap<u32, Vec<&SampleRow>> = Default::default();
    for s in samples {
        threads.entry(s.thread).or_default().push(s);
    }
    threads.into_iter().collect()
}

/// `doc[key]` as a slice, empty when absent or not an array.
/// Grouped bars: per group (x label), one value per series (`None`: no
/// bar), and the series' names.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    /// (group label, one value per series).
    pub groups: Vec<(String, Vec<Option<f64>>)>,
    /// Series names (legend).
    pub names: Vec<String>,
}

/// `rtlab hartstone`'s bars: one group per test, one bar per scheduler or
/// policy (`label`), the value `metric` of each test's entry. The document
/// lists per run `{ "label", "tests": [ { "test": 1, METRIC, ... } ] }`
/// under `runs` (the PH series) or `extended_runs` (the extended
/// Hartstone, entries under `results`).
pub fn hartstone_bars(run: &RunView, extended: bool, metric: &str) -> Bars {
    let (key, entries) = if extended {
        ("extended_runs", "results")
    } else {
        ("runs", "tests")
    };
    let runs = array(&run.document, key);
    let mut tests: Vec<u64> = runs
        .iter()
        .flat_map(|r| array(r, entries))
        .filter_map(|e| e.get("test")?.as_u64())
        .collect();
    tests.sort_unstable();
    tests.dedup();
    let names = runs
        .iter()
        .map(|r| {
            r.get("label")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    let groups = tests
        .iter()
        .map(|&test| {
            let values = runs
                .iter()
                .map(|r| {
                    array(r, entries)
                        .iter()
                        .find(|e| e.get("test").and_then(Value::as_u64) == Some(test))?
                        .get(metric)?
                        .as_f64()
                })
                .collect();
            (format!("test {test}"), values)
        })
        .collect();
    Bars { groups, names }
}

/// A study section's worlds: `sim`, and with `--real` the simulation of
/// the real runs (`real-sim`) and the real runs (`real`; null without).
fn study_worlds(part: &Value) -> [(&'static str, &Value); 3] {
    [
        ("sim", &part["simulated"]),
        ("real-sim", &part["real"]["simulated"]),
        ("real", &part["real"]["measured"]),
    ]
}

/// The index of the group named `name`, appended (empty) when new, so
/// groups keep the order in which they first appear.
fn group_index(groups: &mut Vec<(String, Vec<Line>)>, name: &str) -> usize {
    match groups.iter().position(|(n, _)| n == name) {
        Some(i) => i,
        None => {
            groups.push((name.to_string(), Vec::new()));
            groups.len() - 1
        }
    }
}

/// `rtlab study edf-vs-fps`: per task-set type, the share of sets
/// schedulable (in percent) against the load, for EDF and FPS, in each
/// world of the document (`sim`; with `--real`, `real` and the simulation
/// of the same sets, `real-sim`). Returns (type name, lines) in the
/// document's type order.
pub fn study_schedulable(run: &RunView) -> Vec<(String, Vec<Line>)> {
    let mut out: Vec<(String, Vec<Line>)> = Vec::new();
    for (world, section) in study_worlds(&run.document["utilization"]) {
        for row in array(section, "types") {
            let name = row["name"].as_str().unwrap_or("?");
            let index = group_index(&mut out, name);
            for (scheduler, key) in [("EDF", "edf_schedulable"), ("FPS", "fps_schedulable")] {
                let points = array(row, "curve")
                    .iter()
                    .filter_map(|p| Some((p["load"].as_f64()?, p[key].as_f64()? * 100.0)))
                    .collect();
                out[index].1.push(Line {
                    label: format!("{scheduler} {world}"),
                    points,
                });
            }
        }
    }
    out
}

/// The study's overload section: per profile, total misses against load
/// (percent), one line per scheduler and world (`sim`, and with `--real`
/// `real-sim` and `real`).
pub fn study_overload(run: &RunView) -> Vec<(String, Vec<Line>)> {
    let mut out: Vec<(String, Vec<Line>)> = Vec::new();
    for (world, section) in study_worlds(&run.document["overload"]) {
        for row in array(section, "rows") {
            let (Some(profile), Some(scheduler), Some(load), Some(misses)) = (
                row["profile"].as_str(),
                row["scheduler"].as_str(),
                row["load_pct"].as_f64(),
                row["misses"].as_f64(),
            ) else {
                continue;
            };
            let index = group_index(&mut out, profile);
            let label = format!("{} {world}", scheduler.to_uppercase());
            let lines = &mut out[index].1;
            match lines.iter_mut().find(|l| l.label == label) {
                Some(line) => line.points.push((load, misses)),
                None => lines.push(Line {
                    label,
                    points: vec![(load, misses)],
                }),
            }
        }
    }
    out
}

/// The study's locking section: cumulative lock overhead (µs) against the
/// procedure's length (ms), one line per protocol.
pub fn study_locking(run: &RunView) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for row in array(&run.document["locking"], "rows") {
        let (Some(protocol), Some(length), Some(overhead)) = (
            row["protocol"].as_str(),
            row["length_ns"].as_f64(),
            row["overhead_ns"].as_f64(),
        ) else {
            continue;
        };
        let label = protocol.to_uppercase();
        let point = (length / 1e6, overhead / 1e3);
        match lines.iter_mut().find(|l| l.label == label) {
            Some(line) => line.points.push(point),
            None => lines.push(Line {
                label,
                points: vec![point],
            }),
        }
    }
    lines
}

fn array<'a>(doc: &'a Value, key: &str) -> &'a [Value] {
    doc.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A run's stored schedule window drawn as lanes: the real (kernel)
/// schedule's rows first, then the simulated ones, each in the order they
/// were saved; jobs coloured by task, the same task the same colour in
/// both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleChart<'a> {
    /// Lane names: `real CPU 1`, `real CPU 1 interrupts`, `real t1
    /// throttled`, `sim CPU 1`, ...
    pub lanes: Vec<String>,
    /// Task names by colour index (the order their jobs first appear).
    pub tasks: Vec<String>,
    /// The window: from the first span's start to the last span's end (ns).
    pub from_ns: u64,
    /// See `from_ns`.
    pub to_ns: u64,
    /// Each span with its lane and, for a job, its task's colour index.
    pub spans: Vec<(usize, Option<usize>, &'a ScheduleSpan)>,
}

/// A simulated schedule window as lanes (`rtlab sim --gantt`): its rows
/// in order, jobs coloured by task (a row named after a task, in row order,
/// keeps that task's colour; other tasks in the order they appear).
pub fn window_chart(window: &ScheduleWindow) -> ScheduleChart<'_> {
    let mut tasks: Vec<String> = Vec::new();
    for row in &window.rows {
        if window
            .spans
            .iter()
            .any(|s| s.kind == SpanKind::Job && s.label == *row)
        {
            tasks.push(row.clone());
        }
    }
    let spans = window
        .spans
        .iter()
        .filter_map(|s| {
            let lane = window.rows.iter().position(|r| *r == s.row)?;
            let task = (s.kind == SpanKind::Job).then(|| {
                tasks.iter().position(|t| *t == s.label).unwrap_or_else(|| {
                    tasks.push(s.label.clone());
                    tasks.len() - 1
                })
            });
            Some((lane, task, s))
        })
        .collect();
    ScheduleChart {
        lanes: window.rows.clone(),
        tasks,
        from_ns: window.from_ns,
        to_ns: window.to_ns,
        spans,
    }
}

/// The schedule window of `run`, or `None` when it has no real side (a
/// run with `--policy other` has no simulated side: the simulator has no
/// model of CFS/EEVDF).
pub fn schedule_chart(run: &RunView) -> Option<ScheduleChart<'_>> {
    if !run.schedule.iter().any(|s| s.source == SpanSource::Real) {
        return None;
    }
    let mut lanes: Vec<String> = Vec::new();
    let mut tasks: Vec<String> = Vec::new();
    let mut spans = Vec::with_capacity(run.schedule.len());
    for src in [SpanSource::Real, SpanSource::Sim] {
        for s in run.schedule.iter().filter(|s| s.source == src) {
            let lane = format!("{} {}", src.as_str(), s.row);
            let lane = match lanes.iter().position(|l| *l == lane) {
                Some(i) => i,
                None => {
                    lanes.push(lane);
                    lanes.len() - 1
                }
            };
            let task = (s.kind == SpanKind::Job).then(|| {
                tasks.iter().position(|t| *t == s.label).unwrap_or_else(|| {
                    tasks.push(s.label.clone());
                    tasks.len() - 1
                })
            });
            spans.push((lane, task, s));
        }
    }
    Some(ScheduleChart {
        lanes,
        tasks,
        from_ns: run.schedule.iter().map(|s| s.start_ns).min().unwrap_or(0),
        to_ns: run.schedule.iter().map(|s| s.end_ns).max().unwrap_or(0),
        spans,
    })
}
