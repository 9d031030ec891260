//! `--repeat N` on `rtlab run` and `rtlab compare`: every figure of N runs
//! of one set, as its median and spread (smallest to largest), with how
//! many of the runs were disturbed (their verdicts).
//!
//! The median of an even number of runs is the mean of the two middle
//! values.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::table;

/// One figure over the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// The figure, e.g. `t2 misses`.
    pub figure: String,
    /// Median over the runs that had it.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Runs that had a value.
    pub runs: usize,
}

/// The figures of repeated runs, in the order first added.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Repeated {
    /// Per figure.
    pub figures: Vec<Spread>,
    /// Each run's verdict line, in order.
    pub verdicts: Vec<String>,
    /// Runs whose verdict is `disturbed`.
    pub disturbed: usize,
    #[serde(skip)]
    values: BTreeMap<String, (usize, Vec<f64>)>,
}

/// The median of sorted `v` (not empty).
pub fn median(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl Repeated {
    /// Adds one run: its figures (`None`: the run has no value) and verdict.
    pub fn add_run(&mut self, figures: &[(String, Option<f64>)], verdict: &str) {
        for (name, v) in figures {
            let order = self.values.len();
            let e = self
                .values
                .entry(name.clone())
                .or_insert((order, Vec::new()));
            if let Some(v) = v {
                e.1.push(*v);
            }
        }
        if verdict.starts_with("disturbed") {
            self.disturbed += 1;
        }
        self.verdicts.push(verdict.to_string());
        let mut order: Vec<(&String, &(usize, Vec<f64>))> = self.values.iter().collect();
        order.sort_by_key(|(_, (o, _))| *o);
        self.figures = order
            .into_iter()
            .filter(|(_, (_, v))| !v.is_empty())
            .map(|(name, (_, v))| {
                let mut v = v.clone();
                v.sort_by(f64::total_cmp);
                Spread {
                    figure: name.clone(),
                    median: median(&v),
                    min: v[0],
                    max: v[v.len() - 1],
                    runs: v.len(),
                }
            })
            .collect();
    }

    /// The table: figure, median, min, max; then the verdicts.
    pub fn text(&self, unit_ns: impl Fn(&str) -> bool) -> String {
        let show = |name: &str, x: f64| {
            if unit_ns(name) {
                table::opt_ns(Some(x.round() as u64))
            } else if x.fract() == 0.0 {
                format!("{x:.0}")
            } else {
                format!("{x:.1}")
            }
        };
        let header = ["figure", "median", "min", "max", "runs"];
        let mut t = table::new(&header, &header[1..]);
        for s in &self.figures {
            t.add_row(vec![
                s.figure.clone(),
                show(&s.figure, s.median),
                show(&s.figure, s.min),
                show(&s.figure, s.max),
                s.runs.to_string(),
            ]);
        }
        let mut out = format!(
            "over {} runs ({} disturbed): median and spread of each figure\n\n",
            self.verdicts.len(),
            self.disturbed
        );
        out.push_str(&table::render(&t));
        out.push('\n');
        for (i, v) in self.verdicts.iter().enumerate() {
            let _ = writeln!(out, "run {}: {v}", i + 1);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_spreads_over_odd_and_even_counts() {
        assert_eq!(median(&[1.0, 5.0, 9.0]), 5.0);
        assert_eq!(median(&[1.0, 3.0, 5.0, 9.0]), 4.0);
        let mut r = Repeated::default();
        for (m, v) in [(40.0, "clean"), (0.0, "disturbed: x"), (38.0, "clean")] {
            r.add_run(
                &[("t2 misses".into(), Some(m)), ("t2 R max".into(), None)],
                v,
            );
        }
        assert_eq!(r.figures.len(), 1);
        assert_eq!(
            r.figures[0],
            Spread {
                figure: "t2 misses".into(),
                median: 38.0,
                min: 0.0,
                max: 40.0,
                runs: 3
            }
        );
        assert_eq!(r.disturbed, 1);
        assert!(r.text(|_| false).contains("over 3 runs (1 disturbed)"));
    }
}
