//! `rtlab compare --dispatcher -s SCHEDULER`: a run by rtlab's dispatcher
//! against the simulation of the same scheduler, job for job.
//!
//! The simulator runs the scheduler the dispatcher ran, with the run's own
//! measured costs as its overheads (`DispatcherCosts::as_overheads`: a
//! release costs the timer's wake-up latency, a scheduler invocation the
//! decide part of a turn, a switch the dispatch latency; none under a
//! global scheduler, whose simulation models no per-event cost), the same tick,
//! phases, protocol and overrun rule, for as long as the run lasted. Then
//! every job is matched by task and number: the same release, the same
//! verdict (met or missed), responses within the dispatch latency's p99.9.

use std::io::{IsTerminal, Write as _};
use std::process::ExitCode;

use rtlab_model::file::OutputFile;
use rtlab_model::results::{compare_jobs, compare_tasks, EachJob, JobRecord};
use rtlab_model::{printable, Nanos};
use rtlab_rt::dispatcher::DispatchConfig;
use rtlab_rt::executor::{JobList, JobSink};
use rtlab_sim::SimConfig;

use super::{CompareArgs, Comparison};
use crate::usage::usage;

/// Runs the comparison.
pub fn run(args: &CompareArgs, d: &DispatchConfig) -> anyhow::Result<ExitCode> {
    let mut cfg = args.flags.config()?;
    let loaded = rtlab_model::file::load(&args.flags.taskset)?;
    let placed = args.flags.place(loaded.set, &mut cfg)?;
    let spec = d.scheduler.clone();
    // The simulator's refusals come before the real run.
    let mut probe = SimConfig::new(Nanos::from_ns(1));
    probe.protocol = d.protocol;
    probe.tick = d.tick;
    rtlab_sim::simulate(&placed, &spec, &probe).map_err(|e| {
        usage(format!(
            "--scheduler {spec} with --dispatcher: the simulator refuses it: {}",
            printable(&e.to_string())
        ))
    })?;
    // `--jobs` is opened before the run: a path that cannot be written is
    // refused before anything is measured.
    let jobs_file = args
        .jobs
        .as_ref()
        .map(|p| {
            OutputFile::create(p)
                .map_err(|e| anyhow::anyhow!("--jobs: cannot write {}: {e}", p.display()))
        })
        .transpose()?;
    let saver = args
        .save
        .begin(rtlab_store::RunKind::Compare, Some(&args.flags.taskset))?;
    let real_jobs = JobList::new();
    let sinks: Vec<Box<dyn JobSink + Send>> = vec![Box::new(real_jobs.clone())];
    let crate::real_run::Executed {
        set,
        origin,
        report: real,
        ..
    } = crate::real_run::execute(&args.flags, &[], sinks, saver.as_ref())?;
    let costs = real.dispatcher.clone().unwrap_or_default();
    let ended = Nanos::from_ns(real.ended_ns);
    let mut sim_cfg = SimConfig::new(ended.max(Nanos::from_ns(1)));
    sim_cfg.protocol = d.protocol;
    sim_cfg.tick = d.tick;
    // The simulator's global engine models no per-event cost (only a
    // migration's): a global run is compared without overheads, its
    // responses still within the dispatch latency's p99.9.
    let global = spec.scope() == rtlab_model::policy::Scope::Global;
    sim_cfg.overheads = (!global).then(|| costs.as_overheads());
    sim_cfg.phases = cfg
        .phases
        .iter()
        .filter(|p| p.start < ended)
        .cloned()
        .collect();
    let mut modes = Vec::new();
    crate::flags::add_modes(&mut modes, &loaded.modes, set.tasks.len(), cfg.duration)?;
    sim_cfg
        .phases
        .extend(modes.into_iter().filter(|p| p.start < ended));
    sim_cfg.on_miss = cfg.on_miss;
    let (sim, sim_jobs) = simulate_recording(&set, &spec, sim_cfg)?;
    let tasks = compare_tasks(
        real.tasks.iter().map(|t| &t.metrics),
        &sim.tasks,
        args.tolerance / 100.0,
    );
    let real_jobs = real_jobs.take();
    let agreement = compare_jobs(&real_jobs, &sim_jobs, ended, costs.latency_p999());
    // A write that fails is reported at the end: the results are still
    // printed and saved.
    let jobs_written = match (jobs_file, &args.jobs) {
        (Some(mut file), Some(path)) => {
            let csv = rtlab_report::compare_text::job_pairs_csv(&real_jobs, &sim_jobs, ended, &set);
            file.write_all(csv.as_bytes())
                .and_then(|()| file.commit())
                .map(|()| crate::wrote::wrote(path, "each job, real beside simulated, CSV"))
                .map_err(|e| anyhow::anyhow!("--jobs: cannot write {}: {e}", path.display()))
        }
        _ => Ok(()),
    };
    let mut comparison = Comparison::new(
        set.name.clone(),
        format!("dispatcher {spec}"),
        if global {
            format!("{spec} (no overheads: the global engine models none)")
        } else {
            format!("{spec} with the dispatcher's measured costs")
        },
        tasks,
        real,
        sim,
    );
    comparison.jobs = Some(agreement);
    let saved = saver.map_or(Ok(()), |s| {
        s.finish(
            &serde_json::to_value(&comparison)?,
            crate::real_run::partial(&comparison.real),
        )
    });
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let text =
            rtlab_report::compare_text::describe(&comparison, &origin, args.tolerance, color);
        out!("{text}");
        if let Some(a) = &comparison.jobs {
            out!("{}", rtlab_report::compare_text::describe_jobs(a, &set));
        }
        out!(
            "{}",
            rtlab_report::dispatcher_text::describe(comparison.real.dispatcher.as_ref())
        );
        out!(
            "{}",
            rtlab_report::kernel_trace::describe(comparison.real.kernel_trace.as_ref())
        );
    }
    crate::usage::all_of([
        saved,
        jobs_written,
        crate::real_run::lost_threads(&comparison.real),
        crate::real_run::watchdog_ended(&comparison.real),
    ])?;
    Ok(ExitCode::SUCCESS)
}

/// The simulation with every job record kept.
fn simulate_recording(
    set: &rtlab_model::TaskSet,
    spec: &rtlab_sim::SchedulerSpec,
    config: SimConfig,
) -> anyhow::Result<(rtlab_sim::SimReport, Vec<JobRecord>)> {
    let jobs = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let sink = std::rc::Rc::clone(&jobs);
    let finished = rtlab_sim::run(
        set,
        spec,
        &config,
        Some(Box::new(EachJob(move |j: &JobRecord| {
            sink.borrow_mut().push(*j)
        }))),
    )?;
    let jobs = jobs.take();
    Ok((finished.report, jobs))
}
