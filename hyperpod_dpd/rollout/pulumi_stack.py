"""The stack through Pulumi's Automation API (`pulumi.automation`), which runs the Pulumi CLI
found on PATH in the project's directory, as a person at a terminal would.

What it runs, as the pinned SDK's pulumi/automation/_local_workspace.py and _stack.py build the
commands: `pulumi version` (PulumiCommand), `stack select --stack S` (select_stack), `stack
output --json [--show-secrets]` (outputs), `stack history --json --page-size N`, `config set-all
--stack S --path --plaintext K=V ...` (set_all_config: every weight in one write of the stack
file, so a kill never leaves a split that does not sum to 100), and `preview`/`up --yes
--skip-preview` with `--policy-pack`, `--policy-pack-config`, `--exec-kind auto.local` and
`--event-log`: the engine's events reach the SDK over gRPC (service pulumirpc.Events, from CLI
versions above 3.205.0) or, from older CLIs, through a file it tails (_stack.py,
`_setup_event_log`). Each resource's step (`resourcePreEvent`: op, URN, type) is what the
preview is judged by.

A failed command is a CommandError carrying the CLI's output; the update lock Pulumi's backend
holds during an update makes a second one fail with ConcurrentUpdateError (errors.py: "[409]
Conflict: Another update is currently in progress", or the DIY backend's "the stack is
currently locked by").
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.exits import UsageProblem
from hyperpod_dpd.rollout.steps import TRAFFIC_KEY, Step, step_of_message

INSTALL = "https://www.pulumi.com/docs/iac/download-install/"
HISTORY_PAGE = 20  # updates read back to find when the weights went live
WEIGHTS_OUTPUT = "trafficWeights"  # __main__.py exports the split it deployed
QUIET_OPS = ("same", "read")  # steps that change nothing in the cloud


class StepFailed(Exception):
    """A Pulumi command of a step failed (its output, shortened, is the message)."""


@dataclass(frozen=True)
class Change:
    op: str
    urn: str
    type: str

    def __str__(self) -> str:
        return f"{self.op} {self.type} {self.urn.rsplit('::', 1)[-1]}"


@dataclass(frozen=True)
class Update:
    """One update of the stack's history (the newest first)."""

    version: int | None
    kind: str
    result: str
    message: str
    end_time: datetime | None  # UTC
    weights: dict[str, int] | None  # the split it deployed (hyperpod-dpd:traffic)

    @property
    def step(self) -> Step | None:
        """The rollout step this update applied (None: not a rollout's)."""
        return step_of_message(self.message) if self.succeeded else None

    @property
    def succeeded(self) -> bool:
        return self.kind == "update" and self.result == "succeeded"


@dataclass(frozen=True)
class Applied:
    version: int | None
    weights: dict[str, int] | None  # the trafficWeights output after the update
    changes: list[Change]


class PulumiStack:
    """One stack of the project, selected through the Automation API."""

    def __init__(self, project_dir: Path, stack: str):
        from pulumi import automation as auto

        self.name = stack
        try:
            self._stack = auto.select_stack(stack_name=stack, work_dir=str(project_dir))
        except (FileNotFoundError, PermissionError):
            raise UsageProblem(
                f"no `pulumi` on PATH: the rollout applies each step with the Pulumi CLI; "
                f"install it ({INSTALL}) and log in to the stack's backend, or give --dry-run"
            ) from None
        except auto.StackNotFoundError:
            raise UsageProblem(
                f"--stack {stack}: no such stack in the Pulumi backend you are logged in to "
                f"(`pulumi stack ls`); deploy it first: pulumi up --stack {stack}"
            ) from None
        except (auto.InvalidVersionError, subprocess.CalledProcessError) as exc:
            raise UsageProblem(f"the Pulumi CLI on PATH: {exc}") from None
        except auto.CommandError as exc:
            raise UsageProblem(
                f"--stack {stack}: `pulumi stack select` failed: {_said(exc)}"
            ) from None

    def deployed_weights(self) -> dict[str, int] | None:
        """The split the stack deployed last (its trafficWeights output; None: none)."""
        outputs = self._run(self._stack.outputs)
        found = outputs.get(WEIGHTS_OUTPUT)
        return None if found is None else _int_weights(found.value)

    def history(self) -> list[Update]:
        """The stack's latest updates, newest first (no secret decrypted)."""
        summaries = self._run(lambda: self._stack.history(HISTORY_PAGE, 1, show_secrets=False))
        out = []
        for s in summaries:
            value = s.config.get(TRAFFIC_KEY)
            weights = None
            if value is not None and not value.secret:
                try:
                    weights = _int_weights(json.loads(value.value))
                except (TypeError, ValueError):
                    weights = None
            out.append(Update(s.version, s.kind, s.result, s.message, s.end_time, weights))
        return out

    def set_weights(self, values: dict[str, int]) -> None:
        """Write `values` (paths under hyperpod-dpd:traffic) into the stack file, at once."""
        from pulumi.automation import ConfigValue

        config = {key: ConfigValue(value=str(weight)) for key, weight in values.items()}
        self._run(lambda: self._stack.set_all_config(config, path=True))

    def preview(self, pack: Path, pack_config: Path) -> list[Change]:
        """What an update with the stack file as it is would change (ops other than same)."""
        changes: list[Change] = []
        self._run(
            lambda: self._stack.preview(
                policy_packs=[str(pack)],
                policy_pack_configs=[str(pack_config)],
                on_event=_collect(changes),
            )
        )
        return [c for c in changes if c.op not in QUIET_OPS]

    def up(self, pack: Path, pack_config: Path, message: str) -> Applied:
        changes: list[Change] = []
        result = self._run(
            lambda: self._stack.up(
                policy_packs=[str(pack)],
                policy_pack_configs=[str(pack_config)],
                message=message,
                on_event=_collect(changes),
                show_secrets=False,
            )
        )
        found = result.outputs.get(WEIGHTS_OUTPUT)
        return Applied(
            result.summary.version,
            None if found is None else _int_weights(found.value),
            [c for c in changes if c.op not in QUIET_OPS],
        )

    def _run(self, call) -> Any:
        from pulumi import automation as auto

        try:
            return call()
        except auto.ConcurrentUpdateError as exc:
            raise StepFailed(
                f"another update of stack {self.name} is running (Pulumi's update lock): "
                f"{_said(exc)}"
            ) from None
        except auto.CommandError as exc:
            raise StepFailed(_said(exc)) from None


def _collect(changes: list[Change]):
    def on_event(event) -> None:
        pre = event.resource_pre_event
        if pre is not None:
            m = pre.metadata
            changes.append(Change(str(m.op.value), m.urn, m.type))

    return on_event


def _int_weights(value: Any) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    try:
        return {str(k): int(v) for k, v in value.items()}
    except (TypeError, ValueError):
        return None


def _said(exc: Exception) -> str:
    """The CLI's own words of a failed command (a CommandError's text holds its code, stdout
    and stderr): its error lines, else the text's tail."""
    lines = [line.strip() for line in str(exc).splitlines()]
    lines = [line.removeprefix("stderr: ").removeprefix("stdout: ") for line in lines]
    errors = [line for line in lines if "error" in line.lower()]
    return " | ".join(errors[-3:]) if errors else "\n".join(lines).strip()[-400:]
