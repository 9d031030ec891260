//! The rtlab results store: every saved run of `rtlab sim`, `run`,
//! `compare`, `latency`, `lag-study`, `sweep`, `analyze` and `hartstone` in one SQLite
//! database, with its host metadata, its JSON document and, where the
//! command has them, its per-job and per-sample rows.
//!
//! - [`Store::open`] opens (and creates or migrates) a database; the
//!   schema is in [`schema`], versioned with `PRAGMA user_version`, in WAL
//!   mode with a busy timeout so concurrent writers wait for each other
//!   instead of failing.
//! - [`Store::begin`] starts a [`RunWriter`]: rows stream into a spool file
//!   beside the database (memory stays bounded however long the run), and
//!   [`RunWriter::finish`] writes the run and all its rows in one
//!   transaction, so nothing of a run is visible before it is complete.
//! - [`Store::list`], [`Store::get`], [`Store::jobs`], [`Store::samples`],
//!   [`Store::last`], [`Store::remove`] read and delete runs;
//!   [`Store::export_json`] and [`Store::export_csv`] write one out;
//!   [`diff`] compares two runs' documents field by field.

#![forbid(unsafe_code)]

mod diff;
mod error;
mod export;
mod rows;
pub mod schema;
mod store;
mod writer;

pub use diff::{diff, leaves, DiffLine};
pub use error::StoreError;
pub use export::{JOBS_CSV_HEADER, JOBS_CSV_MULTIPROCESSOR_COLUMNS, SAMPLES_CSV_HEADER};
pub use rows::{run_end_ns, JobRow, NewRun, RunKind, RunStatus, RunSummary, SampleRow, StoredRun};
pub use store::Store;
pub use writer::RunWriter;
