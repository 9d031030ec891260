//! How many random 10-task sets per second each exact test decides, on one
//! core (issue 3's target: 500,000/s for RTA, 100,000/s for EDF demand).
//!
//! The sets are RandFixedSum utilizations with log-uniform periods in
//! [10 ms, 1 s] (1 ms granularity), constrained deadlines D = C + x (T - C)
//! with x in [0.5, 1], and U from 0.50 to 0.95 in steps of 0.05, 100 sets per
//! step: the region where the tests have real work to do. Deciding a set
//! includes assigning its priorities (DM) for RTA.
//!
//! Run with `cargo bench -p rtlab-analysis --bench exact_tests`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rtlab_analysis::blocking::EdfBlocking;
use rtlab_analysis::edf_demand;
use rtlab_analysis::priority::assign;
use rtlab_analysis::rta;
use rtlab_model::generate::{generate_sets, DeadlineModel, GeneratorConfig};
use rtlab_model::policy::PriorityAssignment;
use rtlab_model::TaskSet;

fn workload() -> Vec<TaskSet> {
    (10u32..=19)
        .flat_map(|step| {
            let config = GeneratorConfig {
                tasks: 10,
                utilization: f64::from(step) * 0.05,
                deadlines: DeadlineModel::constrained(0.5, 1.0),
                seed: u64::from(step),
                ..GeneratorConfig::default()
            };
            generate_sets(&config, 100).expect("valid generator settings")
        })
        .collect()
}

fn exact_tests(c: &mut Criterion) {
    let sets = workload();
    let mut group = c.benchmark_group("decide 10-task sets");
    group.throughput(Throughput::Elements(sets.len() as u64));
    group.bench_function("rta (dm priorities)", |b| {
        b.iter(|| {
            for set in &sets {
                let priorities = assign(set, PriorityAssignment::DeadlineMonotonic).expect("dm");
                black_box(rta::is_schedulable(black_box(set), &priorities));
            }
        })
    });
    let none = EdfBlocking::none();
    group.bench_function("edf-demand (qpa)", |b| {
        b.iter(|| {
            for set in &sets {
                black_box(edf_demand::verdict(black_box(set), &none));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, exact_tests);
criterion_main!(benches);
