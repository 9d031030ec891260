//! `rtlab compare`'s text: a real run beside the simulation of the same
//! set ([`describe`]), or beside rt-app's run of it ([`describe_rtapp`]).

use rtlab_model::results;
use rtlab_model::results::SimReport;
use rtlab_model::{printable, Nanos};
use rtlab_rt::executor::RunReport;
use rtlab_rt::rtapp::RtAppComparison;

use crate::disturbance_text::DifferingTask;
use crate::table;

/// `rtlab compare --json`: a real run and its simulation.
pub type Comparison = results::Comparison<RunReport, SimReport>;

/// The mark of a cell that differs by more than the tolerance.
const MARK: &str = " !";

/// The side-by-side table; differing cells carry a `!` (bold red when
/// `color`), then what the columns mean.
pub fn describe(c: &Comparison, origin: &str, tolerance_pct: f64, color: bool) -> String {
    let mark = |text: String, differs: bool| match differs {
        false => text,
        true => format!("{text}{MARK}"),
    };
    let mut out = format!(
        "{} ({}): real threads under {} vs the simulator's {} for {}\n\n",
        printable(&c.taskset),
        printable(origin),
        c.policy,
        c.scheduler,
        Nanos::from_ns(c.real.ended_ns)
    );
    let locks = c.tasks.iter().any(|t| t.locks());
    let mut header = vec![
        "task",
        "misses real",
        "misses sim",
        "R max real",
        "R max sim",
        "delta",
        "R mean real",
        "R mean sim",
        "preempted real",
        "preempted sim",
    ];
    if locks {
        header.extend(["lock wait max real", "lock wait max sim"]);
    }
    let multi = c.real.cpus.is_some();
    if multi {
        header.extend([
            "migrated jobs real",
            "migrations sim",
            "kernel migrations real",
        ]);
    }
    let mut t = table::new(&header, &header[1..]);
    for task in &c.tasks {
        let differs = |f: &str| task.differences.iter().any(|d| d == f);
        let mut row = vec![
            printable(&task.name).into_owned(),
            mark(task.misses.0.to_string(), differs("misses")),
            task.misses.1.to_string(),
            mark(
                table::opt_ns(task.max_response_ns.0),
                differs("max_response"),
            ),
            table::opt_ns(task.max_response_ns.1),
            task.max_response_delta_ns.map_or("-".into(), |d| match d {
                d if d < 0 => table::signed_ns(d),
                d => format!("+{}", table::signed_ns(d)),
            }),
            mark(
                table::opt_ns(task.mean_response_ns.0),
                differs("mean_response"),
            ),
            table::opt_ns(task.mean_response_ns.1),
            task.preemptions.0.to_string(),
            task.preemptions.1.to_string(),
        ];
        if locks {
            row.push(table::opt_ns(task.max_blocked_ns.0));
            row.push(table::opt_ns(task.max_blocked_ns.1));
        }
        if multi {
            row.push(task.migrations.0.to_string());
            row.push(task.migrations.1.to_string());
            let kernel = c
                .real
                .tasks
                .iter()
                .find(|t| t.name == task.name)
                .and_then(|t| t.kernel_migrations);
            row.push(kernel.map_or("-".into(), |k| k.to_string()));
        }
        t.add_row(row);
    }
    t.optional(&[
        "kernel migrations real",
        "preempted sim",
        "preempted real",
        "lock wait max sim",
        "migrations sim",
        "R mean sim",
        "R mean real",
    ]);
    let rendered = t.render();
    out.push_str(&match color {
        true => rendered.replace(MARK, " \x1b[1;31m!\x1b[0m"),
        false => rendered,
    });
    let differing: Vec<std::borrow::Cow<str>> = c
        .tasks
        .iter()
        .filter(|t| !t.differences.is_empty())
        .map(|t| printable(&t.name))
        .collect();
    out.push_str(&format!(
        "\n\nmisses: real {} vs simulated {} ({}); response times within {tolerance_pct}%: {}\n",
        c.real.deadline_misses,
        c.sim.deadline_misses,
        if c.misses_agree { "agree" } else { "DIFFER" },
        if differing.is_empty() {
            "every task".to_string()
        } else {
            format!("not for {}", differing.join(", "))
        },
    ));
    out.push_str(
        "real R includes wake-up latency and kernel overheads the model leaves out; \
         real preemptions are involuntary context switches during jobs (interrupts and kernel threads count too)\n",
    );
    if multi {
        out.push_str(
            "migrations: real = jobs that finished on another CPU than they started on (sched_getcpu; a job \
             moved and moved back counts 0), sim = every resumption on another processor; kernel = every move \
             of the thread, between jobs too\n",
        );
    }
    if locks {
        out.push_str(&format!(
            "critical sections under --protocol {}: lock wait = time a job spent waiting to take a lock \
             (real: inside pthread_mutex_lock; simulated: blocked on the resource; 0 when a ceiling \
             keeps the job from asking)\n",
            c.real.protocol
        ));
    }
    // What disturbed the real run, beside the tasks whose misses differ.
    if let Some(d) = &c.real.disturbance {
        let traced = c.real.kernel_trace.as_ref().and_then(|k| k.summary());
        let differing: Vec<DifferingTask> = c
            .tasks
            .iter()
            .filter(|t| t.misses.0 != t.misses.1)
            .map(|t| DifferingTask {
                name: printable(&t.name).into_owned(),
                real: t.misses.0,
                simulated: t.misses.1,
                disturbed: traced.map(|k| k.disturbed_misses.get(&t.name).copied().unwrap_or(0)),
            })
            .collect();
        out.push_str(&crate::disturbance_text::compare_note(d, &differing));
    }
    table::fit_text(&out)
}

/// `compare --with rt-app`: the side-by-side table, then what the columns
/// mean.
pub fn describe_rtapp(c: &RtAppComparison, origin: &str) -> String {
    let mut out = format!(
        "{} ({}): rtlab run vs rt-app under {} for {}, calibration {}{}\n\n",
        printable(&c.taskset),
        printable(origin),
        c.policy,
        Nanos::from_ns(c.rtapp.duration_ns),
        c.rtapp.calibration,
        c.rtapp
            .ns_per_loop
            .map_or(String::new(), |ns| format!(" ({ns} ns per loop)")),
    );
    let header = [
        "task",
        "C",
        "jobs rtlab",
        "jobs rt-app",
        "misses rtlab",
        "misses rt-app",
        "wake mean rtlab",
        "wake mean rt-app",
        "wake max rtlab",
        "wake max rt-app",
        "R mean rtlab",
        "R mean rt-app",
        "R max rtlab",
        "R max rt-app",
        "rt-app run mean",
        "run vs C",
    ];
    let mut t = table::new(&header, &header[1..]);
    for task in &c.tasks {
        t.add_row(vec![
            printable(&task.name).into_owned(),
            table::ns(task.wcet_ns),
            task.jobs.0.to_string(),
            task.jobs.1.to_string(),
            task.misses.0.to_string(),
            task.misses.1.to_string(),
            table::opt_ns(task.mean_wakeup_latency_ns.0),
            table::opt_ns(task.mean_wakeup_latency_ns.1),
            table::opt_ns(task.max_wakeup_latency_ns.0),
            table::opt_ns(task.max_wakeup_latency_ns.1),
            table::opt_ns(task.mean_response_ns.0),
            table::opt_ns(task.mean_response_ns.1),
            table::opt_ns(task.max_response_ns.0),
            table::opt_ns(task.max_response_ns.1),
            table::opt_ns(task.rtapp_mean_run_ns),
            task.rtapp_run_overshoot_pct
                .map_or("-".to_string(), |p| format!("{p:+.1}%")),
        ]);
    }
    t.optional(&[
        "jobs rt-app",
        "jobs rtlab",
        "wake mean rtlab",
        "wake mean rt-app",
        "R mean rtlab",
        "R mean rt-app",
        "rt-app run mean",
        "C",
    ]);
    out.push_str(&t.render());
    out.push_str(
        "\n\nwake: rtlab's lag (start - release) vs rt-app's wu_lat (timer wake-up); R: release to the \
         end of the job (rt-app: timer period - slack, whole us); run vs C: rt-app's mean wall-clock \
         time in `run` over the requested C (its calibrated loop's error, plus preemption for lower \
         priorities); rtlab executes exactly C of CPU time per job\n",
    );
    table::fit_text(&out)
}

/// `compare --dispatcher`'s job-for-job lines: how many jobs each side
/// had and matched, how many agree on release, verdict and response (within
/// the dispatch latency's p99.9), the spread of the response differences,
/// the largest one and the first verdict that differs.
pub fn describe_jobs(a: &rtlab_model::results::JobAgreement, set: &rtlab_model::TaskSet) -> String {
    let name = |task: usize| {
        set.tasks
            .get(task)
            .map_or_else(|| task.to_string(), |t| printable(&t.name).into_owned())
    };
    let mut out = format!(
        "\njob for job: {} real, {} simulated, {} on both; releases agree {}/{}; misses agree {}/{}; \
         responses within {} (the dispatch latency's p99.9) {}/{}: {}\n",
        a.real_jobs,
        a.sim_jobs,
        a.matched,
        a.releases_agree,
        a.matched,
        a.misses_agree,
        a.matched,
        table::ns(a.tolerance_ns),
        a.responses_within,
        a.responses_compared,
        if a.agrees() { "AGREE" } else { "DIFFER" }
    );
    out.push_str(&format!(
        "  |real - simulated| response: median {}, p99 {}\n",
        table::ns(a.difference_p50_ns),
        table::ns(a.difference_p99_ns)
    ));
    if let Some(l) = &a.largest {
        out.push_str(&format!(
            "  largest response difference: {} job {}: real {}, simulated {}\n",
            name(l.task),
            l.job,
            l.real_response_ns.map_or("-".into(), table::ns),
            l.sim_response_ns.map_or("-".into(), table::ns),
        ));
    }
    if let Some(m) = &a.first_miss_difference {
        out.push_str(&format!(
            "  first miss that differs: {} job {}: real {}, simulated {}\n",
            name(m.task),
            m.job,
            if m.real_missed { "missed" } else { "met" },
            if m.sim_missed { "missed" } else { "met" },
        ));
    }
    table::fit_text(&out)
}

/// The header of `compare --dispatcher --jobs FILE.csv`.
pub const JOB_PAIRS_HEADER: &str = "task,job,release_ns,deadline_ns,real_start_ns,real_finish_ns,real_response_ns,real_missed,sim_start_ns,sim_finish_ns,sim_response_ns,sim_missed,difference_ns";

/// `compare --dispatcher --jobs FILE.csv`: one row per job of either side,
/// paired by task and number ([`results::pair_jobs`]), in task then number
/// order: the release and deadline (the real side's; the simulated one's
/// for a job only it has), the real and the simulated start, finish,
/// response and verdict side by side, and `difference_ns` = real - simulated response (empty
/// where either side did not finish it; a side without the job has empty
/// cells). `ended`: how long the runs lasted (an unfinished job missed
/// when its deadline was reached). Task names are quoted as RFC 4180 says
/// and guarded against spreadsheet formulas ([`rtlab_model::csv_cell`]).
pub fn job_pairs_csv(
    real: &[results::JobRecord],
    sim: &[results::JobRecord],
    ended: Nanos,
    set: &rtlab_model::TaskSet,
) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(JOB_PAIRS_HEADER.split(','));
    let cell = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
    for (r, s) in results::pair_jobs(real, sim) {
        let Some(any) = r.or(s) else { continue };
        let name = set.tasks.get(any.task).map_or_else(
            || any.task.to_string(),
            |t| rtlab_model::csv_cell(&t.name).into_owned(),
        );
        let side = |j: Option<&results::JobRecord>| {
            [
                cell(j.and_then(|j| j.start).map(Nanos::as_ns)),
                cell(j.and_then(|j| j.finish).map(Nanos::as_ns)),
                cell(j.and_then(|j| j.response()).map(Nanos::as_ns)),
                j.map_or_else(String::new, |j| j.missed(ended).to_string()),
            ]
        };
        let difference = match (r.and_then(|j| j.response()), s.and_then(|j| j.response())) {
            (Some(a), Some(b)) => (a.as_ns() as i128 - b.as_ns() as i128).to_string(),
            _ => String::new(),
        };
        let mut row = vec![
            name,
            any.job.to_string(),
            any.release.as_ns().to_string(),
            any.deadline.as_ns().to_string(),
        ];
        row.extend(side(r));
        row.extend(side(s));
        row.push(difference);
        let _ = w.write_record(&row);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod job_pairs_tests {
    use super::*;
    use rtlab_model::results::JobRecord;
    use rtlab_model::{Task, TaskSet};

    #[test]
    fn job_pairs_are_one_row_per_job_of_either_side() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "s",
            vec![
                Task::new("=a", ms(10), ms(1)),
                Task::new("b", ms(20), ms(2)),
            ],
        );
        let done = |task, job, release: u64, finish: u64| JobRecord {
            start: Some(ms(release)),
            finish: Some(ms(finish)),
            ..JobRecord::unstarted(task, job, ms(release), ms(release + 10))
        };
        let real = [done(1, 0, 0, 12), done(0, 0, 0, 1)];
        let sim = [done(0, 0, 0, 2), done(1, 0, 0, 9), done(1, 1, 20, 22)];
        let csv = job_pairs_csv(&real, &sim, ms(30), &set);
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows[0], JOB_PAIRS_HEADER);
        assert_eq!(
            rows[1..],
            [
                "'=a,0,0,10000000,0,1000000,1000000,false,0,2000000,2000000,false,-1000000",
                "b,0,0,10000000,0,12000000,12000000,true,0,9000000,9000000,false,3000000",
                "b,1,20000000,30000000,,,,,20000000,22000000,2000000,false,",
            ]
        );
    }
}
