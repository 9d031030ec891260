//! Bad input end to end (issue 10, section 5): usage errors exit 2 and name
//! the flag, file errors exit 1 and name file:line:col, names are printed
//! escaped, and no input makes rtlab slow or its messages unreadable.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{is_root, outcome, rtlab, write};
use predicates::prelude::*;

/// `rtlab taskset validate FILE`, asserted.
fn validate(file: &str) -> assert_cmd::assert::Assert {
    rtlab().args(["taskset", "validate", file]).assert()
}

const INVALID: &str = "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"11ms\"\n";

/// Every usage error exits 2 and names its flag; a bad file exits 1. None
/// of these starts a real-thread run (they fail before it).
#[test]
fn usage_errors_exit_2_and_file_errors_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let invalid = write(dir.path(), "invalid.toml", INVALID);
    let svg = dir.path().join("s.svg");
    let svg = svg.to_str().unwrap();
    let s4 = "builtin:lf-scenario-4";
    let usage: &[(&[&str], &str)] = &[
        (&["sim", s4, "-s", "edf", "-d", "10"], "--duration"),
        (&["sim", s4, "-s", "edf", "--tick", "1"], "--tick"),
        (&["sim", s4, "-s", "nope", "-d", "100ms"], "--scheduler"),
        (&["sim", s4, "-s", "edf", "--on-miss", "nope"], "--on-miss"),
        (
            &["sim", s4, "-s", "edf", "--protocol", "nope"],
            "--protocol",
        ),
        (&["sim", s4, "-s", "edf", "--jitter", "nope"], "--jitter"),
        (&["sim", s4, "-s", "edf", "--exec", "nope"], "--exec"),
        (&["sim", s4, "-s", "edf", "--phase", "1ms..2ms"], "--phase"),
        (&["sim", s4, "-s", "edf", "--overload", "x"], "--overload"),
        (
            &["sim", s4, "-s", "fp:rm", "--protocol", "dfp", "-d", "1s"],
            "--protocol",
        ),
        (
            &[
                "sim", s4, "-s", "edf", "-d", "1s", "--gantt", svg, "--window", "1ms",
            ],
            "--window",
        ),
        (
            &["sim", s4, "-s", "ipi:burst=1ms,burst=2ms", "-d", "100ms"],
            "--scheduler",
        ),
        (&["run", s4, "--policy", "dm", "-d", "10"], "--duration"),
        (&["run", s4, "--policy", "nope", "-d", "1s"], "--policy"),
        (
            &["run", s4, "--policy", "dm", "--on-miss", "abort"],
            "--on-miss",
        ),
        (
            &["run", s4, "--policy", "edf", "--edf-margin", "5"],
            "--edf-margin",
        ),
        (
            &["compare", s4, "--policy", "dm", "--duration", "1x"],
            "--duration",
        ),
        (
            &["compare", s4, "--policy", "other", "-d", "1s"],
            "--policy",
        ),
        (
            &["compare", s4, "--policy", "dm", "--tolerance=-5"],
            "--tolerance",
        ),
        (&["latency", "-D", "10x"], "--duration"), // a bare 10 is cyclictest's 10 s
        (&["latency", "-a", "4095", "-D", "1s"], "--affinity"),
        (&["latency", "-i", "1us", "-D", "1s"], "--interval"),
        (&["load", "cpu:1", "--duration", "1m"], "--duration"),
        (&["drift", "--period", "10us"], "--period"),
        (&["drift", "--kinds", "sideways"], "--kinds"),
        (&["drift", "--kinds", "relative,relative"], "--kinds"),
        (&["drift", "--work", "20ms"], "--work"),
        (&["lag-study", "--periods", "10"], "--periods"),
        (&["lag-study", "--periods", "1us"], "--periods"),
        (&["sweep", "--from", "0", "--sets", "1"], "--from"),
        (
            &["sweep", "--test", "rm:rta-overheads", "--sets", "1"],
            "--overheads",
        ),
        (&["taskset", "gen", "--count", "2"], "--out"),
        (
            &[
                "taskset",
                "gen",
                "-n",
                "2",
                "-u",
                "3",
                "--max-task-utilization",
                "1",
            ],
            "--utilization",
        ),
    ];
    let mut wrong = Vec::new();
    for (args, flag) in usage {
        let (code, _, err) = outcome(args);
        if code != 2 || !err.contains(flag) {
            wrong.push(format!(
                "rtlab {}: exit {code} (want 2 naming {flag}): {}",
                args.join(" "),
                err.trim()
            ));
        }
    }
    let file_errors: &[&[&str]] = &[
        &["analyze", &invalid],
        &["sim", &invalid, "-s", "edf", "-d", "1s"],
        &["taskset", "validate", &invalid],
        &["taskset", "show", "/nonexistent/rtlab.toml"],
        &["run", &invalid, "--policy", "dm", "-d", "1s"],
    ];
    for args in file_errors {
        let (code, _, err) = outcome(args);
        if code != 1 {
            wrong.push(format!(
                "rtlab {}: exit {code} (want 1): {}",
                args.join(" "),
                err.trim()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn usage_errors_are_one_line_for_checks_after_parsing() {
    let (code, _, err) = outcome(&[
        "sim",
        "builtin:lf-scenario-4",
        "-s",
        "edf",
        "-d",
        "100ms",
        "--phase",
        "10ms..50ms:x2",
        "--phase",
        "40ms..60ms:x1.5",
    ]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        "error: --phase 40ms..60ms:x1.5 overlaps --phase 10ms..50ms:x2: phases must not overlap"
    );
}

/// A phase that starts after the run would change nothing: refused. One
/// that ends after it applies until the run stops, and rtlab says so.
#[test]
fn phases_after_the_run_are_refused_and_phases_past_its_end_are_noted() {
    let sim = |extra: &[&str]| {
        let mut args = vec!["sim", "builtin:lf-scenario-4", "-s", "edf", "-d", "100ms"];
        args.extend_from_slice(extra);
        outcome(&args)
    };
    let (code, _, err) = sim(&["--phase", "200ms..300ms:x2"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        "error: --phase 200ms..300ms:x2 starts at 200ms, at or after the end of the run (--duration 100ms)"
    );
    let (code, _, err) = sim(&["--phase", "50ms..300ms:120%"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.trim_end(),
        "note: --phase 50ms..300ms:120% ends after the run (--duration 100ms): it applies until then"
    );
    let (code, out, err) = outcome(&[
        "sim",
        "builtin:hartstone-ph",
        "-s",
        "multiburst",
        "-d",
        "20s",
        "--overload",
        "hartstone-extended",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.trim_end(),
        "note: --overload hartstone-extended lasts 120s; this run stops at 20s"
    );
    assert!(out.contains("under multiburst"), "{out}");
}

#[test]
fn a_window_outside_the_run_is_refused_and_one_past_its_end_is_clipped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("g.svg");
    let svg = svg.to_str().unwrap();
    let sim = |window: &str| {
        outcome(&[
            "sim",
            "builtin:lf-scenario-4",
            "-s",
            "edf",
            "-d",
            "100ms",
            "--gantt",
            svg,
            "--window",
            window,
        ])
    };
    let (code, _, err) = sim("150ms..300ms");
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        "error: --window 150ms..300ms starts at or after the end of the run (--duration 100ms): the chart would be empty"
    );
    let (code, _, err) = sim("50ms..300ms");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("note: --window 50ms..300ms ends after the run: the chart stops at 100ms"),
        "{err}"
    );
}

#[test]
fn duplicated_scheduler_parameters_are_refused() {
    let (code, _, err) = outcome(&[
        "sim",
        "builtin:lf-scenario-4",
        "-s",
        "ipi:burst=1ms,burst=2ms",
        "-d",
        "100ms",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("parameter `burst` is given twice"), "{err}");
}

#[test]
fn critical_sections_out_of_execution_order_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "cs.toml",
        "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"5ms\"\n\
         [[task.critical_sections]]\nresource = \"x\"\nstart = \"3ms\"\nlength = \"1ms\"\n\
         [[task.critical_sections]]\nresource = \"y\"\nstart = \"1ms\"\nlength = \"1ms\"\n",
    );
    validate(&file)
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{file}:11:9: task `a`: critical section on `y` starts at 1ms, before the one on `x` (3ms): list critical sections in execution order"
        )));
}

#[test]
fn json_with_a_bom_and_comments_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let bom = write(
        dir.path(),
        "bom.json",
        "\u{feff}{\"task\": [{\"name\": \"a\", \"period\": \"10ms\", \"wcet\": \"1ms\"}]}",
    );
    let comments = write(
        dir.path(),
        "comments.json",
        "// a set\n{\"task\": [ /* one task */ {\"name\": \"a\", \"period\": \"10ms\", \"wcet\": \"1ms\"}]}\n",
    );
    for file in [&bom, &comments] {
        validate(file)
            .success()
            .stdout(predicate::str::contains(format!("{file}: ok (1 tasks")));
    }
}

#[test]
fn a_number_without_a_unit_asks_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let json = write(
        dir.path(),
        "n.json",
        "{\"task\": [{\"name\": \"a\", \"period\": 10000000, \"wcet\": \"1ms\"}]}",
    );
    let toml = write(
        dir.path(),
        "n.toml",
        "[[task]]\nname = \"a\"\nperiod = 10000000\nwcet = \"1ms\"\n",
    );
    let message = "`period`: a duration needs a unit, e.g. \"10ms\" (10000000 as nanoseconds is \"10000000ns\")";
    for (file, at) in [(&json, "1:35"), (&toml, "3:10")] {
        validate(file)
            .code(1)
            .stdout(predicate::str::diff(format!("{file}:{at}: {message}\n")));
    }
}

#[test]
fn json_shape_errors_speak_the_files_vocabulary() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("[1]", "1:1: the document must be an object with fields `name` and `task`, not an array"),
        (
            "{\"task\": [[\"a\", \"1ms\", \"1ms\"]]}",
            "1:11: a task must be an object with fields `name`, `period`, `wcet`, ..., not an array",
        ),
        (
            "{\"task\": [{\"name\": \"a\", \"period\": \"1ms\", \"wcet\": \"1us\", \"priority\": -1}]}",
            "1:69: `priority` must be a whole number from 0 to 4294967295, not -1",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let file = write(dir.path(), &format!("s{i}.json"), text);
        validate(&file)
            .code(1)
            .stdout(predicate::str::diff(format!("{file}:{want}\n")));
    }
}

/// Newlines, BEL, ESC and bidi overrides in names would break tables and
/// terminals: every human output prints them escaped.
#[test]
fn control_characters_in_names_are_escaped_on_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "ctl.toml",
        "name = \"set\\nname\"\n\
         [[task]]\nname = \"a\\nb\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n\
         [[task]]\nname = \"bell\\u0007\\u001b[31m\"\nperiod = \"20ms\"\nwcet = \"1ms\"\n\
         [[task]]\nname = \"\\u202Eevil\"\nperiod = \"40ms\"\nwcet = \"1ms\"\n",
    );
    let raw = ['\n', '\u{7}', '\u{1b}', '\u{202e}'];
    for args in [
        vec!["taskset", "show", &file],
        vec!["analyze", &file, "--policy", "rm"],
        vec!["sim", &file, "-s", "fp:rm", "-d", "40ms"],
    ] {
        let (code, out, err) = outcome(&args);
        assert_eq!(code, 0, "{err}");
        for line in out.lines() {
            assert!(
                !line.chars().any(|c| raw.contains(&c)),
                "rtlab {}: raw control character in {line:?}",
                args.join(" ")
            );
        }
        assert!(out.contains("a\\nb"), "{out}");
        assert!(out.contains("bell\\u{7}\\u{1b}[31m"), "{out}");
        assert!(out.contains("\\u{202e}evil"), "{out}");
        assert!(out.contains("set\\nname"), "{out}");
    }
    // The Gantt chart is XML, which cannot hold most control characters.
    let svg = dir.path().join("ctl.svg");
    let (code, _, err) = outcome(&[
        "sim",
        &file,
        "-s",
        "fp:rm",
        "-d",
        "40ms",
        "--gantt",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(
        !svg.chars()
            .any(|c| c != '\n' && (c.is_control() || c == '\u{202e}')),
        "{svg}"
    );
    let texts: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
        .collect();
    assert!(texts.contains(&"a\\nb"), "{texts:?}");
    // Error messages too: one line, escaped.
    let bad = write(
        dir.path(),
        "bad.toml",
        "[[task]]\nname = \"x\\u001b[2J\\ny\"\nperiod = \"10ms\"\nwcet = \"11ms\"\n",
    );
    let (code, _, err) = outcome(&["analyze", &bad]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!("error: {bad}:4:8: task `x\\u{{1b}}[2J\\ny`: wcet 11ms exceeds deadline 10ms: no job can meet it\n")
    );
}

/// A 50 MB task name made `analyze` run for minutes. Such a file is now
/// refused by the file-size limit (8 MiB) before it is parsed, and a name
/// that fits in a file is refused by the name cap, both in one line.
#[test]
fn a_huge_task_name_is_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let set =
        |name: &str| format!("[[task]]\nname = \"{name}\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n");
    let analyze = |file: &str| {
        let started = Instant::now();
        let out = rtlab()
            .args(["analyze", file])
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(30));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{}", &err[..err.len().min(300)]);
        err
    };
    let huge = write(dir.path(), "huge.toml", &set(&"n".repeat(50 << 20)));
    assert_eq!(
        analyze(&huge),
        format!("error: {huge}: cannot read: larger than the limit of 8 MiB for task-set and overheads files\n")
    );
    let long = write(dir.path(), "long.toml", &set(&"n".repeat(4 << 20)));
    assert_eq!(
        analyze(&long),
        format!("error: {long}:2:8: task #1: the name is 4194304 bytes long; names are limited to 256 bytes\n")
    );
}

/// Without root, `mlockall(MCL_FUTURE)` charges every thread stack to
/// RLIMIT_MEMLOCK: the error says so once, with the fixes. Run as uid 65534
/// (when root) under a small limit.
#[test]
fn a_memory_lock_refused_by_rlimit_memlock_is_explained_once() {
    use std::os::unix::process::CommandExt;
    let bin = assert_cmd::cargo::cargo_bin("rtlab");
    // A private state directory: records other rtlab runs on this machine
    // left are not this test's subject.
    let state = tempfile::tempdir().unwrap();
    for limit_kib in ["1024", "8192"] {
        let mut cmd = std::process::Command::new("sh");
        cmd.env("RTLAB_STATE_DIR", state.path().join("state"));
        cmd.args([
            "-c",
            &format!("ulimit -l {limit_kib} && exec \"$0\" \"$@\""),
            bin.to_str().unwrap(),
            "run",
            "builtin:lf-scenario-4",
            "--policy",
            "other",
            "-d",
            "200ms",
        ]);
        if is_root() {
            cmd.uid(65534).gid(65534);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "limit {limit_kib} KiB: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        for needed in [
            "RLIMIT_MEMLOCK",
            "ulimit -l unlimited",
            "CAP_IPC_LOCK",
            "--no-mlock",
        ] {
            assert!(
                err.contains(needed),
                "limit {limit_kib} KiB: no `{needed}` in {err}"
            );
        }
        assert!(
            err.contains(&format!("{} MiB", limit_kib.parse::<u64>().unwrap() / 1024)),
            "the limit in force is named: {err}"
        );
        assert_eq!(
            err.matches("os error").count(),
            err.contains("os error") as usize,
            "{err}"
        );
    }
}

/// The simulator's and the runtime's errors name no flag; the CLI adds it,
/// so the messages read as they did when the libraries wrote the flags.
/// (Each of these fails before anything real-time starts.)
#[test]
fn scheduler_and_policy_errors_name_their_flag() {
    let s4 = "builtin:lf-scenario-4";
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["sim", s4, "-s", "fp:given", "-d", "10ms"],
            2,
            "error: --scheduler fp:given: task `t1` has no priority (add `priority = N`)\n",
        ),
        (
            &["sim", s4, "-s", "multiburst:wake=zz:immediate", "-d", "10ms"],
            2,
            "error: --scheduler multiburst: wake: no task named `zz` (tasks: t1, t2)\n",
        ),
        (
            &["sim", s4, "-s", "ipi:share=given", "-d", "10ms"],
            2,
            "error: --scheduler share=given: task `t1` needs a priority > 0 (its weight)\n",
        ),
        (
            &["sim", s4, "-s", "ipi:burst=1ms,burst=2ms", "-d", "10ms"],
            2,
            "error: --scheduler `ipi:burst=1ms,burst=2ms`: parameter `burst` is given twice\n",
        ),
        (
            &["sim", s4, "-s", "edf", "--on-miss", "nope", "-d", "10ms"],
            2,
            "error: --on-miss `nope`: use continue, abort or skip\n",
        ),
        (
            &["sim", s4, "-s", "edf", "--protocol", "x\ny", "-d", "10ms"],
            2,
            "error: --protocol `x\\ny`: use none, npp, pip, ipcp (fixed priority), srp or dfp (EDF); on m processors mpcp, dpcp, fmlp+, mrsp, msrp (pfp:*) or omlp (gedf, cedf)\n",
        ),
        (
            &["sim", s4, "-s", "edf", "--tick", "0", "-d", "10ms"],
            2,
            "error: --tick must be greater than 0\n",
        ),
        (
            &["sim", s4, "-s", "edf", "-d", "100ms", "--phase", "1ms..2ms:x"],
            2,
            "error: --phase `1ms..2ms:x`: bad factor (write START..END:xFACTOR or START..END:UTIL%, e.g. 30s..45s:120%)\n",
        ),
        (
            &["sim", s4, "-s", "edf", "-d", "100ms", "--phase", "200ms..300ms:x2"],
            2,
            "error: --phase 200ms..300ms:x2 starts at 200ms, at or after the end of the run (--duration 100ms)\n",
        ),
        (
            &[
                "sim", s4, "-s", "edf", "-d", "100ms", "--phase", "10ms..30ms:x2", "--phase",
                "20ms..40ms:x2",
            ],
            2,
            "error: --phase 20ms..40ms:x2 overlaps --phase 10ms..30ms:x2: phases must not overlap\n",
        ),
        (
            &["sim", "tests/pins/locking.toml", "-s", "edf", "-d", "10ms", "--protocol", "ipcp"],
            2,
            "error: --protocol ipcp needs a fixed-priority scheduler (fp:rm, fp:dm, fp:given; with edf use srp or dfp); edf is not one\n",
        ),
        (
            &["run", s4, "--policy", "rm", "--on-miss", "abort", "-d", "10ms"],
            2,
            "error: --on-miss `abort`: use continue or skip\n",
        ),
        (
            // A usage error, as `sim -d 0s` (issue 24: it exited 1).
            &["run", s4, "--policy", "rm", "-d", "0"],
            2,
            "error: invalid --duration 0s: must be more than 0\n",
        ),
        (
            &["latency", "--interval", "5us", "--loops", "10"],
            2,
            "error: invalid --interval 5us: use at least 10us (shorter intervals only measure the timer's own overhead)\n",
        ),
        (
            &["latency", "--threads", "1024", "--histogram-buckets", "20000", "--loops", "1"],
            2,
            "error: invalid --threads 1024 x --histogram-buckets 20000: use at most 16777216 buckets in all (128 MiB)\n",
        ),
        (
            &["drift", "--policy", "deadline"],
            2,
            "error: invalid --policy deadline: a SCHED_DEADLINE thread is released on its reservation's period, an absolute timeline the kernel keeps (sched_yield waits for the next period), so relative sleeps would only drift off it: use --policy fifo, rr or other\n",
        ),
        (
            &["latency", "--relative", "--policy", "deadline", "-D", "1s"],
            2,
            "error: invalid --relative: a SCHED_DEADLINE thread is released on its reservation's period, an absolute timeline the kernel keeps (sched_yield waits for the next period); a sleep counted from the previous wake-up would drift off that period and measure a sporadic task instead: use --relative with --policy fifo, rr or other\n",
        ),
        (
            &["lag-study", "--periods", "5us"],
            2,
            "error: invalid --periods 5us: use at least 10us\n",
        ),
        (
            &["run", s4, "--policy", "fifo", "-d", "10ms"],
            2,
            "error: --policy `fifo`: use other, fifo-order, rm, dm, given, rr or edf, or on --cpus linux-dl, pedf, cedf, gfp[:rm|dm|given], pfp[:rm|dm|given]\n",
        ),
        (
            &["run", "builtin:dhall-linux", "--cpus", "0,1", "--policy", "gedf", "-d", "10ms"],
            2,
            "error: --policy `gedf`: gedf is the simulator's global EDF with LITMUS^RT's tie rule, which Linux has not; SCHED_DEADLINE over several CPUs is linux-dl\n",
        ),
        (
            &["sim", s4, "-s", "EDF", "-d", "10ms"],
            2,
            "error: --scheduler `EDF`: unknown scheduler; did you mean `edf`?\n",
        ),
        (
            &["run", s4, "--policy", "given", "-d", "10ms"],
            1,
            "error: rtlab run --policy given: invalid policy given: task `t1` has no priority (add `priority = N`)\n",
        ),
    ];
    for (args, code, message) in cases {
        let (status, _, stderr) = outcome(args);
        assert_eq!((status, stderr.as_str()), (*code, *message), "{args:?}");
    }
}

/// Issue 24, arithmetic at the edges: periods and C near the top of 64-bit
/// nanoseconds with `-d 18446744073709551615ns` spun at 100 % CPU (a
/// completion saturated at the last instant was handled, then found again);
/// an early job of a task with D = 1e19 ns reported a lateness of
/// i64::MAX. Now the run ends at once, and lateness is exact where it fits
/// and saturates on its own side (i64::MIN) where it does not.
#[test]
fn times_at_the_top_of_64_bits_neither_spin_nor_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let big = write(
        dir.path(),
        "big.toml",
        "[[task]]\nname = \"a\"\nperiod = \"18446744073709551615ns\"\nwcet = \"9223372036854775807ns\"\n\
         [[task]]\nname = \"b\"\nperiod = \"18446744073709551614ns\"\nwcet = \"9223372036854775807ns\"\n",
    );
    let started = Instant::now();
    let out = rtlab()
        .args([
            "sim",
            &big,
            "-s",
            "fp:rm",
            "-d",
            "18446744073709551615ns",
            "--json",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // b (shorter period, RM) runs first and finishes at 2^63 - 1; a then
    // finishes at 2^64 - 2, one nanosecond before its deadline.
    assert_eq!(doc["tasks"][0]["max_lateness_ns"], -1);
    assert_eq!(doc["tasks"][1]["max_lateness_ns"], -i64::MAX);

    for (deadline, lateness) in [
        ("10000000000000000000ns", i64::MIN),
        ("9223372036854775809ns", i64::MIN),
        ("9223372036854775807ns", 1 - i64::MAX),
    ] {
        let file = write(
            dir.path(),
            "late.toml",
            &format!("[[task]]\nname = \"a\"\nperiod = \"{deadline}\"\nwcet = \"1ns\"\n"),
        );
        let doc = common::json_of(&["sim", &file, "-s", "edf", "-d", "100us", "--json"]);
        assert_eq!(
            doc["tasks"][0]["max_lateness_ns"], lateness,
            "D = {deadline}"
        );
    }
}

/// Issue 24, hostile XML: 30,000 nested elements overflowed the stack of
/// `taskset show`, `sim`, `run` and `taskset import` (rc 134); 300,000
/// attributes on one element took 184 s. Each is one line at its
/// file:line:col, exit 1, at once.
#[test]
fn hostile_xml_is_one_line_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(
        dir.path(),
        "deep.xml",
        &format!(
            "<simulation>\n{}{}</simulation>\n",
            "<a>".repeat(30_000),
            "</a>".repeat(30_000)
        ),
    );
    let attributes: String = (0..300_000).map(|k| format!(" a{k}=\"{k}\"")).collect();
    let wide = write(
        dir.path(),
        "wide.xml",
        &format!("<simulation>\n<tasks{attributes}/></simulation>\n"),
    );
    let started = Instant::now();
    for (file, place, why) in [
        (&deep, "2:190", "elements nested more than 64 deep"),
        (&wide, "2:1", "an element with more than 256 attributes"),
    ] {
        for args in [
            vec!["taskset", "show", file.as_str()],
            vec!["sim", file.as_str(), "-s", "edf", "-d", "1ms"],
            vec!["taskset", "import", file.as_str()],
        ] {
            let (code, stdout, stderr) = outcome(&args);
            assert_eq!(code, 1, "{args:?}: {stderr}");
            assert!(stdout.is_empty(), "{args:?}");
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            assert!(
                stderr.contains(&format!("{file}:{place}: XML refused: {why}")),
                "{args:?}: {stderr}"
            );
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// Issue 24, names: format and default-ignorable characters printed as
/// nothing in tables; two names that print alike (NFC and NFD `café`,
/// Cyrillic and Latin `a`) are refused with both named.
#[test]
fn invisible_characters_are_escaped_and_lookalike_names_refused() {
    let dir = tempfile::tempdir().unwrap();
    let invisible = [
        '\u{AD}',
        '\u{34F}',
        '\u{115F}',
        '\u{17B4}',
        '\u{3164}',
        '\u{FE0F}',
        '\u{FFA0}',
        '\u{E0041}',
    ];
    let tasks: String = invisible
        .iter()
        .enumerate()
        .map(|(k, c)| format!("[[task]]\nname = \"t{k}{c}\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n"))
        .collect();
    let file = write(dir.path(), "invisible.toml", &tasks);
    let shown = common::stdout_of(&["taskset", "show", &file]);
    for (k, c) in invisible.iter().enumerate() {
        assert!(
            !shown.contains(*c),
            "U+{:X} printed raw:\n{shown}",
            *c as u32
        );
        assert!(
            shown.contains(&format!("t{k}\\u{{{:x}}}", *c as u32)),
            "U+{:X}:\n{shown}",
            *c as u32
        );
    }

    for (first, second, message) in [
        (
            "caf\u{e9}",
            "cafe\u{301}",
            ":6:8: task #2 `cafe\u{301}` (cafe<U+301>) prints like task #1 `caf\u{e9}` (caf<U+E9>)",
        ),
        (
            "\u{430}",
            "a",
            ":6:8: task #2 `a` (a) prints like task #1 `\u{430}` (<U+430>)",
        ),
    ] {
        let file = write(
            dir.path(),
            "alike.toml",
            &format!(
                "[[task]]\nname = \"{first}\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n\
                 [[task]]\nname = \"{second}\"\nperiod = \"20ms\"\nwcet = \"1ms\"\n"
            ),
        );
        // `validate` reports on stdout; every other command on stderr.
        let (code, stdout, _) = outcome(&["taskset", "validate", &file]);
        assert_eq!(code, 1, "{stdout}");
        assert!(stdout.contains(&format!("{file}{message}")), "{stdout}");
        assert!(stdout.contains("NFKC"), "{stdout}");
        assert!(
            stdout.contains(&format!("rename one (the other: {file}:2:8)")),
            "{stdout}"
        );
        let (code, _, stderr) = outcome(&["sim", &file, "-s", "edf", "-d", "1ms"]);
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains(&format!("{file}{message}")), "{stderr}");
    }
}

/// Issue 24: CSV outputs wrote names starting with `=`, `+`, `-`, `@` as
/// is; a spreadsheet opening the file runs them as formulas (OWASP, "CSV
/// Injection"). They get a leading `'`; other names and numbers do not.
#[test]
fn csv_names_a_spreadsheet_would_run_get_a_quote() {
    let dir = tempfile::tempdir().unwrap();
    let set = write(
        dir.path(),
        "inj.toml",
        "[[task]]\nname = \"=cmd|calc\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n\
         [[task]]\nname = \"@x\"\nperiod = \"20ms\"\nwcet = \"1ms\"\n\
         [[task]]\nname = \"ok\"\nperiod = \"20ms\"\nwcet = \"1ms\"\n",
    );
    let store = dir.path().join("s.db");
    let store = store.to_str().unwrap();
    let (code, _, stderr) = outcome(&["sim", &set, "-s", "edf", "-d", "20ms", "--store", store]);
    assert_eq!(code, 0, "{stderr}");
    let csv = common::stdout_of(&[
        "results", "export", "1", "--format", "csv", "--store", store,
    ]);
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 5, "{csv}");
    assert!(
        rows.contains(&"'=cmd|calc,0,0,10000000,0,1000000,0,0,"),
        "{csv}"
    );
    assert!(rows.iter().any(|r| r.starts_with("'@x,0,")), "{csv}");
    assert!(rows.iter().any(|r| r.starts_with("ok,0,")), "{csv}");
}

/// `rtlab run --cpus` refuses, in one line and before changing anything,
/// CPUs it cannot have, a bad list, a one-CPU policy with a list, and a
/// pedf bin over SCHED_DEADLINE's admission limit (exit 2 for usage
/// errors, 1 for what the machine refuses; README "Multiprocessor on real
/// threads"). None of these needs root: they fail before the run.
#[test]
fn multiprocessor_runs_refuse_cpus_they_cannot_have_in_one_line() {
    let balance = std::fs::read_to_string("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance").ok();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["run", "builtin:dhall-linux", "--cpus", "0,4095", "--policy", "linux-dl", "-d", "100ms"],
            1,
            "invalid --cpus 0,4095: CPU 4095 is offline or does not exist",
        ),
        (
            &["run", "builtin:dhall-linux", "--cpus", "0-999", "--policy", "gfp", "-d", "100ms"],
            1,
            "1000 CPUs asked for, but this machine has",
        ),
        (
            &["run", "builtin:dhall-linux", "--cpus", "0,x", "--policy", "linux-dl"],
            2,
            "--cpus `0,x`",
        ),
        (
            &["run", "builtin:dhall-linux", "--cpus", "0,1", "--policy", "edf"],
            2,
            "--cpus runs a multiprocessor policy",
        ),
        (
            &["run", "builtin:dhall-linux", "--cpus", "0,1", "--policy", "pedf", "-d", "100ms"],
            2,
            "--policy pedf needs every task's cpu (in the file) or --partition HEURISTIC",
        ),
        (
            &["run", "builtin:dhall-linux", "--cpus", "0,1", "--policy", "linux-dl", "--partition", "ff"],
            2,
            "--partition places tasks for pedf or pfp",
        ),
        (
            // ff-decreasing puts the heavy task (0.99) alone on CPU 0: over 0.90.
            &["run", "builtin:dhall", "--cpus", "0,1", "--policy", "pedf", "--partition", "ff-decreasing", "-d", "100ms"],
            1,
            "SCHED_DEADLINE admission: the tasks on CPU(s) 0 (`heavy`) need sum C/T = 1038194 (0.990099) in the kernel's units of 2^-20 of a CPU, ",
        ),
    ];
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    for (args, code, says) in cases {
        if online.trim() == "0" && args.contains(&"0,1") {
            continue;
        }
        let (got, out, err) = outcome(args);
        assert_eq!(got, *code, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} printed {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance").ok(),
        balance,
        "nothing was changed"
    );
}

/// A cpuset of another tool holding a CPU of the run (here a made-up
/// `othertool-PID` on CPU 1, as systemd's AllowedCPUs or `cset` would
/// leave) makes pedf refuse in one line with its path, changing nothing.
/// Root and cgroup v1 only; it cannot run (a failure under CI) when the
/// cpuset cannot be made (an exclusive cpuset of a run on CPU 1 is in the
/// way).
#[test]
#[ignore = "needs root"]
fn a_cpuset_of_another_tool_on_the_runs_cpus_is_refused() {
    let _one = common::real_time();
    let root = Path::new("/sys/fs/cgroup/cpuset");
    if !root.join("cpuset.cpus").exists() {
        common::unavailable("no cgroup-v1 cpuset hierarchy");
        return;
    }
    let theirs = root.join(format!("othertool-{}", std::process::id()));
    struct Remove<'a>(&'a Path);
    impl Drop for Remove<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(self.0);
        }
    }
    if std::fs::create_dir(&theirs).is_err() {
        common::unavailable(format!("cannot create {}", theirs.display()));
        return;
    }
    let _gone = Remove(&theirs);
    if std::fs::write(theirs.join("cpuset.cpus"), "1").is_err() {
        common::unavailable("CPU 1 is held exclusively by another cpuset now");
        return;
    }
    let balance = std::fs::read_to_string(root.join("cpuset.sched_load_balance")).unwrap();
    let (code, out, err) = outcome(&[
        "run",
        "builtin:dhall-linux",
        "--cpus",
        "0,1",
        "--policy",
        "pedf",
        "--partition",
        "wf-decreasing",
        "-d",
        "100ms",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{} (cpus 1) already holds CPU 1: another tool owns this cpuset hierarchy",
            theirs.display()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("cpuset.sched_load_balance")).unwrap(),
        balance
    );
}

/// Phases on real threads are refused before the run, in one line: two
/// that overlap, one after the end (usage errors, exit 2), and a file's
/// mode that names a task the set does not have (a file error at its place,
/// exit 1).
#[test]
fn phases_and_modes_on_real_threads_are_refused_before_the_run() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "builtin:hartstone-ph", "-P", "rm", "-d", "1s"];
        args.extend_from_slice(extra);
        outcome(&args)
    };
    let (code, _, err) = run(&["--phase", "100ms..500ms:x2", "--phase", "400ms..600ms:x3"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        "error: --phase 400ms..600ms:x3 overlaps --phase 100ms..500ms:x2: phases must not overlap"
    );
    let (code, _, err) = run(&["--phase", "1s..2s:x2"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        "error: --phase 1s..2s:x2 starts at 1s, at or after the end of the run (--duration 1s)"
    );

    let dir = tempfile::tempdir().unwrap();
    let modes = write(
        dir.path(),
        "modes.toml",
        "[[task]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"1ms\"\n\
         [[mode]]\nname = \"normal\"\nstart = \"0ms\"\ntasks = [\"a\", \"b\"]\n",
    );
    for command in ["run", "sim"] {
        let (code, _, err) = outcome(&[command, &modes, "-s", "edf", "-d", "100ms"]);
        assert_eq!(code, 1, "{command}: {err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "error: {modes}:8:15: mode `normal` names task `b`, which the set does not have"
            )
        );
    }
}

/// A phase under which the SCHED_DEADLINE budgets pass the admission limit
/// is refused before the run, in one line with the sum and the limit (exit
/// 1). Only where RT throttling is on (it is unless another run switched it
/// off for a while).
#[test]
#[ignore = "needs root"]
fn a_phase_past_the_deadline_admission_limit_is_refused_before_the_run() {
    let _one = common::real_time();
    let limit = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap_or_default();
    if limit.trim() == "-1" {
        common::unavailable("RT throttling is off (sched_rt_runtime_us -1)");
        return;
    }
    let (code, _, err) = outcome(&[
        "run",
        "builtin:hartstone-ph",
        "-P",
        "edf",
        "-d",
        "1s",
        "--phase",
        "300ms..600ms:x2.5",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "error: rtlab run --policy edf: phase 300ms..600ms:x2.5 makes the SCHED_DEADLINE set inadmissible: its budgets need sum runtime/period = "
        ),
        "{err}"
    );
    // The numbers show the excess, in the kernel's own units.
    assert!(
        err.contains("in the kernel's units of 2^-20 of a CPU, ")
            && err.contains(" admits on 1 CPU;"),
        "{err}"
    );
    assert!(err.contains("add --no-rt-throttling"), "{err}");
}
