"""Times `rtlab.analyze(ts, policy="rm")` from Python on one 10-task set
(`rtlab taskset gen --tasks 10 --utilization 0.7 --seed 1`'s), per call,
best of 5 rounds: compare with the Rust call,
`cargo run --release -p rtlab-analysis --example analyze_call`.

    python examples/python_call_overhead.py 20000
"""

import sys
import timeit

import rtlab

calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
ts = rtlab.generate(tasks=10, utilization=0.7, seed=1)[0]
best = min(timeit.repeat(lambda: rtlab.analyze(ts, policy="rm"), number=calls, repeat=5)) / calls
verdict = min(
    timeit.repeat(lambda: rtlab.analyze(ts, policy="rm").schedulable, number=calls, repeat=5)
) / calls
print(f"python: {best * 1e6:.2f} us per rtlab.analyze call, {verdict * 1e6:.2f} us with .schedulable read")
