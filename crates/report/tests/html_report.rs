//! The HTML report: self-contained, escaped, one figure per plot with
//! drawn marks.

mod fixtures;

use rtlab_report::figures::figures;
use rtlab_report::html::render_html;
use rtlab_report::plot::PALETTE;

/// Elements of `svg` drawn opaque in a series colour (fill or stroke):
/// the data marks, not the legend's samples.
pub fn marks(svg: &str) -> usize {
    let colours: Vec<String> = PALETTE
        .iter()
        .map(|c| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2))
        .collect();
    svg.split('<')
        .filter(|el| {
            let head = el.split('>').next().unwrap_or("");
            ["rect", "polyline", "circle", "path", "line", "polygon"]
                .iter()
                .any(|t| head.starts_with(t))
                && head.contains("opacity=\"1\"")
                && colours
                    .iter()
                    .any(|c| head.to_ascii_uppercase().contains(c))
        })
        .count()
}

#[test]
fn every_run_kind_gets_its_plots_with_marks() {
    let expected = [
        ("latency", vec!["Latency histogram", "Latency over time"]),
        ("lag-study", vec!["Lags under 10 us", "Lags under 20 us"]),
        ("run", vec!["Gantt chart", "Response times"]),
        (
            "compare",
            vec!["Gantt chart", "Response times", "Real vs simulated"],
        ),
        ("sweep", vec!["Schedulability ratio"]),
        (
            "analyze",
            vec![
                "Response times vs deadlines",
                "Breakdown utilization vs tick",
            ],
        ),
    ];
    for (run, (kind, titles)) in fixtures::all().iter().zip(expected) {
        assert_eq!(run.kind, kind);
        let figs = figures(run);
        let got: Vec<&str> = figs.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(got, titles, "{kind}");
        for f in &figs {
            let svg = f
                .svg
                .as_ref()
                .unwrap_or_else(|e| panic!("{kind} {}: {e}", f.title));
            assert!(svg.starts_with("<svg"), "{kind} {}", f.title);
            assert!(
                marks(svg) > 0,
                "{kind} {}: no series marks in {svg}",
                f.title
            );
        }
    }
}

#[test]
fn a_plot_without_data_has_no_marks() {
    let mut run = fixtures::sweep();
    run.document = serde_json::json!({"tests": ["rm:rta"], "rows": []});
    let svg = figures(&run).remove(0).svg.unwrap();
    assert_eq!(
        marks(&svg),
        0,
        "the mark counter must not count axes: {svg}"
    );
}

#[test]
fn names_from_documents_are_escaped_everywhere() {
    let html = render_html(&fixtures::all());
    assert!(
        !html.contains("<b>t1</b>"),
        "a raw task name reached the page"
    );
    assert!(html.contains("&lt;b&gt;t1&lt;/b&gt;&amp;"));
    assert!(!html.contains("<script"), "no script in the report");
    for remote in ["http://", "https://", "src=", "@import"] {
        let outside_svg_namespace = html
            .replace("http://www.w3.org/2000/svg", "")
            .replace("http://www.w3.org/1999/xlink", "");
        assert!(
            !outside_svg_namespace.contains(remote),
            "`{remote}` would fetch something"
        );
    }
}

#[test]
fn the_report_has_host_summary_tables_and_every_figure() {
    let runs = fixtures::all();
    let html = render_html(&runs);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<h2>Host</h2>") && html.contains("PREEMPT_DYNAMIC"));
    assert!(html.contains("@media print"));
    let figures_total: usize = runs.iter().map(|r| figures(r).len()).sum();
    assert_eq!(
        html.matches("<figure class=\"plot\">").count(),
        figures_total
    );
    assert_eq!(html.matches("<svg").count(), figures_total);
    assert_eq!(html.matches("<section class=\"run\"").count(), runs.len());
    // The run's summary and per-task table.
    assert!(html.contains("<th>deadline_misses</th><td>2</td>"));
    assert!(html.contains("<td class=\"num\">2050000 / 2000000</td>"));
    // A sweep row's ratio per test, in one cell.
    assert!(html.contains("<td>edf:edf-demand: 0.5, rm:rta: 0.0</td>"));
}

#[test]
fn hosts_that_differ_are_shown_per_run() {
    let mut runs = fixtures::all();
    runs[1].host = serde_json::json!({"kernel": "other"});
    let html = render_html(&runs);
    assert!(!html.contains("<h2>Host</h2>"));
    assert_eq!(html.matches("<h3>Host</h3>").count(), runs.len());
}
