//! The HTML report: self-contained, escaped, one figure per plot with
//! drawn marks.

mod fixtures;

use rtlab_report::figures::figures;
use rtlab_report::html::render_html;
use rtlab_report::plot::{MISSED, PALETTE};

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
        (
            "run",
            vec![
                "Real and simulated schedule",
                "Gantt chart",
                "Response times",
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
    // The run's summary and per-task table, in human units.
    assert!(html.contains("<tr><th>deadline misses</th><td>2</td></tr>"));
    assert!(html.contains("<td class=\"num\">2.05 ms / 2 ms</td>"));
    // A sweep row's ratio per test, one column each, as percentages.
    assert!(html.contains("<th>edf:edf-demand accepts</th><th>rm:rta accepts</th>"));
    assert!(html.contains("<td class=\"num\">50 %</td><td class=\"num\">0 %</td>"));
}

/// What a reader sees first: a table of contents with every run's
/// heading (saved ids, or the place in the report for unsaved runs) and
/// verdict, the host in one line, a headline per run.
#[test]
fn the_report_opens_with_contents_host_line_and_headlines() {
    let mut runs = fixtures::all();
    let html = render_html(&runs);
    let toc = &html[html.find("<nav class=\"toc\">").unwrap()..html.find("</nav>").unwrap()];
    assert_eq!(toc.matches("<li>").count(), runs.len());
    assert!(
        toc.contains("no deadline miss") || toc.contains("deadline miss"),
        "{toc}"
    );
    assert!(html.contains("<p class=\"host\">"));
    assert_eq!(html.matches("<div class=\"headline\">").count(), runs.len());
    for r in &mut runs {
        r.id = 0;
    }
    let html = render_html(&runs);
    for i in 1..=runs.len() {
        assert!(
            html.contains(&format!("<a href=\"#run-{i}\">#{i} ")),
            "run {i}"
        );
    }
}

/// The human tables (every `<table>` outside the plots) name no `_ns`
/// key and show no float with more than 4 significant digits.
#[test]
fn human_tables_have_units_and_at_most_four_significant_digits() {
    let html = render_html(&fixtures::all());
    let mut tables = 0;
    for table in html.split("<table").skip(1) {
        let table = &table[..table.find("</table>").unwrap()];
        tables += 1;
        assert!(!table.contains("_ns"), "a raw _ns key in {table}");
        for cell in table.split(['<', '>', ' ', '/']) {
            let digits: String = cell.chars().filter(char::is_ascii_digit).collect();
            let is_float = cell.contains('.')
                && cell
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
                && cell.parse::<f64>().is_ok();
            if is_float {
                let significant = digits.trim_start_matches('0').len();
                assert!(significant <= 4, "`{cell}` in {table}");
            }
        }
    }
    assert!(tables >= 6, "{tables} tables");
}

#[test]
fn hosts_that_differ_are_shown_per_run() {
    let mut runs = fixtures::all();
    runs[1].host = serde_json::json!({"kernel": "other"});
    let html = render_html(&runs);
    assert!(!html.contains("<h2>Host</h2>"));
    assert_eq!(html.matches("<h3>Host</h3>").count(), runs.len());
}

/// "Missed" is never a task's colour, and a missed job is marked by shape
/// too (an outline and a cross), so the Gantt chart reads in greyscale.
#[test]
fn missed_jobs_have_their_own_colour_and_shape_in_the_gantt_chart() {
    assert!(!PALETTE.contains(&MISSED));
    let run = fixtures::run();
    assert!(run.document["deadline_misses"].as_u64().unwrap() > 0);
    let svg = figures(&run).remove(0).svg.unwrap();
    let red = format!("#{:02X}{:02X}{:02X}", MISSED.0, MISSED.1, MISSED.2);
    assert!(
        svg.to_ascii_uppercase().contains(&red),
        "no missed job drawn"
    );
    // plotters draws a Cross as two black strokes of two points each.
    assert!(svg.matches("stroke=\"#000000\" stroke-width=\"2\"").count() >= 2);
}

/// `analyze` without overheads has nothing to plot against the tick: no
/// breakdown-vs-tick plot drawn from a single point.
#[test]
fn analyze_without_overheads_draws_no_breakdown_against_the_tick() {
    let mut run = fixtures::analyze();
    run.document["breakdown"] = serde_json::json!([
        {"policy": "rm", "overheads": null, "tick_ns": null, "utilization": 0.9, "scale": 1.2},
        {"policy": "edf", "overheads": null, "tick_ns": null, "utilization": 1.0, "scale": 1.4}
    ]);
    let titles: Vec<String> = figures(&run).into_iter().map(|f| f.title).collect();
    assert_eq!(titles, ["Response times vs deadlines"]);
}

/// A run saved with `--kernel-trace`: the kernel's lanes above the
/// simulator's, the same task in the same colour on both, and the real
/// miss labelled with its cause; without a simulated side, the real one
/// alone; without a real side, no such figure.
#[test]
fn a_traced_run_draws_the_real_schedule_above_the_simulated_one() {
    let run = fixtures::traced_run();
    let chart = rtlab_report::series::schedule_chart(&run).unwrap();
    assert_eq!(
        chart.lanes,
        [
            "real CPU 1",
            "real CPU 1 interrupts",
            "real <b>t1</b>& throttled",
            "sim CPU 1"
        ]
    );
    assert_eq!(chart.tasks, ["<b>t1</b>&", "t2"]);
    assert_eq!((chart.from_ns, chart.to_ns), (0, 12_000_000));
    let t1_colours: Vec<_> = chart
        .spans
        .iter()
        .filter(|(_, _, s)| {
            s.label == "<b>t1</b>&" && s.kind == rtlab_model::results::SpanKind::Job
        })
        .map(|(lane, task, _)| (*lane, *task))
        .collect();
    assert_eq!(t1_colours, [(0, Some(0)), (3, Some(0)), (3, Some(0))]);
    let fig = figures(&run).remove(0);
    assert_eq!(fig.title, "Real and simulated schedule");
    assert!(fig.caption.contains("1 deadline miss "), "{}", fig.caption);
    let svg = fig.svg.unwrap();
    assert!(svg.contains("t2 missed: other kworker/1:1"));
    assert!(svg.contains("&lt;b&gt;t1&lt;/b&gt;&amp;") && !svg.contains("<b>t1"));
    for legend in ["other thread", "interrupt", "throttled", "deadline miss"] {
        assert!(svg.contains(legend), "{legend}");
    }
    // The set's 6 job spans (3 real, 3 simulated), opaque in their task
    // colours; nothing else is.
    assert_eq!(marks(&svg), 6);
    let html = render_html(std::slice::from_ref(&run));
    assert!(html.find("Real and simulated schedule").unwrap() < html.find("Gantt chart").unwrap());

    let mut real_only = run.clone();
    real_only
        .schedule
        .retain(|s| s.source == rtlab_model::results::SpanSource::Real);
    let lanes = rtlab_report::series::schedule_chart(&real_only)
        .unwrap()
        .lanes;
    assert!(lanes.iter().all(|l| l.starts_with("real ")), "{lanes:?}");
    assert!(figures(&real_only)[0]
        .caption
        .contains("no simulated schedule"));
    let mut sim_only = run;
    sim_only
        .schedule
        .retain(|s| s.source == rtlab_model::results::SpanSource::Sim);
    assert_eq!(figures(&sim_only)[0].title, "Gantt chart");
}
