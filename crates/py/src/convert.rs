//! Conversions between Python values and the library's.
//!
//! - Durations: a string with a unit, exactly as the CLI reads them
//!   (`"5s"`, `"2500us"`, `"1.5ms"`), or a `datetime.timedelta`. A bare
//!   number is refused with a hint, as the CLI refuses `--duration 5`: in
//!   Python `duration=5` read as nanoseconds simulated 5 ns, and read as
//!   seconds it would differ from every `*_ns` attribute rtlab returns.
//! - Documents: serde values become Python objects directly (dicts, lists,
//!   str, int, float, bool, None; `pythonize`), equal to what `json.loads`
//!   makes of the CLI's `--json`, with no JSON text in between.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use rtlab_model::Nanos;

use crate::errors::{error, Kind};

/// A duration argument named `name` (`duration`, `tick`, `rows[0].period`).
pub fn nanos(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Nanos> {
    if let Ok(text) = value.cast::<PyString>() {
        let text = text.to_cow()?;
        let text = text.as_ref();
        return text
            .parse::<Nanos>()
            .map_err(|e| error(Kind::Usage, format!("{name}=`{text}`: {e}")));
    }
    let py = value.py();
    let timedelta = py.import("datetime")?.getattr("timedelta")?;
    if value.is_instance(&timedelta)? {
        return from_timedelta(value, name);
    }
    let shown = value.repr().map_or_else(|_| "?".into(), |r| r.to_string());
    let not_finite = value
        .cast::<PyFloat>()
        .is_ok_and(|f| !f.value().is_finite());
    let hint = if not_finite {
        format!("{name}={shown}: not a duration (NaN or infinite: a missing value in a DataFrame?)")
    } else if value.is_instance_of::<PyBool>() {
        format!("{name}={shown}: a duration is a string with a unit such as \"25ms\", or a datetime.timedelta")
    } else if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
        format!(
            "{name}={shown}: a bare number has no unit; write {name}=\"{shown}s\" (or \"{shown}ms\", \"{shown}us\", \"{shown}ns\"), or a datetime.timedelta"
        )
    } else {
        format!("{name}={shown}: a duration is a string with a unit such as \"25ms\", or a datetime.timedelta")
    };
    Err(error(Kind::Usage, hint))
}

/// A `datetime.timedelta` in whole nanoseconds (it holds microseconds):
/// a negative one is refused.
fn from_timedelta(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Nanos> {
    let days: i64 = value.getattr("days")?.extract()?;
    let seconds: i64 = value.getattr("seconds")?.extract()?;
    let micros: i64 = value.getattr("microseconds")?.extract()?;
    let shown = value.str().map_or_else(|_| "?".into(), |r| r.to_string());
    let total_us =
        i128::from(days) * 86_400_000_000 + i128::from(seconds) * 1_000_000 + i128::from(micros);
    if total_us < 0 {
        return Err(error(
            Kind::Usage,
            format!("{name}=timedelta({shown}): a duration is not negative"),
        ));
    }
    u64::try_from(total_us * 1_000)
        .map(Nanos::from_ns)
        .map_err(|_| {
            error(
                Kind::Usage,
                format!("{name}=timedelta({shown}): longer than 584 years, the longest duration rtlab holds"),
            )
        })
}

/// An optional duration argument (`None` stays `None`).
pub fn optional_nanos(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<Nanos>> {
    value
        .filter(|v| !v.is_none())
        .map(|v| nanos(v, name))
        .transpose()
}

/// A serializable value as Python objects (see the module docs).
pub fn to_py<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| {
        pyo3::exceptions::PyRuntimeError::new_err(format!("cannot convert a result: {e}"))
    })
}

/// Python objects (a dict from [`to_py`], unpickled) back as a JSON value.
pub fn from_py(value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    pythonize::depythonize(value)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("not an rtlab document: {e}")))
}
