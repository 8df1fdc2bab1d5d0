"""A stack's outputs as the Pulumi CLI reports them (`pulumi stack output NAME --stack S`): the
names Pulumi generated at `pulumi up` (the model bucket's), which no stack file holds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


class OutputUnavailable(Exception):
    """The output could not be read; `no_cli` when there is no `pulumi` on PATH."""

    def __init__(self, reason: str, no_cli: bool = False):
        super().__init__(reason)
        self.no_cli = no_cli


def stack_output(project_dir: Path, stack: str, name: str, show_secrets: bool = False) -> str:
    """The output's value, or OutputUnavailable saying why (no CLI, a failed or empty answer).
    A secret output is "[secret]" unless `show_secrets` (it is then read, never printed)."""
    command = ["pulumi", "stack", "output", name, "--stack", stack]
    if show_secrets:
        command.append("--show-secrets")
    return _pulumi(project_dir, command)


def stack_outputs(project_dir: Path, stack: str) -> dict[str, Any]:
    """Every output of the stack at once (`pulumi stack output --json`; secrets "[secret]"),
    or OutputUnavailable saying why."""
    command = ["pulumi", "stack", "output", "--json", "--stack", stack]
    text = _pulumi(project_dir, command)
    try:
        outputs = json.loads(text)
    except json.JSONDecodeError:
        raise OutputUnavailable(f"`{' '.join(command)}` printed no JSON: {text[:200]}") from None
    if not isinstance(outputs, dict):
        raise OutputUnavailable(f"`{' '.join(command)}` printed {type(outputs).__name__}")
    return outputs


def _pulumi(project_dir: Path, command: list[str]) -> str:
    try:
        proc = subprocess.run(
            command,
            cwd=project_dir,
            stdin=subprocess.DEVNULL,  # never a login prompt
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except FileNotFoundError:
        raise OutputUnavailable("no `pulumi` on PATH", no_cli=True) from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OutputUnavailable(f"pulumi: {exc}") from None
    if proc.returncode != 0 or not proc.stdout.strip():
        said = proc.stderr.strip() or "nothing"
        raise OutputUnavailable(f"`{' '.join(command)}` said: {said}")
    return proc.stdout.strip()
