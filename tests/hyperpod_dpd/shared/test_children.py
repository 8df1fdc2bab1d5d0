"""A child a command starts is started whole or not at all: Ctrl-C (SIGINT) or SIGTERM landing
while `subprocess.Popen` is still starting it, before the command holds it, stops that child,
then reaches the command as it would have (KeyboardInterrupt). The advise and aiperf suites
send the signal from outside at their own moment (tests/hyperpod_dpd/advise/test_interrupt.py);
here it lands at the one moment they can only hit by chance."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from hyperpod_dpd.shared import children
from tests.support import processes


@pytest.fixture
def interrupted_popen(monkeypatch):
    """subprocess.Popen that starts the child, then gets Ctrl-C before it returns the child."""
    real = subprocess.Popen
    started: list[subprocess.Popen] = []

    def popen(*args, **kwargs):
        proc = real(*args, **kwargs)
        started.append(proc)
        os.kill(os.getpid(), signal.SIGINT)  # Python runs its handler before the next line
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen)
    return started


def test_ctrl_c_while_a_child_starts_stops_it_and_reaches_the_command(interrupted_popen):
    with pytest.raises(KeyboardInterrupt):
        children.start(["sleep", "60"])
    (child,) = interrupted_popen
    assert child.returncode is not None  # ended and reaped
    assert processes.group(child.pid) == []


def test_after_a_start_the_command_has_its_own_handlers_back():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    proc = children.start(["true"])
    proc.wait()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
