//! `rtlab.TaskSet` and `rtlab.Task`: a validated task set (loaded from a
//! file, `builtin:NAME`, TOML/JSON text, rows, or the generators) and its
//! tasks, read-only.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rtlab_model::file::{self, Format, LoadedTaskSet};
use rtlab_model::phase::Mode;
use rtlab_model::{Nanos, Task, TaskSet};

use crate::convert::nanos;
use crate::errors::{error, Kind, OrRaise};

/// Keys of a task row whose values are durations: a string with a unit or
/// a `datetime.timedelta` (as every duration argument); the same key with
/// `_ns` (`period_ns`) takes an int of nanoseconds, as `Task` reads back.
const DURATION_KEYS: [&str; 6] = ["period", "deadline", "wcet", "bcet", "offset", "jitter"];

/// A task set: `TaskSet.load("file.toml")`, `TaskSet.load("builtin:avionics")`,
/// `TaskSet.from_rows([...])`, `TaskSet.parse(text)`; pickles through its TOML.
#[pyclass(module = "rtlab._rtlab", name = "TaskSet", frozen)]
#[derive(Clone)]
pub struct PyTaskSet {
    /// The set.
    pub set: TaskSet,
    /// Where it came from: the path, `builtin:NAME`, `rows`, `generated`.
    pub origin: String,
    /// The file's `[[mode]]`s, which a simulation runs as `rtlab sim` does.
    pub modes: Vec<Mode>,
}

impl PyTaskSet {
    fn from_loaded(loaded: LoadedTaskSet) -> PyTaskSet {
        PyTaskSet {
            set: loaded.set,
            origin: loaded.origin,
            modes: loaded.modes,
        }
    }

    /// A set with no modes (generated, built from rows).
    pub fn plain(set: TaskSet, origin: &str) -> PyTaskSet {
        PyTaskSet {
            set,
            origin: origin.to_string(),
            modes: Vec::new(),
        }
    }
}

/// One cell of `rows[i]` as a task file holds it: a duration key's value
/// (or a `KEY_ns` int) as `"<n>ns"`; a float that is not finite refused.
fn row_cell<'py>(
    i: usize,
    key: &str,
    value: &Bound<'py, PyAny>,
) -> PyResult<(String, Bound<'py, PyAny>)> {
    let py = value.py();
    let place = format!("rows[{i}].{key}");
    if let Some(base) = key
        .strip_suffix("_ns")
        .filter(|b| DURATION_KEYS.contains(b))
    {
        let is_int = value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>();
        let ns = value
            .extract::<u64>()
            .ok()
            .filter(|_| is_int)
            .ok_or_else(|| {
                error(
                    Kind::TaskSet,
                    format!("{place}: an int of nanoseconds >= 0, e.g. {key}=10_000_000"),
                )
            })?;
        return Ok((
            base.to_string(),
            PyString::new(py, &format!("{ns}ns")).into_any(),
        ));
    }
    if DURATION_KEYS.contains(&key) && !value.is_instance_of::<PyString>() {
        let bare = value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>();
        let ns = nanos(value, &place).map_err(|e| {
            let or_ns = if bare {
                format!("; or give {key}_ns, an int of nanoseconds")
            } else {
                String::new()
            };
            error(Kind::TaskSet, format!("{}{or_ns}", e.value(py)))
        })?;
        return Ok((
            key.to_string(),
            PyString::new(py, &format!("{}ns", ns.as_ns())).into_any(),
        ));
    }
    if value
        .cast::<PyFloat>()
        .is_ok_and(|f| !f.value().is_finite())
    {
        let shown = value.repr().map_or_else(|_| "?".into(), |r| r.to_string());
        return Err(error(
            Kind::TaskSet,
            format!(
                "{place}={shown}: not a number (NaN or infinite: a missing value in a DataFrame?)"
            ),
        ));
    }
    Ok((key.to_string(), value.clone()))
}

#[pymethods]
impl PyTaskSet {
    /// Loads a task-set file (TOML, JSON, SimSo XML, rt-app JSON) or `builtin:NAME`.
    #[staticmethod]
    fn load(py: Python<'_>, source: &str) -> PyResult<PyTaskSet> {
        let source = source.to_string();
        py.detach(move || file::load(&source))
            .or_raise(Kind::TaskSet)
            .map(PyTaskSet::from_loaded)
    }

    /// Parses task-set text (`format` is "toml" or "json"); `origin` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (text, format = "toml", origin = "<string>"))]
    fn parse(text: &str, format: &str, origin: &str) -> PyResult<PyTaskSet> {
        let format = match format {
            "toml" => Format::Toml,
            "json" => Format::Json,
            other => {
                return Err(error(
                    Kind::Usage,
                    format!("format=`{other}`: use \"toml\" or \"json\""),
                ))
            }
        };
        let default_name = origin.rsplit('/').next().unwrap_or(origin);
        file::parse_str(text, format, origin, default_name)
            .or_raise(Kind::TaskSet)
            .map(PyTaskSet::from_loaded)
    }

    /// Builds a set from rows, one dict per task with the file's keys
    /// (`name`, `period`, `wcet`, `deadline`, `offset`, `jitter`, `bcet`,
    /// `priority`, ...): durations as strings with a unit ("25ms") or
    /// `datetime.timedelta`s, or as ints of nanoseconds under the key with
    /// `_ns` (`period_ns`). Validated as a file is; errors name `rows`.
    #[staticmethod]
    #[pyo3(signature = (rows, name = "rows"))]
    fn from_rows(py: Python<'_>, rows: &Bound<'_, PyList>, name: &str) -> PyResult<PyTaskSet> {
        let tasks = PyList::empty(py);
        for (i, row) in rows.iter().enumerate() {
            let row = row
                .cast::<PyDict>()
                .map_err(|_| error(Kind::TaskSet, format!("rows[{i}]: a task row is a dict")))?;
            let task = PyDict::new(py);
            for (key, value) in row.iter() {
                let key: String = key
                    .extract()
                    .map_err(|_| error(Kind::TaskSet, format!("rows[{i}]: a key is a string")))?;
                let (key, value) = row_cell(i, &key, &value)?;
                task.set_item(key, value)?;
            }
            tasks.append(task)?;
        }
        let document = PyDict::new(py);
        document.set_item("name", name)?;
        document.set_item("task", tasks)?;
        let text: String = py
            .import("json")?
            .call_method1("dumps", (document,))?
            .extract()?;
        let loaded = file::parse_str(&text, Format::Json, "rows", name).or_raise(Kind::TaskSet)?;
        Ok(PyTaskSet::from_loaded(loaded))
    }

    /// The set as a TOML task-set file (what `rtlab taskset gen` writes).
    fn to_toml(&self) -> String {
        file::to_toml_string(&self.set)
    }

    /// The set as a JSON task-set file.
    fn to_json(&self) -> String {
        file::to_json_string(&self.set)
    }

    /// The set's name.
    #[getter]
    fn name(&self) -> &str {
        &self.set.name
    }

    /// Where it came from: a path, `builtin:NAME`, `rows` or `generated`.
    #[getter]
    fn origin(&self) -> &str {
        &self.origin
    }

    /// Processors of its platform (the file's `processors`, else 1).
    #[getter]
    fn processors(&self) -> u32 {
        self.set.processors()
    }

    /// The file's `[[mode]]`s in time order, each as `{"name", "start_ns",
    /// "tasks"}` (task names); empty for most sets.
    #[getter]
    fn modes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for m in &self.modes {
            let d = PyDict::new(py);
            d.set_item("name", &m.name)?;
            d.set_item("start_ns", m.start.as_ns())?;
            let names: Vec<&str> = m
                .tasks
                .iter()
                .filter_map(|&i| self.set.tasks.get(i).map(|t| t.name.as_str()))
                .collect();
            d.set_item("tasks", names)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Total utilization Σ C/T.
    #[getter]
    fn utilization(&self) -> f64 {
        self.set.utilization()
    }

    /// Total density Σ C/min(D, T).
    #[getter]
    fn density(&self) -> f64 {
        self.set.density()
    }

    /// The hyperperiod lcm(T) in ns, `None` when it overflows.
    #[getter]
    fn hyperperiod_ns(&self) -> Option<u64> {
        self.set.hyperperiod().ok().map(Nanos::as_ns)
    }

    /// The tasks, in declaration order.
    #[getter]
    fn tasks(&self) -> Vec<PyTask> {
        self.set.tasks.iter().map(PyTask::from).collect()
    }

    fn __len__(&self) -> usize {
        self.set.tasks.len()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyTaskSet>()
            .is_ok_and(|o| o.get().set == self.set && o.get().modes == self.modes)
    }

    fn __repr__(&self) -> String {
        format!(
            "TaskSet({:?} from {:?}: {} tasks, U = {:.4})",
            self.set.name,
            self.origin,
            self.set.tasks.len(),
            self.set.utilization()
        )
    }

    /// Pickles as `TaskSet._from_pickle(toml, origin, modes)`, the modes
    /// as `(name, start_ns, task indices)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let rebuild = py.get_type::<PyTaskSet>().getattr("_from_pickle")?;
        let this = slf.get();
        let modes: Vec<(String, u64, Vec<usize>)> = this
            .modes
            .iter()
            .map(|m| (m.name.clone(), m.start.as_ns(), m.tasks.clone()))
            .collect();
        let args = (this.to_toml(), this.origin.clone(), modes).into_pyobject(py)?;
        PyTuple::new(py, [rebuild, args.into_any()])
    }

    #[staticmethod]
    #[pyo3(signature = (toml, origin, modes = Vec::new()))]
    fn _from_pickle(
        toml: &str,
        origin: &str,
        modes: Vec<(String, u64, Vec<usize>)>,
    ) -> PyResult<PyTaskSet> {
        let loaded =
            file::parse_str(toml, Format::Toml, origin, "taskset").or_raise(Kind::TaskSet)?;
        Ok(PyTaskSet {
            set: loaded.set,
            origin: origin.to_string(),
            modes: modes
                .into_iter()
                .map(|(name, start, tasks)| Mode {
                    name,
                    start: Nanos::from_ns(start),
                    tasks,
                })
                .collect(),
        })
    }
}

/// One task of a set (read-only; times in ns).
#[pyclass(module = "rtlab._rtlab", name = "Task", frozen, get_all)]
#[derive(Clone)]
pub struct PyTask {
    /// Its name.
    pub name: String,
    /// Period T.
    pub period_ns: u64,
    /// Relative deadline D.
    pub deadline_ns: u64,
    /// Worst-case execution time C.
    pub wcet_ns: u64,
    /// Best-case execution time, if given.
    pub bcet_ns: Option<u64>,
    /// Release offset.
    pub offset_ns: u64,
    /// Release jitter.
    pub jitter_ns: u64,
    /// Explicit priority (larger is more urgent), if given.
    pub priority: Option<u32>,
    /// C / T.
    pub utilization: f64,
}

impl From<&Task> for PyTask {
    fn from(t: &Task) -> PyTask {
        PyTask {
            name: t.name.clone(),
            period_ns: t.period.as_ns(),
            deadline_ns: t.deadline.as_ns(),
            wcet_ns: t.wcet.as_ns(),
            bcet_ns: t.bcet.map(Nanos::as_ns),
            offset_ns: t.offset.as_ns(),
            jitter_ns: t.jitter.as_ns(),
            priority: t.priority,
            utilization: t.utilization(),
        }
    }
}

#[pymethods]
impl PyTask {
    fn __repr__(&self) -> String {
        format!(
            "Task({:?}, period_ns={}, wcet_ns={}, deadline_ns={})",
            self.name, self.period_ns, self.wcet_ns, self.deadline_ns
        )
    }
}
