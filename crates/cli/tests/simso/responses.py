"""Simulate SimSo configurations and print each task's response times and
deadline misses.

Usage: python responses.py CONF.xml...  (SimSo 0.8 installed)

Prints one JSON object per configuration on one line:
{"file": ..., "tasks": [{"name", "completed", "max_response_ns",
"sum_response_ns", "misses"}]}, times in SimSo cycles (nanoseconds at
cycles_per_ms = 1000000, as rtlab exports), responses counted from each
job's activation to its end, completed jobs only. A miss is a job that ended
after its absolute deadline (SimSo's `exceeded_deadline`) or is unfinished
at a deadline before the end of the run: rtlab's `misses`.

SimSo's schedulers print some decisions (global EDF prints each one); those
go to /dev/null. SimSo 0.8.5's Fixed_PEDF cannot start (it builds its
EDF_mono as `SchedulerInfo("EDF_mono", EDF_mono)`, which 0.8's SchedulerInfo
reads as a class name it cannot load): this script replaces that one call
with `SchedulerInfo("simso.schedulers.EDF_mono")`, nothing else.
"""

import contextlib
import json
import os
import sys

from simso.configuration import Configuration
from simso.core import Model
from simso.core.Scheduler import SchedulerInfo
from simso.schedulers import Fixed_PEDF
from simso.utils import PartitionedScheduler


def _fixed_pedf_init(self):
    PartitionedScheduler.init(self, SchedulerInfo("simso.schedulers.EDF_mono"))


Fixed_PEDF.Fixed_PEDF.init = _fixed_pedf_init


def responses(path):
    configuration = Configuration(path)
    configuration.check_all()
    model = Model(configuration)
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        model.run_model()
    cycles_per_ms = configuration.cycles_per_ms
    end = configuration.duration
    tasks = []
    for task in model.task_list:
        done = [job for job in task.jobs if job.end_date is not None and not job.aborted]
        times = [job.end_date - round(job.activation_date * cycles_per_ms) for job in done]
        misses = sum(
            1
            for job in task.jobs
            if (job.end_date is not None and job.exceeded_deadline)
            or (job.end_date is None and job.absolute_deadline_cycles < end)
        )
        tasks.append({
            "name": task.name,
            "completed": len(times),
            "max_response_ns": max(times) if times else None,
            "sum_response_ns": sum(times),
            "misses": misses,
        })
    return {"file": path, "tasks": tasks}


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(json.dumps(responses(path)), flush=True)
