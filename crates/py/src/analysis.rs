//! `rtlab.analyze`: every schedulability test of a policy on one set, as
//! typed results built from the document `rtlab analyze --json` prints
//! (which `Analysis.to_dict()` returns, key for key).

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rtlab_analysis::analyze_document::{all_policies, analyze_document};
use rtlab_analysis::blocking::LockingProtocol;
use rtlab_analysis::overhead_rta::TimerModel;
use rtlab_analysis::schema::AnalyzeDocument;
use rtlab_analysis::suite::{self, Options};
use rtlab_analysis::verdict::combine;
use rtlab_model::overheads::Overheads;
use rtlab_model::policy::AnalysedPolicy;
use serde_json::Value;

use crate::convert::{json_to_py, nanos};
use crate::errors::{error, Kind};
use crate::taskset::PyTaskSet;

/// One test's verdict (`schedulable` is None when a sufficient test is inconclusive).
#[pyclass(module = "rtlab._rtlab", name = "TestResult", frozen, get_all)]
#[derive(Clone)]
pub struct PyTestResult {
    /// The policy (`rm`, `dm`, `given`, `opa`, `edf`).
    pub policy: String,
    /// The test (`liu-layland`, `hyperbolic`, `rta`, `rta-overheads`, `edf-utilization`, ...).
    pub test: String,
    /// The verdict.
    pub schedulable: Option<bool>,
    /// The tick of the timer-driven model (overhead-aware tests only).
    pub tick_ns: Option<u64>,
}

#[pymethods]
impl PyTestResult {
    fn __repr__(&self) -> String {
        format!(
            "TestResult({}:{} schedulable={})",
            self.policy,
            self.test,
            py_bool(self.schedulable)
        )
    }
}

/// One task's row under one policy: its exact test's response time.
#[pyclass(module = "rtlab._rtlab", name = "TaskResult", frozen, get_all)]
#[derive(Clone)]
pub struct PyTaskResult {
    /// The task's name.
    pub name: String,
    /// The policy.
    pub policy: String,
    /// Priority level under fixed priorities (larger is more urgent).
    pub priority: Option<u32>,
    /// C.
    pub wcet_ns: u64,
    /// T.
    pub period_ns: u64,
    /// D.
    pub deadline_ns: u64,
    /// Blocking from critical sections.
    pub blocking_ns: Option<u64>,
    /// Worst-case response time (None: above D, or not computed, e.g. under EDF).
    pub wcrt_ns: Option<u64>,
    /// The task's verdict.
    pub schedulable: Option<bool>,
}

#[pymethods]
impl PyTaskResult {
    fn __repr__(&self) -> String {
        format!(
            "TaskResult({:?} {} wcrt_ns={} schedulable={})",
            self.name,
            self.policy,
            self.wcrt_ns.map_or("None".into(), |r| r.to_string()),
            py_bool(self.schedulable)
        )
    }
}

fn py_bool(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "True",
        Some(false) => "False",
        None => "None",
    }
}

/// The result of `rtlab.analyze`: `schedulable` (the chosen test's verdict),
/// `response_times`, `tests`, `tasks`, and `to_dict()`.
#[pyclass(module = "rtlab._rtlab", name = "Analysis", frozen)]
pub struct PyAnalysis {
    document: String,
    policy: String,
    test: Option<String>,
    tests: Vec<PyTestResult>,
    tasks: Vec<PyTaskResult>,
}

impl PyAnalysis {
    fn from_document(document: String, policy: &str, test: Option<String>) -> PyResult<PyAnalysis> {
        let doc: Value = serde_json::from_str(&document)
            .map_err(|e| error(Kind::Analysis, format!("an analysis document: {e}")))?;
        let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
        let tests = doc["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| PyTestResult {
                policy: text(t, "policy"),
                test: text(t, "test"),
                schedulable: t["schedulable"].as_bool(),
                tick_ns: t["tick_ns"].as_u64(),
            })
            .collect();
        let tasks = doc["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| PyTaskResult {
                name: text(t, "name"),
                policy: text(t, "policy"),
                priority: t["priority"].as_u64().map(|p| p as u32),
                wcet_ns: t["wcet_ns"].as_u64().unwrap_or_default(),
                period_ns: t["period_ns"].as_u64().unwrap_or_default(),
                deadline_ns: t["deadline_ns"].as_u64().unwrap_or_default(),
                blocking_ns: t["blocking_ns"].as_u64(),
                wcrt_ns: t["wcrt_ns"].as_u64(),
                schedulable: t["schedulable"].as_bool(),
            })
            .collect();
        Ok(PyAnalysis {
            document,
            policy: policy.to_string(),
            test,
            tests,
            tasks,
        })
    }

    fn single_policy(&self, what: &str) -> PyResult<&str> {
        if self.policy == "all" {
            return Err(error(
                Kind::Usage,
                format!("policy=\"all\" has one {what} per policy: analyse one policy, or read .tests and .tasks"),
            ));
        }
        Ok(&self.policy)
    }
}

fn exact_test(policy: &str) -> &'static str {
    if policy == "edf" {
        "edf-demand"
    } else {
        "rta"
    }
}

#[pymethods]
impl PyAnalysis {
    /// The policy analysed (`all`: every policy that applies).
    #[getter]
    fn policy(&self) -> &str {
        &self.policy
    }

    /// The test whose verdict `schedulable` is (default: the exact test, rta or edf-demand).
    #[getter]
    fn test(&self) -> Option<String> {
        match &self.test {
            Some(t) => Some(t.clone()),
            None if self.policy == "all" => None,
            None => Some(exact_test(&self.policy).to_string()),
        }
    }

    /// The verdict of `test` under `policy` (None: inconclusive); with
    /// several ticks, schedulable only when schedulable under every one.
    #[getter]
    fn schedulable(&self) -> PyResult<Option<bool>> {
        let policy = self.single_policy("verdict")?;
        let test = self.test().unwrap_or_default();
        Ok(combine(
            self.tests
                .iter()
                .filter(|t| t.policy == policy && t.test == test)
                .map(|t| t.schedulable),
        ))
    }

    /// Each task's worst-case response time in ns under the exact test
    /// (None: above its deadline or not computed, as under EDF).
    #[getter]
    fn response_times(&self) -> PyResult<std::collections::BTreeMap<String, Option<u64>>> {
        let policy = self.single_policy("set of response times")?;
        Ok(self
            .tasks
            .iter()
            .filter(|t| t.policy == policy)
            .map(|t| (t.name.clone(), t.wcrt_ns))
            .collect())
    }

    /// Every test's verdict, in the order run.
    #[getter]
    fn tests(&self) -> Vec<PyTestResult> {
        self.tests.clone()
    }

    /// One row per task and policy.
    #[getter]
    fn tasks(&self) -> Vec<PyTaskResult> {
        self.tasks.clone()
    }

    /// The `rtlab analyze --json` document.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.document)
    }

    fn __repr__(&self) -> String {
        let verdict = match self.schedulable() {
            Ok(v) => format!(
                ", {}:{} schedulable={}",
                self.policy,
                self.test().unwrap_or_default(),
                py_bool(v)
            ),
            Err(_) => String::new(),
        };
        let doc: Value = serde_json::from_str(&self.document).unwrap_or_default();
        format!(
            "Analysis({} policy={}{verdict})",
            doc["taskset"], self.policy
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let rebuild = py.get_type::<PyAnalysis>().getattr("_from_pickle")?;
        let this = slf.get();
        let args = (
            this.document.clone(),
            this.policy.clone(),
            this.test.clone(),
        )
            .into_pyobject(py)?;
        PyTuple::new(py, [rebuild, args.into_any()])
    }

    #[staticmethod]
    fn _from_pickle(document: String, policy: &str, test: Option<String>) -> PyResult<PyAnalysis> {
        PyAnalysis::from_document(document, policy, test)
    }
}

fn policies(name: &str, set: &rtlab_model::TaskSet) -> PyResult<Vec<AnalysedPolicy>> {
    if name == "all" {
        return Ok(all_policies(set));
    }
    AnalysedPolicy::from_name(name)
        .map(|p| vec![p])
        .ok_or_else(|| {
            error(
                Kind::Usage,
                format!("policy=`{name}`: use rm, dm, given, opa, edf or all"),
            )
        })
}

fn locking(name: Option<&str>, options: &mut Options) -> PyResult<()> {
    match name {
        None | Some("pcp") => options.fixed_protocol = LockingProtocol::Ipcp,
        Some("pip") => options.fixed_protocol = LockingProtocol::Pip,
        Some("srp") => options.edf_protocol = LockingProtocol::Srp,
        Some("dfp") => options.edf_protocol = LockingProtocol::Dfp,
        Some(other) => {
            return Err(error(
                Kind::Usage,
                format!("locking=`{other}`: use pip or pcp (fixed priorities), srp or dfp (EDF)"),
            ))
        }
    }
    Ok(())
}

/// The `tick=` argument: one duration or a list of them.
fn ticks(value: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<TimerModel>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    let values: Vec<Bound<'_, PyAny>> = match value.cast::<pyo3::types::PyList>() {
        Ok(list) => list.iter().collect(),
        Err(_) => vec![value.clone()],
    };
    values
        .iter()
        .map(|v| {
            let tick = nanos(v, "tick")?;
            if tick.is_zero() {
                return Err(error(Kind::Usage, "tick=0: a tick must be longer than 0"));
            }
            Ok(TimerModel::Tick(tick))
        })
        .collect()
}

/// Runs every test of `policy` on `taskset` (`rtlab analyze`).
#[pyfunction]
#[pyo3(signature = (taskset, policy = "rm", test = None, overheads = None, tick = None, threads = None, locking = None, breakdown = false))]
#[allow(clippy::too_many_arguments)]
pub fn analyze(
    py: Python<'_>,
    taskset: &Bound<'_, PyTaskSet>,
    policy: &str,
    test: Option<String>,
    overheads: Option<&str>,
    tick: Option<&Bound<'_, PyAny>>,
    threads: Option<usize>,
    locking: Option<&str>,
    breakdown: bool,
) -> PyResult<PyAnalysis> {
    let taskset = taskset.get();
    let set = &taskset.set;
    let chosen = policies(policy, set)?;
    let timers = ticks(tick)?;
    if overheads.is_none() && (!timers.is_empty() || threads.is_some()) {
        return Err(error(
            Kind::Usage,
            "tick= and threads= need overheads= (an overheads file or builtin:rtmach)",
        ));
    }
    let mut options = Options {
        overheads: overheads
            .map(Overheads::load)
            .transpose()
            .map_err(|e| error(Kind::Analysis, format!("cannot load the overheads: {e}")))?,
        timers,
        threads,
        ..Options::default()
    };
    self::locking(locking, &mut options)?;
    let origin = taskset.origin.clone();
    let document: Result<AnalyzeDocument, String> = py.detach(|| {
        let reports = chosen
            .iter()
            .map(|&p| {
                suite::analyse(set, p, &options).map_err(|e| format!("policy {}: {e}", p.name()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let breakdowns: Option<Vec<_>> = breakdown.then(|| {
            chosen
                .iter()
                .flat_map(|&p| suite::breakdowns(set, p, &options))
                .collect()
        });
        Ok(analyze_document(
            &origin,
            set,
            &options,
            &reports,
            breakdowns.as_deref(),
        ))
    });
    let document = document.map_err(|e| error(Kind::Analysis, e))?;
    if let Some(test) = &test {
        if !document.tests.iter().any(|t| t.test == test) {
            let run: Vec<&str> = document.tests.iter().map(|t| t.test).collect();
            return Err(error(
                Kind::Usage,
                format!(
                    "test=`{test}`: not among the tests run for policy={policy} ({})",
                    run.join(", ")
                ),
            ));
        }
    }
    let text = serde_json::to_string(&document).map_err(|e| error(Kind::Analysis, e))?;
    PyAnalysis::from_document(text, policy, test)
}
