"""Sweep scaling on a Dask LocalCluster: the same sweep with 1 and 2
worker processes (one thread each), the wall-time ratio, and Dask's
overhead per shard (the same sweep cut into many more shards).

    python examples/dask_scaling.py [SETS]     # 10 tasks, 20 steps x SETS (5000) sets, rm:rta + edf:edf-demand

Needs a release build of the package (`pip install .`) and dask distributed.
"""

import sys
import time

from dask.distributed import Client, LocalCluster

import rtlab

SETS = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
SPEC = {"tasks": 10, "from": 0.05, "to": 1.0, "step": 0.05, "sets": SETS, "seed": 1,
        "test": "rm:rta,edf:edf-demand"}


def timed(client, shards):
    client.run(lambda: None)  # workers up
    started = time.perf_counter()
    result = rtlab.sweep(SPEC, client=client, shards=shards)
    return time.perf_counter() - started, result.digest


def main():
    started = time.perf_counter()
    local = rtlab.sweep(SPEC)
    print(f"local (rayon, all cores): {time.perf_counter() - started:.2f} s  {local.digest}")
    times = {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            wall, digest = timed(client, None)
            assert digest == local.digest
            times[workers] = wall
            print(f"{workers} worker(s), default shards: {wall:.2f} s")
            if workers == 2:
                many, digest = timed(client, 1000)
                assert digest == local.digest
                shards = max(1, -(-20 * SETS // rtlab._sweep.SHARD_SAMPLES))
                print(f"2 workers, 1000 shards: {many:.2f} s; Dask overhead per shard ~ "
                      f"{(many - wall) / (1000 - shards) * 1e3 * 2:.2f} ms of worker time")
    print(f"wall-time ratio 1 worker / 2 workers: {times[1] / times[2]:.2f}")


if __name__ == "__main__":
    main()
