"""Colour on a terminal, none under NO_COLOR (https://no-color.org) or on a pipe: the command
run for real, its output on a pseudo-terminal or a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from core.colour import Palette
from tests.conftest import ROOT

ESC = "\x1b["
# `size --tp 1`: workers that cannot start, said on stderr as errors (exit 2).
COMMAND = [sys.executable, "-m", "hyperpod_dpd.cli", "size", "--tp", "1"]


def _on_a_terminal(**env: str) -> tuple[int, str]:
    """Exit code and what a terminal shows of the command's stdout and stderr."""
    controller, terminal = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    proc = subprocess.Popen(COMMAND, cwd=ROOT, stdout=terminal, stderr=terminal,
                            env={**environ, "TERM": "xterm", **env})  # fmt: skip
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal's other side closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    return proc.wait(), shown.decode()


def test_a_terminal_gets_colour():
    code, shown = _on_a_terminal()
    assert code == 2
    assert f"{ESC}31merror:{ESC}0m prefill workers cannot start" in shown


def test_no_color_turns_it_off_whatever_its_value():
    for value in ("1", "0", "false"):
        code, shown = _on_a_terminal(NO_COLOR=value)
        assert code == 2 and "error: prefill workers" in shown and ESC not in shown, value


def test_an_empty_no_color_is_not_set():
    assert ESC in _on_a_terminal(NO_COLOR="")[1]


def test_a_pipe_gets_none():
    run = subprocess.run(COMMAND, cwd=ROOT, capture_output=True, text=True, check=False,
                         env={k: v for k, v in os.environ.items() if k != "NO_COLOR"})  # fmt: skip
    assert run.returncode == 2 and run.stderr.startswith("error: prefill workers")
    assert ESC not in run.stderr + run.stdout


def test_a_palette_off_returns_the_text_itself():
    assert Palette(on=False).red("error:") == "error:"
    assert Palette(on=True).red("error:") == f"{ESC}31merror:{ESC}0m"
