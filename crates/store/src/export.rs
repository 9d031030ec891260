//! A stored run written out whole, its rows streamed one at a time (memory
//! does not grow with the run): JSON with everything, or CSV of its rows.

use std::io::Write;

use serde::Serialize;

use crate::error::StoreError;
use crate::store::Store;

/// The CSV header of job rows: the columns every run has. After them come
/// those of [`JOBS_CSV_MULTIPROCESSOR_COLUMNS`], `aborted` and `blocked_ns`,
/// each only when the run has them (see [`Store::export_csv`]).
pub const JOBS_CSV_HEADER: &str =
    "task,job,release_ns,deadline_ns,start_ns,finish_ns,preemptions,voluntary_switches,cpu";
/// The job columns of a multiprocessor run (one whose rows say on which
/// CPU a job started or that it migrated).
pub const JOBS_CSV_MULTIPROCESSOR_COLUMNS: &str = "start_cpu,migrations";
/// The CSV header of sample rows.
pub const SAMPLES_CSV_HEADER: &str = "thread,seq,t_ns,latency_ns";

impl Store {
    /// Writes `{"run": <StoredRun>, "jobs": [<JobRow>...], "samples":
    /// [<SampleRow>...], "schedule": [<ScheduleSpan>...]}` and a newline:
    /// what `rtlab report --from-json` reads back.
    pub fn export_json(&self, id: i64, out: &mut impl Write) -> Result<(), StoreError> {
        let run = self.get(id)?;
        let schedule = self.schedule(id)?;
        let mut rows = Rows::new(out);
        rows.raw(&format!("{{\"run\":{},\"jobs\":[", json(&run)));
        self.for_each_job(id, |j| rows.element(&json(&j)))?;
        rows.raw("],\"samples\":[");
        rows.count = 0;
        self.for_each_sample(id, |s| rows.element(&json(&s)))?;
        rows.raw(&format!("],\"schedule\":{}}}\n", json(&schedule)));
        rows.done().map_err(|e| self.write_err(e))
    }

    /// Writes the run's job rows as CSV ([`JOBS_CSV_HEADER`], then
    /// `start_cpu,migrations` for a multiprocessor run, `aborted` when a
    /// job was aborted, `blocked_ns` when a job waited on locks; empty
    /// cells for `None`), or its sample rows ([`SAMPLES_CSV_HEADER`]) when
    /// it has no job rows. A task name a spreadsheet would run as a
    /// formula gets a leading `'` ([`rtlab_model::csv_cell`]). Returns how
    /// many rows were written.
    pub fn export_csv(&self, id: i64, out: &mut impl Write) -> Result<u64, StoreError> {
        let has_jobs = self.list()?.iter().any(|r| r.id == id && r.jobs > 0);
        if !has_jobs {
            let mut w = csv::Writer::from_writer(out);
            let mut written: csv::Result<u64> = Ok(0);
            self.for_each_sample(id, |s| put(&mut w, &mut written, &s))?;
            let n = written.map_err(|e| self.write_err(std::io::Error::other(e)))?;
            w.flush().map_err(|e| self.write_err(e))?;
            return Ok(n);
        }
        let columns = self.job_columns(id)?;
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        let mut header: Vec<&str> = JOBS_CSV_HEADER.split(',').collect();
        if columns.multiprocessor {
            header.extend(JOBS_CSV_MULTIPROCESSOR_COLUMNS.split(','));
        }
        header.extend(columns.aborted.then_some("aborted"));
        header.extend(columns.blocked.then_some("blocked_ns"));
        let mut rows = 0u64;
        let mut failed = w.write_record(&header).err();
        self.for_each_job(id, |j| {
            let cell = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
            let mut record = vec![
                rtlab_model::csv_cell(&j.task).into_owned(),
                j.job.to_string(),
                j.release_ns.to_string(),
                j.deadline_ns.to_string(),
                cell(j.start_ns),
                cell(j.finish_ns),
                j.preemptions.to_string(),
                j.voluntary_switches.to_string(),
                cell(j.cpu.map(u64::from)),
            ];
            if columns.multiprocessor {
                record.push(cell(j.start_cpu.map(u64::from)));
                record.push(j.migrations.to_string());
            }
            if columns.aborted {
                record.push(j.aborted.to_string());
            }
            if columns.blocked {
                record.push(cell(j.blocked_ns));
            }
            if failed.is_none() {
                match w.write_record(&record) {
                    Ok(()) => rows += 1,
                    Err(e) => failed = Some(e),
                }
            }
        })?;
        if let Some(e) = failed {
            return Err(self.write_err(std::io::Error::other(e)));
        }
        w.flush().map_err(|e| self.write_err(e))?;
        Ok(rows)
    }
}

/// Writes one CSV row unless an earlier one failed; counts it.
fn put<W: Write, T: Serialize>(w: &mut csv::Writer<W>, written: &mut csv::Result<u64>, row: &T) {
    if let Ok(n) = written {
        match w.serialize(row) {
            Ok(()) => *n += 1,
            Err(e) => *written = Err(e),
        }
    }
}

fn json(v: &impl Serialize) -> String {
    // The row types serialize infallibly (no maps with non-string keys).
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_string())
}

/// Comma-separated JSON elements; the first write error stops the writing
/// and is kept.
struct Rows<'a, W: Write> {
    out: &'a mut W,
    count: u64,
    result: std::io::Result<()>,
}

impl<'a, W: Write> Rows<'a, W> {
    fn new(out: &'a mut W) -> Self {
        Rows {
            out,
            count: 0,
            result: Ok(()),
        }
    }

    fn raw(&mut self, text: &str) {
        if self.result.is_ok() {
            self.result = self.out.write_all(text.as_bytes());
        }
    }

    fn element(&mut self, text: &str) {
        if self.count > 0 {
            self.raw(",");
        }
        self.count += 1;
        self.raw(text);
    }

    fn done(self) -> std::io::Result<()> {
        self.result?;
        self.out.flush()
    }
}
