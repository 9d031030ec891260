//! Opening the database and reading or deleting runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rtlab_model::results::{ScheduleSpan, SpanKind, SpanSource};
use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};

use crate::error::StoreError;
use crate::rows::{JobRow, NewRun, RunSummary, SampleRow, StoredRun};
use crate::schema;
use crate::writer::RunWriter;

/// How long a writer waits for another writer's transaction before it
/// gives up (SQLite's busy timeout). Transactions are short: a run's rows
/// are spooled during the run and written at its end.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The job columns that only some runs fill: a multiprocessor run's
/// `start_cpu` and `migrations`, `aborted`, `blocked_ns`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JobColumns {
    pub multiprocessor: bool,
    pub aborted: bool,
    pub blocked: bool,
}

/// An open results database.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    conn: Connection,
    /// Its schema version (`PRAGMA user_version`): [`schema::VERSION`],
    /// or older when opened read-only (never migrated then).
    version: i64,
}

impl Store {
    /// Opens the database at `path`, creating it (and its directory) with
    /// the current schema when it does not exist, and migrating an older
    /// one. For commands that save; the others use
    /// [`Store::open_read_only`].
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        if let Ok(meta) = std::fs::metadata(&path) {
            not_a_file(&path, &meta)?;
        }
        let mut conn = connect(&path)?;
        migrate(&mut conn).map_err(|e| match e {
            Migration::Sqlite(source) => StoreError::Sqlite {
                path: path.clone(),
                source,
            },
            Migration::Newer(found) => StoreError::NewerSchema {
                path: path.clone(),
                found,
                supported: schema::VERSION,
            },
            Migration::Foreign(why) => StoreError::NotAStore {
                path: path.clone(),
                why,
            },
        })?;
        check_tables(&conn, schema::VERSION).map_err(|why| StoreError::NotAStore {
            path: path.clone(),
            why,
        })?;
        Ok(Store {
            path,
            conn,
            version: schema::VERSION,
        })
    }

    /// Opens an existing database to read it, creating nothing: no
    /// directory, no database, no journal, no migration (an older schema
    /// is read as it is). A path with no store is [`StoreError::Missing`];
    /// a file that is not a store (a device, another program's database)
    /// is [`StoreError::NotAStore`]. For `rtlab results list|show|diff|
    /// export`, `rtlab report` and Python's readers.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        match std::fs::metadata(&path) {
            Ok(meta) => not_a_file(&path, &meta)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Missing { path })
            }
            Err(source) => {
                return Err(StoreError::Io {
                    path,
                    what: "cannot read it",
                    source,
                })
            }
        }
        let err = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let (conn, version) = read_connection(&path).map_err(err)?;
        if version > schema::VERSION {
            return Err(StoreError::NewerSchema {
                path,
                found: version,
                supported: schema::VERSION,
            });
        }
        if version == 0 {
            return Err(StoreError::NotAStore {
                path,
                why: "an SQLite file without rtlab's schema version".into(),
            });
        }
        check_tables(&conn, version).map_err(|why| StoreError::NotAStore {
            path: path.clone(),
            why,
        })?;
        Ok(Store {
            path,
            conn,
            version,
        })
    }

    /// The database to use when none is named: `$RTLAB_STORE`, else
    /// `$XDG_DATA_HOME/rtlab/results.sqlite`, else
    /// `$HOME/.local/share/rtlab/results.sqlite`, else
    /// `./rtlab-results.sqlite`.
    pub fn default_path() -> PathBuf {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(p) = var("RTLAB_STORE") {
            return PathBuf::from(p);
        }
        if let Some(d) = var("XDG_DATA_HOME") {
            return Path::new(&d).join("rtlab").join("results.sqlite");
        }
        if let Some(h) = var("HOME") {
            return Path::new(&h).join(".local/share/rtlab/results.sqlite");
        }
        PathBuf::from("rtlab-results.sqlite")
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts saving a run: its rows go to the writer, and the run appears
    /// in the store only when [`RunWriter::finish`] commits it.
    pub fn begin(&self, run: NewRun) -> Result<RunWriter, StoreError> {
        RunWriter::new(self.path.clone(), connect(&self.path)?, run)
    }

    /// Every run, oldest first, with its row counts.
    pub fn list(&self) -> Result<Vec<RunSummary>, StoreError> {
        let sql = "SELECT id, created, kind, status, command,
                (SELECT COUNT(*) FROM jobs WHERE run_id = runs.id),
                (SELECT COUNT(*) FROM samples WHERE run_id = runs.id)
            FROM runs ORDER BY id";
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(RunSummary {
                    id: r.get(0)?,
                    created: r.get(1)?,
                    kind: r.get(2)?,
                    status: r.get(3)?,
                    command: r.get(4)?,
                    jobs: r.get::<_, i64>(5)? as u64,
                    samples: r.get::<_, i64>(6)? as u64,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// One run without its rows.
    pub fn get(&self, id: i64) -> Result<StoredRun, StoreError> {
        let sql = "SELECT id, created, rtlab_version, command, kind, taskset, host_json,
                document_json, status FROM runs WHERE id = ?1";
        let row = self
            .conn
            .query_row(sql, [id], |r| {
                Ok((
                    StoredRun {
                        id: r.get(0)?,
                        created: r.get(1)?,
                        rtlab_version: r.get(2)?,
                        command: r.get(3)?,
                        kind: r.get(4)?,
                        taskset: r.get(5)?,
                        host: serde_json::Value::Null,
                        document: serde_json::Value::Null,
                        status: r.get(8)?,
                    },
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                ))
            })
            .optional()
            .map_err(|e| self.err(e))?;
        let (mut run, host, document) = row.ok_or_else(|| self.no_run(id))?;
        run.host = self.json(id, "host_json", &host)?;
        run.document = self.json(id, "document_json", &document)?;
        Ok(run)
    }

    /// Calls `each` with every job row of run `id`, by task then job,
    /// reading one row at a time (memory does not grow with the run).
    pub fn for_each_job(&self, id: i64, mut each: impl FnMut(JobRow)) -> Result<(), StoreError> {
        self.require(id)?;
        let sql = "SELECT task, job, release_ns, deadline_ns, start_ns, finish_ns, preemptions,
                voluntary_switches, cpu, start_cpu, migrations, aborted, blocked_ns
                FROM jobs WHERE run_id = ?1 ORDER BY task, job";
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let mut rows = stmt.query([id]).map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            each(job_row(r).map_err(|e| self.err(e))?);
        }
        Ok(())
    }

    /// Which of the job columns that only some runs have hold anything in
    /// run `id`'s rows.
    pub(crate) fn job_columns(&self, id: i64) -> Result<JobColumns, StoreError> {
        let sql = "SELECT COUNT(start_cpu) > 0 OR COALESCE(MAX(migrations), 0) > 0,
                COALESCE(MAX(aborted), 0) > 0, COUNT(blocked_ns) > 0
                FROM jobs WHERE run_id = ?1";
        self.conn
            .query_row(sql, [id], |r| {
                Ok(JobColumns {
                    multiprocessor: r.get(0)?,
                    aborted: r.get(1)?,
                    blocked: r.get(2)?,
                })
            })
            .map_err(|e| self.err(e))
    }

    /// Every job row of run `id` (see [`Store::for_each_job`] to stream).
    pub fn jobs(&self, id: i64) -> Result<Vec<JobRow>, StoreError> {
        let mut out = Vec::new();
        self.for_each_job(id, |j| out.push(j))?;
        Ok(out)
    }

    /// Calls `each` with every sample row of run `id`, by thread then
    /// sequence number, one row at a time.
    pub fn for_each_sample(
        &self,
        id: i64,
        mut each: impl FnMut(SampleRow),
    ) -> Result<(), StoreError> {
        self.require(id)?;
        let sql = "SELECT thread, seq, t_ns, latency_ns FROM samples WHERE run_id = ?1
            ORDER BY thread, seq";
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let mut rows = stmt.query([id]).map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            each(SampleRow {
                thread: r.get::<_, i64>(0).map_err(|e| self.err(e))? as u32,
                seq: r.get::<_, i64>(1).map_err(|e| self.err(e))? as u64,
                t_ns: r.get::<_, i64>(2).map_err(|e| self.err(e))? as u64,
                latency_ns: r.get::<_, i64>(3).map_err(|e| self.err(e))? as u64,
            });
        }
        Ok(())
    }

    /// Every sample row of run `id` (see [`Store::for_each_sample`] to stream).
    pub fn samples(&self, id: i64) -> Result<Vec<SampleRow>, StoreError> {
        let mut out = Vec::new();
        self.for_each_sample(id, |s| out.push(s))?;
        Ok(out)
    }

    /// The drawn schedule window of run `id` (real then simulated spans, in
    /// the order saved); empty for a run saved without one.
    pub fn schedule(&self, id: i64) -> Result<Vec<ScheduleSpan>, StoreError> {
        self.require(id)?;
        if self.version < 2 {
            // A version-1 store read as it is: no run of it has spans.
            return Ok(Vec::new());
        }
        let sql = "SELECT source, lane, kind, label, start_ns, end_ns FROM schedule_spans
            WHERE run_id = ?1 ORDER BY rowid";
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([id], |r| {
                let named = |i: usize, text: String, ok: bool| {
                    if ok {
                        Ok(())
                    } else {
                        Err(rusqlite::Error::FromSqlConversionFailure(
                            i,
                            rusqlite::types::Type::Text,
                            format!("unknown schedule span name `{text}`").into(),
                        ))
                    }
                };
                let source: String = r.get(0)?;
                let kind: String = r.get(2)?;
                let (s, k) = (SpanSource::parse(&source), SpanKind::parse(&kind));
                named(0, source, s.is_some())?;
                named(2, kind, k.is_some())?;
                Ok(ScheduleSpan {
                    source: s.unwrap_or(SpanSource::Real),
                    row: r.get(1)?,
                    kind: k.unwrap_or(SpanKind::Job),
                    label: r.get(3)?,
                    start_ns: r.get::<_, i64>(4)? as u64,
                    end_ns: r.get::<_, i64>(5)? as u64,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The ids of the `n` most recent runs, oldest first.
    pub fn last(&self, n: usize) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs ORDER BY id DESC LIMIT ?1")
            .map_err(|e| self.err(e))?;
        let ids = stmt
            .query_map([i64::try_from(n).unwrap_or(i64::MAX)], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(ids.into_iter().rev().collect())
    }

    /// Deletes run `id` and its rows.
    pub fn remove(&self, id: i64) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute("DELETE FROM runs WHERE id = ?1", params![id])
            .map_err(|e| self.err(e))?;
        if n == 0 {
            return Err(self.no_run(id));
        }
        Ok(())
    }

    fn require(&self, id: i64) -> Result<(), StoreError> {
        let found: Option<i64> = self
            .conn
            .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))?;
        found.map(|_| ()).ok_or_else(|| self.no_run(id))
    }

    fn json(
        &self,
        id: i64,
        column: &'static str,
        text: &str,
    ) -> Result<serde_json::Value, StoreError> {
        serde_json::from_str(text).map_err(|source| StoreError::BadJson {
            path: self.path.clone(),
            id,
            column,
            source,
        })
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    pub(crate) fn write_err(&self, source: std::io::Error) -> StoreError {
        StoreError::Export {
            path: self.path.clone(),
            source,
        }
    }

    fn no_run(&self, id: i64) -> StoreError {
        StoreError::NoSuchRun {
            path: self.path.clone(),
            id,
        }
    }
}

/// A connection that reads the existing database at `path` and changes
/// nothing, and its schema version.
///
/// Not `SQLITE_OPEN_READ_ONLY` first: reading a WAL database makes its
/// `-wal` and `-shm` files, and a read-only connection cannot remove them
/// when it closes, so they would stay beside the store. A read-write
/// connection without CREATE (the file is there) under `query_only` changes
/// nothing and, the last to close, removes them as a writer does. Where
/// those files cannot be made (a folder or medium the user cannot write,
/// where no rtlab can be writing either), the database is read as
/// immutable: from its file alone, no lock, nothing made.
fn read_connection(path: &Path) -> rusqlite::Result<(Connection, i64)> {
    use rusqlite::OpenFlags;
    let version = |conn: &Connection| conn.query_row("PRAGMA user_version", [], |r| r.get(0));
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let shared = Connection::open_with_flags(path, flags).and_then(|conn| {
        conn.pragma_update(None, "query_only", true)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let v = version(&conn)?;
        Ok((conn, v))
    });
    match shared {
        Err(rusqlite::Error::SqliteFailure(f, _))
            if matches!(
                f.code,
                rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen
            ) =>
        {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let conn = Connection::open_with_flags(immutable_uri(path), flags)?;
            let v = version(&conn)?;
            Ok((conn, v))
        }
        other => other,
    }
}

/// `file:PATH?immutable=1`, the path percent-encoded (RFC 3986 unreserved
/// bytes and `/` kept), as SQLite's URI filenames want.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in absolute.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Refuses a path that is not a regular file (a device such as
/// `/dev/null`, where SQLite would leave `/dev/null-journal`, a folder, a
/// pipe).
fn not_a_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), StoreError> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_fifo() {
        "a pipe"
    } else {
        "not a regular file"
    };
    Err(StoreError::NotAStore {
        path: path.to_path_buf(),
        why: what.into(),
    })
}

/// The tables of schema `version` ([`schema`]'s list), each checked to be
/// there: a database with other tables is not a store, said in one line
/// (SQLite's own error quoted the whole CREATE statement).
fn check_tables(conn: &Connection, version: i64) -> Result<(), String> {
    let mut tables = vec!["runs", "jobs", "samples"];
    if version >= 2 {
        tables.push("schedule_spans");
    }
    for table in tables {
        let found: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
                [table],
                |r| r.get(0),
            )
            .map_err(|e| e.to_string())?;
        if !found {
            return Err(format!(
                "schema version {version} without its table `{table}`"
            ));
        }
    }
    Ok(())
}

/// A connection in WAL mode with foreign keys on and the busy timeout set;
/// creates the database's directory.
pub(crate) fn connect(path: &Path) -> Result<Connection, StoreError> {
    let err = |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            what: "cannot create its directory",
            source,
        })?;
    }
    let conn = Connection::open(path).map_err(err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(err)?;
    switch_to_wal(&conn).map_err(err)?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(err)?;
    Ok(conn)
}

/// Puts the database in WAL mode (a persistent setting: a no-op once any
/// connection has done it).
///
/// The switch upgrades a read transaction to a write one, and SQLite does
/// not call the busy handler for such an upgrade (waiting there could
/// deadlock two upgraders), so on a new database several processes
/// switching at once got `SQLITE_BUSY` at once whatever the busy timeout.
/// The switch is retried here until [`BUSY_TIMEOUT`], as the busy handler
/// would.
fn switch_to_wal(conn: &Connection) -> rusqlite::Result<()> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let mode = conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0));
        let result = match mode {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(_) => conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
                .map(drop),
            Err(e) => Err(e),
        };
        match result {
            Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn job_row(r: &Row<'_>) -> rusqlite::Result<JobRow> {
    let opt = |i| r.get::<_, Option<i64>>(i).map(|v| v.map(|x| x as u64));
    Ok(JobRow {
        task: r.get(0)?,
        job: r.get::<_, i64>(1)? as u64,
        release_ns: r.get::<_, i64>(2)? as u64,
        deadline_ns: r.get::<_, i64>(3)? as u64,
        start_ns: opt(4)?,
        finish_ns: opt(5)?,
        preemptions: r.get::<_, i64>(6)? as u64,
        voluntary_switches: r.get::<_, i64>(7)? as u64,
        cpu: r.get::<_, Option<i64>>(8)?.map(|c| c as u32),
        start_cpu: r.get::<_, Option<i64>>(9)?.map(|c| c as u32),
        migrations: r.get::<_, i64>(10)? as u64,
        aborted: r.get::<_, bool>(11)?,
        blocked_ns: opt(12)?,
    })
}

enum Migration {
    Sqlite(rusqlite::Error),
    Newer(i64),
    /// Tables without rtlab's schema version: another program's database.
    Foreign(String),
}

impl From<rusqlite::Error> for Migration {
    fn from(e: rusqlite::Error) -> Migration {
        Migration::Sqlite(e)
    }
}

/// Creates the schema in a new database; refuses a newer one. Done under
/// a write lock so two processes creating the file at once do not both
/// create the tables.
fn migrate(conn: &mut Connection) -> Result<(), Migration> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > schema::VERSION {
        return Err(Migration::Newer(version));
    }
    if version == 0 {
        let tables: i64 = tx.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        if tables > 0 {
            return Err(Migration::Foreign(format!(
                "an SQLite database with {tables} tables and no rtlab schema version"
            )));
        }
        tx.execute_batch(schema::CREATE_V1)?;
    }
    if version > 0 {
        // A store of an older version is migrated from its tables: without
        // them it is not a store (said in one line, not SQLite's error).
        check_tables(&tx, version).map_err(Migration::Foreign)?;
    }
    if version < 2 {
        tx.execute_batch(schema::CREATE_V2)?;
    }
    if version < 3 {
        tx.execute_batch(schema::CREATE_V3)?;
    }
    if version < schema::VERSION {
        tx.pragma_update(None, "user_version", schema::VERSION)?;
    }
    tx.commit()?;
    Ok(())
}
