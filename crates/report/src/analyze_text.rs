//! `rtlab analyze`'s text: on one processor, per policy each test's
//! verdict and the per-task response times (exact, and per timer model
//! with overheads), then breakdown utilizations ([`describe`]); on m
//! processors, each global or partitioned test's verdict, the per-task
//! response-time bounds and the file's assignment
//! ([`describe_multiprocessor`]).

use std::fmt::Write as _;

use rtlab_analysis::blocking;
use rtlab_analysis::overhead_rta::TimerModel;
use rtlab_analysis::schema::MultiprocessorAnalyzeDocument;
use rtlab_analysis::suite::{BreakdownRun, Options, PolicyReport};
use rtlab_analysis::{Response, Test};
use rtlab_model::policy::AnalysedPolicy;
use rtlab_model::{printable, TaskSet};

use crate::table;

/// The text of a uniprocessor analysis of `set` from `origin`.
pub fn describe(
    origin: &str,
    set: &TaskSet,
    options: &Options,
    reports: &[PolicyReport],
    breakdowns: &[BreakdownRun],
) -> String {
    let origin = printable(origin);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({origin}): {} tasks, U = {:.4}{}",
        printable(&set.name),
        set.tasks.len(),
        set.utilization(),
        match &options.overheads {
            Some(o) if !o.throttling.is_none() => format!(
                ", overheads {} (throttling modelled: {})",
                printable(&o.name),
                o.throttling
            ),
            Some(o) => format!(", overheads {}", printable(&o.name)),
            None => String::new(),
        }
    );
    if blocking::has_critical_sections(set) {
        let _ = writeln!(
            out,
            "critical sections: {} under fixed priorities, {} under EDF",
            options.fixed_protocol.name(),
            options.edf_protocol.name()
        );
    }
    for report in reports {
        let _ = writeln!(out, "\npolicy {}", report.policy.name());
        let labels: Vec<String> = report
            .runs
            .iter()
            .map(|run| test_label(run.outcome.test, run.timer))
            .collect();
        let width = labels.iter().map(String::len).max().unwrap_or(0).max(28);
        for (run, label) in report.runs.iter().zip(&labels) {
            let _ = writeln!(
                out,
                "  {label:<width$} {}",
                verdict_word(run.outcome.schedulable)
            );
        }
        if let Some(note) = &report.note {
            let _ = writeln!(out, "  note: {note}");
        }
        let overhead_runs: Vec<_> = report
            .runs
            .iter()
            .filter(|r| r.outcome.test == Test::RtaOverheads)
            .collect();
        let mut header = vec!["task", "priority", "C", "T", "D", "R", "slack", "verdict"];
        let extra: Vec<String> = overhead_runs
            .iter()
            .map(|r| match r.timer {
                Some(TimerModel::Tick(t)) => format!("R@{t}"),
                _ => "R(oh)".to_string(),
            })
            .collect();
        header.extend(extra.iter().map(String::as_str));
        let mut right = header.clone();
        right.retain(|h| *h != "task" && *h != "verdict");
        let mut t = table::new(&header, &right);
        let exact = report.exact_outcome();
        for (i, task) in set.tasks.iter().enumerate() {
            let response = exact.responses.get(i).copied().unwrap_or(Response::Unknown);
            let (r, slack) = match response {
                Response::Within(r) => {
                    (table::ns(r.as_ns()), table::ns((task.deadline - r).as_ns()))
                }
                Response::Exceeds => ("> D".to_string(), "-".to_string()),
                Response::Unknown => ("-".to_string(), "-".to_string()),
            };
            let verdict = match (response, report.policy) {
                (Response::Unknown, AnalysedPolicy::Edf) => match exact.schedulable {
                    Some(true) => "ok",
                    Some(false) => "set misses",
                    None => "?",
                },
                (Response::Within(_), _) => "ok",
                (Response::Exceeds, _) => "MISS",
                (Response::Unknown, _) => "?",
            };
            let mut row = vec![
                printable(&task.name).into_owned(),
                report
                    .priorities
                    .as_ref()
                    .map_or("-".to_string(), |p| p.level(i).to_string()),
                table::ns(task.wcet.as_ns()),
                table::ns(task.period.as_ns()),
                table::ns(task.deadline.as_ns()),
                r,
                slack,
                verdict.to_string(),
            ];
            for run in &overhead_runs {
                row.push(match run.outcome.responses.get(i) {
                    Some(Response::Within(r)) => table::ns(r.as_ns()),
                    Some(Response::Exceeds) => "> D".to_string(),
                    _ => "-".to_string(),
                });
            }
            t.add_row(row);
        }
        t.optional(&["priority", "slack", "T"]);
        let _ = writeln!(out, "{}", indented(&t));
    }
    if !breakdowns.is_empty() {
        let _ = writeln!(
            out,
            "\nbreakdown utilization (all C scaled by alpha, periods fixed; alpha to 1e-6)"
        );
        let mut t = table::new(
            &["policy", "overheads", "tick", "U*", "alpha"],
            &["U*", "alpha"],
        );
        for b in breakdowns {
            t.add_row(vec![
                b.policy.name().to_string(),
                b.overheads.clone().unwrap_or_else(|| "none (ideal)".into()),
                match b.timer {
                    Some(timer @ TimerModel::Hrtimer { .. }) => timer.to_string(),
                    _ => b.tick.map_or("-".to_string(), |t| t.to_string()),
                },
                b.result
                    .map_or("unschedulable".into(), |r| table::percent(r.utilization)),
                b.result.map_or("-".into(), |r| table::number(r.scale)),
            ]);
        }
        let _ = writeln!(out, "{}", indented(&t));
    }
    table::fit_text(&out)
}

/// `t` fitted two columns narrower and indented by two.
fn indented(t: &table::Table) -> String {
    t.render_within(table::width().map(|w| w.saturating_sub(2)))
        .lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn verdict_word(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "schedulable",
        Some(false) => "NOT schedulable",
        None => "inconclusive",
    }
}

fn test_label(test: Test, timer: Option<TimerModel>) -> String {
    match timer {
        Some(timer) => format!("{test} ({timer})"),
        None => test.to_string(),
    }
}

/// The text of a multiprocessor analysis of `set`.
pub fn describe_multiprocessor(set: &TaskSet, doc: &MultiprocessorAnalyzeDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}): {} tasks, U = {:.4} on {} processors\n",
        printable(&doc.taskset),
        printable(&doc.origin),
        doc.tasks.len(),
        doc.utilization,
        doc.processors
    );
    let mut t = table::new(&["test", "verdict", "paper"], &[]);
    for test in &doc.tests {
        let mut verdict = match test.schedulable {
            Some(true) => "schedulable".to_string(),
            Some(false) => "NOT schedulable (U > m)".to_string(),
            None => "not proven".to_string(),
        };
        if let Some(task) = &test.unplaced {
            let _ = write!(verdict, " (task `{}` fits no processor)", printable(task));
        }
        if test.gave_up {
            verdict.push_str(" (gave up: the analysis reached its work cap)");
        }
        if let Some(cpus) = &test.assignment {
            let cpus: Vec<String> = cpus.iter().map(u32::to_string).collect();
            let _ = write!(verdict, " (cpus {})", cpus.join(" "));
        }
        t.add_row(vec![test.test.clone(), verdict, test.paper.to_string()]);
    }
    t.wrapping("paper");
    out.push_str(&table::render(&t));
    out.push('\n');
    let rtas: Vec<&String> = doc
        .tasks
        .first()
        .map(|t| t.response_ns.keys().collect())
        .unwrap_or_default();
    let has_cpu = set.has_cpu_fields();
    let has_tardiness = doc.tasks.iter().any(|t| t.tardiness_bound_ns.is_some());
    let mut header: Vec<String> = ["task", "C", "D", "T"].map(String::from).to_vec();
    if has_cpu {
        header.push("cpu".into());
    }
    header.extend(rtas.iter().map(|name| format!("R {name}")));
    if has_tardiness {
        header.push("tardiness <=".into());
    }
    let names: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<&str> = names.iter().copied().filter(|h| *h != "task").collect();
    let mut t = table::new(&names, &right);
    for (task, row) in set.tasks.iter().zip(&doc.tasks) {
        let mut cells = vec![
            printable(&task.name).into_owned(),
            table::ns(task.wcet.as_ns()),
            table::ns(task.deadline.as_ns()),
            table::ns(task.period.as_ns()),
        ];
        if has_cpu {
            cells.push(task.cpu.map_or("-".into(), |c| c.to_string()));
        }
        for name in &rtas {
            let r = row.response_ns.get(*name).copied().flatten();
            cells.push(table::opt_ns(r));
        }
        if has_tardiness {
            let b = row.tardiness_bound_ns;
            cells.push(table::opt_ns(b));
        }
        t.add_row(cells);
    }
    // The bounds of the later tests go first (T before them).
    let mut optional: Vec<&str> = vec!["T"];
    optional.extend(names.iter().rev().filter(|h| h.starts_with("R ")));
    t.optional(&optional);
    out.push('\n');
    out.push_str(&table::render(&t));
    out.push('\n');
    if has_tardiness {
        out.push_str("tardiness <=: Devi & Anderson 2008's bound on how late a job finishes under G-EDF (soft real-time)\n");
    }
    if let Some(assignment) = &doc.assignment {
        out.push_str("\nthe file's assignment (cpu fields):\n");
        let tests: Vec<String> = assignment
            .first()
            .map(|p| p.schedulable.keys().cloned().collect())
            .unwrap_or_default();
        let mut header = vec!["cpu", "U"];
        header.extend(tests.iter().map(String::as_str));
        header.push("tasks");
        let mut t = table::new(&header, &["cpu", "U"]);
        for p in assignment {
            let mut cells = vec![p.cpu.to_string(), table::percent(p.utilization)];
            cells.extend(
                tests.iter().map(|name| {
                    verdict_word(p.schedulable.get(name).copied().flatten()).to_string()
                }),
            );
            let names: Vec<String> = p.tasks.iter().map(|n| printable(n).into_owned()).collect();
            cells.push(names.join(" "));
            t.add_row(cells);
        }
        t.wrapping("tasks");
        out.push_str(&table::render(&t));
        out.push('\n');
    }
    table::fit_text(&out)
}
