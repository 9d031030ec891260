"""The runs saved with ``--save`` (``rtlab results``), read from the store:
one SQLite file, by default the CLI's (``$RTLAB_STORE`` or
``$XDG_DATA_HOME/rtlab/results.sqlite``, else ``~/.local/share/rtlab/results.sqlite``)."""

from __future__ import annotations

import builtins
import os
from typing import Any, Optional, Union

from ._rtlab import StoredRun, results_list, results_load

__all__ = ["StoredRun", "list", "load"]

PathLike = Union[str, "os.PathLike[str]"]


def list(store: Optional[PathLike] = None) -> builtins.list[dict[str, Any]]:
    """Every saved run, oldest first, as ``rtlab results list --json`` prints them."""
    return results_list(None if store is None else os.fspath(store))


def load(id: int, store: Optional[PathLike] = None) -> StoredRun:
    """One saved run with its job rows (``rtlab results show ID``)."""
    return results_load(id, None if store is None else os.fspath(store))
