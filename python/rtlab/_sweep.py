"""``rtlab.sweep``: schedulability ratio against utilization on random task
sets, in this process or sharded over a Dask cluster, with the same counts
(and the same digest) as ``rtlab sweep`` however the work is split."""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Mapping, Optional

from . import _rtlab
from ._errors import SweepSpecError
from ._rtlab import SweepResult

#: Samples (generated and analysed task sets) per Dask shard by default.
#: A shard of 20,000 sets of 10 tasks takes about 0.2 to 1 s per core
#: (depending on the tests), so Dask's few milliseconds per task stay below
#: 1% while there are still enough shards to keep every worker busy.
SHARD_SAMPLES = 20_000

#: The spec's keys: ``rtlab sweep``'s flags (``test`` may also be spelled
#: ``tests``; a list or a comma-separated string).
SPEC_KEYS = (
    "tasks", "from", "to", "step", "sets", "seed", "method", "deadlines",
    "test", "overheads", "tick", "cpus",
)


def spec_json(spec: Optional[Mapping[str, Any]] = None, **keywords: Any) -> str:
    """The spec as the JSON the Rust side reads: the flags' names as keys
    (``from``, ``to``, ``step``, ``sets``, ``test``, ...), durations as
    strings with a unit or ints of nanoseconds. Unknown keys are refused
    with :class:`rtlab.SweepSpecError`."""
    merged: dict[str, Any] = dict(spec or {})
    merged.update(keywords)
    out: dict[str, Any] = {}
    for key, value in merged.items():
        name = str(key).replace("-", "_")
        if name not in SPEC_KEYS and name != "tests":
            raise SweepSpecError(
                f"sweep spec: unknown key `{key}`; the keys are {', '.join(SPEC_KEYS)}"
            )
        if name in ("test", "tests"):
            if "tests" in out:
                raise SweepSpecError("sweep spec: give `test` or `tests`, not both")
            name = "tests"
            if isinstance(value, str):
                value = [t.strip() for t in value.split(",") if t.strip()]
        if name == "tick" and isinstance(value, int) and not isinstance(value, bool):
            value = f"{value}ns"
        out[name] = value
    return json.dumps(out)


def _bar(total: int, enabled: bool, description: str) -> Any:
    """A tqdm progress bar, or None when disabled or tqdm is missing."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return None
    return tqdm(total=total, desc=description, unit="sets", unit_scale=True)


def run_shard(spec: str, index: int, count: int) -> str:
    """Runs shard ``index`` of ``count`` of the spec (JSON) on this Dask
    worker's threads and returns its shard document (what ``rtlab sweep
    --shard I/N --out`` writes, with its digest)."""
    threads: Optional[int] = None
    try:
        from distributed import get_worker

        threads = get_worker().state.nthreads
    except (ImportError, ValueError, AttributeError):
        threads = None
    return _rtlab.sweep_shard(spec, index, count, threads)


def sweep(
    spec: Optional[Mapping[str, Any]] = None,
    *,
    client: Any = None,
    shards: Optional[int] = None,
    progress: bool = False,
    **keywords: Any,
) -> SweepResult:
    """Runs a sweep: locally (all cores, GIL released, Ctrl-C stops it) or,
    with ``client`` (a ``distributed.Client``), as ``shards`` Dask tasks
    merged in shard order. The result is identical either way."""
    text, samples = _rtlab.sweep_spec(spec_json(spec, **keywords))
    if client is None:
        if shards is not None:
            raise SweepSpecError("shards= needs client=: a local sweep is one shard on every core")
        bar = _bar(samples, progress, "sweep")
        callback: Optional[Callable[[int, int], None]] = None
        if bar is not None:
            def callback(done: int, total: int) -> None:
                bar.update(done - bar.n)
        try:
            return _rtlab.sweep_local(text, callback)
        finally:
            if bar is not None:
                bar.close()
    count = shards if shards is not None else max(1, math.ceil(samples / SHARD_SAMPLES))
    if count < 1:
        raise SweepSpecError(f"shards={count}: use at least 1")
    return _sweep_on_dask(client, text, count, progress)


def _sweep_on_dask(client: Any, text: str, count: int, progress: bool) -> SweepResult:
    from distributed import as_completed

    futures = client.map(
        run_shard, [text] * count, range(count), [count] * count, pure=False
    )
    bar = _bar(count, progress, "shards")
    try:
        for _ in as_completed(futures):
            if bar is not None:
                bar.update(1)
        documents = client.gather(futures)
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        if bar is not None:
            bar.close()
    return _rtlab.sweep_merge(list(documents))
