//! Simulated scheduling events per second on one core (issue 4 aims for
//! more than 10 million). Each case simulates 10 s of a catalog task set;
//! the throughput counts the engine's events (releases, completions,
//! ticks, call-backs) reported in `SimReport::events`.
//!
//! Run with `cargo bench -p rtlab-sim --bench events`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rtlab_model::{catalog, Nanos};
use rtlab_sim::{simulate, SchedulerSpec, SimConfig};

fn events(c: &mut Criterion) {
    let cases = [
        ("avionics", "fp:rm"),
        ("avionics", "edf"),
        ("hartstone-ph", "rr:2ms"),
        ("hartstone-ph", "multiburst"),
    ];
    let mut group = c.benchmark_group("simulate 10s");
    for (set_name, scheduler) in cases {
        let set = catalog::build(set_name).expect("catalog entry");
        let spec: SchedulerSpec = scheduler.parse().expect("scheduler");
        let config = SimConfig::new(Nanos::from_secs(10));
        let events = simulate(&set, &spec, &config).expect("runs").events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(format!("{set_name} {scheduler}"), |b| {
            b.iter(|| simulate(black_box(&set), &spec, &config).expect("runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, events);
criterion_main!(benches);
