"""Shared helpers: the repo's stack files as plain data, edited one key at a time."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
_MISSING = object()


def stack_raw(stack: str = "dev") -> dict[str, Any]:
    """The `config:` map of Pulumi.<stack>.yaml (full keys -> decoded values)."""
    return copy.deepcopy(yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"])


def edit(raw: dict[str, Any], path: str, value: Any = _MISSING) -> dict[str, Any]:
    """Set (or, without a value, delete) 'hyperpod-dpd:endpoint.prefill.replicas' in `raw`."""
    key, *rest = path.split(".")
    if not rest:
        if value is _MISSING:
            raw.pop(key, None)
        else:
            raw[key] = value
        return raw
    node = raw[key]
    for part in rest[:-1]:
        node = node.setdefault(part, {})
    if value is _MISSING:
        node.pop(rest[-1], None)
    else:
        node[rest[-1]] = value
    return raw


def as_pulumi_config(raw: dict[str, Any]) -> dict[str, str]:
    """What the Pulumi CLI hands the program: text, objects as JSON."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}


@pytest.fixture
def dev_raw() -> dict[str, Any]:
    return stack_raw("dev")


def run_stack(
    raw: dict[str, Any],
    secret_keys: list[str] | None = None,
    stack: str = "dev",
    preview: bool = False,
):
    """Run the real __main__.py under the mock engine with `raw` as the stack config
    (`preview`: as the first `pulumi preview` of a new stack)."""
    from hyperpod_dpd.engine import run_program

    return run_program(
        ROOT / "__main__.py",
        as_pulumi_config(raw),
        secret_keys or [],
        project="hyperpod-dpd",
        stack=stack,
        preview=preview,
    )


def write_project(directory: Path, raw: dict[str, Any], stack: str = "dev") -> Path:
    """A project directory holding this program and a Pulumi.<stack>.yaml with `raw` as its
    config: what `make_plan` and the CLI read."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        (directory / name).write_text((ROOT / name).read_text())
    (directory / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": raw}))
    return directory
