//! Where job records go as a run goes: `--jobs` CSV and `--trace` Chrome
//! trace events, written row by row on the writer thread (never on a task
//! thread), so neither memory nor the real-time threads depend on the
//! length of the run.
//!
//! Order: each task's jobs come in job order; tasks are interleaved in the
//! order the writer drains their rings (roughly by completion time), so a
//! global order by release is a sort away (`sort -t, -k3,3n`).

use std::io::{self, Write};

use rtlab_chrome_trace::{Event, TraceWriter};
use rtlab_model::{Nanos, TaskSet};
use serde::Serialize;

use super::record::JobRecord;

pub use rtlab_model::results::JobSink;

/// The column `--jobs FILE.csv` has at the end, after [`JOBS_CSV_HEADER`]'s,
/// when the set has critical sections: each job's lock wait
/// ([`JobRecord::blocked`]; 0 for tasks without sections, empty for a job
/// that never started). Sets without critical sections keep the old header.
pub const JOBS_CSV_BLOCKED_COLUMN: &str = "blocked_ns";

/// The header of `--jobs FILE.csv`.
pub const JOBS_CSV_HEADER: &str = "task,job,release_ns,deadline_ns,start_ns,finish_ns,lag_ns,response_ns,missed,start_deadline_missed,voluntary_switches,involuntary_switches,cpu";

/// `--jobs`: one CSV row per job (empty cells where a job never started or
/// finished), written through the `csv` crate's fixed-size buffer, so
/// memory does not grow with the run. Fields are quoted as RFC 4180 says
/// (only a task name can need it: one holding `,`, `"`, CR or LF). A name
/// a spreadsheet would run as a formula gets a leading `'`
/// ([`rtlab_model::csv_cell`]).
pub struct JobsCsv<W: Write + Send> {
    out: csv::Writer<W>,
    names: Vec<String>,
    /// The set has critical sections: write [`JOBS_CSV_BLOCKED_COLUMN`].
    locks: bool,
}

/// One row of [`JobsCsv`], in [`JOBS_CSV_HEADER`] order (`None`: empty cell).
#[derive(Serialize)]
struct JobRow<'a> {
    task: &'a str,
    job: u64,
    release_ns: u64,
    deadline_ns: u64,
    start_ns: Option<u64>,
    finish_ns: Option<u64>,
    lag_ns: Option<u64>,
    response_ns: Option<u64>,
    missed: bool,
    start_deadline_missed: bool,
    voluntary_switches: u64,
    involuntary_switches: u64,
    cpu: Option<u32>,
    /// Outer `None`: no such column; inner `None`: an empty cell.
    #[serde(skip_serializing_if = "Option::is_none")]
    blocked_ns: Option<Option<u64>>,
}

impl<W: Write + Send> JobsCsv<W> {
    /// Writes the header.
    pub fn new(out: W, set: &TaskSet) -> io::Result<JobsCsv<W>> {
        let mut out = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        let locks = set.tasks.iter().any(|t| !t.critical_sections.is_empty());
        let extra = locks.then_some(JOBS_CSV_BLOCKED_COLUMN);
        out.write_record(JOBS_CSV_HEADER.split(',').chain(extra))?;
        Ok(JobsCsv {
            out,
            names: set
                .tasks
                .iter()
                .map(|t| rtlab_model::csv_cell(&t.name).into_owned())
                .collect(),
            locks,
        })
    }
}

impl<W: Write + Send> JobSink for JobsCsv<W> {
    fn job(&mut self, j: &JobRecord, ended: Nanos) -> io::Result<()> {
        let ns = |t: Option<Nanos>| t.map(Nanos::as_ns);
        self.out.serialize(JobRow {
            task: self.names.get(j.task).map_or("?", String::as_str),
            job: j.job,
            release_ns: j.release.as_ns(),
            deadline_ns: j.deadline.as_ns(),
            start_ns: ns(j.start),
            finish_ns: ns(j.finish),
            lag_ns: ns(j.lag()),
            response_ns: ns(j.response()),
            missed: j.missed(ended),
            start_deadline_missed: j.missed_start_deadline(ended),
            voluntary_switches: j.voluntary_switches,
            involuntary_switches: j.involuntary_switches,
            cpu: j.cpu,
            blocked_ns: self.locks.then(|| match (j.blocked, j.start) {
                (Some(b), _) => Some(b.as_ns()),
                (None, Some(_)) => Some(0),
                (None, None) => None,
            }),
        })?;
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `--trace`: Chrome trace-event JSON through [`rtlab_chrome_trace`]
/// (`displayTimeUnit` `"ns"`, times in microseconds as the format wants):
/// a thread-name event per task, an instant event at each release and a
/// complete event per finished job from start to finish (a job's window on
/// its thread: preemptions inside it are counted, not located).
pub struct ChromeTrace<W: Write + Send> {
    out: TraceWriter<W>,
    names: Vec<String>,
}

/// The `args` of a finished job's complete event.
#[derive(Serialize)]
struct JobSpanArgs {
    deadline_ns: u64,
    missed: bool,
    preemptions: u64,
    release_ns: u64,
}

impl<W: Write + Send> ChromeTrace<W> {
    /// Writes the opening and the thread names.
    pub fn new(out: W, set: &TaskSet) -> io::Result<ChromeTrace<W>> {
        let mut out = TraceWriter::new(out)?;
        for (i, t) in set.tasks.iter().enumerate() {
            out.event(&Event::thread_name(i, &t.name))?;
        }
        Ok(ChromeTrace {
            out,
            names: set.tasks.iter().map(|t| t.name.clone()).collect(),
        })
    }
}

impl<W: Write + Send> JobSink for ChromeTrace<W> {
    fn job(&mut self, j: &JobRecord, ended: Nanos) -> io::Result<()> {
        let name = self.names.get(j.task).map_or("?", String::as_str);
        let release = format!("release {name}#{}", j.job);
        self.out
            .event(&Event::instant(&release, j.task, j.release))?;
        if let (Some(start), Some(finish)) = (j.start, j.finish) {
            let span = format!("{name}#{}", j.job);
            let args = JobSpanArgs {
                deadline_ns: j.deadline.as_ns(),
                missed: j.missed(ended),
                preemptions: j.involuntary_switches,
                release_ns: j.release.as_ns(),
            };
            self.out
                .event(&Event::complete(&span, j.task, start, finish).with_args(args))?;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_model::Task;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn job(k: u64, start: Option<u64>, finish: Option<u64>) -> JobRecord {
        JobRecord {
            start: start.map(ms),
            finish: finish.map(ms),
            involuntary_switches: 1,
            ..JobRecord::unstarted(0, k, ms(10 * k), ms(10 * k + 5))
        }
    }

    /// Issue 24: `--jobs` wrote `=cmd` as is; a spreadsheet runs it.
    #[test]
    fn csv_names_a_spreadsheet_would_run_get_a_quote() {
        let set = TaskSet::new("s", vec![Task::new("=1+1", ms(10), ms(1))]);
        let mut out = Vec::new();
        let mut csv = JobsCsv::new(&mut out, &set).unwrap();
        csv.job(&job(0, Some(1), Some(3)), ms(20)).unwrap();
        csv.finish().unwrap();
        drop(csv);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.lines().nth(1).unwrap().starts_with("'=1+1,0,"),
            "{text}"
        );
    }

    #[test]
    fn csv_has_one_row_per_job_and_empty_cells_for_missing_times() {
        let set = TaskSet::new("s", vec![Task::new("a,b", ms(10), ms(1))]);
        let mut out = Vec::new();
        let mut csv = JobsCsv::new(&mut out, &set).unwrap();
        csv.job(&job(0, Some(1), Some(3)), ms(20)).unwrap();
        csv.job(&job(1, None, None), ms(20)).unwrap();
        csv.finish().unwrap();
        drop(csv);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], JOBS_CSV_HEADER);
        assert_eq!(
            lines[1],
            "\"a,b\",0,0,5000000,1000000,3000000,1000000,3000000,false,false,0,1,"
        );
        assert_eq!(lines[2], "\"a,b\",1,10000000,15000000,,,,,true,true,0,1,");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn sets_with_critical_sections_get_a_last_column_with_each_jobs_lock_wait() {
        let mut locking = Task::new("l", ms(10), ms(2));
        locking.critical_sections = vec![rtlab_model::CriticalSection {
            resource: "r".into(),
            start: ms(0),
            length: ms(1),
        }];
        let set = TaskSet::new("s", vec![locking, Task::new("free", ms(10), ms(1))]);
        let mut out = Vec::new();
        let mut csv = JobsCsv::new(&mut out, &set).unwrap();
        let waited = JobRecord {
            blocked: Some(Nanos::from_us(1500)),
            ..job(0, Some(1), Some(3))
        };
        csv.job(&waited, ms(20)).unwrap();
        let free = JobRecord {
            task: 1,
            ..job(0, Some(3), Some(4))
        };
        csv.job(&free, ms(20)).unwrap();
        csv.job(&job(1, None, None), ms(20)).unwrap();
        csv.finish().unwrap();
        drop(csv);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("{JOBS_CSV_HEADER},blocked_ns"));
        assert!(
            lines[1].ends_with(",false,false,0,1,,1500000"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].starts_with("free,") && lines[2].ends_with(",1,,0"),
            "{}",
            lines[2]
        );
        assert!(lines[3].ends_with(",true,true,0,1,,"), "{}", lines[3]);
    }

    #[test]
    fn csv_quotes_names_with_a_comma_quote_cr_or_lf_as_rfc_4180_says() {
        let names = ["plain", "a\rb", "a\nb", "say \"hi\"", "x,y"];
        let set = TaskSet::new(
            "s",
            names.iter().map(|n| Task::new(*n, ms(10), ms(1))).collect(),
        );
        let mut out = Vec::new();
        let mut csv = JobsCsv::new(&mut out, &set).unwrap();
        for task in 0..names.len() {
            let j = JobRecord {
                task,
                ..job(0, None, None)
            };
            csv.job(&j, ms(1)).unwrap();
        }
        csv.finish().unwrap();
        drop(csv);
        let text = String::from_utf8(out).unwrap();
        let tail = ",0,0,5000000,,,,,false,false,0,1,\n";
        let quoted = [
            "plain",
            "\"a\rb\"",
            "\"a\nb\"",
            "\"say \"\"hi\"\"\"",
            "\"x,y\"",
        ];
        let rows: String = quoted.iter().map(|q| format!("{q}{tail}")).collect();
        assert_eq!(text, format!("{JOBS_CSV_HEADER}\n{rows}"));
        // And a CSV reader gets the names back.
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let read: Vec<String> = reader
            .records()
            .map(|r| r.unwrap()[0].to_string())
            .collect();
        assert_eq!(read, names);
    }

    #[test]
    fn the_trace_is_one_json_document_with_an_instant_per_release_and_a_span_per_finished_job() {
        let set = TaskSet::new(
            "s",
            vec![Task::new("a", ms(10), ms(1)), Task::new("b", ms(10), ms(1))],
        );
        let mut out = Vec::new();
        let mut trace = ChromeTrace::new(&mut out, &set).unwrap();
        trace.job(&job(0, Some(1), Some(3)), ms(30)).unwrap();
        trace.job(&job(1, Some(11), None), ms(30)).unwrap();
        trace.job(&job(2, None, None), ms(30)).unwrap();
        trace.finish().unwrap();
        drop(trace);
        let text = std::str::from_utf8(&out).unwrap();
        assert!(text.starts_with(r#"{"displayTimeUnit":"ns","traceEvents":[{"args":{"name":"a"},"name":"thread_name","ph":"M","pid":1,"tid":0},"#));
        assert!(text.contains(r#"{"name":"release a#0","ph":"i","pid":1,"s":"t","tid":0,"ts":0.0},{"args":{"deadline_ns":5000000,"missed":false,"preemptions":1,"release_ns":0},"dur":2000.0,"name":"a#0","ph":"X","pid":1,"tid":0,"ts":1000.0}"#), "{text}");
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
        assert_eq!((count("M"), count("i"), count("X")), (2, 3, 1));
        let span = events.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(span["ts"], 1000.0);
        assert_eq!(span["dur"], 2000.0);
        assert_eq!(span["args"]["missed"], false);
        assert_eq!(
            doc["displayTimeUnit"],
            rtlab_chrome_trace::DISPLAY_TIME_UNIT
        );
    }
}
