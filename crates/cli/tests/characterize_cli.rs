//! End-to-end tests of `rtlab characterize`: bad flags are one-line usage
//! errors naming the flag; without privilege the one-line reason; as root,
//! a short characterisation writes a file that `rtlab analyze` reads. The
//! measuring tests need root: `#[ignore = "needs root"]`, run them as root
//! with `-- --ignored` under the machine-wide real-time lock.

mod common;

use common::outcome;

#[test]
fn bad_flags_are_one_line_usage_errors_naming_the_flag() {
    for (args, start) in [
        (vec!["--threads", "1,4"], "error: invalid --threads 1: each n must be in 2..=64"),
        (vec!["--threads", "2,65"], "error: invalid --threads 65: each n must be in 2..=64"),
        (vec!["--samples", "5"], "error: invalid --samples 5: use 10..=100000"),
        (vec!["--samples", "1000000"], "error: invalid --samples 1000000: use 10..=100000"),
        (vec!["--cpu", "4096"], "error: invalid --cpu 4096: this process may use CPUs"),
        (vec!["--stat", "p95"], "error: invalid value 'p95' for '--stat <STAT>': unknown statistic `p95` (use max, p999, p99 or median)"),
        (vec!["--threads", "two"], "error: invalid value 'two' for '--threads <THREADS>'"),
    ] {
        let mut all = vec!["characterize"];
        all.extend(&args);
        let (code, stdout, stderr) = outcome(&all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(stderr.starts_with(start), "{args:?}: {stderr}");
        assert!(stderr.lines().next().unwrap().len() > 20);
    }
}

#[test]
fn without_privilege_the_reason_is_one_line_and_the_exit_is_1() {
    let Some(out) = common::unprivileged(
        &["characterize", "--threads", "2", "--samples", "10"],
        "rtlab-charz-nobody",
    ) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "error: rtlab characterize: SCHED_FIFO priority 40 needs root or CAP_SYS_NICE"
        ),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs root"]
fn a_characterised_file_is_read_by_analyze() {
    let _one = common::real_time();
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("my.toml");
    let csv = dir.path().join("costs.csv");
    let (code, stdout, stderr) = outcome(&[
        "characterize",
        "--threads",
        "2,6",
        "--samples",
        "50",
        "--name",
        "here",
        "--out",
        toml.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for scenario in ["preempt", "exit", "nonpreempt"] {
        let points = doc["measured"][scenario].as_array().unwrap();
        let ns: Vec<u64> = points.iter().map(|p| p["n"].as_u64().unwrap()).collect();
        assert_eq!(ns, [2, 6], "{scenario}");
        for p in points {
            assert_eq!(p["count"], 50, "{scenario}: {p}");
            assert!(p["min_ns"].as_u64().unwrap() > 0, "{scenario}: {p}");
        }
        assert!(
            doc["fits"][scenario]["r_squared"].as_f64().is_some(),
            "{scenario}"
        );
    }
    assert_eq!(doc["config"]["stat"], "p999");
    assert!(
        doc.get("kernel_trace").is_none(),
        "only with --kernel-trace"
    );
    assert!(doc["host"]["kernel_release"].is_string());
    assert!(
        doc["measured"]["timer"]["tick"]["tick_ns"]
            .as_u64()
            .unwrap()
            >= 1_000_000
    );
    let text = std::fs::read_to_string(&toml).unwrap();
    assert_eq!(doc["overheads_toml"].as_str().unwrap(), text);
    // The disturbance account of the measured CPU and its verdict (issue
    // 35); a disturbed profile says so in the file.
    let account = &doc["disturbance"];
    assert_eq!(account["cpus"].as_array().unwrap().len(), 1, "{account}");
    assert!(account["window_ns"].as_u64().unwrap() > 0, "{account}");
    match account["verdict"]["kind"].as_str().unwrap() {
        "clean" => assert!(!text.contains("# measured"), "{text}"),
        "disturbed" => assert!(text.contains("\n# measured disturbed: "), "{text}"),
        other => panic!("verdict {other}"),
    }
    assert!(
        text.starts_with("name = \"here\"\nsource = \"rtlab characterize on "),
        "{text}"
    );
    assert!(text.contains("releases = \"hrtimer\"\ntick = \""), "{text}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(
        rows.starts_with(
            "scenario,n,count,min_ns,median_ns,p99_ns,p999_ns,max_ns,invalid\ntimer,1,"
        ),
        "{rows}"
    );
    assert_eq!(
        rows.lines().filter(|l| l.starts_with("preempt,")).count(),
        2
    );
    let (code, stdout, stderr) = outcome(&[
        "analyze",
        "builtin:avionics",
        "--policy",
        "rm",
        "--overheads",
        toml.to_str().unwrap(),
        "--breakdown",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("here"), "{stdout}");
}

#[test]
#[ignore = "needs root"]
fn with_kernel_trace_each_cost_is_given_both_ways_and_the_stalls_apart() {
    let _one = common::real_time();
    if !common::can_trace() {
        return;
    }
    let (code, stdout, stderr) = outcome(&[
        "characterize",
        "--threads",
        "2,4",
        "--samples",
        "50",
        "--kernel-trace",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let k = &doc["kernel_trace"];
    assert!(k["events"].as_u64().unwrap() > 0, "{k}");
    let excluded = k["excluded_samples"].as_u64().unwrap();
    let rows = k["costs"].as_array().unwrap();
    let which: Vec<(String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["cost"].as_str().unwrap().to_string(),
                r["n"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = [
        ("release", 2),
        ("release", 4),
        ("exit", 2),
        ("exit", 4),
        ("switch", 2),
    ]
    .iter()
    .map(|(c, n)| (c.to_string(), *n))
    .collect();
    assert_eq!(which, expected);
    for r in rows {
        // Every user-space sample is one event the kernel saw: its sample
        // is there unless a stall inside left it out.
        let user = r["user"]["count"].as_u64().unwrap();
        let kernel = r["kernel"]["count"].as_u64().unwrap_or(0);
        assert!(kernel + excluded >= user, "{r}");
        assert!(r["kernel"]["min_ns"].as_u64().unwrap() > 0, "{r}");
    }
    let stalls = &k["stalls"];
    assert!(stalls["longest_ns"].as_u64().unwrap() <= stalls["total_ns"].as_u64().unwrap());
    assert!(k["steal_ns"].is_u64());
    assert!(k["release_fit"]["r_squared"].as_f64().is_some(), "{k}");
}

#[test]
fn kernel_trace_without_root_is_refused_in_one_line_before_measuring() {
    let Some(out) = common::unprivileged(
        &[
            "characterize",
            "--threads",
            "2",
            "--samples",
            "10",
            "--kernel-trace",
        ],
        "rtlab-charz-nobody",
    ) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--kernel-trace needs root"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty(), "nothing measured");
}
