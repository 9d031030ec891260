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
    table::fit_text(&out)
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

/// What the literature ranks, for the study's closing lines: the summary
/// of Brandenburg's survey of multiprocessor real-time locking protocols
/// (2019; the evaluations it reviews: Brandenburg, Calandrino, Block,
/// Leontyev & Anderson 2008 for spin against suspension, Brandenburg 2013
/// for the P-FP semaphore protocols, Zhao, Garrido, Burns & Wellings 2017
/// for MrsP), in rtlab's words.
pub const PUBLISHED_RANKING: &str = "published ranking (Brandenburg's survey, 2019, and the evaluations it reviews): no protocol dominates; \
non-preemptive FIFO spinning (MSRP) is preferable for short critical sections, suspension-based protocols \
only pay off when sections are long; among the P-FP semaphore protocols the DPCP tends to beat the MPCP \
under the newer (LP-based) analysis, the FMLP+ is the one with O(n) blocking per request; MrsP's helping \
makes it at least as good as non-preemptive FIFO spinning under its newer analysis (Zhao et al. 2017). \
The bounds here are the classic ones (no LP), which favours the protocols whose classic bound is tight.";

/// `rtlab study mp-locking`: the two series as tables (sets proven by the
/// analysis / met in simulation, per protocol), the winners of each
/// point, where each protocol wins, and the published ranking.
pub fn study_text(doc: &rtlab_study::mp_locking::MpLockingDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "multiprocessor locking: {} sets of {} tasks at U = {:.2} on {} processors; each resource used by a task with probability {}, {} section{} per job; partitioned protocols under RM placed by {}; simulated for {}",
        doc.sets,
        doc.tasks,
        doc.utilization,
        doc.cpus,
        doc.sharing,
        doc.requests,
        if doc.requests == 1 { "" } else { "s" },
        printable(&doc.heuristic),
        Nanos::from_ns(doc.duration_ns)
    );
    let _ = writeln!(
        out,
        "cells: sets proven by the analysis / met in simulation (of {}); no blocking P/G: proven with the sections blocking nobody, partitioned RM / global EDF (the most the protocols can reach)\n",
        doc.sets
    );
    let series = [
        (
            format!(
                "by critical-section length ({} resources)",
                doc.fixed_resources
            ),
            "length",
            &doc.by_length,
            true,
        ),
        (
            format!(
                "by number of shared resources (sections of {})",
                Nanos::from_ns(doc.fixed_length_ns)
            ),
            "resources",
            &doc.by_resources,
            false,
        ),
    ];
    for (title, axis, points, is_length) in series {
        let _ = writeln!(out, "{title}");
        let names: Vec<&str> = points
            .first()
            .map(|p| p.protocols.iter().map(|c| c.protocol).collect())
            .unwrap_or_default();
        let mut header = vec![axis];
        header.extend(names.iter().copied());
        header.extend(["no blocking P/G", "analysis wins", "simulation wins"]);
        let right: Vec<&str> = header
            .iter()
            .copied()
            .filter(|h| !h.ends_with("wins") && !h.starts_with("no blocking"))
            .collect();
        let mut t = table::new(&header, &right);
        for p in points {
            let mut row = vec![x_label(p.x, is_length)];
            row.extend(
                p.protocols
                    .iter()
                    .map(|c| format!("{}/{}", c.analysed, c.simulated)),
            );
            row.push(format!(
                "{}/{}",
                p.without_blocking.partitioned, p.without_blocking.global
            ));
            row.push(winners(&p.analysis_winners));
            row.push(winners(&p.simulation_winners));
            t.add_row(row);
        }
        let _ = writeln!(out, "{}", table::render(&t));
        let _ = writeln!(out, "{}\n", where_each_wins(points, is_length));
    }
    out.push_str(PUBLISHED_RANKING);
    out.push('\n');
    table::fit_text(&out)
}

fn x_label(x: u64, is_length: bool) -> String {
    if is_length {
        Nanos::from_ns(x).to_string()
    } else {
        x.to_string()
    }
}

fn winners(w: &[&str]) -> String {
    if w.is_empty() {
        "-".into()
    } else {
        w.join(" ")
    }
}

/// `analysis: mpcp wins (or ties) at 10us..100us; msrp at 200us..1.6ms`.
fn where_each_wins(points: &[rtlab_study::mp_locking::Point], is_length: bool) -> String {
    let mut parts = Vec::new();
    for (what, pick) in [
        (
            "analysis",
            (|p: &rtlab_study::mp_locking::Point| p.analysis_winners.clone())
                as fn(&rtlab_study::mp_locking::Point) -> Vec<&'static str>,
        ),
        ("simulation", |p: &rtlab_study::mp_locking::Point| {
            p.simulation_winners.clone()
        }),
    ] {
        let names: Vec<&str> = points
            .first()
            .map(|p| p.protocols.iter().map(|c| c.protocol).collect())
            .unwrap_or_default();
        let mut spans = Vec::new();
        for name in names {
            let at: Vec<String> = points
                .iter()
                .filter(|p| pick(p).contains(&name))
                .map(|p| x_label(p.x, is_length))
                .collect();
            if !at.is_empty() {
                spans.push(format!("{name} at {}", at.join(", ")));
            }
        }
        let text = if spans.is_empty() {
            "no protocol proves any set".to_string()
        } else {
            spans.join("; ")
        };
        parts.push(format!("{what} wins (or ties): {text}"));
    }
    parts.join("\n")
}

/// The study's CSV: one row per series, point and protocol.
pub fn study_csv(doc: &rtlab_study::mp_locking::MpLockingDocument) -> String {
    let mut out = String::from("series,x,protocol,sets,analysed,simulated\n");
    for (series, points) in [
        ("length_ns", &doc.by_length),
        ("resources", &doc.by_resources),
    ] {
        for p in points {
            for c in &p.protocols {
                let _ = writeln!(
                    out,
                    "{series},{},{},{},{},{}",
                    p.x, c.protocol, p.sets, c.analysed, c.simulated
                );
            }
        }
    }
    out
}

/// The study's plots: for each series, the fraction proven by the analysis
/// and met in simulation against the series' variable (lengths on a log10
/// axis), one line per protocol: `(file name, SVG)`.
pub fn study_plots(
    doc: &rtlab_study::mp_locking::MpLockingDocument,
) -> Result<Vec<(String, String)>, crate::plot::PlotError> {
    let mut out = Vec::new();
    for (series, points, x_desc, is_length) in [
        (
            "length",
            &doc.by_length,
            "log10 critical-section length (us)",
            true,
        ),
        ("resources", &doc.by_resources, "shared resources", false),
    ] {
        for (world, pick) in [
            (
                "analysis",
                (|c: &rtlab_study::mp_locking::ProtocolCount| c.analysed)
                    as fn(&rtlab_study::mp_locking::ProtocolCount) -> u64,
            ),
            (
                "simulation",
                |c: &rtlab_study::mp_locking::ProtocolCount| c.simulated,
            ),
        ] {
            let names: Vec<&str> = points
                .first()
                .map(|p| p.protocols.iter().map(|c| c.protocol).collect())
                .unwrap_or_default();
            let lines: Vec<crate::series::Line> = names
                .iter()
                .enumerate()
                .map(|(i, name)| crate::series::Line {
                    label: (*name).to_string(),
                    points: points
                        .iter()
                        .map(|p| {
                            let x = if is_length {
                                (p.x as f64 / 1_000.0).log10()
                            } else {
                                p.x as f64
                            };
                            (x, pick(&p.protocols[i]) as f64 / p.sets.max(1) as f64)
                        })
                        .collect(),
                })
                .collect();
            let svg = crate::plot::lines(
                &lines,
                x_desc,
                &format!("fraction schedulable ({world})"),
                Some(1.05),
            )?;
            out.push((format!("mp-locking-{series}-{world}.svg"), svg));
        }
    }
    Ok(out)
}
