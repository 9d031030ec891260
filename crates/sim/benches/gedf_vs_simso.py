"""Global EDF on 4 processors, the 20 tasks of gedf-20.toml, in SimSo 0.8.5
(`simso.schedulers.EDF`, its global EDF) and in `rtlab sim -s gedf`, side by
side in one run: simulated seconds per wall second of each, their ratio, and
each task's completed jobs and longest response time in both (the set has no
two jobs with the same deadline, so the tie rules cannot differ).

Usage (SimSo installed in the Python that runs it):

    python gedf_vs_simso.py RTLAB_BINARY [SIMSO_SECONDS [RTLAB_SECONDS]]

Defaults: SimSo simulates 2 s, rtlab 100 s (and 2 s again for the
comparison of results). SimSo 0.8.5's EDF prints a line per decision; the
script sends them to /dev/null (a cheap write, part of SimSo's time).
"""

import contextlib
import json
import os
import subprocess
import sys
import time
import tomllib

from simso.configuration import Configuration
from simso.core import Model

HERE = os.path.dirname(os.path.abspath(__file__))
SET = os.path.join(HERE, "gedf-20.toml")


def microseconds(text):
    assert text.endswith("us"), text
    return int(text[:-2])


def load_set():
    with open(SET, "rb") as f:
        doc = tomllib.load(f)
    tasks = [(t["name"], microseconds(t["period"]), microseconds(t["wcet"])) for t in doc["task"]]
    return doc["processors"], tasks


def simso(m, tasks, seconds):
    """(wall seconds, {task: (completed, max response ns)})"""
    conf = Configuration()
    conf.cycles_per_ms = 1_000_000  # one cycle per nanosecond
    conf.duration = int(seconds * 1e9)
    conf.etm = "wcet"
    for i, (name, period_us, wcet_us) in enumerate(tasks):
        conf.add_task(
            name=name,
            identifier=i + 1,
            period=period_us / 1000,
            activation_date=0,
            wcet=wcet_us / 1000,
            deadline=period_us / 1000,
            abort_on_miss=False,
        )
    for c in range(m):
        conf.add_processor(name=f"CPU {c}", identifier=c + 1)
    conf.scheduler_info.clas = "simso.schedulers.EDF"
    conf.check_all()
    model = Model(conf)
    start = time.perf_counter()
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        model.run_model()
    wall = time.perf_counter() - start
    out = {}
    for task in model.task_list:
        done = [j for j in task.jobs if j.end_date is not None]
        times = [j.end_date - round(j.activation_date * conf.cycles_per_ms) for j in done]
        out[task.name] = (len(times), max(times) if times else None)
    return wall, out


def rtlab(binary, seconds):
    """(wall seconds, report)"""
    start = time.perf_counter()
    done = subprocess.run(
        [binary, "sim", SET, "-s", "gedf", "-d", f"{seconds}s", "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start, json.loads(done.stdout)


def main():
    binary = sys.argv[1]
    simso_s = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    rtlab_s = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    m, tasks = load_set()
    simso_wall, simso_tasks = simso(m, tasks, simso_s)
    rtlab_wall, _ = rtlab(binary, rtlab_s)
    _, same = rtlab(binary, simso_s if simso_s == int(simso_s) else simso_s)
    simso_rate = simso_s / simso_wall
    rtlab_rate = rtlab_s / rtlab_wall
    print(f"set: gedf-20 ({len(tasks)} tasks, U = 3.0) on {m} processors, global EDF")
    print(f"SimSo 0.8.5: {simso_s} simulated s in {simso_wall:.3f} wall s = {simso_rate:.3f} sim s / wall s")
    print(f"rtlab:       {rtlab_s} simulated s in {rtlab_wall:.3f} wall s = {rtlab_rate:.1f} sim s / wall s")
    print(f"ratio rtlab / SimSo: {rtlab_rate / simso_rate:.0f}x")
    agree = 0
    for t in same["tasks"]:
        ours = (t["completed"], t["max_response_ns"])
        theirs = simso_tasks[t["name"]]
        agree += ours == theirs
        if ours != theirs:
            print(f"  {t['name']}: rtlab {ours}, SimSo {theirs}")
    print(f"tasks with the same completed jobs and max response over {simso_s} s: {agree}/{len(tasks)}")


if __name__ == "__main__":
    main()
