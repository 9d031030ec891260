"""Shared fixtures: the `rtlab` CLI the Python results are checked against.

The binary is $RTLAB_BIN, else the workspace's target/debug/rtlab (which
`cargo test --workspace` builds before CI runs these tests), else
target/release/rtlab, else `rtlab` on PATH. A missing binary fails the
tests that need it: they compare with it, they cannot pass without it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli_path() -> str:
    candidates = [
        os.environ.get("RTLAB_BIN"),
        str(REPO / "target" / "debug" / "rtlab"),
        str(REPO / "target" / "release" / "rtlab"),
        shutil.which("rtlab"),
    ]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    raise RuntimeError(
        "the rtlab CLI is needed to compare with: run `cargo build -p rtlab-cli` or set RTLAB_BIN"
    )


class Cli:
    def __init__(self, path: str) -> None:
        self.path = path

    def run(self, *args: str, check: bool = True, cwd: Any = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.path, *args], capture_output=True, text=True, cwd=cwd, timeout=600
        )
        if check and done.returncode != 0:
            raise AssertionError(f"rtlab {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done

    def json(self, *args: str, cwd: Any = None) -> Any:
        return json.loads(self.run(*args, cwd=cwd).stdout)

    def error_line(self, *args: str) -> str:
        """The message of a failing command: its last stderr line, without `error: `."""
        done = self.run(*args, check=False)
        assert done.returncode != 0, done.stdout
        line = done.stderr.strip().splitlines()[-1]
        assert line.startswith("error: "), done.stderr
        return line[len("error: "):]


@pytest.fixture(scope="session")
def cli() -> Cli:
    return Cli(cli_path())
