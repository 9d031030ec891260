//! `rtlab.generate`: random task sets, the same parameters, defaults and
//! sets for a seed as `rtlab taskset gen`.

use pyo3::prelude::*;
use rtlab_model::generate::{
    generate_sets, DeadlineModel, GeneratorConfig, PeriodDistribution, PeriodKind,
    UtilizationMethod,
};

use crate::convert::nanos;
use crate::errors::{error, Kind};
use crate::interrupt::interruptible_sized;
use crate::taskset::PyTaskSet;

fn parsed<T: std::str::FromStr>(text: &str, name: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|e| error(Kind::Usage, format!("{name}=`{text}`: {e}")))
}

/// `count` random sets (the `rtlab taskset gen` flags as keywords).
#[pyfunction]
#[pyo3(signature = (
    tasks = 10, utilization = 0.75, count = 1, seed = 0, method = "randfixedsum",
    max_task_utilization = 1.0, periods = "log-uniform", period_min = None,
    period_max = None, period_granularity = None, deadlines = "implicit", prefix = "gen"
))]
#[allow(clippy::too_many_arguments)]
pub fn generate(
    py: Python<'_>,
    tasks: usize,
    utilization: f64,
    count: u64,
    seed: u64,
    method: &str,
    max_task_utilization: f64,
    periods: &str,
    period_min: Option<&Bound<'_, PyAny>>,
    period_max: Option<&Bound<'_, PyAny>>,
    period_granularity: Option<&Bound<'_, PyAny>>,
    deadlines: &str,
    prefix: &str,
) -> PyResult<Vec<PyTaskSet>> {
    let duration = |value: Option<&Bound<'_, PyAny>>, name: &str, default: &str| match value {
        Some(v) if !v.is_none() => nanos(v, name),
        _ => Ok(default.parse().expect("a valid default duration")),
    };
    let config = GeneratorConfig {
        tasks,
        utilization,
        method: parsed::<UtilizationMethod>(method, "method")?,
        max_task_utilization,
        periods: PeriodDistribution::new(
            parsed::<PeriodKind>(periods, "periods")?,
            duration(period_min, "period_min", "10ms")?,
            duration(period_max, "period_max", "1s")?,
            duration(period_granularity, "period_granularity", "1ms")?,
        ),
        deadlines: parsed::<DeadlineModel>(deadlines, "deadlines")?,
        seed,
        name_prefix: prefix.to_string(),
    };
    // The CLI's `taskset gen` entry; Ctrl-C stops it between sets. The
    // settings named as this function's arguments (`max_task_utilization`).
    let size = tasks.saturating_mul(usize::try_from(count).unwrap_or(usize::MAX));
    let sets = interruptible_sized(py, size, |_| generate_sets(&config, count))?.map_err(|e| {
        error(
            Kind::Usage,
            e.message_with(&|setting| setting.replace('-', "_")),
        )
    })?;
    Ok(sets
        .into_iter()
        .map(|set| PyTaskSet::plain(set, "generated"))
        .collect())
}
