//! Sweeps from Python: a spec (the JSON form of `rtlab sweep`'s flags, as
//! `rtlab_analysis::sweep::SweepSpec` reads it) run whole in this process,
//! or shard by shard (on Dask workers) and merged in shard order. The
//! counts never depend on the split: sample `g` is drawn from stream
//! `(seed, g)` whichever shard runs it.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rtlab_analysis::sweep::{
    merge, run_prepared_shard, ShardResult, SweepError, SweepResult, SweepSpec, MAX_SWEEP_THREADS,
};

use crate::convert::to_py;
use crate::errors::{error, Kind};
use crate::interrupt::interruptible;

/// A sweep error as the `rtlab` exception: spec problems (a bad key or
/// value) are `SweepSpecError`s naming the spec key, the rest `SweepError`s.
fn sweep_error(e: SweepError) -> PyErr {
    match &e {
        SweepError::Setting(_) | SweepError::Document { .. } => {
            error(Kind::SweepSpec, e.message_with(&|key| key.to_string()))
        }
        _ => error(Kind::Sweep, e),
    }
}

/// The spec from its JSON text (unknown keys refused). Without `tests`, the
/// tests are `rtlab sweep`'s defaults for its `cpus` (multiprocessor tests
/// on more than one processor), as on the command line: `SweepSpec` reads
/// them so.
fn spec(text: &str) -> PyResult<SweepSpec> {
    SweepSpec::from_json(text).map_err(sweep_error)
}

/// Runs shard `index` of `count` with the GIL released, on `threads`
/// threads (default: rayon's global pool, one per core). This thread
/// waits, checking for Ctrl-C (which stops the shard) and calling
/// `progress(done, total)` every 50 ms.
fn run_shard_polling(
    py: Python<'_>,
    spec: &SweepSpec,
    index: u64,
    count: u64,
    threads: Option<usize>,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<ShardResult> {
    if let Some(n) = threads.filter(|n| !(1..=MAX_SWEEP_THREADS).contains(n)) {
        return Err(error(
            Kind::Usage,
            format!("threads={n}: use 1 to {MAX_SWEEP_THREADS} worker threads"),
        ));
    }
    let prepared = spec
        .prepare()
        .map_err(sweep_error)?
        .with_simulator(rtlab_sim::sweep_test::simulator());
    let total =
        rtlab_analysis::sweep::Shard::of(index, count, prepared.samples()).map_or(0, |s| s.len());
    let pool = threads
        .map(|n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| error(Kind::Sweep, format!("cannot start {n} threads: {e}")))
        })
        .transpose()?;
    let done = AtomicU64::new(0);
    let progress: Option<Py<PyAny>> = progress.map(|p| p.clone().unbind());
    let report_progress = |py: Python<'_>| match &progress {
        Some(p) => p.call1(py, (done.load(Ordering::Relaxed), total)).map(drop),
        None => Ok(()),
    };
    let (done, prepared, pool) = (&done, &prepared, &pool);
    let outcome = interruptible(py, Some(&report_progress), |cancel| {
        // The shard runs on rayon's threads, which the cancel scope does
        // not reach: its progress callback reads the flag instead.
        let report = |sets: u64| {
            done.fetch_add(sets, Ordering::Relaxed);
            !cancel.is_cancelled()
        };
        let run = || run_prepared_shard(prepared, index, count, &report);
        match pool {
            Some(pool) => pool.install(run),
            None => run(),
        }
    })?
    .map_err(sweep_error)?;
    if let Some(p) = &progress {
        p.call1(py, (total, total))?;
    }
    Ok(outcome)
}

/// Runs the whole sweep in this process (rayon, GIL released, Ctrl-C honoured).
#[pyfunction]
#[pyo3(signature = (spec_json, progress = None))]
pub fn sweep_local(
    py: Python<'_>,
    spec_json: &str,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<PySweepResult> {
    let spec = spec(spec_json)?;
    let shard = run_shard_polling(py, &spec, 0, 1, None, progress)?;
    merge(&[shard]).map(PySweepResult).map_err(sweep_error)
}

/// Runs shard `index` of `count` and returns its document (what `rtlab
/// sweep --shard I/N --out` writes): what a Dask task returns.
#[pyfunction]
#[pyo3(signature = (spec_json, index, count, threads = None))]
pub fn sweep_shard(
    py: Python<'_>,
    spec_json: &str,
    index: u64,
    count: u64,
    threads: Option<usize>,
) -> PyResult<String> {
    let spec = spec(spec_json)?;
    Ok(run_shard_polling(py, &spec, index, count, threads, None)?.to_json())
}

/// Merges shard documents (in any order; added in shard-index order).
#[pyfunction]
pub fn sweep_merge(py: Python<'_>, shards: Vec<String>) -> PyResult<PySweepResult> {
    py.detach(|| {
        let shards = shards
            .iter()
            .map(|text| ShardResult::from_json(text))
            .collect::<Result<Vec<_>, _>>()?;
        merge(&shards)
    })
    .map(PySweepResult)
    .map_err(sweep_error)
}

/// The spec in its full JSON form (every default filled in) and its number
/// of samples (utilization steps × sets per step), or the spec's error.
#[pyfunction]
pub fn sweep_spec(spec_json: &str) -> PyResult<(String, u64)> {
    let spec = spec(spec_json)?;
    let samples = spec.prepare().map_err(sweep_error)?.samples();
    Ok((spec.to_json(), samples))
}

/// A sweep's counts: `digest`, `to_dict()` (the `rtlab sweep --json`
/// document), `ratios`, `to_pandas()`.
#[pyclass(module = "rtlab._rtlab", name = "SweepResult", frozen)]
pub struct PySweepResult(pub SweepResult);

#[pymethods]
impl PySweepResult {
    /// `sha256:` and the hex SHA-256 of the `rtlab sweep --json` document:
    /// equal however the sweep was split.
    #[getter]
    fn digest(&self) -> String {
        self.0.digest()
    }

    /// The test names, in column order.
    #[getter]
    fn tests(&self) -> Vec<String> {
        self.0.test_names()
    }

    /// The utilization steps.
    #[getter]
    fn utilizations(&self) -> Vec<f64> {
        self.0.rows.iter().map(|r| r.utilization).collect()
    }

    /// Acceptance ratio per test, one value per utilization step.
    #[getter]
    fn ratios(&self) -> std::collections::BTreeMap<String, Vec<f64>> {
        self.0
            .test_names()
            .into_iter()
            .enumerate()
            .map(|(k, name)| (name, self.0.rows.iter().map(|r| r.ratio(k)).collect()))
            .collect()
    }

    /// The `rtlab sweep --json` document.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.0.document())
    }

    /// The `rtlab sweep --json` document's text, byte for byte.
    fn to_json(&self) -> String {
        self.0.document_json()
    }

    /// One row per utilization step and test: utilization, test, sets,
    /// accepted, rejected, inconclusive, ratio (pandas imported here).
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pandas = crate::simulation::import_pandas(py)?;
        let names = self.0.test_names();
        let rows = pyo3::types::PyList::empty(py);
        for row in &self.0.rows {
            for (k, name) in names.iter().enumerate() {
                let d = pyo3::types::PyDict::new(py);
                d.set_item("utilization", row.utilization)?;
                d.set_item("test", name)?;
                d.set_item("sets", row.sets)?;
                d.set_item("accepted", row.accepted[k])?;
                d.set_item("rejected", row.rejected[k])?;
                d.set_item("inconclusive", row.inconclusive[k])?;
                d.set_item("ratio", row.ratio(k))?;
                rows.append(d)?;
            }
        }
        pandas.call_method1("DataFrame", (rows,))
    }

    fn __repr__(&self) -> String {
        format!(
            "SweepResult({} steps x {} sets, tests {}, {})",
            self.0.rows.len(),
            self.0.spec.sets,
            self.0.test_names().join(","),
            self.0.digest()
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let rebuild = py.get_type::<PySweepResult>().getattr("_from_pickle")?;
        let args = PyTuple::new(py, [slf.get().0.to_json()])?;
        PyTuple::new(py, [rebuild, args.into_any()])
    }

    #[staticmethod]
    fn _from_pickle(json: &str) -> PyResult<PySweepResult> {
        SweepResult::from_json(json)
            .map(PySweepResult)
            .map_err(sweep_error)
    }
}
