//! Memory that does not grow with the run: the streamed Chrome trace, the
//! cap on trace records kept, and the stop at a runaway backlog.

use std::io::Write;
use std::sync::{Arc, Mutex};

use rtlab_model::{file, Nanos, Task, TaskSet};
use rtlab_sim::{
    MissRule, SchedulerSpec, SimConfig, Simulator, TraceWindow, MAX_KEPT_RECORDS, MAX_PENDING_JOBS,
};

/// A writer the test can read back after the simulator owned it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn traced(set: &TaskSet, scheduler: &str, duration: Nanos, window: TraceWindow) -> Simulator {
    let mut config = SimConfig::new(duration);
    config.trace = Some(window);
    let spec: SchedulerSpec = scheduler.parse().unwrap();
    Simulator::new(set, &spec, config).unwrap()
}

#[test]
fn streamed_chrome_trace_is_the_document_serde_json_would_write() {
    let set = file::load("builtin:lf-scenario-4").unwrap().set;
    let window = TraceWindow {
        from: Nanos::from_ms(10),
        to: Nanos::from_ms(400),
    };
    let mut sim = traced(&set, "edf", Nanos::from_secs(1), window);
    let out = Shared::default();
    sim.stream_chrome_trace(Box::new(out.clone()), true);
    sim.finish_trace().unwrap();
    let streamed = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let trace = sim.trace().unwrap();
    assert!(trace.records.len() > 50, "{}", trace.records.len());
    assert_eq!(
        streamed,
        serde_json::to_string(&trace.to_chrome_json()).unwrap()
    );
}

#[test]
fn a_trace_keeps_at_most_its_limit_of_records_and_streams_them_all() {
    // Avionics for 320 s: about 700 records a second in the window.
    let set = file::load("builtin:avionics").unwrap().set;
    let duration = Nanos::from_secs(320);
    let window = TraceWindow {
        from: Nanos::ZERO,
        to: duration,
    };
    let mut sim = traced(&set, "fp:rm", duration, window);
    let out = Shared::default();
    sim.stream_chrome_trace(Box::new(out.clone()), true);
    sim.finish_trace().unwrap();
    let trace = sim.trace().unwrap();
    assert_eq!(trace.records.len(), MAX_KEPT_RECORDS);
    assert!(trace.dropped > 0);
    let doc: serde_json::Value = serde_json::from_slice(&out.0.lock().unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap().len() as u64;
    // One thread-name event per task and the kernel's, then every record.
    let names = set.tasks.len() as u64 + 1;
    assert_eq!(events, names + MAX_KEPT_RECORDS as u64 + trace.dropped);

    // Streaming without keeping: nothing held.
    let mut sim = traced(&set, "fp:rm", Nanos::from_secs(1), window);
    sim.stream_chrome_trace(Box::new(Shared::default()), false);
    sim.finish_trace().unwrap();
    assert!(sim.trace().unwrap().records.is_empty());
}

#[test]
fn an_ever_growing_backlog_stops_the_run_at_the_limit_and_says_when() {
    // C = 2T: one job more waits every two periods, forever.
    let set = TaskSet::new(
        "overload",
        vec![Task::new("t", Nanos::from_us(1), Nanos::from_us(2)).with_deadline(Nanos::from_us(2))],
    );
    let mut config = SimConfig::new(Nanos::from_secs(10));
    config.on_miss = MissRule::Continue;
    let spec: SchedulerSpec = "fp:rm".parse().unwrap();
    let mut sim = Simulator::new(&set, &spec, config).unwrap();
    sim.run();
    let stop = sim.stopped().expect("the run stops at the backlog limit");
    assert_eq!(stop.pending, MAX_PENDING_JOBS + 1);
    // Job k is released at k us; k / 2 of them have completed by then.
    let at_us = stop.at.as_ns() / 1000;
    assert!((1_999_990..=2_000_010).contains(&at_us), "{}", stop.at);
    let report = sim.report();
    assert_eq!(report.duration_ns, stop.at.as_ns());
    assert_eq!(
        report.released - report.completed - 1,
        MAX_PENDING_JOBS as u64 + 1,
        "released = completed + running + waiting"
    );
    let message = stop.to_string();
    assert!(message.contains("use --on-miss skip or abort"), "{message}");
    assert!(!message.contains('\n'));

    // Skip never builds a backlog: the same set runs to the end.
    let mut config = SimConfig::new(Nanos::from_secs(3));
    config.on_miss = MissRule::Skip;
    let mut sim = Simulator::new(&set, &spec, config).unwrap();
    sim.run();
    assert_eq!(sim.stopped(), None);
    assert_eq!(sim.report().duration_ns, Nanos::from_secs(3).as_ns());
}
