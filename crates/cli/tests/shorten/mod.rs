//! Example command lines made short enough to run in the tests: the
//! `--help` examples (`help_examples.rs`) and the guide's commands
//! (`guide.rs`) run through the same rules.

/// Commands that run real threads or a load: their run lengths are cut.
const TIMED: [&str; 6] = ["run", "compare", "latency", "load", "lag-study", "drift"];

/// The example with its long runs made short: durations 300 ms, Hartstone
/// iterations 500 ms (their shortest) and at most 2 of them, loops 300,
/// samples 20, sets 20 (a study: 2, on real threads 1), one lag-study
/// round with a short grid and no cooldown (added where the default is
/// long).
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
        }
        "breakdown" => {
            add("--duration-per-step", "300ms");
            add("--repeat", "1");
            add("--resolution", "0.05");
        }
        "sweep" if !words.contains(&"merge") => add("--sets", "20"),
        "characterize" => add("--samples", "20"),
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
