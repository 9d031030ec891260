//! Global EDF on 4 processors, 20 tasks (`gedf-20.toml`: U = 3.0, periods
//! 20 primes from 5 to 100 ms in microseconds, so no two jobs share a
//! deadline): 10 simulated seconds per iteration, so simulated seconds
//! per wall second = 10 s / the time criterion reports. The throughput
//! counts the engine's events (releases and completions).
//!
//! `crates/sim/benches/vs_simso.py` runs the same set in SimSo 0.8.5
//! and in `rtlab sim` side by side.
//!
//! Run with `cargo bench -p rtlab-sim --bench global`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rtlab_model::{file, Nanos};
use rtlab_sim::{simulate, SchedulerSpec, SimConfig};

fn global(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/gedf-20.toml");
    let set = file::load(path).expect("the bench set loads").set;
    let config = SimConfig::new(Nanos::from_secs(10));
    let mut group = c.benchmark_group("simulate 10s on 4 cpus");
    for scheduler in ["gedf", "edzl"] {
        let spec: SchedulerSpec = scheduler.parse().expect("scheduler");
        let events = simulate(&set, &spec, &config).expect("runs").events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(format!("gedf-20 {scheduler}"), |b| {
            b.iter(|| simulate(black_box(&set), &spec, &config).expect("runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, global);
criterion_main!(benches);
