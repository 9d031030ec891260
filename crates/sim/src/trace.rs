//! Schedule traces: what ran when, for a window of the run, exported as a
//! Chrome trace-event document (`--trace F.json`, opens in Perfetto UI or
//! `chrome://tracing`) or an SVG Gantt chart (`--gantt F.svg`).
//!
//! Memory stays bounded whatever the window: the Chrome document is
//! streamed to its writer as the events happen
//! ([`Simulator::stream_chrome_trace`](crate::Simulator::stream_chrome_trace)),
//! and at most [`MAX_KEPT_RECORDS`] records are kept in [`Trace::records`]
//! (for the Gantt chart and library users); the rest are counted in
//! [`Trace::dropped`].

use std::fmt::Write as _;
use std::io;

use rtlab_chrome_trace::{Event, TraceWriter};
use rtlab_model::Nanos;
use serde::Serialize;
use serde_json::Value;

use crate::config::TraceWindow;

/// One recorded fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceRecord {
    /// Job `job` of `task` executed in `[start, end)`.
    Run {
        /// Task index.
        task: usize,
        /// Job index within the task.
        job: u64,
        /// Start.
        start: Nanos,
        /// End.
        end: Nanos,
    },
    /// Overheads occupied the processor in `[start, end)`.
    Kernel {
        /// Start.
        start: Nanos,
        /// End.
        end: Nanos,
    },
    /// A job was released.
    Release {
        /// Task index.
        task: usize,
        /// Job index.
        job: u64,
        /// Release time.
        at: Nanos,
    },
    /// A job completed.
    Complete {
        /// Task index.
        task: usize,
        /// Job index.
        job: u64,
        /// Completion time.
        at: Nanos,
    },
    /// A job missed its deadline (`at` is the deadline).
    Miss {
        /// Task index.
        task: usize,
        /// Job index.
        job: u64,
        /// The deadline.
        at: Nanos,
    },
}

/// A job resuming on another processor (multiprocessor runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Migration {
    /// Task index.
    pub task: usize,
    /// Job index.
    pub job: u64,
    /// The processor it last ran on.
    pub from: u32,
    /// The processor it resumes on.
    pub to: u32,
    /// When.
    pub at: Nanos,
}

/// The processor of a record that belongs to no processor.
pub const NO_CPU: u32 = u32::MAX;

/// Records a [`Trace`] keeps in memory at most (about 40 bytes each, and a
/// Gantt chart of them about 150 bytes each): beyond it they are counted in
/// [`Trace::dropped`], and a streamed Chrome trace still gets every one.
pub const MAX_KEPT_RECORDS: usize = 200_000;

/// The records of one window, in time order of their end.
pub struct Trace {
    /// The window recorded.
    pub window: TraceWindow,
    /// Task names, by index.
    pub tasks: Vec<String>,
    /// The records kept: the first [`MAX_KEPT_RECORDS`] of the window (none
    /// when a Chrome stream was attached with `keep_records` false).
    pub records: Vec<TraceRecord>,
    /// Records of the window not kept in `records`.
    pub dropped: u64,
    /// Processors of the run (1 for the uniprocessor engine).
    pub processors: u32,
    /// True for a run of a multiprocessor scheduler (even on one
    /// processor): its charts get one row per processor.
    pub per_processor: bool,
    /// With `per_processor`, the processor of each kept record (parallel
    /// to `records`; [`NO_CPU`] for releases, completions and misses,
    /// which belong to a task). Empty otherwise.
    pub record_cpus: Vec<u32>,
    /// With `per_processor`, the migrations in the window (kept like
    /// `records`).
    pub migrations: Vec<Migration>,
    keep: bool,
    chrome: Option<ChromeStream>,
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("window", &self.window)
            .field("tasks", &self.tasks)
            .field("records", &self.records)
            .field("dropped", &self.dropped)
            .field("streaming", &self.chrome.is_some())
            .finish()
    }
}

/// A Chrome trace-event document being written event by event
/// ([`rtlab_chrome_trace`]). The first write error is kept and ends the
/// stream.
struct ChromeStream<W: io::Write = Box<dyn io::Write + Send>> {
    out: Result<TraceWriter<W>, io::Error>,
}

impl<W: io::Write> ChromeStream<W> {
    fn new(out: W, tasks: &[String]) -> ChromeStream<W> {
        let mut stream = ChromeStream {
            out: TraceWriter::new(out),
        };
        for (i, name) in tasks.iter().enumerate() {
            stream.write(&Event::thread_name(i, name));
        }
        stream.write(&Event::thread_name(tasks.len(), "kernel"));
        stream
    }

    fn write<A: Serialize>(&mut self, event: &Event<'_, A>) {
        if let Ok(out) = &mut self.out {
            if let Err(e) = out.event(event) {
                self.out = Err(e);
            }
        }
    }

    fn finish(self) -> io::Result<()> {
        self.out?.finish()
    }
}

impl Trace {
    pub(crate) fn new(window: TraceWindow, tasks: Vec<String>) -> Trace {
        Trace {
            window,
            tasks,
            records: Vec::new(),
            dropped: 0,
            processors: 1,
            per_processor: false,
            record_cpus: Vec::new(),
            migrations: Vec::new(),
            keep: true,
            chrome: None,
        }
    }

    /// Starts streaming the Chrome document to `out` (its head and the
    /// thread names now, each record as it is made, the tail at
    /// [`Trace::finish_chrome`]); `keep_records` false keeps none in memory.
    pub(crate) fn stream_chrome(&mut self, out: Box<dyn io::Write + Send>, keep_records: bool) {
        self.chrome = Some(ChromeStream::new(out, &self.tasks));
        self.keep = keep_records;
    }

    /// Ends the streamed Chrome document and flushes it; the first write
    /// error, if any. Nothing to do without a stream.
    pub(crate) fn finish_chrome(&mut self) -> io::Result<()> {
        match self.chrome.take() {
            Some(stream) => stream.finish(),
            None => Ok(()),
        }
    }

    fn push(&mut self, record: TraceRecord) {
        self.push_on(record, NO_CPU);
    }

    fn push_on(&mut self, record: TraceRecord, cpu: u32) {
        if self.per_processor {
            if self.records.len() < MAX_KEPT_RECORDS {
                self.records.push(record);
                self.record_cpus.push(cpu);
            } else {
                self.dropped += 1;
            }
            return;
        }
        if let Some(stream) = &mut self.chrome {
            stream.record(&self.tasks, &record);
        }
        if !self.keep {
            return;
        }
        if self.records.len() < MAX_KEPT_RECORDS {
            self.records.push(record);
        } else {
            self.dropped += 1;
        }
    }

    pub(crate) fn interval(&mut self, task: Option<(usize, u64)>, start: Nanos, end: Nanos) {
        let (s, e) = (start.max(self.window.from), end.min(self.window.to));
        if s >= e {
            return;
        }
        self.push(match task {
            Some((task, job)) => TraceRecord::Run {
                task,
                job,
                start: s,
                end: e,
            },
            None => TraceRecord::Kernel { start: s, end: e },
        });
    }

    /// An execution (or, with `task` `None`, overhead) interval on
    /// processor `cpu` of a multiprocessor run.
    pub(crate) fn interval_on(
        &mut self,
        cpu: u32,
        task: Option<(usize, u64)>,
        start: Nanos,
        end: Nanos,
    ) {
        let (s, e) = (start.max(self.window.from), end.min(self.window.to));
        if s >= e {
            return;
        }
        let record = match task {
            Some((task, job)) => TraceRecord::Run {
                task,
                job,
                start: s,
                end: e,
            },
            None => TraceRecord::Kernel { start: s, end: e },
        };
        self.push_on(record, cpu);
    }

    /// A job of a multiprocessor run resuming on `to` after running on `from`.
    pub(crate) fn migration(&mut self, task: usize, job: u64, from: u32, to: u32, at: Nanos) {
        if at < self.window.from || at >= self.window.to {
            return;
        }
        if self.records.len() + self.migrations.len() < MAX_KEPT_RECORDS {
            self.migrations.push(Migration {
                task,
                job,
                from,
                to,
                at,
            });
        } else {
            self.dropped += 1;
        }
    }

    /// Adds `other`'s records (a sub-run on processors `cpus`, tasks
    /// renumbered by `task_of`) to this multiprocessor trace.
    pub(crate) fn absorb(&mut self, other: &Trace, cpus: &[u32], task_of: &[usize]) {
        let cpu_of = |i: usize| {
            if other.per_processor {
                match other.record_cpus[i] {
                    NO_CPU => NO_CPU,
                    c => cpus[c as usize],
                }
            } else {
                cpus[0]
            }
        };
        for (i, r) in other.records.iter().enumerate() {
            let record = match *r {
                TraceRecord::Run {
                    task,
                    job,
                    start,
                    end,
                } => TraceRecord::Run {
                    task: task_of[task],
                    job,
                    start,
                    end,
                },
                TraceRecord::Kernel { start, end } => TraceRecord::Kernel { start, end },
                TraceRecord::Release { task, job, at } => TraceRecord::Release {
                    task: task_of[task],
                    job,
                    at,
                },
                TraceRecord::Complete { task, job, at } => TraceRecord::Complete {
                    task: task_of[task],
                    job,
                    at,
                },
                TraceRecord::Miss { task, job, at } => TraceRecord::Miss {
                    task: task_of[task],
                    job,
                    at,
                },
            };
            let cpu = match record {
                TraceRecord::Run { .. } | TraceRecord::Kernel { .. } => cpu_of(i),
                _ => NO_CPU,
            };
            self.push_on(record, cpu);
        }
        for mig in &other.migrations {
            self.migrations.push(Migration {
                task: task_of[mig.task],
                from: cpus[mig.from as usize],
                to: cpus[mig.to as usize],
                ..*mig
            });
        }
        self.dropped += other.dropped;
    }

    pub(crate) fn point(&mut self, record: TraceRecord) {
        let at = match record {
            TraceRecord::Release { at, .. }
            | TraceRecord::Complete { at, .. }
            | TraceRecord::Miss { at, .. } => at,
            _ => return,
        };
        if at >= self.window.from && at < self.window.to {
            self.push(record);
        }
    }

    /// The Chrome trace-event document of the kept records: one thread row
    /// per task (and one for the kernel), complete events (`ph: X`) for
    /// execution and instant events (`ph: i`) for releases, completions and
    /// misses. Times are in microseconds as the format requires. The same
    /// document as the streamed one when nothing was dropped.
    pub fn to_chrome_json(&self) -> Value {
        let mut bytes = Vec::new();
        // Writing to memory cannot fail, and the writer makes valid JSON.
        let _ = self.write_chrome(&mut bytes);
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    }

    /// Writes the Chrome trace-event document of the kept records to `out`
    /// with the one writer the streamed trace uses (one row per task on one
    /// processor, one row per processor on several: see
    /// [`Trace::to_chrome_json`]); the first write error, if any.
    pub fn write_chrome<W: io::Write>(&self, out: W) -> io::Result<()> {
        if self.per_processor {
            return self.write_chrome_cpus(out);
        }
        let mut stream = ChromeStream::new(out, &self.tasks);
        for r in &self.records {
            stream.record(&self.tasks, r);
        }
        stream.finish()
    }

    /// A self-contained SVG Gantt chart of the window: one row per task,
    /// execution as bars, releases as up-ticks, misses as red marks, and a
    /// kernel row when overheads were recorded.
    pub fn to_svg(&self) -> String {
        if self.per_processor {
            return self.to_svg_cpus();
        }
        let has_kernel = self
            .records
            .iter()
            .any(|r| matches!(r, TraceRecord::Kernel { .. }));
        let rows = self.tasks.len() + usize::from(has_kernel);
        let (left, width, row_h, top) = (110.0, 1000.0, 28.0, 20.0);
        let height = top + row_h * rows as f64 + 40.0;
        let span = (self.window.to - self.window.from).as_ns().max(1) as f64;
        let x =
            |t: Nanos| left + (t.saturating_sub(self.window.from).as_ns() as f64 / span) * width;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{height:.0}" font-family="sans-serif" font-size="12">"#,
            left + width + 20.0
        );
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let palette = PALETTE;
        let row_y = |row: usize| top + row_h * row as f64;
        for (i, name) in self.tasks.iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="5" y="{:.1}">{}</text>"#,
                row_y(i) + row_h * 0.6,
                escape(name)
            );
        }
        if has_kernel {
            let _ = writeln!(
                s,
                r#"<text x="5" y="{:.1}">kernel</text>"#,
                row_y(self.tasks.len()) + row_h * 0.6
            );
        }
        for r in &self.records {
            match *r {
                TraceRecord::Run {
                    task,
                    job,
                    start,
                    end,
                } => {
                    let _ = writeln!(
                        s,
                        r#"<rect x="{:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{}"><title>{}#{job} {start}..{end}</title></rect>"#,
                        x(start),
                        row_y(task) + 6.0,
                        (x(end) - x(start)).max(0.5),
                        row_h - 10.0,
                        palette[task % palette.len()],
                        escape(&self.tasks[task])
                    );
                }
                TraceRecord::Kernel { start, end } => {
                    let _ = writeln!(
                        s,
                        r#"<rect x="{:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="gray"/>"#,
                        x(start),
                        row_y(self.tasks.len()) + 6.0,
                        (x(end) - x(start)).max(0.5),
                        row_h - 10.0
                    );
                }
                TraceRecord::Release { task, at, .. } => {
                    let (xx, y) = (x(at), row_y(task));
                    let _ = writeln!(
                        s,
                        r#"<line x1="{xx:.2}" y1="{:.1}" x2="{xx:.2}" y2="{:.1}" stroke="black"/>"#,
                        y + 2.0,
                        y + row_h - 4.0
                    );
                }
                TraceRecord::Miss { task, at, .. } => {
                    let (xx, y) = (x(at), row_y(task));
                    let _ = writeln!(
                        s,
                        r#"<line x1="{xx:.2}" y1="{:.1}" x2="{xx:.2}" y2="{:.1}" stroke="red" stroke-width="3"/>"#,
                        y,
                        y + row_h
                    );
                }
                TraceRecord::Complete { .. } => {}
            }
        }
        let axis_y = row_y(rows) + 5.0;
        axis(&mut s, &self.window, left, width, axis_y, &x);
        s.push_str("</svg>\n");
        s
    }
}

impl Trace {
    /// The multiprocessor Chrome document: one thread row per processor
    /// (`cpu K`, tid K) holding the jobs it ran (`task#job`, category
    /// `run`) and its migration costs (`migration`, category `kernel`),
    /// a `migrate` instant on the destination row for every migration
    /// (args: the job and the processor it came from), then one row per
    /// task (tid m + task) for its releases, completions and misses.
    fn write_chrome_cpus<W: io::Write>(&self, out: W) -> io::Result<()> {
        let mut out = ChromeStream {
            out: TraceWriter::new(out),
        };
        let m = self.processors as usize;
        for c in 0..m {
            out.write(&Event::thread_name(c, &format!("cpu {c}")));
        }
        for (i, name) in self.tasks.iter().enumerate() {
            out.write(&Event::thread_name(m + i, name));
        }
        for (r, &cpu) in self.records.iter().zip(&self.record_cpus) {
            let (name, task, job, at) = match *r {
                TraceRecord::Run {
                    task,
                    job,
                    start,
                    end,
                } => {
                    let name = format!("{}#{job}", self.tasks[task]);
                    let event = Event::complete(&name, cpu as usize, start, end);
                    out.write(&event.in_category("run"));
                    continue;
                }
                TraceRecord::Kernel { start, end } => {
                    let event = Event::complete("migration", cpu as usize, start, end);
                    out.write(&event.in_category("kernel"));
                    continue;
                }
                TraceRecord::Release { task, job, at } => ("release", task, job, at),
                TraceRecord::Complete { task, job, at } => ("complete", task, job, at),
                TraceRecord::Miss { task, job, at } => ("deadline miss", task, job, at),
            };
            let instant = Event::instant(name, m + task, at).in_category("job");
            out.write(&instant.with_args(JobArgs { job }));
        }
        for mig in &self.migrations {
            let name = format!("migrate {}#{}", self.tasks[mig.task], mig.job);
            let instant = Event::instant(&name, mig.to as usize, mig.at).in_category("migration");
            out.write(&instant.with_args(MigrationArgs {
                job: mig.job,
                from_cpu: mig.from,
            }));
        }
        out.finish()
    }

    /// The multiprocessor SVG Gantt chart: one row per processor, each
    /// job's execution a bar in its task's colour (the task named in the
    /// bar's tooltip and the legend), migration costs in gray, each
    /// migration a purple line from the row it left to the row it
    /// resumes on with a dot there, deadline misses red marks on the axis.
    fn to_svg_cpus(&self) -> String {
        let m = self.processors as usize;
        let (left, width, row_h, top) = (110.0, 1000.0, 28.0, 20.0);
        let legend_rows = self.tasks.len().div_ceil(6);
        let height = top + row_h * m as f64 + 40.0 + 18.0 * legend_rows as f64;
        let span = (self.window.to - self.window.from).as_ns().max(1) as f64;
        let x =
            |t: Nanos| left + (t.saturating_sub(self.window.from).as_ns() as f64 / span) * width;
        let row_y = |row: usize| top + row_h * row as f64;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{height:.0}" font-family="sans-serif" font-size="12">"#,
            left + width + 20.0
        );
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        for c in 0..m {
            let _ = writeln!(
                s,
                r#"<text x="5" y="{:.1}">cpu {c}</text>"#,
                row_y(c) + row_h * 0.6
            );
        }
        for (r, &cpu) in self.records.iter().zip(&self.record_cpus) {
            let (start, end, fill, title) = match *r {
                TraceRecord::Run {
                    task,
                    job,
                    start,
                    end,
                } => (
                    start,
                    end,
                    PALETTE[task % PALETTE.len()],
                    format!("{}#{job} {start}..{end}", escape(&self.tasks[task])),
                ),
                TraceRecord::Kernel { start, end } => {
                    (start, end, "gray", format!("migration {start}..{end}"))
                }
                _ => continue,
            };
            let _ = writeln!(
                s,
                r#"<rect x="{:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{fill}"><title>{title}</title></rect>"#,
                x(start),
                row_y(cpu as usize) + 6.0,
                (x(end) - x(start)).max(0.5),
                row_h - 10.0,
            );
        }
        for mig in &self.migrations {
            let xx = x(mig.at);
            let (y1, y2) = (
                row_y(mig.from as usize) + row_h / 2.0,
                row_y(mig.to as usize) + row_h / 2.0,
            );
            let _ = writeln!(
                s,
                r#"<line x1="{xx:.2}" y1="{y1:.1}" x2="{xx:.2}" y2="{y2:.1}" stroke="purple" stroke-width="1.5"><title>{}#{} migrates cpu {} to cpu {} at {}</title></line><circle cx="{xx:.2}" cy="{y2:.1}" r="3" fill="purple"/>"#,
                escape(&self.tasks[mig.task]),
                mig.job,
                mig.from,
                mig.to,
                mig.at
            );
        }
        let axis_y = row_y(m) + 5.0;
        for r in &self.records {
            if let TraceRecord::Miss { task, job, at } = *r {
                let xx = x(at);
                let _ = writeln!(
                    s,
                    r#"<line x1="{xx:.2}" y1="{:.1}" x2="{xx:.2}" y2="{:.1}" stroke="red" stroke-width="3"><title>{}#{job} misses its deadline {at}</title></line>"#,
                    axis_y - 8.0,
                    axis_y,
                    escape(&self.tasks[task])
                );
            }
        }
        axis(&mut s, &self.window, left, width, axis_y, &x);
        for (i, name) in self.tasks.iter().enumerate() {
            let (lx, ly) = (
                left + 165.0 * (i % 6) as f64,
                axis_y + 32.0 + 18.0 * (i / 6) as f64,
            );
            let _ = writeln!(
                s,
                r#"<rect x="{lx:.1}" y="{:.1}" width="10" height="10" fill="{}"/><text x="{:.1}" y="{ly:.1}">{}</text>"#,
                ly - 9.0,
                PALETTE[i % PALETTE.len()],
                lx + 14.0,
                escape(name)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

/// The tasks' colours in the Gantt charts.
const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7",
];

/// The time axis under a chart: a line and ten labelled steps.
fn axis(
    s: &mut String,
    window: &TraceWindow,
    left: f64,
    width: f64,
    axis_y: f64,
    x: &dyn Fn(Nanos) -> f64,
) {
    let _ = writeln!(
        s,
        r#"<line x1="{left}" y1="{axis_y:.1}" x2="{:.1}" y2="{axis_y:.1}" stroke="black"/>"#,
        left + width
    );
    for k in 0..=10u64 {
        let t = window.from + Nanos::from_ns((window.to - window.from).as_ns() / 10 * k);
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{t}</text>"#,
            x(t),
            axis_y + 15.0
        );
    }
}

/// The `args` of a migration instant.
#[derive(Serialize)]
struct MigrationArgs {
    job: u64,
    from_cpu: u32,
}

/// The `args` of a job's instant events.
#[derive(Serialize)]
struct JobArgs {
    job: u64,
}

impl<W: io::Write> ChromeStream<W> {
    /// Writes one record as a Chrome trace event: execution as a complete
    /// event (category `run`, or `kernel` on the kernel's row, after the
    /// tasks' rows), releases, completions and misses as instants
    /// (category `job`, the job index in `args`).
    fn record(&mut self, tasks: &[String], record: &TraceRecord) {
        let (name, task, job, at) = match *record {
            TraceRecord::Run {
                task,
                job,
                start,
                end,
            } => {
                let name = format!("{}#{job}", tasks[task]);
                return self.write(&Event::complete(&name, task, start, end).in_category("run"));
            }
            TraceRecord::Kernel { start, end } => {
                let overhead = Event::complete("overhead", tasks.len(), start, end);
                return self.write(&overhead.in_category("kernel"));
            }
            TraceRecord::Release { task, job, at } => ("release", task, job, at),
            TraceRecord::Complete { task, job, at } => ("complete", task, job, at),
            TraceRecord::Miss { task, job, at } => ("deadline miss", task, job, at),
        };
        let instant = Event::instant(name, task, at).in_category("job");
        self.write(&instant.with_args(JobArgs { job }));
    }
}

/// A name as SVG text: control and bidi characters escaped as in every
/// human output (XML cannot hold most control characters at all), then
/// XML's special characters.
fn escape(text: &str) -> String {
    rtlab_model::printable(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
