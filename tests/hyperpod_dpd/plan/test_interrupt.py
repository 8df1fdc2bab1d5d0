"""Ctrl-C during `plan` removes the output directory the plan had only begun: a real SIGINT
to the command's process while the program runs."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import weakref

import pytest

from core.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from hyperpod_dpd.cli import main
from hyperpod_dpd.cli import plan as cli_plan
from tests.conftest import ROOT
from tests.support import processes

pytestmark = pytest.mark.long


def _interrupted_plan(out, running):
    """Exit code and stderr of a plan to `out` given SIGINT once `running(pid)` holds."""
    plan = subprocess.Popen(
        [sys.executable, "-m", "hyperpod_dpd.cli", "plan", "--stack", "dev", "--out", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        processes.wait_for(lambda: running(plan.pid), 120, "the plan got under way")
        plan.send_signal(signal.SIGINT)
        _, err = plan.communicate(timeout=60)
    finally:
        plan.kill()
        plan.wait()
    return plan.returncode, err


def test_ctrl_c_leaves_no_directory_the_plan_had_only_begun(tmp_path):
    out = tmp_path / "build" / "plan" / "dev"
    # The directory is claimed once the stack is read and judged, before the program runs.
    code, err = _interrupted_plan(out, lambda pid: out.exists())
    assert code == EXIT_INTERRUPTED, err
    assert "Traceback" not in err, err
    # Neither the directory nor the parents the plan made for it.
    assert not (tmp_path / "build").exists()


def test_ctrl_c_leaves_an_earlier_plans_directory_as_it_was(tmp_path):
    out = tmp_path / "plan"
    out.mkdir()
    (out / "plan.json").write_text("{}\n")
    # The program runs under the mock engine's threads: the directory was claimed before.
    code, err = _interrupted_plan(out, lambda pid: processes.threads(pid) > 1)
    assert code == EXIT_INTERRUPTED, err
    assert [p.name for p in out.iterdir()] == ["plan.json"]


class _HalfBuilt:
    """Stopped in its constructor, as an event loop is that Ctrl-C lands in while the plan
    starts its program: its destructor fails on an attribute it never got."""

    def __init__(self) -> None:
        raise KeyboardInterrupt

    def __del__(self) -> None:
        self.never_set  # noqa: B018 (the AttributeError asyncio's BaseEventLoop.__del__ meets)


def test_ctrl_c_inside_a_constructor_says_interrupted_and_nothing_more(monkeypatch, capsys):
    """The real SIGINT above lands there only by chance (it did, once, in a full run)."""
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    monkeypatch.setattr(cli_plan, "run", lambda *_args: _HalfBuilt())
    assert main(["plan", "--stack", "dev"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "interrupted\n"
    assert reported == []
    assert sys.unraisablehook == reported.append  # as it was, for whatever comes next


def _interrupted_callback(_ref) -> None:
    raise KeyboardInterrupt


def test_ctrl_c_that_lands_in_a_weakref_callback_still_stops_the_plan(monkeypatch, capsys):
    """The real SIGINT above once landed while the collector ran a weakref callback: Python
    reports an exception raised there and drops it, and the plan ran on to exit 0."""

    class Dying:
        pass

    def plan_interrupted_in_a_callback(*_args):
        dying = Dying()
        watch = weakref.ref(dying, _interrupted_callback)
        del dying  # the callback runs here, and the Ctrl-C with it
        time.sleep(10)  # the plan goes on: raised again, the Ctrl-C stops it here
        return EXIT_OK if watch() is None else EXIT_FAILED

    monkeypatch.setattr(cli_plan, "run", plan_interrupted_in_a_callback)
    assert main(["plan", "--stack", "dev"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "interrupted\n"

    def plan_interrupted_as_it_ends(*_args):  # dropped right before the command returns
        dying = Dying()
        watch = weakref.ref(dying, _interrupted_callback)
        del dying
        return EXIT_OK if watch() is None else EXIT_FAILED

    monkeypatch.setattr(cli_plan, "run", plan_interrupted_as_it_ends)
    assert main(["plan", "--stack", "dev"]) == EXIT_INTERRUPTED
