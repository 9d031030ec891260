use super::*;
use crate::file::{LoadError, LoadedTaskSet};
use crate::generate::{generate_set, DeadlineModel, GeneratorConfig, PeriodDistribution};
use crate::{Nanos, Task, TaskSet};

fn load(text: &str) -> LoadedTaskSet {
    parse_str(text, "c.xml", "c").unwrap_or_else(|e| panic!("{e}"))
}

fn refusals(text: &str) -> Vec<String> {
    match parse_str(text, "c.xml", "c") {
        Err(LoadError::Invalid { errors, .. }) => errors.iter().map(|e| e.to_string()).collect(),
        Err(other) => vec![other.to_string()],
        Ok(_) => panic!("accepted: {text}"),
    }
}

/// A configuration as SimSo's own editor writes it (`GenerateConfiguration.py`).
const SIMSO_WRITTEN: &str = r#"<?xml version="1.0" ?>
<simulation cycles_per_ms="1000000" duration="420000000" etm="wcet">
	<sched class="simso.schedulers.EDF_mono" overhead="0" overhead_activate="0" overhead_terminate="0"/>
	<caches memory_access_time="100"/>
	<processors>
		<processor cl_overhead="0" cs_overhead="0" id="1" name="CPU 1" speed="1.0"/>
	</processors>
	<tasks>
		<task ACET="0" WCET="3" abort_on_miss="yes" activationDate="0" base_cpi="1.0" deadline="7" et_stddev="0" id="1" instructions="0" list_activation_dates="" mix="0.5" name="T1" period="7" preemption_cost="0" task_type="Periodic"/>
		<task ACET="0" WCET="3.25" abort_on_miss="no" activationDate="1.5" base_cpi="1.0" deadline="11" et_stddev="0" id="2" instructions="0" list_activation_dates="" mix="0.5" name="T2" period="12" preemption_cost="0" task_type="Periodic"/>
	</tasks>
</simulation>
"#;

#[test]
fn reads_a_configuration_simso_wrote() {
    let loaded = load(SIMSO_WRITTEN);
    assert_eq!(
        loaded.set.name, "c",
        "the file stem names a set SimSo did not name"
    );
    assert_eq!(
        loaded.set.tasks,
        vec![
            Task::new("T1", Nanos::from_ms(7), Nanos::from_ms(3)),
            Task::new("T2", Nanos::from_ms(12), Nanos::from_us(3250))
                .with_deadline(Nanos::from_ms(11))
                .with_offset(Nanos::from_us(1500)),
        ]
    );
    let notes: Vec<String> = loaded.notes.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        notes,
        [
            "c.xml:2:47: note: SimSo runs 420000000 cycles (420ms): `rtlab sim --duration 420ms` runs as long",
            "c.xml:3:16: note: SimSo scheduler EDF_mono: `rtlab sim --scheduler edf` simulates the same rule",
            "c.xml:8:2: note: SimSo aborts a job at its deadline for 1 task(s) (abort_on_miss, \"yes\" when absent): rtlab's --on-miss applies to every task, and 1 task(s) here continue (abort_on_miss=\"no\")",
        ]
    );
}

#[test]
fn the_file_loader_recognises_simso_by_content() {
    let dir = std::env::temp_dir().join(format!("rtlab-simso-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("from-simso.conf");
    std::fs::write(&path, SIMSO_WRITTEN).unwrap();
    let loaded = crate::file::load(path.to_str().unwrap()).unwrap();
    assert_eq!(loaded.set.tasks.len(), 2);
    assert_eq!(loaded.set.name, "from-simso");
    std::fs::remove_dir_all(dir).unwrap();
}

/// SIMSO_WRITTEN with `from` replaced by `to` (which must occur).
fn edited(from: &str, to: &str) -> String {
    assert!(SIMSO_WRITTEN.contains(from), "{from}");
    SIMSO_WRITTEN.replacen(from, to, 1)
}

#[test]
fn refuses_what_rtlab_cannot_simulate_at_its_place() {
    let second_cpu = edited(
        "\t</processors>",
        "\t\t<processor id=\"2\" name=\"CPU 2\"/>\n\t</processors>",
    );
    let cases = [
        (second_cpu, "c.xml:3:16: SimSo scheduler EDF_mono schedules one processor, not 2: rtlab reads SimSo's EDF, RM, FP, EDZL (global), P_EDF, P_RM, Fixed_PEDF (partitioned)"),
        (edited("name=\"T2\" period=\"12\" preemption_cost=\"0\" task_type=\"Periodic\"", "name=\"T2\" period=\"12\" preemption_cost=\"0\" task_type=\"Sporadic\""),
         "c.xml:10:225: task `T2`: task_type `Sporadic`: rtlab models periodic tasks only (task_type=\"Periodic\")"),
        (edited("task_type=\"Periodic\"", "task_type=\"APeriodic\""),
         "c.xml:9:219: task `T1`: task_type `APeriodic`: rtlab models periodic tasks only (task_type=\"Periodic\")"),
        (edited("task_type=\"Periodic\"", "periodic=\"no\""),
         "c.xml:9:218: task `T1`: periodic=\"no\" (an aperiodic task): rtlab models periodic tasks only"),
        (edited("id=\"2\"", "followed_by=\"1\" id=\"2\""),
         "c.xml:10:126: task `T2`: followed_by `1` (a job activated by another task's end): rtlab models independent periodic tasks"),
        (edited("etm=\"wcet\"", "etm=\"acet\""),
         "c.xml:2:63: execution-time model `acet`: rtlab executes every job for its WCET (or uniformly in [bcet, wcet] with `rtlab sim --exec uniform`); use etm=\"wcet\""),
        (edited("etm=\"wcet\"", "use_wcet=\"no\""),
         "c.xml:2:68: execution-time model `cache`: rtlab executes every job for its WCET (or uniformly in [bcet, wcet] with `rtlab sim --exec uniform`); use etm=\"wcet\""),
        (edited(" overhead=\"0\"", " overhead=\"1000\""),
         "c.xml:3:53: scheduler overhead `1000`: rtlab takes scheduling costs from `rtlab sim --overheads FILE`; set it to 0 here"),
        (edited("cs_overhead=\"0\"", "cs_overhead=\"5\""),
         "c.xml:6:43: processor cs_overhead `5`: rtlab takes context-switch costs from `rtlab sim --overheads FILE`; set it to 0 here"),
        (edited("speed=\"1.0\"", "speed=\"2\""),
         "c.xml:6:73: processor speed `2`: rtlab simulates a processor of speed 1 (scale the WCETs instead)"),
        (edited("WCET=\"3\"", "WCET=\"3ms\""),
         "c.xml:9:24: task `T1`: WCET `3ms` must be a number of milliseconds"),
        (edited("period=\"7\"", "period=\"-7\""),
         "c.xml:9:185: task `T1`: period `-7` must not be negative"),
        (edited(" deadline=\"7\"", ""),
         "c.xml:9:3: task `T1`: missing attribute `deadline`"),
        (edited(" id=\"1\" instructions", " instructions"),
         "c.xml:9:3: task `T1`: missing attribute `id` (SimSo needs it)"),
        (edited("WCET=\"3\"", "WCET=\"8\""),
         "c.xml:9:24: task `T1`: wcet 8ms exceeds deadline 7ms: no job can meet it"),
        (edited("cycles_per_ms=\"1000000\"", "cycles_per_ms=\"fast\""),
         "c.xml:2:28: cycles_per_ms must be a whole number above 0, not `fast`"),
        ("<?xml version=\"1.0\"?>\n<sim/>".to_string(),
         "c.xml:2:1: an XML task set must be a SimSo configuration, whose root is <simulation>, not <sim>"),
        ("<simulation>\n  <tasks>\n</simulation>".to_string(),
         "c.xml:3:1: not well-formed XML: expected 'tasks' tag, not 'simulation'"),
        ("<simulation/>".to_string(),
         "c.xml:1:1: <simulation> has no <processors>: SimSo needs one <processor>"),
    ];
    for (text, expected) in cases {
        let got = refusals(&text);
        assert_eq!(got[0], expected, "{got:?}");
    }
}

#[test]
fn reads_fixed_priorities_from_the_fp_field() {
    let text = edited(
        "\t<tasks>\n",
        "\t<tasks>\n\t\t<field name=\"priority\" type=\"int\"/>\n",
    )
    .replacen(
        "id=\"1\" instructions",
        "id=\"1\" priority=\"5\" instructions",
        1,
    )
    .replacen("id=\"2\"", "id=\"2\" priority=\"9\"", 1);
    let set = load(&text).set;
    assert_eq!(set.tasks[0].priority, Some(5));
    assert_eq!(set.tasks[1].priority, Some(9));
    let negative = text.replacen("priority=\"5\"", "priority=\"-5\"", 1);
    assert!(refusals(&negative)[0]
        .contains("task `T1`: priority must be a whole number from 0 to 4294967295"));
}

fn exported(set: &TaskSet, scheduler: &str) -> String {
    to_xml_string(set, scheduler.parse().unwrap(), Nanos::from_secs(1))
        .unwrap()
        .xml
}

#[test]
fn writes_what_simso_parser_requires() {
    let set = TaskSet::new(
        "demo <&>",
        vec![
            Task::new("a\"\n\tb", Nanos::from_ns(2_500_001), Nanos::from_us(1)),
            Task::new("c", Nanos::from_ms(10), Nanos::from_ms(2)).with_offset(Nanos::from_ms(1)),
        ],
    );
    let xml = exported(&set, "edf");
    assert!(
        xml.contains("<sched class=\"simso.schedulers.EDF_mono\""),
        "{xml}"
    );
    for attribute in [
        "name",
        "id",
        "period",
        "activationDate",
        "deadline",
        "WCET",
        "ACET",
        "instructions",
        "mix",
        "base_cpi",
        "abort_on_miss",
        "task_type",
    ] {
        let on_tasks = xml
            .lines()
            .filter(|l| l.contains("<task ") && l.contains(&format!(" {attribute}=\"")))
            .count();
        assert_eq!(on_tasks, 2, "{attribute}");
    }
    assert!(
        xml.contains("<caches"),
        "parser.py reads <caches> unconditionally"
    );
    assert_eq!(load(&xml).set, set);
    let notes = to_xml_string(&set, SimsoScheduler::Edf, Nanos::from_secs(1))
        .unwrap()
        .notes;
    assert_eq!(
        notes.len(),
        1,
        "only `a\"\\n\\tb` breaks SimSo's name rule: {notes:?}"
    );
    assert!(notes[0].contains("check_all() refuses this name"));
}

#[test]
fn fixed_priority_exports_choose_the_simso_scheduler() {
    let set = TaskSet::new(
        "fp",
        vec![
            Task::new("long", Nanos::from_ms(20), Nanos::from_ms(1))
                .with_deadline(Nanos::from_ms(5)),
            Task::new("short", Nanos::from_ms(10), Nanos::from_ms(1)),
        ],
    );
    assert!(exported(&set, "fp:rm").contains("simso.schedulers.RM_mono"));
    let dm = exported(&set, "fp:dm");
    assert!(dm.contains("simso.schedulers.FP"));
    let back = load(&dm).set;
    assert_eq!(
        back.tasks[0].priority,
        Some(2),
        "DM: the 5 ms deadline is more urgent"
    );
    assert_eq!(back.tasks[1].priority, Some(1));
    assert_eq!(
        to_xml_string(&set, "fp:given".parse().unwrap(), Nanos::from_secs(1))
            .unwrap_err()
            .to_string(),
        "task `long` has no priority (add `priority = N`)"
    );
    assert!("rr:1ms"
        .parse::<SimsoScheduler>()
        .unwrap_err()
        .contains("edf, fp:rm, fp:dm, fp:given (one processor); gedf, gfp:rm"));
}

#[test]
fn refuses_to_export_what_simso_cannot_hold() {
    let mut task = Task::new("j", Nanos::from_ms(10), Nanos::from_ms(1));
    task.jitter = Nanos::from_us(5);
    let set = TaskSet::new("s", vec![task]);
    assert_eq!(
        to_xml_string(&set, SimsoScheduler::Edf, Nanos::from_secs(1))
            .unwrap_err()
            .to_string(),
        "task `j` has release jitter 5us, which SimSo does not model"
    );
    let mut task = Task::new("b", Nanos::from_ms(10), Nanos::from_ms(2));
    task.bcet = Some(Nanos::from_ms(1));
    let out = to_xml_string(
        &TaskSet::new("s", vec![task]),
        SimsoScheduler::Edf,
        Nanos::from_secs(1),
    )
    .unwrap();
    assert_eq!(
        out.notes,
        ["task `b`: bcet 1ms is left out (SimSo's wcet model runs every job for its WCET)"]
    );
    let set = TaskSet::new(
        "s",
        vec![Task::new("\u{1b}", Nanos::from_ms(1), Nanos::from_us(1))],
    );
    assert!(to_xml_string(&set, SimsoScheduler::Edf, Nanos::from_secs(1)).is_err());
}

proptest::proptest! {
    /// Export then import gives the same set, to the nanosecond: generated
    /// sets with nanosecond periods, constrained deadlines, random offsets
    /// and (for `fp:given`) priorities.
    #[test]
    fn round_trip_is_exact(seed in 0u64..1_000_000, tasks in 1usize..12, given in proptest::bool::ANY, offsets in proptest::collection::vec(0u64..50_000_000, 12)) {
        let config = GeneratorConfig {
            tasks,
            utilization: 0.9,
            periods: PeriodDistribution::log_uniform(Nanos::from_us(100), Nanos::from_secs(10), Nanos::from_ns(1)),
            deadlines: DeadlineModel::constrained(0.5, 1.0),
            seed,
            ..GeneratorConfig::default()
        };
        let mut set = generate_set(&config, 0).unwrap();
        for (i, (task, offset)) in set.tasks.iter_mut().zip(&offsets).enumerate() {
            task.offset = Nanos::from_ns(*offset);
            if given {
                task.priority = Some((i as u32 * 7919) % 1000);
            }
        }
        let scheduler = if given { "fp:given" } else { "edf" };
        let back = load(&exported(&set, scheduler)).set;
        proptest::prop_assert_eq!(back, set);
    }
}

proptest::proptest! {
    /// No input makes the reader panic, and every refusal is one line:
    /// SimSo's own file with a random slice replaced by random XML-ish text.
    #[test]
    fn never_panics_on_mutated_configurations(
        at in 0usize..1200,
        cut in 0usize..40,
        insert in "[<>/=\"a-zA-Z0-9 .\\-\n]{0,16}",
    ) {
        let mut bytes = SIMSO_WRITTEN.as_bytes().to_vec();
        let start = at.min(bytes.len());
        let end = (start + cut).min(bytes.len());
        bytes.splice(start..end, insert.bytes());
        if let Ok(text) = String::from_utf8(bytes) {
            match parse_str(&text, "m.xml", "m") {
                Ok(loaded) => proptest::prop_assert!(loaded.set.errors().is_empty()),
                Err(e) => proptest::prop_assert!(!e.to_string().contains('\n'), "{}", e),
            }
        }
    }
}

/// A generated set of `n` tasks at total utilization `u` on `m`
/// processors (nanosecond periods, random offsets).
fn multi_set(seed: u64, n: usize, u: f64, m: u32) -> TaskSet {
    let config = GeneratorConfig {
        tasks: n,
        utilization: u,
        periods: PeriodDistribution::log_uniform(
            Nanos::from_us(100),
            Nanos::from_secs(10),
            Nanos::from_ns(1),
        ),
        deadlines: DeadlineModel::constrained(0.5, 1.0),
        seed,
        ..GeneratorConfig::default()
    };
    let mut set = generate_set(&config, 0)
        .unwrap()
        .on_platform(crate::Platform::new(m));
    for (i, task) in set.tasks.iter_mut().enumerate() {
        task.offset = Nanos::from_ns(seed.wrapping_mul(7919 + i as u64) % 50_000_000);
    }
    set
}

proptest::proptest! {
    /// On 2 to 4 processors, export then import gives the same set, its
    /// processor count and (partitioned) each task's processor: global
    /// schedulers keep the tasks as they are; `pedf` with the tasks' own
    /// `cpu` (P_EDF's or another assignment, written for Fixed_PEDF) reads
    /// back the same `cpu`; `pedf` and `pfp:rm` without `cpu` read back the
    /// assignment SimSo's P_EDF / P_RM make.
    #[test]
    fn multiprocessor_round_trip_is_exact(seed in 0u64..1_000_000, n in 2usize..10, m in 2u32..5, rotate in 0u32..4) {
        let set = multi_set(seed, n, (0.3 * n as f64).min(0.7 * f64::from(m)), m);
        for scheduler in ["gedf", "gfp:rm", "edzl"] {
            let back = load(&exported(&set, scheduler)).set;
            proptest::prop_assert_eq!(&back, &set, "{}", scheduler);
        }
        let mut dm = set.clone();
        for (task, level) in dm.tasks.iter_mut().zip(crate::policy::PriorityAssignment::DeadlineMonotonic.levels(&set.tasks).unwrap()) {
            task.priority = Some(level);
        }
        proptest::prop_assert_eq!(load(&exported(&set, "gfp:dm")).set, dm);

        let mut placed = set.clone();
        for (i, task) in placed.tasks.iter_mut().enumerate() {
            task.cpu = Some((i as u32 + rotate) % m);
        }
        let xml = exported(&placed, "pedf");
        let class = if packing::p_edf(&placed.tasks, m).ok() == placed.assignment() { "P_EDF" } else { "Fixed_PEDF" };
        proptest::prop_assert!(xml.contains(&format!("simso.schedulers.{class}\"")), "{}", xml);
        proptest::prop_assert_eq!(load(&xml).set, placed);

        let rm = load(&exported(&set, "pfp:rm")).set;
        proptest::prop_assert_eq!(rm.assignment(), Some(packing::p_rm(&set.tasks, m)));
        if let Ok(cpus) = packing::p_edf(&set.tasks, m) {
            let edf = load(&exported(&set, "pedf")).set;
            proptest::prop_assert_eq!(edf.assignment(), Some(cpus));
        }
    }
}

/// SIMSO_WRITTEN on two processors under SimSo's `class`.
fn two_cpus(class: &str) -> String {
    edited(
        "\t</processors>",
        "\t\t<processor id=\"7\" name=\"CPU 2\"/>\n\t</processors>",
    )
    .replacen("EDF_mono", class, 1)
}

#[test]
fn maps_simso_multiprocessor_schedulers() {
    for (class, spec) in [
        ("EDF", "gedf"),
        ("RM", "gfp:rm"),
        ("FP", "gfp:given"),
        ("EDZL", "edzl"),
    ] {
        let loaded = load(&two_cpus(class));
        assert_eq!(loaded.set.processors(), 2);
        assert_eq!(loaded.set.assignment(), None, "{class}: global");
        let notes: Vec<String> = loaded.notes.iter().map(|n| n.to_string()).collect();
        assert!(
            notes.contains(&format!("c.xml:3:16: note: SimSo scheduler {class} on 2 processors: `rtlab sim --scheduler {spec}` simulates the same rule")),
            "{notes:?}"
        );
    }
    // T1 u = 3/7, T2 u = 3.25/12: P_EDF places T1 first, both fit on CPU 1;
    // P_RM puts T2 on the emptier second processor.
    assert_eq!(load(&two_cpus("P_EDF")).set.assignment(), Some(vec![0, 0]));
    assert_eq!(load(&two_cpus("P_RM")).set.assignment(), Some(vec![0, 1]));
    // Fixed_PEDF: `cpu` names a processor's id (7 is the second one).
    let fixed = two_cpus("Fixed_PEDF")
        .replacen(
            "\t<tasks>\n",
            "\t<tasks>\n\t\t<field name=\"cpu\" type=\"int\"/>\n",
            1,
        )
        .replacen(
            "id=\"1\" instructions",
            "cpu=\"7\" id=\"1\" instructions",
            1,
        )
        .replacen(
            "id=\"2\" instructions",
            "cpu=\"1\" id=\"2\" instructions",
            1,
        );
    assert_eq!(load(&fixed).set.assignment(), Some(vec![1, 0]));
    // Three tasks of u 0.6 on two processors: P_EDF's packing fails.
    let full = two_cpus("P_EDF")
        .replace("WCET=\"3\"", "WCET=\"5\"")
        .replacen(
            "\t</tasks>",
            "\t\t<task name=\"T3\" id=\"3\" period=\"10\" deadline=\"10\" WCET=\"6\"/>\n\t</tasks>",
            1,
        );
    let full = full.replace("WCET=\"3.25\"", "WCET=\"8\"");
    assert_eq!(
        refusals(&full)[0],
        "c.xml:3:16: SimSo's P_EDF places no processor for task `T3` (first fit on decreasing utilization, at most 1 per processor): SimSo stops with `Packing failed`"
    );
}

#[test]
fn refuses_multiprocessor_schedulers_rtlab_has_not_by_name() {
    let cases = [
        (two_cpus("LLF"), "c.xml:3:16: SimSo scheduler LLF on 2 processors has no rtlab equivalent: rtlab reads SimSo's EDF, RM, FP, EDZL (global), P_EDF, P_RM, Fixed_PEDF (partitioned)"),
        (two_cpus("RM_mono"), "c.xml:3:16: SimSo scheduler RM_mono schedules one processor, not 2: rtlab reads SimSo's EDF, RM, FP, EDZL (global), P_EDF, P_RM, Fixed_PEDF (partitioned)"),
        (two_cpus("EDF\" className=\"my.py"), "c.xml:3:49: SimSo scheduler file `my.py` on 2 processors: rtlab cannot tell how it schedules; use one of SimSo's EDF, RM, FP, EDZL (global), P_EDF, P_RM, Fixed_PEDF (partitioned)"),
        (two_cpus("Fixed_PEDF"), "c.xml:9:2: SimSo's Fixed_PEDF takes each task's processor from the task field `cpu`: declare it (<field name=\"cpu\" type=\"int\"/>) and give every task a `cpu`"),
        (two_cpus("Fixed_PEDF").replacen("\t<tasks>\n", "\t<tasks>\n\t\t<field name=\"cpu\" type=\"int\"/>\n", 1).replacen("id=\"1\" instructions", "cpu=\"3\" id=\"1\" instructions", 1),
         "c.xml:11:113: task `T1`: cpu 3 names no <processor id=\"3\">"),
        (two_cpus("EDF").replacen("<processors>", "<processors migration_overhead=\"5\">", 1),
         "c.xml:5:34: migration_overhead `5`: rtlab takes migration costs from `rtlab sim --overheads FILE`; set it to 0 here"),
        // Issue 39: two processors with one id were read as two processors.
        (two_cpus("EDF").replacen("<processor id=\"7\"", "<processor id=\"1\"", 1),
         "c.xml:7:18: processor id 1 is given twice (processors #1 and #2): each <processor> needs its own id"),
    ];
    for (text, expected) in cases {
        let got = refusals(&text);
        assert_eq!(got[0], expected, "{got:?}");
    }
}

#[test]
fn refuses_multiprocessor_exports_simso_cannot_hold() {
    let set = multi_set(4, 4, 1.0, 2);
    let err = |set: &TaskSet, scheduler: &str| {
        to_xml_string(set, scheduler.parse().unwrap(), Nanos::from_secs(1))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(&set, "edf"),
        "`edf` schedules one processor; on 2 processors export gedf, gfp:rm|dm|given, edzl, pedf or pfp:rm"
    );
    let mut one_fixed = set.clone();
    one_fixed.tasks[1].cpu = Some(1);
    assert_eq!(
        err(&one_fixed, "gedf"),
        "task `t2` has a fixed `cpu`, which global gedf ignores: drop the `cpu` fields or export pedf"
    );
    assert!(
        err(&one_fixed, "pedf").starts_with("task `t1` has no `cpu` while other tasks have one")
    );
    let mut fixed = set.clone();
    let simso = packing::p_rm(&set.tasks, 2);
    for (task, cpu) in fixed.tasks.iter_mut().zip(&simso) {
        task.cpu = Some(1 - cpu);
    }
    assert_eq!(
        err(&fixed, "pfp:rm"),
        format!("task `t1` has cpu {}, but SimSo's P_RM puts it on {} (the least-loaded processor, in file order): drop the `cpu` fields or export pedf", 1 - simso[0], simso[0])
    );
    let mut clustered = set.clone();
    clustered.platform.clusters = vec![vec![0], vec![1]];
    assert!(err(&clustered, "gedf").starts_with("the set has clusters"));
    assert_eq!(
        "pfp:dm".parse::<SimsoScheduler>().unwrap_err(),
        "no SimSo scheduler for `pfp:dm`: SimSo's one partitioned fixed-priority scheduler is P_RM (pfp:rm)"
    );
}
