//! `rtlab sweep`'s text and CSV: per utilization step, the share of the
//! random sets each test accepts ([`describe`], percentages as in the
//! report), and the same ratios at full precision for a spreadsheet
//! ([`csv`]).

use rtlab_analysis::sweep::SweepResult;

use crate::table;

/// `--csv`: `utilization,sets,<test>...`, numbers as Rust prints them.
pub fn csv(result: &SweepResult) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let header = ["utilization".to_string(), "sets".to_string()];
    let names = result.test_names();
    // Writing to a Vec cannot fail.
    let _ = out.write_record(header.into_iter().chain(names.iter().cloned()));
    for row in &result.rows {
        let ratios = (0..names.len()).map(|k| row.ratio(k).to_string());
        let cells = [row.utilization.to_string(), row.sets.to_string()];
        let _ = out.write_record(cells.into_iter().chain(ratios));
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The table: per utilization step, each test's acceptance ratio, and the
/// sets without a verdict of each test that had any.
pub fn describe(result: &SweepResult) -> String {
    let names = result.test_names();
    // A `TEST ?` column (sets without a verdict) for each test with any.
    let undecided: Vec<usize> = (0..names.len())
        .filter(|&k| result.rows.iter().any(|r| r.inconclusive[k] > 0))
        .collect();
    let undecided_names: Vec<String> = undecided
        .iter()
        .map(|&k| format!("{} ?", names[k]))
        .collect();
    let cpus = result.spec.cpus;
    let mut header = vec!["U"];
    if cpus > 1 {
        header.push("U/m");
    }
    header.extend(names.iter().map(String::as_str));
    header.extend(undecided_names.iter().map(String::as_str));
    let mut t = table::new(&header, &header);
    for row in &result.rows {
        let mut cells = vec![table::percent(row.utilization)];
        if cpus > 1 {
            cells.push(table::percent(row.utilization / f64::from(cpus)));
        }
        cells.extend((0..names.len()).map(|k| table::percent(row.ratio(k))));
        cells.extend(undecided.iter().map(|&k| row.inconclusive[k].to_string()));
        t.add_row(cells);
    }
    let note = if undecided.is_empty() {
        ""
    } else {
        "TEST ?: sets without a verdict (a sufficient test that did not pass, or an exact test that gave up)\n"
    };
    let timer = result
        .timer
        .map_or(String::new(), |t| format!(", overhead-aware tests {t}"));
    let platform = if cpus > 1 {
        format!(" on {cpus} processors (U: total utilization)")
    } else {
        String::new()
    };
    t.optional(
        &undecided_names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    table::fit_text(&format!(
        "schedulability ratio (sets accepted): {} sets of {} tasks per step{platform}, seed {}{timer}\n{}\n{note}",
        result.spec.sets,
        result.spec.tasks,
        result.spec.seed,
        table::render(&t)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_analysis::sweep::{SweepColumn, SweepSpec};

    #[test]
    fn the_csv_has_a_ratio_column_per_test_in_the_documented_bytes() {
        let test = |t: &str| SweepColumn::parse(t).unwrap();
        let row =
            |utilization: f64, sets: u64, accepted: Vec<u64>| rtlab_analysis::sweep::SweepRow {
                utilization,
                sets,
                inconclusive: vec![0; accepted.len()],
                rejected: accepted.iter().map(|a| sets - a).collect(),
                accepted,
            };
        let result = SweepResult {
            spec: SweepSpec {
                tests: vec![test("rm:rta"), test("edf:edf-demand")],
                ..SweepSpec::default()
            },
            timer: None,
            rows: vec![
                row(0.5, 4, vec![4, 4]),
                row(0.95, 3, vec![1, 2]),
                row(1.0, 0, vec![0, 0]),
            ],
        };
        assert_eq!(
            csv(&result),
            "utilization,sets,rm:rta,edf:edf-demand\n\
             0.5,4,1,1\n\
             0.95,3,0.3333333333333333,0.6666666666666666\n\
             1,0,0,0\n"
        );
    }
}
