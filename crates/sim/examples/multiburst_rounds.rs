//! Paper 002 §4.1: the Multiburst regulator keeping the round duration on
//! its set point. Two batch threads and one periodic thread (about 10 ms
//! active, then 20 ms asleep); nominal burst 1 ms per thread, so the set
//! point is 3 ms; equal shares until round 50, then 20 / 40 / 40 %.
//!
//! `cargo run -p rtlab-sim --example multiburst_rounds` prints one line per
//! round: round, end time, measured duration, set point, burst correction.

use rtlab_model::{Nanos, Task, TaskSet};
use rtlab_sim::{simulate, SchedulerSpec, SimConfig};

/// The pool of §4.1.
pub fn pool() -> TaskSet {
    let ms = Nanos::from_ms;
    TaskSet::new(
        "paper-002-4.1",
        vec![
            Task::new("batch1", ms(1000), ms(1000)),
            Task::new("batch2", ms(1000), ms(1000)),
            Task::new("periodic", ms(30), Nanos::from_us(3_333)),
        ],
    )
}

fn main() {
    let spec: SchedulerSpec = "multiburst:burst=1ms,share=equal,reshare=50:1/2/2"
        .parse()
        .unwrap();
    let report = simulate(&pool(), &spec, &SimConfig::new(Nanos::from_ms(300))).unwrap();
    let data = report.scheduler_data.unwrap();
    println!("round end_ms duration_ms set_point_ms correction_ms");
    for r in data["first_rounds"].as_array().unwrap().iter().take(100) {
        let ms = |k: &str| r[k].as_f64().unwrap() / 1e6;
        println!(
            "{:5} {:8.3} {:8.3} {:8.3} {:8.3}",
            r["round"],
            ms("end_ns"),
            ms("duration_ns"),
            ms("set_point_ns"),
            ms("correction_ns")
        );
    }
}
