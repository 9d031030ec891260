//! rtlab and SimSo (0.8, from PyPI) simulate the same task sets to the same
//! per-task job counts and maximum and mean response times, under EDF
//! (`edf` / `EDF_mono`) and rate monotonic (`fp:rm` / `RM_mono`), on sets
//! without deadline ties (EDF) or period ties (RM), where the two tools'
//! tie rules could differ.
//!
//! The sets go through the real conversions: `rtlab taskset export --format
//! simso` writes the XML SimSo simulates, and `rtlab sim` reads that same XML.
//! SimSo is installed into a virtual environment under the target directory
//! on first use; without Python or the network the test prints why and
//! passes, unless `RTLAB_REQUIRE_SIMSO=1` is set.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::json_of;
use rtlab_model::generate::{generate_set, GeneratorConfig, PeriodDistribution};
use rtlab_model::{file, Nanos, TaskSet};
use serde_json::Value;

const SIMSO: &str = "simso==0.8.5";
const DURATION: Nanos = Nanos::from_secs(2);

/// The Python of a virtual environment that has SimSo, or why there is none.
fn simso_python() -> Result<PathBuf, String> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("simso-venv");
    let python = venv.join("bin/python");
    let has_simso = |python: &Path| {
        Command::new(python)
            .args(["-c", "import simso.core"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has_simso(&python) {
        return Ok(python);
    }
    let run = |program: &Path, args: &[&str]| -> Result<(), String> {
        let out = Command::new(program)
            .args(args)
            .output()
            .map_err(|e| format!("{}: {e}", program.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            Err(format!(
                "`{} {}` failed: {}",
                program.display(),
                args.join(" "),
                err.lines().last().unwrap_or_default()
            ))
        }
    };
    run(
        Path::new("python3"),
        &["-m", "venv", venv.to_str().unwrap()],
    )?;
    let pip = venv.join("bin/pip");
    run(
        &pip,
        &[
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--timeout",
            "30",
            SIMSO,
        ],
    )?;
    if has_simso(&python) {
        Ok(python)
    } else {
        Err(format!("{SIMSO} installed but `import simso.core` fails"))
    }
}

/// Generated sets: 4-8 tasks, U 0.5-0.85, periods 5-200 ms to the
/// microsecond (WCETs to the nanosecond), a few offsets.
fn sets() -> Vec<TaskSet> {
    (0..6u64)
        .map(|i| {
            let config = GeneratorConfig {
                tasks: 4 + (i as usize % 5),
                utilization: 0.5 + 0.07 * i as f64,
                periods: PeriodDistribution::log_uniform(
                    Nanos::from_ms(5),
                    Nanos::from_ms(200),
                    Nanos::from_us(1),
                ),
                seed: 15,
                name_prefix: "agree".into(),
                ..GeneratorConfig::default()
            };
            let mut set = generate_set(&config, i).unwrap();
            for (k, task) in set.tasks.iter_mut().enumerate().skip(1).step_by(2) {
                task.offset = Nanos::from_ns(1_370_001 * k as u64);
            }
            set
        })
        .collect()
}

/// True when two jobs of different tasks released before `DURATION` share
/// an absolute deadline (`edf`) or two tasks share a period (`fp:rm`).
fn has_ties(set: &TaskSet, scheduler: &str) -> bool {
    if scheduler == "fp:rm" {
        let mut periods: Vec<Nanos> = set.tasks.iter().map(|t| t.period).collect();
        periods.sort();
        return periods.windows(2).any(|w| w[0] == w[1]);
    }
    let mut deadlines = std::collections::HashMap::new();
    for (i, t) in set.tasks.iter().enumerate() {
        let mut release = t.offset.as_ns();
        while release < DURATION.as_ns() {
            if let Some(other) = deadlines.insert(release + t.deadline.as_ns(), i) {
                if other != i {
                    return true;
                }
            }
            release += t.period.as_ns();
        }
    }
    false
}

#[test]
fn rtlab_and_simso_agree_on_response_times() {
    let python = match simso_python() {
        Ok(p) => p,
        Err(why) if std::env::var("RTLAB_REQUIRE_SIMSO").as_deref() != Ok("1") => {
            eprintln!("skipped: SimSo is not available ({why}); set RTLAB_REQUIRE_SIMSO=1 to fail instead");
            return;
        }
        Err(why) => panic!("SimSo is required but not available: {why}"),
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for set in sets() {
        let toml = dir.path().join(format!("{}.toml", set.name));
        std::fs::write(&toml, file::to_toml_string(&set)).unwrap();
        for scheduler in ["edf", "fp:rm"] {
            assert!(
                !has_ties(&set, scheduler),
                "{} has ties under {scheduler}",
                set.name
            );
            let xml = dir
                .path()
                .join(format!("{}-{}.xml", set.name, scheduler.replace(':', "-")));
            let duration = DURATION.to_string();
            common::rtlab()
                .args([
                    "taskset",
                    "export",
                    toml.to_str().unwrap(),
                    "--format",
                    "simso",
                ])
                .args([
                    "-s",
                    scheduler,
                    "-d",
                    &duration,
                    "--out",
                    xml.to_str().unwrap(),
                ])
                .assert()
                .success();
            let rtlab = json_of(&[
                "sim",
                xml.to_str().unwrap(),
                "-s",
                scheduler,
                "-d",
                &duration,
                "--json",
            ]);
            cases.push((set.name.clone(), scheduler, xml, rtlab));
        }
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/simso/responses.py");
    let out = Command::new(&python)
        .arg(&script)
        .args(cases.iter().map(|c| &c.2))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let simso: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(simso.len(), cases.len());
    let mut compared = 0;
    println!(
        "set        scheduler task  jobs  max rtlab ns  max SimSo ns  mean rtlab ns  mean SimSo ns"
    );
    for ((set, scheduler, _, rtlab), simso) in cases.iter().zip(&simso) {
        let ours = rtlab["tasks"].as_array().unwrap();
        let theirs = simso["tasks"].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(theirs) {
            assert_eq!(a["name"], b["name"]);
            let completed = b["completed"].as_u64().unwrap();
            let mean_simso =
                (completed > 0).then(|| b["sum_response_ns"].as_u64().unwrap() / completed);
            println!(
                "{set} {scheduler:9} {:5} {completed:5} {:>13} {:>13} {:>14} {:>14}",
                a["name"].as_str().unwrap(),
                a["max_response_ns"],
                b["max_response_ns"],
                a["mean_response_ns"],
                mean_simso.map_or("null".to_string(), |m| m.to_string()),
            );
            let what = format!("{set} under {scheduler}, task {}", a["name"]);
            assert_eq!(a["completed"].as_u64(), Some(completed), "{what}: jobs");
            assert_eq!(
                a["max_response_ns"], b["max_response_ns"],
                "{what}: max response"
            );
            assert_eq!(
                a["mean_response_ns"].as_u64(),
                mean_simso,
                "{what}: mean response"
            );
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} tasks compared");
}

/// Global EDF on 2 processors (`gedf` / SimSo's `EDF`): generated sets of
/// U 1.0-1.5 without two jobs sharing a deadline, because the tie rules
/// differ (gedf gives a tie to the task declared first even against a
/// running job; SimSo keeps the running job). Which processor a job runs
/// on may differ (SimSo takes the processor of the latest deadline, gedf
/// the job's last one); the schedule's times, which the response times
/// show, may not.
#[test]
fn rtlab_and_simso_agree_on_global_edf_on_two_processors() {
    let python = match simso_python() {
        Ok(p) => p,
        Err(why) if std::env::var("RTLAB_REQUIRE_SIMSO").as_deref() != Ok("1") => {
            eprintln!("skipped: SimSo is not available ({why}); set RTLAB_REQUIRE_SIMSO=1 to fail instead");
            return;
        }
        Err(why) => panic!("SimSo is required but not available: {why}"),
    };
    let dir = tempfile::tempdir().unwrap();
    let mut specs = Vec::new();
    let mut ours = Vec::new();
    for i in 0..4u64 {
        let config = GeneratorConfig {
            tasks: 5 + i as usize,
            utilization: 1.0 + 0.15 * i as f64,
            periods: PeriodDistribution::log_uniform(
                Nanos::from_ms(5),
                Nanos::from_ms(200),
                Nanos::from_us(1),
            ),
            seed: 22,
            name_prefix: "global".into(),
            ..GeneratorConfig::default()
        };
        let set = generate_set(&config, i)
            .unwrap()
            .on_platform(rtlab_model::Platform::new(2));
        assert!(!has_ties(&set, "edf"), "{} has deadline ties", set.name);
        let toml = dir.path().join(format!("{}.toml", set.name));
        std::fs::write(&toml, file::to_toml_string(&set)).unwrap();
        let duration = DURATION.to_string();
        ours.push(json_of(&[
            "sim",
            toml.to_str().unwrap(),
            "-s",
            "gedf",
            "-d",
            &duration,
            "--json",
        ]));
        specs.push(serde_json::json!({
            "name": set.name,
            "processors": 2,
            "duration_ns": DURATION.as_ns(),
            "tasks": set.tasks.iter().map(|t| serde_json::json!({
                "name": t.name,
                "period_ns": t.period.as_ns(),
                "wcet_ns": t.wcet.as_ns(),
                "offset_ns": t.offset.as_ns(),
                "deadline_ns": t.deadline.as_ns(),
            })).collect::<Vec<_>>(),
        }));
    }
    let sets = dir.path().join("sets.json");
    std::fs::write(&sets, serde_json::to_string(&specs).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/simso/global_edf.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&sets)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let simso: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(simso.len(), ours.len());
    let mut compared = 0;
    for (rtlab, simso) in ours.iter().zip(&simso) {
        for (a, b) in rtlab["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .zip(simso["tasks"].as_array().unwrap())
        {
            let what = format!("{} under gedf, task {}", simso["name"], a["name"]);
            let completed = b["completed"].as_u64().unwrap();
            assert_eq!(a["completed"].as_u64(), Some(completed), "{what}: jobs");
            assert_eq!(
                a["max_response_ns"], b["max_response_ns"],
                "{what}: max response"
            );
            let mean = (completed > 0).then(|| b["sum_response_ns"].as_u64().unwrap() / completed);
            assert_eq!(
                a["mean_response_ns"].as_u64(),
                mean,
                "{what}: mean response"
            );
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} tasks compared");
}
