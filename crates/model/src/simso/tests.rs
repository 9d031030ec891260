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
        (second_cpu, "c.xml:7:3: a multiprocessor configuration (2 processors): rtlab simulates one processor; keep one <processor> (partition the tasks into one file per processor)"),
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
        .contains("edf, fp:rm, fp:dm or fp:given"));
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
