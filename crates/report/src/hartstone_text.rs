//! `rtlab hartstone` as text and CSV, from its document
//! ([`HartstoneDocument`], in `rtlab_model::hartstone::document` because the
//! runs that fill it are experiment code below this crate).
//!
//! `--csv FILE`: `world,scheduler,test,iterations,utilization_reached,cs_per_s,preemptions,ending_task,ending_at_ns`
//! (extended: `world,scheduler,test,misses,cs_per_s,preemptions,jobs`).

use rtlab_model::hartstone::document::HartstoneDocument;
use rtlab_model::hartstone::{self, EndReason, TestOutcome, EXTENDED_LENGTH};
use rtlab_model::{printable, Nanos};

use crate::{kernel_trace, table};

/// How a PH series ended, for the `ended by` column.
fn ending(outcome: &TestOutcome) -> String {
    match (&outcome.end, &outcome.ending_miss) {
        (EndReason::Miss, Some(m)) => format!(
            "k={}: {} at {}",
            m.iteration,
            printable(&m.task),
            table::ns(m.at_ns)
        ),
        (EndReason::Cap, _) => "no miss (cap)".into(),
        (EndReason::InvalidPool(why), _) => format!("invalid pool: {why}"),
        (EndReason::Refused(why), _) => format!("refused: {why}"),
        _ => "-".into(),
    }
}

/// `; misses by cause: ...` after a traced run's progress line.
pub fn traced_line(summary: Option<&rtlab_model::kernel_trace::KernelTraceSummary>) -> String {
    summary.map_or(String::new(), |k| {
        format!("; {}", kernel_trace::misses_line(k))
    })
}

/// The text of `rtlab hartstone`: the PH or extended table, the kernel
/// trace's misses where traced, the ranking per test.
pub fn human(doc: &HartstoneDocument) -> String {
    let mut out = String::new();
    if doc.interrupted {
        out.push_str("interrupted: a stop signal cut the real-thread series short; the tests finished until then follow\n");
    }
    let kw = Nanos::from_ns(doc.kilo_whet_ns);
    if doc.extended {
        let length = doc
            .extended_length_ns
            .map_or(EXTENDED_LENGTH, Nanos::from_ns);
        let (from, to) = hartstone::ExtendedProfile::overload_window(length);
        out.push_str(&format!(
            "extended Hartstone (Golchin 2017 §4.3): {length}, 48% in [0, {from}), 120% in [{from}, {to}), 48% to the end; kilo-whet {kw} ({}), on-miss {}\n",
            doc.kilo_whet_from, doc.on_miss
        ));
        for note in &doc.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        let header = [
            "test",
            "load along",
            "scheduler",
            "misses",
            "cs/s",
            "preemptions",
            "jobs",
        ];
        let mut t = table::new(&header, &["misses", "cs/s", "preemptions", "jobs"]);
        for &test in &doc.tests {
            for run in &doc.extended_runs {
                if let Some(r) = run.results.iter().find(|r| r.test == test) {
                    t.add_row(vec![
                        test.number().to_string(),
                        format!("{} / {}", r.normal, r.overload),
                        run.label.clone(),
                        r.misses.to_string(),
                        format!("{:.1}", r.context_switches_per_s),
                        r.preemptions.to_string(),
                        r.jobs.to_string(),
                    ]);
                }
            }
        }
        out.push_str(&table::render(&t));
        out.push('\n');
        for run in &doc.extended_runs {
            for r in &run.results {
                if let Some(k) = &r.kernel_trace {
                    out.push_str(&format!(
                        "kernel trace, {} test {}: {}\n",
                        run.label,
                        r.test.number(),
                        kernel_trace::misses_line(k)
                    ));
                }
            }
        }
    } else {
        out.push_str(&format!(
            "Hartstone PH (Golchin 2017 §4.2): iterations of {} until the first deadline miss; kilo-whet {kw} ({}), on-miss {}\n",
            Nanos::from_ns(doc.iteration_duration_ns),
            doc.kilo_whet_from,
            doc.on_miss
        ));
        let header = [
            "test",
            "scheduler",
            "iterations",
            "U reached",
            "cs/s",
            "preemptions",
            "ended by",
        ];
        let mut t = table::new(&header, &["iterations", "U reached", "cs/s", "preemptions"]);
        for &test in &doc.tests {
            for run in &doc.runs {
                if let Some(o) = run.tests.iter().find(|o| o.test == test) {
                    t.add_row(vec![
                        test.number().to_string(),
                        run.label.clone(),
                        o.iterations_completed.to_string(),
                        o.utilization_reached
                            .map_or("-".into(), |u| format!("{u:.3}")),
                        format!("{:.1}", o.context_switches_per_s),
                        o.preemptions.to_string(),
                        ending(o),
                    ]);
                }
            }
        }
        t.wrapping("ended by").optional(&["preemptions", "cs/s"]);
        out.push_str(&table::render(&t));
        out.push('\n');
        // Every real iteration run twice, and what the rerun found.
        for run in &doc.runs {
            for o in &run.tests {
                for r in &o.iterations {
                    if let Some(rerun) = &r.result.rerun {
                        out.push_str(&format!(
                            "rerun, {} test {} iteration {}: {}\n",
                            run.label,
                            o.test.number(),
                            r.iteration,
                            rerun.describe()
                        ));
                    }
                }
            }
        }
        // The iteration that ended each traced series (its misses).
        for run in &doc.runs {
            for o in &run.tests {
                let last = o.iterations.last();
                if let Some((r, k)) = last.and_then(|r| Some((r, r.result.kernel_trace.as_ref()?)))
                {
                    out.push_str(&format!(
                        "kernel trace, {} test {} iteration {}: {}\n",
                        run.label,
                        o.test.number(),
                        r.iteration,
                        kernel_trace::misses_line(k)
                    ));
                }
            }
        }
    }
    out.push_str("\nranking (best first; PH: most iterations, then fewest cs/s; extended: fewest misses, then fewest cs/s)\n");
    let mut t = table::new(&["test", "simulated", "real threads"], &[]);
    for &test in &doc.tests {
        let order = |world| {
            doc.rankings
                .iter()
                .find(|r| r.test == test && r.world == world)
                .map_or("-".to_string(), |r| r.order.join(" > "))
        };
        t.add_row(vec![test.number().to_string(), order("sim"), order("real")]);
    }
    out.push_str(&table::render(&t));
    out.push('\n');
    if doc.extended {
        out.push_str(&format!(
            "Golchin 2017 (figures 4.7-4.8): {}\n",
            hartstone::PAPER_EXTENDED_RANKING
        ));
    }
    table::fit_text(&out)
}

/// `--csv`: one row per scheduler and test (columns in the module doc).
pub fn csv(doc: &HartstoneDocument) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    if doc.extended {
        let _ = w.write_record([
            "world",
            "scheduler",
            "test",
            "misses",
            "cs_per_s",
            "preemptions",
            "jobs",
        ]);
        for run in &doc.extended_runs {
            for r in &run.results {
                let _ = w.write_record([
                    run.world.to_string(),
                    run.scheduler.clone(),
                    r.test.number().to_string(),
                    r.misses.to_string(),
                    r.context_switches_per_s.to_string(),
                    r.preemptions.to_string(),
                    r.jobs.to_string(),
                ]);
            }
        }
    } else {
        let _ = w.write_record([
            "world",
            "scheduler",
            "test",
            "iterations",
            "utilization_reached",
            "cs_per_s",
            "preemptions",
            "ending_task",
            "ending_at_ns",
        ]);
        for run in &doc.runs {
            for o in &run.tests {
                let miss = o.ending_miss.as_ref();
                let _ = w.write_record([
                    run.world.to_string(),
                    run.scheduler.clone(),
                    o.test.number().to_string(),
                    o.iterations_completed.to_string(),
                    o.utilization_reached
                        .map_or(String::new(), |u| u.to_string()),
                    o.context_switches_per_s.to_string(),
                    o.preemptions.to_string(),
                    miss.map_or(String::new(), |m| {
                        rtlab_model::csv_cell(&m.task).into_owned()
                    }),
                    miss.map_or(String::new(), |m| m.at_ns.to_string()),
                ]);
            }
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::hartstone_bars;
    use crate::view::RunView;
    use rtlab_model::catalog::DEFAULT_KILO_WHET;
    use rtlab_model::hartstone::{extended_profile, HartstoneTest, TestConfig};
    use rtlab_sim::{MissRule, SchedulerSpec};
    use rtlab_study::hartstone::{simulated_extended, simulated_series};

    const SCHEDULERS: [&str; 2] = ["edf", "fp:rm"];
    const TESTS: [HartstoneTest; 2] = [HartstoneTest::Frequency5, HartstoneTest::Workloads];

    fn document(extended: bool) -> HartstoneDocument {
        let mut doc = HartstoneDocument {
            extended,
            tests: TESTS.to_vec(),
            kilo_whet_ns: DEFAULT_KILO_WHET.as_ns(),
            kilo_whet_from: "default",
            iteration_duration_ns: hartstone::MIN_WINDOW.as_ns(),
            max_iterations: 4,
            on_miss: "skip".into(),
            runs: Vec::new(),
            extended_runs: Vec::new(),
            rankings: Vec::new(),
            extended_length_ns: None,
            notes: Vec::new(),
            interrupted: false,
        };
        let length = Nanos::from_ns(hartstone::MIN_WINDOW.as_ns() * 8);
        for name in SCHEDULERS {
            let spec: SchedulerSpec = name.parse().unwrap();
            if extended {
                let profiles: Vec<_> = TESTS
                    .iter()
                    .map(|&t| extended_profile(t, DEFAULT_KILO_WHET).unwrap())
                    .collect();
                doc.extended_runs.push(
                    simulated_extended(name, &spec, MissRule::Skip, &profiles, length).unwrap(),
                );
            } else {
                let configs: Vec<TestConfig> = TESTS
                    .iter()
                    .map(|&test| TestConfig {
                        test,
                        kilo_whet: DEFAULT_KILO_WHET,
                        window: hartstone::MIN_WINDOW,
                        max_iterations: 4,
                        confirm: true,
                    })
                    .collect();
                doc.runs
                    .push(simulated_series(name, &spec, MissRule::Skip, &configs).unwrap());
            }
        }
        doc.extended_length_ns = extended.then_some(length.as_ns());
        doc
    }

    /// The plots read the stored document by its keys (a stored run of any
    /// version must still draw): they read what the typed document writes.
    #[test]
    fn the_plots_read_back_what_the_document_holds() {
        let doc = document(false);
        let run = RunView::unsaved("hartstone", serde_json::to_value(&doc).unwrap());
        let bars = hartstone_bars(&run, false, "iterations_completed");
        assert_eq!(bars.names, ["sim edf", "sim fp:rm"]);
        let expected: Vec<(String, Vec<Option<f64>>)> = TESTS
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let values = doc
                    .runs
                    .iter()
                    .map(|r| Some(f64::from(r.tests[i].iterations_completed)))
                    .collect();
                (format!("test {}", t.number()), values)
            })
            .collect();
        assert_eq!(bars.groups, expected);
        let switches = hartstone_bars(&run, false, "context_switches_per_s");
        assert_eq!(
            switches.groups[1].1,
            vec![
                Some(doc.runs[0].tests[1].context_switches_per_s),
                Some(doc.runs[1].tests[1].context_switches_per_s)
            ]
        );

        let doc = document(true);
        let run = RunView::unsaved("hartstone", serde_json::to_value(&doc).unwrap());
        let bars = hartstone_bars(&run, true, "misses");
        let misses: Vec<Option<f64>> = doc
            .extended_runs
            .iter()
            .map(|r| Some(r.results[0].misses as f64))
            .collect();
        assert_eq!(bars.groups[0], ("test 1".to_string(), misses));
    }

    /// One CSV row per scheduler and test, in the documented columns; the
    /// table names every run.
    #[test]
    fn csv_and_text_hold_every_run_and_test() {
        for extended in [false, true] {
            let doc = document(extended);
            let text = csv(&doc);
            let rows: Vec<&str> = text.lines().collect();
            assert_eq!(rows.len(), 1 + SCHEDULERS.len() * TESTS.len(), "{text}");
            let header = if extended {
                "world,scheduler,test,misses,cs_per_s,preemptions,jobs"
            } else {
                "world,scheduler,test,iterations,utilization_reached,cs_per_s,preemptions,ending_task,ending_at_ns"
            };
            assert_eq!(rows[0], header);
            assert!(rows[1].starts_with("sim,edf,1,"), "{text}");
            assert!(rows[4].starts_with("sim,fp:rm,3,"), "{text}");
            let human = human(&doc);
            for name in SCHEDULERS {
                assert!(human.contains(&format!("sim {name}")), "{human}");
            }
        }
    }
}
