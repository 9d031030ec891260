//! `rtlab.analyze`: the schedulability tests `rtlab analyze` runs on one
//! set, through the same library entries (`suite::analyse` and
//! `analyze_document` on one processor; `multiprocessor::analyze_document`
//! on more, or when `tests=` names multiprocessor tests), as typed results
//! and the `rtlab analyze --json` document (`Analysis.to_dict()`, key for
//! key).

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use rtlab_analysis::analyze_document::{all_policies, analyze_document};
use rtlab_analysis::blocking::LockingProtocol;
use rtlab_analysis::multiprocessor::{self, MultiprocessorTest};
use rtlab_analysis::overhead_rta::TimerModel;
use rtlab_analysis::suite::{self, Options};
use rtlab_analysis::verdict::combine;
use rtlab_model::overheads::Overheads;
use rtlab_model::policy::AnalysedPolicy;
use serde_json::Value;

use crate::convert::{from_py, nanos, to_py};
use crate::errors::{error, Kind};
use crate::interrupt::interruptible_sized;
use crate::taskset::PyTaskSet;

/// One test's verdict (`schedulable` is None when a sufficient test is inconclusive).
#[pyclass(module = "rtlab._rtlab", name = "TestResult", frozen, get_all)]
#[derive(Clone)]
pub struct PyTestResult {
    /// The policy (`rm`, `dm`, `given`, `opa`, `edf`), or on several
    /// processors the scheduler the test is for (`gedf`, `gfp-dm`, `pedf`).
    pub policy: String,
    /// The test (`liu-layland`, `rta`, `edf-demand`, ...; on several
    /// processors its full name, `gedf:bcl`, `pedf:ff-decreasing`).
    pub test: String,
    /// The verdict.
    pub schedulable: Option<bool>,
    /// The tick of the timer-driven model (overhead-aware tests only).
    pub tick_ns: Option<u64>,
}

#[pymethods]
impl PyTestResult {
    fn __repr__(&self) -> String {
        let name = if self.test.contains(':') {
            self.test.clone()
        } else {
            format!("{}:{}", self.policy, self.test)
        };
        format!(
            "TestResult({name} schedulable={})",
            py_bool(self.schedulable)
        )
    }
}

/// One task's row under one policy: its exact test's response time (on
/// several processors: its bound under one response-time test).
#[pyclass(module = "rtlab._rtlab", name = "TaskResult", frozen, get_all)]
#[derive(Clone)]
pub struct PyTaskResult {
    /// The task's name.
    pub name: String,
    /// The policy (on several processors, the response-time test: `gedf:rta`).
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
    /// The `rtlab analyze --json` document as a dict, made once.
    document: Py<PyAny>,
    /// The policy analysed on one processor (`all` for every one); None on
    /// several, where each test is for its own scheduler.
    policy: Option<String>,
    processors: u32,
    test: Option<String>,
    tests: Vec<PyTestResult>,
    tasks: Vec<PyTaskResult>,
}

impl PyAnalysis {
    /// The typed results read from the document (`doc`, the JSON value of
    /// an `AnalyzeDocument` or a `MultiprocessorAnalyzeDocument`).
    fn new(
        py: Python<'_>,
        doc: &Value,
        policy: Option<String>,
        test: Option<String>,
    ) -> PyResult<PyAnalysis> {
        let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
        let rows = |k: &str| doc[k].as_array().cloned().unwrap_or_default();
        let processors = doc["processors"].as_u64().map_or(1, |m| m as u32);
        let multiprocessor = doc.get("processors").is_some();
        let tests = rows("tests")
            .iter()
            .map(|t| {
                let name = text(t, "test");
                PyTestResult {
                    policy: if multiprocessor {
                        name.split(':').next().unwrap_or_default().to_string()
                    } else {
                        text(t, "policy")
                    },
                    test: name,
                    schedulable: t["schedulable"].as_bool(),
                    tick_ns: t["tick_ns"].as_u64(),
                }
            })
            .collect();
        let task = |t: &Value, policy: String, wcrt: Option<u64>, ok: Option<bool>| PyTaskResult {
            name: text(t, "name"),
            policy,
            priority: t["priority"].as_u64().map(|p| p as u32),
            wcet_ns: t["wcet_ns"].as_u64().unwrap_or_default(),
            period_ns: t["period_ns"].as_u64().unwrap_or_default(),
            deadline_ns: t["deadline_ns"].as_u64().unwrap_or_default(),
            blocking_ns: t["blocking_ns"].as_u64(),
            wcrt_ns: wcrt,
            schedulable: ok,
        };
        let tasks = rows("tasks")
            .iter()
            .flat_map(|t| {
                if multiprocessor {
                    // One row per response-time test that bounds tasks: a
                    // bound within D proves the task; none proves nothing.
                    let bounds = t["response_ns"].as_object().cloned().unwrap_or_default();
                    bounds
                        .iter()
                        .map(|(test, r)| {
                            task(t, test.clone(), r.as_u64(), r.as_u64().map(|_| true))
                        })
                        .collect::<Vec<_>>()
                } else {
                    vec![task(
                        t,
                        text(t, "policy"),
                        t["wcrt_ns"].as_u64(),
                        t["schedulable"].as_bool(),
                    )]
                }
            })
            .collect();
        Ok(PyAnalysis {
            document: to_py(py, doc)?.unbind(),
            policy,
            processors,
            test,
            tests,
            tasks,
        })
    }

    /// The policy whose verdict or response times are asked for, or why
    /// there is not one.
    fn single_policy(&self, what: &str) -> PyResult<&str> {
        match self.policy.as_deref() {
            Some("all") => Err(error(
                Kind::Usage,
                format!("policy=\"all\" has one {what} per policy: analyse one policy, or read .tests and .tasks"),
            )),
            Some(p) => Ok(p),
            None => match &self.test {
                Some(t) => Ok(t),
                None => Err(error(
                    Kind::Usage,
                    format!(
                        "on {} processors each test is for its own scheduler: name the one whose {what} you want with test= (e.g. test=\"gedf:rta\"), or read .tests and .tasks",
                        self.processors
                    ),
                )),
            },
        }
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
    /// The policy analysed on one processor (`all`: every policy that
    /// applies); None on several processors.
    #[getter]
    fn policy(&self) -> Option<&str> {
        self.policy.as_deref()
    }

    /// The number of processors analysed.
    #[getter]
    fn processors(&self) -> u32 {
        self.processors
    }

    /// The test whose verdict `schedulable` is (on one processor, by
    /// default the exact test, rta or edf-demand; on several, the one
    /// named by `test=`).
    #[getter]
    fn test(&self) -> Option<String> {
        match (&self.test, self.policy.as_deref()) {
            (Some(t), _) => Some(t.clone()),
            (None, None | Some("all")) => None,
            (None, Some(p)) => Some(exact_test(p).to_string()),
        }
    }

    /// The verdict of `test` (under `policy` on one processor; None:
    /// inconclusive); with several ticks, schedulable only when
    /// schedulable under every one.
    #[getter]
    fn schedulable(&self) -> PyResult<Option<bool>> {
        let policy = self.single_policy("verdict")?.to_string();
        let test = self.test().unwrap_or_default();
        let uni = self.policy.is_some();
        Ok(combine(
            self.tests
                .iter()
                .filter(|t| t.test == test && (!uni || t.policy == policy))
                .map(|t| t.schedulable),
        ))
    }

    /// Each task's worst-case response time in ns under the exact test
    /// (None: above its deadline or not computed, as under EDF); on several
    /// processors, its bound under the response-time test `test=`.
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

    /// One row per task and policy (per task and response-time test on
    /// several processors).
    #[getter]
    fn tasks(&self) -> Vec<PyTaskResult> {
        self.tasks.clone()
    }

    /// The `rtlab analyze --json` document (the same dict at each call:
    /// copy it before changing it).
    fn to_dict(&self, py: Python<'_>) -> Py<PyAny> {
        self.document.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let verdict = match (self.schedulable(), self.test()) {
            (Ok(v), Some(test)) => format!(" {test} schedulable={}", py_bool(v)),
            _ => String::new(),
        };
        let name = self
            .document
            .bind(py)
            .get_item("taskset")?
            .str()?
            .to_string();
        let scope = match &self.policy {
            Some(p) => format!("policy={p}"),
            None => format!("on {} processors", self.processors),
        };
        Ok(format!("Analysis({name:?} {scope}{verdict})"))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let rebuild = py.get_type::<PyAnalysis>().getattr("_from_pickle")?;
        let this = slf.get();
        let args = (
            this.document.clone_ref(py),
            this.policy.clone(),
            this.test.clone(),
        )
            .into_pyobject(py)?;
        PyTuple::new(py, [rebuild, args.into_any()])
    }

    #[staticmethod]
    fn _from_pickle(
        py: Python<'_>,
        document: &Bound<'_, PyAny>,
        policy: Option<String>,
        test: Option<String>,
    ) -> PyResult<PyAnalysis> {
        PyAnalysis::new(py, &from_py(document)?, policy, test)
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
    let values: Vec<Bound<'_, PyAny>> = match value.cast::<PyList>() {
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

/// The `tests=` argument: multiprocessor test names, as a list or one
/// comma-separated string (`rtlab analyze --test`).
fn multiprocessor_tests(
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Vec<MultiprocessorTest>>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let names: Vec<String> = match value.cast::<PyString>() {
        Ok(text) => text
            .to_cow()?
            .split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
        Err(_) => value.extract().map_err(|_| {
            error(
                Kind::Usage,
                "tests=: a list of test names or one comma-separated string, e.g. [\"gedf:bcl\", \"pedf:ff-decreasing\"]",
            )
        })?,
    };
    if names.is_empty() {
        return Err(error(
            Kind::Usage,
            "tests=: name at least one test, or leave tests= out for all of them",
        ));
    }
    names
        .iter()
        .map(|n| {
            MultiprocessorTest::from_name(n).map_err(|e| error(Kind::Usage, format!("tests=: {e}")))
        })
        .collect::<PyResult<Vec<_>>>()
        .map(Some)
}

/// Runs the tests `rtlab analyze` runs on `taskset`.
#[pyfunction]
#[pyo3(signature = (taskset, policy = None, test = None, overheads = None, tick = None, threads = None, locking = None, breakdown = false, cpus = None, tests = None))]
#[allow(clippy::too_many_arguments)]
pub fn analyze(
    py: Python<'_>,
    taskset: &Bound<'_, PyTaskSet>,
    policy: Option<&str>,
    test: Option<String>,
    overheads: Option<&str>,
    tick: Option<&Bound<'_, PyAny>>,
    threads: Option<usize>,
    locking: Option<&str>,
    breakdown: bool,
    cpus: Option<u32>,
    tests: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyAnalysis> {
    let taskset = taskset.get();
    let chosen_tests = multiprocessor_tests(tests)?;
    let m = cpus.unwrap_or(taskset.set.processors());
    if m > 1 || chosen_tests.is_some() {
        let given = [
            (policy.is_some(), "policy="),
            (overheads.is_some(), "overheads="),
            (tick.is_some_and(|t| !t.is_none()), "tick="),
            (threads.is_some(), "threads="),
            (locking.is_some(), "locking="),
            (breakdown, "breakdown="),
        ];
        if let Some((_, name)) = given.iter().find(|(g, _)| *g) {
            return Err(error(
                Kind::Usage,
                format!(
                    "{name} is for one processor; on {m} processors the multiprocessor tests run (tests=), which model no policy choice, overheads, breakdown or locking"
                ),
            ));
        }
        return analyze_multiprocessor(py, taskset, m, cpus, chosen_tests, test);
    }
    let policy = policy.unwrap_or("rm");
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
    let origin = &taskset.origin;
    let document = interruptible_sized(py, set.tasks.len(), |_| {
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
        let doc = analyze_document(origin, set, &options, &reports, breakdowns.as_deref());
        serde_json::to_value(&doc).map_err(|e| e.to_string())
    })?
    .map_err(|e| error(Kind::Analysis, e))?;
    check_test(&document, test.as_deref(), &format!("policy=`{policy}`"))?;
    PyAnalysis::new(py, &document, Some(policy.to_string()), test)
}

/// `rtlab analyze` on `m` processors: the global and partitioned tests.
fn analyze_multiprocessor(
    py: Python<'_>,
    taskset: &PyTaskSet,
    m: u32,
    cpus: Option<u32>,
    tests: Option<Vec<MultiprocessorTest>>,
    test: Option<String>,
) -> PyResult<PyAnalysis> {
    let set = match cpus {
        Some(m) => taskset
            .set
            .with_processors(m)
            .map_err(|e| error(Kind::Usage, format!("cpus={m}: {}", e.message)))?,
        None => taskset.set.clone(),
    };
    if set.assignment().is_some() {
        if let Some(global) = tests.iter().flatten().find(|t| t.is_global()) {
            return Err(error(
                Kind::Usage,
                format!("tests=`{global}`: a global test ignores the tasks' cpu fields, and every task of this set is fixed to a processor; ask pedf:/pfp: tests, or remove the cpu fields"),
            ));
        }
    }
    let tests = tests.unwrap_or_else(|| MultiprocessorTest::ALL.to_vec());
    let origin = &taskset.origin;
    let document = interruptible_sized(py, set.tasks.len(), |_| {
        let doc =
            multiprocessor::analyze_document(&set, origin, m, &tests).map_err(|e| e.to_string())?;
        serde_json::to_value(&doc).map_err(|e| e.to_string())
    })?
    .map_err(|e| error(Kind::Analysis, e))?;
    check_test(&document, test.as_deref(), &format!("cpus={m}"))?;
    PyAnalysis::new(py, &document, None, test)
}

/// Refuses a `test=` that is not among the tests the document ran.
fn check_test(document: &Value, test: Option<&str>, scope: &str) -> PyResult<()> {
    let Some(test) = test else {
        return Ok(());
    };
    let run: Vec<&str> = document["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["test"].as_str())
        .collect();
    if run.contains(&test) {
        return Ok(());
    }
    let mut unique = run.clone();
    unique.dedup();
    Err(error(
        Kind::Usage,
        format!(
            "test=`{test}`: not among the tests run for {scope} ({})",
            unique.join(", ")
        ),
    ))
}
