//! Saving one run: rows are spooled to an unnamed temporary file beside
//! the database while the command runs (memory stays bounded however many
//! rows there are, and no lock is held during the run), then
//! [`RunWriter::finish`] writes the run and every row in one transaction.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::SystemTime;

use rtlab_model::results::schedule::MAX_SCHEDULE_SPANS;
use rtlab_model::results::ScheduleSpan;
use rusqlite::{params, Connection, TransactionBehavior};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::rows::{JobRow, NewRun, RunStatus, SampleRow};

/// One spooled row, one JSON line each.
#[derive(Serialize, Deserialize)]
enum Spooled {
    J(JobRow),
    S(SampleRow),
}

/// A run being saved. Dropping it without [`RunWriter::finish`] saves
/// nothing.
#[derive(Debug)]
pub struct RunWriter {
    path: PathBuf,
    conn: Connection,
    run: NewRun,
    created: String,
    spool: BufWriter<File>,
    jobs: u64,
    samples: u64,
    schedule: Vec<ScheduleSpan>,
}

impl RunWriter {
    pub(crate) fn new(path: PathBuf, conn: Connection, run: NewRun) -> Result<Self, StoreError> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), PathBuf::from);
        // The run is written at the end; a database that cannot take it is
        // refused now, before the command measures anything. SQLite opens
        // a file it may not write (read-only, immutable) read-only instead
        // of failing, so ask it.
        let read_only = conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false);
        if read_only {
            return Err(StoreError::ReadOnly { path });
        }
        let spool = tempfile::tempfile_in(&dir).map_err(|source| StoreError::Io {
            path: path.clone(),
            what: "cannot create a spool file beside it",
            source,
        })?;
        Ok(RunWriter {
            path,
            conn,
            run,
            created: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            spool: BufWriter::new(spool),
            jobs: 0,
            samples: 0,
            schedule: Vec::new(),
        })
    }

    /// Adds a job row.
    pub fn job(&mut self, row: &JobRow) -> Result<(), StoreError> {
        self.jobs += 1;
        self.spool_row(&Spooled::J(row.clone()))
    }

    /// Adds a sample row.
    pub fn sample(&mut self, row: &SampleRow) -> Result<(), StoreError> {
        self.samples += 1;
        self.spool_row(&Spooled::S(*row))
    }

    /// Sets the run's drawn schedule window (real and simulated spans; at
    /// most [`MAX_SCHEDULE_SPANS`] of each source are kept, in memory until
    /// [`RunWriter::finish`]).
    pub fn schedule(&mut self, spans: Vec<ScheduleSpan>) {
        let mut kept = [0usize; 2];
        self.schedule = spans
            .into_iter()
            .filter(|s| {
                let n = &mut kept[s.source as usize];
                *n += 1;
                *n <= MAX_SCHEDULE_SPANS
            })
            .collect();
    }

    /// Replaces the run's host metadata (taken again when the measurement
    /// starts).
    pub fn set_host(&mut self, host: serde_json::Value) {
        self.run.host = host;
    }

    /// Job rows added so far.
    pub fn job_count(&self) -> u64 {
        self.jobs
    }

    /// Sample rows added so far.
    pub fn sample_count(&self) -> u64 {
        self.samples
    }

    /// Writes the run with `document` and `status` and every row added, in
    /// one transaction; returns the run's id.
    pub fn finish(
        mut self,
        document: &serde_json::Value,
        status: RunStatus,
    ) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let sql_err = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let io_err = |source| StoreError::Io {
            path: path.clone(),
            what: "cannot read back its spool file",
            source,
        };
        let mut spool = self
            .spool
            .into_inner()
            .map_err(|e| io_err(e.into_error()))?;
        spool.seek(SeekFrom::Start(0)).map_err(io_err)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err)?;
        tx.execute(
            "INSERT INTO runs (created, rtlab_version, command, kind, taskset, host_json,
                document_json, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                self.created,
                self.run.rtlab_version,
                self.run.command,
                self.run.kind.as_str(),
                self.run.taskset,
                self.run.host.to_string(),
                document.to_string(),
                status.as_str(),
            ],
        )
        .map_err(sql_err)?;
        let id = tx.last_insert_rowid();
        {
            let mut job = tx
                .prepare(
                    "INSERT INTO jobs (run_id, task, job, release_ns, deadline_ns, start_ns,
                        finish_ns, preemptions, voluntary_switches, cpu, start_cpu, migrations,
                        aborted, blocked_ns)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                )
                .map_err(sql_err)?;
            let mut sample = tx
                .prepare(
                    "INSERT INTO samples (run_id, thread, seq, t_ns, latency_ns)
                        VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(sql_err)?;
            let mut line = String::new();
            let mut reader = BufReader::new(spool);
            loop {
                line.clear();
                if reader.read_line(&mut line).map_err(io_err)? == 0 {
                    break;
                }
                let row: Spooled =
                    serde_json::from_str(&line).map_err(|e| io_err(std::io::Error::other(e)))?;
                match row {
                    Spooled::J(j) => job.execute(params![
                        id,
                        j.task,
                        sql_int(j.job),
                        sql_int(j.release_ns),
                        sql_int(j.deadline_ns),
                        j.start_ns.map(sql_int),
                        j.finish_ns.map(sql_int),
                        sql_int(j.preemptions),
                        sql_int(j.voluntary_switches),
                        j.cpu,
                        j.start_cpu,
                        sql_int(j.migrations),
                        j.aborted,
                        j.blocked_ns.map(sql_int),
                    ]),
                    Spooled::S(s) => sample.execute(params![
                        id,
                        s.thread,
                        sql_int(s.seq),
                        sql_int(s.t_ns),
                        sql_int(s.latency_ns),
                    ]),
                }
                .map_err(sql_err)?;
            }
        }
        {
            let mut span = tx
                .prepare(
                    "INSERT INTO schedule_spans (run_id, source, lane, kind, label, start_ns,
                        end_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(sql_err)?;
            for s in &self.schedule {
                span.execute(params![
                    id,
                    s.source.as_str(),
                    s.row,
                    s.kind.as_str(),
                    s.label,
                    sql_int(s.start_ns),
                    sql_int(s.end_ns),
                ])
                .map_err(sql_err)?;
            }
        }
        tx.commit().map_err(sql_err)?;
        Ok(id)
    }

    fn spool_row(&mut self, row: &Spooled) -> Result<(), StoreError> {
        serde_json::to_writer(&mut self.spool, row)
            .map_err(std::io::Error::other)
            .and_then(|()| self.spool.write_all(b"\n"))
            .map_err(|source| StoreError::Io {
                path: self.path.clone(),
                what: "cannot write its spool file",
                source,
            })
    }
}

/// SQLite integers are signed 64-bit: values above `i64::MAX` (292 years
/// in ns) are stored as `i64::MAX`.
fn sql_int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
