//! rtlab and SimSo (0.8, from PyPI) simulate the same task sets to the same
//! per-task job counts, deadline misses and maximum and mean response
//! times: on one processor under EDF (`edf` / `EDF_mono`) and rate
//! monotonic (`fp:rm` / `RM_mono`); on 2 and 4 processors under global EDF
//! (`gedf` / `EDF`) and partitioned EDF (`pedf` / `P_EDF`, and
//! `Fixed_PEDF` for an assignment of rtlab's `--partition ff`).
//!
//! Ties are avoided, not compared: the sets have no two jobs of different
//! tasks with the same absolute deadline (EDF) nor two tasks with the same
//! period (RM), and no deadline at the end of the run. The tools break such
//! ties differently (rtlab's gedf runs the task declared first, even against
//! a running job; SimSo's EDF keeps the running job and otherwise takes
//! whichever job Python's `min` meets first; EDF_mono and RM_mono have their
//! own orders), so a tie may legitimately give two different schedules with
//! the same rule; and a job unfinished exactly at the end of the run is a
//! miss in one tool's count and not the other's. The multiprocessor sets are
//! drawn until one without ties comes (deterministically, by index).
//!
//! The sets go through the real conversions: `rtlab taskset export --format
//! simso` writes the XML SimSo simulates, and `rtlab sim` reads that same XML.
//! SimSo is installed into a virtual environment under the target directory
//! on first use; without Python or the network the test prints why and
//! passes, unless `CI` or `RTLAB_REQUIRE_SIMSO=1` is set (then it fails).

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
    // The tests of this file run on threads of one process: the first
    // makes the virtual environment while the others wait for it (two
    // `python3 -m venv` of one directory at once fail with "File exists").
    let _setting_up = common::serial();
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
/// an absolute deadline, or a deadline falls exactly at `DURATION`
/// (`edf`, `gedf`, `pedf`), or two tasks share a period (`fp:rm`).
fn has_ties(set: &TaskSet, scheduler: &str) -> bool {
    if scheduler == "fp:rm" {
        let mut periods: Vec<Nanos> = set.tasks.iter().map(|t| t.period).collect();
        periods.sort();
        return periods.windows(2).any(|w| w[0] == w[1]);
    }
    let mut deadlines = std::collections::HashMap::new();
    deadlines.insert(DURATION.as_ns(), usize::MAX);
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

/// SimSo's Python, or `None` when it cannot be had here (said through
/// `common::unavailable`: a failure under CI or with
/// `RTLAB_REQUIRE_SIMSO=1`).
fn simso_or_skip() -> Option<PathBuf> {
    match simso_python() {
        Ok(p) => Some(p),
        Err(why) if std::env::var("RTLAB_REQUIRE_SIMSO").as_deref() == Ok("1") => {
            panic!("SimSo is required (RTLAB_REQUIRE_SIMSO=1) but not available: {why}")
        }
        Err(why) => {
            common::unavailable(format!("SimSo is not available ({why})"));
            None
        }
    }
}

/// `rtlab taskset export TOML --format simso -s SCHEDULER -d DURATION EXTRA.. --out XML`.
fn export(toml: &Path, scheduler: &str, extra: &[&str], xml: &Path) {
    let duration = DURATION.to_string();
    common::rtlab()
        .args([
            "taskset",
            "export",
            toml.to_str().unwrap(),
            "--format",
            "simso",
        ])
        .args(["-s", scheduler, "-d", &duration])
        .args(extra)
        .args(["--out", xml.to_str().unwrap()])
        .assert()
        .success();
}

/// `rtlab sim XML -s SCHEDULER -d DURATION --json`: rtlab reads the very
/// file SimSo simulates.
fn rtlab_sim(xml: &Path, scheduler: &str) -> Value {
    let duration = DURATION.to_string();
    json_of(&[
        "sim",
        xml.to_str().unwrap(),
        "-s",
        scheduler,
        "-d",
        &duration,
        "--json",
    ])
}

/// SimSo's per-task results for each configuration (`tests/simso/responses.py`).
fn simso_results(python: &Path, xmls: &[&Path]) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/simso/responses.py");
    let out = Command::new(python)
        .arg(&script)
        .args(xmls)
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
    assert_eq!(simso.len(), xmls.len());
    simso
}

/// Requires the same completed jobs, misses, and maximum and mean (rounded
/// down) response per task; prints a row per task; returns the rows
/// compared and the misses seen.
fn assert_agree(case: &str, ours: &Value, theirs: &Value) -> (usize, u64) {
    let ours = ours["tasks"].as_array().unwrap();
    let theirs = theirs["tasks"].as_array().unwrap();
    assert_eq!(ours.len(), theirs.len(), "{case}");
    let mut misses = 0;
    for (a, b) in ours.iter().zip(theirs) {
        assert_eq!(a["name"], b["name"], "{case}");
        let completed = b["completed"].as_u64().unwrap();
        let mean_simso =
            (completed > 0).then(|| b["sum_response_ns"].as_u64().unwrap() / completed);
        println!(
            "{case:22} {:5} {completed:5} {:>6} {:>13} {:>13} {:>14} {:>14}",
            a["name"].as_str().unwrap(),
            b["misses"],
            a["max_response_ns"],
            b["max_response_ns"],
            a["mean_response_ns"],
            mean_simso.map_or("null".to_string(), |m| m.to_string()),
        );
        let what = format!("{case}, task {}", a["name"]);
        assert_eq!(a["completed"].as_u64(), Some(completed), "{what}: jobs");
        assert_eq!(a["misses"], b["misses"], "{what}: misses");
        assert_eq!(
            a["max_response_ns"], b["max_response_ns"],
            "{what}: max response"
        );
        assert_eq!(
            a["mean_response_ns"].as_u64(),
            mean_simso,
            "{what}: mean response"
        );
        misses += b["misses"].as_u64().unwrap();
    }
    (ours.len(), misses)
}

const HEADER: &str =
    "case                   task   jobs misses  max rtlab ns  max SimSo ns  mean rtlab ns  mean SimSo ns";

#[test]
fn rtlab_and_simso_agree_on_response_times() {
    let Some(python) = simso_or_skip() else {
        return;
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
            export(&toml, scheduler, &[], &xml);
            let rtlab = rtlab_sim(&xml, scheduler);
            cases.push((format!("{} {scheduler}", set.name), xml, rtlab));
        }
    }
    let xmls: Vec<&Path> = cases.iter().map(|c| c.1.as_path()).collect();
    let simso = simso_results(&python, &xmls);
    println!("{HEADER}");
    let mut compared = 0;
    for ((case, _, rtlab), simso) in cases.iter().zip(&simso) {
        compared += assert_agree(case, rtlab, simso).0;
    }
    assert!(compared >= 40, "only {compared} tasks compared");
}

/// The first set without ties (see the module's words) drawn for `m`
/// processors at total utilization `u`, from index `first` on: 2m+1 to
/// 2m+3 tasks, periods 5-200 ms to the microsecond, WCETs to the
/// nanosecond, a few offsets.
fn tie_free_set(m: u32, u: f64, first: u64) -> TaskSet {
    (first..first + 200)
        .map(|i| {
            let config = GeneratorConfig {
                tasks: 2 * m as usize + 1 + (i % 3) as usize,
                utilization: u,
                periods: PeriodDistribution::log_uniform(
                    Nanos::from_ms(5),
                    Nanos::from_ms(200),
                    Nanos::from_us(1),
                ),
                seed: 27,
                name_prefix: format!("m{m}"),
                ..GeneratorConfig::default()
            };
            let mut set = generate_set(&config, i)
                .unwrap()
                .on_platform(rtlab_model::Platform::new(m));
            for (k, task) in set.tasks.iter_mut().enumerate().skip(2).step_by(3) {
                task.offset = Nanos::from_ns(2_370_001 * k as u64);
            }
            set
        })
        .find(|set| !has_ties(set, "gedf"))
        .expect("a set without deadline ties in 200 draws")
}

/// Global EDF (`gedf` / SimSo's `EDF`) and partitioned EDF (`pedf` /
/// SimSo's `P_EDF`, which places the tasks itself: rtlab reads the same
/// placement from the file; and `Fixed_PEDF` with rtlab's first-fit (file order)
/// placement, when it differs from P_EDF's) on 2 and 4 processors, at total utilization 0.70m, 0.85m and
/// 0.95m: the same misses, jobs and per-task maximum and mean response, on
/// sets without deadline ties. Which processor a global job runs on may
/// differ (SimSo takes the processor of the latest deadline, gedf the job's
/// last one); the schedule's times, which the response times show, may not.
#[test]
fn rtlab_and_simso_agree_on_global_and_partitioned_edf() {
    let Some(python) = simso_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let (mut partitioned, mut fixed) = (0, 0);
    for m in [2u32, 4] {
        for (k, load) in [0.70, 0.85, 0.95].into_iter().enumerate() {
            let set = tie_free_set(m, load * f64::from(m), 10 * k as u64);
            let toml = dir.path().join(format!("{}.toml", set.name));
            std::fs::write(&toml, file::to_toml_string(&set)).unwrap();
            let mut runs = vec![("gedf", "gedf", vec![])];
            if rtlab_model::simso::packing::p_edf(&set.tasks, m).is_ok() {
                runs.push(("pedf", "pedf", vec![]));
                partitioned += 1;
            }
            if k == 0 {
                runs.push(("pedf-ff", "pedf", vec!["--partition", "ff"]));
            }
            for (label, scheduler, extra) in runs {
                let xml = dir.path().join(format!("{}-{label}.xml", set.name));
                export(&toml, scheduler, &extra, &xml);
                fixed += usize::from(
                    std::fs::read_to_string(&xml)
                        .unwrap()
                        .contains("simso.schedulers.Fixed_PEDF"),
                );
                let rtlab = rtlab_sim(&xml, scheduler);
                cases.push((format!("{} m={m} {label}", set.name), xml, rtlab));
            }
        }
    }
    assert!(partitioned >= 4, "P_EDF placed only {partitioned} sets");
    assert!(
        fixed >= 1,
        "no Fixed_PEDF export: rtlab's first fit placed as P_EDF does"
    );
    let xmls: Vec<&Path> = cases.iter().map(|c| c.1.as_path()).collect();
    let simso = simso_results(&python, &xmls);
    println!("{HEADER}");
    let (mut compared, mut misses) = (0, 0);
    for ((case, _, rtlab), simso) in cases.iter().zip(&simso) {
        let (rows, missed) = assert_agree(case, rtlab, simso);
        compared += rows;
        misses += missed;
    }
    println!(
        "{} cases, {compared} task rows, {misses} misses",
        cases.len()
    );
    assert!(compared >= 60, "only {compared} tasks compared");
}
