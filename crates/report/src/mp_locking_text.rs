//! The text of multiprocessor locking: `rtlab analyze --cpus M --locking
//! PROTOCOL` (each protocol's bounds per task), the per-job blocking of
//! `rtlab sim --locking`, and the `rtlab study mp-locking` tables.

use std::fmt::Write as _;

use rtlab_analysis::mp_locking::{LockingDocument, MpLockingAnalyzeDocument};
use rtlab_model::{printable, Nanos};

use crate::table;

/// What the columns of the bounds table mean, printed under it.
pub const LEGEND: &str =
    "local B: ready while its processor serves lower-priority work or agents; \
remote B: waiting for global resources (suspended or spinning); R: response bound";

/// `rtlab analyze --cpus M --locking ...`.
pub fn analyze_text(doc: &MpLockingAnalyzeDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}): {} tasks, U = {:.4} on {} processors, priorities {} (partitioned protocols)",
        printable(&doc.taskset),
        printable(&doc.origin),
        doc.protocols.first().map_or(0, |p| p.tasks.len()),
        doc.utilization,
        doc.processors,
        doc.priorities
    );
    for protocol in &doc.protocols {
        out.push('\n');
        out.push_str(&protocol_text(protocol));
    }
    out.push('\n');
    out.push_str(LEGEND);
    out.push('\n');
    out
}

/// One protocol's verdict, resources and bounds.
pub fn protocol_text(doc: &LockingDocument) -> String {
    let mut out = String::new();
    let verdict = match doc.schedulable {
        Some(true) => "schedulable",
        Some(false) => "NOT schedulable",
        None => "not proven",
    };
    let _ = writeln!(
        out,
        "{} ({}): {verdict}; tasks placed by {}",
        doc.protocol,
        doc.paper,
        printable(&doc.placement)
    );
    if let Some(note) = &doc.note {
        let _ = writeln!(out, "  {}", printable(note));
    }
    if !doc.resources.is_empty() {
        let resources: Vec<String> = doc
            .resources
            .iter()
            .map(|r| {
                let users: Vec<String> =
                    r.tasks.iter().map(|t| printable(t).into_owned()).collect();
                let mut place = if r.cpus.is_empty() {
                    String::new()
                } else {
                    let cpus: Vec<String> = r.cpus.iter().map(u32::to_string).collect();
                    let word = if cpus.len() == 1 { "cpu" } else { "cpus" };
                    format!("{word} {}: ", cpus.join(","))
                };
                if let Some(s) = r.synchronization_cpu {
                    let _ = write!(place, "agents on cpu {s}: ");
                }
                format!(
                    "{} {} ({place}{})",
                    printable(&r.name),
                    r.scope,
                    users.join(" ")
                )
            })
            .collect();
        let _ = writeln!(out, "  resources: {}", resources.join(", "));
    }
    let partitioned = doc.tasks.iter().any(|t| t.cpu.is_some());
    let mut header = vec!["task"];
    if partitioned {
        header.extend(["cpu", "prio"]);
    }
    header.extend(["C", "T", "D", "local B", "remote B", "R", "verdict"]);
    let right: Vec<&str> = header
        .iter()
        .copied()
        .filter(|h| *h != "task" && *h != "verdict")
        .collect();
    let mut t = table::new(&header, &right);
    for task in &doc.tasks {
        let mut row = vec![printable(&task.name).into_owned()];
        if partitioned {
            row.push(task.cpu.map_or("-".into(), |c| c.to_string()));
            row.push(task.priority.map_or("-".into(), |p| p.to_string()));
        }
        row.extend([
            Nanos::from_ns(task.wcet_ns).to_string(),
            Nanos::from_ns(task.period_ns).to_string(),
            Nanos::from_ns(task.deadline_ns).to_string(),
            Nanos::from_ns(task.local_blocking_ns).to_string(),
            Nanos::from_ns(task.remote_blocking_ns).to_string(),
            table::opt_ns(task.response_ns),
            match task.schedulable {
                Some(true) => "ok",
                Some(false) => "MISS",
                None => "?",
            }
            .to_string(),
        ]);
        t.add_row(row);
    }
    for line in table::render(&t).lines() {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// `rtlab sim --locking PROTOCOL`: each task's longest remote and local
/// blocking of a job, or nothing for a run without a multiprocessor
/// protocol.
pub fn sim_blocking_text(tasks: &[rtlab_model::results::TaskMetrics]) -> String {
    if tasks.iter().all(|t| t.max_remote_blocked_ns.is_none()) {
        return String::new();
    }
    let mut t = table::new(
        &["task", "max remote B", "max local B"],
        &["max remote B", "max local B"],
    );
    for task in tasks {
        t.add_row(vec![
            printable(&task.name).into_owned(),
            table::opt_ns(task.max_remote_blocked_ns),
            table::opt_ns(task.max_local_blocked_ns),
        ]);
    }
    format!(
        "\nblocking per job (remote: waiting for global resources, suspended or spinning; local: ready while its processor served lower-priority work or an agent):\n{}\n",
        table::render(&t)
    )
}

/// The line under a locking sweep's or study's title: how its sets share
/// resources.
pub fn sharing_line(s: &rtlab_analysis::sweep::SharingSpec) -> String {
    format!(
        "critical sections: {} resource{}, each used by a task with probability {}, {} section{} per job of {}..{}; partitioned protocols placed by {} under RM\n",
        s.resources,
        if s.resources == 1 { "" } else { "s" },
        s.sharing,
        s.requests,
        if s.requests == 1 { "" } else { "s" },
        s.cs_min,
        s.cs_max,
        printable(&s.heuristic)
    )
}
