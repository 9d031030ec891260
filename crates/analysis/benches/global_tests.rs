//! How many random task sets per second each multiprocessor test decides
//! on one core, for 10- and 50-task sets on m = 4 processors.
//!
//! The sets are RandFixedSum utilizations (each task at most 1) with
//! log-uniform periods in [10 ms, 1 s], constrained deadlines
//! D = C + x (T - C) with x in [0.5, 1], and total U from 1.0 to 3.7 in
//! steps of 0.3, 20 sets per step: from sets every test accepts to sets
//! none does. Deciding includes the priority order (G-FP) and the
//! bin packing (partitioned tests).
//!
//! Run with `cargo bench -p rtlab-analysis --bench global_tests`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rtlab_analysis::multiprocessor::{decide, MultiprocessorTest};
use rtlab_model::generate::{generate_sets, DeadlineModel, GeneratorConfig};
use rtlab_model::TaskSet;

const M: u32 = 4;

fn workload(tasks: usize) -> Vec<TaskSet> {
    (0u32..10)
        .flat_map(|step| {
            let config = GeneratorConfig {
                tasks,
                utilization: 1.0 + f64::from(step) * 0.3,
                deadlines: DeadlineModel::constrained(0.5, 1.0),
                seed: u64::from(step),
                ..GeneratorConfig::default()
            };
            generate_sets(&config, 20).expect("valid generator settings")
        })
        .collect()
}

fn global_tests(c: &mut Criterion) {
    for tasks in [10, 50] {
        let sets = workload(tasks);
        let mut group = c.benchmark_group(format!("decide {tasks}-task sets on m = {M}"));
        group.throughput(Throughput::Elements(sets.len() as u64));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(2));
        for test in MultiprocessorTest::ALL {
            group.bench_function(test.name(), |b| {
                b.iter(|| {
                    for set in &sets {
                        black_box(decide(black_box(set), M, test));
                    }
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, global_tests);
criterion_main!(benches);
