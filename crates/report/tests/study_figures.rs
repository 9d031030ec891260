//! `rtlab study edf-vs-fps` documents: one figure per task-set type, with
//! the schedulable share of sets (percent) against load for EDF and FPS in
//! every world of the document.

use rtlab_report::figures::figures;
use rtlab_report::series::study_schedulable;
use rtlab_report::view::RunView;
use serde_json::json;

fn section(name: &str, edf: f64, fps: f64) -> serde_json::Value {
    json!({"types": [{"name": name, "curve": [
        {"load": 90.0, "edf_schedulable": 1.0, "fps_schedulable": 1.0},
        {"load": 95.0, "edf_schedulable": edf, "fps_schedulable": fps}
    ]}]})
}

#[test]
fn each_type_gets_edf_and_fps_lines_per_world() {
    let doc = json!({"study": "edf-vs-fps", "utilization": {
        "simulated": section("implicit/mid", 1.0, 0.5),
        "real": {"simulated": section("implicit/mid", 1.0, 0.0),
                 "measured": section("implicit/mid", 0.0, 0.0)}
    }});
    let run = RunView::unsaved("study", doc);
    let types = study_schedulable(&run);
    assert_eq!(types.len(), 1);
    let (name, lines) = &types[0];
    assert_eq!(name, "implicit/mid");
    let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "EDF sim",
            "FPS sim",
            "EDF real-sim",
            "FPS real-sim",
            "EDF real",
            "FPS real"
        ]
    );
    assert_eq!(lines[1].points, vec![(90.0, 100.0), (95.0, 50.0)]);
    let figs = figures(&run);
    assert_eq!(figs.len(), 1);
    assert_eq!(figs[0].title, "Schedulable sets vs load implicit/mid");
    assert!(figs[0].svg.as_ref().unwrap().contains("FPS real-sim"));

    // Without --real: the simulated lines only.
    let run = RunView::unsaved(
        "study",
        json!({"utilization": {"simulated": section("constrained/all", 1.0, 1.0), "real": null}}),
    );
    assert_eq!(study_schedulable(&run)[0].1.len(), 2);
}
