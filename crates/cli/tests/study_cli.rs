//! `rtlab study edf-vs-fps` end to end: the simulated section's document,
//! CSV and plots, byte-identical per seed; bad flags are one-line usage
//! errors; as root, a tiny search on real threads is recorded beside its
//! simulation (structure, never timing). The real-time test is
//! `#[ignore = "needs root"]`; run it under the machine's lock:
//! `flock /tmp/rtlab-realtime.lock cargo test -p rtlab-cli --test study_cli -- --ignored`.

mod common;

use common::{json_of, rtlab, stdout_of};
use serde_json::Value;

const SMALL: [&str; 12] = [
    "study",
    "edf-vs-fps",
    "--sets",
    "2",
    "--tasks",
    "4",
    "--types",
    "implicit/mid,constrained/short-mid",
    "--from",
    "80",
    "--step",
    "5",
];

/// `rtlab SMALL EXTRA --json`: the bytes and the document.
fn json(extra: &[&str]) -> (Vec<u8>, Value) {
    let mut args: Vec<&str> = SMALL.iter().chain(extra).copied().collect();
    args.push("--json");
    let text = stdout_of(&args);
    let doc = serde_json::from_str(&text).unwrap();
    (text.into_bytes(), doc)
}

#[test]
fn the_simulated_section_has_a_row_per_type_and_is_the_same_for_a_seed() {
    let (bytes, doc) = json(&[]);
    assert_eq!(doc["study"], "edf-vs-fps");
    assert!(doc["utilization"]["real"].is_null());
    let s = &doc["utilization"]["simulated"];
    assert_eq!(s["sets"], 2);
    assert_eq!(s["loads"]["from_ppm"], 800_000);
    let types = s["types"].as_array().unwrap();
    let names: Vec<&str> = types.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["implicit/mid", "constrained/short-mid"]);
    for t in types {
        assert_eq!(t["sets"].as_array().unwrap().len(), 2);
        // 80, 85, ..., 120.
        assert_eq!(t["curve"].as_array().unwrap().len(), 9);
        for key in ["regular_completions", "deadline_misses", "preemptions"] {
            assert!(t["edf"][key].is_u64() && t["fps"][key].is_u64(), "{key}");
        }
        assert!(t["edf"]["regular_completions"].as_u64().unwrap() > 0);
        for set in t["sets"].as_array().unwrap() {
            assert!(set["decisive_load_ppm"].is_u64());
        }
    }
    let (again, _) = json(&[]);
    assert_eq!(bytes, again, "same seed, same document");
    let (other, _) = json(&["--seed", "1"]);
    assert_ne!(bytes, other);
}

#[test]
fn csv_and_plots_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let mut args = SMALL.to_vec();
    args.extend(["--csv", d, "--plot", d]);
    let text = stdout_of(&args);
    assert!(text.contains("implicit/mid"), "{text}");
    let csv = std::fs::read_to_string(dir.path().join("utilization.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("world,type,deadlines,periods,sets,mean_hsu_edf"));
    assert_eq!(lines.len(), 3);
    assert!(lines[1].starts_with("sim,implicit/mid,implicit,mid,2,"));
    for name in ["implicit-mid", "constrained-short-mid"] {
        let svg = std::fs::read_to_string(
            dir.path()
                .join(format!("schedulable-sets-vs-load-{name}.svg")),
        )
        .unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("EDF sim"), "{name}");
    }
    let file = dir.path().join("one.csv");
    rtlab()
        .args(SMALL)
        .args(["--csv", file.to_str().unwrap()])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(file).unwrap(), csv);
}

/// The overload and locking sections: one row per profile x level x
/// scheduler and per length x protocol; EDF and the hybrid (EDF below 100 %)
/// meet every deadline at 90 % (implicit deadlines, U <= 1); DFP's
/// operations cost (c + r) / c times IPCP's.
#[test]
fn overload_and_locking_sections_have_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let doc = json_of(&[
        "study",
        "edf-vs-fps",
        "--sections",
        "overload,locking",
        "--overload-levels",
        "90,150",
        "--overload-duration",
        "4s",
        "--lock-cost",
        "4us",
        "--clock-read-cost",
        "1us",
        "--json",
        "--csv",
        d,
        "--plot",
        d,
    ]);
    assert!(doc["utilization"].is_null());
    let rows = doc["overload"]["simulated"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * 2 * 3);
    for row in rows {
        if row["load_pct"] == 90.0 && row["scheduler"] != "fps" {
            assert_eq!(row["misses"], 0, "{row}");
        }
    }
    assert_eq!(
        doc["overload"]["simulated"]["fits"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    let locking = &doc["locking"];
    assert_eq!(locking["rows"].as_array().unwrap().len(), 6 * 2);
    for c in locking["comparisons"].as_array().unwrap() {
        assert_eq!(c["dfp_over_ipcp"], 1.25, "{c}");
    }
    let overload_csv = std::fs::read_to_string(dir.path().join("overload.csv")).unwrap();
    assert_eq!(overload_csv.lines().count(), 1 + 12);
    let locking_csv = std::fs::read_to_string(dir.path().join("locking.csv")).unwrap();
    assert_eq!(locking_csv.lines().count(), 1 + 12);
    assert!(!dir.path().join("utilization.csv").exists());
    for name in [
        "deadline-misses-vs-load-transient-overload",
        "deadline-misses-vs-load-permanent-overload",
        "lock-overhead-vs-procedure-length",
    ] {
        let svg = std::fs::read_to_string(dir.path().join(format!("{name}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{name}");
    }
}

#[test]
fn bad_flags_are_usage_errors_naming_the_flag() {
    for (args, needle) in [
        (
            vec!["--from", "90", "--to", "80"],
            "--to 80% is below --from 90%",
        ),
        (vec!["--types", "implicit/long"], "implicit/mid"),
        (vec!["--step", "0"], "--step"),
        (vec!["--tasks", "1"], "--tasks"),
        (vec!["--duration", "1ms"], "--duration 1ms"),
        (vec!["--real-from", "90", "--real-to", "50"], "--real-to"),
        (vec!["--sections", "speed"], "--sections"),
        (
            vec!["--overload-duration", "2500ms"],
            "--overload-duration 2.5s",
        ),
    ] {
        let out = rtlab()
            .args(["study", "edf-vs-fps"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // One line says it (clap adds its usage line after its own).
        let first = err.lines().next().unwrap_or_default();
        assert!(first.contains(needle), "{args:?}: {err}");
    }
}

#[test]
#[ignore = "needs root"]
fn a_tiny_search_on_real_threads_is_recorded_beside_its_simulation() {
    let _one = common::real_time();
    let out = rtlab()
        .args([
            "study",
            "edf-vs-fps",
            // Overload at one level with short runs (by default 5 s at
            // each of six levels, twice: minutes of CI).
            "--sections",
            "utilization,overload",
            "--overload-levels",
            "120",
            "--overload-duration",
            "4s",
            "--real-overload-duration",
            "3500ms",
            "--sets",
            "1",
            "--tasks",
            "3",
            "--types",
            "implicit/mid,implicit/all",
            "--from",
            "50",
            "--step",
            "10",
            "--real",
            "--real-from",
            "50",
            "--real-step",
            "20",
            "--real-to",
            "90",
            "--real-duration",
            "300ms",
            "--cooldown",
            "0s",
            "--json",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let real = &doc["utilization"]["real"];
    assert_eq!(real["interrupted"], false);
    let skipped = real["skipped_types"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].as_str().unwrap().starts_with("implicit/all"));
    for world in ["simulated", "measured"] {
        let s = &real[world];
        assert_eq!(s["duration_ns"], 300_000_000);
        let types = s["types"].as_array().unwrap();
        assert_eq!(types.len(), 1, "{world}");
        assert_eq!(types[0]["name"], "implicit/mid");
        let set = &types[0]["sets"][0];
        for scheduler in ["edf", "fps"] {
            // Each search ran at least the first load, or was refused there.
            let search = &set[scheduler];
            assert!(
                search["runs"].as_u64().unwrap() >= 1,
                "{world} {scheduler}: {search}"
            );
            assert!(
                search["hsu_ppm"].is_u64()
                    || search["first_miss_ppm"].is_u64()
                    || search["refused"].is_string(),
                "{world} {scheduler}: {search}"
            );
        }
        assert!(set["decisive_load_ppm"].is_u64());
    }
    // Overload on real threads: each profile under each scheduler, every
    // job released as in its simulation (the misses may differ).
    let overload = &doc["overload"]["real"];
    let rows = |world: &str| -> Vec<(String, String, u64)> {
        let w = &overload[world];
        assert_eq!(w["duration_ns"], 3_500_000_000u64, "{world}");
        w["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["profile"].as_str().unwrap().to_owned(),
                    r["scheduler"].as_str().unwrap().to_owned(),
                    r["released"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let measured = rows("measured");
    assert_eq!(measured.len(), 4, "{measured:?}");
    assert!(measured.iter().all(|r| r.2 > 0), "{measured:?}");
    assert_eq!(measured, rows("simulated"));
    // Every real run is announced on standard error.
    assert!(
        err.contains("under edf") && err.contains("under fps"),
        "{err}"
    );
}
