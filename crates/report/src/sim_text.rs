//! `rtlab sim`'s text: a headline, one row per task, the totals, then what
//! only some runs have (a deadlock, Linux's throttling, the processors of
//! a multiprocessor run).

use rtlab_model::printable;
use rtlab_model::results::sim_report::Deadlock;
use rtlab_model::results::SimReport;
use rtlab_model::Nanos;

use crate::table;

/// The human summary of a simulated run of the set from `origin`.
pub fn describe(r: &SimReport, origin: &str) -> String {
    let tick = match (&r.timer, r.tick_ns) {
        (Some(linux), _) => linux.clone(),
        (None, Some(t)) => format!("tick {}", Nanos::from_ns(t)),
        (None, None) => "tickless".to_string(),
    };
    let mut out = format!(
        "{} ({}) under {} for {}: {tick}, protocol {}, on-miss {}, seed {}\n\n",
        printable(&r.taskset),
        printable(origin),
        r.scheduler,
        Nanos::from_ns(r.duration_ns),
        r.protocol,
        r.on_miss,
        r.seed
    );
    out.push_str(&tasks_table(r));
    out.push_str(&format!(
        "\n\ntotal: {} released, {} completed, {} deadline misses{}, {} preemptions, {} context switches ({}/s), overhead {}, idle {}\n",
        r.released,
        r.completed,
        r.deadline_misses,
        r.first_miss_ns.map_or(String::new(), |f| format!(" (first at {})", table::ns(f))),
        r.preemptions,
        r.context_switches,
        table::number(r.context_switches_per_s),
        table::ns(r.overhead_ns),
        table::ns(r.idle_ns),
    ));
    if let Some(d) = &r.deadlock {
        out.push_str(&deadlock_line(d));
    }
    if let Some(t) = &r.throttling {
        out.push_str(&format!(
            "throttling ({}): RT throttling took {} in {} blackouts, the fair server {} in {} runs\n",
            t.model,
            table::ns(t.rt_throttled_ns),
            t.rt_throttles,
            table::ns(t.fair_server_ns),
            t.fair_server_runs
        ));
    }
    if !r.processors.is_empty() {
        out.push_str(&processors_lines(r));
    }
    table::fit_text(&out)
}

/// One row per task: misses and response times first, counts after.
fn tasks_table(r: &SimReport) -> String {
    let header = [
        "task",
        "misses",
        "R min",
        "R mean",
        "R max",
        "max lateness",
        "first miss",
        "released",
        "completed",
        "preempted",
        "aborted",
        "skipped",
    ];
    let mut t = table::new(&header, &header[1..]);
    for m in &r.tasks {
        t.add_row(vec![
            printable(&m.name).into_owned(),
            m.misses.to_string(),
            table::opt_ns(m.min_response_ns),
            table::opt_ns(m.mean_response_ns),
            table::opt_ns(m.max_response_ns),
            m.max_lateness_ns.map_or("-".into(), table::signed_ns),
            table::opt_ns(m.first_miss_ns),
            m.released.to_string(),
            m.completed.to_string(),
            m.preemptions.to_string(),
            m.aborted.to_string(),
            m.skipped.to_string(),
        ]);
    }
    t.optional(&["skipped", "aborted", "R min", "completed", "max lateness"]);
    t.render()
}

/// A multiprocessor run's migrations (per task that migrated, and in all)
/// and each processor's utilization.
fn processors_lines(r: &SimReport) -> String {
    let per_task: Vec<String> = r
        .tasks
        .iter()
        .filter(|t| t.migrations > 0)
        .map(|t| format!("{} {}", printable(&t.name), t.migrations))
        .collect();
    let mut out = format!("migrations: {}", r.migrations);
    if !per_task.is_empty() {
        out.push_str(&format!(" ({})", per_task.join(", ")));
    }
    out.push('\n');
    for p in &r.processors {
        out.push_str(&format!(
            "cpu {}: utilization {} ({} executed, overhead {})\n",
            p.cpu,
            table::percent(p.utilization),
            table::ns(p.executed_ns),
            table::ns(p.overhead_ns)
        ));
    }
    out
}

/// `DEADLOCK at 5ms: b (job 0) waits for r1 held by a (job 0), a (job 0)
/// waits for r2 held by b (job 0)`, and how many more formed.
fn deadlock_line(d: &Deadlock) -> String {
    let links: Vec<String> = d
        .cycle
        .iter()
        .map(|l| {
            format!(
                "{} (job {}) waits for {} held by {} (job {})",
                printable(&l.task),
                l.job,
                printable(&l.waits_for),
                printable(&l.held_by),
                l.held_job
            )
        })
        .collect();
    let more = match d.count {
        1 => String::new(),
        n => format!(" ({n} deadlocks in the run)"),
    };
    format!(
        "DEADLOCK at {}: {}; none of them can proceed{more}\n",
        Nanos::from_ns(d.at_ns),
        links.join(", ")
    )
}
