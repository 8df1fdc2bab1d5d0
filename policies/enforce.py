"""Fail fast in components: run the rules on what a component knows before it registers
anything, and stop `pulumi up` with the rules' messages on a mandatory violation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from policies.rules import ResourceView, Violation, evaluate

UNKNOWN = "[unknown]"


class PolicyViolationError(pulumi.RunError):
    """A RunError: `pulumi up` prints the violations without a traceback."""

    def __init__(self, violations: list[Violation]):
        self.violations = violations
        lines = [f"{len(violations)} mandatory policy violation(s):"]
        lines += [f"  {v.policy}: {v.urn.rsplit('::', 1)[-1]}: {v.message}" for v in violations]
        super().__init__("\n".join(lines))


def plain(value: Any) -> Any:
    """Props as the rules see them: Outputs (not known until deploy) become "[unknown]"."""
    if isinstance(value, pulumi.Output):
        return UNKNOWN
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def camel_keys(value: Any) -> Any:
    """snake_case argument dicts (as components write them) -> the engine's camelCase props.
    Keys without '_' (Kubernetes label keys, camelCase) are unchanged."""
    if isinstance(value, Mapping):
        return {_camel(k): camel_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel_keys(v) for v in value]
    return value


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def child_urn(parent_type: str, type_: str, name: str) -> str:
    """The URN a component's child will get (stack and project from the running program)."""
    return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{parent_type}${type_}::{name}"


def enforce(
    views: Sequence[ResourceView],
    enforcement: Mapping[str, str] | None = None,
    advisories_mandatory: bool = False,
) -> None:
    violations = evaluate(views, enforcement=enforcement, advisories_mandatory=advisories_mandatory)
    mandatory = [v for v in violations if v.enforcement == "mandatory"]
    if mandatory:
        raise PolicyViolationError(mandatory)
