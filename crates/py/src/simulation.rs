//! `rtlab.simulate`: one simulated run (`rtlab sim`), its summary (the
//! `rtlab sim --json` document) and its job records (the rows `rtlab sim
//! --save` stores), with `.to_pandas()`.

use std::cell::RefCell;
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rtlab_model::overheads::Overheads;
use rtlab_model::Nanos;
use rtlab_sim::{
    ExecModel, JitterModel, LockingProtocol, MissRule, SchedulerSpec, SimConfig, Simulator,
};
use rtlab_store::JobRow;

use crate::convert::{json_to_py, optional_nanos};
use crate::errors::{error, Kind};
use crate::taskset::PyTaskSet;

/// Most job records one call keeps (as `rtlab sim --save` stores): about
/// 100 MB of rows; the summary still counts every job.
const MAX_KEPT_JOBS: u64 = 1_000_000;

/// Simulator steps between two checks for Ctrl-C.
const STEPS_PER_SIGNAL_CHECK: usize = 200_000;

/// One job of a run (times in ns from its start; None: never happened).
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
}

impl From<&JobRow> for PyJob {
    fn from(r: &JobRow) -> PyJob {
        PyJob {
            task: r.task.clone(),
            job: r.job,
            release_ns: r.release_ns,
            deadline_ns: r.deadline_ns,
            start_ns: r.start_ns,
            finish_ns: r.finish_ns,
            preemptions: r.preemptions,
        }
    }
}

impl PyJob {
    /// The columns of the jobs table, in order.
    pub const COLUMNS: [&'static str; 7] = [
        "task",
        "job",
        "release_ns",
        "deadline_ns",
        "start_ns",
        "finish_ns",
        "preemptions",
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
        Ok(d)
    }
}

#[pymethods]
impl PyJob {
    /// Finished after its deadline, or never finished by its deadline.
    #[getter]
    fn missed(&self) -> bool {
        self.finish_ns.is_none_or(|f| f > self.deadline_ns)
    }

    fn __repr__(&self) -> String {
        format!(
            "Job({:?}#{} release_ns={} start_ns={} finish_ns={} deadline_ns={})",
            self.task,
            self.job,
            self.release_ns,
            py_int(self.start_ns),
            py_int(self.finish_ns),
            self.deadline_ns
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

/// A simulated run: `summary` (the `rtlab sim --json` document), `jobs`
/// (the first million job records, in completion order), `to_pandas()`.
#[pyclass(module = "rtlab._rtlab", name = "Simulation", frozen)]
pub struct PySimulation {
    summary: String,
    jobs: Vec<PyJob>,
    jobs_left_out: u64,
}

#[pymethods]
impl PySimulation {
    /// The `rtlab sim --json` document, as a dict.
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.summary)
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
        let tasks = self.summary(py)?.get_item("tasks")?;
        pandas.call_method1("DataFrame", (tasks,))
    }

    fn __len__(&self) -> usize {
        self.jobs.len()
    }

    fn __repr__(&self) -> String {
        let doc: serde_json::Value = serde_json::from_str(&self.summary).unwrap_or_default();
        format!(
            "Simulation({} under {}: {} jobs, {} deadline misses)",
            doc["taskset"], doc["scheduler"], doc["released"], doc["deadline_misses"]
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let rebuild = py.get_type::<PySimulation>().getattr("_from_pickle")?;
        let this = slf.get();
        let jobs = PyList::empty(py);
        for j in &this.jobs {
            jobs.append((
                &j.task,
                j.job,
                j.release_ns,
                j.deadline_ns,
                j.start_ns,
                j.finish_ns,
                j.preemptions,
            ))?;
        }
        let args = (this.summary.clone(), jobs, this.jobs_left_out).into_pyobject(py)?;
        PyTuple::new(py, [rebuild, args.into_any()])
    }

    #[staticmethod]
    #[allow(clippy::type_complexity)]
    fn _from_pickle(
        summary: String,
        jobs: Vec<(String, u64, u64, u64, Option<u64>, Option<u64>, u64)>,
        jobs_left_out: u64,
    ) -> PySimulation {
        PySimulation {
            summary,
            jobs: jobs
                .into_iter()
                .map(
                    |(task, job, release_ns, deadline_ns, start_ns, finish_ns, preemptions)| {
                        PyJob {
                            task,
                            job,
                            release_ns,
                            deadline_ns,
                            start_ns,
                            finish_ns,
                            preemptions,
                        }
                    },
                )
                .collect(),
            jobs_left_out,
        }
    }
}

fn setting<T: std::str::FromStr<Err = rtlab_sim::SimError>>(text: &str) -> PyResult<T> {
    text.parse::<T>().map_err(|e| error(Kind::Usage, e))
}

/// Simulates `taskset` under `scheduler` for `duration` (default: one
/// hyperperiod, if at most 100 s), as `rtlab sim` does.
#[pyfunction]
#[pyo3(signature = (taskset, scheduler, duration = None, seed = 0, exec = "wcet", jitter = "none", protocol = "none", lock_cost = None, on_miss = "continue", overheads = None, tick = None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    py: Python<'_>,
    taskset: &Bound<'_, PyTaskSet>,
    scheduler: &str,
    duration: Option<&Bound<'_, PyAny>>,
    seed: u64,
    exec: &str,
    jitter: &str,
    protocol: &str,
    lock_cost: Option<&Bound<'_, PyAny>>,
    on_miss: &str,
    overheads: Option<&str>,
    tick: Option<&Bound<'_, PyAny>>,
) -> PyResult<PySimulation> {
    let set = taskset.get().set.clone();
    let spec: SchedulerSpec = setting(scheduler)?;
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
    config.on_miss = on_miss
        .parse::<MissRule>()
        .map_err(|e| error(Kind::Usage, e))?;
    config.lock_cost = optional_nanos(lock_cost, "lock_cost")?.unwrap_or(Nanos::ZERO);
    config.tick = optional_nanos(tick, "tick")?;
    config.overheads = overheads
        .map(Overheads::load)
        .transpose()
        .map_err(|e| error(Kind::Usage, format!("--overheads: {e}")))?;

    let outcome = py.detach(move || -> PyResult<_> {
        let mut sim =
            Simulator::new(&set, &spec, config).map_err(|e| error(Kind::Simulation, e))?;
        let rows: Rc<RefCell<Vec<JobRow>>> = Rc::default();
        let kept = Rc::clone(&rows);
        let tasks = set.clone();
        sim.on_job(move |record| {
            let mut rows = kept.borrow_mut();
            if (rows.len() as u64) < MAX_KEPT_JOBS {
                rows.push(rtlab_report::sources::job_row(record, &tasks));
            }
        });
        'run: loop {
            for _ in 0..STEPS_PER_SIGNAL_CHECK {
                if !sim.step() {
                    break 'run;
                }
            }
            Python::attach(|py| py.check_signals())?;
        }
        let report = sim.report();
        if let Some(stop) = sim.stopped() {
            return Err(error(Kind::Simulation, stop));
        }
        let summary = serde_json::to_string(&report).map_err(|e| error(Kind::Simulation, e))?;
        let jobs: Vec<PyJob> = rows.borrow().iter().map(PyJob::from).collect();
        let left_out = report.released.saturating_sub(jobs.len() as u64);
        Ok((summary, jobs, left_out))
    });
    let (summary, jobs, jobs_left_out) = outcome?;
    Ok(PySimulation {
        summary,
        jobs,
        jobs_left_out,
    })
}
