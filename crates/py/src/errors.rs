//! Library errors as Python exceptions of the `rtlab.Error` hierarchy,
//! defined in Python (python/rtlab/_errors.py) so that a class can also be a
//! `ValueError`; the message is the one line the CLI prints after `error:`.

use std::fmt::Display;

use pyo3::prelude::*;
use pyo3::types::PyType;

/// Which `rtlab` exception to raise.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A bad argument (the CLI's usage errors, exit 2): also a `ValueError`.
    Usage,
    /// A task set that cannot be loaded, parsed or built.
    TaskSet,
    /// An analysis that cannot run on this set.
    Analysis,
    /// A simulation that cannot run or stopped early.
    Simulation,
    /// The results store cannot be read.
    Store,
    /// A sweep that cannot run, or shards that cannot be merged.
    Sweep,
    /// A sweep spec with an unknown key or a bad value: also a `UsageError`.
    SweepSpec,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Usage => "UsageError",
            Kind::TaskSet => "TaskSetError",
            Kind::Analysis => "AnalysisError",
            Kind::Simulation => "SimulationError",
            Kind::Store => "StoreError",
            Kind::Sweep => "SweepError",
            Kind::SweepSpec => "SweepSpecError",
        }
    }
}

/// The `rtlab` exception of `kind` with `message`, in one line.
pub fn error(kind: Kind, message: impl Display) -> PyErr {
    let message = rtlab_model::printable(&message.to_string()).into_owned();
    Python::attach(|py| {
        let class = py
            .import("rtlab._errors")
            .and_then(|m| m.getattr(kind.class_name()))
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, message),
            Err(e) => e,
        }
    })
}

/// Maps a library result's error to the `rtlab` exception of `kind`.
pub trait OrRaise<T> {
    /// The value, or the error as the exception of `kind`.
    fn or_raise(self, kind: Kind) -> PyResult<T>;
}

impl<T, E: Display> OrRaise<T> for Result<T, E> {
    fn or_raise(self, kind: Kind) -> PyResult<T> {
        self.map_err(|e| error(kind, e))
    }
}
