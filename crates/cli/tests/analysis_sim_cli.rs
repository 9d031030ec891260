//! End-to-end tests of `rtlab analyze`, `rtlab sweep` and `rtlab sim`
//! against the figures of papers 000 and 004.

mod common;

use common::{json_of, rtlab};

use predicates::prelude::*;
use serde_json::Value;

fn breakdown_utilizations(doc: &Value) -> Vec<Option<f64>> {
    doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["utilization"].as_f64())
        .collect()
}

#[test]
fn avionics_ideal_breakdown_is_the_papers_92_23_percent() {
    let doc = json_of(&[
        "analyze",
        "builtin:avionics",
        "--policy",
        "rm",
        "--breakdown",
        "--json",
    ]);
    let u = breakdown_utilizations(&doc)[0].unwrap();
    assert!((u - 0.9223).abs() < 1e-4, "{u}");
    let rta = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "rta")
        .unwrap();
    assert_eq!(rta["schedulable"], true);
    assert_eq!(doc["tasks"].as_array().unwrap().len(), 15);
    assert_eq!(
        doc["tasks"][1]["wcrt_ns"], 7_000_000,
        "rwr-contact-mgmt: 2 + 5 ms"
    );
}

#[test]
fn overheads_make_breakdown_fall_with_the_tick() {
    let doc = json_of(&[
        "analyze",
        "builtin:avionics",
        "--policy",
        "rm",
        "--overheads",
        "builtin:rtmach",
        "--tick",
        "1ms,2ms,4ms,8ms,16ms",
        "--breakdown",
        "--json",
    ]);
    let u: Vec<f64> = breakdown_utilizations(&doc)
        .into_iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(u.len(), 6, "ideal + five ticks");
    for pair in u.windows(2) {
        assert!(pair[1] < pair[0], "not falling: {u:?}");
    }
    // Paper 004 reports 72.61 % at a 16 ms tick.
    assert!((u[5] - 0.7261).abs() < 0.005, "{u:?}");
}

#[test]
fn ins_is_unschedulable_for_ticks_above_2_5_ms() {
    let doc = json_of(&[
        "analyze",
        "builtin:ins",
        "--policy",
        "rm",
        "--overheads",
        "builtin:rtmach",
        "--tick",
        "1ms,2ms,4ms,8ms",
        "--breakdown",
        "--json",
    ]);
    let u = breakdown_utilizations(&doc);
    assert!(
        u[1].is_some() && u[2].is_some(),
        "1 ms and 2 ms ticks: {u:?}"
    );
    assert_eq!(&u[3..], &[None, None], "4 ms and 8 ms ticks: {u:?}");
}

#[test]
fn sweep_is_deterministic_for_a_seed() {
    let args = [
        "sweep", "--tasks", "6", "--sets", "50", "--from", "0.7", "--to", "0.9", "--step", "0.1",
        "--seed", "3", "--json",
    ];
    let a = json_of(&args);
    let b = json_of(&args);
    assert_eq!(a, b);
    assert_eq!(a["rows"].as_array().unwrap().len(), 3);
    assert_eq!(a["rows"][0]["sets"], 50);
}

/// Issue 10: `--overheads` under EDF is analysed, not ignored, and its
/// breakdown sits between RM's with the same costs and ideal EDF.
#[test]
fn edf_with_overheads_is_analysed_with_breakdown() {
    let doc = json_of(&[
        "analyze",
        "builtin:avionics",
        "--policy",
        "edf",
        "--overheads",
        "builtin:rtmach",
        "--tick",
        "8ms",
        "--breakdown",
        "--json",
    ]);
    let run = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "edf-demand-overheads")
        .expect("an edf-demand-overheads run");
    assert_eq!(run["tick_ns"], 8_000_000);
    assert_eq!(run["schedulable"], true);
    let u = breakdown_utilizations(&doc);
    assert_eq!(u.len(), 2, "ideal and 8 ms: {u:?}");
    let (ideal, with_costs) = (u[0].unwrap(), u[1].unwrap());
    assert!((ideal - 1.0).abs() < 1e-5, "{ideal}");
    // RM with the same costs and tick breaks down at 82.36 % (paper 004: 83.84 %).
    assert!(with_costs < ideal && with_costs > 0.9, "{with_costs}");
}

/// Issue 10: the sweep at U = 1 with constrained deadlines decides every
/// set, says how many it could not decide, and is quick. Issue 36: with
/// implicit deadlines EDF accepts every set at U = 1 (Liu & Layland 1973),
/// since a generated set is never above its target (C rounded to whole
/// nanoseconds used to leave about half of them a few ns above 1, and EDF
/// accepted 47-52 %).
#[test]
fn sweep_at_full_utilization_decides_every_set() {
    let at_one = |deadlines: &str, tests: &str| {
        let doc = json_of(&[
            "sweep",
            "--tasks",
            "10",
            "--from",
            "1.0",
            "--to",
            "1.0",
            "--sets",
            "1000",
            "--deadlines",
            deadlines,
            "--test",
            tests,
            "--json",
        ]);
        doc["rows"][0].clone()
    };
    let start = std::time::Instant::now();
    let row = at_one("constrained", "edf:edf-demand,rm:liu-layland");
    assert_eq!(row["inconclusive"]["edf:edf-demand"], 0);
    assert_eq!(row["accepted"]["edf:edf-demand"], 0);
    assert!(row["inconclusive"]["rm:liu-layland"].as_u64().unwrap() > 0);
    // About 10 ms of work; 58 s before the fix.
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    let row = at_one("implicit", "edf:edf-demand,edf:edf-utilization");
    assert_eq!(row["utilization"], 1.0);
    assert_eq!(row["accepted"]["edf:edf-demand"], 1000, "{row}");
    assert_eq!(row["accepted"]["edf:edf-utilization"], 1000, "{row}");
}

fn misses(taskset: &str, scheduler: &str) -> u64 {
    let doc = json_of(&[
        "sim",
        taskset,
        "--scheduler",
        scheduler,
        "--duration",
        "1s",
        "--json",
    ]);
    doc["deadline_misses"].as_u64().unwrap()
}

/// Paper 000 section 4.2: which policy meets the deadlines of each scenario.
#[test]
fn lf_scenarios_match_paper_000() {
    for n in 1..=3 {
        let set = format!("builtin:lf-scenario-{n}");
        assert!(
            misses(&set, "fifo") > 0,
            "scenario {n}: FIFO by declaration order misses"
        );
        assert_eq!(misses(&set, "fp:dm"), 0, "scenario {n}: DM meets");
        assert_eq!(misses(&set, "edf"), 0, "scenario {n}: EDF meets");
    }
    assert!(
        misses("builtin:lf-scenario-4", "fp:dm") > 0,
        "scenario 4: DM misses"
    );
    assert_eq!(
        misses("builtin:lf-scenario-4", "edf"),
        0,
        "scenario 4: EDF meets"
    );
}

#[test]
fn sim_same_seed_same_bytes_with_random_execution_times() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("var.toml");
    std::fs::write(
        &path,
        "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"4ms\"\nbcet = \"1ms\"\n\
         [[task]]\nname = \"b\"\nperiod = \"15ms\"\nwcet = \"6ms\"\nbcet = \"2ms\"\n",
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let run = |seed: &str| {
        rtlab()
            .args([
                "sim", path, "-s", "edf", "-d", "2s", "--exec", "uniform", "--seed", seed, "--json",
            ])
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(run("5"), run("5"));
    assert_ne!(run("5"), run("6"));
}

#[test]
fn sim_writes_a_gantt_chart_and_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("s4.svg");
    let trace = dir.path().join("s4.json");
    rtlab()
        .args(["sim", "builtin:lf-scenario-4", "-s", "edf", "-d", "100ms"])
        .args([
            "--gantt",
            svg.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
        ])
        .assert()
        .success();
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("<svg") && svg.contains("t2"), "{svg}");
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
    assert!(!trace["traceEvents"].as_array().unwrap().is_empty());
}

#[test]
fn bad_scheduler_and_duration_are_one_line_errors_naming_the_flag() {
    rtlab()
        .args(["sim", "builtin:gap", "--scheduler", "lottery"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::starts_with("error: --scheduler")
                .and(predicate::str::contains("lottery")),
        )
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    rtlab()
        .args(["sim", "builtin:gap", "-s", "edf", "--duration", "5parsecs"])
        .assert()
        .code(2)
        .stderr(predicate::function(|s: &str| {
            let first = s.lines().next().unwrap_or_default();
            first.contains("--duration") && first.contains("unknown unit `parsecs`")
        }));
    rtlab()
        .args(["analyze", "builtin:gap", "--tick", "8ms"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--overheads"));
}

/// Issue 10: two tasks taking two locks in opposite orders used to end
/// with "0 completed, 149 misses" and no word of why.
const OPPOSITE_ORDERS: &str = r#"
name = "opposite"
[[task]]
name = "a"
period = "10ms"
wcet = "4ms"
offset = "2ms"
critical_sections = [
  { resource = "r1", start = "1ms", length = "2ms" },
  { resource = "r2", start = "2ms", length = "500us" },
]
[[task]]
name = "b"
period = "20ms"
wcet = "6ms"
critical_sections = [
  { resource = "r2", start = "1ms", length = "4ms" },
  { resource = "r1", start = "3ms", length = "1ms" },
]
"#;

#[test]
fn sim_reports_a_deadlock_with_its_time_tasks_and_resources() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("opposite.toml");
    std::fs::write(&file, OPPOSITE_ORDERS).unwrap();
    let file = file.to_str().unwrap();
    rtlab()
        .args(["sim", file, "-s", "fp:rm", "-d", "1s"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "DEADLOCK at 5ms: b (job 0) waits for r1 held by a (job 0), \
             a (job 0) waits for r2 held by b (job 0)",
        ));
    let sim_json = |protocol: &str| {
        json_of(&[
            "sim",
            file,
            "-s",
            "fp:rm",
            "-d",
            "1s",
            "--protocol",
            protocol,
            "--json",
        ])
    };
    let doc = sim_json("pip");
    assert_eq!(doc["deadlock"]["at_ns"], 5_000_000);
    assert_eq!(doc["deadlock"]["cycle"].as_array().unwrap().len(), 2);
    let doc = sim_json("ipcp");
    assert!(doc.get("deadlock").is_none());
    assert_eq!(doc["deadline_misses"], 0);
}

/// An overheads file that says `releases = "hrtimer"` with `tick = "4ms"`
/// (Linux) is analysed and simulated under that model unless `--tick` is
/// given, and every output names it.
#[test]
fn an_hrtimer_overheads_file_chooses_linuxs_timer_model_unless_tick_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("linux.toml");
    std::fs::write(
        &file,
        "timer = \"7.92us\"\npreempt = \"31.68us\"\nexit = \"30.28us\"\n\
         nonpreempt = \"7.9us\"\nreleases = \"hrtimer\"\ntick = \"4ms\"\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let analyze = |extra: &[&str]| {
        let mut args = vec![
            "analyze",
            "builtin:avionics",
            "--policy",
            "rm",
            "--overheads",
            file,
            "--breakdown",
            "--json",
        ];
        args.extend_from_slice(extra);
        json_of(&args)
    };
    let doc = analyze(&[]);
    let costed = &doc["tests"][3];
    assert_eq!(costed["test"], "rta-overheads");
    assert_eq!(costed["timer"], "hrtimer + tick 4ms");
    assert_eq!(costed["periodic_tick_ns"], 4_000_000);
    assert_eq!(costed["tick_ns"], Value::Null);
    assert_eq!(doc["breakdown"][1]["timer"], "hrtimer + tick 4ms");
    // Between the ideal 92.23 % and paper 004's 4 ms tick-driven model.
    let linux = breakdown_utilizations(&doc)[1].unwrap();
    let ticked = breakdown_utilizations(&analyze(&["--tick", "4ms"]))[1].unwrap();
    assert!(ticked < linux && linux < 0.9223, "{ticked} {linux}");
    // --tick wins: paper 004's model, and no Linux fields.
    let doc = analyze(&["--tick", "4ms"]);
    assert_eq!(doc["tests"][3]["tick_ns"], 4_000_000);
    assert!(doc["tests"][3].get("timer").is_none());

    let sim_args = [
        "sim",
        "builtin:avionics",
        "-s",
        "fp:rm",
        "-d",
        "1s",
        "--overheads",
        file,
    ];
    let sim = |extra: &[&str]| json_of(&[&sim_args[..], &["--json"], extra].concat());
    let doc = sim(&[]);
    assert_eq!(doc["timer"], "hrtimer + tick 4ms");
    assert_eq!(doc["periodic_tick_ns"], 4_000_000);
    assert_eq!(doc["tick_ns"], Value::Null);
    let doc = sim(&["--tick", "4ms"]);
    assert_eq!(doc["tick_ns"], 4_000_000);
    assert!(doc.get("timer").is_none());
    rtlab()
        .args(sim_args)
        .assert()
        .success()
        .stdout(predicate::str::contains("for 1s: hrtimer + tick 4ms,"));
}

/// One vocabulary: `sim --policy rm` is `sim --scheduler fp:rm`, `analyze
/// --policy rm,edf` analyses those two, `analyze --scheduler fp:dm` is
/// `--policy dm`.
#[test]
fn each_command_accepts_the_others_policy_spelling() {
    let by_scheduler = common::stdout_of(&[
        "sim",
        "builtin:lf-scenario-4",
        "-s",
        "fp:rm",
        "-d",
        "1s",
        "--json",
    ]);
    let by_policy = common::stdout_of(&[
        "sim",
        "builtin:lf-scenario-4",
        "--policy",
        "rm",
        "-d",
        "1s",
        "--json",
    ]);
    assert_eq!(by_scheduler, by_policy);
    let doc = common::json_of(&[
        "analyze",
        "builtin:lf-scenario-4",
        "--policy",
        "rm,edf",
        "--json",
    ]);
    let mut policies: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["policy"].as_str().unwrap())
        .collect();
    policies.dedup();
    assert_eq!(policies, ["rm", "edf"]);
    let doc = common::json_of(&[
        "analyze",
        "builtin:lf-scenario-4",
        "--scheduler",
        "fp:dm",
        "--json",
    ]);
    assert!(doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["policy"] == "dm"));
}

/// No file is written silently: one `wrote PATH (what, size)` line each on
/// standard error, and a note when the default window cut the chart.
#[test]
fn every_file_written_is_announced_with_what_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = rtlab()
        .current_dir(dir.path())
        .args(["sim", "builtin:lf-scenario-4", "-s", "edf", "-d", "1s"])
        .args(["--gantt", "g.svg", "--plot", "p.svg", "--trace", "t.json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    for (file, what) in [
        ("g.svg", "Gantt chart of 0ns..200ms, SVG, "),
        ("p.svg", "Gantt chart, SVG, "),
        ("t.json", "Chrome trace, "),
    ] {
        let size = std::fs::metadata(dir.path().join(file)).unwrap().len();
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("wrote {file} (")))
            .unwrap_or_else(|| panic!("no wrote line for {file} in {stderr}"));
        assert!(line.contains(what), "{line}");
        assert!(
            size > 0 && line.ends_with(" KiB)") || line.ends_with(" B)"),
            "{line}"
        );
    }
    assert!(
        stderr.contains("show the first 200ms of the 1s run (the default --window)"),
        "{stderr}"
    );
}

/// An overheads file with a `[throttling]` table (what `characterize`
/// writes on Linux): `analyze` charges RT throttling and the fair server
/// (README "Linux's throttling in the model"), `sim` lets its servers take
/// the processor and reports them; the same file without the table prints
/// no throttling at all.
#[test]
fn a_throttling_table_lowers_the_overhead_aware_breakdown_and_shows_in_sim() {
    let dir = tempfile::tempdir().unwrap();
    let costs = "timer = \"0us\"\npreempt = \"0us\"\nexit = \"0us\"\nnonpreempt = \"0us\"\n";
    let plain = dir.path().join("plain.toml");
    let throttled = dir.path().join("throttled.toml");
    std::fs::write(&plain, costs).unwrap();
    std::fs::write(
        &throttled,
        format!(
            "{costs}\n[throttling]\nrt_runtime = \"950ms\"\nrt_period = \"1s\"\n\
             fair_server_runtime = \"50ms\"\nfair_server_period = \"1s\"\n"
        ),
    )
    .unwrap();
    let breakdown_with = |file: &std::path::Path| {
        let doc = json_of(&[
            "analyze",
            "builtin:ins",
            "--policy",
            "rm",
            "--overheads",
            file.to_str().unwrap(),
            "--breakdown",
            "--json",
        ]);
        breakdown_utilizations(&doc)[1].unwrap()
    };
    // Zero costs: the ideal 99.44 %; the limits bring it just under the
    // 95 % cap (94.47 %: the virtual task of 50 ms + 1 ns per 1 s).
    let ideal = breakdown_with(&plain);
    let limited = breakdown_with(&throttled);
    assert!((ideal - 0.9944).abs() < 1e-3, "{ideal}");
    assert!((limited - 0.9447).abs() < 1e-3, "{limited}");

    let sim = |file: &std::path::Path| {
        json_of(&[
            "sim",
            "builtin:ins",
            "-s",
            "fp:rm",
            "-d",
            "2s",
            "--overheads",
            file.to_str().unwrap(),
            "--json",
        ])
    };
    assert!(sim(&plain).get("throttling").is_none());
    let doc = sim(&throttled);
    assert_eq!(
        doc["throttling"]["model"],
        "rt 950ms per 1s, fair server 50ms per 1s"
    );
    // U = 0.884 leaves SCHED_OTHER more than 50 ms of every second.
    assert_eq!(doc["throttling"]["fair_server_runs"], 0);
    assert_eq!(doc["deadline_misses"], 0);
    rtlab()
        .args(["sim", "builtin:ins", "-s", "fp:rm", "-d", "2s", "--overheads"])
        .arg(&throttled)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "throttling (rt 950ms per 1s, fair server 50ms per 1s): RT throttling took 0 ns in 0 blackouts",
        ));
    // A runtime above its period: one line naming file:line:col, exit 1.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        format!("{costs}[throttling]\nrt_runtime = \"2s\"\nrt_period = \"1s\"\n"),
    )
    .unwrap();
    rtlab()
        .args(["analyze", "builtin:ins", "--overheads"])
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.toml:6:1: `rt_runtime`: runtime 2s must be above 0 and at most the period 1s",
        ));
}
