//! `rtlab run`'s text: a headline, one row per task, the notes the columns
//! need, the totals, then what the run changed on the way (phases,
//! SCHED_DEADLINE budgets) and what disturbed it (its account and verdict,
//! `disturbance_text`). Each part is one function: a new part of a real
//! run's account is one more line in [`describe`].

use rtlab_model::{printable, Nanos};
use rtlab_rt::executor::placement;
use rtlab_rt::executor::RunReport;

use crate::table;

/// The human summary of a real run of the set from `origin`.
pub fn describe(r: &RunReport, origin: &str) -> String {
    let parts = [
        headline(r, origin),
        tasks_table(r),
        notes(r),
        totals(r),
        changes(r),
        // What disturbed the run, and the verdict on it (issue 35).
        r.disturbance
            .as_ref()
            .map_or_else(String::new, crate::disturbance_text::account_text),
    ];
    let text: Vec<String> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    table::fit_text(&format!("{}\n", text.join("\n\n")))
}

/// `SET (ORIGIN) on real threads under POLICY (pinned to CPU 1) for 1s: ...`.
fn headline(r: &RunReport, origin: &str) -> String {
    let placement = match (&r.cpus, r.cpu) {
        (Some(cpus), _) => format!("on CPUs {}", placement::list(cpus)),
        (None, Some(c)) => format!("pinned to CPU {c}"),
        (None, None) => "not pinned".to_string(),
    };
    format!(
        "{} ({}) on real threads under {} ({placement}) for {}: on-miss {}, lag controller {}, RT throttling {}",
        printable(&r.taskset),
        printable(origin),
        r.policy,
        Nanos::from_ns(r.ended_ns),
        r.on_miss,
        r.lag_controller_kind.as_deref().unwrap_or("off"),
        r.rt_throttling,
    )
}

/// One row per task: misses and times first, counts after, the thread's
/// attributes last (the first left out on a narrow terminal).
fn tasks_table(r: &RunReport) -> String {
    let locks = r.tasks.iter().any(|m| m.max_blocked_ns.is_some());
    let multi = r.cpus.is_some();
    let mut header = vec![
        "task",
        "misses",
        "R mean",
        "R max",
        "lag mean",
        "lag max",
        "first miss",
        "released",
        "completed",
        "preempted",
        "start misses",
        "skipped",
    ];
    if locks {
        header.push("lock wait max");
    }
    if multi {
        header.extend(["cpus", "migrated jobs", "kernel migrations"]);
    }
    header.push("thread");
    let mut t = table::new(&header, &header[1..header.len() - 1]);
    for m in &r.tasks {
        let mut row = vec![
            printable(&m.name).into_owned(),
            m.misses.to_string(),
            table::opt_ns(m.mean_response_ns),
            table::opt_ns(m.max_response_ns),
            table::opt_ns(m.mean_lag_ns),
            table::opt_ns(m.max_lag_ns),
            table::opt_ns(m.first_miss_ns),
            m.released.to_string(),
            m.completed.to_string(),
            m.preemptions.to_string(),
            m.start_deadline_misses.to_string(),
            m.skipped.to_string(),
        ];
        if locks {
            row.push(table::opt_ns(m.max_blocked_ns));
        }
        if multi {
            row.push(m.cpus.as_deref().map_or("-".into(), placement::list));
            row.push(m.migrations.to_string());
            row.push(m.kernel_migrations.map_or("-".into(), |k| k.to_string()));
        }
        row.push(m.thread_policy.clone());
        t.add_row(row);
    }
    t.optional(&[
        "thread",
        "kernel migrations",
        "start misses",
        "skipped",
        "completed",
        "cpus",
        "lag mean",
        "preempted",
    ]);
    t.render()
}

/// What the columns that need it mean.
fn notes(r: &RunReport) -> String {
    let mut out = Vec::new();
    if r.tasks.iter().any(|m| m.max_blocked_ns.is_some()) {
        out.push(format!(
            "critical sections under --protocol {}: lock wait = time a job spent inside pthread_mutex_lock",
            r.protocol
        ));
    }
    if r.cpus.is_some() {
        out.push(
            "migrated jobs: jobs that finished on another CPU than they started on (sched_getcpu); \
             kernel migrations: every move of the thread over the run, between jobs too (se.nr_migrations)"
                .to_string(),
        );
    }
    out.join("\n\n")
}

/// `total: 170 released, ...`.
fn totals(r: &RunReport) -> String {
    format!(
        "total: {} released, {} completed, {} deadline misses{}, {} start-deadline misses, {} preemptions, {} context switches ({}/s)",
        r.released,
        r.completed,
        r.deadline_misses,
        r.first_miss_ns
            .map_or(String::new(), |f| format!(" (first at {})", table::ns(f))),
        r.start_deadline_misses,
        r.preemptions,
        r.context_switches,
        table::number(r.context_switches_per_s),
    )
}

/// The phases' boundaries and the SCHED_DEADLINE budgets changed there.
fn changes(r: &RunReport) -> String {
    let mut out = Vec::new();
    if !r.phases.is_empty() {
        out.push(format!(
            "phases (new set from each boundary): {}",
            r.phases.join(", ")
        ));
    }
    if let Some(b) = r.budget_changes {
        out.push(format!(
            "SCHED_DEADLINE budgets changed at phase boundaries: {} sched_setattr calls, {} refused, longest {}",
            b.changes,
            b.refused,
            table::ns(b.max_ns)
        ));
    }
    out.join("\n")
}
