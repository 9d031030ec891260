//! The utilization section of the EDF-versus-FPS study (paper 001) as a
//! text table (the paper's table: HSU per type, the delta, the maximum
//! load, RC/DM/PR of EDF and FPS) and as CSV.

use rtlab_model::Nanos;
use rtlab_study::document::UtilizationPart;
use rtlab_study::utilization::{TypeResult, UtilizationSection};

use crate::table;

/// A load in percent (of a CPU) with four significant digits.
fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| table::percent(v / 100.0))
}

/// Percentage points, signed.
fn pp(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| match v < 0.0 {
        true => table::number(v),
        false => format!("+{}", table::number(v)),
    })
}

fn section_title(s: &UtilizationSection, world: &str) -> String {
    format!(
        "{world}: {} sets x {} tasks per type, seed {}, loads {}%..{}% step {}%, runs {}\n",
        s.sets,
        s.tasks,
        s.seed,
        s.loads.from_ppm as f64 / 1e4,
        s.loads.to_ppm as f64 / 1e4,
        s.loads.step_ppm as f64 / 1e4,
        s.duration_ns
            .map_or(s.duration_rule.clone(), |d| Nanos::from_ns(d).to_string()),
    )
}

/// RC, DM, PR of EDF, then of FPS; empty when no set was counted.
fn counts_cells(r: &TypeResult) -> Vec<String> {
    [(&r.edf, r.edf_counted_sets), (&r.fps, r.fps_counted_sets)]
        .into_iter()
        .flat_map(|(c, counted)| {
            [c.regular_completions, c.deadline_misses, c.preemptions].map(|n| {
                if counted > 0 {
                    n.to_string()
                } else {
                    String::new()
                }
            })
        })
        .collect()
}

/// The table rows of one section's types, each labelled with `world`.
fn add_rows(t: &mut table::Table, world: &str, types: &[TypeResult]) {
    for r in types {
        let mut row = vec![
            r.name.clone(),
            world.to_string(),
            pct(r.mean_hsu_edf),
            pct(r.mean_hsu_fps),
            pp(r.delta_hsu_pp),
            pct(r.max_cpu_load),
        ];
        row.extend(
            counts_cells(r)
                .into_iter()
                .map(|c| if c.is_empty() { "-".into() } else { c }),
        );
        row.push(format!(
            "{}{}",
            r.sets_capped,
            if r.sets_refused > 0 {
                format!(" ({} refused)", r.sets_refused)
            } else {
                String::new()
            }
        ));
        t.add_row(row);
    }
}

const HEADER: [&str; 13] = [
    "type", "world", "HSU EDF", "HSU FPS", "delta", "max load", "EDF RC", "EDF DM", "EDF PR",
    "FPS RC", "FPS DM", "FPS PR", "capped",
];

/// The table of a section, the counts left out first on a narrow terminal
/// (RC before PR before DM: misses matter most).
fn new_table() -> table::Table {
    let mut t = table::new(&HEADER, &HEADER[2..]);
    t.optional(&[
        "capped", "EDF RC", "FPS RC", "EDF PR", "FPS PR", "max load", "world",
    ]);
    t
}

/// The utilization section's tables.
pub fn describe_utilization(part: &UtilizationPart) -> String {
    let sim = &part.simulated;
    let mut out = String::from(
        "EDF vs FPS (Carletto & Vardanega 2017): highest schedulable utilization (HSU) per task-set type\n",
    );
    out.push_str(&section_title(sim, "simulated"));
    let mut t = new_table();
    add_rows(&mut t, "sim", &sim.types);
    out.push_str(&table::render(&t));
    out.push_str(
        "\nHSU: mean over sets of the last load without a miss; delta: mean of HSU(EDF) - HSU(FPS), \
         percentage points; max load: highest HSU of either; RC/DM/PR: regular completions, \
         deadline misses, preemptions summed over sets, each at its decisive load (the first load at \
         which EDF or FPS missed, else the last both ran; `-`: no set ran there); capped: sets where \
         neither missed up to the last load.\n",
    );
    if let Some(real) = &part.real {
        out.push('\n');
        out.push_str(&section_title(&real.measured, "real threads"));
        out.push_str(&format!(
            "CPU {}, RT throttling {}{}; EDF = SCHED_DEADLINE, FPS = SCHED_FIFO at DM priorities; \
             beside the simulation of the same sets and loads\n",
            real.cpu,
            real.rt_throttling,
            if real.no_rt_throttling {
                " (switched off for each run)"
            } else {
                ""
            }
        ));
        let mut t = new_table();
        for (s, m) in real.simulated.types.iter().zip(&real.measured.types) {
            add_rows(&mut t, "sim", std::slice::from_ref(s));
            add_rows(&mut t, "real", std::slice::from_ref(m));
        }
        out.push_str(&table::render(&t));
        out.push('\n');
        for skipped in &real.skipped_types {
            out.push_str(&format!("not run on real threads: {skipped}\n"));
        }
        let refusals: Vec<String> = real
            .measured
            .types
            .iter()
            .flat_map(|r| &r.sets)
            .flat_map(|s| {
                [("edf", &s.edf), ("fps", &s.fps)]
                    .into_iter()
                    .filter_map(move |(name, search)| {
                        let why = search.refused.as_ref()?;
                        let at = search.hsu_ppm.map_or(String::from("the first load"), |h| {
                            format!("the load after {}%", h as f64 / 1e4)
                        });
                        Some(format!("{} {name}: {at}: {why}", s.name))
                    })
            })
            .collect();
        for r in &refusals {
            out.push_str(&format!("search ended: {r}\n"));
        }
        for s in real.measured.types.iter().flat_map(|r| &r.sets) {
            for (name, search) in [("edf", &s.edf), ("fps", &s.fps)] {
                for (load, rerun) in &search.reruns {
                    out.push_str(&format!(
                        "rerun: {} {name} at {}%: {}\n",
                        s.name,
                        *load as f64 / 1e4,
                        rerun.describe()
                    ));
                }
            }
        }
        if !refusals.is_empty() && !real.no_rt_throttling {
            out.push_str(
                "note: SCHED_DEADLINE admits at most 0.90 of a CPU on Linux 6.12+ (0.95 RT limit minus \
                 the fair server's 0.05), so EDF loads above that are refused; --no-rt-throttling lifts \
                 the admission limit\n",
            );
        }
        if !real.no_rt_throttling {
            out.push_str(
                "note: SCHED_FIFO threads are throttled to 950 ms per second (RT throttling): FPS \
                 above 95 % misses for that reason too; --no-rt-throttling lifts it\n",
            );
        }
        if real.interrupted {
            out.push_str("note: interrupted: later searches were cut short\n");
        }
    }
    out
}

/// The utilization section's CSV: one row per type and world.
pub fn utilization_csv(part: &UtilizationPart) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "world",
        "type",
        "deadlines",
        "periods",
        "sets",
        "mean_hsu_edf",
        "mean_hsu_fps",
        "delta_hsu_pp",
        "max_cpu_load",
        "edf_rc",
        "edf_dm",
        "edf_pr",
        "fps_rc",
        "fps_dm",
        "fps_pr",
        "sets_capped",
        "sets_refused",
    ]);
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let mut sections = vec![("sim", &part.simulated)];
    if let Some(real) = &part.real {
        sections.push(("real-sim", &real.simulated));
        sections.push(("real", &real.measured));
    }
    for (world, s) in sections {
        for r in &s.types {
            let mut row = vec![
                world.to_string(),
                r.name.clone(),
                r.set_type.deadlines.name().to_string(),
                r.set_type.periods.name().to_string(),
                r.sets.len().to_string(),
                opt(r.mean_hsu_edf),
                opt(r.mean_hsu_fps),
                opt(r.delta_hsu_pp),
                opt(r.max_cpu_load),
            ];
            row.extend(counts_cells(r));
            row.extend([r.sets_capped.to_string(), r.sets_refused.to_string()]);
            let _ = w.write_record(row);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
