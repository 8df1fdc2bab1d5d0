"""Placing real outputs where a spec has `${name.attr}` placeholders (core/refs.py).

A component resolves the props of its specs with the outputs it was given; a placeholder it was
not given is a programming error, reported with the names it does know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from core.refs import split_refs


class UnresolvedRefError(pulumi.RunError):
    pass


def resolve(value: Any, outputs: Mapping[str, Any]) -> Any:
    """`value` with each placeholder replaced by `outputs["name.attr"]`: a string that is one
    whole placeholder becomes that output (of any type); a string with placeholders inside
    becomes `Output.concat` of its parts; mappings (keys too) and lists are resolved deeply."""
    if isinstance(value, str):
        parts = split_refs(value)
        if not any(isinstance(p, tuple) for p in parts):
            return value
        resolved = [_output(p, outputs) if isinstance(p, tuple) else p for p in parts]
        return resolved[0] if len(resolved) == 1 else pulumi.Output.concat(*resolved)
    if isinstance(value, Mapping):
        return {resolve(k, outputs): resolve(v, outputs) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [resolve(v, outputs) for v in value]
    return value


def _output(ref: tuple[str, str], outputs: Mapping[str, Any]) -> Any:
    key = f"{ref[0]}.{ref[1]}"
    if key not in outputs:
        raise UnresolvedRefError(
            f"no output for placeholder ${{{key}}}; this component knows: {', '.join(sorted(outputs))}"
        )
    return outputs[key]


class Outputs(dict[str, Any]):
    """The outputs specs refer to, keyed "name.attr", filled in as components create resources.

    One registry for the program: a component publishes what its children produce and
    resolves its own specs against everything published before it.
    """

    def publish(self, resource: str, /, **attrs: Any) -> None:
        for attr, value in attrs.items():
            self[f"{resource}.{attr}"] = value

    def resolve(self, value: Any) -> Any:
        return resolve(value, self)
