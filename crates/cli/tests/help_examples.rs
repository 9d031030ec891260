//! Every example printed by `--help` works: each command's help is read as
//! a user sees it, each `rtlab ...` line under "Example(s):" is run for
//! real (durations and sample counts shortened), and a usage error fails the
//! test. Examples sit on one line each, never wrapped.
//!
//! One test, examples one after another: some run real-time threads, which
//! must not run in parallel. Without root, an example that fails saying it
//! needs root did not run: the test says which (`common::unavailable`: a
//! failure under CI); as root (CI) every example must succeed.

mod common;
mod example_runs;

use std::path::Path;

use common::is_root;
use example_runs::{run_line, shortened};

/// The help text of `rtlab ARGS --help`.
fn help(args: &[&str]) -> String {
    let out = common::rtlab()
        .args(args)
        .arg("--help")
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    assert!(out.status.success(), "rtlab {args:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands listed under "Commands:" (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // Descriptions that wrap continue on lines indented deeper.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The example lines of one help text; fails on a line that continues a
/// wrapped example.
fn examples(path: &str, help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = help.lines().skip_while(|l| !l.starts_with("Example"));
    assert!(lines.next().is_some(), "`{path}` has no examples");
    for line in lines.take_while(|l| !l.trim().is_empty()) {
        let example = line.trim();
        assert!(
            example.starts_with("rtlab "),
            "`{path}`: `{example}` is not an example: a wrapped line?"
        );
        out.push(example.to_string());
    }
    out
}

/// Every leaf command path (`sim`, `taskset gen`, ...) with its examples.
fn all_examples() -> Vec<(String, Vec<String>)> {
    let top = help(&[]);
    let mut out = vec![("rtlab".to_string(), examples("rtlab", &top))];
    let mut todo: Vec<Vec<String>> = subcommands(&top).into_iter().map(|c| vec![c]).collect();
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        let nested = subcommands(&text);
        // A command with subcommands may run on its own too (`sweep` and
        // `sweep merge`): its examples, when it has any, are run as well.
        let runs_alone = text.lines().any(|l| l.starts_with("Example"));
        if nested.is_empty() || runs_alone {
            out.push((path.join(" "), examples(&path.join(" "), &text)));
        }
        if !nested.is_empty() {
            todo.extend(nested.into_iter().map(|c| {
                let mut p = path.clone();
                p.push(c);
                p
            }));
        }
    }
    out.sort();
    out
}

/// The `rt-app` on `PATH`, if any.
fn which_rtapp() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("rt-app"))
        .find(|candidate| candidate.is_file())
}

/// Files the examples name (`my-set.toml`, `sets/lf.toml`, `sets/*.toml`).
fn fixtures(dir: &Path) {
    std::fs::write(
        dir.join("my-set.toml"),
        "name = \"my-set\"\n\
         [[task]]\nname = \"control\"\nperiod = \"10ms\"\nwcet = \"2ms\"\npriority = 2\n\
         [[task.critical_sections]]\nresource = \"bus\"\nstart = \"500us\"\nlength = \"500us\"\n\
         [[task]]\nname = \"logger\"\nperiod = \"50ms\"\nwcet = \"5ms\"\npriority = 1\n\
         [[task.critical_sections]]\nresource = \"bus\"\nstart = \"1ms\"\nlength = \"1ms\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("runs.json"),
        r#"[{"id": 1, "created": "2026-11-23T06:00:00Z", "rtlab_version": "0.1.0",
             "command": "rtlab sweep --json", "kind": "sweep", "host": {"kernel": "6.18"},
             "status": "complete", "document": {"tests": ["rm:rta"], "rows": [
               {"utilization": 0.5, "sets": 2, "ratio": {"rm:rta": 1.0}}]}}]"#,
    )
    .unwrap();
    // Hand-written Linux-like costs, for the `breakdown` examples.
    std::fs::write(
        dir.join("my.toml"),
        "name = \"my\"\ntimer = \"1us\"\npreempt = \"5us\"\nexit = \"4us\"\nnonpreempt = \"2us\"\n\
         releases = \"hrtimer\"\ntick = \"4ms\"\n\
         [dispatcher]\ndecision = \"5us\"\nlatency = \"8us\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("workload.json"),
        r#"{"tasks": {"ctl": {"policy": "SCHED_FIFO", "priority": 20, "loop": -1, "run": 1000,
             "timer": {"ref": "unique", "period": 10000, "mode": "absolute"}}}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("sets")).unwrap();
    std::fs::write(
        dir.join("sets/lf.toml"),
        "name = \"lf\"\n[[task]]\nname = \"t1\"\nperiod = \"25ms\"\ndeadline = \"23ms\"\nwcet = \"3ms\"\n\
         [[task]]\nname = \"t2\"\nperiod = \"50ms\"\ndeadline = \"45ms\"\nwcet = \"40ms\"\n",
    )
    .unwrap();
}

#[test]
fn every_example_in_every_help_runs() {
    let bin = assert_cmd::cargo::cargo_bin("rtlab");
    let bin_dir = bin.parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = tempfile::tempdir().unwrap();
    fixtures(dir.path());
    // The `rtlab results` examples read runs 1 and 2 of a store of their own.
    let store = dir.path().join("results.sqlite");
    for scheduler in ["fp:dm", "edf"] {
        assert_cmd::Command::new(&bin)
            .args([
                "sim",
                "builtin:lf-scenario-4",
                "-s",
                scheduler,
                "-d",
                "1s",
                "--save",
            ])
            .env("RTLAB_STORE", &store)
            .assert()
            .success();
    }
    let root = is_root();
    let mut failures = Vec::new();
    let mut not_run = Vec::new();
    let mut ran = 0;
    for (_, lines) in all_examples() {
        for example in lines {
            let command = example.split_whitespace().nth(1).unwrap_or_default();
            if example.contains("--with rt-app") && which_rtapp().is_none() {
                not_run.push(format!(
                    "`{example}`: rt-app is not installed (apt-get install rt-app)"
                ));
                continue;
            }
            let line = shortened(command, &example);
            let out = run_line(&line, dir.path(), &store, &path);
            ran += 1;
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().next().unwrap_or_default();
            match out.status.code() {
                Some(0) => println!("ok: {line}"),
                Some(1) if !root && first.contains("root") => {
                    not_run.push(format!("`{line}`: {first}"));
                }
                code => failures.push(format!("`{line}` (from `{example}`): exit {code:?}: {err}")),
            }
        }
    }
    assert!(ran >= 30, "only {ran} examples found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if !not_run.is_empty() {
        common::unavailable(format!(
            "{} examples did not run here:\n{}",
            not_run.len(),
            not_run.join("\n")
        ));
    }
}
