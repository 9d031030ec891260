"""The four-way identity of a sweep (issue 28's proof): `rtlab sweep` in one
process, 7 CLI shards merged, `rtlab.sweep` here and on a Dask
`LocalCluster(n_workers=2, processes=True)` all give the golden digest in
crates/cli/tests/fixtures/sweep-golden.sha256, of the spec beside it. And
a sweep's bad input: one typed exception, nothing merged."""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import pytest

import rtlab
from conftest import REPO

FIXTURES = REPO / "crates" / "cli" / "tests" / "fixtures"
SPEC_FILE = FIXTURES / "sweep-golden.json"


def golden_digest() -> str:
    return (FIXTURES / "sweep-golden.sha256").read_text().strip()


def golden_spec() -> dict:
    return json.loads(SPEC_FILE.read_text())


def digest_of(printed: str) -> str:
    """The digest of a `--json` document as printed (final newline dropped)."""
    text = printed[:-1] if printed.endswith("\n") else printed
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def local() -> rtlab.SweepResult:
    return rtlab.sweep(golden_spec())


def test_the_cli_in_one_process_gives_the_golden_digest(cli):
    printed = cli.run("sweep", "--spec", str(SPEC_FILE), "--json").stdout
    assert digest_of(printed) == golden_digest()


def test_seven_cli_shards_merged_give_the_golden_digest(cli, tmp_path: Path):
    files = []
    for i in range(7):
        out = tmp_path / f"shard-{i}.json"
        cli.run("sweep", "--spec", str(SPEC_FILE), "--shard", f"{i}/7", "--out", str(out))
        files.append(str(out))
    printed = cli.run("sweep", "merge", "--json", *reversed(files)).stdout
    assert digest_of(printed) == golden_digest()


def test_a_local_python_sweep_gives_the_golden_digest(cli, local):
    assert local.digest == golden_digest()
    assert digest_of(local.to_json()) == golden_digest()
    assert local.to_dict() == json.loads(cli.run("sweep", "--spec", str(SPEC_FILE), "--json").stdout)
    spec = golden_spec()
    assert local.tests == spec["tests"]
    assert local.utilizations == pytest.approx([0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    # Theory on constrained deadlines (D <= T), one processor: DM is the
    # optimal fixed-priority order (Leung & Whitehead 1982), so OPA accepts
    # exactly what DM does and RM no more; EDF is optimal, so its exact
    # demand test accepts at least as many.
    r = local.ratios
    chains = [["rm:rta", "dm:rta", "edf:edf-demand"], ["dm:rta", "opa:rta", "edf:edf-demand"],
              ["rm:liu-layland", "rm:hyperbolic", "rm:rta"]]
    for chain in chains:
        present = [name for name in chain if name in r]
        for k in range(len(local.utilizations)):
            values = [r[name][k] for name in present]
            assert values == sorted(values), (chain, k, values)
    if "dm:rta" in r and "opa:rta" in r and spec.get("deadlines", "implicit") != "arbitrary":
        assert r["dm:rta"] == r["opa:rta"]
    assert pickle.loads(pickle.dumps(local)).digest == local.digest


def test_a_dask_local_cluster_sweep_gives_the_golden_digest():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        on_dask = rtlab.sweep(golden_spec(), client=client, shards=7)
        assert on_dask.digest == golden_digest()
        # The default shard count (one shard here: the spec is small) too.
        assert rtlab.sweep(golden_spec(), client=client).digest == golden_digest()


def test_python_shards_are_the_cli_shards(cli, tmp_path: Path):
    spec = rtlab._sweep.spec_json(golden_spec())
    out = tmp_path / "shard-3.json"
    cli.run("sweep", "--spec", str(SPEC_FILE), "--shard", "3/7", "--out", str(out))
    assert json.loads(rtlab._sweep.run_shard(spec, 3, 7)) == json.loads(out.read_text())


def test_multiprocessor_sweeps_match_the_cli(cli, tmp_path: Path):
    small = {"tasks": 6, "from": 1.0, "to": 2.0, "step": 0.5, "sets": 30, "seed": 5, "cpus": 2}
    result = rtlab.sweep(small)
    flags = ["--tasks", "6", "--from", "1.0", "--to", "2.0", "--step", "0.5", "--sets", "30",
             "--seed", "5", "--cpus", "2", "--json"]
    assert result.to_dict() == cli.json("sweep", *flags)
    assert len(result.tests) > 0 and result.utilizations == pytest.approx([1.0, 1.5, 2.0])


def test_simulated_columns_match_the_cli_here_and_on_dask(cli):
    # Issue 38: `gedf:sim` simulates each set; the same numbers from the
    # CLI, here and on a Dask cluster, and never below the sufficient tests.
    spec = {"tasks": 6, "from": 2.4, "to": 3.6, "step": 0.6, "sets": 12, "seed": 2, "cpus": 4,
            "test": "gedf:bcl,gedf:rta,gedf:sim"}
    result = rtlab.sweep(spec)
    flags = ["--tasks", "6", "--from", "2.4", "--to", "3.6", "--step", "0.6", "--sets", "12",
             "--seed", "2", "--cpus", "4", "--test", "gedf:bcl,gedf:rta,gedf:sim", "--json"]
    assert result.to_dict() == cli.json("sweep", *flags)
    r = result.ratios
    for k in range(len(result.utilizations)):
        assert r["gedf:bcl"][k] <= r["gedf:sim"][k] and r["gedf:rta"][k] <= r["gedf:sim"][k]
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        assert rtlab.sweep(spec, client=client, shards=3).digest == result.digest


def test_spec_keys_are_the_flags_and_unknown_ones_are_refused():
    small = {"tasks": 4, "from": 0.9, "to": 1.0, "step": 0.1, "sets": 20, "seed": 3}
    as_list = rtlab.sweep(small, test=["rm:rta", "edf:edf-demand"])
    as_text = rtlab.sweep(small, test="rm:rta,edf:edf-demand")
    assert as_list.digest == as_text.digest and as_list.tests == ["rm:rta", "edf:edf-demand"]
    with pytest.raises(rtlab.SweepSpecError, match="unknown key `sets_per_step`"):
        rtlab.sweep({"sets_per_step": 10})
    with pytest.raises(rtlab.SweepSpecError, match="sets"):
        rtlab.sweep(small, sets=0)
    with pytest.raises(rtlab.SweepSpecError, match="cpus"):
        rtlab.sweep(small, cpus=0)
    with pytest.raises(rtlab.SweepSpecError, match="uniprocessor test"):
        rtlab.sweep(small, cpus=4, test="rm:rta")
    with pytest.raises(ValueError):  # a SweepSpecError is a UsageError, a ValueError
        rtlab.sweep(small, test="rm:nonsense")


def test_bad_shards_are_refused_and_nothing_merged():
    spec = rtlab._sweep.spec_json(golden_spec())
    shards = [rtlab._sweep.run_shard(spec, i, 3) for i in range(3)]
    assert rtlab._rtlab.sweep_merge(shards).digest == golden_digest()
    with pytest.raises(rtlab.SweepError):
        rtlab._rtlab.sweep_merge(shards[:2])  # one missing
    with pytest.raises(rtlab.SweepError):
        rtlab._rtlab.sweep_merge(shards[:-1] + [shards[-1][: len(shards[-1]) // 2]])  # truncated
    edited = json.loads(shards[0])
    edited["rows"][0]["accepted"][0] += 1
    with pytest.raises(rtlab.SweepError, match="digest"):
        rtlab._rtlab.sweep_merge([json.dumps(edited), *shards[1:]])
    other_seed = rtlab._sweep.spec_json(golden_spec(), seed=1)
    with pytest.raises(rtlab.SweepError, match="seed"):
        rtlab._rtlab.sweep_merge([rtlab._sweep.run_shard(other_seed, 0, 3), *shards[1:]])
    with pytest.raises(rtlab.SweepSpecError, match="shard"):
        rtlab._sweep.run_shard(spec, 3, 3)


def test_a_local_sweep_reports_progress_and_stops_on_ctrl_c():
    import _thread
    import threading
    import time

    spec = rtlab._sweep.spec_json(golden_spec())
    seen: list[tuple[int, int]] = []
    result = rtlab._rtlab.sweep_local(spec, lambda done, total: seen.append((done, total)))
    assert result.digest == golden_digest()
    assert seen[-1] == (600, 600)  # 6 steps x 100 sets, all counted at the end
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    # 10^7 sets take minutes: Ctrl-C after 0.3 s stops it within seconds.
    big = {"tasks": 10, "from": 0.05, "to": 1.0, "step": 0.05, "sets": 500_000, "seed": 1}
    threading.Timer(0.3, _thread.interrupt_main).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        rtlab.sweep(big)
    assert time.monotonic() - started < 30
