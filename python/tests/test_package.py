"""The Python package against the CLI and against theory: the same task
sets, verdicts, response times, job records and messages."""

from __future__ import annotations

import _thread
import pickle
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

import rtlab


def test_avionics_rm_response_times_equal_the_cli(cli):
    ts = rtlab.TaskSet.load("builtin:avionics")
    assert len(ts) == 15 and ts.origin == "builtin:avionics"
    a = rtlab.analyze(ts, policy="rm", test="rta")
    expected = cli.json("analyze", "builtin:avionics", "--policy", "rm", "--json")
    assert a.to_dict() == expected
    assert a.schedulable is True
    assert a.response_times == {
        t["name"]: t["wcrt_ns"] for t in expected["tasks"] if t["policy"] == "rm"
    }
    # The highest-priority task (T = 25 ms, the shortest period) is never
    # preempted: its response time is its C, 2 ms.
    assert a.response_times["radar-tracking-filter"] == 2_000_000


def test_every_policy_and_test_equal_the_cli(cli):
    ts = rtlab.TaskSet.load("builtin:lf-scenario-4")
    a = rtlab.analyze(ts, policy="all")
    assert a.to_dict() == cli.json("analyze", "builtin:lf-scenario-4", "--policy", "all", "--json")
    names = {(t.policy, t.test) for t in a.tests}
    assert ("rm", "liu-layland") in names and ("edf", "edf-demand") in names
    with pytest.raises(rtlab.UsageError, match="one verdict per policy"):
        a.schedulable
    oh = rtlab.analyze(ts, policy="rm", overheads="builtin:rtmach", tick=["1ms", "4ms"])
    assert oh.to_dict() == cli.json(
        "analyze", "builtin:lf-scenario-4", "--policy", "rm", "--overheads", "builtin:rtmach",
        "--tick", "1ms,4ms", "--json",
    )
    assert [t.tick_ns for t in oh.tests if t.test == "rta-overheads"] == [1_000_000, 4_000_000]


def test_rows_with_hand_computed_response_times():
    # RM: a (T = 10 ms, C = 2 ms) first; R_b = 5 + ceil(R_b / 10) * 2 = 7 ms.
    rows = [
        {"name": "a", "period": "10ms", "wcet_ns": 2_000_000},
        {"name": "b", "period": timedelta(milliseconds=20), "wcet": "5ms"},
    ]
    ts = rtlab.TaskSet.from_rows(rows, name="pair")
    assert ts.name == "pair" and ts.utilization == pytest.approx(0.45)
    assert [t.deadline_ns for t in ts.tasks] == [10_000_000, 20_000_000]
    a = rtlab.analyze(ts, policy="rm")
    assert a.response_times == {"a": 2_000_000, "b": 7_000_000} and a.schedulable is True
    # With D_b = 6 ms < R_b, b misses: no response time within D, not schedulable.
    rows[1]["deadline"] = "6ms"
    tight = rtlab.analyze(rtlab.TaskSet.from_rows(rows), policy="rm")
    assert tight.response_times == {"a": 2_000_000, "b": None}
    assert tight.schedulable is False
    assert [t.schedulable for t in tight.tasks] == [True, False]
    # EDF: demand at t = 6 ms is C_b = 5 ms (a's job due at 10 ms), at 10 ms 7 ms: fits.
    assert rtlab.analyze(rtlab.TaskSet.from_rows(rows), policy="edf").schedulable is True


def test_generate_gives_the_cli_sets(cli, tmp_path: Path):
    cli.run(
        "taskset", "gen", "--tasks", "8", "--utilization", "0.7", "--count", "5", "--seed", "1",
        "--out", str(tmp_path),
    )
    sets = rtlab.generate(tasks=8, utilization=0.7, count=5, seed=1)
    assert [s.name for s in sets] == [f"gen-000{i}" for i in range(5)]
    for s in sets:
        assert s.to_toml() == (tmp_path / f"{s.name}.toml").read_text()
        assert s.utilization == pytest.approx(0.7, abs=1e-6)
    other = rtlab.generate(
        tasks=5, utilization=0.9, seed=3, method="uunifast", periods="uniform",
        period_min="2ms", period_max=timedelta(milliseconds=50), deadlines="constrained:0.5..1",
        prefix="x",
    )[0]
    assert other.to_toml() == cli.run(
        "taskset", "gen", "-n", "5", "-u", "0.9", "--seed", "3", "--method", "uunifast",
        "--periods", "uniform", "--period-min", "2ms", "--period-max", "50ms",
        "--deadlines", "constrained:0.5..1", "--prefix", "x",
    ).stdout


def test_edf_simulation_jobs_equal_the_cli(cli, tmp_path: Path):
    store = tmp_path / "runs.sqlite"
    summary = cli.json(
        "sim", "builtin:lf-scenario-4", "-s", "edf", "-d", "100ms", "--json", "--store", str(store)
    )
    exported = cli.json("results", "export", "1", "--format", "json", "--store", str(store))
    sim = rtlab.simulate(rtlab.TaskSet.load("builtin:lf-scenario-4"), scheduler="edf", duration="100ms")
    assert sim.summary == summary
    # The store keeps its rows by task and job; the simulator reports jobs as they end.
    by_task = sorted((j.to_dict() for j in sim.jobs), key=lambda j: (j["task"], j["job"]))
    # One processor: the export has no CPU, migration, abort or lock column.
    assert [{k: job[k] for k in row} for job, row in zip(by_task, exported["jobs"])] == exported["jobs"]
    assert len(by_task) == len(exported["jobs"])
    # Hand-computed: t2 (released at 0, D = 45 ms) runs first; t1, released at
    # 1 ms with the earlier deadline (24 ms), preempts it and runs 1..4 ms.
    first = {(j.task, j.job): j for j in sim.jobs}
    assert (first["t1", 0].start_ns, first["t1", 0].finish_ns) == (1_000_000, 4_000_000)
    assert first["t2", 0].preemptions == 1 and first["t2", 0].start_ns == 0
    assert not any(j.missed for j in sim.jobs)

    stored = rtlab.results.load(1, store=store)
    assert stored.kind == "sim" and stored.document == summary
    assert [j.to_dict() for j in stored.jobs] == by_task
    assert [r["id"] for r in rtlab.results.list(store=store)] == [1]


def test_to_pandas(monkeypatch):
    import pandas

    sim = rtlab.simulate(rtlab.TaskSet.load("builtin:lf-scenario-4"), scheduler="fp:dm", duration="100ms")
    frame = sim.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == len(sim.jobs) and list(frame["task"]) == [j.task for j in sim.jobs]
    assert list(sim.tasks_to_pandas()["name"]) == ["t1", "t2"]
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        sim.to_pandas()


def test_errors_are_typed_and_say_what_the_cli_says(cli, tmp_path: Path):
    with pytest.raises(rtlab.TaskSetError) as missing:
        rtlab.TaskSet.load(str(tmp_path / "nope.toml"))
    assert str(missing.value) == cli.error_line("analyze", str(tmp_path / "nope.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[[task]]\nname = "a"\nperiod = "10ms"\nwcet = "20ms"\n')
    with pytest.raises(rtlab.TaskSetError) as invalid:
        rtlab.TaskSet.load(str(bad))
    assert str(invalid.value) == cli.error_line("taskset", "show", str(bad))
    assert str(invalid.value).startswith(f"{bad}:")
    with pytest.raises(rtlab.UsageError, match="policy=`rmx`"):
        rtlab.analyze(rtlab.TaskSet.load("builtin:avionics"), policy="rmx")
    with pytest.raises(ValueError):  # a UsageError is a ValueError too
        rtlab.generate(tasks=0)
    # The CLI's message, naming the argument instead of the flag.
    with pytest.raises(rtlab.UsageError) as gen:
        rtlab.generate(utilization=-1.0)
    assert "--" + str(gen.value) == cli.error_line("taskset", "gen", "--utilization=-1")
    with pytest.raises(rtlab.TaskSetError, match="rows"):
        rtlab.TaskSet.from_rows([{"name": "a", "period": "10ms"}])
    with pytest.raises(rtlab.UsageError, match="duration"):
        rtlab.simulate(rtlab.TaskSet.load("builtin:avionics"), scheduler="edf", duration=True)
    with pytest.raises(rtlab.StoreError):
        rtlab.results.load(7, store=tmp_path / "empty.sqlite")
    assert issubclass(rtlab.SweepSpecError, rtlab.SweepError) and issubclass(rtlab.SweepError, rtlab.Error)


def test_objects_pickle():
    ts = rtlab.generate(tasks=6, utilization=0.8, seed=4)[0]
    back = pickle.loads(pickle.dumps(ts))
    assert back == ts and back.origin == "generated" and back.to_toml() == ts.to_toml()
    a = rtlab.analyze(ts, policy="dm", test="rta")
    a2 = pickle.loads(pickle.dumps(a))
    assert a2.to_dict() == a.to_dict() and a2.schedulable == a.schedulable and a2.test == "rta"
    sim = rtlab.simulate(rtlab.TaskSet.load("builtin:lf-scenario-4"), scheduler="edf", duration="100ms")
    sim2 = pickle.loads(pickle.dumps(sim))
    assert sim2.summary == sim.summary
    assert [j.to_dict() for j in sim2.jobs] == [j.to_dict() for j in sim.jobs]


def test_ctrl_c_stops_a_long_simulation():
    # A run of 10^5 s of the avionics set (millions of jobs) takes far longer
    # than the 0.3 s after which the main thread is interrupted.
    ts = rtlab.TaskSet.load("builtin:avionics")
    threading.Timer(0.3, _thread.interrupt_main).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        rtlab.simulate(ts, scheduler="fp:rm", duration="100000s")
    assert time.monotonic() - started < 30


def test_long_calls_release_the_gil():
    # While a simulation runs in another thread, this thread keeps running
    # Python code: the simulation does not hold the GIL.
    ts = rtlab.TaskSet.load("builtin:avionics")
    done = threading.Event()

    def run() -> None:
        rtlab.simulate(ts, scheduler="fp:rm", duration="2000s")
        done.set()

    worker = threading.Thread(target=run)
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks > 20
