//! Times one `rtlab analyze --policy rm` call, as the Python binding
//! `rtlab.analyze(ts, policy="rm")` makes it: every rm test on one 10-task
//! set and the `--json` document built and serialized. The Python side of
//! the comparison is `examples/python_call_overhead.py`.
//!
//! ```sh
//! cargo run --release -p rtlab-analysis --example analyze_call -- 20000
//! ```
//!
//! The set is `rtlab taskset gen --tasks 10 --utilization 0.7 --seed 1`'s.
//! Prints the mean time per call over the given number of calls (default
//! 20000), best of 5 rounds.

use std::time::Instant;

use rtlab_analysis::analyze_document::analyze_document;
use rtlab_analysis::suite::{analyse, Options};
use rtlab_model::generate::{generate_sets, GeneratorConfig};
use rtlab_model::policy::{AnalysedPolicy, PriorityAssignment};

fn main() {
    let calls: u32 = std::env::args()
        .nth(1)
        .map_or(20_000, |a| a.parse().expect("a number of calls"));
    let config = GeneratorConfig {
        tasks: 10,
        utilization: 0.7,
        seed: 1,
        ..GeneratorConfig::default()
    };
    let set = generate_sets(&config, 1)
        .expect("a valid generator config")
        .remove(0);
    let options = Options::default();
    let policy = AnalysedPolicy::Fixed(PriorityAssignment::RateMonotonic);
    let call = || {
        let report = analyse(&set, policy, &options).expect("an analysable set");
        let doc = analyze_document("generated", &set, &options, &[report], None);
        serde_json::to_string(&doc).expect("a document")
    };
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let started = Instant::now();
        for _ in 0..calls {
            std::hint::black_box(call());
        }
        best = best.min(started.elapsed().as_secs_f64() / f64::from(calls));
    }
    let analysis_only = {
        let started = Instant::now();
        for _ in 0..calls {
            std::hint::black_box(analyse(&set, policy, &options).expect("an analysable set"));
        }
        started.elapsed().as_secs_f64() / f64::from(calls)
    };
    println!(
        "rust: {:.2} us per call (analysis + document), {:.2} us analysis alone",
        best * 1e6,
        analysis_only * 1e6
    );
}
