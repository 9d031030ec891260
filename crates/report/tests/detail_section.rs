//! The report's detail section, item by item of issue 36 (6): rows in
//! reading order, numbers in units, tables that fit the page, distinct bar
//! labels, a multiprocessor analysis with its verdict, plot and per-task
//! bounds, a 2-CPU real run's Gantt chart per CPU, the response-time axis
//! in the Gantt chart's unit, the latency histogram up to the maximum.

mod fixtures;

use fixtures::{job, sample, view};
use rtlab_report::figures::figures;
use rtlab_report::headline;
use rtlab_report::html::{render_html, MAX_TABLE_COLUMNS};
use rtlab_report::series;
use serde_json::json;

/// A real run as `rtlab run --json` writes it: every per-task field.
fn real_run(cpus: Option<&[u64]>) -> rtlab_report::view::RunView {
    let task = |name: &str| {
        json!({
            "aborted": 0, "completed": 10, "context_switches": 20, "cpus": cpus, "first_miss_ns": null,
            "kernel_migrations": 3, "max_blocked_ns": null, "max_lag_ns": 20_100_000,
            "max_lateness_ns": -59_890_000, "max_response_ns": 40_110_000, "mean_lag_ns": 4_605_000,
            "mean_response_ns": 24_610_000, "migrations": 0, "min_response_ns": 20_040_000,
            "misses": 0, "name": name, "preemptions": 0, "released": 10, "skipped": 0,
            "start_deadline_misses": 0, "thread_policy": "SCHED_DEADLINE runtime 21ms deadline 100ms period 100ms reclaim",
            "unfinished": 0, "voluntary_switches": 10
        })
    };
    let mut doc = json!({
        "aborted": 0, "completed": 20, "context_switches": 27, "deadline_misses": 0,
        "duration_ns": 1_000_000_000u64, "ended_ns": 1_000_000_000u64, "interrupted": false,
        "peak_rss_bytes": 68_694_016u64, "policy": "gedf", "released": 20, "skipped": 0,
        "start_deadline_misses": 0, "taskset": "pair",
        "tasks": [task("light1"), task("light2")]
    });
    if let Some(cpus) = cpus {
        doc["cpus"] = json!(cpus);
    }
    view(1, "run", doc)
}

/// The text of `html` between `from` and the next `</table>`.
fn table_after<'h>(html: &'h str, from: &str) -> &'h str {
    let start = html
        .find(from)
        .unwrap_or_else(|| panic!("no {from} in the page"));
    let rest = &html[start..];
    &rest[..rest.find("</table>").unwrap_or(rest.len())]
}

#[test]
fn summary_rows_and_columns_are_in_reading_order() {
    let html = render_html(&[real_run(None)]);
    let summary = table_after(&html, "<summary>Summary");
    let at = |what: &str| {
        summary
            .find(&format!("<th>{what}</th>"))
            .unwrap_or_else(|| panic!("no {what} row"))
    };
    // Alphabetical order put `aborted` first.
    assert!(at("taskset") < at("deadline misses"));
    assert!(at("deadline misses") < at("released"));
    assert!(at("released") < at("aborted"));
    // Latency percentiles: p99 before p999.
    let latency = view(
        2,
        "latency",
        json!({"threads": [{"thread": 0, "min_ns": 1, "avg_ns": 2, "p50_ns": 3, "p99_ns": 4, "p999_ns": 5, "max_ns": 6}]}),
    );
    let html = render_html(&[latency]);
    let threads = table_after(&html, "<summary>threads");
    let col = |what: &str| threads.find(&format!("<th>{what}</th>")).unwrap();
    assert!(col("min") < col("avg") && col("avg") < col("p50"));
    assert!(col("p50") < col("p99") && col("p99") < col("p999") && col("p999") < col("max"));
}

#[test]
fn numbers_are_in_their_units() {
    let html = render_html(&[real_run(None)]);
    assert!(
        html.contains("<th>peak rss</th><td>65.51 MiB</td>"),
        "{html}"
    );
    assert!(!html.contains("68694016"));
}

#[test]
fn a_wide_table_shows_the_reading_columns_and_folds_every_field() {
    let html = render_html(&[real_run(Some(&[0, 1]))]);
    let tasks = table_after(&html, "<summary>tasks");
    let columns = tasks.matches("<th>").count();
    assert!(columns <= MAX_TABLE_COLUMNS, "{columns} columns: {tasks}");
    for first in [
        "name",
        "misses",
        "min response",
        "mean response",
        "max response",
    ] {
        assert!(
            tasks.contains(&format!("<th>{first}</th>")),
            "{first}: {tasks}"
        );
    }
    // Columns where every value is 0 tell nothing: folded away.
    assert!(!tasks.contains("<th>aborted</th>"));
    let every = table_after(&html, "<summary>every field");
    assert!(every.contains("<th>aborted</th>") && every.contains("<th>thread policy</th>"));
}

#[test]
fn a_multiprocessor_analysis_gets_its_verdict_plot_and_per_task_bounds() {
    let run = view(
        3,
        "analyze",
        json!({
            "origin": "builtin:dhall", "processors": 2, "taskset": "dhall", "utilization": 1.03,
            "tasks": [
                {"cpu": null, "deadline_ns": 100_000_000, "name": "light", "period_ns": 100_000_000,
                 "response_ns": {"gedf:rta": 4_030_006, "gfp-dkc:rta": 2_000_000}, "wcet_ns": 2_000_000},
                {"cpu": null, "deadline_ns": 101_000_000, "name": "heavy", "period_ns": 101_000_000,
                 "response_ns": {"gedf:rta": null, "gfp-dkc:rta": 100_000_000}, "wcet_ns": 100_000_000}
            ],
            "tests": [
                {"paper": "Bertogna & Cirinei 2007", "schedulable": null, "test": "gedf:rta"},
                {"paper": "Bertogna & Cirinei 2007", "schedulable": true, "test": "gfp-dkc:rta"}
            ]
        }),
    );
    let verdict = headline::of(&run).verdict.expect("a verdict");
    assert_eq!(
        verdict.text,
        "schedulable under gfp-dkc; no verdict under gedf"
    );
    let plots: Vec<String> = figures(&run).into_iter().map(|f| f.title).collect();
    assert_eq!(plots, ["Response times vs deadlines"]);
    let bounds = series::response_bounds(&run);
    assert_eq!(bounds.len(), 4);
    assert!(bounds
        .iter()
        .any(|b| b.task == "heavy" && b.policy == "gfp-dkc:rta" && b.wcrt_ns == Some(100_000_000)));
    let html = render_html(&[run]);
    let tasks = table_after(&html, "<summary>tasks");
    assert!(tasks.contains("<th>response gedf:rta</th>"), "{tasks}");
    assert!(
        tasks.contains("4.03 ms") && tasks.contains("100 ms"),
        "{tasks}"
    );
}

#[test]
fn a_real_run_on_two_cpus_is_drawn_per_cpu() {
    let mut run = real_run(Some(&[2, 3]));
    let on = |mut j: rtlab_report::view::JobRow, cpu: u32| {
        j.cpu = Some(cpu);
        j
    };
    run.jobs = vec![
        on(
            job("light1", 0, 0, 100_000_000, Some(0), Some(20_000_000), 0),
            3,
        ),
        on(
            job("light2", 0, 0, 100_000_000, Some(0), Some(20_000_000), 0),
            2,
        ),
    ];
    let g = series::gantt(&run);
    assert_eq!(g.lanes, ["cpu 2", "cpu 3"]);
    let lanes: Vec<(usize, &str)> = g
        .bars
        .iter()
        .map(|b| (b.lane, b.row.task.as_str()))
        .collect();
    assert_eq!(lanes, [(1, "light1"), (0, "light2")]);
}

#[test]
fn response_times_are_in_ms_against_the_release_in_ms() {
    let mut run = real_run(None);
    run.jobs = vec![job(
        "light1",
        0,
        100_000_000,
        200_000_000,
        Some(100_000_000),
        Some(120_000_000),
        0,
    )];
    let lines = series::responses(&run);
    assert_eq!(lines[0].points, [(100.0, 20.0)]);
}

#[test]
fn the_latency_histogram_reaches_the_maximum() {
    // Buckets up to 290 us, a wake-up of 28.8 ms among the overflows.
    let doc = json!({"threads": [{
        "thread": 0, "max_ns": 28_800_000, "histogram_overflows": 2,
        "histogram_us": [[20, 50], [290, 1]]
    }]});
    let run = view(4, "latency", doc.clone());
    let h = series::latency_histograms(&run);
    assert_eq!(h[0].buckets, [(20, 50), (290, 1), (28_800, 2)]);
    // With the run's samples, they give the tail as measured.
    let mut run = view(4, "latency", doc);
    run.samples = vec![
        sample(0, 0, 1_000_000, 20_500),
        sample(0, 1, 2_000_000, 1_500_000),
        sample(0, 2, 3_000_000, 28_800_000),
    ];
    let h = series::latency_histograms(&run);
    assert_eq!(h[0].buckets, [(20, 1), (1_500, 1), (28_800, 1)]);
    // Drawn on a logarithmic latency axis that reaches it.
    let svg = rtlab_report::plot::latency_histogram(&h).unwrap();
    assert!(svg.contains("wake-up latency (us, log)"));
}
