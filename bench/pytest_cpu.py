"""A pytest plugin that records each test's CPU seconds (setup, call and teardown), for the suite
benchmark (bench/suite.py): on a shared machine a test's wall time says how busy the neighbours
were, its CPU time what the test itself costs.

    BENCH_TEST_CPU=/tmp/cpu .venv/bin/pytest -p bench.pytest_cpu ...

writes one JSON line per test and phase to /tmp/cpu.<worker> ({"nodeid", "phase", "cpu",
"wall"}). CPU is this process's (all its threads) plus what its children used in that phase
(subprocesses a test runs: plans, the simulator, the scanners; `_running`). Numbers, never
assertions.
"""

from __future__ import annotations

import glob
import json
import os
import resource
import time
from pathlib import Path

import pytest

_OUT = os.environ.get("BENCH_TEST_CPU")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + _running()


def _running() -> float:
    """CPU seconds so far of the children still running (with what they reaped of their own):
    a child that outlives a phase (the simulator the advise tests share, ended with the suite:
    tests/support/shared_simulator.py) counts in each phase for what it used then, not all at
    once in the phase that reaps it, whose RUSAGE_CHILDREN grows by its whole CPU less what the
    earlier phases counted. 0 where /proc has no children lists (not Linux)."""
    total = 0
    for listing in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        for pid in _read(Path(listing)).split():
            fields = _read(Path(f"/proc/{pid}/stat")).rpartition(")")[2].split()
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def _read(path: Path) -> str:
    """The text of a /proc file, "" when its process ended meanwhile."""
    try:
        return path.read_text()
    except OSError:
        return ""


def _measured(item, phase: str):
    started_cpu, started_wall = _cpu(), time.perf_counter()
    try:
        return (yield)
    finally:
        if _OUT:
            line = {"nodeid": item.nodeid, "phase": phase, "cpu": _cpu() - started_cpu,
                    "wall": time.perf_counter() - started_wall}  # fmt: skip
            worker = os.environ.get("PYTEST_XDIST_WORKER", "master")
            with open(f"{_OUT}.{worker}", "a") as out:
                out.write(json.dumps(line) + "\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _measured(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _measured(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _measured(item, "teardown"))
