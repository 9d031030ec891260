//! The global-versus-partitioned study (`rtlab study global-vs-partitioned`)
//! as text: per utilization level and method, the sets proven by the
//! analysis, met in the simulator and met on real threads; then the
//! highest schedulable utilization of each, and Dhall's example.

use rtlab_model::Nanos;
use rtlab_study::global_partitioned::GvpDocument;

use crate::table;

/// The tables of the document.
pub fn describe(doc: &GvpDocument) -> String {
    let real = doc
        .levels
        .iter()
        .any(|l| l.methods.iter().any(|(_, c)| c.real.is_some()));
    let mut out = String::new();
    if doc.interrupted {
        out.push_str("interrupted: a stop signal cut the real runs short; what was measured until then follows\n");
    }
    out.push_str(&format!(
        "global vs partitioned on m = {} (CPUs {}): {} sets of {} tasks per level, seed {}, runs of {}\n\
         cells: sets proven by the analysis / met in the simulator{} (of {})\n\n",
        doc.m,
        doc.cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
        doc.sets,
        doc.tasks,
        doc.seed,
        Nanos::from_ns(doc.duration_ns),
        if real { " / met on real threads (refused by admission)" } else { "" },
        doc.sets,
    ));
    let names: Vec<String> = doc
        .levels
        .first()
        .map(|l| l.methods.iter().map(|(m, _)| m.name()).collect())
        .unwrap_or_default();
    let mut header = vec!["U"];
    header.extend(names.iter().map(String::as_str));
    let mut t = table::new(&header, &header);
    for level in &doc.levels {
        let mut row = vec![format!("{:.2}", level.utilization)];
        for (_, c) in &level.methods {
            let mut cell = format!("{} / {}", c.analysis, c.simulated);
            if let Some(r) = c.real {
                cell.push_str(&format!(" / {r}"));
                if let Some(refused) = c.refused.filter(|&n| n > 0) {
                    cell.push_str(&format!(" ({refused})"));
                }
            }
            row.push(cell);
        }
        t.add_row(row);
    }
    out.push_str(&table::render(&t));
    out.push_str("\n\nhighest schedulable utilization (every set at every level up to it):\n\n");
    let mut h = table::new(
        &["method", "analysis", "simulated", "real"],
        &["analysis", "simulated", "real"],
    );
    let show = |v: Option<f64>| v.map_or("-".to_string(), |u| format!("{u:.2}"));
    for high in &doc.highest {
        h.add_row(vec![
            high.method.name().to_string(),
            show(high.analysis),
            show(high.simulated),
            if real {
                show(high.real)
            } else {
                "not run".into()
            },
        ]);
    }
    out.push_str(&table::render(&h));
    out.push('\n');
    if real {
        let agree: u64 = doc
            .levels
            .iter()
            .flat_map(|l| l.methods.iter().filter_map(|(_, c)| c.agree))
            .sum();
        let refused: u64 = doc
            .levels
            .iter()
            .flat_map(|l| l.methods.iter().filter_map(|(_, c)| c.refused))
            .sum();
        let total = doc.levels.len() as u64 * doc.sets * names.len() as u64 - refused;
        out.push_str(&format!(
            "\nreal and simulated agree (both meet, or both miss) on {agree} of the {total} sets the kernel admitted \
             (a set no partition fits counts as agreeing: neither runs)\n"
        ));
    }
    if !doc.dhall.is_empty() {
        out.push_str("\nDhall's effect on real threads (builtin:dhall-linux):\n");
        for d in &doc.dhall {
            out.push_str(&format!(
                "  {}: {} misses real, {} simulated\n",
                d.method.name(),
                d.real_misses,
                d.simulated_misses
            ));
        }
    }
    table::fit_text(&out)
}
