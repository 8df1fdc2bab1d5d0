"""A changed input as a person reads it: `path: old -> new`, sizes in binary units (8 GiB, not
8589934592), an absent side as "(unset)", long structures cut short."""

from __future__ import annotations

import json
import re
from typing import Any

from core.units import format_bytes

# Inputs that hold a byte count: PD_BUFFER_SIZE, volume and memory sizes, "...Bytes".
SIZE_PATH = re.compile(r"(size|bytes|memory)", re.IGNORECASE)
MIB = 2**20
LONGEST = 60


ABSENT = object()  # a key one side of a diff does not have


def shown(path: str, value: Any) -> str:
    if value is ABSENT or value is None:
        return "(unset)"
    if SIZE_PATH.search(path):
        number = _integer(value)
        if number is not None and number >= MIB and number % 1024 == 0:
            return format_bytes(number)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= LONGEST else text[: LONGEST - 1] + "…"


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def change(path: str, base: Any, head: Any) -> str:
    """'path: old -> new'; text of several lines (a script, a config file) by its size: the
    manifest diff shows its lines."""
    if isinstance(base, str) and isinstance(head, str) and "\n" in base + head:
        return f"{path}: {_lines(base)} -> {_lines(head)}, changed (the manifest diff shows how)"
    return f"{path}: {shown(path, base)} -> {shown(path, head)}"


def _lines(text: str) -> str:
    n = len(text.splitlines())
    return f"{n} line{'s' * (n != 1)}"
