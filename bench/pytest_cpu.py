"""A pytest plugin that records each test's CPU seconds (setup, call and teardown), for the suite
benchmark (bench/suite.py): on a shared machine a test's wall time says how busy the neighbours
were, its CPU time what the test itself costs.

    BENCH_TEST_CPU=/tmp/cpu .venv/bin/pytest -p bench.pytest_cpu ...

writes one JSON line per test and phase to /tmp/cpu.<worker> ({"nodeid", "phase", "cpu",
"wall"}). CPU is this process's (all its threads) plus the children it waited for in that phase
(subprocesses a test runs: plans, the simulator, the scanners). Numbers, never assertions.
"""

from __future__ import annotations

import json
import os
import resource
import time

import pytest

_OUT = os.environ.get("BENCH_TEST_CPU")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


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
