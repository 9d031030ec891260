//! The Chrome trace-event format (`chrome://tracing`, the Perfetto UI),
//! written event by event: the one writer behind `rtlab sim --trace` and
//! `rtlab run --trace`.
//!
//! A document is `{"displayTimeUnit":"ns","traceEvents":[EVENT,...]}`
//! (the "JSON Object Format" of Google's *Trace Event Format* document).
//! Event times (`ts`, `dur`) are in **microseconds**, as the format fixes,
//! as decimals so that nanoseconds survive (`1.5` is 1500 ns).
//! `displayTimeUnit` only says how a viewer labels them; it is
//! [`DISPLAY_TIME_UNIT`] = `"ns"` for every trace rtlab writes, because
//! jobs, lags and overheads are microseconds long and a millisecond display
//! rounds them away.
//!
//! [`TraceWriter`] streams: the head goes out when it is made, each
//! [`Event`] as it is given (serialized by `serde`, fields in alphabetical
//! order, no spaces: the bytes `serde_json` gives for the whole document
//! as a map), the tail at [`TraceWriter::finish`]. Memory is one buffer,
//! whatever the number of events.
//!
//! Its own crate so that both `rtlab-sim` and `rtlab-rt` use it without
//! `rt` depending on the simulator.

#![forbid(unsafe_code)]

use std::io::{self, BufWriter, Write};

use rtlab_model::Nanos;
use serde::Serialize;

/// The `displayTimeUnit` of every trace rtlab writes.
pub const DISPLAY_TIME_UNIT: &str = "ns";

/// The process id of every event (one process: the task set).
pub const PID: u32 = 1;

/// An event's phase (`ph`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Phase {
    /// `X`: a complete event, from `ts` for `dur`.
    #[serde(rename = "X")]
    Complete,
    /// `i`: an instant event at `ts`.
    #[serde(rename = "i")]
    Instant,
    /// `M`: metadata (a thread's name).
    #[serde(rename = "M")]
    Metadata,
}

/// An instant event's scope (`s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Scope {
    /// `t`: drawn on its thread's row.
    #[serde(rename = "t")]
    Thread,
}

/// One trace event. Fields are declared in alphabetical order, so an event
/// serializes to the same bytes as a sorted JSON map of it; absent fields
/// are left out. `A` is the type of `args` (a struct of the event's
/// details).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event<'a, A = ()> {
    /// Details shown when the event is selected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<A>,
    /// Category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cat: Option<&'a str>,
    /// Duration in µs (complete events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dur: Option<f64>,
    /// Name.
    pub name: &'a str,
    /// Phase.
    pub ph: Phase,
    /// Process id ([`PID`]).
    pub pid: u32,
    /// Scope (instant events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub s: Option<Scope>,
    /// Thread id: the row the event is drawn on.
    pub tid: usize,
    /// Time in µs (not for metadata).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<f64>,
}

/// The `args` of a `thread_name` metadata event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ThreadName<'a> {
    /// The row's label.
    pub name: &'a str,
}

/// `t` in the format's microseconds: `t / 1000`, exact to the nanosecond
/// up to 2^53 ns (104 days).
pub fn micros(t: Nanos) -> f64 {
    t.as_ns() as f64 / 1000.0
}

impl<'a> Event<'a, ThreadName<'a>> {
    /// Names row `tid` `name` (`ph: M`, `name: thread_name`).
    pub fn thread_name(tid: usize, name: &'a str) -> Self {
        Event {
            args: Some(ThreadName { name }),
            cat: None,
            dur: None,
            name: "thread_name",
            ph: Phase::Metadata,
            pid: PID,
            s: None,
            tid,
            ts: None,
        }
    }
}

impl<'a> Event<'a> {
    /// A complete event on row `tid` over `[start, end)` (`ph: X`).
    pub fn complete(name: &'a str, tid: usize, start: Nanos, end: Nanos) -> Self {
        Event {
            args: None,
            cat: None,
            dur: Some(micros(end.saturating_sub(start))),
            name,
            ph: Phase::Complete,
            pid: PID,
            s: None,
            tid,
            ts: Some(micros(start)),
        }
    }

    /// An instant event on row `tid` at `at` (`ph: i`, `s: t`).
    pub fn instant(name: &'a str, tid: usize, at: Nanos) -> Self {
        Event {
            args: None,
            cat: None,
            dur: None,
            name,
            ph: Phase::Instant,
            pid: PID,
            s: Some(Scope::Thread),
            tid,
            ts: Some(micros(at)),
        }
    }
}

impl<'a, A> Event<'a, A> {
    /// The event in category `cat`.
    pub fn in_category(self, cat: &'a str) -> Self {
        Event {
            cat: Some(cat),
            ..self
        }
    }

    /// The event with details `args`.
    pub fn with_args<B>(self, args: B) -> Event<'a, B> {
        Event {
            args: Some(args),
            cat: self.cat,
            dur: self.dur,
            name: self.name,
            ph: self.ph,
            pid: self.pid,
            s: self.s,
            tid: self.tid,
            ts: self.ts,
        }
    }
}

/// The document's tail.
const TAIL: &str = "]}";

/// A trace document being written event by event (module docs).
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    out: BufWriter<W>,
    events: u64,
    finished: bool,
}

impl<W: Write> TraceWriter<W> {
    /// Writes the head to `out`.
    pub fn new(out: W) -> io::Result<TraceWriter<W>> {
        let mut out = BufWriter::new(out);
        out.write_all(br#"{"displayTimeUnit":"#)?;
        serde_json::to_writer(&mut out, DISPLAY_TIME_UNIT)?;
        out.write_all(br#","traceEvents":["#)?;
        Ok(TraceWriter {
            out,
            events: 0,
            finished: false,
        })
    }

    /// Appends one event.
    pub fn event<A: Serialize>(&mut self, event: &Event<'_, A>) -> io::Result<()> {
        if self.events > 0 {
            self.out.write_all(b",")?;
        }
        serde_json::to_writer(&mut self.out, event)?;
        self.events += 1;
        Ok(())
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Writes the tail (once; later calls only flush) and flushes.
    pub fn finish(&mut self) -> io::Result<()> {
        if !self.finished {
            self.finished = true;
            self.out.write_all(TAIL.as_bytes())?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn document(write: impl FnOnce(&mut TraceWriter<&mut Vec<u8>>)) -> String {
        let mut bytes = Vec::new();
        let mut w = TraceWriter::new(&mut bytes).unwrap();
        write(&mut w);
        w.finish().unwrap();
        w.finish().unwrap();
        drop(w);
        String::from_utf8(bytes).unwrap()
    }

    #[derive(Serialize)]
    struct Job {
        job: u64,
    }

    #[test]
    fn events_serialize_to_the_bytes_of_a_sorted_json_map() {
        let text = document(|w| {
            w.event(&Event::thread_name(0, "t\"1")).unwrap();
            let run = Event::complete("t1#0", 0, Nanos::from_ns(1500), Nanos::from_us(4))
                .in_category("run");
            w.event(&run).unwrap();
            let release = Event::instant("release", 0, Nanos::from_us(2))
                .in_category("job")
                .with_args(Job { job: 3 });
            w.event(&release).unwrap();
        });
        assert_eq!(
            text,
            r#"{"displayTimeUnit":"ns","traceEvents":[{"args":{"name":"t\"1"},"name":"thread_name","ph":"M","pid":1,"tid":0},{"cat":"run","dur":2.5,"name":"t1#0","ph":"X","pid":1,"tid":0,"ts":1.5},{"args":{"job":3},"cat":"job","name":"release","ph":"i","pid":1,"s":"t","tid":0,"ts":2.0}]}"#
        );
        // The same bytes serde_json gives for the document as a map.
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&doc).unwrap(), text);
        assert_eq!(doc["displayTimeUnit"], DISPLAY_TIME_UNIT);
        assert_eq!(
            doc["traceEvents"][2],
            json!({"args": {"job": 3}, "cat": "job", "name": "release", "ph": "i", "pid": 1, "s": "t", "tid": 0, "ts": 2.0})
        );
    }

    #[test]
    fn an_empty_trace_is_a_valid_document() {
        let text = document(|_| {});
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc, json!({"displayTimeUnit": "ns", "traceEvents": []}));
    }

    #[test]
    fn micros_keep_every_nanosecond() {
        assert_eq!(micros(Nanos::from_ns(1)), 0.001);
        assert_eq!(micros(Nanos::from_ns(123_456_789)), 123_456.789);
    }

    #[test]
    fn a_write_error_is_returned() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Err(io::Error::other("disk full"))
            }
        }
        let mut w = TraceWriter::new(Broken).unwrap();
        assert!(w.finish().is_err());
    }
}
