//! Simulated scheduling events per second on one core.
//!
//! `cargo run --release -p rtlab-sim --example throughput` simulates the
//! avionics set (15 tasks) and hartstone-ph for a long stretch of simulated
//! time under several schedulers and prints events (releases, completions,
//! call-backs, ...) per wall-clock second.

use std::time::Instant;

use rtlab_model::{file, Nanos};
use rtlab_sim::{simulate, SchedulerSpec, SimConfig};

fn main() {
    for (set, secs) in [("avionics", 2000), ("hartstone-ph", 5000), ("ins", 2000)] {
        let set = file::load(&format!("builtin:{set}")).unwrap().set;
        for spec in ["fp:rm", "edf", "fifo", "rr:1ms", "multiburst"] {
            let spec: SchedulerSpec = spec.parse().unwrap();
            let start = Instant::now();
            let r = simulate(&set, &spec, &SimConfig::new(Nanos::from_secs(secs))).unwrap();
            let wall = start.elapsed().as_secs_f64();
            println!(
                "{:13} {:12} {:>10} events in {:6.3} s: {:6.1} M events/s",
                set.name,
                r.scheduler,
                r.events,
                wall,
                r.events as f64 / wall / 1e6
            );
        }
    }
}
