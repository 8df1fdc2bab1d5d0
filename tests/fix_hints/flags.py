"""The edits a command's printed hint asks of its own flags, read as a user would follow them:
`raise|lower|shrink|set FLAG to VALUE` and `set FLAG between A and B` (both ends are tried),
joined by " and " (made together); what follows ", or " is another option. A hint naming no
concrete value (`use a larger-GPU instance type (...)`) is not followable."""

from __future__ import annotations

import re

_FLAG = r"(--[a-z0-9][a-z0-9-]*)"
_TO = re.compile(rf"^(?:raise|lower|shrink|set) {_FLAG} to ([^\s,;()]+)$")
_BETWEEN = re.compile(rf"^set {_FLAG} between ([0-9.]+) and ([0-9.]+)$")


def options(advice: str) -> list[str]:
    """The options of an advice, each one step (the text after the last ': ' of a message)."""
    return [option.strip() for option in advice.split(", or ")]


def follow(argv: list[str], option: str) -> list[list[str]] | None:
    """`argv` with `option`'s edits made, one argv per alternative (a range gives both ends);
    None when the option names no concrete edit."""
    alternatives = [list(argv)]
    for edit in _edits(option):
        if edit is None:
            return None
        flag, values = edit
        alternatives = [_with(a, flag, v) for a in alternatives for v in values]
    return alternatives


def _edits(option: str):
    # " and " joins edits, but is also the word inside "between A and B".
    for part in re.split(r" and (?=(?:raise|lower|shrink|set) )", option):
        if m := _TO.match(part):
            yield m[1], [m[2]]
        elif m := _BETWEEN.match(part):
            yield m[1], [m[2], m[3]]
        else:
            yield None


def _with(argv: list[str], flag: str, value: str) -> list[str]:
    out, skip = [], False
    for i, word in enumerate(argv):
        if skip:
            skip = False
            continue
        if word == flag:
            skip = i + 1 < len(argv)
            continue
        out.append(word)
    return [*out, flag, value]
