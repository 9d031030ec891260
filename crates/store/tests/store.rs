//! The store against a real SQLite file in a temporary directory.

use rtlab_model::results::schedule::MAX_SCHEDULE_SPANS;
use rtlab_model::results::{ScheduleSpan, SpanKind, SpanSource};
use rtlab_store::{JobRow, NewRun, RunKind, RunStatus, SampleRow, Store, StoreError};
use serde_json::json;

fn new_run(kind: RunKind) -> NewRun {
    NewRun {
        rtlab_version: "0.1.0".into(),
        command: "rtlab sim builtin:x --save".into(),
        kind,
        taskset: Some("[[task]]\nname = \"a\"\n".into()),
        host: json!({"kernel_release": "6.18.0", "cpus": 2}),
    }
}

fn job(task: &str, n: u64) -> JobRow {
    JobRow {
        task: task.into(),
        job: n,
        release_ns: n * 10_000_000,
        deadline_ns: n * 10_000_000 + 5_000_000,
        start_ns: Some(n * 10_000_000 + 7),
        finish_ns: n.is_multiple_of(2).then_some(n * 10_000_000 + 1_000_000),
        preemptions: n % 3,
        voluntary_switches: 1,
        cpu: (!n.is_multiple_of(2)).then_some(1),
        start_cpu: None,
        migrations: 0,
        aborted: false,
        blocked_ns: None,
    }
}

#[test]
fn a_run_round_trips_with_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/results.sqlite");
    let store = Store::open(&path).unwrap();
    let mut w = store.begin(new_run(RunKind::Run)).unwrap();
    let jobs: Vec<JobRow> = (0..5).map(|n| job("a", n)).chain([job("b", 0)]).collect();
    for j in &jobs {
        w.job(j).unwrap();
    }
    let samples: Vec<SampleRow> = (0..3)
        .map(|i| SampleRow {
            thread: 1,
            seq: i,
            t_ns: i * 1000,
            latency_ns: u64::MAX - i, // clamped to i64::MAX
        })
        .collect();
    for s in &samples {
        w.sample(s).unwrap();
    }
    let doc = json!({"policy": "rm", "tasks": [{"name": "a", "misses": 1}]});
    let id = w.finish(&doc, RunStatus::Interrupted).unwrap();

    let run = store.get(id).unwrap();
    assert_eq!(run.id, id);
    assert_eq!(run.kind, "run");
    assert_eq!(run.status, "interrupted");
    assert_eq!(run.command, "rtlab sim builtin:x --save");
    assert_eq!(run.rtlab_version, "0.1.0");
    assert_eq!(run.taskset.as_deref(), Some("[[task]]\nname = \"a\"\n"));
    assert_eq!(run.host["kernel_release"], "6.18.0");
    assert_eq!(run.document, doc);
    assert!(
        run.created.ends_with('Z') && run.created.len() == 20,
        "{}",
        run.created
    );
    assert_eq!(store.jobs(id).unwrap(), jobs);
    let back = store.samples(id).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(back[0].latency_ns, i64::MAX as u64);
    assert_eq!(back[2].seq, 2);
    let list = store.list().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].jobs, list[0].samples), (6, 3));
}

#[test]
fn nothing_is_visible_before_finish_and_a_dropped_writer_saves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    let store = Store::open(&path).unwrap();
    let other = Store::open(&path).unwrap();
    let mut w = store.begin(new_run(RunKind::Sim)).unwrap();
    for n in 0..1000 {
        w.job(&job("a", n)).unwrap();
    }
    assert!(other.list().unwrap().is_empty());
    drop(w);
    assert!(other.list().unwrap().is_empty());
    let w = store.begin(new_run(RunKind::Sim)).unwrap();
    let id = w.finish(&json!({}), RunStatus::Complete).unwrap();
    assert_eq!(other.last(5).unwrap(), vec![id]);
    // Only the database and its WAL files are left: spools are gone.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.starts_with("r.sqlite")), "{names:?}");
}

#[test]
fn two_writers_on_two_threads_both_land_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    let writers: Vec<_> = (0..2)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let store = Store::open(&path).unwrap();
                (0..20)
                    .map(|i| {
                        let mut w = store.begin(new_run(RunKind::Latency)).unwrap();
                        for n in 0..50 {
                            w.job(&job(&format!("t{t}"), n)).unwrap();
                        }
                        w.finish(&json!({"thread": t, "i": i}), RunStatus::Complete)
                            .unwrap()
                    })
                    .collect::<Vec<i64>>()
            })
        })
        .collect();
    let mut ids: Vec<i64> = writers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 40);
    let store = Store::open(&path).unwrap();
    let list = store.list().unwrap();
    assert_eq!(list.len(), 40);
    assert!(list.iter().all(|r| r.jobs == 50));
    let conn = rusqlite_journal_mode(&path);
    assert_eq!(conn, "wal");
}

/// Eight threads opening one new database at once, 40 times over: every
/// open succeeds. Before the WAL switch was retried, a few rounds in a
/// hundred failed with `database is locked` (the switch upgrades a read
/// transaction, and SQLite calls no busy handler for that).
#[test]
fn eight_first_opens_of_a_new_database_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..40 {
        let path = dir.path().join(format!("new{round}.sqlite"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let openers: Vec<_> = (0..8)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(drop)
                })
            })
            .collect();
        for opener in openers {
            if let Err(e) = opener.join().unwrap() {
                panic!("round {round}: {e}");
            }
        }
        assert_eq!(rusqlite_journal_mode(&path), "wal");
    }
}

fn rusqlite_journal_mode(path: &std::path::Path) -> String {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn remove_cascades_to_rows_and_unknown_ids_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    let store = Store::open(&path).unwrap();
    let mut w = store.begin(new_run(RunKind::Run)).unwrap();
    w.job(&job("a", 0)).unwrap();
    w.sample(&SampleRow {
        thread: 0,
        seq: 0,
        t_ns: 0,
        latency_ns: 5,
    })
    .unwrap();
    let a = w.finish(&json!({}), RunStatus::Complete).unwrap();
    let mut w = store.begin(new_run(RunKind::Run)).unwrap();
    w.job(&job("b", 0)).unwrap();
    let b = w.finish(&json!({}), RunStatus::Complete).unwrap();
    store.remove(a).unwrap();
    assert_eq!(store.last(10).unwrap(), vec![b]);
    assert_eq!(store.jobs(b).unwrap().len(), 1);
    // The cascade deleted a's job and sample rows.
    assert_eq!(count_rows(&path), 1);
    for e in [
        store.remove(a).unwrap_err(),
        store.get(a).unwrap_err(),
        store.jobs(a).unwrap_err(),
    ] {
        assert!(
            matches!(e, StoreError::NoSuchRun { id, .. } if id == a),
            "{e}"
        );
        assert!(e.to_string().contains(&path.display().to_string()));
    }
}

/// Job plus sample rows in the whole database, whatever their run.
fn count_rows(path: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(
        "SELECT (SELECT COUNT(*) FROM jobs) + (SELECT COUNT(*) FROM samples)",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn a_path_that_cannot_be_a_database_is_a_one_line_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, "not a directory").unwrap();
    let bad = file.join("results.sqlite");
    let e = Store::open(&bad).unwrap_err().to_string();
    assert!(e.contains(&bad.display().to_string()), "{e}");
    assert!(!e.contains('\n'), "{e}");

    let garbage = dir.path().join("garbage.sqlite");
    std::fs::write(&garbage, vec![b'x'; 4096]).unwrap();
    let e = Store::open(&garbage).unwrap_err().to_string();
    assert!(e.contains("garbage.sqlite") && !e.contains('\n'), "{e}");
}

#[test]
fn last_gives_the_most_recent_ids_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.sqlite")).unwrap();
    let ids: Vec<i64> = (0..5)
        .map(|_| {
            store
                .begin(new_run(RunKind::Sweep))
                .unwrap()
                .finish(&json!({}), RunStatus::Complete)
                .unwrap()
        })
        .collect();
    assert_eq!(store.last(2).unwrap(), ids[3..].to_vec());
    assert_eq!(store.last(99).unwrap(), ids);
}

#[test]
fn exports_hold_the_run_and_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.sqlite")).unwrap();
    let mut w = store.begin(new_run(RunKind::Run)).unwrap();
    for n in 0..3 {
        w.job(&job("a,b", n)).unwrap();
    }
    let id = w.finish(&json!({"x": 1}), RunStatus::Complete).unwrap();
    let mut out = Vec::new();
    store.export_json(id, &mut out).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        doc["run"],
        serde_json::to_value(store.get(id).unwrap()).unwrap()
    );
    let jobs: Vec<JobRow> = serde_json::from_value(doc["jobs"].clone()).unwrap();
    assert_eq!(jobs, store.jobs(id).unwrap());
    assert_eq!(doc["samples"], json!([]));

    let mut csv = Vec::new();
    assert_eq!(store.export_csv(id, &mut csv).unwrap(), 3);
    let text = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], rtlab_store::JOBS_CSV_HEADER);
    // A name with a comma is quoted; None is an empty cell.
    assert_eq!(lines[1], "\"a,b\",0,0,5000000,7,1000000,0,1,");
    assert_eq!(lines.len(), 4);

    let mut w = store.begin(new_run(RunKind::Latency)).unwrap();
    w.sample(&SampleRow {
        thread: 0,
        seq: 0,
        t_ns: 1000,
        latency_ns: 42,
    })
    .unwrap();
    let id = w.finish(&json!({}), RunStatus::Complete).unwrap();
    let mut csv = Vec::new();
    store.export_csv(id, &mut csv).unwrap();
    assert_eq!(
        String::from_utf8(csv).unwrap(),
        format!("{}\n0,0,1000,42\n", rtlab_store::SAMPLES_CSV_HEADER)
    );
}

fn span(source: SpanSource, row: &str, kind: SpanKind, label: &str, start: u64) -> ScheduleSpan {
    ScheduleSpan {
        source,
        row: row.into(),
        kind,
        label: label.into(),
        start_ns: start,
        end_ns: start + 1000,
    }
}

#[test]
fn a_schedule_window_round_trips_and_each_source_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.sqlite")).unwrap();
    let spans = vec![
        span(SpanSource::Real, "CPU 1", SpanKind::Job, "t1", 0),
        span(
            SpanSource::Real,
            "CPU 1 interrupts",
            SpanKind::Irq,
            "irq 19 virtio0",
            500,
        ),
        span(
            SpanSource::Real,
            "t1 throttled",
            SpanKind::Throttled,
            "t1",
            2000,
        ),
        span(
            SpanSource::Real,
            "CPU 1",
            SpanKind::Miss,
            "t1 missed: throttled",
            5000,
        ),
        span(SpanSource::Sim, "CPU 1", SpanKind::Job, "t1", 0),
        span(SpanSource::Sim, "CPU 1", SpanKind::Overhead, "kernel", 1000),
    ];
    let mut w = store.begin(new_run(RunKind::Run)).unwrap();
    w.schedule(spans.clone());
    let id = w.finish(&json!({}), RunStatus::Complete).unwrap();
    assert_eq!(store.schedule(id).unwrap(), spans);

    // At most MAX_SCHEDULE_SPANS of each source, the first ones.
    let many: Vec<ScheduleSpan> = (0..MAX_SCHEDULE_SPANS as u64 + 5)
        .map(|i| span(SpanSource::Sim, "CPU 0", SpanKind::Job, "a", i))
        .chain([span(SpanSource::Real, "CPU 0", SpanKind::Job, "a", 0)])
        .collect();
    let mut w = store.begin(new_run(RunKind::Run)).unwrap();
    w.schedule(many);
    let id = w.finish(&json!({}), RunStatus::Complete).unwrap();
    let back = store.schedule(id).unwrap();
    assert_eq!(back.len(), MAX_SCHEDULE_SPANS + 1);
    assert_eq!(
        back[MAX_SCHEDULE_SPANS - 1].start_ns,
        MAX_SCHEDULE_SPANS as u64 - 1
    );
    assert_eq!(back[MAX_SCHEDULE_SPANS].source, SpanSource::Real);
    // Removing the run removes its spans.
    store.remove(id).unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("r.sqlite")).unwrap();
    let left: i64 = conn
        .query_row("SELECT COUNT(*) FROM schedule_spans", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, spans.len() as i64);
}

/// A database as an older rtlab made it: the schema of `versions` (1, or
/// 1 and 2), one run with one job row as it stored them, at that
/// `user_version`; returns the run's id.
fn old_store(path: &std::path::Path, versions: &[&str]) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    for sql in versions {
        conn.execute_batch(sql).unwrap();
    }
    conn.execute_batch(&format!(
        "INSERT INTO runs (created, rtlab_version, command, kind, taskset, host_json,
            document_json, status) VALUES ('2026-01-01T00:00:00Z', '0.1.0', 'rtlab run x',
            'run', NULL, '{{}}', '{{\"policy\":\"rm\"}}', 'complete');
         INSERT INTO jobs (run_id, task, job, release_ns, deadline_ns, start_ns, finish_ns,
            preemptions, voluntary_switches, cpu) VALUES (1, 'a', 0, 0, 5000000, 7, 1000000,
            0, 1, NULL);
         PRAGMA user_version = {};",
        versions.len()
    ))
    .unwrap();
    1
}

#[test]
fn a_version_1_store_is_migrated_and_keeps_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    let id = old_store(&path, &[rtlab_store::schema::CREATE_V1]);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.get(id).unwrap().document, json!({"policy": "rm"}));
    assert_eq!(store.jobs(id).unwrap(), vec![job("a", 0)]);
    assert!(store.schedule(id).unwrap().is_empty());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, rtlab_store::schema::VERSION);
    let mut w = store.begin(new_run(RunKind::Run)).unwrap();
    w.schedule(vec![span(SpanSource::Real, "CPU 1", SpanKind::Job, "a", 0)]);
    let new = w.finish(&json!({}), RunStatus::Complete).unwrap();
    assert_eq!(store.schedule(new).unwrap().len(), 1);
}

/// The files in `dir`, by name.
fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Issue 39: reading commands opened stores as writers, so `results list
/// --store /nonexistent/x/y.sqlite` made the folders and a database and
/// `--store /dev/null` left `/dev/null-journal`. A read-only open makes
/// nothing: no folder, no file, no `-wal`/`-shm` left, no migration.
#[test]
fn a_read_only_open_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/results.sqlite");
    let e = Store::open_read_only(&missing).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e}");
    assert!(files_in(dir.path()).is_empty());

    let path = dir.path().join("s.sqlite");
    let id = {
        let store = Store::open(&path).unwrap();
        let mut w = store.begin(new_run(RunKind::Sim)).unwrap();
        w.job(&job("a", 0)).unwrap();
        w.finish(&json!({"policy": "edf"}), RunStatus::Complete)
            .unwrap()
    };
    assert_eq!(files_in(dir.path()), ["s.sqlite"]);
    {
        let store = Store::open_read_only(&path).unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
        assert_eq!(store.jobs(id).unwrap(), vec![job("a", 0)]);
        // query_only: a reader cannot change the store.
        assert!(store.remove(id).is_err());
    }
    assert_eq!(files_in(dir.path()), ["s.sqlite"], "nothing left beside it");

    // A version-1 store is read as it is, and stays version 1.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("DROP TABLE schedule_spans; PRAGMA user_version = 1;")
            .unwrap();
    }
    let store = Store::open_read_only(&path).unwrap();
    assert!(store.schedule(id).unwrap().is_empty());
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 1, "not migrated by a reader");
}

/// A device, a folder or another program's database is not a store, in one
/// line, whether read or written (a wrong schema printed SQLite's whole
/// CREATE statement, 1,140 characters).
#[test]
fn what_is_not_a_store_is_said_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (path, why) in [
        (std::path::PathBuf::from("/dev/null"), "(a device)"),
        (dir.path().to_path_buf(), "(a directory)"),
    ] {
        for e in [
            Store::open_read_only(&path).unwrap_err(),
            Store::open(&path).unwrap_err(),
        ] {
            assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
            assert!(e.to_string().contains(why), "{e}");
        }
    }
    assert!(!std::path::Path::new("/dev/null-journal").exists());
    let foreign = dir.path().join("other.sqlite");
    {
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        conn.execute_batch("CREATE TABLE runs (x); CREATE TABLE notes (y);")
            .unwrap();
    }
    let e = Store::open(&foreign).unwrap_err().to_string();
    assert!(
        e.ends_with("not an rtlab results store (an SQLite database with 2 tables and no rtlab schema version); name another --store"),
        "{e}"
    );
    assert!(e.len() < 200, "{e}");
    let e = Store::open_read_only(&foreign).unwrap_err().to_string();
    assert!(e.contains("without rtlab's schema version"), "{e}");
    {
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        conn.execute_batch("PRAGMA user_version = 2;").unwrap();
    }
    for e in [
        Store::open(&foreign).unwrap_err(),
        Store::open_read_only(&foreign).unwrap_err(),
    ] {
        assert!(
            e.to_string()
                .contains("schema version 2 without its table `jobs`"),
            "{e}"
        );
    }
}

/// A multiprocessor job: started on CPU 1, migrated twice, finished on 0.
fn migrated_job() -> JobRow {
    JobRow {
        start_cpu: Some(1),
        migrations: 2,
        cpu: Some(0),
        ..job("b", 1)
    }
}

#[test]
fn a_version_2_store_gains_the_job_columns_and_its_old_rows_read_with_their_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.sqlite");
    let id = old_store(
        &path,
        &[
            rtlab_store::schema::CREATE_V1,
            rtlab_store::schema::CREATE_V2,
        ],
    );
    let store = Store::open(&path).unwrap();
    // The old row: no start CPU, no migration, not aborted, no lock wait.
    assert_eq!(store.jobs(id).unwrap(), vec![job("a", 0)]);
    let mut w = store.begin(new_run(RunKind::Sim)).unwrap();
    let aborted = JobRow {
        aborted: true,
        finish_ns: None,
        blocked_ns: Some(250),
        ..job("c", 2)
    };
    w.job(&migrated_job()).unwrap();
    w.job(&aborted).unwrap();
    let new = w
        .finish(&json!({"duration_ns": 1}), RunStatus::Complete)
        .unwrap();
    assert_eq!(store.jobs(new).unwrap(), vec![migrated_job(), aborted]);
}

#[test]
fn exports_show_the_multiprocessor_abort_and_lock_columns_only_when_a_run_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.sqlite")).unwrap();
    let csv_of = |id| {
        let mut out = Vec::new();
        store.export_csv(id, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let json_jobs = |id| {
        let mut out = Vec::new();
        store.export_json(id, &mut out).unwrap();
        serde_json::from_slice::<serde_json::Value>(&out).unwrap()["jobs"].clone()
    };
    let save = |rows: &[JobRow]| {
        let mut w = store.begin(new_run(RunKind::Sim)).unwrap();
        for r in rows {
            w.job(r).unwrap();
        }
        w.finish(&json!({}), RunStatus::Complete).unwrap()
    };
    // One processor: the columns and JSON keys of before.
    let uni = save(&[job("a", 0)]);
    assert_eq!(
        csv_of(uni).lines().next(),
        Some(rtlab_store::JOBS_CSV_HEADER)
    );
    assert_eq!(
        json_jobs(uni)[0].as_object().unwrap().keys().count(),
        rtlab_store::JOBS_CSV_HEADER.split(',').count()
    );
    // A multiprocessor run with an aborted job that waited on a lock.
    let aborted = JobRow {
        aborted: true,
        finish_ns: None,
        blocked_ns: Some(250),
        ..job("c", 2)
    };
    let multi = save(&[migrated_job(), aborted]);
    let text = csv_of(multi);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            &format!(
                "{},{},aborted,blocked_ns",
                rtlab_store::JOBS_CSV_HEADER,
                rtlab_store::JOBS_CSV_MULTIPROCESSOR_COLUMNS
            ) as &str,
            "b,1,10000000,15000000,10000007,,1,1,0,1,2,false,",
            "c,2,20000000,25000000,20000007,,2,1,,,0,true,250",
        ]
    );
    let jobs = json_jobs(multi);
    assert_eq!(
        (
            &jobs[0]["start_cpu"],
            &jobs[0]["migrations"],
            jobs[0].get("aborted")
        ),
        (&json!(1), &json!(2), None)
    );
    assert_eq!(
        (&jobs[1]["aborted"], &jobs[1]["blocked_ns"]),
        (&json!(true), &json!(250))
    );
}

#[test]
fn a_row_misses_as_its_job_record_does() {
    let set = rtlab_model::TaskSet::new(
        "one",
        vec![rtlab_model::Task::new(
            "a",
            rtlab_model::Nanos::from_ms(10),
            rtlab_model::Nanos::from_ms(1),
        )],
    );
    let ms = rtlab_model::Nanos::from_ms;
    let unfinished = rtlab_model::results::JobRecord::unstarted(0, 3, ms(30), ms(40));
    let aborted = rtlab_model::results::JobRecord {
        aborted: true,
        start_cpu: Some(1),
        migrations: 1,
        blocked: Some(rtlab_model::Nanos::from_us(3)),
        ..unfinished
    };
    for record in [unfinished, aborted] {
        let row = JobRow::from((&record, &set));
        assert_eq!(row.task, "a");
        assert_eq!(
            (row.start_cpu, row.migrations),
            (record.start_cpu, record.migrations)
        );
        assert_eq!(
            row.blocked_ns,
            record.blocked.map(rtlab_model::Nanos::as_ns)
        );
        // Unfinished with its deadline (40 ms) after the end (35 ms): a
        // miss only when it was aborted; at or before the end, a miss.
        for ended in [ms(35), ms(40), ms(45)] {
            assert_eq!(
                row.missed(ended.as_ns()),
                record.missed(ended),
                "{record:?} {ended}"
            );
        }
    }
}
