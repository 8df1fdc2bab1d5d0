"""`make plan` as the README runs it: GNU make exits 2 whenever a recipe fails, so the plan's own
code (1 a mandatory policy violation, 2 bad configuration) is said on its last line."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.long


def _make_plan(project, stack):
    # The project's Makefile run in `project`, with this checkout's .venv (set up already).
    run = subprocess.run(
        ["make", "--no-print-directory", "-f", str(ROOT / "Makefile"), "plan", f"STACK={stack}",
         f"BIN={ROOT / '.venv' / 'bin'}", "STAMP="],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return run.returncode, run.stderr.strip().splitlines()


def test_bad_configuration_is_said_as_the_plans_exit_2(tmp_path):
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    code, err = _make_plan(tmp_path, "nope")
    assert code == 2
    assert "make plan: hyperpod-dpd plan exited 2: bad configuration" in err[-2], err


def test_a_policy_violation_is_said_as_the_plans_exit_1(tmp_path):
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path)
    stack = (ROOT / "Pulumi.dev.yaml").read_text()
    assert "pdBufferSize: 8GiB" in stack
    (tmp_path / "Pulumi.dev.yaml").write_text(
        stack.replace("pdBufferSize: 8GiB", "pdBufferSize: 32GiB")
    )
    code, err = _make_plan(tmp_path, "dev")
    assert code == 2  # make's own
    assert "make plan: hyperpod-dpd plan exited 1: a mandatory policy violation" in err[-2], err
