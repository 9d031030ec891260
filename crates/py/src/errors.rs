//! Library errors as Python exceptions of the `rtlab.Error` hierarchy.
//!
//! The classes are defined once, in Python (python/rtlab/_errors.py), so
//! that one can also be a `ValueError` (`UsageError`); this module imports
//! each once (`import_exception!` keeps the type object after the first
//! use). The message is the one line the CLI prints after `error:`, with
//! the CLI's flags spelt as Python's arguments (`duration=`, not
//! `--duration`).

use std::fmt::Display;

use pyo3::prelude::*;

pyo3::import_exception!(rtlab._errors, UsageError);
pyo3::import_exception!(rtlab._errors, TaskSetError);
pyo3::import_exception!(rtlab._errors, AnalysisError);
pyo3::import_exception!(rtlab._errors, SimulationError);
pyo3::import_exception!(rtlab._errors, StoreError);
pyo3::import_exception!(rtlab._errors, SweepError);
pyo3::import_exception!(rtlab._errors, SweepSpecError);

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

/// The `rtlab` exception of `kind` with `message`, in one line. Needs no
/// GIL: the exception is made when Python first looks at it.
pub fn error(kind: Kind, message: impl Display) -> PyErr {
    let message = rtlab_model::printable(&message.to_string()).into_owned();
    match kind {
        Kind::Usage => UsageError::new_err(message),
        Kind::TaskSet => TaskSetError::new_err(message),
        Kind::Analysis => AnalysisError::new_err(message),
        Kind::Simulation => SimulationError::new_err(message),
        Kind::Store => StoreError::new_err(message),
        Kind::Sweep => SweepError::new_err(message),
        Kind::SweepSpec => SweepSpecError::new_err(message),
    }
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

/// `--setting` as Python spells it: the keyword argument `setting=`
/// (dashes become underscores).
pub fn argument(setting: &str) -> String {
    format!("{}=", setting.trim_start_matches("--").replace('-', "_"))
}
