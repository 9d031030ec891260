"""Simulate task sets under SimSo's global EDF and print each task's
response times (the multiprocessor twin of responses.py).

Usage: python global_edf.py SETS.json  (SimSo 0.8 installed)

SETS.json: [{"name", "processors", "duration_ns", "tasks": [{"name",
"period_ns", "wcet_ns", "offset_ns", "deadline_ns"}]}]. Prints one JSON object per set on
one line: {"name": ..., "tasks": [{"name", "completed", "max_response_ns",
"sum_response_ns"}]}, one cycle per nanosecond, responses from each job's
activation to its end, completed jobs only. SimSo's EDF prints a line per
decision; those go to /dev/null.
"""

import contextlib
import json
import os
import sys

from simso.configuration import Configuration
from simso.core import Model


def responses(spec):
    conf = Configuration()
    conf.cycles_per_ms = 1_000_000
    conf.duration = spec["duration_ns"]
    conf.etm = "wcet"
    for i, t in enumerate(spec["tasks"]):
        conf.add_task(
            name=t["name"],
            identifier=i + 1,
            period=t["period_ns"] / 1e6,
            activation_date=t["offset_ns"] / 1e6,
            wcet=t["wcet_ns"] / 1e6,
            deadline=t["deadline_ns"] / 1e6,
            abort_on_miss=False,
        )
    for c in range(spec["processors"]):
        conf.add_processor(name=f"CPU {c}", identifier=c + 1)
    conf.scheduler_info.clas = "simso.schedulers.EDF"
    conf.check_all()
    model = Model(conf)
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        model.run_model()
    tasks = []
    for task in model.task_list:
        done = [j for j in task.jobs if j.end_date is not None and not j.aborted]
        times = [j.end_date - round(j.activation_date * conf.cycles_per_ms) for j in done]
        tasks.append({
            "name": task.name,
            "completed": len(times),
            "max_response_ns": max(times) if times else None,
            "sum_response_ns": sum(times),
        })
    return {"name": spec["name"], "tasks": tasks}


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        sets = json.load(f)
    for spec in sets:
        print(json.dumps(responses(spec)), flush=True)
