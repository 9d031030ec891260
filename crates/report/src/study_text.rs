//! The EDF-versus-FPS study (paper 001) as text tables and CSV, for `rtlab
//! study edf-vs-fps`: [`describe`] and [`section_csvs`] take the whole
//! document; the overload and locking sections are here, the utilization
//! section in [`utilization`].

use rtlab_model::Nanos;
use rtlab_study::document::StudyDocument;
use rtlab_study::locking::LockingSection;
use rtlab_study::overload::OverloadSection;

use crate::table;

pub mod utilization;

/// The human summary: each section that ran.
pub fn describe(doc: &StudyDocument) -> String {
    let mut parts = Vec::new();
    if doc.interrupted {
        parts.push(
            "interrupted: a stop signal cut the real runs short; what was measured until then follows\n"
                .to_string(),
        );
    }
    if let Some(u) = &doc.utilization {
        parts.push(utilization::describe_utilization(u));
    }
    if let Some(o) = &doc.overload {
        let mut text = String::from(
            "EDF vs FPS (Carletto & Vardanega 2017): overload, transient (a burst) and permanent\n",
        );
        text.push_str(&overload_table(&o.simulated, "simulated"));
        if let Some(real) = &o.real {
            for (world, section) in [
                ("simulated like the real runs", &real.simulated),
                (
                    "real threads (EDF = SCHED_DEADLINE, FPS = SCHED_FIFO DM)",
                    &real.measured,
                ),
            ] {
                if let Some(section) = section {
                    text.push('\n');
                    text.push_str(&overload_table(section, world));
                }
            }
            if let Some(note) = &real.note {
                text.push_str(&format!("real threads: {note}\n"));
            }
        }
        parts.push(text);
    }
    if let Some(l) = &doc.locking {
        let mut text = String::from(
            "EDF vs FPS (Carletto & Vardanega 2017): locking, IPCP under FPS against DFP under EDF (simulated: \
             Linux has no DFP)\n",
        );
        text.push_str(&locking_table(l));
        if let Some(real) = &l.real {
            text.push_str(&dispatched_locking_table(real));
        }
        parts.push(text);
    }
    table::fit_text(&parts.join("\n"))
}

/// The CSV of each section that ran, named after it.
pub fn section_csvs(doc: &StudyDocument) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(u) = &doc.utilization {
        out.push(("utilization.csv", utilization::utilization_csv(u)));
    }
    if let Some(o) = &doc.overload {
        let mut worlds = vec![("sim", &o.simulated)];
        if let Some(real) = &o.real {
            if let Some(s) = &real.simulated {
                worlds.push(("real-sim", s));
            }
            if let Some(m) = &real.measured {
                worlds.push(("real", m));
            }
        }
        out.push(("overload.csv", overload_csv(&worlds)));
    }
    if let Some(l) = &doc.locking {
        out.push(("locking.csv", locking_csv(l)));
    }
    out
}

fn opt_f(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

/// One line per profile x load: total misses (and the miss ratio) under
/// each scheduler, and how many tasks missed; then the least-squares fits
/// and the transient recovery times.
pub fn overload_table(section: &OverloadSection, world: &str) -> String {
    let mut out = format!(
        "{world}: base set {} at U {:.2}%, {} tasks, runs of {}{}\n",
        section.taskset,
        section.base_utilization * 100.0,
        section.tasks.len(),
        Nanos::from_ns(section.duration_ns),
        if section.rows.iter().any(|r| r.profile.name() == "transient") {
            format!(
                ", transient burst {}..{}",
                Nanos::from_ns(section.burst_start_ns),
                Nanos::from_ns(section.burst_end_ns)
            )
        } else {
            String::new()
        },
    );
    let baseline: Vec<String> = section
        .baseline
        .iter()
        .map(|b| {
            format!(
                "{} {} misses of {}",
                rtlab_study::runner::name(b.scheduler),
                b.misses,
                b.released
            )
        })
        .collect();
    if !baseline.is_empty() {
        out.push_str(&format!("without overload: {}\n", baseline.join(", ")));
    }
    let header = [
        "profile",
        "load",
        "scheduler",
        "released",
        "misses",
        "ratio",
        "tasks missing",
        "lowest ranks only",
        "in burst",
        "recovery",
    ];
    let mut t = table::new(&header, &header[1..]);
    for r in &section.rows {
        t.add_row(vec![
            r.profile.name().to_string(),
            table::percent(r.load_pct / 100.0),
            rtlab_study::runner::name(r.scheduler).to_string(),
            r.released.to_string(),
            r.misses.to_string(),
            table::percent(r.miss_ratio),
            format!("{}/{}", r.tasks_missing, section.tasks.len()),
            r.misses_on_lowest_ranks
                .map_or("-".into(), |b| if b { "yes" } else { "no" }.to_string()),
            r.misses_in_burst.map_or("-".into(), |m| m.to_string()),
            match (r.recovery_ns, r.recovered_before_end) {
                (Some(ns), Some(false)) => format!(">{}", table::ns(ns)),
                (Some(ns), _) => table::ns(ns),
                _ => "-".into(),
            },
        ]);
    }
    t.optional(&["lowest ranks only", "released", "in burst", "tasks missing"]);
    out.push_str(&table::render(&t));
    out.push('\n');
    for f in &section.fits {
        out.push_str(&format!(
            "fit {} {}: {:.2} misses per load point, R² {}\n",
            f.profile.name(),
            rtlab_study::runner::name(f.scheduler),
            f.slope_misses_per_pct,
            opt_f(f.r_squared, 3)
        ));
    }
    for s in &section.skipped {
        out.push_str(&format!("skipped: {s}\n"));
    }
    out
}

/// One line per procedure length and protocol: misses, the analysis's
/// blocking bound, the worst inversion observed and the cumulative lock
/// overhead; then DFP against IPCP and the growth per doubling of ℓ.
pub fn locking_table(section: &LockingSection) -> String {
    let mut out = format!(
        "{} tasks share `{}`; runs of {}; lock or unlock costs c = {} (IPCP), c + r = {} (DFP)\n",
        section.tasks.len(),
        section.resource,
        Nanos::from_ns(section.duration_ns),
        Nanos::from_ns(section.priority_change_cost_ns),
        Nanos::from_ns(
            section
                .priority_change_cost_ns
                .saturating_add(section.clock_read_cost_ns),
        ),
    );
    let header = [
        "length",
        "protocol",
        "U",
        "misses",
        "blocking bound",
        "inversion seen",
        "operations",
        "overhead",
        "overhead/s",
    ];
    let mut t = table::new(&header, &header[2..]);
    for r in &section.rows {
        t.add_row(vec![
            table::ns(r.length_ns),
            r.protocol.name().to_string(),
            table::percent(r.utilization),
            r.misses.to_string(),
            table::ns(r.max_blocking_bound_ns),
            format!(
                "{}{}",
                table::ns(r.max_observed_inversion_ns),
                if r.trace_complete { "" } else { " (partial)" }
            ),
            r.operations.map_or("-".into(), |n| n.to_string()),
            table::ns(r.overhead_ns),
            table::ns(r.overhead_ns_per_s.round() as u64),
        ]);
    }
    t.optional(&["operations", "overhead"]);
    out.push_str(&table::render(&t));
    out.push('\n');
    for c in &section.comparisons {
        out.push_str(&format!(
            "length {}: DFP - IPCP = {}, DFP / IPCP = {}\n",
            table::ns(c.length_ns),
            table::signed_ns(c.dfp_minus_ipcp_ns),
            opt_f(c.dfp_over_ipcp, 3)
        ));
    }
    for g in &section.growth {
        out.push_str(&format!(
            "{} overhead growth: {} ns per doubling of the length (R² {}), last doubling {}\n",
            g.protocol.name(),
            opt_f(g.slope_ns_per_doubling, 1),
            opt_f(g.r_squared, 3),
            g.last_step_change
                .map_or("-".into(), |v| format!("{:+.2}%", v * 100.0)),
        ));
    }
    out
}

/// The locking section on real threads through the dispatcher: misses
/// real against simulated, the operations the dispatcher handled, what a
/// decision cost and the dispatch latency.
pub fn dispatched_locking_table(
    real: &rtlab_study::locking::dispatched::DispatchedLocking,
) -> String {
    let mut out =
        format!(
        "\non real threads through rtlab's dispatcher (CPU {}; it takes and releases the resource \
         under IPCP or DFP, one wake-up and decision per operation){}\n",
        real.cpu,
        if real.interrupted { ", cut short by a stop signal" } else { "" }
    );
    let header = [
        "length",
        "protocol",
        "misses real",
        "misses sim",
        "R max real (worst task)",
        "R max sim",
        "operations",
        "decision p50",
        "latency p50",
        "latency p99.9",
        "dispatcher CPU",
    ];
    let mut t = table::new(&header, &header[2..]);
    for r in &real.rows {
        let worst = r
            .max_response_ns
            .iter()
            .max_by_key(|(_, real, _)| real.unwrap_or(0));
        t.add_row(vec![
            Nanos::from_ns(r.length_ns).to_string(),
            r.protocol.name().to_string(),
            r.misses.to_string(),
            r.sim_misses.to_string(),
            worst.map_or("-".into(), |(name, real, _)| {
                format!("{} ({name})", table::opt_ns(*real))
            }),
            worst.map_or("-".into(), |(_, _, sim)| table::opt_ns(*sim)),
            r.operations.to_string(),
            Nanos::from_ns(r.decision_p50_ns).to_string(),
            Nanos::from_ns(r.dispatch_latency_p50_ns).to_string(),
            Nanos::from_ns(r.dispatch_latency_p999_ns).to_string(),
            format!("{:.2} %", r.dispatcher_cpu_share * 100.0),
        ]);
    }
    out.push_str(&table::render(&t));
    out.push('\n');
    out
}

fn csv_of<I, R>(header: &[&str], rows: I) -> String
where
    I: IntoIterator<Item = R>,
    R: IntoIterator<Item = String>,
{
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(header);
    for row in rows {
        let _ = w.write_record(row);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// `overload.csv`: one row per world x profile x load x scheduler.
pub fn overload_csv(sections: &[(&str, &OverloadSection)]) -> String {
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    csv_of(
        &[
            "world",
            "taskset",
            "profile",
            "load_pct",
            "scheduler",
            "released",
            "misses",
            "miss_ratio",
            "tasks_missing",
            "misses_after_burst",
            "recovery_ns",
            "misses_in_burst",
        ],
        sections.iter().flat_map(|(world, s)| {
            s.rows.iter().map(move |r| {
                vec![
                    world.to_string(),
                    rtlab_model::csv_cell(&s.taskset).into_owned(),
                    r.profile.name().to_string(),
                    r.load_pct.to_string(),
                    rtlab_study::runner::name(r.scheduler).to_string(),
                    r.released.to_string(),
                    r.misses.to_string(),
                    r.miss_ratio.to_string(),
                    r.tasks_missing.to_string(),
                    opt(r.misses_after_burst),
                    opt(r.recovery_ns),
                    opt(r.misses_in_burst),
                ]
            })
        }),
    )
}

/// `locking.csv`: one row per procedure length x protocol.
pub fn locking_csv(section: &LockingSection) -> String {
    csv_of(
        &[
            "length_ns",
            "protocol",
            "utilization",
            "operation_cost_ns",
            "released",
            "misses",
            "operations",
            "overhead_ns",
            "overhead_ns_per_s",
            "max_blocking_bound_ns",
            "max_observed_inversion_ns",
        ],
        section.rows.iter().map(|r| {
            vec![
                r.length_ns.to_string(),
                r.protocol.name().to_string(),
                r.utilization.to_string(),
                r.operation_cost_ns.to_string(),
                r.released.to_string(),
                r.misses.to_string(),
                r.operations.map_or(String::new(), |n| n.to_string()),
                r.overhead_ns.to_string(),
                r.overhead_ns_per_s.to_string(),
                r.max_blocking_bound_ns.to_string(),
                r.max_observed_inversion_ns.to_string(),
            ]
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_study::locking::{self, LockingConfig};

    #[test]
    fn locking_rows_print_and_export_one_line_each() {
        let config = LockingConfig {
            lengths: vec![Nanos::from_us(100), Nanos::from_us(200)],
            duration: Nanos::from_ms(200),
            ..LockingConfig::default()
        };
        let section = locking::run(&config).unwrap();
        let text = locking_table(&section);
        assert!(text.contains("DFP / IPCP = 1.500"), "{text}");
        let csv = locking_csv(&section);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + 4, "{csv}");
        assert!(lines[1].starts_with("100000,ipcp,"), "{csv}");
        assert!(lines[2].starts_with("100000,dfp,"), "{csv}");
    }
}
