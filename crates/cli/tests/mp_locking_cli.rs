//! Shared resources on m processors from the command line: `rtlab sim
//! --locking` under each protocol with per-job blocking, `rtlab analyze
//! --locking` with each protocol's bounds, and the refusals (one line, the
//! file's place, exit 1; a protocol under the wrong scheduler, exit 2).

mod common;

use common::{json_of, rtlab, stdout_of};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Every partitioned protocol runs the demo set placed by ff-decreasing,
/// reports each task's longest blocking, and agrees with its analysis:
/// what it proves misses nothing, and no task's worst job exceeds its
/// bounds.
#[test]
fn each_partitioned_protocol_runs_with_per_job_blocking_within_its_bounds() {
    let analysis = json_of(&[
        "analyze",
        "builtin:mp-locking",
        "--cpus",
        "4",
        "--locking",
        "all",
        "--json",
    ]);
    let protocols = analysis["protocols"].as_array().unwrap();
    assert_eq!(protocols.len(), 6);
    for (name, bounds) in ["mpcp", "dpcp", "fmlp+", "mrsp", "msrp"]
        .iter()
        .zip(protocols)
    {
        assert_eq!(bounds["protocol"], *name);
        let run = json_of(&[
            "sim",
            "builtin:mp-locking",
            "--cpus",
            "4",
            "--partition",
            "ff-decreasing",
            "-s",
            "pfp:rm",
            "--locking",
            name,
            "-d",
            "300ms",
            "--json",
        ]);
        assert_eq!(run["protocol"], *name);
        let tasks = run["tasks"].as_array().unwrap();
        assert!(
            tasks
                .iter()
                .any(|t| t["max_remote_blocked_ns"].as_u64() > Some(0)),
            "{name}: some job waits for a global resource"
        );
        if bounds["schedulable"] == true {
            assert_eq!(run["deadline_misses"], 0, "{name}");
            for (t, b) in tasks.iter().zip(bounds["tasks"].as_array().unwrap()) {
                assert!(t["max_remote_blocked_ns"].as_u64() <= b["remote_blocking_ns"].as_u64());
                assert!(t["max_local_blocked_ns"].as_u64() <= b["local_blocking_ns"].as_u64());
                assert!(t["max_response_ns"].as_u64() <= b["response_ns"].as_u64());
            }
        }
    }
    assert_eq!(protocols[0]["schedulable"], true, "MPCP proves the demo");
}

#[test]
fn omlp_runs_under_global_edf_and_the_human_report_shows_blocking() {
    let text = stdout_of(&[
        "sim",
        "builtin:mp-locking",
        "-s",
        "gedf",
        "--locking",
        "omlp",
        "-d",
        "200ms",
    ]);
    assert!(text.contains("protocol omlp"), "{text}");
    assert!(text.contains("max remote B"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("omlp.json");
    rtlab()
        .args([
            "sim",
            "builtin:mp-locking",
            "-s",
            "gedf",
            "--locking",
            "omlp",
            "-d",
            "60ms",
            "--trace",
            trace.to_str().unwrap(),
        ])
        .assert()
        .success();
    let json = std::fs::read_to_string(&trace).unwrap();
    assert!(
        json.contains("\"remote blocking ") && json.contains("\"cat\":\"blocking\""),
        "each job's blocking is in the trace"
    );
}

#[test]
fn the_trace_has_the_sections_and_the_spins() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("msrp.json");
    rtlab()
        .args([
            "sim",
            "builtin:mp-locking",
            "--partition",
            "ff-decreasing",
            "-s",
            "pfp:rm",
            "--locking",
            "msrp",
            "-d",
            "100ms",
            "--trace",
            trace.to_str().unwrap(),
            "--window",
            "0ms..100ms",
        ])
        .assert()
        .success();
    let json = std::fs::read_to_string(&trace).unwrap();
    assert!(json.contains("\"critical section "), "sections are events");
    assert!(json.contains("\"spin "), "spins are events");
    assert!(json.contains("\"cat\":\"lock\""), "on the processors' rows");
}

#[test]
fn analyze_gives_each_protocols_bounds() {
    let text = stdout_of(&[
        "analyze",
        "builtin:mp-locking",
        "--locking",
        "mpcp,omlp",
        "--test",
        "pfp-dm:wf-decreasing",
    ]);
    assert!(text.contains("mpcp (Rajkumar 1990)"), "{text}");
    assert!(text.contains("placed by wf-decreasing by dm:rta"), "{text}");
    assert!(
        text.contains("omlp (Brandenburg & Anderson 2010)"),
        "{text}"
    );
    assert!(text.contains("local B"), "{text}");
}

const NESTED: &str = r#"processors = 2
[[task]]
name = "a"
period = "10ms"
wcet = "4ms"
cpu = 0
critical_sections = [
  { resource = "bus", start = "1ms", length = "2ms" },
  { resource = "log", start = "1500us", length = "500us" },
]
[[task]]
name = "b"
period = "20ms"
wcet = "4ms"
cpu = 1
critical_sections = [{ resource = "bus", start = "0ms", length = "1ms" }]
"#;

/// One line, exit 1, naming where in the file.
fn refused(args: &[&str]) -> String {
    let out = rtlab()
        .args(args)
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    text
}

#[test]
fn nesting_on_a_global_resource_is_refused_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "nested.toml", NESTED);
    for args in [
        vec!["sim", &file, "-s", "pfp:rm", "--locking", "mpcp"],
        vec!["analyze", &file, "--locking", "dpcp"],
    ] {
        let text = refused(&args);
        assert!(
            text.contains("nested.toml:9:16: task `a`: the critical section on `log` is nested in the one on `bus`, and `bus` is a global resource"),
            "{text}"
        );
    }
    // The same resources on one processor nest under the ceiling protocol.
    let local = write(&dir, "local.toml", &NESTED.replace("cpu = 1", "cpu = 0"));
    stdout_of(&[
        "sim",
        &local,
        "-s",
        "pfp:rm",
        "--locking",
        "mpcp",
        "-d",
        "40ms",
    ]);
}

#[test]
fn a_resource_where_the_protocol_cannot_share_it_is_refused_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let shared = NESTED.replace(
        "  { resource = \"log\", start = \"1500us\", length = \"500us\" },\n",
        "",
    );
    let file = write(&dir, "shared.toml", &shared);
    let text = refused(&["sim", &file, "-s", "pfp:rm", "--locking", "ipcp"]);
    assert!(
        text.contains("shared.toml:15:35: task `b`: resource `bus` is also used on cpu 0 (by task `a`), and this task runs on cpu 1: ipcp is a uniprocessor protocol"),
        "{text}"
    );
    let clustered = write(
        &dir,
        "clusters.toml",
        &shared
            .replace(
                "processors = 2",
                "processors = 4\nclusters = [[0, 1], [2, 3]]",
            )
            .replace("cpu = 1", "cpu = 2"),
    );
    let text = refused(&["sim", &clustered, "-s", "cedf", "--locking", "omlp"]);
    assert!(text.contains("clusters.toml:16:35"), "{text}");
    assert!(
        text.contains("omlp shares a resource within one cluster"),
        "{text}"
    );
}

#[test]
fn a_protocol_under_the_wrong_scheduler_is_a_usage_error() {
    let out = rtlab()
        .args([
            "sim",
            "builtin:mp-locking",
            "-s",
            "gedf",
            "--locking",
            "mpcp",
        ])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert_eq!(
        String::from_utf8(out).unwrap().trim(),
        "error: --locking mpcp (Rajkumar 1990) runs under partitioned fixed priorities (pfp:rm, pfp:dm, pfp:given); gedf is not one"
    );
}

#[test]
fn a_section_longer_than_c_is_refused_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        "long.toml",
        &NESTED.replace(
            "start = \"0ms\", length = \"1ms\"",
            "start = \"0ms\", length = \"5ms\"",
        ),
    );
    let text = refused(&["sim", &file, "-s", "pfp:rm", "--locking", "mpcp"]);
    assert!(text.contains("long.toml:16:"), "{text}");
    assert!(text.contains("after the job's wcet 4ms"), "{text}");
}

/// `sweep --locking`: one column per protocol, the sharing in the
/// document's spec, the same numbers on a second run.
#[test]
fn sweep_counts_each_protocol_with_sections_drawn_by_the_flags() {
    let args = [
        "sweep",
        "--cpus",
        "2",
        "--tasks",
        "4",
        "--from",
        "0.5",
        "--to",
        "1.5",
        "--step",
        "0.5",
        "--sets",
        "10",
        "--locking",
        "mpcp,omlp",
        "--resources",
        "2",
        "--sharing",
        "0.5",
        "--cs-length",
        "100us..1ms",
        "--json",
    ];
    let doc = json_of(&args);
    assert_eq!(doc["tests"], serde_json::json!(["mpcp", "omlp"]));
    assert_eq!(doc["rows"].as_array().unwrap().len(), 3);
    assert_eq!(json_of(&args), doc, "deterministic");
    let out = rtlab()
        .args(["sweep", "--sharing", "0.5"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8(out).unwrap().contains("--locking"));
}

/// Two tasks on CPU 0 and one on CPU 1 share `bus` (the file's cpu
/// fields).
const REAL: &str = r#"processors = 2
[[task]]
name = "a"
period = "10ms"
wcet = "2ms"
cpu = 0
critical_sections = [{ resource = "bus", start = "500us", length = "1ms" }]
[[task]]
name = "b"
period = "15ms"
wcet = "3ms"
cpu = 1
critical_sections = [{ resource = "bus", start = "0ms", length = "2ms" }]
[[task]]
name = "c"
period = "20ms"
wcet = "4ms"
cpu = 0
critical_sections = [{ resource = "bus", start = "1ms", length = "1ms" }]
"#;

/// The protocols that need a dispatcher are refused on real threads,
/// naming it (before anything runs: no privilege needed).
#[test]
fn protocols_that_need_a_dispatcher_are_refused_on_real_threads() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "real.toml", REAL);
    for (protocol, why) in [
        ("dpcp", "agents"),
        ("mrsp", "migrates"),
        ("omlp", "dispatcher"),
    ] {
        let out = rtlab()
            .args([
                "run",
                &file,
                "--cpus",
                "0,1",
                "--policy",
                "pfp:rm",
                "--protocol",
                protocol,
            ])
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(why) && text.contains("dispatcher"), "{text}");
    }
}

/// On real threads (root, 2 CPUs): partitioned RM with FIFO futex locks
/// and boosting (fmlp+), non-preemptive FIFO spinning (msrp) and a
/// priority-ordered PI queue with boosting (mpcp) run every job, with no
/// failed lock call and each locker's wait recorded as remote blocking.
/// Counts only: timing on this machine is noisy.
#[test]
#[ignore = "needs root"]
fn partitioned_protocols_run_on_real_threads() {
    let _one = common::real_time();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    if online.trim() == "0" {
        common::unavailable("needs 2 online CPUs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "real.toml", REAL);
    for protocol in ["fmlp+", "msrp", "mpcp"] {
        let run = json_of(&[
            "run",
            &file,
            "--cpus",
            "0,1",
            "--policy",
            "pfp:rm",
            "--protocol",
            protocol,
            "-d",
            "300ms",
            "--json",
        ]);
        assert_eq!(run["protocol"], protocol);
        // Absent when none failed.
        assert_eq!(run["lock_errors"].as_u64().unwrap_or(0), 0, "{protocol}");
        // 30 + 20 + 15 releases in 300 ms, every one recorded.
        let released: u64 = run["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["released"].as_u64().unwrap())
            .sum();
        assert_eq!(released, 65, "{protocol}: {run}");
        for t in run["tasks"].as_array().unwrap() {
            assert!(t["max_remote_blocked_ns"].is_u64(), "{protocol}: {t}");
        }
    }
}
