"""rtlab's simulator against SimSo 0.8.5, side by side in one run.

Three cases, each simulated by SimSo and by `rtlab sim` on this machine, one
after the other (the `--repeat` runs of a case alternate between the two):

  hartstone-edf  Hartstone PH (`builtin:hartstone-ph`, 5 tasks, U = 0.4), EDF
  hartstone-rm   the same under rate-monotonic fixed priorities
  gedf-20        `gedf-20.toml` beside this file: 20 tasks, U = 3.0, global
                 EDF on 4 processors

For each: simulated seconds per wall second of SimSo and of rtlab (the best of
`--repeat` runs each; rtlab's run includes starting the process and printing
its JSON report), their ratio, and whether both agree on every task's
completed jobs and longest response time over SimSo's duration. SimSo runs the
XML `rtlab taskset export --format simso` writes, at one cycle per nanosecond.
The goals of issue 38 are printed beside the ratios.

Usage, from the repository's root (no set-up: SimSo is installed from PyPI
into target/tmp/simso-venv, as the SimSo agreement test does, and rtlab's
release binary is built when missing):

    python3 crates/sim/benches/vs_simso.py [--rtlab target/release/rtlab]
        [--repeat 3] [--simso-seconds 1000,1000,2] [--rtlab-seconds 100000,100000,5000]
        [--case hartstone-edf,hartstone-rm,gedf-20]

The machine's load average is printed first: on a shared machine the ratios
move with it (SimSo and rtlab are timed alternately so both see the same
load, but not the same moments of it).
"""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SIMSO = "simso==0.8.5"
VENV = os.path.join(ROOT, "target", "tmp", "simso-venv")

# name: (task set, rtlab scheduler, SimSo seconds, rtlab seconds, goal)
CASES = {
    "hartstone-edf": ("builtin:hartstone-ph", "edf", 1000, 100_000, 2000),
    "hartstone-rm": ("builtin:hartstone-ph", "fp:rm", 1000, 100_000, 2000),
    "gedf-20": (os.path.join(HERE, "gedf-20.toml"), "gedf", 2, 5_000, 1500),
}


def ensure_simso():
    """Re-runs this script in a virtual environment with SimSo, made if missing."""
    try:
        import simso.core  # noqa: F401

        return
    except ImportError:
        pass
    python = os.path.join(VENV, "bin", "python")
    if os.environ.get("RTLAB_VS_SIMSO_VENV"):
        sys.exit(f"{SIMSO} is not importable in {python}")
    if not os.path.exists(python):
        print(f"installing {SIMSO} into {VENV} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    check = subprocess.run([python, "-c", "import simso.core"], capture_output=True)
    if check.returncode != 0:
        subprocess.run(
            [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", SIMSO],
            check=True,
        )
    env = dict(os.environ, RTLAB_VS_SIMSO_VENV="1")
    os.execve(python, [python, os.path.abspath(__file__)] + sys.argv[1:], env)


def ensure_rtlab(path):
    if path is None:
        path = os.path.join(ROOT, "target", "release", "rtlab")
        if not os.path.exists(path):
            print("building rtlab (cargo build --release -p rtlab-cli) ...", file=sys.stderr)
            subprocess.run(["cargo", "build", "--release", "-p", "rtlab-cli"], cwd=ROOT, check=True)
    return path


def export_xml(rtlab, taskset, scheduler, seconds, directory):
    out = os.path.join(directory, f"{os.path.basename(taskset).replace(':', '-')}-{scheduler.replace(':', '-')}.xml")
    subprocess.run(
        [rtlab, "taskset", "export", taskset, "--format", "simso", "-s", scheduler,
         "-d", f"{seconds}s", "--out", out],
        check=True,
        capture_output=True,
    )
    return out


def simso_run(xml):
    """(wall seconds, {task: (completed, max response ns)})"""
    from simso.configuration import Configuration
    from simso.core import Model

    conf = Configuration(xml)
    conf.check_all()
    model = Model(conf)
    start = time.perf_counter()
    # SimSo's global EDF prints a line per decision: to /dev/null, a cheap
    # write that is part of SimSo's time.
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        model.run_model()
    wall = time.perf_counter() - start
    out = {}
    for task in model.task_list:
        done = [j for j in task.jobs if j.end_date is not None]
        times = [j.end_date - round(j.activation_date * conf.cycles_per_ms) for j in done]
        out[task.name] = (len(times), max(times) if times else None)
    return wall, out


def rtlab_run(rtlab, taskset, scheduler, seconds):
    """(wall seconds, report)"""
    start = time.perf_counter()
    done = subprocess.run(
        [rtlab, "sim", taskset, "-s", scheduler, "-d", f"{seconds}s", "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start, json.loads(done.stdout)


def numbers(text, count):
    values = [float(v) for v in text.split(",")]
    if len(values) == 1:
        values *= count
    if len(values) != count:
        sys.exit(f"give one value or {count}, comma-separated")
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rtlab", help="the rtlab binary (default: target/release/rtlab, built if missing)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each simulator per case (best kept)")
    parser.add_argument("--case", default=",".join(CASES), help="cases to run, comma-separated")
    parser.add_argument("--simso-seconds", help="SimSo's simulated seconds per case")
    parser.add_argument("--rtlab-seconds", help="rtlab's simulated seconds per case")
    args = parser.parse_args()
    ensure_simso()
    rtlab = ensure_rtlab(args.rtlab)
    cases = [c for c in args.case.split(",") if c]
    for c in cases:
        if c not in CASES:
            sys.exit(f"unknown case {c} (known: {', '.join(CASES)})")
    simso_s = numbers(args.simso_seconds, len(cases)) if args.simso_seconds else [CASES[c][2] for c in cases]
    rtlab_s = numbers(args.rtlab_seconds, len(cases)) if args.rtlab_seconds else [CASES[c][3] for c in cases]
    version = subprocess.run([rtlab, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; "
          f"{version}; SimSo 0.8.5 on Python {sys.version.split()[0]}; best of {args.repeat} runs each")
    print(f"{'case':<15}{'SimSo sim s/s':>15}{'rtlab sim s/s':>15}{'ratio':>9}{'goal':>7}  agreement")
    failed = False
    with tempfile.TemporaryDirectory() as directory:
        for case, s_seconds, r_seconds in zip(cases, simso_s, rtlab_s):
            taskset, scheduler, _, _, goal = CASES[case]
            s_seconds = int(s_seconds) if s_seconds == int(s_seconds) else s_seconds
            r_seconds = int(r_seconds) if r_seconds == int(r_seconds) else r_seconds
            xml = export_xml(rtlab, taskset, scheduler, s_seconds, directory)
            simso_walls, rtlab_walls = [], []
            simso_tasks = None
            for _ in range(args.repeat):
                wall, simso_tasks = simso_run(xml)
                simso_walls.append(wall)
                rtlab_walls.append(rtlab_run(rtlab, taskset, scheduler, r_seconds)[0])
            _, same = rtlab_run(rtlab, taskset, scheduler, s_seconds)
            agree = sum(
                (t["completed"], t["max_response_ns"]) == simso_tasks.get(t["name"]) for t in same["tasks"]
            )
            simso_rate = s_seconds / min(simso_walls)
            rtlab_rate = r_seconds / min(rtlab_walls)
            ratio = rtlab_rate / simso_rate
            failed |= ratio < goal or agree != len(same["tasks"])
            print(f"{case:<15}{simso_rate:>15.2f}{rtlab_rate:>15.0f}{ratio:>8.0f}x{goal:>6}x  "
                  f"{agree}/{len(same['tasks'])} tasks (completed jobs, max response over {s_seconds} s)")
    print("every goal met" if not failed else "a goal is not met (or the simulators disagree)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
