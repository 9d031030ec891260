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

/// The example with its long runs made short: durations above a second
/// 300 ms (a breakdown step given as 1 s or less stays), Hartstone
/// iterations 500 ms (their shortest) and at most 2 of them, loops 300,
/// samples 20, sets 20 (a study: 2, on real threads 1), one lag-study
/// round of one cell, characterize at n = 2, no cooldowns (added where the
/// default is long).
pub fn shortened(command: &str, example: &str) -> String {
    // A trailing `# comment` is dropped, so that flags added below are not
    // commented out.
    let words: Vec<&str> = example
        .split_whitespace()
        .take_while(|w| !w.starts_with('#'))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        out.push(word.to_string());
        // A run of a second or less stays as written: a phase or a mode
        // inside it must still start before its end.
        let long = words.get(i + 1).is_some_and(|v| !at_most_a_second(v));
        let short = match word {
            "--duration" | "-D" if TIMED.contains(&command) && long => Some("300ms"),
            // rt-app runs for whole seconds.
            "-d" if example.contains("--with rt-app") => Some("1s"),
            "-d" if TIMED.contains(&command) && command != "latency" && long => Some("300ms"),
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
            "--duration-per-step" if long => Some("1s"),
            "--repeat" if command == "breakdown" => Some("1"),
            _ => None,
        };
        if let Some(short) = short {
            out.push(short.to_string());
            i += 1;
        } else if TIMED.contains(&command) && word.len() > 2 {
            // cyclictest's attached forms: `-D30` (seconds), `-l1000`.
            if word.starts_with("-D") && word[2..].bytes().all(|b| b.is_ascii_digit()) {
                *out.last_mut().unwrap() = "-D300ms".to_string();
            } else if word.starts_with("-l") && word[2..].bytes().all(|b| b.is_ascii_digit()) {
                *out.last_mut().unwrap() = "-l300".to_string();
            }
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
        "sweep" if !words.contains(&"merge") && !words.contains(&"--spec") => add("--sets", "20"),
        "characterize" => {
            add("--samples", "20");
            add("--threads", "2");
        }
        "study" => {
            add("--sets", "2");
            if words.contains(&"edf-vs-fps") && words.contains(&"--real") {
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

/// Whether a duration as written is at most a second (`500ms`, `1s`,
/// `250us`); a bare number (cyclictest's seconds) or anything longer is
/// not.
fn at_most_a_second(value: &str) -> bool {
    let number = |v: &str| v.parse::<f64>().ok();
    if let Some(ms) = value.strip_suffix("ms") {
        return number(ms).is_some_and(|n| n <= 1000.0);
    }
    if let Some(us) = value.strip_suffix("us") {
        return number(us).is_some_and(|n| n <= 1_000_000.0);
    }
    value
        .strip_suffix('s')
        .and_then(number)
        .is_some_and(|n| n <= 1.0)
}
