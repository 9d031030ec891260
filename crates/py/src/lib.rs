//! rtlab's Python bindings: the extension module `rtlab._rtlab`, which the
//! pure-Python package `rtlab` (python/rtlab) re-exports. Each Python call
//! is a thin wrapper over the library crates: task sets (`rtlab-model`),
//! analysis (`rtlab-analysis`), simulation (`rtlab-sim`), the results store
//! (`rtlab-store`) and sweeps; nothing of the real-time stack (`rt`,
//! `host`, `sys`), so the module builds wherever those crates' Linux
//! system calls do not. Long calls release the GIL and run on a worker
//! thread that Ctrl-C stops ([`interrupt`]); results cross as Python
//! objects, made once; library errors become the `rtlab.Error` hierarchy
//! (python/rtlab/_errors.py, imported once in [`errors`]) with the CLI's
//! one-line messages, naming this module's arguments.

mod analysis;
mod convert;
mod errors;
mod generate;
mod interrupt;
mod results;
mod simulation;
mod sweep;
mod taskset;

use pyo3::prelude::*;

/// The extension module `rtlab._rtlab`.
#[pymodule]
fn _rtlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<taskset::PyTaskSet>()?;
    m.add_class::<taskset::PyTask>()?;
    m.add_class::<analysis::PyAnalysis>()?;
    m.add_class::<analysis::PyTestResult>()?;
    m.add_class::<analysis::PyTaskResult>()?;
    m.add_class::<simulation::PySimulation>()?;
    m.add_class::<simulation::PyJob>()?;
    m.add_class::<results::PyStoredRun>()?;
    m.add_class::<sweep::PySweepResult>()?;
    m.add_function(wrap_pyfunction!(generate::generate, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::analyze, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(results::results_list, m)?)?;
    m.add_function(wrap_pyfunction!(results::results_load, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_local, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_shard, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_merge, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_spec, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
