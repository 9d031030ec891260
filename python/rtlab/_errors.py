"""The exceptions rtlab raises. Every one is an :class:`Error`; its message
is the one line the CLI prints after ``error:``."""


class Error(Exception):
    """Any error rtlab reports (a bad argument, a bad file, a failed run)."""


class UsageError(Error, ValueError):
    """A bad argument: a value out of range, an unknown name, keywords that
    do not go together (the CLI's usage errors, exit status 2)."""


class TaskSetError(Error):
    """A task set that cannot be loaded, parsed or built (``file:line:col: ...``)."""


class AnalysisError(Error):
    """An analysis that cannot run on this set."""


class SimulationError(Error):
    """A simulation that cannot run, or that stopped early."""


class StoreError(Error):
    """The results store cannot be opened or read, or a run is not in it."""


class SweepError(Error):
    """A sweep that cannot run, or shards that cannot be merged."""


class SweepSpecError(SweepError, UsageError):
    """A sweep spec with an unknown key or a bad value."""
