//! Schedule traces: what ran when, for a window of the run, exported as a
//! Chrome trace-event document (`--trace F.json`, opens in Perfetto UI or
//! `chrome://tracing`) or, as the spans of a drawn schedule
//! ([`crate::schedule_spans::gantt_window`]), an SVG Gantt chart
//! (`--gantt F.svg`, drawn by `rtlab-report`).
//!
//! Memory stays bounded whatever the window: the Chrome document is
//! streamed to its writer as the events happen
//! ([`Simulator::stream_chrome_trace`](crate::Simulator::stream_chrome_trace)),
//! and at most [`MAX_KEPT_RECORDS`] records are kept in [`Trace::records`]
//! (for the Gantt chart and library users); the rest are counted in
//! [`Trace::dropped`].

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
