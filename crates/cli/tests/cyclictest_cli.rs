//! `rtlab latency --json=FILE` writes cyclictest's JSON layout: the keys of
//! a document cyclictest 2.40 wrote on the project's machine
//! (`fixtures/cyclictest-2.40.json`, from `cyclictest -q -m -p99 -i1000 -t2
//! -a -D1 -h 50 --json=...`), with values that agree with the run.
//!
//! The real-time tests need root (`#[ignore = "needs root"]`); run them
//! under the machine's lock: `flock /tmp/rtlab-realtime.lock cargo test -p
//! rtlab-cli --test cyclictest_cli -- --ignored`.

mod common;

use common::stdout_of;
use serde_json::Value;

fn fixture() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cyclictest-2.40.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The keys of an object, sorted.
fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort();
    k
}

/// The JSON kind of a value, numbers split into whole and not.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

/// `doc` has cyclictest's keys, with cyclictest's kinds of value, and its
/// threads agree with their own histogram; returns the thread entries.
fn check_layout(doc: &Value, threads: usize, loops: Option<u64>) -> Vec<Value> {
    let reference = fixture();
    assert_eq!(keys(doc), keys(&reference));
    for key in keys(&reference) {
        if key != "thread" {
            assert_eq!(kind(&doc[key]), kind(&reference[key]), "{key}");
        }
    }
    assert_eq!(keys(&doc["sysinfo"]), keys(&reference["sysinfo"]));
    for key in keys(&reference["sysinfo"]) {
        assert_eq!(
            kind(&doc["sysinfo"][key]),
            kind(&reference["sysinfo"][key]),
            "{key}"
        );
    }
    assert_eq!(doc["file_version"], 1);
    assert_eq!(doc["sysinfo"]["sysname"], "Linux");
    assert_eq!(doc["num_threads"], threads);
    let expected: Vec<String> = (0..threads).map(|i| i.to_string()).collect();
    assert_eq!(
        keys(&doc["thread"]),
        expected.iter().map(String::as_str).collect::<Vec<_>>()
    );
    let entry_reference = &reference["thread"]["0"];
    (0..threads)
        .map(|i| {
            let t = doc["thread"][i.to_string()].clone();
            assert_eq!(keys(&t), keys(entry_reference));
            for key in ["cycles", "min", "max", "cpu", "node", "histogram"] {
                assert_eq!(kind(&t[key]), kind(&entry_reference[key]), "{key}");
            }
            let cycles = t["cycles"].as_u64().unwrap();
            if let Some(loops) = loops {
                assert_eq!(cycles, loops);
            }
            let (min, max) = (t["min"].as_u64().unwrap(), t["max"].as_u64().unwrap());
            let avg = t["avg"].as_f64().unwrap();
            assert!(min as f64 <= avg && avg < (max + 1) as f64, "{t}");
            let histogram = t["histogram"].as_object().unwrap();
            let counted: u64 = histogram.values().map(|n| n.as_u64().unwrap()).sum();
            assert!(counted <= cycles && counted > 0, "{t}");
            let buckets: Vec<u64> = histogram.keys().map(|k| k.parse().unwrap()).collect();
            assert_eq!(
                buckets.iter().min(),
                Some(&min),
                "the lowest bucket holds the minimum"
            );
            t
        })
        .collect()
}

#[test]
fn json_file_has_cyclictests_layout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ct.json");
    let arg = format!("--json={}", file.display());
    let stdout = stdout_of(&[
        "latency",
        "--policy",
        "other",
        "-l",
        "50",
        "-i",
        "500",
        "-q",
        &arg,
        "--no-dma-latency",
        "--histogram-buckets",
        "1000000",
    ]);
    assert_eq!(
        stdout.lines().count(),
        1,
        "-q: one cyclictest line per thread\n{stdout}"
    );
    assert!(stdout.starts_with("T: 0 ("), "{stdout}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let threads = check_layout(&doc, 1, Some(50));
    assert_eq!(threads[0]["cpu"], -1, "not pinned");
    assert_eq!(doc["return_code"], 0);
    assert!(doc["cmdline:"]
        .as_str()
        .unwrap()
        .contains(&format!("latency --policy other -l 50 -i 500 -q {arg}")));
    // --json=- puts the same layout on standard output, alone.
    let out = stdout_of(&[
        "latency",
        "--policy",
        "other",
        "-l",
        "20",
        "--json=-",
        "--no-dma-latency",
        "--histogram-buckets",
        "1000000",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    check_layout(&doc, 1, Some(20));
}

#[test]
#[ignore = "needs root"]
fn a_real_time_run_writes_cyclictest_json() {
    let _one = common::real_time();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ct.json");
    let arg = format!("--json={}", file.display());
    // cyclictest -q -m -p99 -i1000 -t2 -a -D1 -h 50 --json=FILE, with the program name changed.
    let stdout = stdout_of(&[
        "latency", "-q", "-m", "-p99", "-i1000", "-t2", "-a", "-D1", "-h", "50", &arg,
    ]);
    assert!(stdout.starts_with("T: 0 ("), "{stdout}");
    assert!(stdout.contains("\nT: 1 ("), "{stdout}");
    assert!(stdout.contains("P:99 I:1000"), "{stdout}");
    assert!(
        !stdout.contains("I:1500"),
        "-h gives every thread the same interval, as cyclictest does: {stdout}"
    );
    assert!(
        stdout.contains("# Histogram\n000000 "),
        "-h 50 prints the histogram: {stdout}"
    );
    assert!(stdout.contains("\n000049 "), "50 buckets: {stdout}");
    assert!(!stdout.contains("\n000050 "), "50 buckets: {stdout}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let threads = check_layout(&doc, 2, None);
    let cpus = std::thread::available_parallelism().unwrap().get() as i64;
    for (i, t) in threads.iter().enumerate() {
        assert_eq!(
            t["cpu"],
            i as i64 % cpus,
            "-a pins thread i to the i-th CPU"
        );
        assert_eq!(t["node"], 0);
        // 1 s at 1000 us: as in cyclictest, -h gives every thread the same
        // interval (no distance), so at most 1000 loops each (fewer when a
        // late wake-up skips periods).
        let cycles = t["cycles"].as_u64().unwrap();
        let most = 1_000_000 / 1000 + 1;
        assert!((1..=most).contains(&cycles), "thread {i}: {cycles} loops");
        assert!(t["histogram"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| k.parse::<u64>().unwrap() < 50));
    }
}

/// The numbers of a `T:` line: (C, Min, Avg, Max).
fn t_line(text: &str) -> (u64, u64, u64, u64) {
    let line = text
        .lines()
        .find(|l| l.starts_with("T: 0 ("))
        .unwrap_or_else(|| panic!("no T: line in {text}"));
    let after = |key: &str| -> u64 {
        let rest = &line[line.find(key).unwrap() + key.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    (after("C:"), after("Min:"), after("Avg:"), after("Max:"))
}

/// `rtlab latency -r` beside rt-tests' `cyclictest -r` with the same
/// options: both measure the overshoot of each relative sleep, so both
/// lines must hold what that implies (every requested loop, Min <= Avg <=
/// Max), and each run lasts at least loops x (interval + Min), since no
/// relative sleep is shorter than the interval plus its overshoot. The
/// figures themselves are noise on a shared machine: README "Relative and
/// absolute sleeps" has a measured comparison.
#[test]
#[ignore = "needs root"]
fn relative_timers_measure_what_cyclictest_r_measures() {
    let _one = common::real_time();
    let Ok(cyclictest) = which_cyclictest() else {
        common::unavailable("cyclictest (rt-tests) is not installed (apt-get install rt-tests)");
        return;
    };
    let options = ["-r", "-q", "-m", "-p99", "-i1000", "-l300"];
    let timed = |program: &std::path::Path, first: &[&str]| {
        let started = std::time::Instant::now();
        let out = std::process::Command::new(program)
            .args(first)
            .args(options)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (String::from_utf8(out.stdout).unwrap(), started.elapsed())
    };
    let rtlab = std::path::PathBuf::from(env!("CARGO_BIN_EXE_rtlab"));
    for (name, (text, wall)) in [
        ("rtlab", timed(&rtlab, &["latency"])),
        ("cyclictest", timed(&cyclictest, &[])),
    ] {
        let (loops, min, avg, max) = t_line(&text);
        assert_eq!(loops, 300, "{name}: {text}");
        assert!(min <= avg && avg <= max, "{name}: {text}");
        let least = std::time::Duration::from_micros(300 * (1000 + min));
        assert!(wall >= least, "{name} took {wall:?} < {least:?}: {text}");
    }
}

/// `cyclictest` on PATH.
fn which_cyclictest() -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("cyclictest"))
        .find(|candidate| candidate.is_file())
        .ok_or(())
}
