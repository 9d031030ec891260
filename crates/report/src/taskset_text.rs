//! Task sets for people: the description `rtlab taskset show` prints and
//! the table of sets `rtlab taskset gen --out` wrote.

use std::path::PathBuf;

use rtlab_model::{printable, TaskSet};

use crate::table;

/// The human description of a task set: a headline and a table of tasks.
pub fn describe_taskset(set: &TaskSet, origin: &str) -> String {
    let origin = printable(origin);
    let hyper = match set.hyperperiod() {
        Ok(h) => h.to_string(),
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
            task.period.to_string(),
            task.deadline.to_string(),
            match task.bcet {
                Some(b) => format!("{b}..{}", task.wcet),
                None => task.wcet.to_string(),
            },
            task.offset.to_string(),
            task.priority.map_or("-".into(), |p| p.to_string()),
            format!("{:.4}", task.utilization()),
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
    out.push_str(&table::render(&t));
    out.push('\n');
    out
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
            format!("{:.4}", set.utilization()),
            set.hyperperiod()
                .map_or("overflows".into(), |h| h.to_string()),
        ]);
    }
    table::render(&t)
}
