//! Times the EDF demand test on the sets `rtlab sweep` generates, one set at
//! a time: how many it decides, how many it leaves inconclusive, and the
//! median and maximum time per set.
//!
//! ```sh
//! cargo run --release -p rtlab-analysis --example edf_demand_timing -- \
//!     --tasks 10 --from 1.0 --to 1.0 --step 0.01 --sets 1000 --seed 0 --repeat 5
//! ```
//!
//! Each set's time is the least of `--repeat` runs (default 5), so that
//! time spent preempted by other work on the machine does not count.
//!
//! The sets are those of `rtlab sweep --deadlines constrained` with the same
//! flags (RandFixedSum, log-uniform periods in [10 ms, 1 s]).

use std::cmp::Ordering;
use std::time::Instant;

use rtlab_analysis::blocking::EdfBlocking;
use rtlab_analysis::{edf_demand, exact};
use rtlab_model::generate::{generate_set, DeadlineModel, GeneratorConfig};

fn flag(args: &[String], name: &str, default: f64) -> f64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tasks = flag(&args, "--tasks", 10.0) as usize;
    let (from, to, step) = (
        flag(&args, "--from", 1.0),
        flag(&args, "--to", 1.0),
        flag(&args, "--step", 0.01),
    );
    let sets = flag(&args, "--sets", 1000.0) as u64;
    let seed = flag(&args, "--seed", 0.0) as u64;
    // The least of several runs, so that time the process spent preempted
    // (other work on the machine) does not count.
    let repeat = flag(&args, "--repeat", 5.0).max(1.0) as u32;
    let steps = ((to - from) / step + 1e-9).floor() as u64 + 1;
    let none = EdfBlocking::none();
    println!(
        "U      sets  U>1  U=1  U=1,H>2^64  schedulable  not  inconclusive  median_us  max_us"
    );
    for k in 0..steps {
        let u = ((from + k as f64 * step) * 1e9).round() / 1e9;
        let config = GeneratorConfig {
            tasks,
            utilization: u,
            seed,
            deadlines: DeadlineModel::constrained(0.0, 1.0),
            name_prefix: "sweep".into(),
            ..GeneratorConfig::default()
        };
        let (mut yes, mut no, mut unknown) = (0, 0, 0);
        // U > 1, U = 1 exactly, and U = 1 with a hyperperiod beyond 64 bits
        // (no finite testing interval is then known).
        let (mut above, mut exactly, mut astronomical) = (0, 0, 0);
        let mut times: Vec<f64> = Vec::with_capacity(sets as usize);
        for j in 0..sets {
            let set = generate_set(&config, k * sets + j).expect("valid generator settings");
            let fractions: Vec<(u64, u64)> = set
                .tasks
                .iter()
                .map(|t| (t.wcet.as_ns(), t.period.as_ns()))
                .collect();
            match exact::cmp_sum(&fractions, 1, 1) {
                Ordering::Greater => above += 1,
                Ordering::Equal => {
                    exactly += 1;
                    astronomical += u32::from(set.hyperperiod().is_err());
                }
                Ordering::Less => {}
            }
            let mut verdict = None;
            let mut us = f64::INFINITY;
            for _ in 0..repeat {
                let start = Instant::now();
                verdict = edf_demand::verdict(&set, &none);
                us = us.min(start.elapsed().as_secs_f64() * 1e6);
            }
            times.push(us);
            match verdict {
                Some(true) => yes += 1,
                Some(false) => no += 1,
                None => unknown += 1,
            }
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{u:<6} {sets:>5} {above:>4} {exactly:>4} {astronomical:>11} {yes:>12} {no:>4} {unknown:>13} {:>10.1} {:>7.1}",
            times[times.len() / 2],
            times[times.len() - 1]
        );
    }
}
