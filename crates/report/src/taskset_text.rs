//! Task sets for people: the description `rtlab taskset show` prints and
//! the table of sets `rtlab taskset gen --out` wrote.

use std::path::PathBuf;

use rtlab_model::{printable, TaskSet};

use crate::table;

/// The human description of a task set: a headline and a table of tasks.
pub fn describe_taskset(set: &TaskSet, origin: &str) -> String {
    let origin = printable(origin);
    let hyper = match set.hyperperiod() {
        Ok(h) => table::ns(h.as_ns()),
        Err(_) => "overflows 64-bit ns".to_string(),
    };
    let mut out = format!(
        "{} ({origin}): {} tasks, U = {:.4}, density = {:.4}, hyperperiod = {hyper}, {} deadlines\n\n",
        printable(&set.name),
        set.tasks.len(),
        set.utilization(),
        set.density(),
        set.deadline_kind(),
    );
    if set.processors() > 1 || !set.platform.clusters.is_empty() {
        out.insert_str(
            out.len() - 1,
            &format!("platform: {}\n", set.platform.describe()),
        );
    }
    let has_cs = set.tasks.iter().any(|t| !t.critical_sections.is_empty());
    let has_cpu = set.has_cpu_fields();
    let mut header = vec!["task", "T", "D", "C", "offset", "prio", "U"];
    if has_cpu {
        header.push("cpu");
    }
    if has_cs {
        header.push("critical sections");
    }
    let mut t = table::new(&header, &["T", "D", "C", "offset", "prio", "U", "cpu"]);
    for task in &set.tasks {
        let mut row = vec![
            printable(&task.name).into_owned(),
            table::ns(task.period.as_ns()),
            table::ns(task.deadline.as_ns()),
            match task.bcet {
                Some(b) => format!("{}..{}", table::ns(b.as_ns()), table::ns(task.wcet.as_ns())),
                None => table::ns(task.wcet.as_ns()),
            },
            table::ns(task.offset.as_ns()),
            task.priority.map_or("-".into(), |p| p.to_string()),
            table::percent(task.utilization()),
        ];
        if has_cpu {
            row.push(task.cpu.map_or("-".into(), |c| c.to_string()));
        }
        if has_cs {
            let sections: Vec<String> = task
                .critical_sections
                .iter()
                .map(|cs| format!("{}@{}+{}", printable(&cs.resource), cs.start, cs.length))
                .collect();
            row.push(sections.join(" "));
        }
        t.add_row(row);
    }
    t.wrapping("critical sections")
        .optional(&["offset", "prio"]);
    out.push_str(&table::render(&t));
    out.push('\n');
    table::fit_text(&out)
}

/// A table of generated sets: name, file, tasks, U, hyperperiod.
pub fn generated_sets_table(sets: &[TaskSet], paths: &[PathBuf]) -> String {
    let mut t = table::new(
        &["set", "file", "tasks", "U", "hyperperiod"],
        &["tasks", "U", "hyperperiod"],
    );
    for (set, path) in sets.iter().zip(paths) {
        t.add_row(vec![
            printable(&set.name).into_owned(),
            printable(&path.display().to_string()).into_owned(),
            set.tasks.len().to_string(),
            table::percent(set.utilization()),
            set.hyperperiod()
                .map_or("overflows".into(), |h| table::ns(h.as_ns())),
        ]);
    }
    t.wrapping("file").optional(&["hyperperiod"]);
    table::render(&t)
}

/// `rtlab taskset list`: one row per built-in set (`(name, tasks, U, what
/// it is, source)`), the description and the source wrapped between words.
pub fn catalog_table(rows: &[(String, usize, f64, &str, &str)]) -> String {
    let mut t = table::new(
        &["name", "tasks", "U", "what it is", "source"],
        &["tasks", "U"],
    );
    for (name, tasks, u, what, source) in rows {
        t.add_row(vec![
            printable(name).into_owned(),
            tasks.to_string(),
            table::percent(*u),
            what.to_string(),
            source.to_string(),
        ]);
    }
    t.wrapping("what it is").wrapping("source");
    table::render(&t)
}
