//! What can go wrong with the store; every message is one line and names
//! the database file.

use std::path::PathBuf;

/// A store error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite refused (cannot open, locked past the busy timeout, corrupt...).
    #[error("results store {path}: {source}")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// SQLite's reason.
        source: rusqlite::Error,
    },
    /// The database can be read but not written (a read-only or immutable
    /// file, a read-only mount): found before a run starts.
    #[error("results store {path}: cannot be written (read-only file or file system); the run would be lost, so nothing is measured")]
    ReadOnly {
        /// The database.
        path: PathBuf,
    },
    /// A file beside the database (its directory, the spool) failed.
    #[error("results store {path}: {what}: {source}")]
    Io {
        /// The database.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The reason.
        source: std::io::Error,
    },
    /// Writing an export failed (the output, not the database).
    #[error("results store {path}: cannot write the export: {source}")]
    Export {
        /// The database.
        path: PathBuf,
        /// The reason.
        source: std::io::Error,
    },
    /// The database was written by a newer rtlab.
    #[error("results store {path}: schema version {found} is newer than this rtlab's {supported}; use a newer rtlab or another --store")]
    NewerSchema {
        /// The database.
        path: PathBuf,
        /// `PRAGMA user_version` found.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// A read-only command named a store that is not there: nothing was
    /// saved at that path (a read-only open creates nothing).
    #[error("results store {path}: there is none (nothing was saved there: --save or --store on a command that saves makes it)")]
    Missing {
        /// The database.
        path: PathBuf,
    },
    /// The file is not an rtlab results store: not a regular file, another
    /// program's SQLite database, or one whose tables are not rtlab's.
    #[error("results store {path}: not an rtlab results store ({why}); name another --store")]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        why: String,
    },
    /// No run with this id.
    #[error("results store {path}: no run {id} (`rtlab results list` shows the ids)")]
    NoSuchRun {
        /// The database.
        path: PathBuf,
        /// The id asked for.
        id: i64,
    },
    /// A stored JSON column does not parse (the file was edited by hand).
    #[error("results store {path}: run {id}: {column} is not valid JSON: {source}")]
    BadJson {
        /// The database.
        path: PathBuf,
        /// The run.
        id: i64,
        /// The column.
        column: &'static str,
        /// The parser's reason.
        source: serde_json::Error,
    },
}
