//! The data behind each plot, exactly, for small hand-made runs: what the
//! report draws is what the documents and rows say.

mod fixtures;

use rtlab_report::view::RunView;

use rtlab_report::series::{
    self, bin_maxima, Gantt, GanttBar, Histogram, LagBar, Line, RealVsSim, ResponseBound,
};

#[test]
fn latency_histograms_come_from_the_document_without_empty_buckets() {
    assert_eq!(
        series::latency_histograms(&fixtures::latency()),
        vec![
            Histogram {
                label: "thread 0".into(),
                buckets: vec![(3, 5), (12, 1)]
            },
            Histogram {
                label: "thread 1".into(),
                buckets: vec![(4, 2), (5, 7)]
            },
        ]
    );
}

#[test]
fn latency_histograms_fall_back_to_the_samples() {
    let mut run = fixtures::latency();
    run.document = serde_json::json!({"threads": [{"thread": 0}]});
    assert_eq!(
        series::latency_histograms(&run),
        vec![
            Histogram {
                label: "thread 0".into(),
                buckets: vec![(3, 1), (12, 1)]
            },
            Histogram {
                label: "thread 1".into(),
                buckets: vec![(4, 1), (5, 1)]
            },
        ]
    );
}

#[test]
fn latency_over_time_is_per_thread_in_seconds_and_microseconds() {
    assert_eq!(
        series::latency_over_time(&fixtures::latency()),
        vec![
            Line {
                label: "thread 0".into(),
                points: vec![(0.001, 3.5), (0.002, 12.25)]
            },
            Line {
                label: "thread 1".into(),
                points: vec![(0.001, 4.0), (0.0025, 5.0)]
            },
        ]
    );
}

#[test]
fn long_lines_keep_each_bins_maximum() {
    let points: Vec<(f64, f64)> = (0..10)
        .map(|i| (i as f64, [1.0, 9.0, 2.0][i % 3]))
        .collect();
    assert_eq!(
        bin_maxima(&points, 4),
        vec![(1.0, 9.0), (4.0, 9.0), (7.0, 9.0), (9.0, 1.0)]
    );
    assert_eq!(bin_maxima(&points, 10), points);
    let long: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, 0.0)).collect();
    assert!(bin_maxima(&long, series::MAX_LINE_POINTS).len() <= series::MAX_LINE_POINTS);
}

#[test]
fn lag_bars_are_the_cells_shares() {
    let bars = series::lag_bars(&fixtures::lag_study());
    assert_eq!(bars.len(), 4);
    assert_eq!(
        bars[1],
        LagBar {
            period_ns: 1_000_000,
            utilization: 0.5,
            controller: "robust".into(),
            below_10us: 0.875,
            below_20us: 1.0
        }
    );
    assert_eq!(bars[2].controller, "off");
}

#[test]
fn gantt_orders_jobs_by_release_and_marks_misses() {
    let run = fixtures::run();
    let g = series::gantt(&run);
    assert_eq!(
        g,
        Gantt {
            lanes: vec!["<b>t1</b>&".into(), "t2".into()],
            bars: vec![
                GanttBar {
                    lane: 0,
                    task: 0,
                    row: run.jobs[1].clone(),
                    missed: false
                },
                GanttBar {
                    lane: 1,
                    task: 1,
                    row: run.jobs[0].clone(),
                    missed: true
                },
                // Never started, deadline 15 ms passed before the 20 ms end.
                GanttBar {
                    lane: 0,
                    task: 0,
                    row: run.jobs[2].clone(),
                    missed: true
                },
            ],
            end_ns: 15_000_000,
            total_jobs: 3,
        }
    );
}

#[test]
fn gantt_keeps_the_earliest_jobs_only() {
    let mut run = fixtures::run();
    run.jobs = (0..1000u64)
        .rev()
        .map(|k| {
            fixtures::job(
                "t2",
                k,
                k * 1000,
                k * 1000 + 500,
                Some(k * 1000),
                Some(k * 1000 + 100),
                0,
            )
        })
        .collect();
    let g = series::gantt(&run);
    assert_eq!(g.bars.len(), series::MAX_GANTT_JOBS);
    assert_eq!(g.total_jobs, 1000);
    assert_eq!(
        g.bars.last().map(|b| b.row.job),
        Some(series::MAX_GANTT_JOBS as u64 - 1)
    );
}

#[test]
fn responses_are_per_task_completed_jobs() {
    assert_eq!(
        series::responses(&fixtures::run()),
        vec![
            Line {
                label: "<b>t1</b>&".into(),
                points: vec![(0.0, 2.0)]
            },
            Line {
                label: "t2".into(),
                points: vec![(0.0, 12.0)]
            },
        ]
    );
}

#[test]
fn real_vs_sim_reads_the_pairs() {
    assert_eq!(
        series::real_vs_sim(&fixtures::compare()),
        vec![
            RealVsSim {
                task: "t1".into(),
                real_mean_ns: Some(2_050_000),
                sim_mean_ns: Some(2_000_000),
                real_max_ns: Some(2_100_000),
                sim_max_ns: Some(2_000_000)
            },
            RealVsSim {
                task: "t2".into(),
                real_mean_ns: Some(6_000_000),
                sim_mean_ns: Some(5_000_000),
                real_max_ns: Some(7_000_000),
                sim_max_ns: None
            },
        ]
    );
}

#[test]
fn sweep_curves_follow_the_test_order() {
    assert_eq!(
        series::sweep_curves(&fixtures::sweep()),
        vec![
            Line {
                label: "rm:rta".into(),
                points: vec![(0.5, 1.0), (0.75, 0.75), (1.0, 0.0)]
            },
            Line {
                label: "edf:edf-demand".into(),
                points: vec![(0.5, 1.0), (0.75, 1.0), (1.0, 0.5)]
            },
        ]
    );
}

#[test]
fn the_sweep_gap_runs_from_the_best_test_to_the_best_simulation() {
    assert!(
        series::sweep_gap(&fixtures::sweep()).is_empty(),
        "no :sim column"
    );
    let doc = serde_json::json!({
        "cpus": 2,
        "tests": ["gedf:bcl", "gedf:rta", "gedf:sim"],
        "rows": [
            {"utilization": 1.0, "ratio": {"gedf:bcl": 1.0, "gedf:rta": 1.0, "gedf:sim": 1.0}},
            {"utilization": 1.5, "ratio": {"gedf:bcl": 0.25, "gedf:rta": 0.5, "gedf:sim": 0.75}},
            {"utilization": 2.0, "ratio": {"gedf:bcl": 0.0, "gedf:rta": 0.0, "gedf:sim": 0.25}}
        ]
    });
    let run = RunView::unsaved("sweep", doc);
    assert_eq!(
        series::sweep_gap(&run),
        vec![(0.5, 1.0, 1.0), (0.75, 0.5, 0.75), (1.0, 0.0, 0.25)]
    );
    let figure = &rtlab_report::figures::figures(&run)[0];
    let svg = figure.svg.as_ref().unwrap();
    assert!(
        svg.contains("simulated, proved by no test"),
        "the band's legend"
    );
    assert!(figure.caption.contains("grey band"), "{}", figure.caption);
}

#[test]
fn response_bounds_leave_out_edf() {
    assert_eq!(
        series::response_bounds(&fixtures::analyze()),
        vec![
            ResponseBound {
                task: "a".into(),
                policy: "rm".into(),
                wcrt_ns: Some(1_000_000),
                deadline_ns: 4_000_000
            },
            ResponseBound {
                task: "b".into(),
                policy: "rm".into(),
                wcrt_ns: None,
                deadline_ns: 5_000_000
            },
        ]
    );
}

#[test]
fn breakdown_is_sorted_by_tick_with_tickless_at_zero() {
    let b = series::breakdown(&fixtures::analyze());
    assert_eq!(
        b.curves,
        vec![Line {
            label: "rm with rtmach".into(),
            points: vec![(0.0, 0.88), (1.0, 0.85), (2.0, 0.8)]
        }]
    );
    assert_eq!(b.ideal, vec![("rm".to_string(), 0.9)]);
}

#[test]
fn hartstone_bars_group_by_test_with_one_bar_per_run() {
    let doc = serde_json::json!({ "runs": [
        { "label": "sim edf", "tests": [
            { "test": 1, "iterations_completed": 31 },
            { "test": 4, "iterations_completed": 8 } ] },
        { "label": "real rm", "tests": [
            { "test": 4, "iterations_completed": 6 } ] } ] });
    let run = RunView::unsaved("hartstone", doc);
    let bars = series::hartstone_bars(&run, false, "iterations_completed");
    assert_eq!(bars.names, vec!["sim edf", "real rm"]);
    assert_eq!(
        bars.groups,
        vec![
            ("test 1".to_string(), vec![Some(31.0), None]),
            ("test 4".to_string(), vec![Some(8.0), Some(6.0)]),
        ]
    );
    let figures = rtlab_report::figures::figures(&run);
    assert_eq!(figures.len(), 2);
    assert!(figures[0].svg.as_ref().unwrap().contains("sim edf"));
    let empty = RunView::unsaved("hartstone", serde_json::json!({ "extended": true }));
    assert!(series::hartstone_bars(&empty, true, "misses")
        .groups
        .is_empty());
}

#[test]
fn breakdown_vs_time_scale_has_one_line_per_breakdown_in_scale_order() {
    use rtlab_report::view::RunView;
    let scale = |x: f64, ideal: f64, measured: Option<f64>| {
        serde_json::json!({
            "time_scale": x,
            "ideal": {"alpha": 1.1, "utilization": ideal},
            "overhead_aware": null,
            "simulated": {"utilization": ideal - 0.01},
            "measured": {"utilization": measured},
        })
    };
    let run = RunView::unsaved(
        "breakdown",
        serde_json::json!({"scales": [scale(0.05, 0.9, Some(0.85)), scale(0.01, 0.9, None)]}),
    );
    assert_eq!(
        series::breakdown_vs_time_scale(&run),
        vec![
            Line {
                label: "ideal (analysis)".into(),
                points: vec![(0.01, 0.9), (0.05, 0.9)]
            },
            Line {
                label: "simulated".into(),
                points: vec![(0.01, 0.89), (0.05, 0.89)]
            },
            Line {
                label: "measured".into(),
                points: vec![(0.05, 0.85)]
            },
        ]
    );
    let figure = rtlab_report::figures::main_plot(&run).unwrap();
    assert!(figure.svg.unwrap().contains("measured"));
}
