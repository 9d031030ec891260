"""Simulate SimSo configurations and print each task's response times.

Usage: python responses.py CONF.xml...  (SimSo 0.8 installed)

Prints one JSON object per configuration on one line:
{"file": ..., "tasks": [{"name", "completed", "max_response_ns",
"sum_response_ns"}]}, times in SimSo cycles (nanoseconds at
cycles_per_ms = 1000000, as rtlab exports), counted from each job's
activation to its end, completed jobs only.
"""

import json
import sys

from simso.configuration import Configuration
from simso.core import Model


def responses(path):
    configuration = Configuration(path)
    configuration.check_all()
    model = Model(configuration)
    model.run_model()
    cycles_per_ms = configuration.cycles_per_ms
    tasks = []
    for task in model.task_list:
        done = [job for job in task.jobs if job.end_date is not None and not job.aborted]
        times = [job.end_date - round(job.activation_date * cycles_per_ms) for job in done]
        tasks.append({
            "name": task.name,
            "completed": len(times),
            "max_response_ns": max(times) if times else None,
            "sum_response_ns": sum(times),
        })
    return {"file": path, "tasks": tasks}


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(json.dumps(responses(path)), flush=True)
