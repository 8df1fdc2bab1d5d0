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


@pytest.fixture
def own_sigterm_handler():
    """A command's own SIGTERM handler (the benchmark Job's deadline, the demo's stop): held too."""

    def on_sigterm(_number, _frame):
        raise SystemExit("SIGTERM")

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    yield on_sigterm
    signal.signal(signal.SIGTERM, previous)


def test_after_a_start_the_command_has_its_own_handlers_back(own_sigterm_handler):
    before = signal.getsignal(signal.SIGINT)
    proc = children.start(["true"])
    proc.wait()
    assert signal.getsignal(signal.SIGINT) is before
    assert signal.getsignal(signal.SIGTERM) is own_sigterm_handler


def test_ctrl_c_as_the_handlers_are_put_back_stops_the_child_and_puts_them_all_back(
    monkeypatch, own_sigterm_handler
):
    """Ctrl-C right after SIGINT's handler is back, before SIGTERM's is: the child is still
    stopped, and SIGTERM's handler is the command's again (not one that only takes notes)."""
    real_signal, started = signal.signal, []
    real_popen = subprocess.Popen

    def restoring(sig, handler):
        previous = real_signal(sig, handler)
        if sig == signal.SIGINT and handler is signal.default_int_handler:
            os.kill(os.getpid(), signal.SIGINT)
        return previous

    def popen(*args, **kwargs):
        started.append(real_popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(signal, "signal", restoring)
    with pytest.raises(KeyboardInterrupt):
        children.start(["sleep", "60"])
    monkeypatch.setattr(signal, "signal", real_signal)
    (child,) = started
    assert child.returncode is not None
    assert signal.getsignal(signal.SIGTERM) is own_sigterm_handler
