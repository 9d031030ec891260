//! `rtlab.results`: the runs saved with `--save`, read from the store
//! (`rtlab results list` / `show`): one SQLite file, by default the CLI's.

use std::path::PathBuf;

use pyo3::prelude::*;
use rtlab_store::{Store, StoredRun};

use crate::convert::to_py;
use crate::errors::{Kind, OrRaise};
use crate::simulation::{jobs_frame, PyJob};

/// The store to read, opened read-only: reading creates nothing.
fn open(store: Option<PathBuf>) -> PyResult<Store> {
    let path = store.unwrap_or_else(Store::default_path);
    Store::open_read_only(&path).or_raise(Kind::Store)
}

/// Every saved run, as dicts (`rtlab results list --json`).
#[pyfunction]
#[pyo3(signature = (store = None))]
pub fn results_list(py: Python<'_>, store: Option<PathBuf>) -> PyResult<Bound<'_, PyAny>> {
    let runs = py.detach(move || {
        let path = store.unwrap_or_else(Store::default_path);
        match Store::open_read_only(&path) {
            // No store there: no run (as `rtlab results list`), nothing created.
            Err(rtlab_store::StoreError::Missing { .. }) => Ok(Vec::new()),
            opened => opened.and_then(|s| s.list()).or_raise(Kind::Store),
        }
    })?;
    to_py(py, &runs)
}

/// One saved run with its job rows (`rtlab results show ID`).
#[pyfunction]
#[pyo3(signature = (id, store = None))]
pub fn results_load(py: Python<'_>, id: i64, store: Option<PathBuf>) -> PyResult<PyStoredRun> {
    let (run, jobs) = py.detach(move || -> PyResult<_> {
        let store = open(store)?;
        let run = store.get(id).or_raise(Kind::Store)?;
        let jobs = store.jobs(id).or_raise(Kind::Store)?;
        Ok((run, jobs))
    })?;
    let ended_ns = run.ended_ns().unwrap_or(0);
    Ok(PyStoredRun {
        jobs: jobs.iter().map(|j| PyJob::new(j, ended_ns)).collect(),
        document: to_py(py, &run.document)?.unbind(),
        host: to_py(py, &run.host)?.unbind(),
        whole: to_py(py, &run)?.unbind(),
        run,
    })
}

/// A run saved in the store: `id`, `kind`, `command`, `document` (the
/// command's `--json` document), `jobs`, `to_pandas()`.
#[pyclass(module = "rtlab._rtlab", name = "StoredRun", frozen)]
pub struct PyStoredRun {
    run: StoredRun,
    /// `run.document`, `run.host` and the whole run as Python objects, made once.
    document: Py<PyAny>,
    host: Py<PyAny>,
    whole: Py<PyAny>,
    jobs: Vec<PyJob>,
}

#[pymethods]
impl PyStoredRun {
    /// The run's id.
    #[getter]
    fn id(&self) -> i64 {
        self.run.id
    }
    /// When it was saved (RFC 3339, UTC).
    #[getter]
    fn created(&self) -> &str {
        &self.run.created
    }
    /// Which command: sim, run, latency, sweep, analyze, ...
    #[getter]
    fn kind(&self) -> &str {
        &self.run.kind
    }
    /// The full command line.
    #[getter]
    fn command(&self) -> &str {
        &self.run.command
    }
    /// `complete` or `interrupted`.
    #[getter]
    fn status(&self) -> &str {
        &self.run.status
    }
    /// The input task set's text, when the command had one.
    #[getter]
    fn taskset(&self) -> Option<&str> {
        self.run.taskset.as_deref()
    }
    /// The command's `--json` document (the same dict at each access).
    #[getter]
    fn document(&self, py: Python<'_>) -> Py<PyAny> {
        self.document.clone_ref(py)
    }
    /// Host metadata (the same dict at each access).
    #[getter]
    fn host(&self, py: Python<'_>) -> Py<PyAny> {
        self.host.clone_ref(py)
    }
    /// The stored job rows (`Job.missed` decided by the run's end, as the
    /// run's counts were).
    #[getter]
    fn jobs(&self) -> Vec<PyJob> {
        self.jobs.clone()
    }
    /// The job rows as a pandas DataFrame.
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        jobs_frame(py, &self.jobs)
    }
    /// The whole run (without its rows) as a dict (the same dict at each call).
    fn to_dict(&self, py: Python<'_>) -> Py<PyAny> {
        self.whole.clone_ref(py)
    }
    fn __repr__(&self) -> String {
        format!(
            "StoredRun({} {} {:?})",
            self.run.id, self.run.kind, self.run.command
        )
    }
}
