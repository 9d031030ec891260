//! `rtlab partition`'s text.

use std::fmt::Write as _;

use rtlab_analysis::schema::PartitionDocument;
use rtlab_model::printable;

use crate::table;

/// The placement on `m` processors: per processor its utilization, the
/// test's verdict and its tasks, then whether every task was placed.
pub fn describe(doc: &PartitionDocument, m: u32) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}) on {m} processors: {}, each processor admitted by {}\n",
        printable(&doc.taskset),
        printable(&doc.origin),
        doc.heuristic,
        doc.test
    );
    let mut t = table::new(&["cpu", "U", "verdict", "tasks"], &["cpu", "U"]);
    for p in &doc.processors {
        let verdict = match p.schedulable.get(&doc.test).copied().flatten() {
            Some(true) => "schedulable",
            Some(false) => "NOT schedulable",
            None => "inconclusive",
        };
        let names: Vec<String> = p.tasks.iter().map(|n| printable(n).into_owned()).collect();
        t.add_row(vec![
            p.cpu.to_string(),
            table::percent(p.utilization),
            verdict.to_string(),
            names.join(" "),
        ]);
    }
    t.wrapping("tasks");
    out.push_str(&table::render(&t));
    out.push('\n');
    let placed = doc.tasks.iter().filter(|t| t.cpu.is_some()).count();
    match &doc.unplaced {
        None => {
            let _ = writeln!(out, "\nall {placed} tasks placed");
        }
        Some(name) => {
            let u = doc
                .tasks
                .iter()
                .find(|t| &t.name == name)
                .map_or(0.0, |t| t.utilization);
            let _ = writeln!(
                out,
                "\ntask `{}` (U = {u:.4}) fits no processor: not partitioned ({placed} of {} placed)",
                printable(name),
                doc.tasks.len()
            );
        }
    }
    table::fit_text(&out)
}
