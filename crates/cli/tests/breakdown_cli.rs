//! `rtlab breakdown` end to end: bad flags are one-line usage errors; as
//! root, a tiny set measured on real threads (short steps) gives a document
//! with all four breakdowns and every step, in the search's structure —
//! never timing. The real-time tests are `#[ignore = "needs root"]`; run
//! them under the machine's lock: `flock /tmp/rtlab-realtime.lock cargo
//! test -p rtlab-cli --test breakdown_cli -- --ignored`.

mod common;

use common::{rtlab, run_measured};
use serde_json::Value;

/// Two harmonic tasks, U = 0.5: the ideal RM breakdown is α = 2 (U* = 1).
const TINY: &str = "name = \"tiny\"\n\
    [[task]]\nname = \"fast\"\nperiod = \"2ms\"\nwcet = \"500us\"\n\
    [[task]]\nname = \"slow\"\nperiod = \"4ms\"\nwcet = \"1ms\"\n";

/// Linux-like costs in the overheads file format (hand-written, a few µs).
const COSTS: &str = "name = \"linux-guess\"\n\
    timer = \"1us\"\npreempt = { per_thread = \"0.1us\", base = \"5us\" }\n\
    exit = { per_thread = \"0.1us\", base = \"4us\" }\nnonpreempt = \"2us\"\n\
    releases = \"hrtimer\"\ntick = \"4ms\"\n";

fn files() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("tiny.toml");
    let costs = dir.path().join("costs.toml");
    std::fs::write(&set, TINY).unwrap();
    std::fs::write(&costs, COSTS).unwrap();
    let s = |p: std::path::PathBuf| p.to_str().unwrap().to_string();
    (dir, s(set), s(costs))
}

/// Exit status 2 and one line on standard error containing `needle`.
fn usage_error(args: &[&str], needle: &str) {
    let out = rtlab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.lines().next().unwrap().contains(needle),
        "{args:?}: {err}"
    );
}

#[test]
fn bad_flags_are_one_line_usage_errors() {
    let (_dir, set, costs) = files();
    let base = ["breakdown", set.as_str(), "--overheads", costs.as_str()];
    fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
        [base, more].concat()
    }
    usage_error(
        &with(&base, &["--policy", "fifo"]),
        "--policy `fifo`: use rm, dm or edf",
    );
    usage_error(
        &with(&base, &["--policy", "rm", "--duration-per-step", "1ms"]),
        "--duration-per-step 1ms: shorter than the last first deadline",
    );
    // clap's own messages: the first line names the flag (a hint follows).
    for (flag, value) in [
        ("--time-scale", "0"),
        ("--time-scale", "0.01,x"),
        ("--resolution", "1"),
        ("--repeat", "0"),
    ] {
        usage_error(&with(&base, &["--policy", "rm", flag, value]), flag);
    }
    // A missing overheads file is an error about that file (exit 1).
    let out = rtlab()
        .args([
            "breakdown",
            &set,
            "--policy",
            "rm",
            "--overheads",
            "nope.toml",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--overheads") && err.contains("nope.toml"),
        "{err}"
    );
}

/// α of a step or breakdown.
fn alpha(v: &Value) -> f64 {
    v["alpha"].as_f64().unwrap()
}

#[test]
#[ignore = "needs root"]
fn a_tiny_set_measured_on_real_threads_has_every_breakdown_and_step() {
    let _one = common::real_time();
    let (dir, set, costs) = files();
    let plot = dir.path().join("b.svg");
    let out = rtlab()
        .args([
            "breakdown",
            &set,
            "--policy",
            "rm",
            "--overheads",
            &costs,
            "--time-scale",
            "1,0.5",
            "--duration-per-step",
            "100ms",
            "--repeat",
            "2",
            "--resolution",
            "0.05",
            "--cooldown",
            "0s",
            "--json",
            "--plot",
            plot.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["policy"], "rm");
    assert_eq!(doc["overheads"], "linux-guess");
    assert_eq!(doc["interrupted"], false);
    let scales = doc["scales"].as_array().unwrap();
    assert_eq!(scales.len(), 2);
    assert_eq!(scales[0]["time_scale"], 1.0);
    assert_eq!(scales[1]["time_scale"], 0.5);
    for s in scales {
        assert_eq!(s["duration_per_step_ns"], 100_000_000);
        // The four breakdowns: the ideal one is U* = 1 exactly (α = 2).
        let ideal = &s["ideal"];
        assert!((alpha(ideal) - 2.0).abs() < 1e-5, "{ideal}");
        let aware = &s["overhead_aware"];
        assert!(alpha(aware) > 1.0 && alpha(aware) < alpha(ideal), "{aware}");
        let sim = &s["simulated"];
        assert!(
            alpha(sim) <= alpha(ideal) && sim["confirmed"] == true,
            "{sim}"
        );
        // Every step with its misses and jobs, below the cap.
        let m = &s["measured"];
        // The prediction errors are against the measured breakdown: there
        // are none when no α passed (below).
        for key in ["ideal_pp", "overhead_aware_pp", "simulated_pp"] {
            let error = &s["prediction_error"][key];
            assert_eq!(error.is_number(), !m["alpha"].is_null(), "{key}: {error}");
        }
        let steps = m["steps"].as_array().unwrap();
        assert!(!steps.is_empty());
        for step in steps {
            assert!(step["jobs"].as_u64().unwrap() > 0, "{step}");
            assert!(step["misses"].is_u64(), "{step}");
            assert_eq!(step["pass"], step["misses"] == 0, "{step}");
            assert!(alpha(step) <= 2.0 / 1.0 + 0.05 + 1e-9, "{step}");
        }
        if m["alpha"].is_null() {
            // A disturbance on this shared VM can fail even the smallest
            // α the search may try: then it says no α passed, ending on
            // that failed step, with no utilization and nothing confirmed.
            assert_eq!(steps.last().unwrap()["pass"], false, "{m}");
            assert!(m["utilization"].is_null(), "{m}");
            assert_eq!(m["confirmed"], false, "{m}");
            continue;
        }
        assert!(m["utilization"].is_number(), "{m}");
        // The search's structure: a confirming run last. (Where passes may
        // fall is the search's logic, tested exactly against scripted
        // runners in measured_breakdown; on this noisy machine a stall can
        // fail a lower α after a higher one passed, so it is not asserted
        // here.)
        assert_eq!(steps.last().unwrap()["phase"], "confirm", "{m}");
        assert!(
            steps
                .iter()
                .any(|s| s["pass"] == true && alpha(s) == alpha(m)),
            "the breakdown is an α that passed"
        );
        if m["confirmed"] == true {
            let failing = m["failing_alpha"].as_f64().unwrap_or(f64::INFINITY);
            assert!(failing - alpha(m) <= 0.05 + 1e-9, "{m}");
        }
    }
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.contains("<svg") && svg.contains("measured"));
}

#[test]
#[ignore = "needs root"]
fn ctrl_c_keeps_what_was_measured() {
    let _one = common::real_time();
    let (_dir, set, costs) = files();
    let out = run_measured(
        &[
            "breakdown",
            &set,
            "--policy",
            "rm",
            "--overheads",
            &costs,
            "--duration-per-step",
            "400ms",
            "--cooldown",
            "0s",
            "--json",
        ],
        Some(std::time::Duration::from_millis(1500)),
    );
    assert!(out.status.success(), "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["interrupted"], true);
    let m = &doc["scales"][0]["measured"];
    assert_eq!(m["interrupted"], true);
    let steps = m["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() < 10, "{m}");
    assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
}
