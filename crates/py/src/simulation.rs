//! `rtlab.simulate`: one simulated run (`rtlab sim`), its summary (the
//! `rtlab sim --json` document, as a dict made once) and its job records
//! (the rows `rtlab sim --save` stores), with `.to_pandas()`.

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rtlab_model::overheads::Overheads;
use rtlab_model::phase::{Mode, PhaseError};
use rtlab_model::results::{EachJob, JobRecord};
use rtlab_model::{Nanos, TaskSet};
use rtlab_sim::{
    BacklogStop, ExecModel, JitterModel, LockingProtocol, MissRule, SchedulerSpec, SimConfig,
    SimError, SimReport,
};
use rtlab_store::JobRow;

use crate::convert::{from_py, optional_nanos, to_py};
use crate::errors::{argument, error, Kind};
use crate::interrupt::interruptible;
use crate::taskset::PyTaskSet;

/// Most job records one call keeps (as `rtlab sim --save` stores): about
/// 100 MB of rows; the summary still counts every job.
const MAX_KEPT_JOBS: u64 = 1_000_000;

/// One job of a run: every field of its stored row (times in ns from the
/// run's start; None: never happened, or not known) and whether it missed.
#[pyclass(module = "rtlab._rtlab", name = "Job", frozen, get_all)]
#[derive(Clone)]
pub struct PyJob {
    /// The task's name.
    pub task: String,
    /// The job's number within its task, from 0.
    pub job: u64,
    /// Release time.
    pub release_ns: u64,
    /// Absolute deadline.
    pub deadline_ns: u64,
    /// When it first ran.
    pub start_ns: Option<u64>,
    /// When it finished.
    pub finish_ns: Option<u64>,
    /// Times it was preempted.
    pub preemptions: u64,
    /// Voluntary context switches (real runs; 0 when simulated).
    pub voluntary_switches: u64,
    /// The CPU it finished on, when known.
    pub cpu: Option<u32>,
    /// The CPU it first ran on (multiprocessor simulations).
    pub start_cpu: Option<u32>,
    /// Times it resumed on another CPU.
    pub migrations: u64,
    /// Removed at its deadline unfinished (`on_miss="abort"`).
    pub aborted: bool,
    /// Time spent waiting for locks (None: its task has no critical sections).
    pub blocked_ns: Option<u64>,
    /// Missed its deadline as the run's counts decide
    /// (`rtlab_model::results::JobRecord::missed`): finished after it,
    /// aborted, or unfinished with its deadline passed by the end of the
    /// run. A job released near the end whose deadline lies after it has
    /// not missed.
    pub missed: bool,
}

impl PyJob {
    /// The job of `row`, in a run that lasted `ended_ns`.
    pub fn new(row: &JobRow, ended_ns: u64) -> PyJob {
        PyJob {
            task: row.task.clone(),
            job: row.job,
            release_ns: row.release_ns,
            deadline_ns: row.deadline_ns,
            start_ns: row.start_ns,
            finish_ns: row.finish_ns,
            preemptions: row.preemptions,
            voluntary_switches: row.voluntary_switches,
            cpu: row.cpu,
            start_cpu: row.start_cpu,
            migrations: row.migrations,
            aborted: row.aborted,
            blocked_ns: row.blocked_ns,
            missed: row.missed(ended_ns),
        }
    }

    /// The stored row again.
    fn row(&self) -> JobRow {
        JobRow {
            task: self.task.clone(),
            job: self.job,
            release_ns: self.release_ns,
            deadline_ns: self.deadline_ns,
            start_ns: self.start_ns,
            finish_ns: self.finish_ns,
            preemptions: self.preemptions,
            voluntary_switches: self.voluntary_switches,
            cpu: self.cpu,
            start_cpu: self.start_cpu,
            migrations: self.migrations,
            aborted: self.aborted,
            blocked_ns: self.blocked_ns,
        }
    }

    /// The columns of `to_dict()` and of the jobs DataFrame, in order.
    pub const COLUMNS: [&'static str; 14] = [
        "task",
        "job",
        "release_ns",
        "deadline_ns",
        "start_ns",
        "finish_ns",
        "preemptions",
        "voluntary_switches",
        "cpu",
        "start_cpu",
        "migrations",
        "aborted",
        "blocked_ns",
        "missed",
    ];

    /// The job as a dict (one row of `to_pandas()`).
    pub fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("task", &self.task)?;
        d.set_item("job", self.job)?;
        d.set_item("release_ns", self.release_ns)?;
        d.set_item("deadline_ns", self.deadline_ns)?;
        d.set_item("start_ns", self.start_ns)?;
        d.set_item("finish_ns", self.finish_ns)?;
        d.set_item("preemptions", self.preemptions)?;
        d.set_item("voluntary_switches", self.voluntary_switches)?;
        d.set_item("cpu", self.cpu)?;
        d.set_item("start_cpu", self.start_cpu)?;
        d.set_item("migrations", self.migrations)?;
        d.set_item("aborted", self.aborted)?;
        d.set_item("blocked_ns", self.blocked_ns)?;
        d.set_item("missed", self.missed)?;
        Ok(d)
    }
}

#[pymethods]
impl PyJob {
    fn __repr__(&self) -> String {
        format!(
            "Job({:?}#{} release_ns={} start_ns={} finish_ns={} deadline_ns={}{})",
            self.task,
            self.job,
            self.release_ns,
            py_int(self.start_ns),
            py_int(self.finish_ns),
            self.deadline_ns,
            if self.missed { " missed" } else { "" }
        )
    }

    #[pyo3(name = "to_dict")]
    fn py_to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.to_dict(py)
    }
}

fn py_int(value: Option<u64>) -> String {
    value.map_or_else(|| "None".to_string(), |v| v.to_string())
}

/// A pandas DataFrame of `jobs` (pandas imported here: optional).
pub fn jobs_frame<'py>(py: Python<'py>, jobs: &[PyJob]) -> PyResult<Bound<'py, PyAny>> {
    let pandas = import_pandas(py)?;
    let rows = PyList::empty(py);
    for job in jobs {
        rows.append(job.to_dict(py)?)?;
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("columns", PyJob::COLUMNS.to_vec())?;
    pandas.call_method("DataFrame", (rows,), Some(&kwargs))
}

/// `pandas`, or an ImportError that says how to get it.
pub fn import_pandas(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("pandas").map_err(|_| {
        pyo3::exceptions::PyImportError::new_err(
            "to_pandas() needs pandas, which rtlab does not require: pip install pandas",
        )
    })
}

/// Job rows as Python objects (for pickling).
fn rows_to_py<'py>(py: Python<'py>, jobs: &[PyJob]) -> PyResult<Bound<'py, PyAny>> {
    let rows: Vec<JobRow> = jobs.iter().map(PyJob::row).collect();
    to_py(py, &rows)
}

/// A simulated run: `summary` (the `rtlab sim --json` document), `jobs`
/// (the first million job records, in the order they ended), `to_pandas()`.
#[pyclass(module = "rtlab._rtlab", name = "Simulation", frozen)]
pub struct PySimulation {
    /// The summary as a dict, made once.
    summary: Py<PyAny>,
    jobs: Vec<PyJob>,
    jobs_left_out: u64,
    /// How long the run lasted (what decides `Job.missed`).
    ended_ns: u64,
}

#[pymethods]
impl PySimulation {
    /// The `rtlab sim --json` document, as a dict (the same dict at each
    /// access: copy it before changing it).
    #[getter]
    fn summary(&self, py: Python<'_>) -> Py<PyAny> {
        self.summary.clone_ref(py)
    }

    /// The job records, in the order the jobs ended.
    #[getter]
    fn jobs(&self) -> Vec<PyJob> {
        self.jobs.clone()
    }

    /// Jobs released but not kept in `jobs` (beyond the first million).
    #[getter]
    fn jobs_left_out(&self) -> u64 {
        self.jobs_left_out
    }

    /// The job records as a pandas DataFrame, one row per job.
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        jobs_frame(py, &self.jobs)
    }

    /// The per-task summary (`summary["tasks"]`) as a pandas DataFrame.
    fn tasks_to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pandas = import_pandas(py)?;
        let tasks = self.summary.bind(py).get_item("tasks")?;
        pandas.call_method1("DataFrame", (tasks,))
    }

    fn __len__(&self) -> usize {
        self.jobs.len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let doc = self.summary.bind(py);
        let field = |k: &str| -> PyResult<String> { Ok(doc.get_item(k)?.str()?.to_string()) };
        Ok(format!(
            "Simulation({:?} under {}: {} jobs, {} deadline misses)",
            field("taskset")?,
            field("scheduler")?,
            field("released")?,
            field("deadline_misses")?
        ))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let rebuild = py.get_type::<PySimulation>().getattr("_from_pickle")?;
        let this = slf.get();
        let args = (
            this.summary.clone_ref(py),
            rows_to_py(py, &this.jobs)?,
            this.jobs_left_out,
            this.ended_ns,
        )
            .into_pyobject(py)?;
        PyTuple::new(py, [rebuild, args.into_any()])
    }

    #[staticmethod]
    fn _from_pickle(
        summary: Py<PyAny>,
        jobs: &Bound<'_, PyAny>,
        jobs_left_out: u64,
        ended_ns: u64,
    ) -> PyResult<PySimulation> {
        let rows: Vec<JobRow> = serde_json::from_value(from_py(jobs)?)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("job rows: {e}")))?;
        Ok(PySimulation {
            summary,
            jobs: rows.iter().map(|r| PyJob::new(r, ended_ns)).collect(),
            jobs_left_out,
            ended_ns,
        })
    }
}

/// A simulator error in Python's words: the CLI's flags as this function's
/// arguments (`scheduler=`, `on_miss=`, ...), and the phases the task
/// set's modes became as its modes.
fn sim_error(e: SimError) -> PyErr {
    match e {
        SimError::Spec { spec, why } => error(Kind::Usage, format!("scheduler=`{spec}`: {why}")),
        SimError::Setup { scheduler, why } => {
            error(Kind::Usage, format!("scheduler=`{scheduler}`: {why}"))
        }
        SimError::Choice {
            setting,
            value,
            accepted,
        } => error(
            Kind::Usage,
            format!("{}`{value}`: use {accepted}", argument(setting)),
        ),
        SimError::Setting {
            setting: "phase",
            message,
        } => error(Kind::Usage, format!("the task set's modes: {message}")),
        SimError::Setting { setting, message } => {
            let name = argument(setting);
            // "3: the number of processors ..." reads as `cpus=3: ...`;
            // "must be greater than 0" as `duration= must be ...`.
            let glue = if message.starts_with(|c: char| c.is_ascii_alphabetic()) {
                " "
            } else {
                ""
            };
            error(Kind::Usage, format!("{name}{glue}{message}"))
        }
        e @ (SimError::PhaseAfterEnd { .. }
        | SimError::PhasesOverlap { .. }
        | SimError::Config(_)) => error(Kind::Usage, e),
        other => error(Kind::Simulation, other),
    }
}

/// A simulator setting parsed from its name (`exec="uniform"`).
fn setting<T: std::str::FromStr<Err = SimError>>(text: &str) -> PyResult<T> {
    text.parse::<T>().map_err(sim_error)
}

/// `rtlab sim --scheduler`, parsed by the registry (which reads `run`'s
/// and `analyze`'s `rm`, `dm` and `given` as `fp:rm`, `fp:dm`, `fp:given`).
fn scheduler_spec(text: &str) -> PyResult<SchedulerSpec> {
    setting(text)
}

/// Runs `set` under `spec` with `config`, every job record to `sink`,
/// through the simulator's one entry ([`rtlab_sim::run`], which picks the
/// engine as `rtlab sim` does).
fn run_engine(
    set: &TaskSet,
    spec: &SchedulerSpec,
    config: SimConfig,
    sink: impl FnMut(&JobRecord) + 'static,
) -> Result<(SimReport, Option<BacklogStop>), SimError> {
    let run = rtlab_sim::run(set, spec, &config, Some(Box::new(EachJob(sink))))?;
    Ok((run.report, run.stopped))
}

/// The phases the set's `[[mode]]`s make of a run of `duration`, as `rtlab
/// sim` adds them.
fn mode_phases(
    modes: &[Mode],
    tasks: usize,
    duration: Nanos,
) -> PyResult<Vec<rtlab_model::phase::Phase>> {
    Mode::phases(modes, tasks, duration).map_err(|e| match e {
        PhaseError::ModeAfterEnd {
            mode,
            start,
            duration,
        } => error(
            Kind::Usage,
            format!("mode `{mode}` of the task set starts at {start}, at or after the end of the run (duration=`{duration}`)"),
        ),
        other => error(Kind::Usage, other),
    })
}

/// Simulates `taskset` under `scheduler` for `duration` (default: one
/// hyperperiod, if at most 100 s), as `rtlab sim` does.
#[pyfunction]
#[pyo3(signature = (taskset, scheduler, duration = None, cpus = None, seed = 0, exec = "wcet", jitter = "none", protocol = "none", lock_cost = None, on_miss = "continue", overheads = None, tick = None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    py: Python<'_>,
    taskset: &Bound<'_, PyTaskSet>,
    scheduler: &str,
    duration: Option<&Bound<'_, PyAny>>,
    cpus: Option<u32>,
    seed: u64,
    exec: &str,
    jitter: &str,
    protocol: &str,
    lock_cost: Option<&Bound<'_, PyAny>>,
    on_miss: &str,
    overheads: Option<&str>,
    tick: Option<&Bound<'_, PyAny>>,
) -> PyResult<PySimulation> {
    let taskset = taskset.get();
    let set = match cpus {
        Some(m) => taskset
            .set
            .with_processors(m)
            .map_err(|e| error(Kind::Usage, format!("cpus={m}: {}", e.message)))?,
        None => taskset.set.clone(),
    };
    let spec = scheduler_spec(scheduler)?;
    let duration = match optional_nanos(duration, "duration")? {
        Some(d) => d,
        None => match set.hyperperiod() {
            Ok(h) if h <= Nanos::from_secs(100) && !h.is_zero() => h,
            _ => {
                return Err(error(
                    Kind::Usage,
                    format!(
                        "duration= is needed: the hyperperiod of `{}` is over 100 s (write e.g. duration=\"10s\")",
                        set.name
                    ),
                ))
            }
        },
    };
    let mut config = SimConfig::new(duration);
    config.seed = seed;
    config.exec = setting::<ExecModel>(exec)?;
    config.jitter = setting::<JitterModel>(jitter)?;
    config.protocol = protocol
        .parse::<LockingProtocol>()
        .map_err(|e| error(Kind::Usage, e))?;
    config.on_miss = on_miss.parse::<MissRule>().map_err(|_| {
        error(
            Kind::Usage,
            format!(
                "on_miss=`{on_miss}`: use {}",
                rtlab_model::policy::MISS_RULES
            ),
        )
    })?;
    config.lock_cost = optional_nanos(lock_cost, "lock_cost")?.unwrap_or(Nanos::ZERO);
    config.tick = optional_nanos(tick, "tick")?;
    config.overheads = overheads.map(Overheads::load).transpose().map_err(|e| {
        error(
            Kind::Usage,
            format!("overheads=`{}`: {e}", overheads.unwrap_or_default()),
        )
    })?;
    config.phases = mode_phases(&taskset.modes, set.tasks.len(), duration)?;

    let outcome = interruptible(py, None, |_| {
        let rows: Rc<RefCell<Vec<JobRow>>> = Rc::default();
        let kept = Rc::clone(&rows);
        let tasks = set.clone();
        let sink = move |record: &JobRecord| {
            let mut rows = kept.borrow_mut();
            if (rows.len() as u64) < MAX_KEPT_JOBS {
                rows.push(JobRow::from((record, &tasks)));
            }
        };
        let (report, stopped) = run_engine(&set, &spec, config, sink)?;
        let rows = rows.take();
        Ok::<_, SimError>((report, stopped, rows))
    })?;
    let (report, stopped, rows) = outcome.map_err(sim_error)?;
    if let Some(stop) = stopped {
        return Err(error(Kind::Simulation, stop));
    }
    let ended_ns = report.duration_ns;
    let jobs: Vec<PyJob> = rows.iter().map(|r| PyJob::new(r, ended_ns)).collect();
    let jobs_left_out = report.released.saturating_sub(jobs.len() as u64);
    Ok(PySimulation {
        summary: to_py(py, &report)?.unbind(),
        jobs,
        jobs_left_out,
        ended_ns,
    })
}
