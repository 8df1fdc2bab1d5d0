"""Ctrl-C during `advise` ends its simulator too: a real SIGINT to the command's process alone
(as `kill -INT`, or a CI runner's cancel, delivers it), and nothing it started is left running."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from core.exits import EXIT_INTERRUPTED
from tests.conftest import ROOT
from tests.support import processes

pytestmark = pytest.mark.long


def test_ctrl_c_ends_the_simulator_with_the_command(tmp_path):
    advise = subprocess.Popen(
        [sys.executable, "-m", "hyperpod_dpd.cli", "advise", "--isl", "4096", "--osl", "256",
         "--concurrency", "8,16,32", "--no-chart"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        simulator = processes.wait_for(
            lambda: [p for p in processes.children(advise.pid)
                     if "simulate.py" in processes.cmdline(p)],
            120, "advise started its simulator",
        )[0]  # fmt: skip
        advise.send_signal(signal.SIGINT)
        _, err = advise.communicate(timeout=60)
    finally:
        advise.kill()
        advise.wait()
    assert advise.returncode == EXIT_INTERRUPTED, err
    assert err.rstrip().endswith("interrupted") and "Traceback" not in err, err
    # Gone when the command is: ended and reaped, and nothing of its process group left.
    assert not processes.alive(simulator)
    assert processes.group(simulator) == []
