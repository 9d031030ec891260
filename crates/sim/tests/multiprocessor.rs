//! The simulator on m processors: hand-computed global schedules (every
//! job's start, finish, processors and migrations), EDZL against G-EDF,
//! Dhall's effect, linux-dl's tie rule, partitioned EDF as the union of
//! uniprocessor runs, and the refusals.

use std::cell::RefCell;
use std::rc::Rc;

use proptest::prelude::*;
use rtlab_model::results::{EachJob, JobRecord};
use rtlab_model::{Nanos, Platform, Task, TaskSet};
use rtlab_sim::{simulate, Finished, SchedulerSpec, SimConfig, SimError, TraceWindow};

fn ms(v: u64) -> Nanos {
    Nanos::from_ms(v)
}

fn task(name: &str, c: u64, t: u64) -> Task {
    Task::new(name, ms(t), ms(c))
}

fn for_ms(duration: u64) -> SimConfig {
    SimConfig::new(ms(duration))
}

/// `set` on `m` processors.
fn on(m: u32, set: TaskSet) -> TaskSet {
    set.on_platform(Platform::new(m))
}

/// `set` with task i fixed to `cpus[i]`.
fn fixed(set: TaskSet, cpus: &[u32]) -> TaskSet {
    let tasks = set
        .tasks
        .iter()
        .zip(cpus)
        .map(|(t, &c)| t.clone().with_cpu(c))
        .collect();
    TaskSet { tasks, ..set }
}

/// Every job record of a run, in the order jobs left it, and the run.
fn run(set: &TaskSet, spec: &str, config: &SimConfig) -> (Vec<JobRecord>, Finished) {
    let records = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&records);
    let spec: SchedulerSpec = spec.parse().unwrap();
    let out = rtlab_sim::run(
        set,
        &spec,
        config,
        Some(Box::new(EachJob(move |r: &JobRecord| {
            sink.borrow_mut().push(*r)
        }))),
    )
    .unwrap();
    let mut records = records.borrow().clone();
    records.sort_by_key(|r| (r.task, r.job));
    (records, out)
}

/// (task, job, start, finish, first cpu, last cpu, migrations, preemptions)
type Row = (usize, u64, u64, u64, u32, u32, u64, u64);

fn rows(records: &[JobRecord]) -> Vec<Row> {
    records
        .iter()
        .map(|r| {
            (
                r.task,
                r.job,
                r.start.unwrap().as_ns() / 1_000_000,
                r.finish.unwrap().as_ns() / 1_000_000,
                r.start_cpu.unwrap(),
                r.cpu.unwrap(),
                r.migrations,
                r.involuntary_switches,
            )
        })
        .collect()
}

/// a (C=2, T=4), b (C=3, T=5), c (C=4, T=10) on 2 processors for 10 ms.
fn three() -> TaskSet {
    on(
        2,
        TaskSet::new(
            "three",
            vec![task("a", 2, 4), task("b", 3, 5), task("c", 4, 10)],
        ),
    )
}

/// a (C=4, D=10), b (C=1, D=8), c (C=2, D=9), periods 20, on 2 processors.
fn laxities() -> TaskSet {
    on(
        2,
        TaskSet::new(
            "laxities",
            vec![
                task("a", 4, 20).with_deadline(ms(10)),
                task("b", 1, 20).with_deadline(ms(8)),
                task("c", 2, 20).with_deadline(ms(9)),
            ],
        ),
    )
}

/// Global LLF by hand, comparing `d - remaining`. t=0: a 10-4=6, b 8-1=7,
/// c 9-2=7: a and b run (b ties c, the task declared first wins), a on cpu
/// 0, b on cpu 1. t=1: b done, c takes cpu 1, done at 3; a done at 4. G-EDF
/// runs b and c (deadlines 8 and 9) first instead, and a from 1 to 5.
#[test]
fn global_least_laxity_first_on_two_processors_by_hand() {
    let (records, out) = run(&laxities(), "gllf", &for_ms(20));
    assert_eq!(
        rows(&records),
        vec![
            (0, 0, 0, 4, 0, 0, 0, 0),
            (1, 0, 0, 1, 1, 1, 0, 0),
            (2, 0, 1, 3, 1, 1, 0, 0),
        ]
    );
    assert_eq!(out.report.scheduler, "gllf");
    let (records, _) = run(&laxities(), "gedf", &for_ms(20));
    assert_eq!(
        rows(&records),
        vec![
            (0, 0, 1, 5, 0, 0, 0, 0),
            (1, 0, 0, 1, 0, 0, 0, 0),
            (2, 0, 0, 2, 1, 1, 0, 0),
        ]
    );
}

/// G-EDF by hand. t=0: a0 (d4) on cpu 0, b0 (d5) on cpu 1, c0 (d10)
/// waits. t=2: a0 done, c0 takes cpu 0. t=3: b0 done. t=4: a1 (d8) takes
/// the idle cpu 1. t=5: b1 (d10) ties c0 (d10): gedf gives ties to the task
/// declared first, so b1 preempts c0 (3 of 4 ms done) on cpu 0. t=6: a1
/// done on cpu 1; c0's cpu 0 is taken, so it resumes on cpu 1: one
/// migration, done at 7. t=8: b1 done on cpu 0, a2 (d12) takes cpu 0,
/// done at 10.
#[test]
fn global_edf_on_two_processors_by_hand() {
    let (records, out) = run(&three(), "gedf", &for_ms(10));
    assert_eq!(
        rows(&records),
        vec![
            (0, 0, 0, 2, 0, 0, 0, 0),
            (0, 1, 4, 6, 1, 1, 0, 0),
            (0, 2, 8, 10, 0, 0, 0, 0),
            (1, 0, 0, 3, 1, 1, 0, 0),
            (1, 1, 5, 8, 0, 0, 0, 0),
            (2, 0, 2, 7, 0, 1, 1, 1),
        ]
    );
    let r = out.report;
    assert_eq!(r.migrations, 1);
    assert_eq!(r.tasks[2].migrations, 1);
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(r.processors.len(), 2);
    // cpu 0 ran a0 2 + c0 3 + b1 3 + a2 2 = 10 ms; cpu 1 ran b0 3 + a1 2 + c0 1 = 6 ms.
    assert_eq!(r.processors[0].executed_ns, ms(10).as_ns());
    assert_eq!(r.processors[1].executed_ns, ms(6).as_ns());
    assert_eq!(r.idle_ns, ms(4).as_ns());
}

/// linux-dl on the same set: at t=5 b1 ties the running c0 and does not
/// preempt it (a strictly earlier deadline is needed), so c0 finishes at 6
/// on cpu 0 without migrating, and b1 runs 6..9 on cpu 0 (the lowest idle
/// processor when a1 and c0 both finish at 6); a2 takes cpu 1 at 8.
#[test]
fn linux_dl_does_not_preempt_on_a_deadline_tie() {
    let (records, out) = run(&three(), "linux-dl", &for_ms(10));
    assert_eq!(
        rows(&records),
        vec![
            (0, 0, 0, 2, 0, 0, 0, 0),
            (0, 1, 4, 6, 1, 1, 0, 0),
            (0, 2, 8, 10, 1, 1, 0, 0),
            (1, 0, 0, 3, 1, 1, 0, 0),
            (1, 1, 6, 9, 0, 0, 0, 0),
            (2, 0, 2, 6, 0, 0, 0, 0),
        ]
    );
    assert_eq!(out.report.migrations, 0);
    assert_eq!(out.report.scheduler, "linux-dl");
}

/// Global RM by hand, priorities a > b > c by period: a (C=1, T=2), b
/// (C=3, T=4), c (C=3, T=8) on 2 processors for 8 ms. t=0: a0 cpu 0, b0
/// cpu 1. t=1: a0 done, c0 on cpu 0. t=2: a1 preempts the lowest, c0 (1
/// done), on cpu 0. t=3: a1 done, b0 done; c0 resumes on cpu 0 (its last).
/// t=4: a2 takes the idle cpu 1 and b1, which outranks c0, preempts it on
/// cpu 0 (c0 has 2 of 3 ms done). t=5: a2 done on cpu 1, c0 resumes
/// there (a migration), done at 6. t=6: a3 takes cpu 1, done at 7. t=7:
/// b1 done on cpu 0.
#[test]
fn global_rm_on_two_processors_by_hand() {
    let set = on(
        2,
        TaskSet::new(
            "rm",
            vec![task("a", 1, 2), task("b", 3, 4), task("c", 3, 8)],
        ),
    );
    let (records, out) = run(&set, "gfp:rm", &for_ms(8));
    assert_eq!(
        rows(&records),
        vec![
            (0, 0, 0, 1, 0, 0, 0, 0),
            (0, 1, 2, 3, 0, 0, 0, 0),
            (0, 2, 4, 5, 1, 1, 0, 0),
            (0, 3, 6, 7, 1, 1, 0, 0),
            (1, 0, 0, 3, 1, 1, 0, 0),
            (1, 1, 4, 7, 0, 0, 0, 0),
            (2, 0, 1, 6, 0, 1, 1, 2),
        ]
    );
    assert_eq!(out.report.migrations, 1);
}

/// Three tasks C=2, T=3 on 2 processors (U = 2): under G-EDF the third
/// waits until 2 and misses at 3; under EDZL its laxity reaches zero at 1,
/// it preempts b (equal deadlines, b declared later), b's laxity reaches
/// zero at 2 when a finishes, and every job meets its deadline.
#[test]
fn edzl_meets_what_global_edf_misses() {
    let set = on(
        2,
        TaskSet::new(
            "edzl",
            vec![task("a", 2, 3), task("b", 2, 3), task("c", 2, 3)],
        ),
    );
    let config = for_ms(30);
    let gedf = simulate(&set, &"gedf".parse().unwrap(), &config).unwrap();
    assert!(gedf.deadline_misses > 0);
    let (records, out) = run(&set, "edzl", &config);
    assert_eq!(out.report.deadline_misses, 0);
    assert_eq!(out.report.completed, 30);
    let first: Vec<Row> = rows(&records).into_iter().filter(|r| r.1 == 0).collect();
    assert_eq!(
        first,
        vec![
            (0, 0, 0, 2, 0, 0, 0, 0),
            (1, 0, 0, 3, 1, 0, 1, 1),
            (2, 0, 1, 3, 1, 1, 0, 0),
        ]
    );
}

/// Dhall's effect (Dhall & Liu 1978): two light tasks (C=2, T=10) and a
/// heavy one (C=10, T=11) on 2 processors, U = 1.31. G-EDF runs the light
/// ones first on both processors and the heavy one finishes at 12, after
/// its deadline 11; partitioned EDF (heavy alone on cpu 0) meets all.
#[test]
fn dhall_effect_global_misses_partitioned_meets() {
    let set = on(
        2,
        TaskSet::new(
            "dhall",
            vec![task("l1", 2, 10), task("l2", 2, 10), task("heavy", 10, 11)],
        ),
    );
    let config = for_ms(110);
    let gedf = simulate(&set, &"gedf".parse().unwrap(), &config).unwrap();
    assert!(gedf.tasks[2].misses > 0);
    assert_eq!(gedf.tasks[2].first_miss_ns, Some(ms(11).as_ns()));
    let grm = simulate(&set, &"gfp:rm".parse().unwrap(), &config).unwrap();
    assert!(grm.tasks[2].misses > 0);
    let part = fixed(set, &[1, 1, 0]);
    let pedf = simulate(&part, &"pedf".parse().unwrap(), &config).unwrap();
    assert_eq!(pedf.deadline_misses, 0);
    assert_eq!(pedf.migrations, 0);
}

/// Partitioned EDF's report is, task for task, the uniprocessor EDF runs
/// of each processor's tasks alone.
fn pedf_is_union_of_edf(set: &TaskSet, cpus: &[u32], m: u32, duration: Nanos) {
    let config = SimConfig::new(duration);
    let placed = fixed(on(m, set.clone()), cpus);
    let (records, out) = run(&placed, "pedf", &config);
    for c in 0..m {
        let mine: Vec<usize> = (0..set.tasks.len()).filter(|&i| cpus[i] == c).collect();
        if mine.is_empty() {
            assert_eq!(out.report.processors[c as usize].executed_ns, 0);
            continue;
        }
        let alone = TaskSet::new(
            set.name.clone(),
            mine.iter().map(|&i| set.tasks[i].clone()).collect(),
        );
        let uni = simulate(&alone, &SchedulerSpec::Edf, &SimConfig::new(duration)).unwrap();
        for (k, &i) in mine.iter().enumerate() {
            assert_eq!(out.report.tasks[i], uni.tasks[k]);
        }
        assert_eq!(
            out.report.processors[c as usize].executed_ns,
            uni.duration_ns - uni.idle_ns - uni.overhead_ns
        );
    }
    for r in records.iter().filter(|r| r.finish.is_some()) {
        assert_eq!(r.cpu, Some(cpus[r.task]));
        assert_eq!(r.migrations, 0);
    }
}

#[test]
fn pedf_is_each_processors_edf_alone() {
    let set = TaskSet::new(
        "p",
        vec![
            task("a", 2, 5),
            task("b", 3, 7),
            task("c", 1, 4),
            task("d", 4, 9),
        ],
    );
    pedf_is_union_of_edf(&set, &[0, 1, 1, 0], 2, ms(315));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Property: with every task's processor given, pedf equals the union
    /// of the uniprocessor EDF runs (m = 2..4, up to 6 tasks).
    #[test]
    fn pedf_equals_the_union_of_uniprocessor_runs(
        tasks in prop::collection::vec((1u64..5, 5u64..20, 0u32..4), 1..7),
        m in 2u32..5,
    ) {
        let set = TaskSet::new(
            "random",
            tasks.iter().enumerate().map(|(i, &(c, t, _))| task(&format!("t{i}"), c, t)).collect(),
        );
        let cpus: Vec<u32> = tasks.iter().map(|&(_, _, c)| c % m).collect();
        pedf_is_union_of_edf(&set, &cpus, m, ms(200));
    }
}

/// A migration costs the overheads' `migration` on the destination
/// processor: c0's resumption on cpu 1 at 6 ms (by-hand G-EDF schedule
/// above) starts 1 ms later, so it finishes at 8.
#[test]
fn migration_cost_delays_the_resumed_job() {
    let mut config = for_ms(10);
    let mut o = rtlab_model::overheads::Overheads::zero();
    o.migration = rtlab_model::overheads::LinearCost::constant(ms(1));
    config.overheads = Some(o);
    let (records, out) = run(&three(), "gedf", &config);
    let c0 = records.iter().find(|r| r.task == 2).unwrap();
    assert_eq!(c0.finish, Some(ms(8)));
    assert_eq!(c0.migrations, 1);
    assert_eq!(out.report.overhead_ns, ms(1).as_ns());
    assert_eq!(out.report.processors[1].overhead_ns, ms(1).as_ns());
}

#[test]
fn the_trace_has_one_row_per_processor_and_shows_migrations() {
    let mut config = for_ms(10);
    config.trace = Some(TraceWindow {
        from: Nanos::ZERO,
        to: ms(10),
    });
    let (_, out) = run(&three(), "gedf", &config);
    let trace = out.trace.unwrap();
    assert_eq!(trace.processors, 2);
    assert_eq!(trace.migrations.len(), 1);
    let mig = trace.migrations[0];
    assert_eq!((mig.task, mig.from, mig.to, mig.at), (2, 0, 1, ms(6)));
    let window = rtlab_sim::schedule_spans::gantt_window(&trace).unwrap();
    assert_eq!(window.rows, ["cpu 0", "cpu 1"]);
    let migrations: Vec<_> = window
        .spans
        .iter()
        .filter(|s| s.kind == rtlab_model::results::SpanKind::Migration)
        .map(|s| (s.row.as_str(), s.label.as_str(), s.start_ns))
        .collect();
    assert_eq!(migrations, [("cpu 1", "c#0 from cpu 0", ms(6).as_ns())]);
    let chrome = trace.to_chrome_json().to_string();
    assert!(chrome.contains("\"cpu 1\"") && chrome.contains("migrate c#0"));
}

#[test]
fn refusals_are_one_line_in_words() {
    let err = |set: &TaskSet, spec: &str| -> String {
        simulate(set, &spec.parse().unwrap(), &for_ms(10))
            .unwrap_err()
            .to_string()
    };
    assert!(err(&three(), "edf").contains("schedules one processor"));
    assert!(err(&fixed(three(), &[0, 1, 0]), "gedf").contains("is global"));
    assert!(err(&three(), "pedf").contains("needs every task's processor"));
    let mut locked = three();
    locked.tasks[0].critical_sections = vec![rtlab_model::CriticalSection {
        resource: "r".into(),
        start: ms(0),
        length: ms(1),
    }];
    let e = err(&locked, "gedf");
    assert!(e.contains("critical sections"), "{e}");
    // The model refuses a cpu beyond the platform.
    assert!(matches!(
        simulate(
            &fixed(three(), &[0, 5, 0]),
            &"pedf".parse().unwrap(),
            &for_ms(10)
        ),
        Err(SimError::TaskSet { .. })
    ));
}

/// cedf over clusters {0,1} and {2,3}, four tasks of U = 0.6: worst fit
/// in decreasing utilization puts a and c in cluster 0, b and d in cluster
/// 1 (first fit would pack a, b, c into cluster 0, where c misses); with
/// `cpu` fields, each task goes to its processor's cluster.
#[test]
fn cedf_runs_global_edf_inside_each_cluster() {
    let set = TaskSet::new(
        "c",
        vec![
            task("a", 6, 10),
            task("b", 6, 10),
            task("c", 6, 10),
            task("d", 6, 10),
        ],
    )
    .on_platform(Platform {
        processors: 4,
        clusters: vec![vec![0, 1], vec![2, 3]],
    });
    let config = for_ms(100);
    let (records, out) = run(&set, "cedf", &config);
    assert_eq!(out.report.deadline_misses, 0);
    for r in &records {
        assert_eq!(r.cpu.unwrap() < 2, r.task % 2 == 0, "{r:?}");
    }
    let (records, _) = run(&fixed(set, &[0, 1, 2, 3]), "cedf", &config);
    for r in &records {
        assert_eq!(r.cpu.unwrap() < 2, r.task < 2, "{r:?}");
    }
}

/// The guide's scheduler tables (`docs/src/reference/schedulers.md`) are
/// the registry's, between their markers. `RTLAB_UPDATE_GUIDE=1 cargo test
/// -p rtlab-sim --test multiprocessor guide` writes them.
#[test]
fn the_guides_scheduler_tables_are_the_registrys() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/src/reference/schedulers.md"
    );
    let mut page = std::fs::read_to_string(path).expect("the guide's schedulers page");
    let tables = [
        ("uniprocessor", rtlab_sim::scheduler::uniprocessor_table()),
        (
            "multiprocessor",
            rtlab_sim::scheduler::multiprocessor_table(),
        ),
    ];
    let update = std::env::var_os("RTLAB_UPDATE_GUIDE").is_some();
    for (name, table) in tables {
        let begin = format!("<!-- generated from the registry: {name} -->\n");
        let end = "<!-- end of generated table -->";
        let from = page.find(&begin).expect("the table's begin marker") + begin.len();
        let to = from + page[from..].find(end).expect("the table's end marker");
        if update {
            page.replace_range(from..to, &table);
        } else {
            assert_eq!(
                &page[from..to],
                table,
                "the guide's {name} table differs from the registry's (RTLAB_UPDATE_GUIDE=1 rewrites it)"
            );
        }
    }
    if update {
        std::fs::write(path, page).expect("write the guide");
    }
}

/// The global engine at the end of 64-bit time (issue 39): a job whose
/// completion lies past `Nanos::MAX` must not spin the run forever, under
/// every global and clustered rule, on one processor and two, with a
/// period of 2^64 - 2 ns or an offset near the top. The run happens on
/// another thread so that a regression fails here instead of hanging.
#[test]
fn global_runs_end_at_the_end_of_time() {
    let top = Nanos::from_ns(u64::MAX - 1);
    let sets = [
        TaskSet::new("top-period", vec![Task::new("t", top, ms(1))]),
        TaskSet::new(
            "top-offset",
            vec![Task::new("t", ms(10), ms(3)).with_offset(Nanos::from_ns(u64::MAX - 2))],
        ),
    ];
    for spec in [
        "gedf", "edzl", "linux-dl", "gfp:rm", "gllf", "cedf", "pedf", "edf",
    ] {
        for m in [1, 2] {
            for set in &sets {
                let set = on(m, set.clone());
                let name = format!("{spec} on {m} ({})", set.name);
                let (done, wait) = std::sync::mpsc::channel();
                let spec: SchedulerSpec = spec.parse().unwrap();
                if !spec.is_multiprocessor() && m > 1 {
                    continue;
                }
                let set = if spec == SchedulerSpec::Pedf {
                    fixed(set, &[0])
                } else {
                    set
                };
                std::thread::spawn(move || {
                    let config = SimConfig::new(Nanos::MAX);
                    let out = simulate(&set, &spec, &config).map(|r| r.released);
                    done.send(out.map_err(|e| e.to_string())).unwrap();
                });
                let out = wait
                    .recv_timeout(std::time::Duration::from_secs(20))
                    .unwrap_or_else(|_| panic!("{name} did not end"));
                assert!(out.is_ok(), "{name}: {out:?}");
            }
        }
    }
}
