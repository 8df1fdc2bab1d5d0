"""The command line's commands as the tests walk them: from the argparse tree itself, so a
command added later is covered without editing a test."""

from __future__ import annotations

import argparse
from collections.abc import Iterator


def leaf_commands(
    command: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(path, parser) of every command that runs (a leaf of the tree: `plan`, `benchmark run`)."""
    subs = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, command
    for action in subs:
        for name, sub in action.choices.items():
            yield from leaf_commands(sub, (*path, name))
