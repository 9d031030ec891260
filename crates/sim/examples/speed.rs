//! One simulation of the speed benchmark, for a profiler: `valgrind --tool=callgrind
//! target/release/examples/speed CASE SECONDS` counts the instructions of
//! the run alone (no CLI, no JSON), so engines can be compared before and
//! after a change on a loaded machine. Cases: `hartstone-edf`,
//! `hartstone-rm` (Hartstone PH, 5 tasks), `gedf-20` (20 tasks of
//! `benches/gedf-20.toml` under global EDF on 4 processors), the cases of
//! `benches/vs_simso.py`.
//!
//! ```text
//! cargo build --release -p rtlab-sim --example speed
//! target/release/examples/speed gedf-20 1000
//! ```

use std::time::Instant;

use rtlab_model::{file, Nanos};
use rtlab_sim::{simulate, SchedulerSpec, SimConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (case, seconds) = match args.as_slice() {
        [_, case, seconds] => (case.as_str(), seconds.parse::<u64>().unwrap_or(0)),
        _ => ("", 0),
    };
    let (set, scheduler) = match case {
        "hartstone-edf" => ("builtin:hartstone-ph".to_string(), "edf"),
        "hartstone-rm" => ("builtin:hartstone-ph".to_string(), "fp:rm"),
        "gedf-20" => (
            concat!(env!("CARGO_MANIFEST_DIR"), "/benches/gedf-20.toml").to_string(),
            "gedf",
        ),
        _ => {
            eprintln!("usage: speed hartstone-edf|hartstone-rm|gedf-20 SECONDS");
            std::process::exit(2);
        }
    };
    let set = match file::load(&set) {
        Ok(loaded) => loaded.set,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let spec: SchedulerSpec = scheduler.parse().unwrap_or(SchedulerSpec::Edf);
    let config = SimConfig::new(Nanos::from_secs(seconds.max(1)));
    let start = Instant::now();
    match simulate(&set, &spec, &config) {
        Ok(report) => {
            let wall = start.elapsed().as_secs_f64();
            println!(
                "{case}: {seconds} s simulated in {wall:.3} s ({:.0} sim s / s), {} events, {} jobs",
                seconds as f64 / wall,
                report.events,
                report.released
            );
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
