//! Example command lines run in the tests, made short enough: the `--help`
//! examples (`help_examples.rs`) and the guide's commands (`guide.rs`) run
//! through the same rules and the same runner.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs `line` with `sh -c` in `dir`, with `RTLAB_STORE` = `store`, `PATH`
/// = `path` and a 100-column terminal width, for at most 180 s.
pub fn run_line(line: &str, dir: &Path, store: &Path, path: &str) -> Output {
    let mut child = std::process::Command::new("sh");
    child
        .args(["-c", line])
        .current_dir(dir)
        .env("RTLAB_STORE", store)
        .env("COLUMNS", "100")
        .env("PATH", path);
    assert_cmd::Command::from_std(child)
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap()
}

/// Commands that run real threads or a load: their run lengths are cut.
const TIMED: [&str; 6] = ["run", "compare", "latency", "load", "lag-study", "drift"];

/// The example with its long runs made short: durations 300 ms, Hartstone
/// iterations 500 ms (their shortest) and at most 2 of them, loops 300,
/// samples 20, sets 20 (a study: 2, on real threads 1), one lag-study
/// round of one cell, characterize at n = 2, no cooldowns (added where the
/// default is long).
pub fn shortened(command: &str, example: &str) -> String {
    let words: Vec<&str> = example.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        out.push(word.to_string());
        let short = match word {
            "--duration" | "-D" if TIMED.contains(&command) => Some("300ms"),
            // rt-app runs for whole seconds.
            "-d" if example.contains("--with rt-app") => Some("1s"),
            "-d" if TIMED.contains(&command) && command != "latency" => Some("300ms"),
            "--loops" | "-l" => Some("300"),
            "--samples" => Some("20"),
            "--sets" if command == "study" => Some("2"),
            "--sets" => Some("20"),
            "--real-sets" => Some("1"),
            "--real-duration" | "--duration" if command == "study" => Some("300ms"),
            "--rounds" => Some("1"),
            "--cooldown" => Some("0s"),
            "--iteration-duration" if command == "hartstone" => Some("500ms"),
            "--extended-length" if command == "hartstone" => Some("4s"),
            "--duration-per-step" => Some("300ms"),
            "--repeat" if command == "breakdown" => Some("1"),
            _ => None,
        };
        if let Some(short) = short {
            out.push(short.to_string());
            i += 1;
        }
        i += 1;
    }
    let mut add = |flag: &str, value: &str| {
        if !words.contains(&flag) {
            out.push(format!("{flag} {value}"));
        }
    };
    match command {
        "lag-study" => {
            add("--samples", "20");
            add("--cooldown", "0s");
            add("--periods", "1ms");
            add("--utilizations", "50");
        }
        "breakdown" => {
            add("--duration-per-step", "300ms");
            add("--repeat", "1");
            add("--resolution", "0.05");
            add("--cooldown", "0s");
        }
        "sweep" if !words.contains(&"merge") => add("--sets", "20"),
        "characterize" => {
            add("--samples", "20");
            add("--threads", "2");
        }
        "study" => {
            add("--sets", "2");
            if words.contains(&"--real") {
                add("--real-sets", "1");
                add("--real-duration", "300ms");
                add("--cooldown", "0s");
            }
        }
        "hartstone" if words.contains(&"--policy") => {
            add("--max-iterations", "2");
            if !words.contains(&"--extended") {
                add("--iteration-duration", "500ms");
            }
        }
        _ => {}
    }
    out.join(" ")
}
