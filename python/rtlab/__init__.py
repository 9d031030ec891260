"""rtlab from Python: task sets, schedulability analysis, simulation,
the results store and schedulability sweeps (locally or on a Dask cluster),
all computed by rtlab's Rust core (the same numbers as the ``rtlab`` CLI).

>>> import rtlab
>>> ts = rtlab.TaskSet.load("builtin:avionics")
>>> rtlab.analyze(ts, policy="rm").schedulable
True
"""

from . import results
from ._sweep import sweep
from ._errors import (
    AnalysisError,
    Error,
    SimulationError,
    StoreError,
    SweepError,
    SweepSpecError,
    TaskSetError,
    UsageError,
)
from ._rtlab import (
    Analysis,
    Job,
    Simulation,
    StoredRun,
    SweepResult,
    Task,
    TaskResult,
    TaskSet,
    TestResult,
    __version__,
    analyze,
    generate,
    simulate,
)

__all__ = [
    "Analysis",
    "AnalysisError",
    "Error",
    "Job",
    "Simulation",
    "SimulationError",
    "StoreError",
    "StoredRun",
    "SweepError",
    "SweepResult",
    "SweepSpecError",
    "Task",
    "TaskResult",
    "TaskSet",
    "TaskSetError",
    "TestResult",
    "UsageError",
    "__version__",
    "analyze",
    "generate",
    "results",
    "simulate",
    "sweep",
]
