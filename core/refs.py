"""Outputs of resources that do not exist yet, as placeholders inside plain data.

The desired state (specs/) is built before any resource is registered, so a value that only
exists later (a subnet's id, a bucket's ARN) is written as the placeholder `${name.attr}`:
the output `attr` of the resource (or invoke) the program names `name`. The policy gate judges
specs with the placeholders in place: two references to one output compare equal, so "the GPU
groups share one subnet" or "the rule refers to the group's own security group" can be judged
before either exists. Components replace the placeholders with the real outputs
(program/outputs.py) when they register the resources.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_REF = re.compile(r"\$\{([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\.([A-Za-z0-9_]+)\}")


def ref(resource: str, attr: str) -> str:
    """The placeholder for output `attr` of resource `resource`: ref("network-vpc", "id")."""
    return f"${{{resource}.{attr}}}"


def split_refs(text: str) -> list[str | tuple[str, str]]:
    """'${a.arn}/x/*' -> [('a', 'arn'), '/x/*']: literal text and (resource, attr) pairs."""
    parts: list[str | tuple[str, str]] = []
    position = 0
    for match in _REF.finditer(text):
        if match.start() > position:
            parts.append(text[position : match.start()])
        parts.append((match.group(1), match.group(2)))
        position = match.end()
    if position < len(text):
        parts.append(text[position:])
    return parts


def refs_in(value: Any) -> Iterator[str]:
    """Every placeholder inside `value` (strings, lists and mappings, keys included)."""
    if isinstance(value, str):
        for match in _REF.finditer(value):
            yield match.group(0)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from refs_in(k)
            yield from refs_in(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from refs_in(v)


def is_ref(value: Any) -> bool:
    """True for a value that is one whole placeholder (an output not known yet)."""
    return isinstance(value, str) and _REF.fullmatch(value) is not None


def fill(value: Any, known: dict[str, str]) -> Any:
    """`value` with each placeholder whose "name.attr" is in `known` replaced by its text (an
    input the program gave, which the output echoes, such as a bucket's given name)."""
    if isinstance(value, str):
        return _REF.sub(lambda m: known.get(f"{m.group(1)}.{m.group(2)}", m.group(0)), value)
    if isinstance(value, dict):
        return {fill(k, known): fill(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, known) for v in value]
    return value
