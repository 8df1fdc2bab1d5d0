"""One style for every JSON a command prints (plan.json's): camelCase keys, and floats as a person
writes them (no 1000.0000000000001). A map keyed by names (resource types, endpoints, policies,
manifest files) is data, not keys: the caller names those maps by their path ('byType',
'numbers.*', '*' for the whole document)."""

from __future__ import annotations

import re
from typing import Any

CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")


def rounded_as_written(x: float) -> bool:
    """At most 6 decimal places, or at most 6 significant digits (6.1e-74 is written so)."""
    return round(x, 6) == x or float(f"{x:.6g}") == x


def style_problems(doc: Any, data_maps: frozenset[str] = frozenset(), path: str = "") -> list[str]:
    """Every key that is not camelCase and every float not rounded, by path."""
    found = []
    if isinstance(doc, dict):
        data = (path or "*") in data_maps
        for key, value in doc.items():
            if not data and not CAMEL.match(str(key)):
                found.append(f"{path or '<root>'}: key {key!r} is not camelCase")
            below = f"{path}.*" if data and path else ("*" if data else f"{path}.{key}".lstrip("."))
            found += style_problems(value, data_maps, below)
    elif isinstance(doc, list):
        for value in doc:
            found += style_problems(value, data_maps, f"{path}[]")
    elif isinstance(doc, float) and not rounded_as_written(doc):
        found.append(f"{path}: {doc!r} is not rounded")
    return found
