"""Runs that tests in several folders read: each for real, once per session."""

from __future__ import annotations

import pytest

from tests.hyperpod_dpd.demo.runs import SessionDemo, session_demo


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> SessionDemo:
    """`hyperpod-dpd demo` once (tests/hyperpod_dpd/demo/runs.py MEASURED): the demo test's first
    run, and the colocated and DPD benchmark runs the compare and measure tests read. Its readers
    are in the one `aiperf` xdist group: one worker runs it, never beside another load
    generator."""
    return session_demo(tmp_path_factory.mktemp("demo-session"))
