//! `rtlab partition` and `rtlab analyze --cpus` from the command line: the
//! assignment and its file, the global and partitioned verdicts of the
//! catalog's multiprocessor examples, and the platform refusals (one line,
//! exit 1 for a file, 2 for a flag).

mod common;

use common::{failure, json_of, rtlab, stdout_of, write};

#[test]
fn partition_places_dhall_and_writes_a_loadable_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("placed.toml");
    let out = out.to_str().unwrap();
    let doc = json_of(&[
        "partition",
        "builtin:dhall",
        "--heuristic",
        "ff-decreasing",
        "--test",
        "rm:rta",
        "--json",
        "--out",
        out,
    ]);
    assert_eq!(doc["fits"], true);
    assert_eq!(doc["heuristic"], "ff-decreasing");
    assert_eq!(doc["test"], "rm:rta");
    let cpus: Vec<i64> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cpu"].as_i64().unwrap())
        .collect();
    assert_eq!(
        cpus,
        [1, 1, 0],
        "heavy first on 0, the light ones beside it would miss"
    );
    assert_eq!(doc["processors"][0]["tasks"], serde_json::json!(["heavy"]));
    assert_eq!(doc["processors"][1]["schedulable"]["rm:rta"], true);
    // The file is a partitioned set: processors = 2 and a cpu per task.
    let text = std::fs::read_to_string(out).unwrap();
    assert!(text.contains("processors = 2\n"), "{text}");
    let shown = json_of(&["taskset", "show", out, "--json"]);
    assert_eq!(shown["processors"], 2);
    assert_eq!(shown["tasks"][2]["cpu"], 0);
    // analyze on it reports the file's assignment per processor.
    let analysed = json_of(&["analyze", out, "--json"]);
    assert_eq!(analysed["processors"], 2);
    assert_eq!(
        analysed["assignment"][0]["schedulable"]["edf:edf-demand"],
        true
    );
    assert_eq!(
        analysed["assignment"][1]["tasks"],
        serde_json::json!(["light1", "light2"])
    );
}

#[test]
fn a_set_that_does_not_fit_is_a_result_not_an_error() {
    let text = stdout_of(&["partition", "builtin:no-partition", "--heuristic", "wf"]);
    assert!(
        text.contains("fits no processor: not partitioned (2 of 3 placed)"),
        "{text}"
    );
    let doc = json_of(&["partition", "builtin:no-partition", "--json"]);
    assert_eq!(doc["fits"], false);
    assert_eq!(doc["unplaced"], "a");
}

#[test]
fn analyze_on_two_processors_pins_dhall_and_no_partition() {
    let dhall = json_of(&["analyze", "builtin:dhall", "--json"]);
    let verdict = |doc: &serde_json::Value, test: &str| {
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["test"] == test)
            .map(|t| t["schedulable"].clone())
            .unwrap()
    };
    for test in [
        "gedf:gfb",
        "gedf:bak",
        "gedf:bcl",
        "gedf:rta",
        "gfp-dm:rta",
        "gfp-dm:rta-lc",
    ] {
        assert_eq!(verdict(&dhall, test), serde_json::Value::Null, "{test}");
    }
    assert_eq!(verdict(&dhall, "gfp-dkc:rta"), true);
    assert_eq!(verdict(&dhall, "pedf:ff-decreasing"), true);
    // Response bounds of the light tasks under G-DM: no interference from
    // fewer than m more urgent tasks.
    assert_eq!(dhall["tasks"][0]["response_ns"]["gfp-dm:rta"], 2_000_000);
    let none = json_of(&["analyze", "builtin:no-partition", "--json"]);
    assert_eq!(
        verdict(&none, "pedf:ff-decreasing"),
        serde_json::Value::Null
    );
    let unplaced = none["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "pedf:ff-decreasing")
        .unwrap();
    assert_eq!(unplaced["unplaced"], "a");
    // Devi & Anderson's bound exists for these implicit-deadline sets.
    assert!(none["tasks"][0]["tardiness_bound_ns"].as_u64().unwrap() >= 1_000_000);
    // --cpus overrides the file; U = 1.83 > 1 on one processor.
    let one = json_of(&[
        "analyze",
        "builtin:no-partition",
        "--cpus",
        "1",
        "--test",
        "gedf:gfb",
        "--json",
    ]);
    assert_eq!(one["processors"], 1);
    assert_eq!(one["tests"][0]["schedulable"], false);
    let human = stdout_of(&[
        "analyze",
        "builtin:dhall",
        "--test",
        "gedf:rta,pedf:ff-decreasing",
    ]);
    assert!(human.contains("on 2 processors"), "{human}");
    assert!(human.contains("schedulable (cpus 1 1 0)"), "{human}");
}

#[test]
fn platform_refusals_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let set = |platform: &str, cpu: &str| {
        format!("{platform}\n[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n{cpu}\n")
    };
    let cases = [
        ("processors = 0", "", "2:14: `processors` is 0: a platform needs at least 1 processor"),
        ("processors = 2000", "", "2:14: `processors` is 2000: rtlab models at most 1024 processors"),
        ("processors = 2\nclusters = [[0], [1, 2]]", "", "3:22: cluster #2 names processor 2, which does not exist (processors = 2 numbers them 0 to 1)"),
        ("processors = 2\nclusters = [[0, 1], [1]]", "", "3:22: processor 1 is in cluster #1 and cluster #2: clusters must not overlap"),
        ("processors = 2", "cpu = 2", "7:7: task `a`: cpu 2 does not exist (processors = 2 numbers them 0 to 1)"),
    ];
    for (k, (platform, cpu, message)) in cases.iter().enumerate() {
        let file = write(
            &dir,
            &format!("p{k}.toml"),
            &format!("name = \"p\"\n{}", set(platform, cpu)),
        );
        for command in ["analyze", "partition"] {
            let (code, stderr) = failure(&[command, &file]);
            assert_eq!(code, 1, "{command} {platform}");
            assert_eq!(stderr, format!("error: {file}:{message}"), "{command}");
        }
    }
    let fixed = write(
        &dir,
        "fixed.toml",
        &format!("name = \"p\"\n{}", set("processors = 4", "cpu = 3")),
    );
    let (code, stderr) = failure(&["analyze", &fixed, "--cpus", "2"]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "error: --cpus 2: task `a`: cpu 3 does not exist (processors = 2 numbers them 0 to 1)"
        )
    );
    let (code, stderr) = failure(&["analyze", &fixed, "--test", "gedf:bcl"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: --test gedf:bcl: a global test ignores the tasks' cpu fields"),
        "{stderr}"
    );
    for args in [
        &["analyze", "builtin:dhall", "--cpus", "0"][..],
        &["partition", "builtin:dhall", "--cpus", "1025"],
        &["analyze", "builtin:dhall", "--test", "gedf:nope"],
        &["partition", "builtin:avionics"],
        &["analyze", "builtin:dhall", "--breakdown"],
    ] {
        let (code, stderr) = failure(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

/// `--policy` chooses uniprocessor tests: on a 2-processor file (or with
/// `--test`) it would be ignored, so it is refused in one line that says
/// what to use, where it used to print the multiprocessor table and exit 0
/// (issue 36).
#[test]
fn a_uniprocessor_policy_on_several_processors_is_refused() {
    for args in [
        vec!["analyze", "builtin:dhall", "--policy", "edf"],
        vec![
            "analyze",
            "builtin:avionics",
            "--cpus",
            "2",
            "--policy",
            "rm",
        ],
        vec![
            "analyze",
            "builtin:avionics",
            "--policy",
            "rm",
            "--test",
            "gedf:gfb",
        ],
    ] {
        let (code, err) = failure(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("is for one processor") && err.contains("--test"),
            "{err}"
        );
    }
    // Without --policy the multiprocessor tests run, and one processor
    // still takes it.
    rtlab()
        .args(["analyze", "builtin:dhall"])
        .assert()
        .success();
    rtlab()
        .args(["analyze", "builtin:dhall", "--cpus", "1", "--policy", "edf"])
        .assert()
        .success();
}
