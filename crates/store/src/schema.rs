//! The database schema, version [`VERSION`] (`PRAGMA user_version`).
//!
//! ```sql
//! runs(id INTEGER PRIMARY KEY, created TEXT, rtlab_version TEXT, command TEXT,
//!      kind TEXT, taskset TEXT NULL, host_json TEXT, document_json TEXT, status TEXT)
//! jobs(run_id -> runs ON DELETE CASCADE, task TEXT, job INTEGER, release_ns INTEGER,
//!      deadline_ns INTEGER, start_ns INTEGER NULL, finish_ns INTEGER NULL,
//!      preemptions INTEGER, voluntary_switches INTEGER, cpu INTEGER NULL)
//! samples(run_id -> runs ON DELETE CASCADE, thread INTEGER, seq INTEGER,
//!         t_ns INTEGER, latency_ns INTEGER)
//! schedule_spans(run_id -> runs ON DELETE CASCADE, source TEXT, lane TEXT,
//!         kind TEXT, label TEXT, start_ns INTEGER, end_ns INTEGER)      -- version 2
//! jobs(... start_cpu INTEGER NULL, migrations INTEGER DEFAULT 0,
//!      aborted INTEGER DEFAULT 0, blocked_ns INTEGER NULL)               -- version 3
//! ```
//!
//! `schedule_spans` holds a drawn window of a run's schedule
//! ([`rtlab_model::results::ScheduleSpan`]): the kernel's (`source` `real`,
//! from `run --kernel-trace`) and the simulator's (`sim`), at most
//! [`rtlab_model::results::schedule::MAX_SCHEDULE_SPANS`] of each.
//!
//! Times are nanoseconds from the start of the run, stored as SQLite's
//! 64-bit signed integers (enough for 292 years). `created` is RFC 3339
//! UTC. A database with no `user_version` is created at [`VERSION`]; one
//! at an older version is migrated in place (version 1 gains
//! `schedule_spans`; version 2's `jobs` gains the columns of the
//! multiprocessor simulator, `--on-miss abort` and lock waits, with their
//! defaults in the rows it had); one from a newer rtlab is refused.

/// The schema version this build writes.
pub const VERSION: i64 = 3;

/// Creates every table and index of version 1.
pub const CREATE_V1: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    created TEXT NOT NULL,
    rtlab_version TEXT NOT NULL,
    command TEXT NOT NULL,
    kind TEXT NOT NULL,
    taskset TEXT,
    host_json TEXT NOT NULL,
    document_json TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('complete', 'interrupted'))
);
CREATE TABLE jobs (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task TEXT NOT NULL,
    job INTEGER NOT NULL,
    release_ns INTEGER NOT NULL,
    deadline_ns INTEGER NOT NULL,
    start_ns INTEGER,
    finish_ns INTEGER,
    preemptions INTEGER NOT NULL,
    voluntary_switches INTEGER NOT NULL,
    cpu INTEGER
);
CREATE INDEX jobs_by_run ON jobs(run_id, task, job);
CREATE TABLE samples (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    thread INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    t_ns INTEGER NOT NULL,
    latency_ns INTEGER NOT NULL
);
CREATE INDEX samples_by_run ON samples(run_id, thread, seq);
";

/// What version 2 adds to version 1.
pub const CREATE_V2: &str = "
CREATE TABLE schedule_spans (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    lane TEXT NOT NULL,
    kind TEXT NOT NULL,
    label TEXT NOT NULL,
    start_ns INTEGER NOT NULL,
    end_ns INTEGER NOT NULL
);
CREATE INDEX schedule_spans_by_run ON schedule_spans(run_id);
";

/// What version 3 adds to version 2: every field of a job record
/// (`rtlab_model::results::JobRecord`) the jobs table did not keep.
pub const CREATE_V3: &str = "
ALTER TABLE jobs ADD COLUMN start_cpu INTEGER;
ALTER TABLE jobs ADD COLUMN migrations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN aborted INTEGER NOT NULL DEFAULT 0 CHECK (aborted IN (0, 1));
ALTER TABLE jobs ADD COLUMN blocked_ns INTEGER;
";
