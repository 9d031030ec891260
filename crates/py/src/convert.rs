//! Conversions between Python values and the library's: durations (a
//! string with a unit, as in task files, or whole nanoseconds) and JSON
//! documents (as Python dicts and lists, through the `json` module so that
//! a document reads exactly as the CLI's `--json` prints it).

use pyo3::prelude::*;
use pyo3::types::PyString;
use rtlab_model::Nanos;

use crate::errors::{error, Kind};

/// A duration argument: `"25ms"`, `"1.5s"`, or an int of nanoseconds.
pub fn nanos(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Nanos> {
    if let Ok(text) = value.cast::<PyString>() {
        let text = text.to_cow()?;
        let text = text.as_ref();
        return text
            .parse::<Nanos>()
            .map_err(|e| error(Kind::Usage, format!("{name}=`{text}`: {e}")));
    }
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(error(Kind::Usage, format!("{name}: a duration is a string such as \"25ms\" or an int of nanoseconds, not a bool")));
    }
    match value.extract::<u64>() {
        Ok(ns) => Ok(Nanos::from_ns(ns)),
        Err(_) => Err(error(
            Kind::Usage,
            format!(
                "{name}={}: a duration is a string such as \"25ms\" or an int of nanoseconds (>= 0)",
                value.repr().map_or_else(|_| "?".into(), |r| r.to_string())
            ),
        )),
    }
}

/// An optional duration argument.
pub fn optional_nanos(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<Nanos>> {
    value
        .filter(|v| !v.is_none())
        .map(|v| nanos(v, name))
        .transpose()
}

/// A JSON document as Python objects (dicts, lists, str, int, float, bool, None).
pub fn json_to_py<'py>(py: Python<'py>, json: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (json,))
}

/// A serializable value as Python objects, through its JSON text.
pub fn to_py<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    json_to_py(py, &text)
}
